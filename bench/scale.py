"""Local executor vs Ray: N single-call samples against two scripted servers (one model, two base URLs).

Each server answers after ``--latency-ms`` and each replica is capped at ``--cap`` requests in flight, so the
latency-bound ideal is ``N x latency / (2 x cap)``. Both executors run the same config (fresh store and cache
each): the local one in this process, the Ray one with ``--workers`` workers on a Ray started here on 127.0.0.1
(endpoint caps enforced cluster-wide by the limiter actors). Printed per case: wall, wall / ideal, CPU ms per
sample (the driver plus every worker), peak RSS per process, and the servers' most requests in flight; for Ray
also when its first worker took samples, in seconds after the run began (Ray itself already started).

A second case scores every output with MiniLM (``--scored`` samples, the ``minilm`` scorer: two embeddings per
sample), where the local executor's one process is CPU-bound and Ray's second process should pay off.

Endpoint utilisation is the servers' own integral of requests in flight over their busy time, divided by the
cap (``in_flight_s / busy_s / cap``, from ``/_scripted/stats``): 100 % means every slot the cap allows was
used for the whole run. Printed per executor, and Ray's over the local executor's as a ratio.

``--faults`` instead runs the same config on a 2-node local cluster of ``ray start`` processes (a head and a
second node, one CPU each, both on 127.0.0.1; :mod:`bedside.testing.ray_cluster`, the launcher the cluster tests
use), its driver a subprocess, against a scripted server in this process, three times, making one fault in each
once a third of the requests were answered: a worker on the second node SIGKILLed, the second node killed (SIGKILL
to every process of it), the limits actor SIGKILLed. One line per fault: samples lost (expected minus stored ok
rows), duplicated (rows beyond one per sample), exit (1 if the run raised or stored an error), samples requeued,
requests sent again, and the most in flight. Then the same run without a fault on the cluster and with the local
executor: each one's endpoint utilisation, and Ray's over the local executor's as a ratio.

The local executor also runs on ``--processes`` worker processes (:mod:`bedside.runs.processes`, each replica's
cap split between them), printed as ``local xN``, and under ``--processes auto`` (``local auto``, with the
choice its first samples led to); each executor's endpoint utilisation and CPU per sample are
printed over the one-process local executor's, as ratios measured in the same invocation.

Usage: ``python bench/scale.py [--samples 20000] [--latency-ms 50] [--cap 100] [--workers 2] [--processes 2]
[--scored 2000] [--no-ray] [--no-auto]``
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

import bedside.metrics.catalog  # noqa: F401  (read by a run's scorer check: imported before any clock, once)
from bedside.runs import DatasetConfig, RunConfig, execute
from bedside.runs.processes import AutoChoice, execute_processes
from bedside.runs.ray_executor import execute_ray, init_local_ray
from bedside.runs.shards import ShardResult
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


def print_choice(choice: AutoChoice) -> None:
    print(f"  {choice}")


def one_case(
    label: str,
    urls: list[str],
    samples: int,
    cap: int,
    latency_ms: float,
    workers: int,
    processes: int,
    ray: bool,
    auto: bool = True,
) -> None:
    scored = label == "scored"
    ideal = samples * latency_ms / 1000 / (2 * cap)
    print(f"\n{label}: {samples} samples, ideal {ideal:.2f} s (latency-bound)")
    used: dict[str, float] = {}
    cpu_per_sample: dict[str, float] = {}
    split = f"local x{processes}"
    executors = (
        ["local"] + ([split] if processes > 1 else []) + (["local auto"] if auto else []) + (["ray"] if ray else [])
    )
    for executor in executors:
        for url in urls:
            reset(url)
        with tempfile.TemporaryDirectory() as tmp:
            config = config_for(Path(tmp), urls, samples, cap, scored)
            cache = Path(tmp) / "cache.sqlite"
            shards: list[ShardResult] = []
            cpu_start, wall_start, began = time.process_time(), time.perf_counter(), time.time()
            if executor == "local":
                summary = asyncio.run(execute(config, task=TASK, cache=cache))
            elif executor == split:  # the workers resolve scale_task:TASK by name (BEDSIDE_TASKS, set in main)
                summary = asyncio.run(
                    execute_processes(config, processes=processes, cache=cache, on_shards=shards.extend)
                )
            elif executor == "local auto":  # its probe runs in this process: its CPU is the driver's
                summary = asyncio.run(
                    execute_processes(
                        config, processes="auto", cache=cache, on_shards=shards.extend, on_choice=print_choice
                    )
                )
                shards = [s for s in shards if s.pid != os.getpid()]
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
        cpu_per_sample[executor] = cpu / samples
        if executor == "ray" and shards:
            sampling = max(s.finished for s in shards) - min(s.started for s in shards)
            first = min(s.started for s in shards)
            starts = "/".join(f"+{s.started - first:.2f}" for s in sorted(shards, key=lambda s: s.started))
            phase = (
                f" (workers' sample phase {sampling:.2f} s, {sampling / ideal:.2f} x ideal, started {starts} s;"
                f" first worker taking samples {first - began:.2f} s after the run began)"
            )
            started = sum(s.lease.get("requests", 0) for s in shards)
            local = sum(s.lease.get("local", 0) for s in shards)
            calls = sum(s.lease.get("actor_calls", 0) for s in shards)
            phase += (
                f" (limiter slots taken {started}: {local / max(started, 1):.1%} from a worker's lease with no"
                f" message; {calls} limits-actor calls, {calls / samples * 1000:.0f} per 1,000 samples)"
            )
        print(
            f"  {executor:9}  wall {wall:7.2f} s  wall/ideal {wall / ideal:5.2f}{phase}  "
            f"CPU/sample {cpu / samples * 1000:.3f} ms"
            f" (driver {driver_cpu / samples * 1000:.3f})  peak RSS: {rss}"
            f"  requests {'+'.join(str(s['requests']) for s in seen)}"
            f"  max in flight {'/'.join(str(s['max_in_flight']) for s in seen)} (cap {cap} each)"
            f"  endpoint utilisation {used[executor]:.1%}"
        )
    for other in executors[1:]:
        print(
            f"  {other} / local: endpoint utilisation ratio {used[other] / used['local']:.2f}, "
            f"CPU per sample ratio {cpu_per_sample[other] / cpu_per_sample['local']:.2f}"
        )


def fault_runs(samples: int, cap: int, latency_ms: float, workers: int) -> None:
    """Worker kill, node kill, limiter kill on a 2-node cluster of ``ray start`` processes; one line each, then
    the endpoint utilisation of a run without faults there and of the local executor (see the docstring)."""
    from bedside.runs.store import Store
    from bedside.testing import ScriptedServer
    from bedside.testing.ray_cluster import LocalRayCluster, RayNode, loopback_env

    env = loopback_env()
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(HERE.parent / "src"), env.get("PYTHONPATH", "")])
    env["BEDSIDE_TASKS"] = ",".join(filter(None, [env.get("BEDSIDE_TASKS"), "scale_task:TASK"]))

    def config_in(tmp: str, name: str, server: ScriptedServer) -> RunConfig:
        return RunConfig(
            name=name,
            task="scale_task:TASK",
            datasets={"n": DatasetConfig(options={"samples": samples})},
            systems={"echo": {"type": "echo"}},  # type: ignore[dict-item]
            models={"system": [server.model_name()]},
            model_options={"system": {"max_concurrency": cap, "timeout_s": 5.0}},
            scorers=["words"],
            concurrency=cap,
            store=str(Path(tmp) / "store.sqlite"),
        )

    with LocalRayCluster(env) as cluster:
        cluster.start(num_cpus=1)

        def second_node() -> RayNode:
            others = [node for node in cluster.live_nodes() if not node.head]
            return others[0] if others else cluster.add_node(num_cpus=1, resources={"second-node": 1})

        faults: dict[str, Any] = {
            "worker kill": lambda driver: driver.command("kill-worker"),
            "node kill": lambda driver: cluster.kill_node(second_node()),
            "limiter kill": lambda driver: driver.command("kill-limiter"),
        }
        print(
            f"faults: 2-node cluster of `ray start` processes (1 CPU each, 127.0.0.1), {samples} samples, "
            f"{workers} workers, cap {cap}, latency {latency_ms:g} ms"
        )
        for name, fault in faults.items():
            second_node()
            with tempfile.TemporaryDirectory() as tmp, ScriptedServer(latency_ms=latency_ms) as server:
                config = config_in(tmp, f"faults-{name.replace(' ', '-')}", server)
                with cluster.drive(config, workers=workers) as driver:
                    # the fault comes once a third of the requests were answered, whatever the machine's speed
                    driver.wait_for(server, lambda s: s["answers"].get("ok", 0) >= samples // 3)
                    fault(driver)
                    result = driver.finish()
                    code = driver.process.returncode
                store = Store(config.store)
                rows = store.results(config.run_id)
                store.close()
                ok = {(r.cell, r.sample_id, r.epoch) for r in rows if r.status == "ok"}
                keys = [(r.cell, r.sample_id, r.epoch) for r in rows]
                summary = result.get("summary")
                failed = "error" in result or code != 0 or (summary is not None and summary["errors"] > 0)
                seen = server.stats()
                print(
                    f"  {name:13} lost {samples - len(ok)}, duplicated {len(keys) - len(set(keys))}, "
                    f"exit {1 if failed else 0}"
                    f"  (requeued {summary['retried'] if summary else '-'}, requests sent again "
                    f"{seen['requests'] - samples}, most in flight {seen['max_in_flight']} of cap {cap}"
                    f"{', error: ' + str(result['error']) if 'error' in result else ''})"
                )
        # the same run without a fault, on the cluster and in this process: how well each keeps the endpoint busy
        used: dict[str, float] = {}
        second_node()
        for executor in ("ray", "local"):
            with tempfile.TemporaryDirectory() as tmp, ScriptedServer(latency_ms=latency_ms) as server:
                config = config_in(tmp, f"utilisation-{executor}", server)
                if executor == "ray":
                    with cluster.drive(config, workers=workers) as driver:
                        result = driver.finish()
                    ran = result.get("summary", {}).get("ran")
                else:
                    ran = asyncio.run(execute(config, task=TASK, cache=False)).ran
                if ran != samples:
                    raise SystemExit(f"{executor}: expected {samples} samples, ran {ran}")
                used[executor] = utilisation([server.stats()], cap)
        print(
            f"  endpoint utilisation without faults: ray {used['ray']:.1%}, local {used['local']:.1%}, "
            f"ray / local {used['ray'] / used['local']:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=None, help="20000 (3000 with --faults)")
    parser.add_argument("--latency-ms", type=float, default=None, help="50 (20 with --faults)")
    parser.add_argument("--cap", type=int, default=None, help="100 (16 with --faults)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--processes", type=int, default=2, help="the local executor's worker processes (1: skip)")
    parser.add_argument("--no-ray", action="store_true", help="only the local executor, on 1 and N processes")
    parser.add_argument("--no-auto", action="store_true", help="skip the local executor under --processes auto")
    parser.add_argument("--scored", type=int, default=2000, help="samples of the MiniLM-scored case (0: skip it)")
    parser.add_argument("--faults", action="store_true", help="the fault runs on a 2-node cluster instead")
    args = parser.parse_args()
    args.samples = args.samples or (3000 if args.faults else 20000)
    args.latency_ms = args.latency_ms if args.latency_ms is not None else (20.0 if args.faults else 50.0)
    args.cap = args.cap or (16 if args.faults else 100)
    if args.faults:
        fault_runs(args.samples, args.cap, args.latency_ms, args.workers)
        return
    servers = [start_server(args.latency_ms) for _ in range(2)]
    urls = [url for _, url in servers]
    pythonpath = os.pathsep.join([str(HERE), str(HERE.parent / "src"), os.environ.get("PYTHONPATH", "")])
    allowed = os.environ.get("BEDSIDE_TASKS", "")
    os.environ["BEDSIDE_TASKS"] = ",".join(filter(None, [allowed, "scale_task:TASK"]))
    ray = not args.no_ray
    if ray:
        # in the environment Ray's processes inherit, not a runtime_env: workers with a runtime_env of their own
        # cannot be the idle ones Ray starts with the cluster, so each run's first worker would start a process
        os.environ["PYTHONPATH"] = pythonpath
        init_local_ray(num_cpus=args.workers)
    cases = [("single-call", args.samples)] + ([("scored", args.scored)] if args.scored else [])
    try:
        for label, samples in cases:
            one_case(
                label, urls, samples, args.cap, args.latency_ms, args.workers, args.processes, ray, not args.no_auto
            )
    finally:
        if ray:
            import ray as ray_module

            ray_module.shutdown()
        for process, _ in servers:
            process.terminate()
            process.wait(timeout=10)


if __name__ == "__main__":
    main()
