"""The local executor on several worker processes (``--processes N``): the local executor's results sample by
sample, resume, each endpoint's cap split so the endpoint never sees more, and Ctrl-C keeping finished samples."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from bedside.runs import execute
from bedside.runs.processes import (
    WORK_BATCH_MAX,
    ProcessExecutorError,
    _ShareOfCaps,
    execute_processes,
    smallest_cap,
    work_batches,
)
from bedside.runs.shards import ShardResult, reported_outcomes
from bedside.runs.store import Store
from bedside.testing import ScriptedServer
from runs_ray_task import TIMED_OUT
from shard_support import by_sample, shard_config

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"


def test_each_cap_is_split_exactly_between_the_workers() -> None:
    for cap in (1, 2, 3, 7, 100):
        for count in (1, 2, 3, 4):
            shares = [_ShareOfCaps(i, count).share(cap) for i in range(count)]
            assert sum(shares) == cap
            assert max(shares) - min(shares) <= 1
    config = shard_config(Path("/tmp"), "x", "scripted/echo", samples=1, options={"max_concurrency": 3}, concurrency=8)
    assert smallest_cap(config) == 3


def test_the_run_counts_come_from_the_shards_unless_they_account_for_fewer_items() -> None:
    def shard(index: int, **cells: tuple[int, int]) -> ShardResult:
        return ShardResult(index=index, ran=0, truncated=0, skipped=0, cells=dict(cells), usage={}, pid=0)

    both = [shard(0, a=(6, 1), b=(4, 0)), shard(1, a=(5, 2), b=(5, 0))]
    assert reported_outcomes(both, 20) == (17, 3)  # every generated item counted once: ran 17, failed 3
    assert reported_outcomes(both[1:], 20) is None  # a worker lost with its counts: the store is asked
    assert reported_outcomes([], 0) == (0, 0)


def test_the_work_queue_holds_whole_samples_in_batches() -> None:
    from bedside.runs.runner import plan_run

    def batches(samples: int, workers: int) -> list[list[Any]]:
        config = shard_config(Path("/tmp"), "x", "scripted/echo", samples=samples, options={}, concurrency=4)
        store = Store(":memory:")
        try:
            return work_batches(plan_run(config, store).generate, workers)
        finally:
            store.close()

    small = batches(5, 2)
    assert [len(b) for b in small] == [2] * 5  # a sample a batch on a small run (two cells a sample)
    for batch in batches(1000, 2):  # a sample's two cells are always in one batch
        ids = [item.sample.id for item in batch]
        assert all(ids.count(i) == 2 for i in ids)
    assert [len(b) for b in batches(1000, 2)][:2] == [2 * 62, 2 * 62]  # about eight batches a worker
    assert max(len(b) for b in batches(100_000, 2)) == 2 * WORK_BATCH_MAX


def test_a_worker_held_up_by_a_slow_sample_leaves_the_rest_to_the_others(tmp_path: Path) -> None:
    """The first sample waits until 30 cells (of the 20 other samples' 40) have run. Dealt in turn, its worker
    would own half of the samples and the other could run only 20 cells, so the wait would run to its 300 s limit;
    from a shared queue, the other worker takes what the held one does not (it holds at most one more sample)."""
    marks = tmp_path / "marks"
    marks.mkdir()
    with ScriptedServer() as server:
        config = shard_config(tmp_path, "slow", server.model_name(), samples=21, options={}, concurrency=2)
        config.datasets["d"].options.update({"marks": str(marks), "hold_first_until": 30})  # a mark a cell
        shards: list[Any] = []
        done = asyncio.run(execute_processes(config, processes=2, cache=False, on_shards=shards.extend))
    assert (done.ran, done.errors) == (42, 0)  # two cells a sample
    assert max(s.ran for s in shards) >= 30  # one worker ran at least the 30 cells the slow one waited for
    assert not (marks / TIMED_OUT).exists()  # the wait ended because they ran, not at its limit (no clock read)


def test_processes_match_local_resume_and_hold_the_cap(tmp_path: Path) -> None:
    with ScriptedServer(latency_ms=10) as server:
        spec = server.model_name()
        (tmp_path / "local").mkdir()
        (tmp_path / "procs").mkdir()
        options = {"max_concurrency": 4}
        local = shard_config(tmp_path / "local", "same", spec, samples=30, options=options, concurrency=16)
        split = shard_config(tmp_path / "procs", "same", spec, samples=30, options=options, concurrency=16)
        assert local.run_id == split.run_id
        summary = asyncio.run(execute(local, cache=tmp_path / "local" / "cache.sqlite"))
        assert (summary.ran, summary.errors) == (60, 0)
        server.reset()
        # both workers' slots must be in flight together (2 + 2): reached however slow the machine, never passed
        server.hold(until_in_flight=4, at_most_s=120)
        shards: list[Any] = []
        done = asyncio.run(
            execute_processes(split, processes=2, cache=tmp_path / "procs" / "cache.sqlite", on_shards=shards.extend)
        )
        assert (done.ran, done.errors) == (60, 0)
        assert all(c.done == c.total == 30 for c in done.cells.values())
        assert server.stats()["requests"] == 60
        assert server.stats()["max_in_flight"] == 4
        assert done.usage.snapshot()["system"].requests == 60
        assert len(shards) == 2
        assert len({s.pid for s in shards} | {os.getpid()}) == 3  # two worker processes besides this one
        assert by_sample(Store(split.store).results(split.run_id)) == by_sample(
            Store(local.store).results(local.run_id)
        )
        again = asyncio.run(execute_processes(split, processes=2, cache=tmp_path / "procs" / "cache.sqlite"))
        assert again.ran == 0
        assert all(c.done == c.skipped == 30 for c in again.cells.values())
        assert server.stats()["requests"] == 60  # the resume sent nothing
        assert Store(split.store).run(split.run_id)["status"] == "finished"


def test_an_in_memory_store_is_refused(tmp_path: Path) -> None:
    config = shard_config(tmp_path, "mem", "scripted/echo", samples=2, options={}, concurrency=2)
    with pytest.raises(ProcessExecutorError, match="in-memory"):
        asyncio.run(execute_processes(config.model_copy(update={"store": ":memory:"}), processes=2, cache=False))


def test_ctrl_c_keeps_finished_samples_and_the_same_command_finishes(tmp_path: Path) -> None:
    with ScriptedServer(latency_ms=5) as server:
        config = {
            "name": "interrupted",
            "task": "runs_ray_task:TASK",
            "datasets": {"d": {"options": {"samples": 40}}},
            "systems": {"plain": {"type": "echo"}},
            "models": {"system": [server.model_name()]},
            "concurrency": 4,
            "store": str(tmp_path / "store.sqlite"),
        }
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{TESTS}"}
        command = [sys.executable, "-m", "bedside.cli", "run", str(path), "--processes", "2", "--no-cache"]
        server.hold(after=10)  # ten samples finish, then the run waits at the server until interrupted
        log = tmp_path / "run.log"
        with log.open("w") as sink:
            run = subprocess.Popen(command, stdout=sink, stderr=sink, env=env, start_new_session=True)
            try:
                server.wait_until(lambda s: s["held"] >= 1)
                store = Store(str(tmp_path / "store.sqlite"))
                deadline = time.monotonic() + 300  # a hang guard: the ten are stored by the workers
                while len(store.results(store.runs()[0]["id"])) < 10:
                    assert time.monotonic() < deadline, log.read_text()
                    time.sleep(0.05)
                os.killpg(run.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
                # the held requests stay held until the run has stopped: released at once, the workers could run
                # the remaining samples before the driver stopped them, however briefly it was kept from running
                assert run.wait(timeout=300) == 130, log.read_text()
            finally:
                server.release()
                if run.poll() is None:
                    run.kill()
        run_id = store.runs()[0]["id"]
        kept = store.results(run_id)
        assert 10 <= len(kept) < 40
        assert store.run(run_id)["status"] == "interrupted"
        requests_before = server.stats()["requests"]
        finished = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
        assert finished.returncode == 0, finished.stdout + finished.stderr
        rows = store.results(run_id)
        assert len(rows) == 40
        assert all(r.status == "ok" for r in rows)
        assert store.run(run_id)["status"] == "finished"
        # the resume asked only for what was not stored
        assert server.stats()["requests"] - requests_before <= 40 - len(kept) + 4
        store.close()


def test_a_worker_that_dies_fails_the_run_with_its_exit_code_and_a_rerun_finishes(tmp_path: Path) -> None:
    import multiprocessing
    import threading

    with ScriptedServer(latency_ms=5) as server:
        config = shard_config(tmp_path, "killed", server.model_name(), samples=20, options={}, concurrency=4)
        server.hold(after=6)
        outcome: dict[str, BaseException] = {}

        def drive() -> None:
            try:
                asyncio.run(execute_processes(config, processes=2, cache=False))
            except BaseException as exc:  # surfaced below
                outcome["error"] = exc

        thread = threading.Thread(target=drive)
        thread.start()
        # Each worker keeps 2 in flight (concurrency 4 over 2): with 3 held, each has one, so the worker killed
        # takes unfinished samples with it (from the shared queue the other could otherwise finish them all).
        server.wait_until(lambda s: s["held"] >= 3)
        workers = [p for p in multiprocessing.active_children() if p.name.startswith("bedside-worker-")]
        assert len(workers) == 2
        assert workers[0].pid is not None
        os.kill(workers[0].pid, signal.SIGKILL)
        server.release()
        thread.join(timeout=300)
        assert not thread.is_alive()
        assert isinstance(outcome.get("error"), ProcessExecutorError)
        assert "exited with code -9" in str(outcome["error"])
        store = Store(config.store)
        assert store.run(config.run_id)["status"] == "failed"
        assert len(store.results(config.run_id)) < 40
        finished = asyncio.run(execute_processes(config, processes=2, cache=False))
        assert finished.errors == 0
        assert len(store.results(config.run_id)) == 40
        store.close()
