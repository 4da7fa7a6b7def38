"""Local executor vs Ray: N single-call samples against two scripted servers (one model, two base URLs).

Each server answers after ``--latency-ms`` and each replica is capped at ``--cap`` requests in flight, so the
latency-bound ideal is ``N x latency / (2 x cap)``. Both executors run the same config (fresh store and cache
each): the local one in this process, the Ray one with ``--workers`` workers on a Ray started here on 127.0.0.1
(endpoint caps enforced cluster-wide by the limiter actors). Printed per case: wall, wall / ideal, CPU ms per
sample (the driver plus every worker), peak RSS per process, and the servers' most requests in flight.

A second case scores every output with MiniLM (``--scored`` samples, the ``minilm`` scorer: two embeddings per
sample), where the local executor's one process is CPU-bound and Ray's second process should pay off.

Endpoint utilisation is the servers' own integral of requests in flight over their busy time, divided by the
cap (``in_flight_s / busy_s / cap``, from ``/_scripted/stats``): 100 % means every slot the cap allows was
used for the whole run. Printed per executor, and Ray's over the local executor's as a ratio.

``--faults`` instead builds a 2-node local cluster (``ray.cluster_utils.Cluster``: a head node and a second
node, each its own raylet and processes with one CPU, both on 127.0.0.1) and runs the same config three times
against an in-process scripted server, making one fault in each once a third of the requests were answered:
a worker process SIGKILLed, the second node removed (its raylet and every process on it killed), the limits
actor SIGKILLed. One line per fault: samples lost (expected minus stored ok rows), duplicated (rows beyond one
per sample), whether the run raised (exit), samples requeued, requests sent again, and the most in flight.

Usage: ``python bench/scale.py [--samples 20000] [--latency-ms 50] [--cap 100] [--workers 2] [--scored 2000]``
``python bench/scale.py --faults [--samples 3000] [--latency-ms 20] [--cap 16]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bedside.runs import DatasetConfig, RunConfig, execute
from bedside.runs.ray_executor import ShardResult, execute_ray, init_local_ray
from llm_overhead import start_server
from scale_task import TASK

HERE = Path(__file__).resolve().parent


def stats(base_url: str) -> dict[str, Any]:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_scripted/stats") as response:
        result: dict[str, Any] = json.load(response)
        return result


def reset(base_url: str) -> None:
    request = urllib.request.Request(base_url.removesuffix("/v1") + "/_scripted/reset", method="POST")
    urllib.request.urlopen(request).close()


def config_for(tmp: Path, urls: list[str], samples: int, cap: int, scored: bool) -> RunConfig:
    return RunConfig(
        name="scale-scored" if scored else "scale",
        task="scale_task:TASK",
        datasets={"n": DatasetConfig(options={"samples": samples})},
        systems={"echo": {"type": "echo"}},  # type: ignore[dict-item]
        models={"system": [f"openai-compatible/bench@{','.join(urls)}"]},
        model_options={"system": {"max_concurrency": 2 * cap, "replica_max_concurrency": cap}},
        scorers=["minilm"] if scored else ["words"],
        concurrency=2 * cap,
        store=str(tmp / "store.sqlite"),
    )


def utilisation(seen: list[dict[str, Any]], cap: int) -> float:
    """Mean requests in flight over each server's busy time, as a share of the cap (averaged over servers)."""
    shares = [s["in_flight_s"] / s["busy_s"] / cap for s in seen if s.get("busy_s")]
    return sum(shares) / len(shares) if shares else 0.0


