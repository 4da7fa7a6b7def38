"""``--processes auto`` (issue 47): the first samples run in the driver and measure whether more processes pay;
the choice follows from the measurement by a rule tested here on its own, and whichever it is, every sample is
stored once with the local executor's result."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import bedside.runs.processes as processes
from bedside.cli import app
from bedside.runs import execute
from bedside.runs.processes import (
    MIN_PER_PROCESS,
    PROBE_MAX,
    PROBE_MIN,
    AutoChoice,
    choose_processes,
    execute_processes,
    parse_processes,
    split_probe,
)
from bedside.runs.runner import plan_run
from bedside.runs.store import Store
from bedside.testing import ScriptedServer
from shard_support import by_sample, shard_config


def test_more_processes_only_where_one_loop_is_the_limit() -> None:
    enough = 10 * MIN_PER_PROCESS
    assert choose_processes(0.3, 0.2, cores=16, cap=100, remaining=enough)[0] == 1  # the loop has time to spare
    assert choose_processes(0.99, 0.95, cores=16, cap=100, remaining=enough)[0] == 1  # the endpoints are full
    few, why = choose_processes(0.99, 0.1, cores=16, cap=100, remaining=MIN_PER_PROCESS)
    assert few == 1
    assert "too few" in why
    # a saturated loop at 30 % endpoint use: three processes bring it near 90 %
    assert choose_processes(0.95, 0.3, cores=16, cap=100, remaining=enough) == (
        3,
        "one process's loop is the limit; 3 to bring the busiest endpoint near 90%",
    )
    two, why = choose_processes(0.95, 0.1, cores=2, cap=100, remaining=enough)
    assert (two, why) == (2, "one process's loop is the limit; 2, as many as the cores allow")
    assert choose_processes(0.95, 0.1, cores=16, cap=3, remaining=enough)[0] == 3  # the smallest cap
    assert choose_processes(0.95, 0.01, cores=64, cap=100, remaining=enough)[0] == 10  # a worker per 200 samples
    assert choose_processes(0.95, 0.0, cores=1, cap=100, remaining=enough)[0] == 1


def test_the_cores_hold_as_many_processes_as_the_measured_work_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other work on the machine (a local model server) grows with the run's rate, so it counts per process."""
    monkeypatch.setattr(processes, "usable_cores", lambda: 16)
    assert processes.cores_hold(0.95, 0.0) == 16  # a remote endpoint: every core
    assert processes.cores_hold(0.95, 0.6) == 10
    monkeypatch.setattr(processes, "usable_cores", lambda: 2)
    assert processes.cores_hold(0.97, 0.4) == 1  # this machine's bench: the scripted servers beside it
    assert processes.cores_hold(0.9, 0.0) == 2
    assert processes.cores_hold(3.0, 0.0) == 1  # never fewer than one


def test_the_probe_is_a_twentieth_of_the_samples_within_its_bounds() -> None:
    def sizes(samples: int) -> tuple[int, int]:
        config = shard_config(Path("/tmp"), "x", "scripted/echo", samples=samples, options={}, concurrency=4)
        store = Store(":memory:")
        try:
            items = plan_run(config, store).generate
        finally:
            store.close()
        probe, rest = split_probe(items)
        assert len(probe) + len(rest) == len(items)
        assert {i.sample.id for i in probe}.isdisjoint({i.sample.id for i in rest})  # whole samples
        return len(probe) // 2, len(rest) // 2  # two cells a sample

    assert sizes(300) == (300, 0)  # too few to measure and then split: all in the driver
    assert sizes(PROBE_MIN + 2 * MIN_PER_PROCESS + 1) == (PROBE_MIN, 2 * MIN_PER_PROCESS + 1)
    assert sizes(10_000) == (500, 9_500)
    assert sizes(30_000)[0] == PROBE_MAX


def test_a_bad_count_is_refused_with_what_is_accepted() -> None:
    assert parse_processes("auto") == "auto"
    assert parse_processes("3") == 3
    for bad, said in (("0", "at least 1"), ("many", "'auto'"), ("-2", "at least 1")):
        with pytest.raises(ValueError, match=said):
            parse_processes(bad)


