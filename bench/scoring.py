"""Scoring cost per sample, this tree against a git ref, in one run (issue 45).

For the drafting task's EditJudge evaluation (embedding matcher behind the clinical-safety guard, offline theme
classifier) and for the generic ``cosine`` (MiniLM) scorer: CPU and wall milliseconds per scored sample, the ref's
code and this tree's, each drive in its own process (``PYTHONPATH`` = that tree's ``src``) and the drives
interleaved (ref, new, ref, new, ...) so a slower minute of this shared machine hits both alike. The work is
``bench/scoring_drive.py``'s: every clinician reply of the demo's portal messages against ``--models`` models'
drafts, as a sweep scores them. Each drive uses its code's default threads (the ref's onnxruntime sized to every
core). Then MiniLM's own speed: ``MiniLMEmbedder`` (one thread) against a plain loop over onnxruntime on the same
model and texts (one thread, batches of 64 sorted by length), sentences per second; and its CPU per text at
several padded-token budgets a call (where ``BATCH_TOKENS`` comes from).

Prints ``... ratio new/ref R`` per measure (lower is better for milliseconds, higher for sentences/s).

Usage: ``python bench/scoring.py [--ref 02e4b36] [--models 4] [--repeat 3]``
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

from before_after import checkout

ROOT = Path(__file__).resolve().parents[1]
DRIVE = Path(__file__).with_name("scoring_drive.py")


def drive(src: Path, mode: str, models: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, str(DRIVE), mode, "--models", str(models)], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{mode} drive on {src} failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ref", default="02e4b36", help="the old code: a git ref (default 02e4b36, before issue 45)")
    parser.add_argument("--models", type=int, default=4, help="drafts scored per clinician reply (default 4)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds; medians are printed (default 3)")
    args = parser.parse_args()
    new_src = ROOT / "src"
    with checkout(args.ref) as old_tree:
        old_src = old_tree / "src"
        results: dict[tuple[str, str], list[dict[str, float]]] = {}
        for _ in range(args.repeat):
            for mode in ("editjudge", "minilm"):
                for name, src in (("ref", old_src), ("new", new_src)):
                    results.setdefault((mode, name), []).append(drive(src, mode, args.models))
            for mode in ("onnx", "embedder"):
                results.setdefault((mode, "new"), []).append(drive(new_src, mode, args.models))
    print(f"scoring, {args.repeat} interleaved rounds, medians; ref {args.ref}, {os.cpu_count()} cores")
    for mode, label in (("editjudge", "EditJudge drafting evaluation"), ("minilm", "minilm (cosine) scorer")):
        n = int(results[(mode, "new")][0]["count"])
        for measure in ("cpu_ms", "wall_ms"):
            old = statistics.median(r[measure] for r in results[(mode, "ref")])
            new = statistics.median(r[measure] for r in results[(mode, "new")])
            print(
                f"{label}, {measure.replace('_ms', '')} ms per sample ({n} samples): "
                f"ref {old:.2f}, new {new:.2f}, ratio new/ref {new / old:.3f}"
            )
    n = int(results[("embedder", "new")][0]["count"])
    rates = {
        mode: statistics.median(1000 / r["wall_ms"] for r in results[(mode, "new")]) for mode in ("onnx", "embedder")
    }
    print(
        f"MiniLM sentences/s, one thread ({n} distinct sentences): plain onnxruntime loop {rates['onnx']:.0f}, "
        f"MiniLMEmbedder {rates['embedder']:.0f}, ratio embedder/plain {rates['embedder'] / rates['onnx']:.3f}"
    )
    budgets = drive(new_src, "budgets", args.models)
    for kind in ("sentences", "replies"):
        shown = ", ".join(
            f"{'64 a batch' if budget == '16384' else budget + ' tokens'} {value:.1f}"
            for key, value in budgets.items()
            if key.startswith(kind) and (budget := key.split("@")[1])
        )
        print(f"MiniLM CPU ms per text, one thread, by padded tokens a call ({kind}): {shown}")


if __name__ == "__main__":
    main()
