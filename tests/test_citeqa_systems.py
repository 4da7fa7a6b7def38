"""The citeqa systems against the scripted server: stages, guardrails and errors, through a real run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs import Store, execute, load_config
from bedside.tasks.citeqa import read_cases, read_submission, score_answers
from bedside.tasks.citeqa.classifier import EvidenceClassifier, cross_validate
from bedside.tasks.citeqa.task import SYNTHETIC_CASES
from bedside.testing import ScriptedServer

STAGE1 = json.dumps({"relevant": ["1", "3", "4"]})
GOOD = json.dumps(
    {
        "statements": [
            {"statement": "A drug-eluting stent was placed.", "citations": ["3"]},
            {"statement": "Aspirin plus ticagrelor is needed for 12 months.", "citations": ["4"]},
        ]
    }
)
WRONG_ID = json.dumps({"statements": [{"statement": "He had a heart attack.", "citations": ["9"]}]})
TOO_LONG = json.dumps({"statements": [{"statement": " ".join(["cut"] * 90), "citations": ["1"]}]})
ONE_STAGE = json.dumps(
    {"relevant": ["1", "4"], "statements": [{"statement": "He needs two antiplatelet drugs.", "citations": ["4"]}]}
)

# Patterns are searched in the last user message: the few-shot examples tell the stages apart.
RULES: list[tuple[str, Any]] = [
    (r"shorten it", TOO_LONG),  # never fixes its length
    (r"could not be used", GOOD),  # the repair prompt after WRONG_ID (9 is not an allowed id)
    (r"1 and 3 answer the question directly", STAGE1),
    (r"(?s)Selected note sentences:.*stent", WRONG_ID),
    (r"Selected note sentences", TOO_LONG),
    (r"Note sentences:", ONE_STAGE),
]


def write_config(tmp_path: Path, server: ScriptedServer, **changes: Any) -> Path:
    config: dict[str, Any] = {
        "name": "citeqa-test",
        "task": "citeqa",
        "datasets": {"synthetic": {"limit": 2}},
        "systems": {"one": {"type": "one_stage"}, "two": {"type": "two_stage"}},
        "models": {"system": [server.model_name("m")]},
        "concurrency": 2,
        "store": str(tmp_path / "store.sqlite"),
        "scorers": [
            "strict_precision",
            "strict_recall",
            "strict_f1",
            "lenient_f1",
            "evidence_recall",
            "cut_to_word_limit",
            "words",
        ],
    }
    config.update(changes)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_two_stage_and_one_stage_with_guardrails_through_a_run(tmp_path: Path) -> None:
    with ScriptedServer(RULES) as server:
        config = load_config(write_config(tmp_path, server))
        summary = asyncio.run(execute(config, cache=False))
    store = Store(config.store)
    rows = {(r.system, r.sample_id): r for r in store.results(config.run_id)}
    store.close()
    assert summary.ran + summary.errors == 4
    two = rows[("two", "syn-01")]
    assert two.status == "ok", two.error
    assert two.output is not None
    # Stage 2's first answer cited 9 (not selected): re-asked once, then the valid answer.
    assert (
        two.output["text"]
        == "A drug-eluting stent was placed. |3|\nAspirin plus ticagrelor is needed for 12 months. |4|"
    )
    # The trace says which selected sentence stage 2 left uncited (it is told to cite them all).
    assert two.output["trace"] == [
        {"stage": "evidence", "selected": ["1", "3", "4"], "attempts": 1},
        {"stage": "answer", "attempts": 2, "uncited": ["1"]},
    ]
    # Cited {3,4} vs essential {1,3,4}: P 1, R 2/3, F1 0.8. Stage 1 selected {1,3,4} of the relevant
    # (essential + supplementary) {1,2,3,4,5}: evidence recall 3/5.
    assert two.scores["strict_precision"] == 1.0
    assert two.scores["strict_recall"] == pytest.approx(2 / 3)
    assert two.scores["strict_f1"] == pytest.approx(0.8)
    assert two.scores["evidence_recall"] == pytest.approx(3 / 5)
    assert two.scores["cut_to_word_limit"] == 0.0
    assert "cut_to_word_limit" not in two.output["extra"]
    assert two.usage["system"]["calls"] == 3  # stage 1, and stage 2's rejected and accepted answers
    # syn-02's stage 2 never gets under the word limit: after the re-asks its last answer (90 words, otherwise
    # valid) is kept, cut to its first 75 words as the official scorer cuts, and flagged.
    cut = rows[("two", "syn-02")]
    assert cut.status == "ok", cut.error
    assert cut.output is not None
    assert cut.output["text"] == " ".join(["cut"] * 75) + " |1|"
    assert cut.output["extra"]["cut_to_word_limit"] == {"words": 90, "limit": 75, "dropped": []}
    assert cut.scores["cut_to_word_limit"] == 1.0
    assert cut.output["trace"][1] == {"stage": "answer", "attempts": 3, "uncited": ["3", "4"]}
    assert cut.usage["system"]["calls"] == 4  # stage 1 and three stage-2 attempts
    one = rows[("one", "syn-01")]
    assert one.status == "ok", one.error
    assert one.output is not None
    assert one.output["text"] == "He needs two antiplatelet drugs. |4|"
    assert one.output["extra"]["selected"] == ["1", "4"]


def test_the_classifier_selects_evidence_without_a_model_call_and_round_trips(tmp_path: Path) -> None:
    cases = read_cases(SYNTHETIC_CASES)
    model = EvidenceClassifier.fit(cases[1:])
    selected = model.select(cases[0])
    assert selected
    assert set(selected) <= set(cases[0].sentence_ids)
    loaded = EvidenceClassifier.load(model.save(tmp_path / "evidence.npz"))
    assert loaded.select(cases[0]) == selected
    assert loaded.labels == ("essential", "not-relevant", "supplementary")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"junk\.npz: not a saved evidence classifier"):
        EvidenceClassifier.load(tmp_path / "junk.npz")
    held_out = cross_validate(cases, folds=5)
    assert 0.5 < held_out["f1"] <= 1.0  # on these synthetic notes relevant sentences share the question's words

    with ScriptedServer([(r"Selected note sentences", GOOD)]) as server:
        config = load_config(
            write_config(tmp_path, server, systems={"clf": {"type": "classifier"}}, scorers=["strict_f1"])
        )
        summary = asyncio.run(execute(config, cache=False))
        assert server.stats()["requests"] == 2  # stage 2 only, one per case
    assert summary.errors == 0


def test_cli_scores_a_submission_and_answers_cases(tmp_path: Path) -> None:
    runner = CliRunner()
    cases = read_cases(SYNTHETIC_CASES)
    submission = tmp_path / "sub.json"
    submission.write_text(
        json.dumps([{"case_id": c.id, "answer": c.reference_answer} for c in cases]), encoding="utf-8"
    )
    result = runner.invoke(
        app, ["citeqa", "score", str(submission), "--cases", str(SYNTHETIC_CASES), "--json", "--metrics", "bleu,sari"]
    )
    assert result.exit_code == 0, result.output
    board = json.loads(result.output)
    assert board["strict_micro_f1"] == 100.0
    assert set(board) >= {"bleu", "sari", "overall_relevance_score", "overall_score"}
    table = runner.invoke(
        app, ["citeqa", "score", str(submission), "--cases", str(SYNTHETIC_CASES), "--metrics", "bleu"]
    )
    assert table.exit_code == 0, table.output
    assert "strict" in table.output
    assert "micro" in table.output
    assert "BLEU" in table.output

    bad = runner.invoke(app, ["citeqa", "score", str(tmp_path / "missing.json"), "--cases", str(SYNTHETIC_CASES)])
    assert bad.exit_code != 0
    assert "missing.json: no such file" in bad.output

    with ScriptedServer(RULES) as server:
        out = tmp_path / "answers.json"
        answered = runner.invoke(
            app,
            [
                "citeqa",
                "answer",
                "--cases",
                str(SYNTHETIC_CASES),
                "--system",
                "two_stage",
                "-m",
                server.model_name("m"),
                "--limit",
                "2",
                "-o",
                str(out),
                "--no-cache",
                "--metrics",
                "bleu",
            ],
        )
    assert answered.exit_code == 0, answered.output
    written = read_submission(out)
    assert set(written) == {"syn-01", "syn-02"}  # syn-02 stayed over the word limit: cut, kept and reported
    assert "cut syn-02: still 90 words after the re-asks; cut to its first 75 words" in answered.output


def test_an_answer_over_the_limit_is_cut_statement_by_statement() -> None:
    from bedside.tasks.citeqa.submission import AnswerSentence
    from bedside.tasks.citeqa.systems import cut_to_word_limit

    words = [f"w{i}" for i in range(90)]
    sentences = [
        AnswerSentence(" ".join(words[:50]), ("1",)),
        AnswerSentence(" ".join(words[50:80]), ("2",)),
        AnswerSentence(" ".join(words[80:]), ("3",)),
    ]
    kept, cut = cut_to_word_limit(sentences, 75)
    # 50 + 30 + 10 = 90 words: the first statement whole, the second cut to its first 25, the third dropped.
    assert kept == [sentences[0], AnswerSentence(" ".join(words[50:75]), ("2",))]
    assert cut == {"words": 90, "limit": 75, "dropped": [{"statement": " ".join(words[80:]), "citations": ["3"]}]}
    assert cut_to_word_limit(sentences[:2], 80) == (sentences[:2], None)


FIX_RULES: list[tuple[str, Any]] = [
    (r"A reply to the request above could not be used", GOOD),  # the fixing model's request
    (r"1 and 3 answer the question directly", STAGE1),
    (r"Selected note sentences", WRONG_ID),  # the system model never gets it right
]


def test_a_separate_fixing_model_reformats_a_rejected_reply(tmp_path: Path) -> None:
    with ScriptedServer(FIX_RULES) as server:
        config = load_config(
            write_config(
                tmp_path,
                server,
                datasets={"synthetic": {"limit": 1}},
                systems={"two": {"type": "two_stage", "options": {"fix_role": "helper"}}},
                models={"system": [server.model_name("m")], "helper": server.model_name("fixer")},
            )
        )
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 0
    store = Store(config.store)
    (row,) = store.results(config.run_id)
    store.close()
    assert row.output is not None
    assert row.output["text"] == (
        "A drug-eluting stent was placed. |3|\nAspirin plus ticagrelor is needed for 12 months. |4|"
    )
    assert row.output["trace"][1] == {"stage": "answer", "attempts": 2, "fixed_by": "helper", "uncited": ["1"]}
    # Stage 1 and stage 2's first reply by the system model; the re-format by the helper.
    assert row.usage["system"]["calls"] == 2
    assert row.usage["helper"]["calls"] == 1
    # Stage 2 is told to cite every sentence it was given, as the paper's stage 2 is.
    stage2_system = row.output["prompts"][1][0]
    assert stage2_system["role"] == "system"
    assert "each given sentence must be cited by at least" in " ".join(stage2_system["content"].split())
    fix_prompt = row.output["prompts"][-1][-1]["content"]
    assert "could not be used, because it does not match the schema" in fix_prompt
    assert '"citations": ["9"]' in fix_prompt  # the rejected reply, shown to the fixing model


def run_with_fixer(tmp_path: Path, rules: list[tuple[str, Any]]) -> tuple[int, Any]:
    """One case through the two-stage system with the re-format on a separate ``helper`` model."""
    with ScriptedServer(rules) as server:
        config = load_config(
            write_config(
                tmp_path,
                server,
                datasets={"synthetic": {"limit": 1}},
                systems={"two": {"type": "two_stage", "options": {"fix_role": "helper"}}},
                models={"system": [server.model_name("m")], "helper": server.model_name("fixer")},
            )
        )
        summary = asyncio.run(execute(config, cache=False))
    store = Store(config.store)
    (row,) = store.results(config.run_id)
    store.close()
    return summary.errors, row


def test_a_fixing_model_that_fails_too_leaves_an_error_counting_every_attempt(tmp_path: Path) -> None:
    errors, row = run_with_fixer(tmp_path, [(r"could not be used", WRONG_ID), *FIX_RULES[1:]])
    assert errors == 1
    assert row.status == "error"
    assert "StructuredOutputError" in (row.error or "")
    assert "(helper)" in (row.error or "")
    assert "the system model's reply before it" in (row.error or "")
    # max_repairs 2: the system model's reply, then the helper's two (its own re-ask included).
    assert row.usage["system"]["calls"] == 2
    assert row.usage["helper"]["calls"] == 2


def test_an_answer_the_fixing_model_leaves_too_long_is_cut_and_kept(tmp_path: Path) -> None:
    errors, row = run_with_fixer(tmp_path, [(r"could not be used|shorten it", TOO_LONG), *FIX_RULES[1:]])
    assert errors == 0
    assert row.output is not None
    assert row.output["text"] == " ".join(["cut"] * 75) + " |1|"
    assert row.output["trace"][1] == {"stage": "answer", "attempts": 3, "fixed_by": "helper", "uncited": ["3", "4"]}
    assert row.output["extra"]["cut_to_word_limit"] == {"words": 90, "limit": 75, "dropped": []}
    assert (row.usage["system"]["calls"], row.usage["helper"]["calls"]) == (2, 2)


def test_fix_role_must_name_a_role() -> None:
    from bedside.tasks.citeqa.systems import fix_role_of

    assert fix_role_of({}) == "system"
    assert fix_role_of({"fix_role": "helper"}) == "helper"
    with pytest.raises(ValueError, match="fix_role must be one of system, patient, helper, judge, not 'fixer'"):
        fix_role_of({"fix_role": "fixer"})


def _stage2(messages: Any) -> str:
    """syn-02 (antibiotics) never answers in JSON; syn-03 (gastrostomy) never gets under the word limit."""
    conversation = " ".join(m.content for m in messages)
    if "antibiotic" in conversation:
        return "I cannot answer in JSON."
    if "gastrostomy" in conversation:
        return TOO_LONG
    return GOOD


REPORT_RULES: list[tuple[str, Any]] = [
    (r"1 and 3 answer the question directly", STAGE1),
    (r"Selected note sentences|could not be used", _stage2),
]


def test_report_shows_micro_factuality_and_a_run_exports_its_submission(tmp_path: Path) -> None:
    with ScriptedServer(REPORT_RULES) as server:
        config = load_config(
            write_config(tmp_path, server, datasets={"synthetic": {"limit": 3}}, systems={"two": {"type": "two_stage"}})
        )
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 1
    runner = CliRunner()
    store = config.store
    reported = runner.invoke(app, ["report", config.run_id, "--store", store, "-o", str(tmp_path / "reports")])
    assert reported.exit_code == 0, reported.output
    markdown = next((tmp_path / "reports").glob("*.md")).read_text(encoding="utf-8")
    assert "## Micro factuality (citations pooled over answers)" in markdown
    # syn-01 cites {3, 4}: strict (essential {1, 3, 4}) tp 2, fp 0, fn 1; lenient ({1..5}) tp 2, fp 0, fn 3.
    # syn-03 is cut and cites {1}: strict (essential {2, 3, 4}) tp 0, fp 1, fn 3; lenient tp 1, fp 0, fn 4.
    # syn-02 is an error, left out. Pooled strict: tp 2, fp 1, fn 4 -> P 2/3, R 1/3, F1 4/9; lenient: tp 3,
    # fp 0, fn 7 -> P 1, R 0.3, F1 0.6/1.3.
    section = markdown.split("## Micro factuality")[1].split("\n## ")[0]
    (row,) = [line for line in section.splitlines() if line.startswith("| synthetic")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:] == ["2", "0.667", "0.333", "0.444", "1.000", "0.300", "0.462", "1", "1"]

    exported = tmp_path / "submission.json"
    written = runner.invoke(app, ["citeqa", "submission", config.run_id, "-o", str(exported), "--store", store])
    assert written.exit_code == 0, written.output
    assert "left out syn-02: the sample is an error: StructuredOutputError" in written.output
    assert "1 case(s) left out; the official scorer refuses a submission that misses cases" in written.output
    assert "1 answer(s) were cut to 75 words after their re-asks: syn-03" in written.output
    answers = read_submission(exported)
    assert answers == {
        "syn-01": "A drug-eluting stent was placed. |3|\nAspirin plus ticagrelor is needed for 12 months. |4|",
        "syn-03": " ".join(["cut"] * 75) + " |1|",
    }
    # The exported submission scores as the report's table says, with either parse.
    cases = [c for c in read_cases(SYNTHETIC_CASES) if c.id in answers]
    for parse in ("default", "official"):
        scores = score_answers(cases, answers, metrics=None, parse=parse)
        assert scores.factuality["strict"]["micro"].f1 == pytest.approx(4 / 9)
        assert scores.factuality["lenient"]["micro"].f1 == pytest.approx(0.6 / 1.3)

    missing = runner.invoke(app, ["citeqa", "submission", "nope", "-o", str(exported), "--store", store])
    assert missing.exit_code != 0
    assert "no run 'nope'" in missing.output
    wrong_epoch = runner.invoke(
        app, ["citeqa", "submission", config.run_id, "-o", str(exported), "--store", store, "--epoch", "3"]
    )
    assert wrong_epoch.exit_code != 0
    assert "has no epoch 3; its epochs: 0" in wrong_epoch.output


def test_a_run_submission_needs_one_cell() -> None:
    from types import SimpleNamespace

    from bedside.tasks.citeqa.task import run_submission

    def row(cell: str, sample: str) -> Any:
        output = {"text": "x |1|", "extra": {"statements": [{"statement": "x", "citations": ["1"]}]}}
        return SimpleNamespace(cell=cell, sample_id=sample, epoch=0, status="ok", output=output, error=None)

    rows = [row("d/one/m", "a"), row("d/two/m", "a")]
    with pytest.raises(ValueError, match="the run has 2 cells; choose one with --cell: d/one/m, d/two/m"):
        run_submission(rows)
    with pytest.raises(ValueError, match="the run has no cell 'd/three/m'; its cells: d/one/m, d/two/m"):
        run_submission(rows, cell="d/three/m")
    assert run_submission(rows, cell="d/two/m").answers == [("a", "x |1|")]
    with pytest.raises(ValueError, match="no stored results"):
        run_submission([])


def test_train_classifier_prints_its_held_out_report_as_json_and_saves(tmp_path: Path) -> None:
    saved = tmp_path / "evidence.npz"
    result = CliRunner().invoke(
        app,
        ["citeqa", "train-classifier", "--cases", str(SYNTHETIC_CASES), "-o", str(saved), "--folds", "3", "--json"],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["folds"] == 3
    assert report["cases"] == len(read_cases(SYNTHETIC_CASES))
    assert report["saved"] == str(saved)
    assert saved.exists()
    assert 0.0 <= report["precision"] <= 1.0
    assert 0.0 <= report["label_macro_f1"] <= 1.0
