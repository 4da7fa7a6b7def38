"""How close does bedside's model layer get to the latency-bound ideal?

Sends N distinct requests through the full wrapper (SQLite cache, retries, limiter, accounting) to the scripted
server running in its own process, at a fixed latency and concurrency, and prints:

* wall time, and the ideal ``N x latency / concurrency`` a zero-overhead client would reach;
* their ratio (goal <= 1.2);
* CPU milliseconds the client process spent per call;
* the most requests the server saw in flight at once (must equal the concurrency, never exceed it).

The machine this runs on is shared and noisy (single runs of the same code spread by +-4%), so the drive is
repeated ``--repeat`` times against one server, each with a fresh model and cache, and every run is printed
with the median, which is what the goal is judged on. Interleaved with those runs, a bare aiohttp client sends
the same requests; the ratio of the two medians is what bedside's wrapper costs over the HTTP client alone.

Usage: ``python bench/llm_overhead.py [--requests 2000] [--latency-ms 100] [--concurrency 100] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bedside.llm import get_model

sys.path.insert(0, str(Path(__file__).parent))

from single_call_drive import bare as drive_bare  # the floor: the same requests from aiohttp alone


def start_server(latency_ms: float) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "bedside.cli", "serve-scripted", "--port", "0", "--latency-ms", str(latency_ms)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if " on " not in line:
        process.kill()
        raise SystemExit(f"scripted server did not start: {line!r}")
    return process, line.split(" on ", 1)[1].strip()


async def drive(base_url: str, requests: int, concurrency: int, cache: Path | None) -> None:
    async with get_model(f"openai-compatible/bench@{base_url}", max_concurrency=concurrency, cache=cache) as model:
        await asyncio.gather(*(model.generate(f"request {i}") for i in range(requests)))
        usage = model.usage.snapshot()["system"]
    if usage.calls != requests or usage.errors:
        raise SystemExit(f"expected {requests} answers, got {usage.calls} with {usage.errors} errors")


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of another process (Linux /proc), or None where that cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    ideal = args.requests * args.latency_ms / 1000 / args.concurrency
    print(f"requests            {args.requests} at {args.latency_ms:g} ms latency, concurrency {args.concurrency}")
    print(f"latency-bound ideal {ideal:.3f} s")
    process, base_url = start_server(args.latency_ms)
    stats_url = base_url.removesuffix("/v1") + "/_scripted/stats"
    reset_url = base_url.removesuffix("/v1") + "/_scripted/reset"
    ratios: list[float] = []
    bare: list[float] = []
    try:
        for run in range(1, args.repeat + 1):
            started = time.perf_counter()
            asyncio.run(drive_bare(base_url, args.requests, args.concurrency))
            bare.append((time.perf_counter() - started) / ideal)
            urllib.request.urlopen(urllib.request.Request(reset_url, method="POST")).close()
            server_cpu_start = process_cpu_seconds(process.pid)
            with tempfile.TemporaryDirectory() as tmp:
                cpu_start, wall_start = time.process_time(), time.perf_counter()
                asyncio.run(drive(base_url, args.requests, args.concurrency, Path(tmp) / "cache.sqlite"))
                wall = time.perf_counter() - wall_start
                cpu = time.process_time() - cpu_start
            server_cpu_end = process_cpu_seconds(process.pid)
            with urllib.request.urlopen(stats_url) as response:
                stats = json.load(response)
            ratios.append(wall / ideal)
            server = (
                f"{(server_cpu_end - server_cpu_start) / stats['requests'] * 1000:.3f} ms"
                if server_cpu_start is not None and server_cpu_end is not None
                else "n/a"
            )
            print(
                f"run {run}: wall {wall:.3f} s  ratio {wall / ideal:.3f} (bare aiohttp {bare[-1]:.3f})"
                f"  client CPU/call {cpu / args.requests * 1000:.3f} ms  server CPU/call {server}"
                f"  server max in flight {stats['max_in_flight']} (requests seen {stats['requests']})"
            )
    finally:
        process.terminate()
        process.wait(timeout=10)
    spread = f"runs {min(ratios):.3f}-{max(ratios):.3f}"
    print(f"bare aiohttp median {statistics.median(bare):.3f}")
    print(f"wrapper / bare      {statistics.median(ratios) / statistics.median(bare):.3f}")
    print(f"ratio median        {statistics.median(ratios):.3f}  (goal <= 1.2; {spread})")


if __name__ == "__main__":
    main()
