"""Reading OpenAI-style chat completion bodies, shared by every provider that speaks that shape."""

from __future__ import annotations

import email.utils
import time
from typing import Any

from bedside.llm.errors import ModelRequestError
from bedside.llm.secrets import redact, scrub
from bedside.llm.types import ProviderResponse, TokenUsage

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def parse_chat_completion(body: Any) -> ProviderResponse:
    """Turn a decoded chat completion body into a response, or raise a retryable error saying what is off.

    An API key the endpoint echoed into the answer is masked by the model wrapper, for every provider, before
    the answer reaches the cache or a store.
    A null ``content`` becomes an empty text marked ``null_content``; the model wrapper refuses both.
    """
    if not isinstance(body, dict):
        raise ModelRequestError("malformed response: body is not a JSON object", retryable=True)
    if "error" in body and "choices" not in body:
        raise ModelRequestError(f"endpoint returned an error object: {_short(body['error'])}", retryable=True)
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ModelRequestError("malformed response: no 'choices' in the body", retryable=True)
    texts: list[str] = []
    null_content = False
    finish_reason = None
    ordered = choices if len(choices) == 1 else sorted(choices, key=_index)
    for choice in ordered:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise ModelRequestError("malformed response: a choice has no 'message'", retryable=True)
        content = _text_of(message.get("content"))
        null_content = null_content or content is None
        texts.append(content or "")
        finish_reason = finish_reason or choice.get("finish_reason")
    raw_usage = body.get("usage") or {}
    usage = token_usage(int(raw_usage.get("prompt_tokens") or 0), int(raw_usage.get("completion_tokens") or 0))
    model = body.get("model")
    fingerprint = body.get("system_fingerprint")
    return ProviderResponse(
        texts=tuple(texts),
        usage=usage,
        finish_reason=finish_reason,
        # An endpoint may echo the request (its key among it) in ``model``: scrubbed before anything keeps it.
        model=scrub(model) if isinstance(model, str) else None,
        system_fingerprint=scrub(fingerprint) if isinstance(fingerprint, str) else None,
        null_content=null_content,
    )


def _text_of(content: Any) -> str | None:
    """A message's content as text: a string as it is, a list of parts (``[{"type": "text", "text": ...}]``,
    as some OpenAI-compatible servers send) as their texts joined; None for ``null``."""
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") in ("text", "output_text")]
        return "".join(t for t in parts if isinstance(t, str))
    return content if isinstance(content, str) or content is None else ""


_USAGES: dict[tuple[int, int], TokenUsage] = {}


def token_usage(prompt_tokens: int, completion_tokens: int) -> TokenUsage:
    """``TokenUsage(prompt_tokens=..., completion_tokens=...)``, one shared object per pair of counts: it is
    frozen, and a run's answers repeat a few pairs, so most answers skip building and validating one."""
    key = (prompt_tokens, completion_tokens)
    usage = _USAGES.get(key)
    if usage is None:
        if len(_USAGES) >= 4096:
            _USAGES.clear()
        usage = _USAGES[key] = TokenUsage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    return usage


def _index(choice: Any) -> Any:
    return choice.get("index", 0) if isinstance(choice, dict) else 0


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds (fractions accepted) or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _short(value: Any) -> str:
    text = value.get("message", value) if isinstance(value, dict) else value
    return snippet(str(text))


def snippet(text: str | bytes, limit: int = 300) -> str:
    """The start of a body for an error message: keys masked *before* cutting, so no key prefix survives."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = redact(text).strip()
    return text if len(text) <= limit else text[:limit] + "..."
