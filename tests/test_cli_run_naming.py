"""Finding one's way among runs: a config run twice (changed between) is reported by its name, the latest run
picked and named, the others listed; `bedside ls` tells the runs apart; a failed run's hints reproduce the command
(its store and options), and its errors are printed grouped by cause."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.testing import ScriptedServer


def _config(tmp_path: Path, server: ScriptedServer, **extra: Any) -> Path:
    config = {
        "name": "mine",
        "task": "drafting",
        "datasets": {"demo": {"limit": 3}},
        "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},
        "models": {"system": [server.model_name("scripted")]},
        "scorers": ["words"],
        "store": str(tmp_path / "elsewhere.sqlite"),
        **extra,
    }
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_a_config_run_twice_is_reported_by_name_the_latest_run_named_and_the_other_listed(tmp_path: Path) -> None:
    runner = CliRunner()
    with ScriptedServer() as server:
        path = _config(tmp_path, server)
        store = str(tmp_path / "elsewhere.sqlite")
        first = json.loads(runner.invoke(app, ["run", str(path), "--no-cache", "--json"]).stdout)["run"]
        second = json.loads(runner.invoke(app, ["run", str(path), "--no-cache", "--json", "--set", "seed=1"]).stdout)[
            "run"
        ]
    assert first != second
    assert first.startswith("mine-")
    assert second.startswith("mine-")

    reported = runner.invoke(app, ["report", "mine", "--store", store, "--json"])
    assert reported.exit_code == 0, reported.output
    assert json.loads(reported.stdout)["run"]["id"] == second
    said = " ".join(reported.stderr.split())
    assert f"using the latest, {second}" in said, said
    assert first in said, said

    chosen = runner.invoke(app, ["report", first, "--store", store, "--json"])  # an id chooses another run
    assert json.loads(chosen.stdout)["run"]["id"] == first
    assert "using the latest" not in chosen.stderr

    listed = runner.invoke(app, ["ls", "--store", store]).output
    rows = {line.split("|")[1].strip(): line for line in listed.splitlines() if line.startswith("| mine-")}
    assert set(rows) == {first, second}
    assert "#1 of 2" in rows[first]
    assert "(latest)" not in rows[first]
    assert "#2 of 2 (latest)" in rows[second]
    assert "| 3 | 3 | 0 |" in rows[second]  # samples, ok, errors


def test_an_ambiguous_prefix_names_the_runs_it_matches(tmp_path: Path) -> None:
    runner = CliRunner()
    with ScriptedServer() as server:
        path = _config(tmp_path, server)
        for seed in ("0", "1"):
            assert runner.invoke(app, ["run", str(path), "--no-cache", "--set", f"seed={seed}"]).exit_code == 0
    refused = runner.invoke(app, ["report", "mine-", "--store", str(tmp_path / "elsewhere.sqlite"), "--json"])
    assert refused.exit_code == 1
    assert "matches 2 runs" in " ".join(refused.stderr.split())


def test_a_failed_run_prints_its_one_cause_once_and_hints_that_keep_the_store_and_options(tmp_path: Path) -> None:
    runner = CliRunner()
    with ScriptedServer(faults="content-filter=1") as server:
        path = _config(tmp_path, server)
        failed = runner.invoke(app, ["run", str(path), "--no-cache", "--set", "seed=3", "--limit", "2"])
    assert failed.exit_code == 1
    said = failed.stderr
    lines = [line.strip() for line in said.splitlines()]
    grouped = [line for line in lines if line.startswith("2 × ")]
    assert len(grouped) == 1, said
    assert "ContentFilterError" in grouped[0], said
    assert "1 cause(s)" in said
    hint = " ".join(said.split())
    store = str(tmp_path / "elsewhere.sqlite")
    run_id = failed.stdout.split()[1]
    assert f"bedside report {run_id} --store {shlex.quote(store)}" in hint, hint
    rerun = hint.split("`")[3]
    assert shlex.split(rerun) == [
        "bedside", "run", str(path), "--set", "seed=3", "--limit", "2", "--no-cache", "--retry-errors"
    ]  # fmt: skip


def test_run_json_groups_the_errors_by_cause(tmp_path: Path) -> None:
    runner = CliRunner()
    with ScriptedServer(faults="content-filter=1") as server:
        path = _config(tmp_path, server)
        failed = runner.invoke(app, ["run", str(path), "--no-cache", "--json"])
    data = json.loads(failed.stdout)
    assert data["errors"] == 3
    assert list(data["error_causes"].values()) == [3]


def test_compare_adjusts_for_multiplicity_gives_effect_sizes_and_warns_on_small_n(tmp_path: Path) -> None:
    runner = CliRunner()
    with ScriptedServer() as server:
        path = _config(tmp_path, server, scorers=["words", "chrf"])
        for seed in ("0", "1"):
            assert runner.invoke(app, ["run", str(path), "--no-cache", "--set", f"seed={seed}"]).exit_code == 0
    store = str(tmp_path / "elsewhere.sqlite")
    listed = json.loads(runner.invoke(app, ["ls", "--store", store, "--json"]).stdout)
    first, second = (run["id"] for run in listed)
    compared = runner.invoke(app, ["compare", first, second, "--store", store, "--json"])
    rows = json.loads(compared.stdout)
    assert {r["metric"] for r in rows} == {"words", "chrf"}
    for row in rows:
        assert row["n"] == 3
        assert row["small_n"] is True
        assert row["p_value"] <= row["p_holm"] <= 1.0
        assert "effect_size" in row
    shown = runner.invoke(app, ["compare", first, second, "--store", store])
    assert shown.exit_code == 0, shown.output
    header = next(line for line in shown.stdout.splitlines() if "p (Holm)" in line)
    assert "d_z" in [cell.strip() for cell in header.split("|")], header
    said = " ".join(shown.stderr.split())
    assert "2 comparison(s) rest on fewer than 20 paired samples (n = 3)" in said, said
    assert "2 comparisons: read p (Holm)" in said


def test_the_leaderboard_ranks_the_latest_run_of_each_config_on_its_primary_metric(tmp_path: Path) -> None:
    runner = CliRunner()
    store = str(tmp_path / "elsewhere.sqlite")
    long_answer = {"rules": [], "default": "one two three four five six seven eight nine ten"}
    with ScriptedServer(long_answer) as wordy, ScriptedServer({"rules": [], "default": "one two"}) as terse:
        path = _config(tmp_path, wordy)
        assert runner.invoke(app, ["run", str(path), "--no-cache"]).exit_code == 0
        assert runner.invoke(app, ["run", str(path), "--no-cache", "--set", "seed=1"]).exit_code == 0  # re-run
        # Another model name: under the same name it would be the same model, its samples reused from the store.
        other = _config(tmp_path, terse, name="theirs", models={"system": [terse.model_name("terse")]})
        assert runner.invoke(app, ["run", str(other), "--no-cache"]).exit_code == 0
    boards = json.loads(runner.invoke(app, ["leaderboard", "--store", store, "--json"]).stdout)
    assert len(boards) == 1
    board = boards[0]
    assert (board["task"], board["dataset"], board["metric"]) == ("drafting", "demo", "words")
    entries = board["entries"]
    assert [e["mean"] for e in entries] == [10.0, 2.0]  # one entry per config: the re-run replaced its first run
    assert entries[0]["run"].startswith("mine-")
    every = json.loads(runner.invoke(app, ["leaderboard", "--store", store, "--json", "--all-runs"]).stdout)
    assert len(every[0]["entries"]) == 3
    lowest = json.loads(runner.invoke(app, ["leaderboard", "--store", store, "--json", "--ascending"]).stdout)
    assert [e["mean"] for e in lowest[0]["entries"]] == [2.0, 10.0]
    shown = runner.invoke(app, ["leaderboard", "--store", store])
    assert "drafting / demo: words (higher is better)" in shown.stdout
