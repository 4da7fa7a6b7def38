"""Judge–expert agreement from pairwise preferences (§3.3): does the LLM judge prefer what clinicians prefer?

The paper's experts chose, per case, which of two doctor-agent conversations was better on L&D, HCC, content
coverage, education strategy and overall; it reports expert–expert and LLM–expert Cohen's κ, % agreement and
Spearman ρ. Its numbers (85.7% = 42/49; κ's chance agreement 0.498) show the unit is one binary, tie-free
decision per case, which is what bedside computes, per criterion.

The judge's preference is derived from its ratings, as the paper says ("aggregated"), with bedside's rule (the
paper gives none): the output with the higher rubric aggregate for the criterion wins; for ``overall`` the mean
of the four conversation aggregates (L&D, HCC, coverage average, strategy average). Equal aggregates are a tie:
such decisions are left out and counted, never scored as agreement or disagreement.

Labels file (JSONL), one expert decision per line::

    {"sample": "dc01/literacy=low", "a": "synthetic/dischargesim/model-a", "b": "synthetic/dischargesim/model-b",
     "criterion": "overall", "expert": "nurse", "prefers": "a"}

``a``/``b`` are cells of one stored run (``bedside ls``/``report`` show them); ``criterion`` is one of
``overall``, ``ld``, ``hcc``, ``content``, ``strategy``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from statistics import fmean
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from bedside.inputs import InputError
from bedside.stats.agreement import cohen_kappa, spearman_rho

Criterion = Literal["overall", "ld", "hcc", "content", "strategy"]
CRITERION_SCORERS: dict[str, tuple[str, ...]] = {
    "ld": ("ld",),
    "hcc": ("hcc",),
    "content": ("coverage_avg",),
    "strategy": ("strategy_avg",),
    "overall": ("ld", "hcc", "coverage_avg", "strategy_avg"),
}


class PreferenceLabel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sample: str
    a: str
    b: str
    criterion: Criterion
    expert: str
    prefers: Literal["a", "b"]


class LabelsError(InputError):
    """A labels file that cannot be read; the message names the file and the line."""


def read_labels(path: str | Path) -> list[PreferenceLabel]:
    from bedside.jsonlines import json_objects

    labels = []
    for number, record in json_objects(Path(path), LabelsError):
        try:
            labels.append(PreferenceLabel.model_validate(record))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
            raise LabelsError(f"{path}:{number}: {problems}") from None
    if not labels:
        raise LabelsError(f"{path}: no labels")
    return labels


@dataclass(frozen=True)
class Agreement:
    """Agreement of two raters over the decisions both made (ties excluded)."""

    first: str
    second: str
    n: int
    kappa: float | None
    percent: float | None
    rho: float | None
    rho_p: float | None
    ties: int = 0

    def as_dict(self) -> dict[str, Any]:
        return vars(self).copy()


@dataclass
class AgreementReport:
    criterion: str
    pairs: list[Agreement] = field(default_factory=list)
    unmatched: int = 0  # expert decisions whose sample/cell has no judge score in the run


def _agreement(first: str, second: str, x: Sequence[int], y: Sequence[int], ties: int = 0) -> Agreement:
    if not x:
        return Agreement(first, second, 0, None, None, None, None, ties)
    percent = sum(a == b for a, b in zip(x, y, strict=True)) / len(x)
    kappa = cohen_kappa(x, y) if len(set(x) | set(y)) > 1 else None  # undefined with one label in all
    rho = spearman_rho([float(v) for v in x], [float(v) for v in y]) if len(set(x)) > 1 and len(set(y)) > 1 else None
    return Agreement(
        first, second, len(x), kappa, percent, rho.statistic if rho else None, rho.p_value if rho else None, ties
    )


def judge_preference(
    scores_a: Mapping[str, float | None], scores_b: Mapping[str, float | None], criterion: str
) -> str | None:
    """ "a", "b", "tie", or None when a score is missing."""
    names = CRITERION_SCORERS[criterion]
    values_a = [scores_a.get(n) for n in names]
    values_b = [scores_b.get(n) for n in names]
    if any(v is None for v in (*values_a, *values_b)):
        return None
    mean_a = fmean(float(v) for v in values_a if v is not None)
    mean_b = fmean(float(v) for v in values_b if v is not None)
    return "tie" if mean_a == mean_b else ("a" if mean_a > mean_b else "b")


def agreement(
    labels: Sequence[PreferenceLabel], scores: Mapping[tuple[str, str], Mapping[str, float | None]]
) -> list[AgreementReport]:
    """Expert–expert and judge–each-expert agreement per criterion. ``scores``: (sample, cell) → scorer → value."""
    reports = []
    for criterion in CRITERION_SCORERS:
        chosen = [label for label in labels if label.criterion == criterion]
        if not chosen:
            continue
        report = AgreementReport(criterion)
        by_expert: dict[str, dict[tuple[str, str, str], int]] = defaultdict(dict)
        for label in chosen:
            by_expert[label.expert][(label.sample, label.a, label.b)] = 1 if label.prefers == "a" else 0
        experts = sorted(by_expert)
        for first, second in combinations(experts, 2):
            shared = sorted(set(by_expert[first]) & set(by_expert[second]))
            report.pairs.append(
                _agreement(first, second, [by_expert[first][k] for k in shared], [by_expert[second][k] for k in shared])
            )
        for expert in experts:
            x, y, ties = [], [], 0
            for (sample, a, b), choice in sorted(by_expert[expert].items()):
                if (sample, a) not in scores or (sample, b) not in scores:
                    report.unmatched += 1
                    continue
                judged = judge_preference(scores[(sample, a)], scores[(sample, b)], criterion)
                if judged is None:
                    report.unmatched += 1
                elif judged == "tie":
                    ties += 1
                else:
                    x.append(1 if judged == "a" else 0)
                    y.append(choice)
            report.pairs.append(_agreement("judge", expert, x, y, ties))
        reports.append(report)
    return reports


def run_scores(rows: Sequence[Any]) -> dict[tuple[str, str], dict[str, float | None]]:
    """(sample, cell) → scorer → mean over epochs, from a stored run's result rows."""
    collected: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row.status != "ok":
            continue
        for name, value in row.scores.items():
            if value is not None:
                collected[(row.sample_id, row.cell)][name].append(float(value))
    return {key: {name: fmean(values) for name, values in by_name.items()} for key, by_name in collected.items()}
