"""Win rates, head-to-head matrices and mean ranks from per-item rankings with ties (MedAlign, Figure 2).

A ranking gives each system a rank for one item: lower is better, equal ranks are ties. Entry (i, j) of the
head-to-head matrix is the share of items ranking both i and j on which i was *strictly* better than j; ties
count in the denominator but as a win for neither, so (i, j) + (j, i) + tie share = 1. A system's win rate is
the mean of its row over the other systems.

With ``ties="exclude"`` tied items leave the denominator instead: (i, j) is the share of the *non-tied* items
where i beat j, so (i, j) + (j, i) = 1 and the win rates of all systems average 0.5. MedAlign's Table 3 win
rates are computed this way (its six WRs sum to 3.000); a pair tied on every shared item has no share (None).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class HeadToHead:
    systems: list[str]
    wins: list[list[float | None]]  # wins[i][j]: share of shared items where systems[i] beat systems[j]
    ties: list[list[float | None]]
    shared: list[list[int]]  # items ranking both

    def win_rate(self, system: str) -> float | None:
        i = self.systems.index(system)
        row = [w for j, w in enumerate(self.wins[i]) if j != i and w is not None]
        return sum(row) / len(row) if row else None


def head_to_head(
    rankings: Mapping[str, Mapping[str, float]],
    systems: Sequence[str] | None = None,
    *,
    ties: Literal["count", "exclude"] = "count",
) -> HeadToHead:
    """``rankings[item][system] = rank`` → pairwise strict-win shares; systems in the given or sorted order.

    ``ties="count"`` keeps tied items in the denominator; ``"exclude"`` leaves them out (MedAlign)."""
    if ties not in ("count", "exclude"):
        raise ValueError(f"ties must be 'count' or 'exclude', not {ties!r}")
    names = list(systems) if systems is not None else sorted({s for ranks in rankings.values() for s in ranks})
    n = len(names)
    wins: list[list[float | None]] = [[None] * n for _ in range(n)]
    tie_share: list[list[float | None]] = [[None] * n for _ in range(n)]
    shared = [[0] * n for _ in range(n)]
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i == j:
                continue
            both = [r for r in rankings.values() if a in r and b in r]
            shared[i][j] = len(both)
            if both:
                won = sum(r[a] < r[b] for r in both)
                tied = sum(r[a] == r[b] for r in both)
                tie_share[i][j] = tied / len(both)
                denominator = len(both) - tied if ties == "exclude" else len(both)
                wins[i][j] = won / denominator if denominator else None
    return HeadToHead(names, wins, tie_share, shared)


def mean_rank(rankings: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Each system's mean rank over the items that rank it (lower is better)."""
    totals: dict[str, list[float]] = {}
    for ranks in rankings.values():
        for system, rank in ranks.items():
            totals.setdefault(system, []).append(float(rank))
    return {system: sum(values) / len(values) for system, values in sorted(totals.items())}


def ranks_from_scores(scores: Mapping[str, float], *, higher_is_better: bool = True) -> dict[str, float]:
    """Competition-style ranks (1 = best; equal scores share the best of their ranks: 1, 2, 2, 4)."""
    ordered = sorted(scores.values(), reverse=higher_is_better)
    return {system: float(ordered.index(score) + 1) for system, score in scores.items()}
