"""Ranks a reader can trust: overlapping intervals share places, incomplete cells are flagged and unranked, the
task's headline metric is the default, and the report sorts by it (issue 46 item 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs import Store, load_config
from bedside.runs.leaderboard import Entry, ranked
from bedside.runs.report import build_report, headline_metric, html_page, markdown
from bedside.testing import ScriptedServer
from page_text import line_with

runner = CliRunner()


def _entry(model: str, mean: float, low: float, high: float, *, samples: int = 20, errors: int = 0) -> Entry:
    return Entry("t", "d", "s", model, "r", "m", samples - errors, mean, low, high, errors, samples)


def test_tied_and_overlapping_cells_share_places() -> None:
    tied = ranked([_entry(f"m{i:02d}", 0.05, 0.0, 0.15) for i in range(28)])
    assert {e.rank for e in tied} == {"1–28"}  # 28 exact ties: nobody is "#1"
    board = ranked([_entry("c", 0.50, 0.45, 0.55), _entry("a", 0.90, 0.85, 0.95), _entry("b", 0.88, 0.80, 0.92)])
    assert [(e.model, e.rank) for e in board] == [("a", "1–2"), ("b", "1–2"), ("c", "3")]
    lowest = ranked([_entry("c", 0.50, 0.45, 0.55), _entry("a", 0.90, 0.85, 0.95)], ascending=True)
    assert [(e.model, e.rank) for e in lowest] == [("c", "1"), ("a", "2")]


def test_a_cell_that_answered_too_few_samples_is_flagged_not_ranked() -> None:
    board = ranked([_entry("flaky", 0.99, 0.98, 1.0, errors=15), _entry("steady", 0.6, 0.5, 0.7)])
    assert [(e.model, e.rank) for e in board] == [("steady", "1"), ("flaky", "-")]
    assert board[1].flag == "answered 25% of its samples (< 90%): not ranked"
    assert ranked([_entry("flaky", 0.99, 0.98, 1.0, errors=15)], min_complete=0.2)[0].rank == "1"


def test_one_scored_sample_is_not_ranked_and_a_few_are_said_to_be_few() -> None:
    """One value's bootstrap interval is that value ([0.6, 0.6]): ranked, it would be "surely" above every cell
    whose interval lies below 0.6."""
    board = ranked([_entry("one", 0.6, 0.6, 0.6, samples=1), _entry("few", 0.5, 0.4, 0.55, samples=8)])
    assert [(e.model, e.rank) for e in board] == [("few", "1"), ("one", "-")]
    assert board[1].note == "one sample scored: no interval, not ranked"
    assert board[0].note == "n < 20: a rough interval"


def test_each_task_declares_its_headline_metric() -> None:
    assert headline_metric("drafting") == "content_f1"
    assert headline_metric("citeqa") == "strict_f1"
    assert headline_metric("discharge") == "exam_acc_dialogue"
    assert headline_metric("instruct") == "judge_correct"
    assert headline_metric("sensemaking") == "hbm_mean"


def _run(tmp_path: Path, server: ScriptedServer, **changes: Any) -> Path:
    config: dict[str, Any] = {
        "name": "ties",
        "task": "drafting",
        "datasets": {"demo": {"limit": 4}},
        "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},
        "models": {"system": [server.model_name("good-1"), server.model_name("good-2")]},
        "scorers": ["words", "bleu"],
        "store": str(tmp_path / "store.sqlite"),
    }
    config.update(changes)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_the_leaderboard_prints_shared_places_and_the_share_answered(tmp_path: Path) -> None:
    with ScriptedServer() as server:  # echoes the prompt: both models answer alike
        path = _run(tmp_path, server)
        assert runner.invoke(app, ["run", str(path), "--no-cache"]).exit_code == 0
    store = ["--store", str(tmp_path / "store.sqlite")]
    (board,) = json.loads(runner.invoke(app, ["leaderboard", *store, "--json"]).stdout)
    assert board["metric"] == "words"  # the run did not score content_f1: its first declared metric
    assert [e["rank"] for e in board["entries"]] == ["1–2", "1–2"]
    shown = runner.invoke(app, ["leaderboard", *store], env={"COLUMNS": "250"})
    one, two = (
        [
            c.strip()
            for c in line_with(shown.stdout, f"1–2 | zero_shot | openai-compatible/{model}").strip("|").split("|")
        ]
        for model in ("good-1", "good-2")
    )
    assert one[3] == two[3]  # the same mean and interval
    assert one[4:6] == ["4", "100%"]


def test_the_report_sorts_cells_by_the_headline_metric_and_marks_the_best(tmp_path: Path) -> None:
    rules = [(r"Clinician sentence:", "NO MATCH"), (r"Sentence:", '{"theme": "other"}')]
    with ScriptedServer(rules) as server:
        path = _run(
            tmp_path,
            server,
            systems={"zero_shot": {"type": "zero_shot", "options": {"matcher": "lexical"}}},
            scorers=["content_f1", "words"],
        )
        assert runner.invoke(app, ["run", str(path), "--no-cache"]).exit_code == 0
    config = load_config(path)
    store = Store(config.store)
    try:
        report = build_report(store, config.run_id)
    finally:
        store.close()
    text = markdown(report)
    assert "Cells sorted by `content_f1`, the task's headline metric (higher is better)" in text
    starred = [line for line in text.splitlines() if line.startswith("|") and "★" in line]
    assert len(starred) == 2  # both models scored 0 (the judge matched nothing): a tie, both marked
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html_page(report), "html.parser")
    sorted_by = next(p for p in soup.find_all("p") if p.get_text().startswith("Cells sorted by"))
    assert [code.get_text() for code in sorted_by.find_all("code")] == [
        "content_f1",
        "bedside leaderboard",
        "bedside compare",
    ]
    assert not [p.get_text() for p in soup.find_all("p") if "`" in p.get_text()]  # code spans, never backticks


def test_a_model_that_answered_nothing_and_a_cut_short_run_are_listed_never_ranked(tmp_path: Path) -> None:
    """A sweep must not mislead: a model whose every sample failed is a row that says so (it used to vanish), and
    a cell of an interrupted run counts what it answered against what its run planned, not against what it
    stored (4 of 14 stored read as 100% answered and were ranked beside finished runs)."""
    with ScriptedServer() as good, ScriptedServer(faults="500=1.0") as broken:
        path = _run(
            tmp_path,
            good,
            models={"system": [good.model_name("good-1"), broken.model_name("broken")]},
            model_options={"system": {"max_retries": 0}},
        )
        assert runner.invoke(app, ["run", str(path), "--no-cache"]).exit_code != 0  # every broken sample failed
    store_path = tmp_path / "store.sqlite"
    store = ["--store", str(store_path)]
    (board,) = json.loads(runner.invoke(app, ["leaderboard", *store, "--json"]).stdout)
    ranked_good, failed = board["entries"]
    assert (ranked_good["model"], ranked_good["rank"]) == ("openai-compatible/good-1", "1")
    assert (failed["model"], failed["rank"], failed["n"], failed["mean"]) == ("openai-compatible/broken", "-", 0, None)
    assert failed["note"] == "answered none of its 4 samples: not ranked"
    shown = runner.invoke(app, ["leaderboard", *store], env={"COLUMNS": "250"})
    assert "answered none of its 4 samples" in line_with(shown.stdout, "- | zero_shot | openai-compatible/broken")

    opened = Store(str(store_path))  # the same cells, as an interrupted run leaves them: 14 planned, 4 stored
    try:
        (run,) = opened.runs()
        # and a third model that stored nothing at all (its endpoint down when the run stopped)
        planned = {cell: 14 for cell in run["planned"]} | {"demo/zero_shot/openai-compatible/down": 14}
        opened.set_planned(run["id"], planned)
        opened.finish_run(run["id"], "interrupted")
    finally:
        opened.close()
    (board,) = json.loads(runner.invoke(app, ["leaderboard", *store, "--json"]).stdout)
    cut_short = board["entries"][0]
    assert (cut_short["model"], cut_short["rank"]) == ("openai-compatible/good-1", "-")
    assert cut_short["note"] == "answered 29% of its samples (< 90%): not ranked; run interrupted"
    down = next(e for e in board["entries"] if e["model"] == "openai-compatible/down")
    assert (down["system"], down["n"], down["errors"]) == ("zero_shot", 0, 0)
    assert down["note"] == "none of its 14 samples run: not ranked; run interrupted"  # never run, not failed
    opened = Store(str(store_path))
    try:
        report = build_report(opened, run["id"])
    finally:
        opened.close()
    assert "demo/zero_shot/openai-compatible/down" in [c.cell for c in report.cells]  # a row, with nothing in it
    text = markdown(report)
    assert (
        "Note: demo/zero_shot/openai-compatible/down: 0 of its 14 planned samples stored (run status: interrupted)"
        in text
    )
    assert "Note: demo/zero_shot/openai-compatible/good-1: 4 of its 14 planned samples stored" in text


def test_over_models_says_how_many_of_the_grids_models_it_averages() -> None:
    from bedside.runs.report import CellReport, MetricSummary, RunReport, over_models

    def cell(model: str, mean: float | None) -> CellReport:
        metrics = [] if mean is None else [MetricSummary("words", 4, mean, mean - 1, mean + 1)]
        return CellReport(f"d/s/{model}", 4, 4, 0, dataset="d", system="s", model=model, metrics=metrics)

    report = RunReport(
        {"id": "r", "task": "drafting"}, [cell("a", 10.0), cell("b", 20.0), cell("down", None)], {}, ["words"]
    )
    (spread,) = over_models(report)
    assert (spread.models, spread.of, spread.mean) == (2, 3, 15.0)


def test_the_report_stars_only_a_cell_the_leaderboard_would_rank() -> None:
    """A model that failed a third of its calls scored 1.0 on the rest and took the report's star, while the
    leaderboard left it unranked: the two now agree (a newcomer's sweep, 2026-11-29)."""
    from bedside.runs.report import CellReport, MetricSummary, RunReport, _by_headline

    def cell(name: str, ok: int, errors: int, mean: float) -> CellReport:
        summary = MetricSummary("content_f1", ok, mean, mean - 0.1, min(1.0, mean + 0.1))
        return CellReport(name, ok + errors, ok, errors, metrics=[summary])

    run = {"task": "drafting", "planned": {"flaky": 18, "steady": 18, "cut": 18, "late": 18}}
    cells = [cell("flaky", 12, 6, 1.0), cell("steady", 18, 0, 0.8), cell("cut", 4, 0, 0.9), cell("late", 17, 1, 0.7)]
    ordered, best = _by_headline(RunReport(run, cells, {}, ["content_f1"]))
    assert [c.cell for c in ordered] == ["steady", "late", "flaky", "cut"]  # 17 of 18 answered is ranked
    assert best == ("content_f1", frozenset({"steady"}))
    _, none = _by_headline(RunReport(run, [cells[0], cells[2]], {}, ["content_f1"]))
    assert none == ("content_f1", frozenset())  # no cell may be ranked: no star at all


def test_a_share_gets_a_wilson_interval_so_five_of_five_is_not_surely_best() -> None:
    """5 correct of 5 bootstrapped is [1, 1], which ranked that model "surely" above one at 0.44 [0.22, 0.67]
    (a newcomer's sweep, 2026-11-29); a share's interval is Wilson's: [0.57, 1], overlapping, a shared place."""
    from bedside.runs.report import _summaries
    from bedside.runs.store import ResultRow

    def rows(values: list[float]) -> list[ResultRow]:
        return [
            ResultRow(
                "r", "c", f"s{i}", 0, "d", "sys", "m", "k", "ok", None, {}, {"accuracy": v, "words": v}, {}, {}, {}
            )
            for i, v in enumerate(values)
        ]

    perfect = {m.metric: m for m in _summaries(rows([1.0] * 5), ["accuracy", "words"], seed=0)}
    assert perfect["accuracy"].mean == 1.0
    assert 0.56 < perfect["accuracy"].low < 0.57
    assert perfect["accuracy"].high == 1.0
    assert (perfect["words"].low, perfect["words"].high) == (1.0, 1.0)  # a count keeps its bootstrap
    weak = _summaries(rows([1.0] * 8 + [0.0] * 10), ["accuracy"], seed=0)[0]
    board = ranked(
        [
            _entry("perfect", 1.0, perfect["accuracy"].low, 1.0, samples=5),
            _entry("weak", weak.mean, weak.low, weak.high),
        ]
    )
    assert {e.rank for e in board} == {"1–2"}


def test_a_retried_error_stays_on_the_record(tmp_path: Path) -> None:
    """After --retry-errors a model that failed a sixth of its calls read as reliable as any (a newcomer's sweep,
    2026-11-29): each sample answered on a retry is marked, and the leaderboard and the report say how many."""
    with ScriptedServer() as server, ScriptedServer(faults="first=500+500") as flaky:
        path = _run(
            tmp_path,
            server,
            models={"system": [server.model_name("good-1"), flaky.model_name("flaky")]},
            model_options={"system": {"max_retries": 0}},
            concurrency=1,
        )
        assert runner.invoke(app, ["run", str(path), "--no-cache"]).exit_code != 0  # two samples failed
        assert runner.invoke(app, ["run", str(path), "--no-cache", "--retry-errors"]).exit_code == 0
    store = ["--store", str(tmp_path / "store.sqlite")]
    (board,) = json.loads(runner.invoke(app, ["leaderboard", *store, "--json"]).stdout)
    notes = {e["model"]: e["note"] for e in board["entries"]}
    assert notes["openai-compatible/flaky"].endswith("2 answered only on --retry-errors")
    assert "retry" not in notes["openai-compatible/good-1"]
    config = load_config(path)
    opened = Store(config.store)
    try:
        text = markdown(build_report(opened, config.run_id))
    finally:
        opened.close()
    assert "zero_shot/openai-compatible/flaky: 2 of its 4 answered samples failed first and were answered on" in text


def test_a_smoke_run_after_the_sweep_says_the_fuller_run_is_older(tmp_path: Path) -> None:
    """`bedside run sweep.yaml --limit 2` after the full sweep became the leaderboard's run for every model, n=2,
    with nothing said (a newcomer's sweep, 2026-11-29)."""
    with ScriptedServer() as server:
        path = _run(tmp_path, server)
        assert runner.invoke(app, ["run", str(path), "--no-cache"]).exit_code == 0
        assert runner.invoke(app, ["run", str(path), "--no-cache", "--limit", "2"]).exit_code == 0
    full = load_config(path).run_id
    store = ["--store", str(tmp_path / "store.sqlite")]
    (board,) = json.loads(runner.invoke(app, ["leaderboard", *store, "--json"]).stdout)
    assert {e["n"] for e in board["entries"]} == {2}
    for entry in board["entries"]:
        assert entry["note"].endswith(
            f"its run planned 4 samples, an older run of its config ({full}) 8: --all-runs shows both"
        )
    (both,) = json.loads(runner.invoke(app, ["leaderboard", *store, "--json", "--all-runs"]).stdout)
    assert not any("older run" in e["note"] for e in both["entries"])


def test_a_cell_whose_answers_were_cut_off_says_how_many(tmp_path: Path) -> None:
    with ScriptedServer() as server, ScriptedServer(faults="length=1.0") as cut:
        path = _run(tmp_path, server, models={"system": [server.model_name("good-1"), cut.model_name("cut")]})
        assert runner.invoke(app, ["run", str(path), "--no-cache"]).exit_code == 0
    (board,) = json.loads(
        runner.invoke(app, ["leaderboard", "--store", str(tmp_path / "store.sqlite"), "--json"]).stdout
    )
    notes = {e["model"]: e["note"] for e in board["entries"]}
    assert "4 of its answers cut off at max_tokens" in notes["openai-compatible/cut"]
    assert "cut off" not in notes["openai-compatible/good-1"]


def _one_model_run(tmp_path: Path) -> Any:
    """A finished run of one answering model: its config."""
    with ScriptedServer() as server:
        path = _run(tmp_path, server, models={"system": [server.model_name("good-1")]})
        assert runner.invoke(app, ["run", str(path), "--no-cache"]).exit_code == 0
    return load_config(path)


def test_a_report_with_no_error_but_samples_never_run_says_so(tmp_path: Path) -> None:
    """A cut-short run's report ended "## Errors: None." (a newcomer's sweep, 2026-11-29)."""
    config = _one_model_run(tmp_path)
    opened = Store(config.store)
    try:
        planned = opened.run(config.run_id)["planned"]
        opened.set_planned(config.run_id, planned | {"demo/zero_shot/openai-compatible/down": 6})
        text = markdown(build_report(opened, config.run_id))
    finally:
        opened.close()
    errors = text.split("## Errors", 1)[1]
    assert (
        errors.split("##", 1)[0].strip()
        == "None stored, but 6 planned samples were never run (the notes above say where)."
    )
    assert "A sample reused from another run carries that run's usage" in text


def test_ls_shows_when_a_killed_run_last_stored_a_sample(tmp_path: Path) -> None:
    """A SIGKILLed run never writes its own updated_at again: `ls` showed its start as its last update while 38
    samples had been stored since (a newcomer's sweep, 2026-11-29)."""
    from datetime import timedelta

    from sqlalchemy import update

    from bedside.runs.store import runs_table

    config = _one_model_run(tmp_path)
    opened = Store(config.store)
    try:
        created = opened.run(config.run_id)["created_at"]
        with opened.engine.begin() as db:  # as a run killed right after it began leaves it
            db.execute(update(runs_table).values(updated_at=created - timedelta(hours=1)))
        (listed,) = opened.runs()
    finally:
        opened.close()
    shown = runner.invoke(app, ["ls", "--store", config.store], env={"COLUMNS": "250"}).stdout
    row = [c.strip() for c in line_with(shown, config.run_id).strip("|").split("|")]
    assert row[4] == f"{listed['last_stored']:%Y-%m-%d %H:%M:%S}"  # the last sample stored, not the stale stamp