def _run_auto(tmp_path: Path, spec: str, samples: int, choices: list[AutoChoice], shards: list[Any]) -> Any:
    config = shard_config(tmp_path, "auto", spec, samples=samples, options={"max_concurrency": 8}, concurrency=16)
    return config, asyncio.run(
        execute_processes(config, processes="auto", cache=False, on_choice=choices.append, on_shards=shards.extend)
    )


@pytest.mark.parametrize("forced", [None, 2])
def test_auto_stores_every_sample_once_as_the_local_executor_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forced: int | None
) -> None:
    """Whatever this machine's measurement chooses (``None``), and with two workers forced after the probe."""
    samples = PROBE_MIN + 2 * MIN_PER_PROCESS + 20
    if forced is not None:
        monkeypatch.setattr(processes, "choose_processes", lambda *a, **k: (forced, "forced by the test"))
    with ScriptedServer() as server:
        spec = server.model_name()
        (tmp_path / "local").mkdir()
        (tmp_path / "auto").mkdir()
        local = shard_config(tmp_path / "local", "auto", spec, samples=samples, options={}, concurrency=16)
        asyncio.run(execute(local, cache=False))
        server.reset()
        choices: list[AutoChoice] = []
        shards: list[Any] = []
        config, done = _run_auto(tmp_path / "auto", spec, samples, choices, shards)
        assert server.stats()["requests"] == 2 * samples  # every sample once, the probe's included
    assert (done.ran, done.errors) == (2 * samples, 0)
    (choice,) = choices
    assert choice.probed == 2 * PROBE_MIN  # items: two cells a sample
    assert 0.0 <= choice.endpoint_use <= 1.0
    assert choice.cpu_ms_per_sample > 0
    if forced is not None:
        assert choice.processes == forced
        assert len({s.pid for s in shards}) == 3  # the probe in the driver, then two workers
    else:
        assert 1 <= choice.processes <= (os.cpu_count() or 1)
    assert by_sample(Store(config.store).results(config.run_id)) == by_sample(Store(local.store).results(local.run_id))


def test_a_small_run_under_auto_runs_in_this_process_and_says_why(tmp_path: Path) -> None:
    choices: list[AutoChoice] = []
    shards: list[Any] = []
    with ScriptedServer() as server:
        _, done = _run_auto(tmp_path, server.model_name(), 12, choices, shards)
    assert done.ran == 24
    assert [c.processes for c in choices] == [1]
    assert "too few to measure" in str(choices[0])
    assert {s.pid for s in shards} == {os.getpid()}


def test_the_cli_prints_the_choice_and_refuses_a_bad_count(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        path = tmp_path / "run.yaml"
        path.write_text(
            "name: auto\ntask: runs_ray_task:TASK\ndatasets: {d: {options: {samples: 5}}}\n"
            f"systems: {{plain: {{type: echo}}}}\nmodels: {{system: {server.model_name()}}}\n"
            f"store: {tmp_path / 'store.sqlite'}\n"
        )
        result = CliRunner().invoke(app, ["run", str(path), "--processes", "auto", "--no-cache"])
        assert result.exit_code == 0, result.output
        assert "--processes auto: 1 process (5 samples: too few to measure, run in this process)" in " ".join(
            result.output.split()
        )
    bad = CliRunner().invoke(app, ["run", str(path), "--processes", "lots"])
    assert bad.exit_code != 0
    assert "--processes must be a number of processes or 'auto', not 'lots'" in " ".join(bad.output.split())
    none = CliRunner().invoke(app, ["run", str(path), "--processes", "0"])
    assert none.exit_code != 0
    assert "--processes must be at least 1" in " ".join(none.output.split())
    ray = CliRunner().invoke(app, ["run", str(path), "--processes", "auto", "--executor", "ray"])
    assert ray.exit_code != 0
    assert "--processes is for the local executor" in ray.output
