"""What an OpenAI-compatible answer becomes before anything keeps it: content sent as a list of parts is its
text, and an API key the endpoint echoed into ``model`` is masked before the response cache stores it (issue 48)."""

from __future__ import annotations

from typing import Any

from bedside.llm.providers.openai_http import parse_chat_completion
from bedside.llm.secrets import remember_secret


def _body(content: Any, model: str = "m") -> dict[str, Any]:
    return {"model": model, "choices": [{"index": 0, "message": {"content": content}, "finish_reason": "stop"}]}


def test_content_sent_as_a_list_of_parts_is_its_text() -> None:
    parts = [
        {"type": "text", "text": "Take it "},
        {"type": "image_url", "image_url": {}},
        {"type": "text", "text": "daily."},
    ]
    found = parse_chat_completion(_body(parts))
    assert found.texts == ("Take it daily.",)
    assert not found.null_content
    assert parse_chat_completion(_body([])).texts == ("",)  # no text part: empty content, refused downstream
    assert parse_chat_completion(_body(None)).null_content


def test_a_key_echoed_in_the_model_field_is_masked() -> None:
    key = "sk-test-echoed-0123456789abcdef"
    remember_secret(key)
    found = parse_chat_completion(_body("ok", model=f"gpt-x (key {key})"))
    assert found.model is not None
    assert key not in found.model
    assert found.model.startswith("gpt-x (key ")


def test_the_system_fingerprint_is_read_and_a_key_echoed_in_it_masked() -> None:
    key = "sk-test-echoed-fingerprint-0123456789"
    remember_secret(key)
    body = {**_body("ok"), "system_fingerprint": f"fp_{key}"}
    found = parse_chat_completion(body)
    assert found.system_fingerprint is not None
    assert found.system_fingerprint.startswith("fp_")
    assert key not in found.system_fingerprint
    assert parse_chat_completion(_body("ok")).system_fingerprint is None
