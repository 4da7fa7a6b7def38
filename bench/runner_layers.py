"""Where the runner's CPU per sample goes, layer by layer, over a bare aiohttp client, in one interleaved run.

Issue 32 asks for the runner's CPU per sample to be at most 1.3x a bare aiohttp client sending the same requests.
This bench splits the difference into the layers a single-call sample passes through, each measured in its own
process (``bench/single_call_drive.py``) against one scripted server (same requests, same concurrency),
interleaved round by round so a slower minute on a shared machine hits every layer alike:

* ``bare``: aiohttp alone (what the HTTP client and the event loop cost);
* ``floor``: aiohttp plus the least a run that keeps its answers must add (a cache key, a cache lookup, the parsed
  answer, the answer cached and a row stored in SQLite), in raw ``sqlite3`` with no bedside code on the path: what
  it costs over ``bare`` is under any runner's CPU, however it is written;
* ``model``: bedside's model layer without a cache (``Model.generate``: provider, retries, limiter, accounting);
* ``model+cache``: the same with the SQLite response cache (key, lookup, batched write);
* ``runner``: a whole run (``execute``: plan, sample loop, scorer, store) with no response cache;
* ``runner+cache``: the same with the cache, what ``bench/before_after.py`` measures as "new".

Printed: each layer's median CPU ms per sample, its ratio to ``bare``, and what it adds over the layer below.

Usage: ``python bench/runner_layers.py [--samples 2000] [--latency-ms 1] [--concurrency 100] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from llm_overhead import start_server
from single_call_drive import LAYERS, drive_in_process

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def measure(layer: str, base_url: str, args: argparse.Namespace) -> float:
    """One drive of ``layer`` in its own process: CPU milliseconds per sample."""
    found = drive_in_process(layer, base_url, args.samples, args.concurrency, ROOT / "src")
    return found["cpu"] / int(args.samples) * 1000


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
    below = {"floor": "bare", "model": "bare", "model+cache": "model", "runner": "model", "runner+cache": "runner"}
    print("median CPU ms per sample, over bare aiohttp, and what the layer adds:")
    for layer in LAYERS:
        added = f"  {median[layer] - median[below[layer]]:+.3f} ms over {below[layer]}" if layer in below else ""
        print(f"  {layer:13} {median[layer]:.3f} ms  {median[layer] / median['bare']:.2f}x bare{added}")
    print(
        f"issue 32's goal: runner+cache at most 1.3x bare; now {median['runner+cache'] / median['bare']:.2f}x, and a "
        f"client that only caches and stores its answers is already {median['floor'] / median['bare']:.2f}x"
    )


if __name__ == "__main__":
    main()
