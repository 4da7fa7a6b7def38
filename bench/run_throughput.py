"""How close does the runner get to the latency-bound ideal, and what does a warm re-run cost?

Runs a single-call task (one model call per sample, a cheap scorer) over N samples against the scripted server
in its own process, at a fixed latency and concurrency, through everything a real run uses: config, runner,
shared model wrapper (cache on), per-sample accounting, the SQLite store with per-turn batched commits. Prints:

* wall time against the ideal ``N x latency / concurrency`` and their ratio (goal <= 1.2);
* client CPU milliseconds per sample;
* the warm re-run of the same config: wall time and model requests the server saw (goal 0).

The drive is repeated ``--repeat`` times (fresh store and cache each time) and judged on the median, because
this shared machine's single runs spread by several percent. A short warm-up drive goes first and is printed but
not judged: it pays the process's one-time costs (importing the HTTP client, ~0.09 s, is 4% of a 2 s drive),
which do not grow with the run and so are not what the throughput goal is about.

Usage: ``python bench/run_throughput.py [--samples 2000] [--latency-ms 100] [--concurrency 100] [--repeat 3]``
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

from bedside.runs import DatasetConfig, Output, RunConfig, Sample, SampleContext, execute
from bedside.runs.task import System
from llm_overhead import start_server


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    ideal = args.samples * args.latency_ms / 1000 / args.concurrency
    print(
        f"samples             {args.samples} single-call, {args.latency_ms:g} ms latency, "
        f"concurrency {args.concurrency}"
    )
    print(f"latency-bound ideal {ideal:.3f} s")
    process, base_url = start_server(args.latency_ms)
    ratios, warm_walls, warm_calls = [], [], []
    try:
        for run in range(args.repeat + 1):
            warmup = run == 0
            samples = max(args.samples // 10, 1) if warmup else args.samples
            task = SingleCallTask(samples)
            with tempfile.TemporaryDirectory() as tmp:
                config = RunConfig(
                    name="bench",
                    task="bench-single-call",
                    datasets={"n": DatasetConfig()},
                    systems={"echo": {"type": "echo"}},  # type: ignore[dict-item]
                    models={"system": [f"openai-compatible/bench@{base_url}"]},
                    model_options={"system": {"max_concurrency": args.concurrency}},
                    concurrency=args.concurrency,
                    store=str(Path(tmp) / "store.sqlite"),
                )
                cache = Path(tmp) / "cache.sqlite"
                before = stats(base_url)["requests"]
                cpu_start, wall_start = time.process_time(), time.perf_counter()
                summary = asyncio.run(execute(config, task=task, cache=cache))
                wall = time.perf_counter() - wall_start
                cpu = time.process_time() - cpu_start
                sent = stats(base_url)["requests"] - before
                if summary.ran != samples or summary.errors:
                    raise SystemExit(f"expected {samples} samples, ran {summary.ran}, {summary.errors} errors")
                warm_start = time.perf_counter()
                asyncio.run(execute(config, task=task, cache=cache))
                warm = time.perf_counter() - warm_start
                warm_sent = stats(base_url)["requests"] - before - sent
            run_ideal = samples * args.latency_ms / 1000 / args.concurrency
            line = (
                f"wall {wall:.3f} s  ratio {wall / run_ideal:.3f}  client CPU/sample {cpu / samples * 1000:.3f} ms  "
                f"requests {sent}  warm re-run {warm:.3f} s with {warm_sent} model requests"
            )
            if warmup:
                print(f"warm-up ({samples} samples, not judged): {line}")
                continue
            ratios.append(wall / ideal)
            warm_walls.append(warm)
            warm_calls.append(warm_sent)
            print(f"run {run}: {line}")
    finally:
        process.terminate()
        process.wait(timeout=10)
    print(
        f"ratio median        {statistics.median(ratios):.3f}  (goal <= 1.2; runs {min(ratios):.3f}-{max(ratios):.3f})"
    )
    print(
        f"warm re-run         median {statistics.median(warm_walls):.3f} s, model requests {max(warm_calls)} (goal 0)"
    )


if __name__ == "__main__":
    main()
