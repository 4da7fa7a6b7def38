"""Bootstrap confidence intervals (percentile, seeded) for a mean and for the paired difference of two systems.

Resampling is scipy's (``scipy.stats.bootstrap``, percentile method) driven by a seeded generator, so a run's
intervals are reproducible. The paired version resamples items jointly: both systems' scores for a resampled
item travel together, which is what makes it a test of the *difference* on the same cases.

p-value of the paired test: two-sided, from the same resamples: 2 × the smaller of the shares of resampled
differences ≤ 0 and ≥ 0 (capped at 1). Its resolution is 2 / n_resamples, so a 0 means "below that", and
should be reported as such (e.g. "< 0.001" with 10,000 resamples).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

DEFAULT_RESAMPLES = 10_000


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    level: float


@dataclass(frozen=True)
class PairedDifference:
    difference: float  # mean(b) - mean(a)
    low: float
    high: float
    level: float
    p_value: float
    n: int


def _mean(x: Any, axis: int = -1) -> Any:
    return np.mean(x, axis=axis)


def bootstrap_ci(
    values: Sequence[float],
    *,
    statistic: Callable[..., Any] = _mean,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval of ``statistic`` (vectorised over ``axis``; default the mean)."""
    from scipy.stats import bootstrap

    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("no values to bootstrap")
    estimate = float(statistic(data, axis=-1))
    if data.size == 1 or np.all(data == data[0]):
        return Interval(estimate, estimate, estimate, level)
    result = bootstrap(
        (data,),
        statistic,
        n_resamples=n_resamples,
        confidence_level=level,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return Interval(estimate, float(result.confidence_interval.low), float(result.confidence_interval.high), level)


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    batch: int | None = None,
) -> PairedDifference:
    """Mean of b − a over items scored by both systems, with a percentile interval and a two-sided p-value.

    ``batch`` resamples at a time bounds the memory (scipy's own batching; the same draws either way)."""
    from scipy.stats import bootstrap

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples must have equal length ({x.size} and {y.size})")
    if x.size == 0:
        raise ValueError("no pairs to bootstrap")
    difference = float(np.mean(y - x))
    if x.size == 1 or np.all(y - x == (y - x)[0]):
        return PairedDifference(difference, difference, difference, level, 1.0 if difference == 0 else 0.0, x.size)

    def statistic(first: Any, second: Any, axis: int = -1) -> Any:
        return np.mean(second, axis=axis) - np.mean(first, axis=axis)

    result = bootstrap(
        (x, y),
        statistic,
        paired=True,
        n_resamples=n_resamples,
        batch=batch,
        confidence_level=level,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    draws = result.bootstrap_distribution
    p_value = min(1.0, 2 * min(float(np.mean(draws <= 0)), float(np.mean(draws >= 0))))
    return PairedDifference(
        difference,
        float(result.confidence_interval.low),
        float(result.confidence_interval.high),
        level,
        p_value,
        x.size,
    )
