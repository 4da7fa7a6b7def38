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
from bedside.tasks.citeqa import read_cases, read_submission
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
        "scorers": ["strict_precision", "strict_recall", "strict_f1", "lenient_f1", "evidence_recall", "words"],
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
    assert two.output["trace"] == [
        {"stage": "evidence", "selected": ["1", "3", "4"], "attempts": 1},
        {"stage": "answer", "attempts": 2},
    ]
    # Cited {3,4} vs essential {1,3,4}: P 1, R 2/3, F1 0.8. Stage 1 selected {1,3,4} of the relevant
    # (essential + supplementary) {1,2,3,4,5}: evidence recall 3/5.
    assert two.scores["strict_precision"] == 1.0
    assert two.scores["strict_recall"] == pytest.approx(2 / 3)
    assert two.scores["strict_f1"] == pytest.approx(0.8)
    assert two.scores["evidence_recall"] == pytest.approx(3 / 5)
    # syn-02's stage 2 never gets under the word limit: an error naming the rule, never a score.
    assert two.usage["system"]["calls"] == 3  # stage 1, and stage 2's rejected and accepted answers
    failed = rows[("two", "syn-02")]
    assert failed.status == "error"
    assert failed.usage["system"]["calls"] == 4  # a failed sample's usage counts every attempt it paid for
    assert "StructuredOutputError" in (failed.error or "")
    assert "at most 75" in (failed.error or "")
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
    assert set(written) == {"syn-01"}  # syn-02 failed its guardrails and is reported, not written
    assert "syn-02" in answered.output
    assert "at most 75" in answered.output
