"""The Ray executor on a local 2-worker cluster on 127.0.0.1: identical results to the local executor, resume,
a worker killed mid-run, and endpoint caps that hold across workers (the scripted servers count what they saw)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bedside.runs import execute
from bedside.runs.store import Store
from bedside.testing import ScriptedServer
from shard_support import by_sample, shard_config

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray

from bedside.runs.ray_executor import RayExecutorError, execute_ray, init_local_ray, worker_name  # noqa: E402

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """Ray on 127.0.0.1 only: node IP pinned, no dashboard, two CPUs (two workers)."""
    init_local_ray(
        num_cpus=2, namespace="bedside-tests", runtime_env={"env_vars": {"PYTHONPATH": f"{SRC}{os.pathsep}{TESTS}"}}
    )
    try:
        nodes = ray.nodes()
        assert {n["NodeManagerAddress"] for n in nodes} == {"127.0.0.1"}
        yield
    finally:
        ray.shutdown()


def test_ray_matches_local_resumes_and_caps_hold_across_workers(local_ray: None, tmp_path: Path) -> None:
    with ScriptedServer(latency_ms=20) as a, ScriptedServer(latency_ms=20) as b:
        spec = f"openai-compatible/scripted@{a.base_url},{b.base_url}"
        options = {"max_concurrency": 6, "replica_max_concurrency": 3}
        (tmp_path / "local").mkdir()
        (tmp_path / "ray").mkdir()
        local = shard_config(tmp_path / "local", "same", spec, samples=40, options=options, concurrency=16)
        on_ray = shard_config(tmp_path / "ray", "same", spec, samples=40, options=options, concurrency=16)
        assert local.run_id == on_ray.run_id

        summary = asyncio.run(execute(local, cache=tmp_path / "local" / "cache.sqlite"))
        assert (summary.ran, summary.errors) == (80, 0)
        a.reset()
        b.reset()
        ray_summary = asyncio.run(execute_ray(on_ray, cache=tmp_path / "ray" / "cache.sqlite", workers=2))
        assert (ray_summary.ran, ray_summary.errors) == (80, 0)
        assert all(c.done == c.total == 40 for c in ray_summary.cells.values())
        stats_a, stats_b = a.stats(), b.stats()
        # every sample sent once, both replicas used, and each replica's cap held across the two workers
        assert stats_a["requests"] + stats_b["requests"] == 80
        assert min(stats_a["requests"], stats_b["requests"]) > 0
        assert stats_a["max_in_flight"] <= 3
        assert stats_b["max_in_flight"] <= 3
        assert ray_summary.usage.snapshot()["system"].requests == 80

        local_rows = by_sample(Store(local.store).results(local.run_id))
        ray_rows = by_sample(Store(on_ray.store).results(on_ray.run_id))
        assert len(ray_rows) == 80
        assert ray_rows == local_rows

        again = asyncio.run(execute_ray(on_ray, cache=tmp_path / "ray" / "cache.sqlite", workers=2))
        assert again.ran == 0
        assert all(c.done == c.skipped == 40 for c in again.cells.values())
        assert a.stats()["requests"] + b.stats()["requests"] == 80  # resume sent nothing


def test_one_endpoint_cap_holds_across_workers(local_ray: None, tmp_path: Path) -> None:
    with ScriptedServer(latency_ms=30) as server:
        server.hold(until_in_flight=4, at_most_s=120)  # four must be in flight together, from either worker
        config = shard_config(
            tmp_path, "cap", server.model_name(), samples=30, options={"max_concurrency": 4}, concurrency=20
        )
        summary = asyncio.run(execute_ray(config, cache=False, workers=2))
        assert (summary.ran, summary.errors) == (60, 0)
        assert server.stats()["requests"] == 60
        assert server.stats()["max_in_flight"] == 4  # 10 samples in flight per worker, 4 requests at most in all


def test_leased_slots_reach_the_cap_together_and_never_pass_it(local_ray: None, tmp_path: Path) -> None:
    """Each worker runs at most 4 samples at once (concurrency 8 over 2 workers), so the cap of 6 is reached only
    when both workers hold leases and use them together: the server holds every request until 6 are in flight,
    and its counter shows they were and never more."""
    from bedside.runs.shards import ShardResult

    with ScriptedServer(latency_ms=10) as server:
        server.hold(until_in_flight=6, at_most_s=120)
        config = shard_config(
            tmp_path, "leases", server.model_name(), samples=40, options={"max_concurrency": 6}, concurrency=8
        )
        shards: list[ShardResult] = []
        summary = asyncio.run(execute_ray(config, cache=False, workers=2, on_shards=shards.extend))
        assert (summary.ran, summary.errors) == (80, 0)
        assert server.stats()["requests"] == 80
        assert server.stats()["max_in_flight"] == 6
    assert sum(s.lease["requests"] for s in shards) == 80  # every request started on a leased slot
    (endpoint,) = max(shards, key=lambda s: s.finished).limits.values()
    assert endpoint["max_in_flight"] <= 6  # never more leased than the cap


def test_a_worker_killed_mid_run_still_finishes_exactly(local_ray: None, tmp_path: Path) -> None:
    samples = 150
    with ScriptedServer(latency_ms=40) as server:
        config = shard_config(
            tmp_path,
            "kill",
            server.model_name(),
            samples=samples,
            # also the killed worker's lease grace (its slots stay taken that long: the run goes on in the other
            # worker's); long enough that no request held until the kill times out on a busy machine (one that did
            # would be sent again while the server still counted the abandoned one in flight)
            options={"max_concurrency": 6, "timeout_s": 60.0},
            concurrency=12,
        )
        # The run cannot finish before the kill: after 80 requests the server holds the rest until released.
        server.hold(after=80)
        store = Store(config.store)
        outcome: dict[str, Any] = {}

        def drive() -> None:
            try:
                outcome["summary"] = asyncio.run(execute_ray(config, cache=tmp_path / "cache.sqlite", workers=2))
            except BaseException as exc:  # surfaced below
                outcome["error"] = exc

        thread = threading.Thread(target=drive)
        thread.start()
        server.wait_until(lambda s: s["held"] >= 1)
        deadline = time.monotonic() + 300  # a hang guard: Ray's workers start slowly on a busy machine
        while len(store.results(config.run_id)) < 40 and time.monotonic() < deadline:
            time.sleep(0.05)
        stored_at_kill = len(store.results(config.run_id))
        assert 0 < stored_at_kill < 2 * samples
        worker = ray.get_actor(f"{worker_name(config.run_id, 0)}-0")
        pid = ray.get(worker.pid.remote())
        os.kill(pid, signal.SIGKILL)
        server.release()
        thread.join(timeout=120)
        assert not thread.is_alive()
        assert "error" not in outcome, outcome.get("error")
        summary = outcome["summary"]
        rows = store.results(config.run_id)
        assert len(rows) == 2 * samples
        assert summary.errors == 0
        assert (summary.ran, summary.failed) == (2 * samples, 0)  # the lost worker's counts from the store
        assert all(c.done == samples for c in summary.cells.values())
        for row in rows:  # exact: each sample's own answer
            prefix = "> " if row.system == "prefixed" else ""
            assert row.output is not None
            assert row.output["text"] == f"{prefix}request {int(row.sample_id[1:])} of d"
        # finished samples were not sent again: at most those in flight or not yet stored at the kill
        assert server.stats()["requests"] <= 2 * samples + 6 + 12
        assert server.stats()["max_in_flight"] <= 6


def test_sqlite_in_memory_is_refused(local_ray: None, tmp_path: Path) -> None:
    config = shard_config(tmp_path, "mem", "scripted/echo", samples=2, options={}, concurrency=2)
    config = config.model_copy(update={"store": ":memory:"})
    with pytest.raises(RayExecutorError, match="in-memory"):
        asyncio.run(execute_ray(config, cache=False, workers=2))


POSTGRES_URL = os.environ.get("BEDSIDE_TEST_POSTGRES_URL")


def test_cli_runs_on_ray_with_the_store_and_cache_on_postgres(local_ray: None, tmp_path: Path) -> None:
    """`bedside run --executor ray`: on PostgreSQL (store and cache) when the test server is there, as a
    multi-node run would be; on SQLite files (this one-machine cluster) otherwise."""
    from typer.testing import CliRunner

    from bedside.cli import app
    from bedside.llm.cache_postgres import PostgresResponseCache

    suffix = uuid.uuid4().hex[:10]
    if POSTGRES_URL:
        store = POSTGRES_URL
        cache = f"{POSTGRES_URL}{'&' if '?' in POSTGRES_URL else '?'}table=bedside_test_cache_{suffix}"
    else:
        store, cache = str(tmp_path / "store.sqlite"), str(tmp_path / "cache.sqlite")
    with ScriptedServer(latency_ms=10) as server:
        config = tmp_path / "run.yaml"
        config.write_text(
            f"name: cli-ray-{suffix}\ntask: runs_ray_task:TASK\ndatasets:\n  d:\n    options: {{samples: 12}}\n"
            f"systems:\n  plain: {{type: echo}}\nmodels:\n  system: {server.model_name(f'scripted-{suffix}')}\n"
            f"model_options:\n  system: {{max_concurrency: 3}}\nconcurrency: 8\nstore: {store}\n"
        )
        try:
            args = ["run", str(config), "--executor", "ray", "--workers", "2", "--cache", cache, "--json"]
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0, result.output
            data = json.loads(result.stdout)
            assert (data["ran"], data["errors"]) == (12, 0), result.output  # a model of its own: nothing reused
            assert server.stats()["requests"] == 12
            assert server.stats()["max_in_flight"] <= 3
            again = CliRunner().invoke(app, args)
            assert again.exit_code == 0, again.output
            assert json.loads(again.stdout)["ran"] == 0
            assert server.stats()["requests"] == 12
        finally:
            if POSTGRES_URL:
                PostgresResponseCache(cache).drop()


def test_a_429_backs_off_every_worker_through_one_limiter(local_ray: None, tmp_path: Path) -> None:
    """The limiter is the cluster's: a 429 one worker sees halves the limit all workers draw from, and the actor
    counts every worker's requests."""
    from bedside.runs.shards import ShardResult

    with ScriptedServer(latency_ms=20, faults="first=429+429,retry-after=0") as server:
        options = {"max_concurrency": 8}
        config = shard_config(tmp_path, "backoff", server.model_name(), samples=30, options=options, concurrency=16)
        shards: list[ShardResult] = []
        summary = asyncio.run(execute_ray(config, cache=False, workers=2, on_shards=shards.extend))
        assert (summary.ran, summary.errors) == (60, 0)
        assert server.stats()["requests"] == 62  # the two 429s were retried
        assert server.stats()["max_in_flight"] <= 8
    assert len(shards) == 2
    last = max(shards, key=lambda s: s.finished).limits
    (endpoint,) = last.values()
    assert endpoint["rate_limited"] >= 1
    assert endpoint["lowest_limit"] <= 4  # halved (once per second at most: the burst of two counts once)
    # both workers' requests, retries included, took their slots from one limiter: granted there, or re-used by
    # the worker that held the slot while nobody else waited (a lease, not a new grant)
    assert 0 < endpoint["requests"] <= 62
    assert endpoint["max_in_flight"] <= 8


