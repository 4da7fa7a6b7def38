"""Statistics equal scipy's and scikit-learn's, and the hand-worked examples hold."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from sklearn.metrics import cohen_kappa_score

from bedside.stats import (
    bonferroni,
    bootstrap_ci,
    chi_square,
    cohen_kappa,
    head_to_head,
    kendall_tau,
    krippendorff_alpha,
    mann_whitney_u,
    mean_kendall_tau,
    mean_rank,
    paired_bootstrap,
    pearson_r,
    percent_agreement,
    point_biserial,
    ranks_from_scores,
    relative_difference,
    relative_difference_by_stratum,
    spearman_rho,
    t_test,
)

RATER_A = [1, 2, 3, 3, 2, 1, 4, 4, 2, 3, 1, 2]
RATER_B = [1, 2, 3, 2, 2, 1, 4, 3, 2, 3, 2, 2]
X = [2.5, 3.1, 3.3, 2.0, 4.4, 3.9, 1.8, 3.3, 2.9, 4.0]
Y = [2.0, 3.5, 3.0, 2.2, 4.0, 4.1, 2.5, 3.1, 2.6, 3.6]


def test_cohen_kappa_equals_scikit_learn() -> None:
    assert cohen_kappa(RATER_A, RATER_B) == pytest.approx(cohen_kappa_score(RATER_A, RATER_B), abs=1e-12)
    for weights in ("linear", "quadratic"):
        expected = cohen_kappa_score(RATER_A, RATER_B, weights=weights)
        assert cohen_kappa(RATER_A, RATER_B, weights=weights) == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError, match="rater_a has 2 ratings, rater_b 1"):
        cohen_kappa([1, 2], [1])


def test_krippendorff_alpha_by_hand() -> None:
    # Two raters, four items, nominal labels: (1,1), (1,2), (2,2), (2,2).
    # Coincidences: o11 = 2, o12 = o21 = 1, o22 = 4; n = 8, n1 = 3, n2 = 5.
    # D_o = (o12 + o21) / n = 2/8; D_e = 2 n1 n2 / (n (n - 1)) = 30/56; alpha = 1 - D_o / D_e = 8/15.
    assert krippendorff_alpha([[1, 1, 2, 2], [1, 2, 2, 2]]) == pytest.approx(8 / 15, abs=1e-12)
    # A missing rating leaves its item with one value, which carries no pairable information.
    assert krippendorff_alpha([[1, 1, 2, 2, 1], [1, 2, 2, 2, None]]) == pytest.approx(8 / 15, abs=1e-12)
    with pytest.raises(ValueError, match="one entry per item"):
        krippendorff_alpha([[1, 2], [1]])


def test_percent_agreement() -> None:
    assert percent_agreement([RATER_A, RATER_B]) == pytest.approx(9 / 12)
    # Three raters on two items: item 1 all agree (3 of 3 pairs), item 2 one pair of 3; a None is skipped.
    assert percent_agreement([[1, 1], [1, 2], [1, 2]]) == pytest.approx(4 / 6)
    assert percent_agreement([[1, None], [1, 2]]) == 1.0


def test_correlations_equal_scipy() -> None:
    pairs = [
        (kendall_tau(X, Y), scipy.stats.kendalltau(X, Y)),
        (spearman_rho(X, Y), scipy.stats.spearmanr(X, Y)),
        (pearson_r(X, Y), scipy.stats.pearsonr(X, Y)),
    ]
    for ours, theirs in pairs:
        assert abs(ours.statistic - theirs.statistic) < 1e-9
        assert abs(ours.p_value - theirs.pvalue) < 1e-9
    binary = [1, 0, 1, 0, 1, 1, 0, 1, 0, 1]
    expected = scipy.stats.pointbiserialr(binary, X)
    assert abs(point_biserial(binary, X).statistic - expected.statistic) < 1e-9
    with pytest.raises(ValueError, match="binary"):
        point_biserial([0, 2], [1.0, 2.0])


def test_mean_kendall_tau_per_item_with_ties_and_an_undefined_item() -> None:
    human = {
        "i1": {"gpt": 1, "llama": 2, "mpt": 3},
        "i2": {"gpt": 1, "llama": 1, "mpt": 2},  # a tie
        "i3": {"gpt": 1, "llama": 1, "mpt": 1},  # all tied: tau undefined
        "i4": {"gpt": 1},  # only in one ranking's systems -> fewer than two shared
    }
    metric = {
        "i1": {"gpt": 0.9, "llama": 0.5, "mpt": 0.7},
        "i2": {"gpt": 0.8, "llama": 0.6, "mpt": 0.1},
        "i3": {"gpt": 0.1, "llama": 0.2, "mpt": 0.3},
        "i4": {"gpt": 0.5, "llama": 0.4},
    }
    # Ranks ascend (1 = best) while scores descend: compare ranks with negated scores.
    negated = {item: {s: -v for s, v in scores.items()} for item, scores in metric.items()}
    result = mean_kendall_tau(human, negated)
    t1 = scipy.stats.kendalltau([1, 2, 3], [-0.9, -0.5, -0.7]).statistic
    t2 = scipy.stats.kendalltau([1, 1, 2], [-0.8, -0.6, -0.1]).statistic
    assert result.per_item["i1"] == pytest.approx(t1, abs=1e-12)
    assert result.per_item["i2"] == pytest.approx(t2, abs=1e-12)
    assert result.per_item["i3"] is None
    assert result.per_item["i4"] is None
    assert result.undefined == 2
    assert result.mean == pytest.approx((t1 + t2) / 2, abs=1e-12)


def test_head_to_head_and_win_rates_count_ties_as_neither() -> None:
    rankings = {
        "i1": {"a": 1, "b": 2, "c": 3},
        "i2": {"a": 1, "b": 1, "c": 2},
        "i3": {"a": 2, "b": 1, "c": 3},
        "i4": {"a": 1, "c": 2},
    }
    h2h = head_to_head(rankings)
    a, b, c = 0, 1, 2
    assert h2h.systems == ["a", "b", "c"]
    assert h2h.wins[a][b] == pytest.approx(1 / 3)  # items i1..i3: a wins i1, tie i2, loses i3
    assert h2h.ties[a][b] == pytest.approx(1 / 3)
    assert h2h.wins[b][a] == pytest.approx(1 / 3)
    assert h2h.wins[a][c] == 1.0
    assert h2h.shared[a][c] == 4
    assert h2h.wins[a][a] is None
    assert h2h.win_rate("a") == pytest.approx((1 / 3 + 1) / 2)
    assert mean_rank(rankings) == {"a": 1.25, "b": pytest.approx(4 / 3), "c": 2.5}
    assert ranks_from_scores({"a": 0.9, "b": 0.7, "c": 0.7, "d": 0.1}) == {"a": 1, "b": 2, "c": 2, "d": 4}


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    values = [3.0, 4.0, 2.5, 3.5, 4.5, 3.0, 2.0, 4.0, 3.5, 3.0]
    first = bootstrap_ci(values, seed=7)
    assert first == bootstrap_ci(values, seed=7)
    assert first != bootstrap_ci(values, seed=8)
    assert first.estimate == pytest.approx(3.3)
    assert first.low < first.estimate < first.high
    # It is scipy's percentile interval with the same generator.
    expected = scipy.stats.bootstrap(
        (np.array(values),), np.mean, n_resamples=10_000, method="percentile", rng=np.random.default_rng(7)
    )
    assert first.low == pytest.approx(expected.confidence_interval.low, abs=1e-12)
    assert bootstrap_ci([2.0, 2.0]).low == 2.0


def test_paired_bootstrap_detects_a_consistent_difference() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(3.0, 0.5, size=60)
    b = a + 0.3 + rng.normal(0, 0.1, size=60)
    result = paired_bootstrap(list(a), list(b))
    assert result.difference == pytest.approx(float(np.mean(b - a)))
    assert 0 < result.low < result.difference < result.high
    assert result.p_value < 0.001
    same = paired_bootstrap(list(a), list(a + rng.normal(0, 0.1, size=60)))
    assert same.low < 0 < same.high
    assert same.p_value > 0.05
    with pytest.raises(ValueError, match="equal length"):
        paired_bootstrap([1.0, 2.0], [1.0])


def test_tests_equal_scipy() -> None:
    a, b = X, [v + 0.4 for v in Y]
    u = scipy.stats.mannwhitneyu(a, b, alternative="two-sided")
    ours = mann_whitney_u(a, b)
    assert abs(ours.statistic - u.statistic) < 1e-9
    assert abs(ours.p_value - u.pvalue) < 1e-9
    welch = scipy.stats.ttest_ind(a, b, equal_var=False)
    assert abs(t_test(a, b).p_value - welch.pvalue) < 1e-9
    paired = scipy.stats.ttest_rel(a, b)
    assert abs(t_test(a, b, paired=True).statistic - paired.statistic) < 1e-9
    table = [[30, 10], [18, 22]]
    chi2 = scipy.stats.chi2_contingency(table, correction=False)
    assert abs(chi_square(table).p_value - chi2.pvalue) < 1e-9
    assert bonferroni([0.01, 0.2, 0.5]) == [0.03, pytest.approx(0.6), 1.0]


def test_relative_difference_by_stratum() -> None:
    assert relative_difference(4.0, 5.0) == 0.25
    with pytest.raises(ValueError, match="baseline of 0"):
        relative_difference(0.0, 1.0)
    a = [("low literacy", 3.0), ("low literacy", 3.4), ("high literacy", 4.0), ("only a", 1.0)]
    b = [("low literacy", 2.4), ("high literacy", 4.4), ("high literacy", 4.6)]
    rows = {r.stratum: r for r in relative_difference_by_stratum(a, b)}
    assert set(rows) == {"low literacy", "high literacy"}
    assert rows["low literacy"].relative == pytest.approx((2.4 - 3.2) / 3.2)
    assert rows["high literacy"].relative == pytest.approx((4.5 - 4.0) / 4.0)
    assert rows["high literacy"].n_b == 2
    assert not math.isnan(rows["low literacy"].mean_a)


def test_welch_t_with_one_constant_sample_is_defined_and_quiet() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy's precision-loss warning would fail here
        result = t_test([10.5, 10.5, 10.5], [9.0, 11.0, 12.5])
    assert abs(result.statistic - scipy.stats.ttest_1samp([9.0, 11.0, 12.5], 10.5).statistic * -1) < 1e-9


def test_holm_adjusts_step_down_and_stays_monotone() -> None:
    from bedside.stats import bonferroni, holm

    p = [0.01, 0.04, 0.03, 0.005]
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> monotone 0.06
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert all(h <= b for h, b in zip(holm(p), bonferroni(p), strict=True))
    assert holm([0.9, 0.8]) == [1.0, 1.0]
    assert holm([]) == []


def test_paired_effect_size_is_mean_difference_over_its_sd() -> None:
    from bedside.stats import paired_effect_size

    # differences 1, 2, 3: mean 2, sample sd 1
    assert paired_effect_size([0.0, 0.0, 0.0], [1.0, 2.0, 3.0]) == pytest.approx(2.0)
    assert paired_effect_size([0.0, 1.0], [1.0, 2.0]) is None  # every difference the same
    assert paired_effect_size([0.0], [1.0]) is None
