"""The outside-written held-out sets of issue 45: frozen as written, and kept as regression floors.

Each was written by a helper who had never read the checkers' rules, and measured once before any rule changed
(the figures in ``docs/tasks/drafting.md`` and ``docs/fidelity/simulator.md``). Editing a file would make its
figure one more development figure, so each file's digest is pinned here. The floors are those first
measurements: a later change may raise them, never lower them.
"""

from __future__ import annotations

import asyncio
import hashlib
from importlib import resources

from bedside.sim.validation import BUILTIN_SENTENCE_SETS, evaluate_checkers, read_fidelity_items
from bedside.tasks.drafting.guard import builtin_guard_sets, evaluate_guard, matcher_rates

FROZEN = {
    (
        "bedside.tasks.drafting",
        "guard_heldout.jsonl",
    ): "0fff6c14056365b78fb192c84fca1f469af2849ea5b3e79cc434375ba6e8db76",
    ("bedside.sim", "fidelity_heldout_2.jsonl"): "e933c98e5cde99af083f795fec537b50d398ce1911cd95c61e6f1296acd2e1ed",
}


def test_the_outside_sets_are_frozen_as_written() -> None:
    for (package, name), digest in FROZEN.items():
        data = (resources.files(package) / "data" / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, f"{name} changed: write a new outside set instead"


def test_the_guard_does_not_fall_below_its_first_outside_measurement() -> None:
    own, outside = builtin_guard_sets()
    assert (len(outside.pairs), sum(not p.match for p in outside.pairs)) == (100, 60)
    guard = evaluate_guard(outside.pairs).total
    assert guard.rejected >= 29  # of 60 reversed pairs
    assert guard.kept >= 20  # of 40 paraphrases
    rates = matcher_rates(outside.pairs)
    assert rates.reversed_matched <= 31  # of 60: each a clinically reversed sentence counted as kept content
    assert rates.paraphrases_matched >= 19  # of 40
    assert matcher_rates(own.pairs).reversed_matched == 0  # the earlier reversed pairs stay unmatched


def test_the_fidelity_checker_does_not_fall_below_its_first_outside_measurement() -> None:
    newest = next(s for s in BUILTIN_SENTENCE_SETS if s.name == "outside-written 2026-11-28")
    items = read_fidelity_items(newest.path)
    assert len(items) == 160
    (combined,) = asyncio.run(evaluate_checkers(items, ["combined"]))
    figures = combined.by_split["all"].per_label
    count = {(label, key): int(figures[label][key] or 0) for label in figures for key in ("hits", "predicted")}
    assert count["contradicted", "hits"] >= 36  # of 55; 50 predicted
    assert count["contradicted", "predicted"] - count["contradicted", "hits"] <= 14  # false contradictions
    assert count["unsupported", "hits"] >= 28  # of 54 predicted
    assert count["unsupported", "predicted"] - count["unsupported", "hits"] <= 26
