"""How well automated metrics (and LLM judges) rank responses the way clinicians do (MedAlign Section 6).

For each instruction, a metric scores every model's response against the clinician reference (the primary
annotator's, as the paper's code did); scores become ranks (higher score = better) and Kendall's τ-b is taken
against the clinician's ranking, oriented so that agreement is positive. "Avg. Corr." is the mean over
instructions with a seeded bootstrap 95% CI and its n; instructions where τ is undefined (a constant ranking) are
left out and counted. The inter-rater row is the same statistic between clinicians: per triple-reviewed
instruction, the mean τ over evaluator pairs, then the mean over instructions.

Two metrics are compared with a paired bootstrap over the instructions both define (the sound test: the τ are on
the same items), and with the independent Fisher z the paper reports, labelled as such.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from bedside.stats import (
    PairedDifference,
    TestResult,
    bootstrap_ci,
    fisher_z,
    head_to_head,
    kendall_tau,
    mean_kendall_tau,
    paired_bootstrap,
    ranks_from_scores,
)
from bedside.tasks.instruct.cases import Instruction
from bedside.tasks.instruct.labels import ResponseLabel

Metric = Callable[[str, list[str]], float]


@dataclass(frozen=True)
class Agreement:
    name: str
    mean: float | None
    low: float | None
    high: float | None
    n: int
    undefined: int
    per_instruction: dict[str, float]


def _summary(name: str, per_item: Mapping[str, float | None], *, seed: int) -> Agreement:
    defined = {k: v for k, v in per_item.items() if v is not None}
    if not defined:
        return Agreement(name, None, None, None, 0, len(per_item), {})
    interval = bootstrap_ci(list(defined.values()), seed=seed)
    return Agreement(
        name, interval.estimate, interval.low, interval.high, len(defined), len(per_item) - len(defined), defined
    )


def clinician_scores(labels: Sequence[ResponseLabel]) -> dict[str, dict[str, float]]:
    """instruction -> model -> −rank, so that higher is better like a metric's score."""
    scores: dict[str, dict[str, float]] = defaultdict(dict)
    for label in labels:
        if label.rank is not None:
            scores[label.instruction_id][label.model] = -label.rank
    return dict(scores)


def metric_scores(
    labels: Sequence[ResponseLabel], instructions: Mapping[str, Instruction], metric: Metric
) -> dict[str, dict[str, float]]:
    """instruction -> model -> the metric's score of the response against the primary reference."""
    scores: dict[str, dict[str, float]] = defaultdict(dict)
    for label in labels:
        instruction = instructions.get(label.instruction_id)
        reference = instruction.primary_reference if instruction else None
        if reference is None:
            continue
        scores[label.instruction_id][label.model] = float(metric(label.response, [reference.text]))
    return dict(scores)


def versus_clinicians(
    name: str, scores: Mapping[str, Mapping[str, float]], labels: Sequence[ResponseLabel], *, seed: int = 0
) -> Agreement:
    result = mean_kendall_tau(scores, clinician_scores(labels))
    return _summary(name, result.per_item, seed=seed)


def inter_rater(labels: Sequence[ResponseLabel], *, seed: int = 0) -> Agreement:
    """Per instruction judged by two or more evaluators: mean τ-b over evaluator pairs; then the mean."""
    by_item: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for label in labels:
        if label.rank is not None:
            by_item[label.instruction_id][label.evaluator][label.model] = label.rank
    per_item: dict[str, float | None] = {}
    for item, evaluators in by_item.items():
        if len(evaluators) < 2:
            continue
        taus = []
        for a, b in combinations(sorted(evaluators), 2):
            shared = sorted(set(evaluators[a]) & set(evaluators[b]))
            if len(shared) < 2:
                continue
            tau = kendall_tau([evaluators[a][m] for m in shared], [evaluators[b][m] for m in shared]).statistic
            if tau == tau:  # NaN for a constant ranking
                taus.append(tau)
        per_item[item] = sum(taus) / len(taus) if taus else None
    return _summary("inter-rater", per_item, seed=seed)


@dataclass(frozen=True)
class MetricComparison:
    a: str
    b: str
    paired: PairedDifference  # mean τ(b) − τ(a) over instructions both define
    fisher: TestResult | None  # the paper's independent test, for comparison only


def compare(a: Agreement, b: Agreement, *, seed: int = 0) -> MetricComparison:
    shared = sorted(set(a.per_instruction) & set(b.per_instruction))
    if not shared:
        raise ValueError(f"{a.name} and {b.name} share no instruction with a defined τ")
    paired = paired_bootstrap([a.per_instruction[i] for i in shared], [b.per_instruction[i] for i in shared], seed=seed)
    fisher = None
    if a.mean is not None and b.mean is not None and a.n > 3 and b.n > 3 and abs(a.mean) < 1 and abs(b.mean) < 1:
        fisher = fisher_z(b.mean, b.n, a.mean, a.n)
    return MetricComparison(a.name, b.name, paired, fisher)


def metric_win_rates(
    scores: Mapping[str, Mapping[str, float]], models: Sequence[str] | None = None
) -> dict[str, float | None]:
    """Win rates from a metric's rankings (ties excluded), for comparing with the clinicians' (Table S17)."""
    ranks = {item: ranks_from_scores(values) for item, values in scores.items()}
    matrix = head_to_head(ranks, models, ties="exclude")
    return {model: matrix.win_rate(model) for model in matrix.systems}
