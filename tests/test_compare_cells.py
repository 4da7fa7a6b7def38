"""``bedside compare`` on any two selections of cells, every model against a baseline, the relative CI gate, and a
run that scored nothing failing (issue 46 items 2 and 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs import Store, load_config
from bedside.runs.gates import WorseGate, check_worse, parse_worse_gate
from bedside.runs.pairing import CellKey, PairingError, baseline_pairs, pair_cells, parse_selection
from bedside.runs.report import CellPair, Comparison, MetricComparison
from bedside.testing import ScriptedServer

runner = CliRunner()
GRID = [
    CellKey(f"demo/{system}/{model}", "demo", system, model)
    for system in ("rag", "zero_shot")
    for model in ("bad-1", "good-1", "good-2")
]


def test_selections_pair_cells_on_the_fields_they_leave_free() -> None:
    assert pair_cells(GRID, GRID, {"model": "good-1"}, {"model": "bad-1"}) == [
        ("demo/rag/good-1", "demo/rag/bad-1"),
        ("demo/zero_shot/good-1", "demo/zero_shot/bad-1"),
    ]
    assert pair_cells(GRID, GRID, {"system": "rag", "model": "good-1"}, {"system": "zero_shot", "model": "good-1"}) == [
        ("demo/rag/good-1", "demo/zero_shot/good-1")
    ]
    assert pair_cells(GRID, GRID, {"system": "rag"}, {"system": "zero_shot"}) == [
        ("demo/rag/bad-1", "demo/zero_shot/bad-1"),
        ("demo/rag/good-1", "demo/zero_shot/good-1"),
        ("demo/rag/good-2", "demo/zero_shot/good-2"),
    ]
    twice = [*GRID, CellKey("demo/rag/good-1@t07", "demo", "rag", "good-1")]  # one model under two settings
    with pytest.raises(PairingError, match=r"cells demo/rag/good-1, demo/rag/good-1@t07, demo/zero_shot/good-1 share"):
        pair_cells(twice, twice, {"system": "rag"}, {"system": "zero_shot"})
    with pytest.raises(PairingError, match=r"--b model=nope: no cell matches \(model: bad-1, good-1, good-2\)"):
        pair_cells(GRID, GRID, {"model": "good-1"}, {"model": "nope"})


def test_baseline_pairs_every_other_model_with_the_baseline() -> None:
    assert baseline_pairs(GRID, "good-1") == [
        ("demo/rag/good-1", "demo/rag/bad-1"),
        ("demo/zero_shot/good-1", "demo/zero_shot/bad-1"),
        ("demo/rag/good-1", "demo/rag/good-2"),
        ("demo/zero_shot/good-1", "demo/zero_shot/good-2"),
    ]
    with pytest.raises(PairingError, match=r"--baseline 'good1': no such model in the run \(did you mean 'good-1'\?\)"):
        baseline_pairs(GRID, "good1")


def test_two_runs_without_a_selection_pair_as_before() -> None:
    one = [CellKey("demo/z/a", "demo", "z", "a")]
    other = [CellKey("demo/z/b", "demo", "z", "b")]
    assert pair_cells(one, one) == [("demo/z/a", "demo/z/a")]
    assert pair_cells(one, other) == [("demo/z/a", "demo/z/b")]  # single-model runs of different models
    # Across two runs a selection pairs a cell with the same cell of the other run; within one run, never.
    assert pair_cells(GRID, GRID, {"model": "good-1"}, {"model": "good-1"}) == [
        ("demo/rag/good-1", "demo/rag/good-1"),
        ("demo/zero_shot/good-1", "demo/zero_shot/good-1"),
    ]
    with pytest.raises(PairingError, match="pair no cells"):
        pair_cells(GRID, GRID, {"model": "good-1"}, {"model": "good-1"}, same_run=True)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("modle=x", "--a 'modle=x': no field 'modle' (did you mean 'model'?); fields: dataset, system, model, cell"),
        ("model", "--a 'model': expected FIELD=VALUE[,FIELD=VALUE], e.g. model=good-1"),
        ("model=a,model=b", "--a 'model=a,model=b': model given twice"),
    ],
)
def test_a_bad_selection_is_named(text: str, message: str) -> None:
    with pytest.raises(PairingError) as caught:
        parse_selection(text)
    assert str(caught.value) == message


def _row(low: float, high: float, metric: str = "f1") -> Comparison:
    """One pair of cells (a, b) compared on one metric."""
    row = MetricComparison("a", "b", metric, 40, 0.5, 0.5 + (low + high) / 2, (low + high) / 2, low, high, 0.5)
    return Comparison([row], [CellPair("a", "b", 40)])


def test_the_relative_gate_is_non_inferiority_on_the_paired_interval() -> None:
    assert parse_worse_gate("content_f1:0.02") == WorseGate("content_f1", 0.02)
    assert parse_worse_gate("concept_f1[mesh]") == WorseGate("concept_f1[mesh]", 0.0)
    (inside,) = check_worse(_row(-0.01, 0.03), [WorseGate("f1", 0.02)])
    assert inside.passed
    (beyond,) = check_worse(_row(-0.03, 0.01), [WorseGate("f1", 0.02)])
    assert not beyond.passed
    assert beyond.reason == (
        "b vs a: f1 B − A -0.0100, 95% CI [-0.0300, +0.0100], n = 40: the lower end is beyond the margin -0.02 "
        "(higher is better)"
    )
    (rate,) = check_worse(_row(-0.03, 0.01), [WorseGate("f1", 0.0)], lower_is_better=True)
    assert not rate.passed  # an error rate that may have risen by 0.01
    (absent,) = check_worse(_row(0.0, 0.0), [WorseGate("rougeL")])
    assert not absent.passed
    assert absent.reason.startswith("rougeL: no paired sample scored it")
    # a second pair of cells with no sample answered by both (a model that failed every sample) fails the gate
    both = _row(-0.01, 0.03)
    with_failed = Comparison(both.rows, [*both.pairs, CellPair("a", "broken", 0)])
    passed, failed = check_worse(with_failed, [WorseGate("f1", 0.02)])
    assert passed.passed
    assert not failed.passed
    assert (
        failed.reason
        == "broken vs a: no sample both answered scored f1 (0 answered by both), so B cannot be shown no worse"
    )


def _grid(tmp_path: Path, server: ScriptedServer, **changes: Any) -> Path:
    """Two systems (one prompt twice as long: the scripted server echoes it, so more words) by two models (the
    same echo: identical outputs)."""
    short = tmp_path / "short.j2"
    short.write_text("[[user]]\n{{ message }}\n", encoding="utf-8")
    long = tmp_path / "long.j2"
    long.write_text("[[user]]\n{{ message }} {{ message }}\n", encoding="utf-8")
    config: dict[str, Any] = {
        "name": "sweep",
        "task": "drafting",
        "datasets": {"demo": {"limit": 6}},
        "systems": {
            "short": {"type": "zero_shot", "options": {"evaluate": False, "template": str(short)}},
            "long": {"type": "zero_shot", "options": {"evaluate": False, "template": str(long)}},
        },
        "models": {"system": [server.model_name("good-1"), server.model_name("bad-1")]},
        "settings": {"system": {"max_tokens": 400}},
        "scorers": ["words", "bleu"],
        "store": str(tmp_path / "store.sqlite"),
    }
    config.update(changes)
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_compare_cells_of_one_run_a_baseline_and_a_ci_gate(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        path = _grid(tmp_path, server)
        ran = runner.invoke(app, ["run", str(path), "--no-cache"])
        assert ran.exit_code == 0, ran.output
        good, bad = (server.model_name(m).split("@")[0] for m in ("good-1", "bad-1"))  # a cell names no URL
    run, store = load_config(path).run_id, ["--store", str(tmp_path / "store.sqlite")]

    def compare(*args: str) -> Any:
        return runner.invoke(app, ["compare", run, *args, *store])

    systems = compare("--a", "system=short", "--b", "system=long", "--json")
    assert systems.exit_code == 0, systems.output
    words = [r for r in json.loads(systems.output) if r["metric"] == "words"]
    assert sorted((r["cell_a"], r["cell_b"]) for r in words) == [
        (f"demo/short/{bad}", f"demo/long/{bad}"),
        (f"demo/short/{good}", f"demo/long/{good}"),
    ]
    assert all(r["n"] == 6 and r["difference"] > 0 for r in words)

    shown = runner.invoke(
        app, ["compare", run, "--a", "system=short", "--b", "system=long", *store], env={"COLUMNS": "250"}
    )
    assert "<0.0002" in shown.stdout  # a bootstrap p of 0 is below what 10,000 resamples resolve, never zero
    worse = compare("--a", "system=long", "--b", "system=short", "--fail-if-worse", "words")
    assert worse.exit_code == 1
    failed = [line for line in worse.output.splitlines() if line.startswith("FAIL: ")]
    assert len(failed) == 2
    assert "the lower end is beyond the margin" in failed[0]
    assert "2 of 2 --fail-if-worse check(s) failed" in worse.output

    same = compare("--a", f"model={good}", "--b", f"model={bad}", "--fail-if-worse", "words", "--fail-if-worse", "bleu")
    assert same.exit_code == 0, same.output  # identical outputs: B is shown no worse
    assert sum(line.startswith("pass: ") for line in same.output.splitlines()) == 4

    absent = compare("--a", f"model={good}", "--b", f"model={bad}", "--fail-if-worse", "rougeL")
    assert absent.exit_code == 1
    assert "FAIL: rougeL: no paired sample scored it" in absent.output

    against = compare("--baseline", good, "--json")
    assert against.exit_code == 0, against.output
    assert {(r["cell_a"], r["cell_b"]) for r in json.loads(against.output)} == {
        (f"demo/long/{good}", f"demo/long/{bad}"),
        (f"demo/short/{good}", f"demo/short/{bad}"),
    }

    alone = compare()
    assert alone.exit_code == 1
    assert "one run against itself: select its cells with --a/--b" in alone.output
    typo = compare("--a", "modle=x")
    assert "did you mean 'model'?" in typo.output


def test_a_run_whose_declared_scorer_scored_nothing_fails(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        # content_f1 is EditJudge's, and evaluate is off: no sample gets one
        path = _grid(tmp_path, server, scorers=["words", "content_f1"])
        ran = runner.invoke(app, ["run", str(path), "--no-cache", "--json"])
        allowed = runner.invoke(app, ["run", str(path), "--no-cache", "--allow-errors"])
    assert ran.exit_code == 1
    assert json.loads(ran.output[ran.output.index("{") :])["unscored"] == ["content_f1"]
    assert allowed.exit_code == 0
    assert "nothing scored: content_f1 scored no sample of this run" in allowed.output
    (tmp_path / "defaults").mkdir()
    with ScriptedServer() as server:  # no scorers declared: the task's headline metric is the one checked
        path = _grid(tmp_path / "defaults", server, scorers=None, store=str(tmp_path / "defaults.sqlite"))
        by_default = runner.invoke(app, ["run", str(path), "--no-cache", "--json"])
    assert by_default.exit_code == 1
    assert json.loads(by_default.output[by_default.output.index("{") :])["unscored"] == ["content_f1"]


def test_a_gate_on_a_metric_the_task_says_is_better_lower_needs_no_flag() -> None:
    from bedside.runs.registry import lower_is_better

    assert lower_is_better("drafting", "matcher_failures")
    assert lower_is_better("sensemaking", "smog")
    assert not lower_is_better("drafting", "content_f1")
    assert not lower_is_better("no-such-task", "anything")


def test_a_baseline_gate_fails_on_a_model_that_answered_nothing(tmp_path: Path) -> None:
    """A sweep's CI gate must not pass by leaving a model out: one whose every call failed (and one whose cells
    the run planned but never stored) is a pair with nothing to compare, which fails the gate and is named."""
    with ScriptedServer() as server, ScriptedServer(faults="500=1.0") as broken:
        path = _grid(
            tmp_path,
            server,
            models={"system": [server.model_name("good-1"), server.model_name("bad-1"), broken.model_name("broken")]},
            model_options={"system": {"max_retries": 0}},
        )
        assert runner.invoke(app, ["run", str(path), "--no-cache"]).exit_code != 0
        good = server.model_name("good-1").split("@")[0]
    run, store = load_config(path).run_id, ["--store", str(tmp_path / "store.sqlite")]
    gated = runner.invoke(app, ["compare", run, "--baseline", good, "--fail-if-worse", "words", *store])
    assert gated.exit_code == 1, gated.output
    assert "FAIL: demo/short/openai-compatible/broken vs demo/short/" in gated.output
    assert "no sample both answered scored words (0 answered by both)" in gated.output
    assert "not compared: demo/long/openai-compatible/broken vs demo/long/" in gated.output
    assert "2 of 4 --fail-if-worse check(s) failed" in gated.output
    opened = Store(str(tmp_path / "store.sqlite"))  # a model the run planned but stored nothing of
    try:
        planned = opened.run(run)["planned"]
        opened.set_planned(run, planned | {"demo/short/openai-compatible/down": 6})
    finally:
        opened.close()
    gated = runner.invoke(app, ["compare", run, "--baseline", good, "--fail-if-worse", "words", *store])
    assert "FAIL: demo/short/openai-compatible/down vs demo/short/" in gated.output
    assert "3 of 5 --fail-if-worse check(s) failed" in gated.output


def test_a_gate_fails_a_model_that_failed_samples_the_baseline_answered(tmp_path: Path) -> None:
    """The paired figures leave out the samples one side failed: a model failing 2 of 6 calls and echoing the rest
    exactly as the baseline read "+0.000, pass" (a newcomer's sweep, 2026-11-29). Now the samples left out are
    said, and the gate fails on them unless --allow-errors asks to gate on the samples both answered."""
    with ScriptedServer() as server, ScriptedServer(faults="first=500+500") as flaky:
        path = _grid(
            tmp_path,
            server,
            systems={"short": {"type": "zero_shot", "options": {"evaluate": False}}},
            models={"system": [server.model_name("good-1"), flaky.model_name("flaky")]},
            model_options={"system": {"max_retries": 0}},
            concurrency=1,
        )
        assert runner.invoke(app, ["run", str(path), "--no-cache"]).exit_code != 0  # two samples failed
        good = server.model_name("good-1").split("@")[0]
    run, store = load_config(path).run_id, ["--store", str(tmp_path / "store.sqlite")]
    gated = runner.invoke(app, ["compare", run, "--baseline", good, "--fail-if-worse", "words", *store])
    assert gated.exit_code == 1, gated.output
    assert "left out: demo/short/openai-compatible/flaky vs demo/short/" in gated.output
    assert "B failed 2 of the samples the other answered (compared on the 4 both answered" in gated.output
    assert "B failed 2 of the samples A answered, which the paired figures leave out" in gated.output
    allowed = runner.invoke(
        app, ["compare", run, "--baseline", good, "--fail-if-worse", "words", "--allow-errors", *store]
    )
    assert allowed.exit_code == 0, allowed.output  # the four both answered are the same echo
    assert "left out:" in allowed.output
