"""Rater reliability with bootstrap intervals over items: what a review's meta-evaluation reports.

Point estimates come from :mod:`bedside.stats.agreement` (Krippendorff's α, percent agreement, Cohen's κ) or are
computed here where no library call fits the data's shape (Fleiss' κ, Kendall's W). Intervals are percentile
bootstraps over *items*: each item is reduced to a small array of counts (its coincidence matrix, confusion
matrix, agreeing pairs, ...), a resample is a weighted sum of those arrays, and the statistic is a formula of the
summed counts. So 1,000 resamples of a review with thousands of items take milliseconds, instead of re-running a
library call per resample; tests check that each count formula gives the library's value on the full data.

Inputs are plain: a *unit* is one thing rated (an item, or a part of one such as one output's flag), given as
``{rater: category}``; units are grouped per item, because items, not units, are what the bootstrap resamples.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

BOOTSTRAP_RESAMPLES = 1000
MIN_ITEMS_FOR_CI = 3


@dataclass(frozen=True)
class Estimate:
    """A statistic with its bootstrap 95% interval (None where undefined or with too few items) and its n."""

    name: str
    value: float | None
    low: float | None
    high: float | None
    n: int
    note: str = ""


# ---- count formulas (vectorised over leading axes, so one call evaluates every resample) --------------------


def resampled_totals(parts: Any, seed: int, resamples: int = BOOTSTRAP_RESAMPLES) -> Any:
    """For each bootstrap resample of the items, the sum of the items' count arrays (``parts[i]``, drawn with
    replacement): (resample weights) @ (items' counts), in chunks."""
    n = parts.shape[0]
    flat = parts.reshape(n, -1)
    rng = np.random.default_rng(seed)
    out = []
    for start in range(0, resamples, 100):
        size = min(100, resamples - start)
        draws = rng.integers(0, n, size=(size, n))
        offsets = (np.arange(size) * n)[:, None]
        weights = np.bincount((draws + offsets).ravel(), minlength=size * n).reshape(size, n).astype(float)
        out.append(weights @ flat)
    return np.concatenate(out).reshape(resamples, *parts.shape[1:])


def percentile_interval(draws: Any) -> tuple[float | None, float | None]:
    """The 2.5th and 97.5th percentiles of the finite draws; none when most draws are undefined."""
    finite = draws[np.isfinite(draws)]
    if finite.size < len(draws) // 2:
        return None, None
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def alpha_from_coincidences(coincidences: Any) -> Any:
    """Krippendorff's α (nominal) from coincidence matrices (..., C, C): 1 − (n − 1)·D_o / Σ_{c≠k} n_c n_k."""
    n_c = coincidences.sum(axis=-1)
    n = n_c.sum(axis=-1)
    observed = n - np.trace(coincidences, axis1=-2, axis2=-1)
    expected = n**2 - (n_c**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - (n - 1.0) * observed / expected


def kappa_from_confusion(confusion: Any) -> Any:
    """Cohen's κ from confusion matrices (..., C, C)."""
    total = confusion.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = np.trace(confusion, axis1=-2, axis2=-1) / total
        expected = (confusion.sum(axis=-1) * confusion.sum(axis=-2)).sum(axis=-1) / total**2
        return (observed - expected) / (1.0 - expected)


def ratio_of_totals(parts: Any) -> Any:
    """First total over second (agreeing pairs over pairs, a sum over a count)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return parts[..., 0] / parts[..., 1]


def fleiss_from_parts(parts: Any, raters: int) -> Any:
    """Fleiss' κ from per-unit parts ``[P_i, 1, n_i1 .. n_iC]`` summed over units (..., 2 + C), ``raters`` per unit:
    κ = (P̄ − P̄_e) / (1 − P̄_e), P̄ the mean of the units' P_i, P̄_e = Σ_j p_j², p_j the share of ratings in j."""
    units = parts[..., 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_p = parts[..., 0] / units
        shares = parts[..., 2:] / (units * raters)[..., None]
        expected = (shares**2).sum(axis=-1)
        return (mean_p - expected) / (1.0 - expected)


def fleiss_parts(counts: Sequence[int]) -> list[float]:
    """One unit's Fleiss parts from its per-category rating counts: ``[P_i, 1, *counts]``."""
    n = sum(counts)
    agreement = (sum(c * c for c in counts) - n) / (n * (n - 1))
    return [agreement, 1.0, *map(float, counts)]


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float:
    """Fleiss' κ for units each rated by the same number of raters; ``counts[u][c]`` raters put unit u in c."""
    raters = {sum(row) for row in counts}
    if len(raters) != 1 or min(raters) < 2:
        raise ValueError(f"Fleiss' κ needs the same number (≥ 2) of ratings per unit; got {sorted(raters)}")
    parts = np.array([fleiss_parts(row) for row in counts], dtype=float).sum(axis=0)
    return float(fleiss_from_parts(parts, raters.pop()))


def estimate(
    name: str, value: float | None, parts: Any, statistic: Callable[[Any], Any], n: int, *, seed: int = 0
) -> Estimate:
    """``value`` with the percentile interval of ``statistic`` over item resamples of ``parts`` (none with fewer
    than :data:`MIN_ITEMS_FOR_CI` items)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Estimate(name, None, None, None, n)
    if parts.shape[0] < MIN_ITEMS_FOR_CI:
        return Estimate(name, float(value), None, None, n)
    low, high = percentile_interval(statistic(resampled_totals(parts, seed)))
    return Estimate(name, float(value), low, high, n)


def defined(compute: Callable[[], Any]) -> float | None:
    """A statistic's value, None where it is undefined (one category only, no pairs; library warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = float(compute())
        except (ValueError, ZeroDivisionError):
            return None
    return None if math.isnan(value) else value


# ---- agreement between raters on categories ---------------------------------------------------------------


def nominal_agreement(
    kind: str, groups: Sequence[Sequence[Mapping[str, Hashable]]], raters: Sequence[str], *, seed: int = 0
) -> list[Estimate]:
    """Agreement on categorical units: Krippendorff's α and percent agreement always; Cohen's κ between two
    raters; Fleiss' κ with three or more raters when every unit has all of them. ``groups`` holds, per item, its
    units rated by two or more raters (``{rater: category}``); names are prefixed with ``kind``."""
    from bedside.stats.agreement import cohen_kappa, krippendorff_alpha, percent_agreement

    groups = [g for g in groups if g]
    units = [votes for g in groups for votes in g]
    if not units:
        return [Estimate(f"{kind}: agreement", None, None, None, 0, "needs items with two labels")]
    codes = {c: i for i, c in enumerate(sorted({str(v) for votes in units for v in votes.values()}))}
    size = len(codes)
    coincidence = np.zeros((len(groups), size, size))
    pairs = np.zeros((len(groups), 2))
    for g, group in enumerate(groups):
        for votes in group:
            counts = np.bincount([codes[str(v)] for v in votes.values()], minlength=size).astype(float)
            m = counts.sum()
            coincidence[g] += (np.outer(counts, counts) - np.diag(counts)) / (m - 1)
            pairs[g] += [(counts * (counts - 1) / 2).sum(), m * (m - 1) / 2]
    rows = [[codes[str(v[r])] if r in v else None for v in units] for r in raters]
    found = [
        estimate(
            f"{kind}: Krippendorff's α",
            defined(lambda: krippendorff_alpha(rows, level="nominal")),
            coincidence,
            alpha_from_coincidences,
            len(units),
            seed=seed,
        ),
        estimate(
            f"{kind}: percent agreement",
            defined(lambda: percent_agreement([[v.get(r) for v in units] for r in raters])),
            pairs,
            ratio_of_totals,
            len(units),
            seed=seed,
        ),
    ]
    if len(raters) == 2:
        first, second = raters
        confusion = np.zeros((len(groups), size, size))
        both = []
        for g, group in enumerate(groups):
            for votes in group:
                if first in votes and second in votes:
                    confusion[g, codes[str(votes[first])], codes[str(votes[second])]] += 1
                    both.append((str(votes[first]), str(votes[second])))
        kappa = defined(lambda: cohen_kappa([x for x, _ in both], [y for _, y in both]))
        found.append(estimate(f"{kind}: Cohen's κ", kappa, confusion, kappa_from_confusion, len(both), seed=seed))
    elif len(raters) >= 3:
        complete = [[votes for votes in g if len(votes) == len(raters)] for g in groups]
        complete = [g for g in complete if g]
        if complete:
            fleiss = np.zeros((len(complete), 2 + size))
            for g, group in enumerate(complete):
                for votes in group:
                    counts = np.bincount([codes[str(v)] for v in votes.values()], minlength=size)
                    fleiss[g] += fleiss_parts([int(c) for c in counts])
            n_units = int(fleiss[:, 1].sum())
            value = defined(lambda: fleiss_from_parts(fleiss.sum(axis=0), len(raters)))
            found.append(
                estimate(
                    f"{kind}: Fleiss' κ (units rated by all {len(raters)})",
                    value,
                    fleiss,
                    lambda t: fleiss_from_parts(t, len(raters)),
                    n_units,
                    seed=seed,
                )
            )
    return _explain_paradox(found, units)


PARADOX_AGREEMENT = 0.8
PARADOX_CHANCE_CORRECTED = 0.4


def _explain_paradox(found: list[Estimate], units: Sequence[Mapping[str, Any]]) -> list[Estimate]:
    """A note on the chance-corrected statistics when raw agreement is high and they are low: one category
    holds most labels, so chance agreement is high too, and κ and α discount it (the "kappa paradox",
    Feinstein and Cicchetti, J Clin Epidemiol 1990): not a bug, and not evidence the raters agree."""
    from dataclasses import replace

    agreement = next((e.value for e in found if e.name.endswith(": percent agreement")), None)
    if agreement is None or agreement < PARADOX_AGREEMENT:
        return found
    labels = [str(v) for votes in units for v in votes.values()]
    top, count = Counter(labels).most_common(1)[0]
    note = (
        f"agreement {agreement:.0%} but {count / len(labels):.0%} of labels are {top!r}: chance agreement is high, "
        "and this statistic discounts it (the prevalence paradox); read both"
    )
    return [
        replace(e, note=e.note or note)
        if "percent agreement" not in e.name and e.value is not None and e.value < PARADOX_CHANCE_CORRECTED
        else e
        for e in found
    ]


def judge_agreement(kind: str, pairs_by_item: Sequence[Sequence[tuple[str, str]]], *, seed: int = 0) -> list[Estimate]:
    """A judge against humans on categories: the agreement rate and Cohen's κ (human, judge), over every
    (human label, judge label) pair, with intervals over items."""
    from bedside.stats.agreement import cohen_kappa

    chosen = [list(p) for p in pairs_by_item if p]
    flat = [pair for p in chosen for pair in p]
    if not flat:
        return []
    codes = {c: i for i, c in enumerate(sorted({x for pair in flat for x in pair}))}
    confusion = np.zeros((len(chosen), len(codes), len(codes)))
    for g, found in enumerate(chosen):
        for h, j in found:
            confusion[g, codes[h], codes[j]] += 1
    agree_counts = np.stack([np.trace(confusion, axis1=1, axis2=2), confusion.sum(axis=(1, 2))], axis=1)
    rate = sum(h == j for h, j in flat) / len(flat)
    kappa = defined(lambda: cohen_kappa([h for h, _ in flat], [j for _, j in flat]))
    return [
        estimate(f"{kind}: agreement rate with the judge", rate, agree_counts, ratio_of_totals, len(flat), seed=seed),
        estimate(f"{kind}: Cohen's κ with the judge", kappa, confusion, kappa_from_confusion, len(flat), seed=seed),
    ]


def rate_with_ci(name: str, hits_and_counts: Sequence[tuple[float, float]], n: int, *, seed: int = 0) -> Estimate:
    """A rate Σhits / Σcounts over items (e.g. labels agreeing with the judge), with its interval over items."""
    parts = np.array(hits_and_counts, dtype=float).reshape(-1, 2)
    rate = float(parts[:, 0].sum() / parts[:, 1].sum()) if len(parts) and parts[:, 1].sum() else None
    return estimate(name, rate, parts, ratio_of_totals, n, seed=seed)


# ---- agreement between raters on ranks ----------------------------------------------------------------------


def kendall_w(ranks: Sequence[Sequence[float]]) -> float:
    """Kendall's coefficient of concordance W for ``m`` raters ranking the same ``n`` objects (``ranks[r][o]``;
    any numbers: only their order counts, ties get average ranks and the tie correction):
    W = 12 S / (m² (n³ − n) − m Σ T), S the squared deviations of the objects' rank sums from their mean,
    T = Σ (t³ − t) over each rater's groups of t tied objects."""
    from scipy.stats import rankdata

    m = len(ranks)
    if m < 2:
        raise ValueError("Kendall's W needs two or more raters")
    lengths = {len(r) for r in ranks}
    if len(lengths) != 1 or min(lengths) < 2:
        raise ValueError("Kendall's W needs every rater to rank the same two or more objects")
    n = lengths.pop()
    ranked = np.array([rankdata(r) for r in ranks], dtype=float)
    sums = ranked.sum(axis=0)
    s = float(((sums - sums.mean()) ** 2).sum())
    ties = 0.0
    for row in ranks:
        _, counts = np.unique(np.asarray(row, dtype=float), return_counts=True)
        ties += float((counts**3 - counts).sum())
    denominator = m * m * (n**3 - n) - m * ties
    if denominator == 0:
        raise ValueError("Kendall's W is undefined: every rater tied every object")
    return 12.0 * s / denominator


def rank_agreement(rankings: Mapping[str, Mapping[str, Sequence[float]]], *, seed: int = 0) -> list[Estimate]:
    """Agreement of raters' rankings of each item's outputs: the mean over items of Kendall's W (the raters of
    that item), and the mean pairwise Kendall τ-b (each pair of raters of an item, averaged per item, then over
    items); intervals over items. ``rankings[item][rater]`` lists the rater's rank of each output, in the same
    output order for every rater. Items with one rater, or where a statistic is undefined, are left out and
    counted in the note."""
    from bedside.stats.agreement import kendall_tau

    per_w: list[float] = []
    per_tau: list[float] = []
    undefined_w = undefined_tau = 0
    for by_rater in rankings.values():
        if len(by_rater) < 2:
            continue
        rows = [list(by_rater[r]) for r in sorted(by_rater)]
        w = defined(lambda: kendall_w(rows))  # noqa: B023 - called at once
        if w is None:
            undefined_w += 1
        else:
            per_w.append(w)
        taus = [defined(lambda: kendall_tau(a, b).statistic) for a, b in combinations(rows, 2)]  # noqa: B023
        known = [t for t in taus if t is not None]
        if known:
            per_tau.append(sum(known) / len(known))
        else:
            undefined_tau += 1

    def mean_of(name: str, values: list[float], undefined: int) -> Estimate:
        parts = np.array([[v, 1.0] for v in values], dtype=float).reshape(-1, 2)
        value = float(parts[:, 0].mean()) if len(parts) else None
        found = estimate(name, value, parts, ratio_of_totals, len(values), seed=seed)
        if undefined:
            return Estimate(found.name, found.value, found.low, found.high, found.n, f"{undefined} items undefined")
        return found

    return [
        mean_of("rank: Kendall's W between annotators (mean over items)", per_w, undefined_w),
        mean_of("rank: Kendall τ-b between annotator pairs (mean over items)", per_tau, undefined_tau),
    ]
