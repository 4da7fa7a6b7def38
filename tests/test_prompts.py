from __future__ import annotations

from pathlib import Path

import pytest

from bedside.llm import ChatMessage
from bedside.prompts import PromptError, render, render_chat


def test_shipped_chat_template_renders_to_messages() -> None:
    chat = render_chat("drafting/zero_shot_nudged.j2", message="My cough is worse.", chart_summary="Asthma.")
    assert [m.role for m in chat] == ["system", "user"]
    assert "My cough is worse." in chat[1].content
    assert "Asthma." in chat[1].content


def test_user_folder_overrides_a_shipped_template(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "drafting").mkdir()
    (tmp_path / "drafting" / "zero_shot.j2").write_text("[[user]]\nReply to: {{ message }}\n")
    monkeypatch.setenv("BEDSIDE_PROMPTS", str(tmp_path))
    chat = render_chat("drafting/zero_shot.j2", message="hi", chart_summary="")
    assert chat == [ChatMessage(role="user", content="Reply to: hi")]


def test_template_by_path_and_missing_variable(tmp_path: Path) -> None:
    path = tmp_path / "mine.j2"
    path.write_text("Hello {{ name }}")
    assert render(path, name="Ana") == "Hello Ana"
    with pytest.raises(PromptError, match="'name' is undefined"):
        render(path)


def test_bad_templates_are_reported_with_their_name(tmp_path: Path) -> None:
    with pytest.raises(PromptError, match=r"no prompt template 'drafting/nope\.j2'"):
        render("drafting/nope.j2")
    loose = tmp_path / "loose.j2"
    loose.write_text("preamble\n[[user]]\nhi")
    with pytest.raises(PromptError, match="must start with"):
        render_chat(loose)
    broken = tmp_path / "broken.j2"
    broken.write_text("{% if %}")
    with pytest.raises(PromptError, match="syntax error"):
        render(broken)


def test_drafting_prompts_follow_the_paper_and_the_nudged_ones_are_named_apart() -> None:
    from bedside.tasks.drafting.systems import Example
    from bedside.tasks.drafting.themes import RESPONSE_THEMES, THEMES

    themes = [t for t in THEMES if t.key in RESPONSE_THEMES]
    example = Example("x", "Old message.", "Old chart.", "Old reply.", "dr", 0.9)
    variables = {"message": "My cough is worse.", "chart_summary": "Asthma.", "themes": themes, "examples": [example]}
    for name in ("zero_shot", "thematic", "rag"):
        faithful = _flat(render_chat(f"drafting/{name}.j2", **variables)).lower()
        nudged = _flat(render_chat(f"drafting/{name}_nudged.j2", **variables)).lower()
        assert "reply to the message as the patient's doctor" in faithful
        assert faithful.rstrip().endswith("doctor's reply:")
        # No advice toward the measured themes beyond the paper's theme list (thematic) and examples (rag).
        for nudge in ("urgent care", "ask a follow-up question", "what they should do next", "match their length"):
            assert nudge not in faithful, (name, nudge)
        assert faithful != nudged
    thematic = " ".join(m.content for m in render_chat("drafting/thematic.j2", **variables))
    assert all(t.name in thematic for t in themes)
    assert "Old reply." in " ".join(m.content for m in render_chat("drafting/rag.j2", **variables))
    nudged_zero = _flat(render_chat("drafting/zero_shot_nudged.j2", **variables))
    assert "urgent care" in nudged_zero


def _flat(chat: list[ChatMessage]) -> str:
    return " ".join(" ".join(m.content.split()) for m in chat)
