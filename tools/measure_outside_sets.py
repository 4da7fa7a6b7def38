"""Count what the clinical-safety guard and the fidelity checker get right on each shipped outside-written set:
the figures a round of rules is measured by (docs/tasks/drafting.md and docs/fidelity/simulator.md, "Its ...
round"), and the floors of ``tests/test_outside_sets.py``.

Counts only, never a pair or a sentence: a held-out set's text must not reach a terminal or a log, or it is read.

A round is measured as two runs of this script, the code before the change and after it, then a comparison::

    git worktree add /tmp/before REV
    PYTHONPATH=/tmp/before/src python tools/measure_outside_sets.py --out before.json
    python tools/measure_outside_sets.py --out after.json --compare before.json

``--compare`` prints each set whose counts moved and the totals over the sets unread in both runs (guard: the
``held out`` sets; fidelity: the frozen sets whose provenance does not call them development sets). ``--only
guard`` or ``--only fidelity`` measures one checker; ``--sets`` names sets to measure (the guard's by their short
name, "dev 3" or "held out 40"; the fidelity checker's by their full name).

``--per-item`` also keeps each item's verdict, on the sets already read only (bedside's own and the development
sets), and ``--compare`` then names the items that moved: what a round changed on text it may read. An unread
set's items are never kept, so its ids cannot point anyone at its sentences.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

GUARD_COUNTS = (
    "rejected",
    "kept",
    "reversed_matched",
    "paraphrases_matched",
    "passed_silently",
    "reversed_matched_uncertain_reject",
    "paraphrases_matched_uncertain_reject",
)
"""Per guard set: reversed pairs the guard rejects and paraphrases it keeps, what the default matcher behind it
matches, reversed pairs it passes with no doubt, and what the matcher matches with ``--uncertain reject``."""
FIDELITY_COUNTS = ("contradicted_hits", "contradicted_false", "unsupported_hits", "unsupported_false")
"""Per fidelity set: the combined checker's right and wrong calls of each label."""


def measure_guard(names: set[str] | None = None, *, per_item: bool = False) -> dict[str, dict[str, Any]]:
    from bedside.tasks.drafting.guard import builtin_guard_sets, evaluate_guard, matcher_rates
    from bedside.tasks.drafting.matchers import EmbeddingMatcher, GuardedMatcher

    default = GuardedMatcher(EmbeddingMatcher())
    refusing = GuardedMatcher(EmbeddingMatcher(), uncertain="reject")
    measured = {}
    for labelled in builtin_guard_sets():
        name = labelled.name.removeprefix("outside-written, ")
        if names is not None and name not in names:
            continue
        total = evaluate_guard(labelled.pairs).total
        rates, refused = matcher_rates(labelled.pairs, default), matcher_rates(labelled.pairs, refusing)
        counts = (
            total.rejected,
            total.kept,
            rates.reversed_matched,
            rates.paraphrases_matched,
            total.passed_silently,
            refused.reversed_matched,
            refused.paraphrases_matched,
        )
        row: dict[str, Any] = {"unread": labelled.held_out, **dict(zip(GUARD_COUNTS, map(int, counts), strict=True))}
        if per_item and not labelled.held_out:
            row["items"] = _guard_items(labelled.pairs, default)
        measured[name] = row
        _progress(f"guard: {name}")
    return measured


def _guard_items(pairs: Sequence[Any], matcher: Any) -> dict[str, str]:
    """Each pair's guard verdict and whether the default matcher decided it as labelled: "conflict/right"."""
    from bedside.tasks.drafting.guard import default_guard

    async def spans() -> list[Any]:
        return [(await matcher.match(pair.reference, pair.candidate)).span for pair in pairs]

    guard = default_guard()
    return {
        pair.id: f"{guard.read(pair.reference, pair.candidate).verdict}/"
        f"{'right' if (span is not None) == pair.match else 'wrong'}"
        for pair, span in zip(pairs, asyncio.run(spans()), strict=True)
    }


def measure_fidelity(names: set[str] | None = None, *, per_item: bool = False) -> dict[str, dict[str, Any]]:
    from bedside.sim.validation import BUILTIN_SENTENCE_SETS, evaluate_checkers, read_fidelity_items

    measured = {}
    for labelled in BUILTIN_SENTENCE_SETS:
        if names is not None and labelled.name not in names:
            continue
        (combined,) = asyncio.run(evaluate_checkers(read_fidelity_items(labelled.path), ["combined"]))
        figures = combined.by_split["all"].per_label
        counts = []
        for label in ("contradicted", "unsupported"):
            hits, predicted = int(figures[label]["hits"] or 0), int(figures[label]["predicted"] or 0)
            counts += [hits, predicted - hits]
        unread = labelled.held_out
        row: dict[str, Any] = {"unread": unread, **dict(zip(FIDELITY_COUNTS, counts, strict=True))}
        if per_item and not unread:
            row["items"] = {key: "/".join(value) for key, value in combined.labels.items()}
        measured[labelled.name] = row
        _progress(f"fidelity: {labelled.name}")
    return measured


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Each set whose counts moved, then the totals over the sets unread in both runs, as printed lines."""
    lines = []
    for checker, fields in (("guard", GUARD_COUNTS), ("fidelity", FIDELITY_COUNTS)):
        old, new = before.get(checker, {}), after.get(checker, {})
        both = [name for name in new if name in old]
        for name in both:
            moved = [f"{f} {old[name][f]} -> {new[name][f]}" for f in fields if old[name][f] != new[name][f]]
            if moved:
                lines.append(f"{checker} {name}: {', '.join(moved)}")
            old_items, new_items = old[name].get("items", {}), new[name].get("items", {})
            for item in sorted(set(old_items) & set(new_items)):
                if old_items[item] != new_items[item]:
                    lines.append(f"  {item}: {old_items[item]} -> {new_items[item]}")
        unread = [name for name in both if old[name]["unread"] and new[name]["unread"]]
        if unread:
            totals = ", ".join(
                f"{f} {sum(old[n][f] for n in unread)} -> {sum(new[n][f] for n in unread)}" for f in fields
            )
            lines.append(f"{checker}, the {len(unread)} sets unread in both runs: {totals}")
    return lines


def _progress(line: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} measured {line}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, required=True, help="where the counts go (JSON)")
    parser.add_argument("--compare", type=Path, help="an earlier run's JSON: print what moved")
    parser.add_argument("--only", choices=("guard", "fidelity"), help="measure one checker only")
    parser.add_argument("--sets", nargs="+", help="only these sets (guard: short names; fidelity: full names)")
    parser.add_argument(
        "--per-item", action="store_true", help="keep each item's verdict on the sets already read, to compare"
    )
    args = parser.parse_args(argv)
    before = None
    if args.compare is not None:
        try:
            before = json.loads(args.compare.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            parser.error(f"--compare {args.compare}: {exc}")
    names = set(args.sets) if args.sets else None
    counts: dict[str, Any] = {}
    if args.only in (None, "guard"):
        counts["guard"] = measure_guard(names, per_item=args.per_item)
    if args.only in (None, "fidelity"):
        counts["fidelity"] = measure_fidelity(names, per_item=args.per_item)
    if names is not None:
        found = set(counts.get("guard", {})) | set(counts.get("fidelity", {}))
        if names - found:
            parser.error(f"--sets: no shipped set named {sorted(names - found)}")
    args.out.write_text(json.dumps(counts, indent=1) + "\n", encoding="utf-8")
    print(f"{args.out}: {sum(len(v) for v in counts.values())} sets")
    for line in compare(before, counts) if before is not None else []:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