def test_sqlite_is_refused_for_a_remote_cluster_before_connecting(tmp_path: Path) -> None:
    config = shard_config(tmp_path, "remote", "scripted/echo", samples=2, options={}, concurrency=2)
    with pytest.raises(RayExecutorError, match="cannot share"):
        # refused before any connection is tried (the address is never contacted)
        asyncio.run(execute_ray(config, cache=False, address="ray://10.255.255.1:10001", workers=2))
    assert not (tmp_path / "store.sqlite").exists()


def test_runtime_env_ships_packages_the_working_dir_and_the_task_allowlist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import typer

    from bedside.cli.runs import runtime_env_for

    package = tmp_path / "mytask"
    package.mkdir()
    monkeypatch.setenv("BEDSIDE_TASKS", "mytask:TASK")
    env = runtime_env_for([package], tmp_path)
    assert env == {
        "py_modules": [str(package.resolve())],
        "working_dir": str(tmp_path.resolve()),
        "env_vars": {"BEDSIDE_TASKS": "mytask:TASK"},
    }
    monkeypatch.delenv("BEDSIDE_TASKS")
    assert runtime_env_for([], None) is None
    with pytest.raises(typer.Exit):  # `fail` prints the message and exits 1
        runtime_env_for([tmp_path / "missing"], None)


