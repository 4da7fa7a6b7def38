"""How long ``bedside`` takes to start, this tree against a git ref, in one run (issue 46: "each command takes
10-45 s to start on a busy machine"; the goal is under 1 s on a quiet one).

Each round starts ``python -m bedside.cli --help`` from the ref's ``src`` and from this tree's (``PYTHONPATH``),
interleaved, and times the process's wall; then ``python -X importtime -c "import bedside.cli"`` on this tree
lists the bedside modules that cost most (cumulative), the place to look when start-up grows again.

Prints ``bedside --help wall s: ref R, new N, ratio new/ref X`` and the top modules.

Usage: ``python bench/cli_startup.py [--ref a26a68d] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from before_after import checkout

ROOT = Path(__file__).resolve().parents[1]


def started(src: Path) -> float:
    """Seconds one ``bedside --help`` takes from ``src``, start to exit."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    begin = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bedside.cli", "--help"], env=env, check=True, capture_output=True)
    return time.perf_counter() - begin


def top_imports(src: Path, count: int) -> list[tuple[float, str]]:
    """The bedside modules with the largest cumulative import time (ms) when ``bedside.cli`` is imported."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    found = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import bedside.cli"], env=env, check=True, capture_output=True,
        text=True,
    ).stderr  # fmt: skip
    rows = []
    for line in found.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]) / 1000, parts[2].strip()))
    return sorted((r for r in rows if r[1].startswith(("bedside", "numpy", "sqlalchemy", "scipy"))), reverse=True)[
        :count
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ref", default="a26a68d", help="the old code: a git ref (default: before lazy imports)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with checkout(args.ref) as old:
        ref, new = [], []
        for _ in range(args.repeat):
            ref.append(started(old / "src"))
            new.append(started(ROOT / "src"))
    r, n = statistics.median(ref), statistics.median(new)
    print(f"bedside --help wall s (median of {args.repeat}): ref {r:.3f}, new {n:.3f}, ratio new/ref {n / r:.2f}")
    print("largest cumulative imports of bedside.cli (ms), this tree:")
    for ms, module in top_imports(ROOT / "src", 12):
        print(f"  {ms:8.1f}  {module}")


if __name__ == "__main__":
    main()