def one_case(label: str, urls: list[str], samples: int, cap: int, latency_ms: float, workers: int) -> None:
    scored = label == "scored"
    ideal = samples * latency_ms / 1000 / (2 * cap)
    print(f"\n{label}: {samples} samples, ideal {ideal:.2f} s (latency-bound)")
    used: dict[str, float] = {}
    for executor in ("local", "ray"):
        for url in urls:
            reset(url)
        with tempfile.TemporaryDirectory() as tmp:
            config = config_for(Path(tmp), urls, samples, cap, scored)
            cache = Path(tmp) / "cache.sqlite"
            shards: list[ShardResult] = []
            cpu_start, wall_start = time.process_time(), time.perf_counter()
            if executor == "local":
                summary = asyncio.run(execute(config, task=TASK, cache=cache))
            else:
                summary = asyncio.run(
                    execute_ray(config, task=TASK, cache=cache, workers=workers, on_shards=shards.extend)
                )
            wall = time.perf_counter() - wall_start
            driver_cpu = time.process_time() - cpu_start
        if summary.ran != samples or summary.errors:
            raise SystemExit(f"{executor}: expected {samples} samples, ran {summary.ran}, {summary.errors} errors")
        seen = [stats(url) for url in urls]
        used[executor] = utilisation(seen, cap)
        cpu = driver_cpu + sum(s.cpu_s for s in shards)
        driver_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rss = f"driver {driver_rss:.0f} MB" + "".join(f", worker {s.index} {s.max_rss_mb:.0f} MB" for s in shards)
        phase = ""
        if shards:
            sampling = max(s.finished for s in shards) - min(s.started for s in shards)
            first = min(s.started for s in shards)
            starts = "/".join(f"+{s.started - first:.2f}" for s in sorted(shards, key=lambda s: s.started))
            phase = f" (workers' sample phase {sampling:.2f} s, {sampling / ideal:.2f} x ideal, started {starts} s)"
            started = sum(s.lease.get("requests", 0) for s in shards)
            local = sum(s.lease.get("local", 0) for s in shards)
            calls = sum(s.lease.get("actor_calls", 0) for s in shards)
            phase += (
                f" (limiter slots taken {started}: {local / max(started, 1):.1%} from a worker's lease with no"
                f" message; {calls} limits-actor calls, {calls / samples * 1000:.0f} per 1,000 samples)"
            )
        print(
            f"  {executor:5}  wall {wall:7.2f} s  wall/ideal {wall / ideal:5.2f}{phase}  "
            f"CPU/sample {cpu / samples * 1000:.3f} ms"
            f" (driver {driver_cpu / samples * 1000:.3f})  peak RSS: {rss}"
            f"  requests {'+'.join(str(s['requests']) for s in seen)}"
            f"  max in flight {'/'.join(str(s['max_in_flight']) for s in seen)} (cap {cap} each)"
            f"  endpoint utilisation {used[executor]:.1%}"
        )
    print(f"  endpoint utilisation ray / local: {used['ray'] / used['local']:.2f}")


def _named(prefix: str) -> Any:
    import ray

    for entry in ray.util.list_named_actors(all_namespaces=True):
        if entry["name"].startswith(prefix):
            return ray.get_actor(entry["name"], namespace=entry["namespace"])
    raise SystemExit(f"no actor named {prefix}...")


