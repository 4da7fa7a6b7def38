"""How close does the runner get to the latency-bound ideal, and what does a warm re-run cost?

Runs a single-call task (one model call per sample, a cheap scorer) over N samples against the scripted server
in its own process, at a fixed latency and concurrency, through everything a real run uses: config, runner,
shared model wrapper (cache on), per-sample accounting, the SQLite store with per-turn batched commits. Prints:

* wall time against the ideal ``N x latency / concurrency`` and their ratio;
* client CPU milliseconds per sample (the whole process: event loop, store writer and scoring thread);
* the warm re-run of the same config: wall time and model requests the server saw (goal 0).

The drive is repeated ``--repeat`` times (fresh store and cache each time) and judged on the median, because
this shared machine's single runs spread by several percent. A short warm-up drive goes first and is printed but
not judged: it pays the process's one-time costs (importing the HTTP client, ~0.09 s, is 4% of a 2 s drive),
which do not grow with the run and so are not what the throughput goal is about.

Cases (``--case``): ``default`` 2,000 samples at 100 ms and concurrency 100 (wall/ideal goal <= 1.2); ``cpu``
2,000 at 1 ms (the server answers at once, so the client's CPU per sample is all that counts; goal <= 0.25 ms);
``20k`` 20,000 at 50 ms and concurrency 200 (wall/ideal goal <= 1.5); ``all`` runs the three and prints a table.

Usage: ``python bench/run_throughput.py [--case default|cpu|20k|all] [--samples 2000] [--latency-ms 100]
[--concurrency 100] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bedside.runs import DatasetConfig, Output, Sample, SampleContext, execute
from bedside.runs.task import System
from llm_overhead import start_server
from single_call_drive import single_call_config


async def _answer(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    completion = await context.generate("system", sample.inputs["prompt"])
    return Output(text=completion.text)


class SingleCallTask:
    """N samples, each one prompt; the reference is the prompt itself (the scripted server echoes)."""

    name = "bench-single-call"
    systems: Mapping[str, System] = {"echo": _answer}
    default_scorers = ("words",)
    scorers: tuple[str, ...] = ()

    def __init__(self, samples: int) -> None:
        self.samples = samples

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        return [Sample(id=f"s{i:05d}", inputs={"prompt": f"request {i}"}) for i in range(self.samples)]

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        raise KeyError(scorer)


def stats(base_url: str) -> dict[str, Any]:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_scripted/stats") as response:
        result: dict[str, Any] = json.load(response)
        return result


CASES = {
    # name: (samples, latency ms, concurrency, wall/ideal goal or None where the ideal is too small to judge)
    "default": (2000, 100.0, 100, 1.2),
    "cpu": (2000, 1.0, 100, None),
    "20k": (20000, 50.0, 200, 1.5),
}
CPU_GOAL_MS = 0.25


def drive(samples: int, latency_ms: float, concurrency: int, repeat: int) -> dict[str, float]:
    """Runs the case ``repeat`` times after a warm-up; prints each run and returns the medians."""
    ideal = samples * latency_ms / 1000 / concurrency
    print(f"samples             {samples} single-call, {latency_ms:g} ms latency, concurrency {concurrency}")
    print(f"latency-bound ideal {ideal:.3f} s")
    process, base_url = start_server(latency_ms)
    ratios, cpus, warm_walls, warm_calls = [], [], [], []
    try:
        for run in range(repeat + 1):
            warmup = run == 0
            n = max(samples // 10, 1) if warmup else samples
            task = SingleCallTask(n)
            with tempfile.TemporaryDirectory() as tmp:
                config = single_call_config(base_url, concurrency, Path(tmp) / "store.sqlite")
                cache = Path(tmp) / "cache.sqlite"
                before = stats(base_url)["requests"]
                cpu_start, wall_start = time.process_time(), time.perf_counter()
                summary = asyncio.run(execute(config, task=task, cache=cache))
                wall = time.perf_counter() - wall_start
                cpu = time.process_time() - cpu_start
                sent = stats(base_url)["requests"] - before
                if summary.ran != n or summary.errors:
                    raise SystemExit(f"expected {n} samples, ran {summary.ran}, {summary.errors} errors")
                warm_start = time.perf_counter()
                asyncio.run(execute(config, task=task, cache=cache))
                warm = time.perf_counter() - warm_start
                warm_sent = stats(base_url)["requests"] - before - sent
            run_ideal = n * latency_ms / 1000 / concurrency
            line = (
                f"wall {wall:.3f} s  wall/ideal {wall / run_ideal:.3f}  CPU/sample {cpu / n * 1000:.3f} ms  "
                f"requests {sent}  warm re-run {warm:.3f} s with {warm_sent} model requests"
            )
            if warmup:
                print(f"warm-up ({n} samples, not judged): {line}")
                continue
            ratios.append(wall / ideal)
            cpus.append(cpu / n * 1000)
            warm_walls.append(warm)
            warm_calls.append(warm_sent)
            print(f"run {run}: {line}", flush=True)
    finally:
        process.terminate()
        process.wait(timeout=10)
    return {
        "ratio": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "cpu_ms": statistics.median(cpus),
        "warm_s": statistics.median(warm_walls),
        "warm_calls": max(warm_calls),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", choices=[*CASES, "all"], help="a preset (overrides the three below)")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    cases: dict[str, tuple[int, float, int, float | None]]
    if args.case is None:
        cases = {"custom": (args.samples, args.latency_ms, args.concurrency, 1.2)}
    else:
        cases = CASES if args.case == "all" else {args.case: CASES[args.case]}
    results = {}
    for name, (samples, latency_ms, concurrency, goal) in cases.items():
        found = results[name] = drive(samples, latency_ms, concurrency, args.repeat)
        judged = f"goal <= {goal:g}" if goal is not None else "not judged: the ideal is too short"
        spread = f"runs {found['ratio_min']:.3f}-{found['ratio_max']:.3f}"
        print(f"wall/ideal median  {found['ratio']:.3f}  ({judged}; {spread})")
        print(f"CPU/sample median  {found['cpu_ms']:.3f} ms  (goal <= {CPU_GOAL_MS:g} ms)")
        print(f"warm re-run        median {found['warm_s']:.3f} s, model requests {found['warm_calls']} (goal 0)")
        print()
    if len(results) > 1:
        print("case      samples  latency  concurrency  wall/ideal  CPU ms/sample")
        for name, found in results.items():
            samples, latency_ms, concurrency, _ = cases[name]
            print(
                f"{name:9} {samples:7d}  {latency_ms:5g} ms  {concurrency:11d}  {found['ratio']:10.3f}  "
                f"{found['cpu_ms']:13.3f}"
            )


if __name__ == "__main__":
    main()
