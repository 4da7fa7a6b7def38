"""bedside.stats.reliability: the review meta-evaluation's statistics, against values worked by hand, and the
bootstrap count formulas against the libraries' values on the full data."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bedside.stats import cohen_kappa, krippendorff_alpha, percent_agreement, reliability
from bedside.stats.reliability import fleiss_kappa, kendall_w, nominal_agreement, rank_agreement


def test_cohen_kappa_by_hand() -> None:
    # p_o = 3/4; p_e = 1/2·1/4 + 1/2·3/4 = 1/2; κ = (3/4 − 1/2) / (1 − 1/2) = 1/2
    groups = [[{"a": v, "b": w}] for v, w in zip("yynn", "ynnn", strict=True)]
    found = {e.name: e for e in nominal_agreement("x", groups, ["a", "b"])}
    assert found["x: Cohen's κ"].value == pytest.approx(0.5)
    assert found["x: percent agreement"].value == pytest.approx(0.75)
    assert found["x: Cohen's κ"].n == 4


def test_krippendorff_alpha_by_hand() -> None:
    # units (a,a), (a,b), (b,b): coincidences o_aa = 2, o_ab = o_ba = 1, o_bb = 2; n_a = n_b = 3, n = 6
    # α = 1 − (n − 1)·D_o / (n² − Σ n_c²) = 1 − 5·2 / (36 − 18) = 4/9
    groups = [[{"r1": x, "r2": y}] for x, y in (("a", "a"), ("a", "b"), ("b", "b"))]
    found = {e.name: e for e in nominal_agreement("k", groups, ["r1", "r2"])}
    assert found["k: Krippendorff's α"].value == pytest.approx(4 / 9)
    assert found["k: percent agreement"].value == pytest.approx(2 / 3)


def test_fleiss_kappa_by_hand() -> None:
    # three raters, two categories; units [3,0], [0,3], [2,1]: P_i = 1, 1, 1/3 → P̄ = 7/9;
    # p = (5/9, 4/9) → P̄_e = 41/81; κ = (63/81 − 41/81) / (40/81) = 0.55
    assert fleiss_kappa([[3, 0], [0, 3], [2, 1]]) == pytest.approx(0.55)
    groups = [[{"a": "y", "b": "y", "c": "y"}], [{"a": "n", "b": "n", "c": "n"}], [{"a": "y", "b": "y", "c": "n"}]]
    found = {e.name: e for e in nominal_agreement("f", groups, ["a", "b", "c"])}
    assert found["f: Fleiss' κ (units rated by all 3)"].value == pytest.approx(0.55)
    assert "f: Cohen's κ" not in found  # κ between two raters only
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[2, 0], [1, 2]])


def test_kendall_w_by_hand() -> None:
    # rank sums 4, 6, 8 (mean 6): S = 8; W = 12·8 / (3²·(27 − 3)) = 96/216 = 4/9
    assert kendall_w([[1, 2, 3], [1, 3, 2], [2, 1, 3]]) == pytest.approx(4 / 9)
    assert kendall_w([[1, 2, 3], [1, 2, 3]]) == pytest.approx(1.0)
    assert kendall_w([[1, 2, 3], [3, 2, 1]]) == pytest.approx(0.0)
    # ties: [1, 1, 2] ranks as 1.5, 1.5, 3; sums 2.5, 3.5, 6 (mean 4): S = 6.5; Σ T = 2³ − 2 = 6;
    # W = 12·6.5 / (2²·24 − 2·6) = 78/84
    assert kendall_w([[1, 1, 2], [1, 2, 3]]) == pytest.approx(78 / 84)
    with pytest.raises(ValueError, match="two or more raters"):
        kendall_w([[1, 2]])


def test_rank_agreement_by_hand() -> None:
    # one item, three raters: W = 4/9; τ per pair 1/3, 1/3, −1/3 → mean 1/9
    found = rank_agreement({"i1": {"a": [1, 2, 3], "b": [1, 3, 2], "c": [2, 1, 3]}, "i2": {"a": [1, 2]}})
    w, tau = found
    assert w.value == pytest.approx(4 / 9)
    assert tau.value == pytest.approx(1 / 9)
    assert (w.n, tau.n) == (1, 1)  # the item with one rater is left out
    assert w.low is None  # no interval from one item


def test_rank_agreement_has_an_interval_around_its_value() -> None:
    rng = random.Random(3)
    rankings = {}
    for i in range(40):
        truth = [1, 2, 3, 4]
        rankings[f"i{i}"] = {r: (truth if rng.random() < 0.7 else rng.sample(truth, 4)) for r in ("a", "b", "c")}
    w, tau = rank_agreement(rankings)
    for e in (w, tau):
        assert e.value is not None
        assert e.low is not None
        assert e.high is not None
        assert e.low <= e.value <= e.high
        assert e.n == 40
    assert w.value is not None
    assert 0 < w.value <= 1


def test_bootstrap_count_formulas_equal_the_libraries() -> None:
    """Intervals resample per-item counts; on the full data those formulas must give exactly bedside.stats' α,
    κ and percent agreement (which wrap krippendorff and scikit-learn)."""
    rng = random.Random(4)
    raters = 3
    units = [[rng.choice([0, 1, 2, None]) for _ in range(raters)] for _ in range(300)]
    units = [u for u in units if sum(v is not None for v in u) >= 2]
    coincidence = np.zeros((3, 3))
    pairs = np.zeros(2)
    for u in units:
        counts = np.bincount([v for v in u if v is not None], minlength=3).astype(float)
        m = counts.sum()
        coincidence += (np.outer(counts, counts) - np.diag(counts)) / (m - 1)
        pairs += [(counts * (counts - 1) / 2).sum(), m * (m - 1) / 2]
    rows = [[u[r] for u in units] for r in range(raters)]
    alpha = krippendorff_alpha(rows, level="nominal")
    assert float(reliability.alpha_from_coincidences(coincidence)) == pytest.approx(alpha)
    assert float(reliability.ratio_of_totals(pairs)) == pytest.approx(percent_agreement(rows))
    a = [rng.choice("xyz") for _ in range(200)]
    b = [x if rng.random() < 0.6 else rng.choice("xyz") for x in a]
    confusion = np.zeros((3, 3))
    for x, y in zip(a, b, strict=True):
        confusion["xyz".index(x), "xyz".index(y)] += 1
    assert float(reliability.kappa_from_confusion(confusion)) == pytest.approx(cohen_kappa(a, b))
    # resampled totals: each resample draws as many items as there are, so totals sum to n × per-item totals
    totals = reliability.resampled_totals(np.ones((10, 2)), seed=0, resamples=250)
    assert totals.shape == (250, 2)
    assert np.all(totals.sum(axis=1) == 20)
