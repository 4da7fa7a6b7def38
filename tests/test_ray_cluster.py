"""The Ray executor on a 2-node local cluster: a node lost mid-run, the limits actor lost mid-run, and too few CPUs
for ``--workers``.

The cluster is two ``ray start`` processes on 127.0.0.1 (one CPU each) and each run's driver is a third process
(:mod:`bedside.testing.ray_cluster`): the pytest process holds no Ray connection, so no Ray failure (a lost node,
a raylet gone, a teardown gone wrong) can end it, and nothing here depends on a ``ray.init`` an earlier module made
in this process. Teardown stops every node's process group, with a hang guard.

Faults are placed with the scripted server's gate, not with timing: requests are held until both workers have
samples in flight, the fault is made while they are held, then the gate opens. The store is PostgreSQL when
``BEDSIDE_TEST_POSTGRES_URL`` is set (as on a real cluster), else a SQLite file (allowed: both nodes are this
machine). Each test checks the stored rows: every sample exactly once, with its own answer, no errors."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bedside.runs import DatasetConfig, RunConfig
from bedside.runs.store import Store
from bedside.testing import ScriptedServer

pytest.importorskip("ray")
pytestmark = pytest.mark.ray

from bedside.testing.ray_cluster import LocalRayCluster, RayNode, loopback_env  # noqa: E402

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"
POSTGRES_URL = os.environ.get("BEDSIDE_TEST_POSTGRES_URL")


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalRayCluster]:
    """A head node and a second node, one CPU each, on 127.0.0.1 only; stopped after the module."""
    env = loopback_env()
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(TESTS), env.get("PYTHONPATH", "")])
    with LocalRayCluster(env) as made:
        made.start(num_cpus=1)
        yield made


def _second_node(cluster: LocalRayCluster) -> RayNode:
    """The cluster's live node besides the head, started on first use (and again after a test lost it; the
    node-loss test comes last so that the module starts it once)."""
    others = [node for node in cluster.live_nodes() if not node.head]
    return others[0] if others else cluster.add_node(num_cpus=1, resources={"second-node": 1})


def _config(tmp: Path, server: ScriptedServer, samples: int, timeout_s: float) -> RunConfig:
    store = POSTGRES_URL or str(tmp / "store.sqlite")
    return RunConfig(
        name=f"cluster-{uuid.uuid4().hex[:8]}",
        task="runs_ray_task:TASK",
        datasets={"d": DatasetConfig(options={"samples": samples})},
        systems={"plain": {"type": "echo"}, "prefixed": {"type": "echo", "options": {"prefix": "> "}}},  # type: ignore[dict-item]
        # a model name of its own: on a PostgreSQL store that outlives the test, a run of the same name from
        # an earlier session would otherwise be reused sample by sample (keys name the model, not its URL)
        models={"system": [server.model_name(f"scripted-{uuid.uuid4().hex[:8]}")]},
        model_options={"system": {"max_concurrency": 8, "timeout_s": timeout_s}},
        concurrency=8,
        store=store,
    )


def _check_rows_exact(config: RunConfig, run_id: str, samples: int) -> None:
    """Every (cell, sample) stored once, ok, with its own answer."""
    assert run_id == config.run_id
    store = Store(config.store)
    try:
        rows = store.results(run_id)
    finally:
        store.close()
    keys = [(r.cell, r.sample_id, r.epoch) for r in rows]
    assert len(keys) == len(set(keys)) == 2 * samples
    for row in rows:
        assert row.status == "ok", row.error
        prefix = "> " if "/prefixed/" in row.cell else ""
        assert row.output is not None
        assert row.output["text"] == f"{prefix}request {int(row.sample_id[1:])} of d"


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in result, result["error"]
    summary: dict[str, Any] = result["summary"]
    return summary


def test_a_node_whose_process_exits_before_it_started_is_started_again_with_fresh_ports(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A port found free and released may be taken before Ray binds it (Ray's GCS then exits: checked by hand);
    the launcher starts the node again with ports asked anew, and says so after its last attempt. No Ray here:
    each attempt is a process that exits at once or stays."""
    import subprocess
    import sys

    from bedside.testing import ray_cluster

    outcomes = iter([False, False, True, False, False, False])
    asked: list[list[str]] = []

    def launch_once(self: LocalRayCluster, args: list[str], **kw: Any) -> RayNode:
        asked.append(args)
        stays = next(outcomes)
        process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)" if stays else "pass"])
        if not stays:
            process.wait(timeout=60)
        log = tmp_path / f"node{len(asked)}.log"
        log.write_text(f"attempt {len(asked)}")
        node = RayNode(process, log, kw["head"], kw["num_cpus"], dict(kw["resources"]))
        self.nodes.append(node)
        return node

    monkeypatch.setattr(LocalRayCluster, "_launch_once", launch_once)
    ports = iter(range(50001, 50100))
    monkeypatch.setattr(ray_cluster, "_free_port", lambda: next(ports))
    cluster = LocalRayCluster(loopback_env())
    try:
        head = cluster.start(num_cpus=1)
        assert head.alive
        assert cluster.nodes == [head]
        assert [args[1] for args in asked] == ["--port=50001", "--port=50003", "--port=50005"]
        assert cluster.address == "127.0.0.1:50005"
        with pytest.raises(RuntimeError, match=r"did not start \(3 attempts\):\nattempt 6"):
            cluster.add_node(num_cpus=1)
        assert cluster.nodes == [head]
    finally:
        head.process.kill()
        head.process.wait(timeout=60)
        cluster.nodes.clear()
        cluster.stop()


