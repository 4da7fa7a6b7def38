"""Does Content Edit-F1 track how much oncologists actually edited GPT-4 drafts? (OncQA stage 2)

Each OncQA stage-2 row has a GPT-4 draft reply (``raw_response``), the oncologist's edited version
(``doc_change``) and the oncologist's acceptability label (``q3``). With the draft as the draft and the edited
version as the reference, this prints:

* the pairs whose texts are identical, and how many of them score Content Edit-F1 = 1.0 (all must);
* over the edited pairs, Spearman's rho between 1 - Edit-F1 and the character Levenshtein distance divided by
  the reference length (higher edit load should mean a larger share rewritten);
* mean Edit-F1 (and micro P/R/F1) by the acceptability label.

The file is read from ``../shared/data/external`` (never copied into the project). Usage:
``python bench/validate_oncqa.py [--matcher embedding|lexical] [--csv PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import defaultdict
from pathlib import Path
from statistics import fmean

DEFAULT_CSV = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "external"
    / "AIM-Harvard_OncQA"
    / "Data"
    / "parsed_data"
    / "stage2.csv"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--matcher", choices=("embedding", "lexical"), default="embedding")
    args = parser.parse_args()
    if not args.csv.is_file():
        print(f"skipped: {args.csv} not found (../shared/data/external must sit beside the repository)")
        return 0

    from rapidfuzz.distance import Levenshtein
    from scipy.stats import spearmanr

    from bedside.tasks.drafting.cases import read_oncqa
    from bedside.tasks.drafting.editjudge import edit_judge, summarise
    from bedside.tasks.drafting.matchers import make_matcher

    pairs = read_oncqa(args.csv)
    matcher = make_matcher(args.matcher)
    started = time.perf_counter()

    async def judge_all() -> list:  # type: ignore[type-arg]
        return [await edit_judge(p.reference, p.draft, matcher) for p in pairs]

    judgements = asyncio.run(judge_all())
    elapsed = time.perf_counter() - started
    print(f"OncQA stage 2: {len(pairs)} pairs, {args.matcher} matcher, {elapsed:.1f} s")

    identical = [(p, j) for p, j in zip(pairs, judgements, strict=True) if p.draft == p.reference]
    perfect = sum(j.counts.f1 == 1.0 for _, j in identical)
    print(f"identical draft and reference: {len(identical)} pairs, Edit-F1 = 1.0 for {perfect}")

    edited = [(p, j) for p, j in zip(pairs, judgements, strict=True) if p.draft != p.reference]
    load = [1 - j.counts.f1 for _, j in edited]
    distance = [Levenshtein.distance(p.draft, p.reference) / max(len(p.reference), 1) for p, _ in edited]
    rho, p_value = spearmanr(load, distance)
    print(
        f"edited pairs: {len(edited)}; Spearman rho(1 - Edit-F1, Levenshtein / reference length) = {rho:.3f} "
        f"(p = {p_value:.2g})"
    )

    by_label: dict[str, list] = defaultdict(list)  # type: ignore[type-arg]
    for pair, judgement in zip(pairs, judgements, strict=True):
        by_label[pair.label or "(none)"].append(judgement)
    print("by acceptability label (all pairs):")
    for label, group in sorted(by_label.items(), key=lambda item: -fmean(j.counts.f1 for j in item[1])):
        micro = summarise(group).micro
        print(
            f"  {label:<60} n={len(group):>3}  mean Edit-F1 {fmean(j.counts.f1 for j in group):.3f}  "
            f"micro P {micro.precision:.3f} R {micro.recall:.3f} F1 {micro.f1:.3f}"
        )
    return 0 if perfect == len(identical) else 1


if __name__ == "__main__":
    sys.exit(main())
