"""Drafting inputs that used to pass silently now fail naming the file and line (issue 48): a file of pairs with
none, a repeated pair id, a blank reference, a blank portal message, an SFT export with nothing to write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.inputs import InputError
from bedside.tasks.drafting.cases import load_portal_messages, read_pairs


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("rows", "said"),
    [
        ([], "no data: the file is empty or holds only blank lines"),
        ([{"id": "a", "draft": "x", "reference": "y"}, {"id": "a", "draft": "z", "reference": "w"}],
         ":2: id 'a' is also on line 1"),
        ([{"id": "a", "draft": "x", "reference": "  "}], ":1: the reference is blank"),
    ],
)  # fmt: skip
def test_editjudge_pairs_that_score_nothing_are_refused(
    tmp_path: Path, rows: list[dict[str, object]], said: str
) -> None:
    path = _jsonl(tmp_path / "pairs.jsonl", rows)
    with pytest.raises(InputError) as caught:
        read_pairs(path)
    assert said in str(caught.value)
    assert str(path) in str(caught.value)
    result = CliRunner().invoke(app, ["drafting", "editjudge", "--pairs", str(path), "--matcher", "lexical"])
    assert result.exit_code == 1
    assert said in " ".join(result.output.split())


def test_a_blank_portal_message_is_refused_with_its_line(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "cases.jsonl",
        [
            {"id": "a", "message": "My knee hurts.", "chart_summary": "x"},
            {"id": "b", "message": " \n", "chart_summary": "x"},
        ],
    )
    with pytest.raises(InputError) as caught:
        load_portal_messages(path)
    assert str(caught.value) == (
        f"{path}:2: not a valid portal message: message: the message is blank: there is nothing to reply to"
    )


def test_an_sft_export_with_no_reply_to_train_on_fails(tmp_path: Path) -> None:
    cases = _jsonl(tmp_path / "cases.jsonl", [{"id": "a", "message": "My knee hurts.", "chart_summary": "x"}])
    output = tmp_path / "sft.jsonl"
    result = CliRunner().invoke(app, ["drafting", "export-sft", "--cases", str(cases), "-o", str(output)])
    assert result.exit_code == 1
    assert "no case has a clinician reply, so there is no chat to train on" in " ".join(result.output.split())
    assert not output.exists()