def test_more_workers_than_free_cpus_is_a_clear_error(cluster: LocalRayCluster, tmp_path: Path) -> None:
    _second_node(cluster)
    with ScriptedServer() as server:
        config = _config(tmp_path, server, 4, timeout_s=5.0)
        with cluster.drive(config, workers=3, log=tmp_path / "driver.log") as driver:
            result = driver.finish()
        assert result["error"]["type"] == "RayExecutorError"
        assert "--workers 3 needs 3 free CPU(s)" in result["error"]["message"]
        assert "2 free of 2" in result["error"]["message"]
        assert server.stats()["requests"] == 0


def test_the_limits_actor_lost_mid_run_is_restarted_and_the_cap_holds(cluster: LocalRayCluster, tmp_path: Path) -> None:
    _second_node(cluster)
    samples = 30
    with ScriptedServer(latency_ms=5) as server:
        # timeout_s is also how long the restarted limiter counts its lost life's grants as running
        config = _config(tmp_path, server, samples, timeout_s=15.0)
        server.hold()
        with cluster.drive(config, workers=2, log=tmp_path / "driver.log") as driver:
            driver.wait_for(server, lambda s: s["held"] >= 8)  # the cap is taken
            killed = driver.command("kill-limiter")  # SIGKILL, answered once Ray restarted it
            assert killed["restarted"] != killed["killed"]
            server.release()
            result = driver.finish()
        summary = _summary(result)
        assert summary["errors"] == 0
        assert summary["ran"] == 2 * samples
        # waiting callers waited: nothing failed; at most the 8 held requests were sent again (had the machine
        # been slow enough for them to time out while held)
        stats = server.stats()
        resent = stats["requests"] - 2 * samples
        assert 0 <= resent <= 8
        # the restarted limiter did not hand out the held slots again. A held request that timed out was sent
        # again on its own slot while the server still held the abandoned one (it counts a request in flight
        # until it answers): each such request may add one, never more
        assert stats["max_in_flight"] <= 8 + resent
    _check_rows_exact(config, result["run_id"], samples)


def test_a_node_lost_mid_run_requeues_its_samples(cluster: LocalRayCluster, tmp_path: Path) -> None:
    second = _second_node(cluster)
    samples = 40
    with ScriptedServer(latency_ms=5) as server:
        config = _config(tmp_path, server, samples, timeout_s=30.0)
        server.hold()
        with cluster.drive(config, workers=2, log=tmp_path / "driver.log") as driver:
            # each worker keeps 4 samples in flight: 8 held means both workers, one per node, hold samples
            driver.wait_for(server, lambda s: s["held"] >= 8)
            cluster.kill_node(second)  # SIGKILL to every process of the node at once
            server.release()
            result = driver.finish()
        summary = _summary(result)
        assert summary["errors"] == 0
        assert summary["ran"] == 2 * samples
        assert 4 <= summary["retried"] < 2 * samples  # at least its 4 held samples went back to the queue
        # the lost worker's samples were sent again (at most what it held), nothing else twice
        assert server.stats()["requests"] <= 2 * samples + summary["retried"]
        assert server.stats()["max_in_flight"] <= 8
    _check_rows_exact(config, result["run_id"], samples)
