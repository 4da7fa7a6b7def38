"""The runner's CPU per sample and wall/ideal, old code against new, in one run on one scripted server.

The old code is any git ref (``main`` by default) checked out with ``git worktree`` into a temporary folder; the
new code is this working tree. Each drive runs in its own process (``PYTHONPATH`` = that tree's ``src``), so
the two never share imports, and drives are interleaved (bare aiohttp, old, new, bare, old, new, ...) so a
slower minute on this shared machine hits all three alike. A bare aiohttp client sending the same requests (no
runner, cache, store or accounting) is the floor the HTTP client and the server set.

Every drive (``bench/single_call_drive.py``, layers ``bare`` and ``runner+cache``) is a single-call task (one
model call per sample, the ``words`` scorer) through ``execute`` with a fresh SQLite store and response cache,
after a short warm-up drive in the same process (one-time imports are not what per-sample CPU is about).
Prints, per variant, the median CPU ms per sample and wall/ideal, the new/old ratios, and each runner's CPU per
sample over the bare client's (absolute milliseconds vary several-fold between machines; that ratio does not).

Usage: ``python bench/before_after.py [--ref main] [--samples 2000] [--latency-ms 1] [--concurrency 100]
[--repeat 3]``
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from llm_overhead import start_server
from single_call_drive import drive_in_process

ROOT = Path(__file__).resolve().parents[1]


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
    return drive_in_process(mode, base_url, args.samples, args.concurrency, src)


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
                    found = measure(src, "bare" if variant == "bare" else "runner+cache", base_url, args)
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
