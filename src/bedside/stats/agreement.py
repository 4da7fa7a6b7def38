"""Agreement between raters (humans, judges, metrics): κ, α, percent agreement and rank correlations.

Thin, documented layers over scikit-learn, scipy and ``krippendorff``, so numbers equal those libraries'. What
bedside adds is the shape of the input and the edge cases: missing ratings are None, and a correlation that
is undefined (a constant ranking) is reported as such and left out of means, with a count.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import numpy as np

Level = Literal["nominal", "ordinal", "interval", "ratio"]


def cohen_kappa(
    rater_a: Sequence[Hashable], rater_b: Sequence[Hashable], *, weights: Literal["linear", "quadratic"] | None = None
) -> float:
    """Cohen's κ for two raters over the same items (scikit-learn); ``weights`` for ordinal labels."""
    from sklearn.metrics import cohen_kappa_score

    if len(rater_a) != len(rater_b):
        raise ValueError(f"rater_a has {len(rater_a)} ratings, rater_b {len(rater_b)}")
    if not rater_a:
        raise ValueError("no ratings")
    return float(cohen_kappa_score(list(rater_a), list(rater_b), weights=weights))


def krippendorff_alpha(ratings: Sequence[Sequence[float | None]], *, level: Level = "nominal") -> float:
    """Krippendorff's α; ``ratings`` is one row per rater, one column per item, None where a rater is silent.

    Values must be numbers (code categories as integers for nominal data).
    """
    import krippendorff

    widths = {len(row) for row in ratings}
    if len(widths) != 1:
        raise ValueError(f"every rater needs one entry per item (None when missing); row lengths {sorted(widths)}")
    data = np.array([[np.nan if v is None else float(v) for v in row] for row in ratings], dtype=float)
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def percent_agreement(ratings: Sequence[Sequence[Hashable | None]]) -> float:
    """Share of agreeing rater pairs, pooled over items (pairs with a missing rating are skipped).

    With two raters this is the share of items on which they gave the same label.
    """
    agree = pairs = 0
    for item in zip(*ratings, strict=True):
        present = [v for v in item if v is not None]
        for x, y in combinations(present, 2):
            pairs += 1
            agree += x == y
    if not pairs:
        raise ValueError("no item has two ratings to compare")
    return agree / pairs


@dataclass(frozen=True)
class Correlation:
    statistic: float
    p_value: float


def _paired(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    if len(x) != len(y):
        raise ValueError(f"x has {len(x)} values, y {len(y)}")
    if len(x) < 2:
        raise ValueError("a correlation needs at least two pairs")
    return np.asarray(x, dtype=float), np.asarray(y, dtype=float)


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Kendall's τ-b (ties adjusted; scipy)."""
    from scipy.stats import kendalltau

    a, b = _paired(x, y)
    result = kendalltau(a, b)
    return Correlation(float(result.statistic), float(result.pvalue))


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> Correlation:
    from scipy.stats import spearmanr

    a, b = _paired(x, y)
    result = spearmanr(a, b)
    return Correlation(float(result.statistic), float(result.pvalue))


def pearson_r(x: Sequence[float], y: Sequence[float]) -> Correlation:
    from scipy.stats import pearsonr

    a, b = _paired(x, y)
    result = pearsonr(a, b)
    return Correlation(float(result.statistic), float(result.pvalue))


def point_biserial(binary: Sequence[int | bool], values: Sequence[float]) -> Correlation:
    """Correlation of a 0/1 variable (e.g. a clinician's "acceptable") with a continuous score."""
    from scipy.stats import pointbiserialr

    if any(v not in (0, 1) for v in binary):
        raise ValueError("point-biserial needs a binary first variable (0/1 or bool)")
    a, b = _paired([int(v) for v in binary], values)
    result = pointbiserialr(a, b)
    return Correlation(float(result.statistic), float(result.pvalue))


@dataclass(frozen=True)
class MeanTau:
    mean: float | None
    per_item: dict[str, float | None]
    undefined: int  # items where τ is undefined (a constant ranking, or fewer than two shared systems)


def mean_kendall_tau(
    rankings_a: Mapping[str, Mapping[str, float]], rankings_b: Mapping[str, Mapping[str, float]]
) -> MeanTau:
    """MedAlign's rank agreement: per item, τ-b between two rankings of the same outputs; then the mean.

    ``rankings_x[item][system]`` is a rank or a score (only order matters; ties allowed). Only items and systems
    present in both are compared. An item whose τ is undefined is left out of the mean and counted.
    """
    per_item: dict[str, float | None] = {}
    for item in rankings_a:
        if item not in rankings_b:
            continue
        systems = sorted(set(rankings_a[item]) & set(rankings_b[item]))
        x = [rankings_a[item][s] for s in systems]
        y = [rankings_b[item][s] for s in systems]
        tau = kendall_tau(x, y).statistic if len(systems) >= 2 else math.nan
        per_item[item] = None if math.isnan(tau) else tau
    if not per_item:
        raise ValueError("the two rankings share no item")
    defined = [t for t in per_item.values() if t is not None]
    mean = sum(defined) / len(defined) if defined else None
    return MeanTau(mean, per_item, len(per_item) - len(defined))
