"""Where the runner's CPU per sample goes, layer by layer, over a bare aiohttp client, in one interleaved run.

Issue 32 asks for the runner's CPU per sample to be at most 1.3x a bare aiohttp client sending the same requests.
This bench splits the difference into the layers a single-call sample passes through, each measured in its own
process against one scripted server (same requests, same concurrency), interleaved round by round so a slower
minute on a shared machine hits every layer alike:

* ``bare``: aiohttp alone (the floor: what the HTTP client and the event loop cost);
* ``model``: bedside's model layer without a cache (``Model.generate``: provider, retries, limiter, accounting);
* ``model+cache``: the same with the SQLite response cache (key, lookup, batched write);
* ``runner``: a whole run (``execute``: plan, sample loop, scorer, store) with no response cache;
* ``runner+cache``: the same with the cache, what ``bench/before_after.py`` measures as "new".

Printed: each layer's median CPU ms per sample, its ratio to ``bare``, and what it adds over the layer below.

Usage: ``python bench/runner_layers.py [--samples 2000] [--latency-ms 1] [--concurrency 100] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from llm_overhead import start_server

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("bare", "model", "model+cache", "runner", "runner+cache")

DRIVER = r"""
import asyncio, json, sys, tempfile, time
from pathlib import Path

layer, base_url, samples, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


async def bare(n, tmp):
    import aiohttp

    limit = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(i):
            body = {"model": "bench", "messages": [{"role": "user", "content": f"request {i}"}]}
            async with limit, session.post(f"{base_url}/chat/completions", json=body) as response:
                response.raise_for_status()
                await response.read()

        await asyncio.gather(*(one(i) for i in range(n)))


async def model(n, tmp, cached):
    from bedside.llm import get_model

    cache = Path(tmp) / "cache.sqlite" if cached else None
    async with get_model(f"openai-compatible/bench@{base_url}", max_concurrency=concurrency, cache=cache) as m:
        await asyncio.gather(*(m.generate(f"request {i}") for i in range(n)))


def runner(n, tmp, cached):
    from bedside.runs import DatasetConfig, Output, RunConfig, Sample, execute

    async def answer(sample, options, context):
        completion = await context.generate("system", sample.inputs["prompt"])
        return Output(text=completion.text)

    class Task:
        name = "bench-single-call"
        systems = {"echo": answer}
        default_scorers = ("words",)
        scorers = ()

        def load(self, name, config):
            return [Sample(id=f"s{i:05d}", inputs={"prompt": f"request {i}"}) for i in range(n)]

        def score(self, scorer, sample, output):
            raise KeyError(scorer)

    config = RunConfig(
        name="bench",
        task="bench-single-call",
        datasets={"n": DatasetConfig()},
        systems={"echo": {"type": "echo"}},
        models={"system": [f"openai-compatible/bench@{base_url}"]},
        model_options={"system": {"max_concurrency": concurrency}},
        concurrency=concurrency,
        store=str(Path(tmp) / "store.sqlite"),
    )
    cache = Path(tmp) / "cache.sqlite" if cached else None
    summary = asyncio.run(execute(config, task=Task(), cache=cache))
    if summary.ran != n or summary.errors:
        raise SystemExit(f"expected {n} samples, ran {summary.ran}, {summary.errors} errors")


def drive(n):
    with tempfile.TemporaryDirectory() as tmp:
        if layer == "bare":
            asyncio.run(bare(n, tmp))
        elif layer.startswith("model"):
            asyncio.run(model(n, tmp, layer.endswith("+cache")))
        else:
            runner(n, tmp, layer.endswith("+cache"))


drive(max(samples // 10, 1))  # warm-up: imports, first connections
cpu = time.process_time()
drive(samples)
print(json.dumps({"cpu": time.process_time() - cpu}))
"""


def measure(layer: str, base_url: str, args: argparse.Namespace) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, layer, base_url, str(args.samples), str(args.concurrency)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{layer} drive failed:\n{done.stderr[-2000:]}")
    cpu = float(json.loads(done.stdout.strip().splitlines()[-1])["cpu"])
    return cpu / int(args.samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"samples {args.samples} single-call, {args.latency_ms:g} ms latency, concurrency {args.concurrency}")
    found: dict[str, list[float]] = {layer: [] for layer in LAYERS}
    process, base_url = start_server(args.latency_ms)
    try:
        for run in range(1, args.repeat + 1):
            for layer in LAYERS:
                found[layer].append(measure(layer, base_url, args))
            print(f"run {run}: " + "  ".join(f"{layer} {found[layer][-1]:.3f}" for layer in LAYERS), flush=True)
    finally:
        process.terminate()
        process.wait(timeout=10)
    median = {layer: statistics.median(values) for layer, values in found.items()}
    below = {"model": "bare", "model+cache": "model", "runner": "model", "runner+cache": "runner"}
    print("median CPU ms per sample, over bare aiohttp, and what the layer adds:")
    for layer in LAYERS:
        added = f"  {median[layer] - median[below[layer]]:+.3f} ms over {below[layer]}" if layer in below else ""
        print(f"  {layer:13} {median[layer]:.3f} ms  {median[layer] / median['bare']:.2f}x bare{added}")
    print("issue 32's goal: runner+cache at most 1.3x bare")


if __name__ == "__main__":
    main()