def test_a_ray_started_here_is_not_given_the_variables_its_processes_inherit() -> None:
    """Issue 47: a runtime_env keeps a run's workers off Ray's idle processes (a second's start-up on each), so a
    Ray started on this machine gets none for variables it inherits anyway; a remote cluster keeps them all."""
    from bedside.runs.ray_executor import without_inherited

    here = {"BEDSIDE_TASKS": "mytask:TASK", "TZ": "UTC"}
    assert without_inherited({"env_vars": {"BEDSIDE_TASKS": "mytask:TASK"}}, here) is None
    assert without_inherited({"env_vars": {"BEDSIDE_TASKS": "other:TASK"}}, here) == {
        "env_vars": {"BEDSIDE_TASKS": "other:TASK"}
    }
    shipped = {"py_modules": ["/pkg"], "env_vars": {"TZ": "UTC", "LANG": "C"}}
    assert without_inherited(shipped, here) == {"py_modules": ["/pkg"], "env_vars": {"LANG": "C"}}
    assert shipped["env_vars"] == {"TZ": "UTC", "LANG": "C"}  # the caller's mapping is left as it was
    assert without_inherited(None, here) is None


def test_the_run_config_names_what_ships_to_the_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 47: ``runtime_env`` in the config (folders and variables; never packages fetched at run time), the
    CLI's flags added to it."""
    import typer
    import yaml

    from bedside.cli.runs import runtime_env_for
    from bedside.runs import ConfigError, load_config

    monkeypatch.delenv("BEDSIDE_TASKS", raising=False)
    package, extra = tmp_path / "mytask", tmp_path / "helpers"
    package.mkdir()
    extra.mkdir()
    base = {"name": "r", "task": "drafting", "datasets": {"demo": {}}, "systems": {"z": {"type": "zero_shot"}},
            "models": {"system": "embedded/smollm2-135m"}}  # fmt: skip
    path = tmp_path / "run.yaml"
    path.write_text(
        yaml.safe_dump({**base, "runtime_env": {"py_modules": [str(package)], "env_vars": {"TZ": "UTC"}}}),
        encoding="utf-8",
    )
    loaded = load_config(path)
    assert runtime_env_for([extra], tmp_path, loaded.runtime_env) == {
        "py_modules": [str(package.resolve()), str(extra.resolve())],
        "working_dir": str(tmp_path.resolve()),
        "env_vars": {"TZ": "UTC"},
    }
    plain = tmp_path / "plain.yaml"
    plain.write_text(yaml.safe_dump(base), encoding="utf-8")
    assert load_config(plain).run_id == loaded.run_id  # where the workers get their code is not the run
    path.write_text(yaml.safe_dump({**base, "runtime_env": {"pip": ["requests"]}}), encoding="utf-8")
    with pytest.raises(ConfigError, match="runtime_env: unknown key 'pip'"):
        load_config(path)
    path.write_text(yaml.safe_dump({**base, "runtime_env": {"py_modules": [str(tmp_path / "nope")]}}))
    with pytest.raises(typer.Exit):
        runtime_env_for([], None, load_config(path).runtime_env)
