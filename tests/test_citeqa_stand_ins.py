"""Issue 35: the overall score averages offline stand-ins (``semantic``, ``concepts``) for official metrics; every
figure they enter says so (the summary lines, ``--json``, the run report), and figures without them are unmarked."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from typer.testing import CliRunner

from bedside.cli import app
from bedside.tasks.citeqa.readers import read_cases
from bedside.tasks.citeqa.task import SYNTHETIC_CASES, report_tables

runner = CliRunner()


def submission(tmp_path: Path) -> Path:
    path = tmp_path / "sub.json"
    cases = read_cases(SYNTHETIC_CASES)
    path.write_text(json.dumps([{"case_id": c.id, "answer": c.reference_answer} for c in cases]), encoding="utf-8")
    return path


def score(tmp_path: Path, metrics: str, *extra: str) -> str:
    args = ["citeqa", "score", str(submission(tmp_path)), "--cases", str(SYNTHETIC_CASES), "--metrics", metrics]
    result = runner.invoke(app, [*args, *extra])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_overall_score_is_marked_when_it_averages_a_stand_in(tmp_path: Path) -> None:
    text = score(tmp_path, "bleu,concepts")
    overall = next(line for line in text.splitlines() if line.startswith("overall score"))
    assert overall.rstrip().endswith("*")
    relevance = next(line for line in text.splitlines() if line.startswith("overall relevance"))
    assert relevance.rstrip().endswith("*")
    assert "concepts for MEDCON" in text
    assert "not comparable with leaderboard numbers" in text
    assert "concepts (stand-in)" in text
    board = json.loads(score(tmp_path, "bleu,concepts", "--json"))
    assert board["stand_ins"] == {"concepts": "MEDCON"}


def test_official_metrics_only_are_not_marked(tmp_path: Path) -> None:
    text = score(tmp_path, "bleu,sari")
    overall = next(line for line in text.splitlines() if line.startswith("overall score"))
    assert not overall.rstrip().endswith("*")
    assert "stand-in" not in text
    assert json.loads(score(tmp_path, "bleu,sari", "--json"))["stand_ins"] == {}


def test_the_run_report_marks_stand_ins_in_relevance() -> None:
    case = json.loads(SYNTHETIC_CASES.read_text(encoding="utf-8").splitlines()[0])
    row = SimpleNamespace(
        status="ok",
        cell="d/s/m",
        scores={"relevance": 50.0, "relevance_semantic": 70.0, "strict_f1": 1.0},
        output={"text": "", "extra": {"statements": []}},
        sample={"inputs": {"case": case}},
    )
    tables = {t.title: t for t in report_tables([row])}
    stand_ins = tables["Relevance: offline stand-ins"]
    assert [r[0] for r in stand_ins.rows] == ["relevance_semantic", "relevance_concepts"]
    assert all(r[2] == "yes" for r in stand_ins.rows)
    row.scores = {"strict_f1": 1.0}
    assert "Relevance: offline stand-ins" not in {t.title for t in report_tables([row])}
