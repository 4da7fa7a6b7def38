"""`bedside metrics list` and `bedside judges list|show|run`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.metrics import CATALOG
from bedside.testing import ScriptedServer

runner = CliRunner()


def test_metrics_list_names_every_metric_and_what_cannot_run() -> None:
    result = runner.invoke(app, ["metrics", "list", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert set(rows) == {info.name for info in CATALOG}
    assert {"bleu", "chrf++", "rougeLsum", "sari", "concept_f1[mesh]", "smog", "exam_accuracy"} <= set(rows)
    assert rows["sari"]["available"] is True
    assert rows["concept_f1[mesh]"]["available"] is True  # installed by make
    assert rows["concept_f1[umls]"]["available"] is False
    assert (
        "QuickUMLS" in rows["concept_f1[umls]"]["unavailable_because"]
        or "quickumls" in (rows["concept_f1[umls]"]["unavailable_because"])
    )
    assert rows["meteor"]["available"] is True  # WordNet 3.0 comes with bedside
    table = runner.invoke(app, ["metrics", "list"], env={"COLUMNS": "200"})
    assert table.exit_code == 0
    assert "rougeLsum" in table.output
    assert "definition" in table.output


def test_the_catalog_names_every_generic_run_scorer_once_and_groups_its_families() -> None:
    """``metrics list`` shows the name a run config takes (``cosine``, not the catalog's ``cosine[MiniLM]``), and
    a run's check that a scorer can run here reads the catalog by it: a generic scorer missing from the catalog
    would be taken as runnable whatever this machine lacks."""
    from itertools import groupby

    from bedside.runs.scorers import GENERIC, unavailable

    named = [info.scorer for info in CATALOG if info.scorer is not None]
    assert sorted(named) == sorted(GENERIC)
    families = [family for family, _ in groupby(info.family for info in CATALOG)]
    assert len(families) == len(set(families))  # each family's heading printed once
    table = runner.invoke(app, ["metrics", "list"], env={"COLUMNS": "200"})
    row = next(line for line in table.output.splitlines() if "bertscore[all-MiniLM" in line)
    assert "bertscore_minilm" in row
    assert "run scorer" in table.output
    listed = {row["name"]: row for row in json.loads(runner.invoke(app, ["metrics", "list", "--json"]).output)}
    assert (listed["words"]["scorer"], listed["corpus_bleu"]["scorer"]) == ("words", None)
    assert unavailable("cosine") is None  # MiniLM is installed by make; the lookup finds the catalog's entry


def test_a_generic_scorer_whose_model_is_missing_stops_the_run_before_it_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bedside.metrics import catalog
    from bedside.runs import resolve_task
    from bedside.runs.scorers import check_scorers

    entries = [
        dataclasses.replace(info, unavailable=lambda: "MiniLM not installed (test)")
        if info.scorer == "cosine"
        else info
        for info in catalog.CATALOG
    ]
    monkeypatch.setattr(catalog, "CATALOG", tuple(entries))
    with pytest.raises(ValueError, match=r"cannot run on this machine: cosine \(MiniLM not installed \(test\)\)"):
        check_scorers(resolve_task("drafting"), ["bleu", "cosine"])
    check_scorers(resolve_task("drafting"), ["bleu"])


def test_judges_list_and_show() -> None:
    listed = runner.invoke(app, ["judges", "list"], env={"COLUMNS": "200"})
    assert listed.exit_code == 0
    assert "discharge_strategy  6 criteria" in listed.output
    shown = runner.invoke(app, ["judges", "show", "sensemaking_flow_correctness"])
    assert shown.exit_code == 0
    assert "[system]" in shown.output
    assert "<conversation>" in shown.output
    missing = runner.invoke(app, ["judges", "show", "no_such_rubric"])
    assert missing.exit_code == 1
    assert "no rubric 'no_such_rubric'" in missing.output


def test_judges_run_one_judge_and_a_jury(tmp_path: Path) -> None:
    conversation = tmp_path / "conversation.txt"
    conversation.write_text("Person: I feel low.\nSensemaker: That can become serious if it lasts.", encoding="utf-8")
    reply = json.dumps({"severity": {"score": 3, "justification": "Basic severity explained.", "evidence": []}})
    other = json.dumps({"severity": {"score": 2, "justification": "Little on severity.", "evidence": []}})
    with ScriptedServer({"rules": [], "default": reply}) as one, ScriptedServer({"rules": [], "default": other}) as two:
        single = runner.invoke(
            app,
            [
                "judges",
                "run",
                "sensemaking_severity",
                "-i",
                f"conversation=@{conversation}",
                "-m",
                one.model_name(),
                "--no-cache",
                "--json",
            ],
        )
        assert single.exit_code == 0, single.output
        judgement = json.loads(single.output)
        assert judgement["scores"]["severity"]["score"] == 3
        assert judgement["aggregate"] == 3
        assert "I feel low." in one.recent[-1]["messages"][1]["content"]

        jury = runner.invoke(
            app,
            [
                "judges",
                "run",
                "sensemaking_severity",
                "-i",
                f"conversation=@{conversation}",
                "-m",
                one.model_name(),
                "-m",
                two.model_name(),
                "--aggregate",
                "median",
                "--no-cache",
                "--json",
            ],
        )
        assert jury.exit_code == 0, jury.output
        verdict = json.loads(jury.output)
        assert verdict["scores"]["severity"] == 2.5
        assert len(verdict["judgements"]) == 2


def test_judges_run_reports_a_failed_judge_and_bad_inputs() -> None:
    with ScriptedServer({"rules": [], "default": "three"}) as server:
        failed = runner.invoke(
            app,
            [
                "judges",
                "run",
                "sensemaking_severity",
                "-i",
                "conversation=hi",
                "-m",
                server.model_name(),
                "--no-cache",
                "--max-repairs",
                "0",
            ],
        )
        assert failed.exit_code == 1
        assert "could not judge sensemaking_severity" in failed.output
        bad = runner.invoke(
            app, ["judges", "run", "sensemaking_severity", "-i", "conversation", "-m", server.model_name()]
        )
        assert bad.exit_code == 1
        assert "NAME=TEXT or NAME=@FILE" in bad.output
