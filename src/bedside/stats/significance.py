"""Significance tests and effect summaries the seed papers report, over scipy.

- Mann–Whitney U (two-sided) for two independent samples of scores (MultiSenseEval compares models this way).
- t-test: Welch's by default (unequal variances), or paired.
- χ² test of independence on a contingency table (no Yates correction unless asked).
- Bonferroni: each p-value times the number of tests, capped at 1.
- Fisher z test of two *independent* correlations (r1 from n1 pairs, r2 from n2): z = (atanh r1 − atanh r2) /
  sqrt(1/(n1 − 3) + 1/(n2 − 3)), two-sided normal p. MedAlign compares metrics this way (Appendix K); the two τ
  there are computed on the same instructions, so a paired bootstrap is the sounder test and is reported beside it.
- Relative difference (B − A) / A, overall and per stratum (DischargeSim's profile comparisons).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TestResult:
    statistic: float
    p_value: float


def mann_whitney_u(a: Sequence[float], b: Sequence[float]) -> TestResult:
    from scipy.stats import mannwhitneyu

    if not a or not b:
        raise ValueError("both samples need at least one value")
    result = mannwhitneyu(np.asarray(a, dtype=float), np.asarray(b, dtype=float), alternative="two-sided")
    return TestResult(float(result.statistic), float(result.pvalue))


def t_test(a: Sequence[float], b: Sequence[float], *, paired: bool = False) -> TestResult:
    """Welch's t-test (or the paired t-test) of mean(a) against mean(b)."""
    from scipy.stats import ttest_ind, ttest_rel

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size < 2 or y.size < 2:
        raise ValueError("a t-test needs at least two values per sample")
    with warnings.catch_warnings():
        # scipy warns of "catastrophic cancellation" when a sample's values are all equal: their variance is then
        # exactly 0 and Welch's t still defined by the other sample, so the warning only alarms a report's reader
        warnings.filterwarnings("ignore", message="Precision loss occurred", category=RuntimeWarning)
        result = ttest_rel(x, y) if paired else ttest_ind(x, y, equal_var=False)
    return TestResult(float(result.statistic), float(result.pvalue))


def chi_square(table: Sequence[Sequence[float]], *, correction: bool = False) -> TestResult:
    """χ² test of independence for an r × c table of counts."""
    from scipy.stats import chi2_contingency

    result = chi2_contingency(np.asarray(table, dtype=float), correction=correction)
    return TestResult(float(result.statistic), float(result.pvalue))


def fisher_z(r1: float, n1: int, r2: float, n2: int) -> TestResult:
    """Two-sided Fisher z test that two independent correlations are equal."""
    import math

    from scipy.stats import norm

    if n1 <= 3 or n2 <= 3:
        raise ValueError("Fisher's z needs more than 3 pairs per correlation")
    if not (-1 < r1 < 1 and -1 < r2 < 1):
        raise ValueError("Fisher's z needs correlations strictly between -1 and 1")
    z = (math.atanh(r1) - math.atanh(r2)) / math.sqrt(1 / (n1 - 3) + 1 / (n2 - 3))
    return TestResult(z, float(2 * norm.sf(abs(z))))


def bonferroni(p_values: Sequence[float]) -> list[float]:
    m = len(p_values)
    return [min(1.0, p * m) for p in p_values]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (family-wise error), in the input's order: the k-th smallest p (k = 0, 1, ...)
    times (m - k), made monotone so a smaller p never gets a larger adjusted value; capped at 1. Uniformly more
    powerful than :func:`bonferroni` and as safe."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p_values[i]))
        adjusted[i] = running
    return adjusted


def paired_effect_size(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Cohen's d_z for paired samples: mean of (b - a) over its sample standard deviation; ``None`` when it is
    undefined (fewer than two pairs, or every difference the same)."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    differences = [y - x for x, y in zip(a, b, strict=True)]
    if len(differences) < 2:
        return None
    mean = sum(differences) / len(differences)
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / (len(differences) - 1))
    return None if sd == 0 else mean / sd


def relative_difference(a: float, b: float) -> float:
    """(B − A) / A; undefined (ValueError) when A is 0."""
    if a == 0:
        raise ValueError("relative difference is undefined for a baseline of 0")
    return (b - a) / a


@dataclass(frozen=True)
class StratumDifference:
    stratum: Hashable
    mean_a: float
    mean_b: float
    n_a: int
    n_b: int
    relative: float | None  # None when mean_a is 0


def relative_difference_by_stratum(
    a: Iterable[tuple[Hashable, float]], b: Iterable[tuple[Hashable, float]]
) -> list[StratumDifference]:
    """Per stratum present in both, (mean B − mean A) / mean A; inputs are (stratum, value) pairs."""
    groups_a: dict[Hashable, list[float]] = {}
    groups_b: dict[Hashable, list[float]] = {}
    for stratum, value in a:
        groups_a.setdefault(stratum, []).append(value)
    for stratum, value in b:
        groups_b.setdefault(stratum, []).append(value)
    out = []
    for stratum in sorted(set(groups_a) & set(groups_b), key=str):
        mean_a = float(np.mean(groups_a[stratum]))
        mean_b = float(np.mean(groups_b[stratum]))
        relative = (mean_b - mean_a) / mean_a if mean_a != 0 else None
        out.append(StratumDifference(stratum, mean_a, mean_b, len(groups_a[stratum]), len(groups_b[stratum]), relative))
    return out


def minimum_detectable_difference(
    standard_error: float, *, alpha: float = 0.05, power: float = 0.8, df: int | None = None
) -> float:
    """The smallest true difference a two-sided test at level ``alpha`` detects with probability ``power``, given
    the standard error of the estimated difference: (q(1 − α/2) + q(power)) × SE, the textbook minimum detectable
    effect, with q the normal quantile, or Student's t with ``df`` degrees of freedom when given (scipy).

    MedAlign's Appendix K gives σ_d = 0.014, α = 0.05, power 0.8 and a minimum detectable difference of 0.052 without
    saying how: the normal quantiles give 0.039, and t with 4 degrees of freedom (6 models, so perhaps 5 paired
    differences) gives 0.0520, the paper's figure; bedside reports the inputs beside the answer."""
    from scipy.stats import norm
    from scipy.stats import t as student

    if not standard_error > 0 or standard_error == float("inf"):  # NaN fails the first test
        raise ValueError(f"the standard error must be a positive number, not {standard_error}")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must be between 0 and 1")
    if df is not None and df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if df is None:
        quantiles = float(norm.ppf(1 - alpha / 2) + norm.ppf(power))
    else:
        quantiles = float(student.ppf(1 - alpha / 2, df) + student.ppf(power, df))
    if quantiles <= 0:  # a power below the test's own false-positive rate: every difference "detectable"
        raise ValueError(
            f"power {power:g} is not above what a two-sided test at alpha {alpha:g} detects by chance: "
            "no minimum detectable difference (raise --power or lower --alpha)"
        )
    return quantiles * standard_error
