"""The Wilson interval the checkers' evaluations print."""

from __future__ import annotations

import pytest

from bedside.stats.proportions import share_with_interval, wilson_interval


def test_wilson_interval_matches_the_formula_and_stays_inside_zero_and_one() -> None:
    low, high = wilson_interval(38, 40)  # type: ignore[misc]
    z, p, n = 1.959964, 0.95, 40
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    assert (low, high) == pytest.approx((centre - half, centre + half), abs=1e-6)
    assert wilson_interval(0, 10)[0] == 0.0  # type: ignore[index]
    assert wilson_interval(10, 10)[1] == pytest.approx(1.0)  # type: ignore[index]
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="11 successes out of 10"):
        wilson_interval(11, 10)


def test_a_share_prints_with_its_counts_and_interval() -> None:
    assert share_with_interval(38, 40) == "0.950 (38/40) [95% CI 0.835-0.986]"
    assert share_with_interval(0, 0) == "-"
