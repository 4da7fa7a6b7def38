"""Statistics for evaluation: rater agreement, rank correlation, win rates, bootstrap intervals, tests."""

from bedside.stats.agreement import (
    Correlation,
    MeanTau,
    cohen_kappa,
    kendall_tau,
    krippendorff_alpha,
    mean_kendall_tau,
    pearson_r,
    percent_agreement,
    point_biserial,
    spearman_rho,
)
from bedside.stats.bootstrap import Interval, PairedDifference, bootstrap_ci, paired_bootstrap
from bedside.stats.rankings import HeadToHead, head_to_head, mean_rank, ranks_from_scores
from bedside.stats.significance import (
    StratumDifference,
    TestResult,
    bonferroni,
    chi_square,
    fisher_z,
    mann_whitney_u,
    minimum_detectable_difference,
    relative_difference,
    relative_difference_by_stratum,
    t_test,
)

__all__ = [
    "Correlation",
    "HeadToHead",
    "Interval",
    "MeanTau",
    "PairedDifference",
    "StratumDifference",
    "TestResult",
    "bonferroni",
    "bootstrap_ci",
    "chi_square",
    "cohen_kappa",
    "fisher_z",
    "head_to_head",
    "kendall_tau",
    "krippendorff_alpha",
    "mann_whitney_u",
    "mean_kendall_tau",
    "mean_rank",
    "minimum_detectable_difference",
    "paired_bootstrap",
    "pearson_r",
    "percent_agreement",
    "point_biserial",
    "ranks_from_scores",
    "relative_difference",
    "relative_difference_by_stratum",
    "spearman_rho",
    "t_test",
]
