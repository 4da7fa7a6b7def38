"""The runner's CPU per sample and wall/ideal, old code against new, in one run on one scripted server.

The old code is any git ref (``main`` by default) checked out with ``git worktree`` into a temporary folder; the
new code is this working tree. Each drive runs in its own process (``PYTHONPATH`` = that tree's ``src``), so
the two never share imports, and drives are interleaved (bare aiohttp, old, new, bare, old, new, ...) so a
slower minute on this shared machine hits all three alike. A bare aiohttp client sending the same requests (no
runner, cache, store or accounting) is the floor the HTTP client and the server set.

Every drive is a single-call task (one model call per sample, the ``words`` scorer) through ``execute`` with a
fresh SQLite store and response cache, after a short warm-up drive in the same process (one-time imports are
not what per-sample CPU is about). Prints, per variant, the median CPU ms per sample and wall/ideal, the
new/old ratios, and each runner's CPU per sample over the bare client's (absolute milliseconds vary several-fold
between machines; that ratio does not).

Usage: ``python bench/before_after.py [--ref main] [--samples 2000] [--latency-ms 1] [--concurrency 100]
[--repeat 3]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from llm_overhead import start_server

ROOT = Path(__file__).resolve().parents[1]

# Runs in a child process against whichever ``src`` is on its PYTHONPATH; uses only the public API that both
# the old and the new code have.
DRIVER = r"""
import asyncio, json, sys, tempfile, time
from pathlib import Path

mode, base_url, samples, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


async def bare(n):
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


def run(n):
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

    with tempfile.TemporaryDirectory() as tmp:
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
        summary = asyncio.run(execute(config, task=Task(), cache=Path(tmp) / "cache.sqlite"))
        if summary.ran != n or summary.errors:
            raise SystemExit(f"expected {n} samples, ran {summary.ran}, {summary.errors} errors")


def drive(n):
    if mode == "bare":
        asyncio.run(bare(n))
    else:
        run(n)


drive(max(samples // 10, 1))  # warm-up: imports, first connections
cpu, wall = time.process_time(), time.perf_counter()
drive(samples)
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}))
"""


@contextlib.contextmanager
def checkout(ref: str) -> Iterator[Path]:
    """``ref`` checked out in a temporary git worktree, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="bedside-before-") as tmp:
        path = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(path), ref],
            check=True,
        )
        try:
            yield path
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], check=False)


def measure(src: Path, mode: str, base_url: str, args: argparse.Namespace) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, mode, base_url, str(args.samples), str(args.concurrency)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{mode} drive with {src} failed:\n{done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ref", default="main", help="the old code: a git ref (default main)")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    ideal = args.samples * args.latency_ms / 1000 / args.concurrency
    print(
        f"samples {args.samples} single-call, {args.latency_ms:g} ms latency, concurrency {args.concurrency}; "
        f"ideal {ideal:.3f} s; old = {args.ref}, new = working tree"
    )
    results: dict[str, list[dict[str, float]]] = {"bare": [], "old": [], "new": []}
    process, base_url = start_server(args.latency_ms)
    try:
        with checkout(args.ref) as old_tree:
            sources = {"bare": ROOT / "src", "old": old_tree / "src", "new": ROOT / "src"}
            for run in range(1, args.repeat + 1):
                for variant, src in sources.items():
                    found = measure(src, "bare" if variant == "bare" else "run", base_url, args)
                    results[variant].append(found)
                    print(
                        f"run {run} {variant:4}: wall {found['wall']:.3f} s  wall/ideal {found['wall'] / ideal:.3f}  "
                        f"CPU/sample {found['cpu'] / args.samples * 1000:.3f} ms",
                        flush=True,
                    )
    finally:
        process.terminate()
        process.wait(timeout=10)

    def median(variant: str, what: str) -> float:
        return statistics.median(r[what] for r in results[variant])

    for variant in results:
        print(
            f"{variant:4} median: CPU/sample {median(variant, 'cpu') / args.samples * 1000:.3f} ms  "
            f"wall/ideal {median(variant, 'wall') / ideal:.3f}"
        )
    print(
        f"new/old: CPU/sample {median('new', 'cpu') / median('old', 'cpu'):.3f}  "
        f"wall {median('new', 'wall') / median('old', 'wall'):.3f}"
    )
    above = {v: (median(v, "cpu") - median("bare", "cpu")) / args.samples * 1000 for v in ("old", "new")}
    print(f"above the bare aiohttp floor (CPU/sample): old +{above['old']:.3f} ms, new +{above['new']:.3f} ms")
    ratio = {v: median(v, "cpu") / median("bare", "cpu") for v in ("old", "new")}
    print(
        f"runner / bare aiohttp (CPU/sample, same run): old {ratio['old']:.2f}x, new {ratio['new']:.2f}x "
        "(issue 32's goal: at most 1.3x)"
    )


if __name__ == "__main__":
    main()
