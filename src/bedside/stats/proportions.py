"""A share's confidence interval: the Wilson score interval, over scipy.

bedside's own checkers (the clinical-safety guard, the simulator fidelity checker) are measured on sets of tens of
labelled sentences; a share such as 38/40 says little without its interval. Wilson's interval stays inside [0, 1]
and keeps its coverage near the nominal level at 0/n and n/n, where the normal approximation collapses to a point.
"""

from __future__ import annotations


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """The Wilson score interval of ``successes`` out of ``n`` (None when ``n`` is 0)."""
    if n == 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes out of {n}: successes must be between 0 and n")
    from scipy.stats import binomtest

    found = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(found.low), float(found.high)


def share_with_interval(successes: int, n: int) -> str:
    """``"0.950 (38/40) [95% CI 0.835-0.986]"``, or ``"-"`` for an empty group: one way to print a checker's share."""
    interval = wilson_interval(successes, n)
    if interval is None:
        return "-"
    return f"{successes / n:.3f} ({successes}/{n}) [95% CI {interval[0]:.3f}-{interval[1]:.3f}]"
