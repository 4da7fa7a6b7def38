from __future__ import annotations

from pathlib import Path

import pytest

from bedside.llm import ChatMessage
from bedside.prompts import PromptError, render, render_chat


def test_shipped_chat_template_renders_to_messages() -> None:
    chat = render_chat("drafting/zero_shot.j2", message="My cough is worse.", chart_summary="Asthma.")
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
