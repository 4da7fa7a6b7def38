"""Ranking measures for retrieval, e.g. matching clinician instructions to the right record (MedAlign).

Both take, per query, the ranked ids that were retrieved and the id (or set of ids) that is relevant:

* Success@K: the share of queries with a relevant id among the first K retrieved;
* MRR@K: the mean over queries of 1/rank of the first relevant id within the first K (0 when none is).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


def _relevant_rank(ranked: Sequence[str], relevant: str | Collection[str], k: int) -> int | None:
    wanted = {relevant} if isinstance(relevant, str) else set(relevant)
    for rank, item in enumerate(ranked[:k], start=1):
        if item in wanted:
            return rank
    return None


def _check(ranked: Sequence[Sequence[str]], relevant: Sequence[str | Collection[str]], k: int) -> None:
    if len(ranked) != len(relevant):
        raise ValueError(f"{len(ranked)} rankings for {len(relevant)} relevance entries")
    if not ranked:
        raise ValueError("no queries to score")
    if k < 1:
        raise ValueError("k must be at least 1")


def success_at_k(ranked: Sequence[Sequence[str]], relevant: Sequence[str | Collection[str]], k: int) -> float:
    _check(ranked, relevant, k)
    return sum(_relevant_rank(r, rel, k) is not None for r, rel in zip(ranked, relevant, strict=True)) / len(ranked)


def mrr_at_k(ranked: Sequence[Sequence[str]], relevant: Sequence[str | Collection[str]], k: int) -> float:
    _check(ranked, relevant, k)
    total = 0.0
    for r, rel in zip(ranked, relevant, strict=True):
        rank = _relevant_rank(r, rel, k)
        total += 1.0 / rank if rank else 0.0
    return total / len(ranked)
