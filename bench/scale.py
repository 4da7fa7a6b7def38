"""Local executor vs Ray: N single-call samples against two scripted servers (one model, two base URLs).

Each server answers after ``--latency-ms`` and each replica is capped at ``--cap`` requests in flight, so the
latency-bound ideal is ``N x latency / (2 x cap)``. Both executors run the same config (fresh store and cache
each): the local one in this process, the Ray one with ``--workers`` workers on a Ray started here on 127.0.0.1
(endpoint caps enforced cluster-wide by the limiter actors). Printed per case: wall, wall / ideal, CPU ms per
sample (the driver plus every worker), peak RSS per process, and the servers' most requests in flight.

A second case scores every output with MiniLM (``--scored`` samples, the ``minilm`` scorer: two embeddings per
sample), where the local executor's one process is CPU-bound and Ray's second process should pay off.

Usage: ``python bench/scale.py [--samples 20000] [--latency-ms 50] [--cap 100] [--workers 2] [--scored 2000]``
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


def one_case(label: str, urls: list[str], samples: int, cap: int, latency_ms: float, workers: int) -> None:
    scored = label == "scored"
    ideal = samples * latency_ms / 1000 / (2 * cap)
    print(f"\n{label}: {samples} samples, ideal {ideal:.2f} s (latency-bound)")
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
        cpu = driver_cpu + sum(s.cpu_s for s in shards)
        driver_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rss = f"driver {driver_rss:.0f} MB" + "".join(f", worker {s.index} {s.max_rss_mb:.0f} MB" for s in shards)
        phase = ""
        if shards:
            sampling = max(s.finished for s in shards) - min(s.started for s in shards)
            phase = f" (workers' sample phase {sampling:.2f} s, {sampling / ideal:.2f} x ideal)"
        print(
            f"  {executor:5}  wall {wall:7.2f} s  wall/ideal {wall / ideal:5.2f}{phase}  "
            f"CPU/sample {cpu / samples * 1000:.3f} ms"
            f" (driver {driver_cpu / samples * 1000:.3f})  peak RSS: {rss}"
            f"  requests {'+'.join(str(s['requests']) for s in seen)}"
            f"  max in flight {'/'.join(str(s['max_in_flight']) for s in seen)} (cap {cap} each)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--cap", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scored", type=int, default=2000, help="samples of the MiniLM-scored case (0: skip it)")
    args = parser.parse_args()
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
