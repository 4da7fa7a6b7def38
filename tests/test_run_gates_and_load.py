"""Issue 35: CI gates (``bedside run --fail-under METRIC=MIN``) and the results API (``bedside.runs.load``).

Both on the YAML-only example task (docs/examples/own-task) against the scripted server: one system, three
questions, a lexical metric and a rubric judge.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import bedside.runs
from bedside.runs.gates import GateError, parse_gate
from bedside.testing import ScriptedServer

EXAMPLE = Path(__file__).parent.parent / "docs" / "examples" / "own-task"
ANSWER = "Please use acetaminophen and call us if the pain continues."
VERDICT = {
    "plain_language": {"score": 4, "justification": "Short sentences.", "evidence": []},
    "actionable": {"score": 2, "justification": "No next step.", "evidence": []},
}
runner = CliRunner()


def run(tmp_path: Path, judge_reply: str, *args: str) -> Any:
    from bedside.cli import app

    folder = tmp_path / "own-task"
    if not folder.exists():
        shutil.copytree(EXAMPLE, folder)
    rules = {"rules": [{"pattern": "Answer to rate", "reply": judge_reply}], "default": ANSWER}
    with ScriptedServer(rules) as server:
        config = {
            "name": "gated",
            "task": str(folder / "task.yaml"),
            "datasets": {"questions": {}},
            "systems": {"plain": {"type": "plain"}},
            "models": {"system": server.model_name("a"), "judge": server.model_name("j")},
            "store": str(tmp_path / "runs.sqlite"),
        }
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        return runner.invoke(app, ["run", str(path), "--no-cache", *args])


def test_gates_pass_fail_and_absent(tmp_path: Path) -> None:
    passed = run(tmp_path, json.dumps(VERDICT), "--fail-under", "clarity=3", "--fail-under", "rougeL=0")
    assert passed.exit_code == 0, passed.output
    assert "Gates (--fail-under)" in passed.output
    assert "FAIL" not in passed.output
    failed = run(tmp_path, json.dumps(VERDICT), "--fail-under", "clarity=3.5", "--json")  # the mean is 3.0
    assert failed.exit_code == 1, failed.output
    (gate,) = json.loads(failed.stdout)["gates"]
    assert gate == {**gate, "metric": "clarity", "minimum": 3.5, "mean": 3.0, "n": 3, "passed": False}
    unknown = run(tmp_path, json.dumps(VERDICT), "--fail-under", "clarity_score=1")
    assert unknown.exit_code == 1
    assert "the run has no metric 'clarity_score'" in unknown.output


def test_a_metric_absent_in_a_cell_fails_its_gate(tmp_path: Path) -> None:
    absent = run(tmp_path, "I rate it well.", "--fail-under", "clarity=1")
    assert absent.exit_code == 1, absent.output
    assert "absent" in absent.output
    assert "1 gate(s) failed" in absent.output


def test_bad_gates_are_refused_before_running() -> None:
    assert parse_gate("concept_f1[mesh]=0.2").metric == "concept_f1[mesh]"
    for text in ("rougeL", "rougeL=high", "=0.3", "rougeL=nan"):
        with pytest.raises(GateError):
            parse_gate(text)


def test_load_gives_a_flat_dataframe_with_absent_scores_as_nan(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    assert run(tmp_path, "I rate it well.").exit_code == 0
    frame = bedside.runs.load("gated", tmp_path / "runs.sqlite")
    assert len(frame) == 3
    assert set(frame["sample_id"]) == {"q1", "q2", "q3"}
    assert set(frame["system"]) == {"plain"}
    assert (frame["status"] == "ok").all()
    assert frame["score.rougeL"].between(0, 1).all()
    assert all(math.isnan(v) for v in frame["score.clarity"])  # the judge failed: absent, never 0
    assert (frame["usage.system.calls"] == 1).all()
    assert frame["text"].iloc[0] == ANSWER
    if __import__("importlib.util").util.find_spec("pyarrow") is not None:
        frame.to_parquet(tmp_path / "flat.parquet")