def fault_runs(samples: int, cap: int, latency_ms: float) -> None:
    """Worker kill, node kill, limiter kill on a 2-node local cluster; one line each (see the docstring)."""
    import threading

    import ray
    from ray.cluster_utils import Cluster

    from bedside.llm.shared_limiter import NAME_PREFIX
    from bedside.runs.ray_executor import WORKER_PREFIX, loopback_ray_env
    from bedside.runs.store import Store
    from bedside.testing import ScriptedServer

    node_args = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False}
    pythonpath = os.pathsep.join([str(HERE), str(HERE.parent / "src"), os.environ.get("PYTHONPATH", "")])
    os.environ["PYTHONPATH"] = pythonpath  # the nodes' processes inherit it
    with loopback_ray_env():
        cluster = Cluster(initialize_head=True, head_node_args=node_args)
        second = cluster.add_node(**node_args)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, namespace="bedside-bench", log_to_driver=False)

    def on_second_node(actor: Any) -> bool:
        return bool(ray.get(actor.node.remote()) == second.node_id)

    def kill_worker() -> None:
        import signal

        for entry in ray.util.list_named_actors(all_namespaces=True):
            if entry["name"].startswith(WORKER_PREFIX):
                actor = ray.get_actor(entry["name"], namespace=entry["namespace"])
                if on_second_node(actor):
                    os.kill(ray.get(actor.pid.remote()), signal.SIGKILL)
                    return
        raise SystemExit("no worker on the second node")

    def kill_node() -> None:
        nonlocal second
        cluster.remove_node(second)

    def kill_limiter() -> None:
        import signal

        os.kill(ray.get(_named(NAME_PREFIX).pid.remote()), signal.SIGKILL)

    try:
        print(f"faults: 2-node local cluster (1 CPU each), {samples} samples, cap {cap}, latency {latency_ms:g} ms")
        for name, fault in (("worker kill", kill_worker), ("node kill", kill_node), ("limiter kill", kill_limiter)):
            if not cluster.worker_nodes:
                second = cluster.add_node(**node_args)
                cluster.wait_for_nodes()
            with tempfile.TemporaryDirectory() as tmp, ScriptedServer(latency_ms=latency_ms) as server:
                config = RunConfig(
                    name=f"faults-{name.replace(' ', '-')}",
                    task="scale_task:TASK",
                    datasets={"n": DatasetConfig(options={"samples": samples})},
                    systems={"echo": {"type": "echo"}},  # type: ignore[dict-item]
                    models={"system": [server.model_name()]},
                    model_options={"system": {"max_concurrency": cap, "timeout_s": 5.0}},
                    scorers=["words"],
                    concurrency=cap,
                    store=str(Path(tmp) / "store.sqlite"),
                )
                outcome: dict[str, Any] = {}

                def drive(config: RunConfig = config, outcome: dict[str, Any] = outcome) -> None:
                    try:
                        outcome["summary"] = asyncio.run(execute_ray(config, task=TASK, cache=False, workers=2))
                    except BaseException as exc:
                        outcome["error"] = exc

                thread = threading.Thread(target=drive)
                thread.start()
                server.wait_until(lambda s: s["answers"].get("ok", 0) >= samples // 3, timeout_s=600)
                fault()
                thread.join()
                store = Store(config.store)
                rows = store.results(config.run_id)
                store.close()
                ok = {(r.cell, r.sample_id, r.epoch) for r in rows if r.status == "ok"}
                keys = [(r.cell, r.sample_id, r.epoch) for r in rows]
                summary = outcome.get("summary")
                seen = server.stats()
                print(
                    f"  {name:13} lost {samples - len(ok)}, duplicated {len(keys) - len(set(keys))}, "
                    f"exit {1 if 'error' in outcome or (summary and summary.errors) else 0}"
                    f"  (requeued {summary.retried if summary else '-'}, requests sent again "
                    f"{seen['requests'] - samples}, most in flight {seen['max_in_flight']} of cap {cap}"
                    f"{', error: ' + repr(outcome['error']) if 'error' in outcome else ''})"
                )
    finally:
        ray.shutdown()
        cluster.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=None, help="20000 (3000 with --faults)")
    parser.add_argument("--latency-ms", type=float, default=None, help="50 (20 with --faults)")
    parser.add_argument("--cap", type=int, default=None, help="100 (16 with --faults)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scored", type=int, default=2000, help="samples of the MiniLM-scored case (0: skip it)")
    parser.add_argument("--faults", action="store_true", help="the fault runs on a 2-node cluster instead")
    args = parser.parse_args()
    args.samples = args.samples or (3000 if args.faults else 20000)
    args.latency_ms = args.latency_ms if args.latency_ms is not None else (20.0 if args.faults else 50.0)
    args.cap = args.cap or (16 if args.faults else 100)
    if args.faults:
        fault_runs(args.samples, args.cap, args.latency_ms)
        return
    servers = [start_server(args.latency_ms) for _ in range(2)]
    urls = [url for _, url in servers]
    pythonpath = os.pathsep.join([str(HERE), str(HERE.parent / "src"), os.environ.get("PYTHONPATH", "")])
    init_local_ray(num_cpus=args.workers, runtime_env={"env_vars": {"PYTHONPATH": pythonpath}})
    try:
        one_case("single-call", urls, args.samples, args.cap, args.latency_ms, args.workers)
        if args.scored:
            one_case("scored", urls, args.scored, args.cap, args.latency_ms, args.workers)
    finally:
        import ray

        ray.shutdown()
        for process, _ in servers:
            process.terminate()
            process.wait(timeout=10)


if __name__ == "__main__":
    main()
