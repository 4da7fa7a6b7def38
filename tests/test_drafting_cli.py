"""``bedside drafting editjudge|calibrate|themes`` end to end (the llm matcher against the scripted server)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from typer.testing import CliRunner

from bedside.cli import app
from bedside.llm import ChatMessage
from bedside.testing import ScriptedServer
from page_text import line_with

runner = CliRunner()
REFERENCE = "Sorry about the cough. Keep taking the pill for now. Have you had a fever?"
DRAFT = "I'm sorry you have a cough. Keep taking the pill for now. Rest well."


def test_one_pair_as_json_with_the_llm_matcher(tmp_path: Path) -> None:
    rules = [(r"Clinician sentence:\s*Keep taking", "Keep taking the pill for now."), (r"Clinician", "NO MATCH")]
    draft_file = tmp_path / "draft.txt"
    draft_file.write_text(DRAFT, encoding="utf-8")
    with ScriptedServer(rules) as server:
        result = runner.invoke(
            app,
            [
                "drafting", "editjudge", "--reference", REFERENCE, "--draft", str(draft_file),
                "--matcher", "llm", "-m", server.model_name("judge"), "--json", "--no-cache",
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["em"], data["ea"], data["ed"]) == (1, 2, 2)
    assert [d["span"] for d in data["decisions"]] == [None, "Keep taking the pill for now.", None]
    assert data["remainder"] == ["I'm sorry you have a cough.", "Rest well."]


def test_pairs_file_prints_one_result_per_pair_with_its_id(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"id": "same", "draft": REFERENCE, "reference": REFERENCE},
        {"id": "other", "draft": "Book a visit online.", "reference": REFERENCE},
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = runner.invoke(app, ["drafting", "editjudge", "--pairs", str(pairs), "--matcher", "lexical", "--json"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [line["id"] for line in lines] == ["same", "other"]
    assert lines[0]["f1"] == 1.0
    assert lines[1]["em"] == 0
    table = runner.invoke(app, ["drafting", "editjudge", "--pairs", str(pairs)])
    assert table.exit_code == 0, table.output
    assert "micro" in table.output
    assert "macro" in table.output


def test_errors_are_clear(tmp_path: Path) -> None:
    typo = runner.invoke(app, ["drafting", "editjudge", "--reference", "rpely.txt", "--draft", "A reply."])
    assert typo.exit_code == 1  # a mistyped file name was judged as the reply's text (Edit-F1 0, exit 0)
    assert "rpely.txt: no such file (give an existing file, or the text itself)" in typo.output
    missing = runner.invoke(app, ["drafting", "editjudge", "--reference", "x"])
    assert missing.exit_code == 1
    assert "--pairs" in missing.output
    no_model = runner.invoke(app, ["drafting", "editjudge", "--reference", "a.", "--draft", "b.", "--matcher", "llm"])
    assert no_model.exit_code == 1
    assert "needs a model" in no_model.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1"}\n', encoding="utf-8")
    broken = runner.invoke(app, ["drafting", "editjudge", "--pairs", str(bad)])
    assert broken.exit_code == 1
    assert "bad.jsonl:1" in broken.output
    # a folder or an empty file was judged as the reply (Edit-F1 0.000, recall 0/0 as 0, exit 0: a newcomer's trial)
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    for given, said in ((tmp_path, "a folder, not a file"), (empty, "the file is empty")):
        judged = runner.invoke(app, ["drafting", "editjudge", "--reference", str(given), "--draft", "A reply."])
        assert judged.exit_code == 1
        assert said in judged.output


def test_guard_pairs_are_refused_where_a_figure_would_mislead(tmp_path: Path) -> None:
    """Duplicate ids counted a pair twice (its interval too narrow), an empty file read as a clean result, a blank
    side was a paraphrase kept, and a missing field showed Python's own message (a newcomer's trial)."""
    pair = '{"id": "a", "reference": "Take one tablet.", "candidate": "Take 1 tablet.", "match": true, "kind": "p"}'
    cases = {
        "dup": ([pair, pair], "line 2: id 'a' is also on line 1"),
        "empty": ([], "no guard pairs (the file is empty)"),
        "blank": ([pair.replace("Take 1 tablet.", "  ")], "line 1: candidate is blank"),
        "missing": ([pair.replace(', "kind": "p"', "")], "line 1: missing kind"),
        "extra": ([pair.replace("}", ', "colour": 1}')], "line 1: unknown field(s) colour"),
    }
    for name, (lines, said) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(lines), encoding="utf-8")
        found = runner.invoke(app, ["drafting", "guard-eval", "--pairs", str(path), "--no-matcher"])
        assert found.exit_code == 1, (name, found.output)
        assert said in found.output, (name, found.output)


def test_calibrate_and_themes() -> None:
    calibrated = runner.invoke(app, ["drafting", "calibrate", "--matcher", "lexical"])
    assert calibrated.exit_code == 0, calibrated.output
    assert "overlap" in calibrated.output
    assert "best threshold" in calibrated.output
    assert "leave one draft out" in calibrated.output
    themes = runner.invoke(app, ["drafting", "themes", "--folds", "3"])
    assert themes.exit_code == 0, themes.output
    assert "macro" in themes.output
    assert "contingency" in themes.output
    assert "Held-out draft sentences (175)" in themes.output
    assert "question themes: precision" in themes.output


def test_calibrate_compares_offline_and_llm_judges(tmp_path: Path) -> None:
    """The judge comparison: an offline matcher and an LLM judge (0-shot and 5-shot) in one table."""
    annotations = tmp_path / "annotations.jsonl"
    draft = "I'm sorry you feel unwell. Please stop your aspirin. Rest today."
    rows = [
        {"id": "a", "sentence": "Sorry you are unwell.", "draft": draft, "gold": "I'm sorry you feel unwell."},
        {"id": "b", "sentence": "Keep taking your aspirin.", "draft": draft, "gold": None},
    ]
    annotations.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    def rules(messages: Sequence[ChatMessage]) -> str:
        last = messages[-1].content
        return "I'm sorry you feel unwell." if "Sorry you are unwell." in last else "Please stop your aspirin."

    with ScriptedServer(rules) as server:
        result = runner.invoke(
            app,
            ["drafting", "calibrate", "--annotations", str(annotations), "--matcher", "lexical",
             "-m", server.model_name("judge"), "--no-cache"],
        )  # fmt: skip
        requests = server.stats()["requests"]
    assert result.exit_code == 0, result.output
    assert requests == 4  # two annotations x two templates
    assert "5-shot" in result.output
    assert "0-shot" in result.output
    assert "llm-1 = scripted" in result.output or "llm-1 = openai-compatible" in result.output
    # The judge quotes the reversed aspirin sentence for "keep taking": the guard makes it NO MATCH, so the LLM
    # judge agrees on both annotations.
    assert result.output.count("1.000") >= 2


def test_calibrate_shows_a_judge_whose_answers_are_unusable_as_absent_with_a_count(tmp_path: Path) -> None:
    """Issue 35: 12/12 unusable answers showed non-match agreement 1.000 with no failure count."""
    annotations = tmp_path / "annotations.jsonl"
    draft = "I'm sorry you feel unwell. Please stop your aspirin. Rest today."
    rows = [
        {"id": "a", "sentence": "Sorry you are unwell.", "draft": draft, "gold": "I'm sorry you feel unwell."},
        {"id": "b", "sentence": "Keep taking your aspirin.", "draft": draft, "gold": None},
    ]
    annotations.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with ScriptedServer(lambda messages: "Something that is nowhere in the draft.") as server:
        args = ["drafting", "calibrate", "--annotations", str(annotations), "-m", server.model_name("judge")]
        table = runner.invoke(app, [*args, "--no-cache", "--template", "drafting/editjudge_match.j2"])
        as_json = runner.invoke(app, [*args, "--no-cache", "--template", "drafting/editjudge_match.j2", "--json"])
    assert table.exit_code == 0, table.output
    row = [cell.strip() for cell in line_with(table.output, "llm-1 |").strip("| ").split("|")]
    assert row == ["llm-1", "0-shot", "absent", "absent", "absent", "absent", "2/2", "-", "-"]  # 2/2 failed
    (judge,) = json.loads(as_json.stdout)["judges"]
    assert judge["failures"] == 2
    assert judge["non_match_agreement"] is None
    assert judge["agreement"] is None


def test_calibrate_asks_a_finetuned_judge_with_its_training_prompt_only(tmp_path: Path) -> None:
    """--finetuned: one row per fine-tuned judge, 0-shot only (the prompt export-judge trains on); no offline
    matchers unless asked for, as with -m."""
    annotations = tmp_path / "annotations.jsonl"
    draft = "I'm sorry you feel unwell. Rest today."
    row = {"id": "a", "sentence": "Sorry you are unwell.", "draft": draft, "gold": "I'm sorry you feel unwell."}
    annotations.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with ScriptedServer([(r"Clinician", "I'm sorry you feel unwell.")]) as server:
        result = runner.invoke(
            app,
            ["drafting", "calibrate", "--annotations", str(annotations), "-m", server.model_name("base"),
             "--finetuned", server.model_name("judge"), "--no-cache", "--json"],
        )  # fmt: skip
        requests = server.stats()["requests"]
    assert result.exit_code == 0, result.output
    assert requests == 3  # the base model: 0-shot and 5-shot; the fine-tuned judge: 0-shot
    data = json.loads(result.stdout)
    assert [(j["judge"], j["kind"]) for j in data["judges"]] == [
        ("llm-1", "0-shot"),
        ("llm-1", "5-shot"),
        ("ft-1", "0-shot"),
    ]
    assert data["legend"][1].startswith("ft-1 = ")
    assert data["judges"][2]["agreement"] == 1.0


def test_editjudge_shows_what_the_guard_rejected_or_flagged() -> None:
    args = ["drafting", "editjudge", "--reference", "Continue aspirin daily.", "--draft", "Stop aspirin daily."]
    rejected = runner.invoke(app, [*args, "--matcher", "lexical"])
    assert rejected.exit_code == 0, rejected.output
    assert "(guard:" in rejected.output
    assert "action:" in rejected.output
    assert "EM 0" in rejected.output
    flagged = runner.invoke(app, [*args, "--matcher", "lexical", "--guard", "flag"])
    assert "(flagged:" in flagged.output
    assert "action:" in flagged.output
    assert "EM 1" in flagged.output
    assert "guard conflicts kept: 1 of the 1 matches conflict with their reference sentence" in flagged.output
    assert "guard conflicts kept" not in rejected.output
    bad = runner.invoke(app, [*args, "--guard", "maybe"])
    assert bad.exit_code == 1
    assert "guard 'maybe'" in bad.output


def test_calibrate_and_themes_print_json_on_request() -> None:
    calibrated = runner.invoke(app, ["drafting", "calibrate", "--matcher", "lexical", "--json"])
    assert calibrated.exit_code == 0, calibrated.output
    judges = json.loads(calibrated.stdout)["judges"]
    assert judges[0]["judge"] == "lexical"
    assert 0.0 <= judges[0]["agreement"] <= 1.0
    themes = runner.invoke(app, ["drafting", "themes", "--folds", "3", "--json"])
    assert themes.exit_code == 0, themes.output
    data = json.loads(themes.stdout)
    assert data["cross_validation"]["sentences"] == 288
    assert data["held_out"]["with question rule"]["question_precision"] >= 0.0
