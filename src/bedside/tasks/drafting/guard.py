"""EditJudge's clinical-safety guard: a draft sentence that conflicts with the clinician's is not a match.

The rules live in :mod:`bedside.text.conflicts` (shared with the simulator fidelity checker); this module holds
what is EditJudge's own: the guard's modes and bedside's labelled pairs (``data/guard_pairs.jsonl``: paraphrases
and hard negatives of each kind, written for bedside) with the evaluation ``bedside drafting guard-eval`` prints.
The pairs are a regression set, not an unbiased estimate of accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bedside.text.conflicts import (
    CONFLICT_KINDS,
    ClinicalGuard,
    ClinicalSignals,
    Conflict,
    DrugClass,
    DrugMention,
    Instruction,
    default_guard,
    drug_classes,
)

GuardMode = Literal["reject", "flag", "off"]
GUARD_MODES: tuple[GuardMode, ...] = ("reject", "flag", "off")


@dataclass(frozen=True)
class GuardPair:
    """One labelled pair: a clinician's sentence, a draft sentence, whether it is a match, and its kind."""

    id: str
    reference: str
    candidate: str
    match: bool
    kind: str  # "paraphrase" or one of CONFLICT_KINDS
    category: str = ""  # what the pair tests beyond its kind ("dose order", "food", ...); "" for the first set


def read_guard_pairs(path: str | Path | None = None) -> list[GuardPair]:
    """Labelled pairs from a JSONL file (fields id, reference, candidate, match, kind, optional category);
    bedside's own (``data/guard_pairs.jsonl``: paraphrases and hard negatives of each kind) by default."""
    import json
    from importlib import resources

    if path is None:
        source = "bedside's guard_pairs.jsonl"
        text = (resources.files("bedside.tasks.drafting") / "data" / "guard_pairs.jsonl").read_text(encoding="utf-8")
    else:
        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{source}: cannot read guard pairs: {exc}") from None
    pairs = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            pair = GuardPair(**item)
        except (json.JSONDecodeError, TypeError) as exc:
            raise ValueError(f"{source}, line {number}: not a guard pair ({exc})") from None
        if not isinstance(pair.match, bool) or not all(isinstance(v, str) for v in (pair.reference, pair.candidate)):
            raise ValueError(f"{source}, line {number}: reference and candidate must be text, match true or false")
        pairs.append(pair)
    return pairs


@dataclass(frozen=True)
class GuardScore:
    """How the guard does on one group of labelled pairs: hard negatives rejected, paraphrases kept."""

    group: str
    negatives: int
    rejected: int
    paraphrases: int
    kept: int

    @property
    def rejection(self) -> float | None:
        """Share of hard negatives with a conflict (None when the group has none)."""
        return self.rejected / self.negatives if self.negatives else None

    @property
    def recall(self) -> float | None:
        """Share of paraphrases without a conflict: what the guard leaves for EditJudge to match."""
        return self.kept / self.paraphrases if self.paraphrases else None


@dataclass(frozen=True)
class GuardEvaluation:
    total: GuardScore
    groups: tuple[GuardScore, ...]  # per category (the first set's pairs per conflict kind)
    missed: tuple[GuardPair, ...]  # hard negatives that passed
    rejected: tuple[tuple[GuardPair, tuple[Conflict, ...]], ...]  # paraphrases the guard rejected, and why


def evaluate_guard(pairs: Sequence[GuardPair], guard: ClinicalGuard | None = None) -> GuardEvaluation:
    """The guard's hard-negative rejection and paraphrase recall on labelled pairs, overall and per group."""
    chosen = guard or default_guard()
    missed: list[GuardPair] = []
    rejected: list[tuple[GuardPair, tuple[Conflict, ...]]] = []
    counts: dict[str, list[int]] = {}
    for pair in pairs:
        conflicts = tuple(chosen.conflicts(pair.reference, pair.candidate))
        group = pair.category or (pair.kind if not pair.match else "paraphrase (first set)")
        tally = counts.setdefault(group, [0, 0, 0, 0])
        if pair.match:
            tally[2] += 1
            tally[3] += not conflicts
            if conflicts:
                rejected.append((pair, conflicts))
        else:
            tally[0] += 1
            tally[1] += bool(conflicts)
            if not conflicts:
                missed.append(pair)
    groups = tuple(GuardScore(name, *tally) for name, tally in counts.items())
    total = GuardScore("all", *(sum(g[i] for g in counts.values()) for i in range(4)))
    return GuardEvaluation(total, groups, tuple(missed), tuple(rejected))


__all__ = [
    "CONFLICT_KINDS",
    "GUARD_MODES",
    "ClinicalGuard",
    "ClinicalSignals",
    "Conflict",
    "DrugClass",
    "DrugMention",
    "GuardEvaluation",
    "GuardMode",
    "GuardPair",
    "GuardScore",
    "Instruction",
    "default_guard",
    "drug_classes",
    "evaluate_guard",
    "read_guard_pairs",
]
