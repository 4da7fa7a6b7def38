"""MedAlign's analyses of clinician labels (Section 5, Table 3 and the appendix breakdowns).

Input: one :class:`~.labels.ResponseLabel` per (instruction, model) from the primary evaluator (see
:func:`~.labels.primary_labels`), and the instructions for their taxonomy labels, specialty and record length.

- Table 3: per model, correct % (micro: correct responses / instructions judged), win rate from the head-to-head
  matrix of strict preferences with **ties left out** of each pair's denominator (so WRs average 0.5, as the
  paper's do), and mean rank (lower is better).
- Breakdowns: correctness by category and by subcategory, with the micro average (over responses) and the macro
  average (mean of the groups' rates) per model (Table S8, Figure S5); by submitter specialty, pooled over models
  (Appendix J); by record-length quartile, correctness and mean rank (Tables S12-S14; edges from the records'
  token lengths, each instruction binned by its record's length).
- Point-biserial correlation of correct (0/1) with rank, per instruction across its responses, then the mean with
  a bootstrap 95% CI; an instruction whose responses are all correct or all incorrect is undefined, skipped and
  counted (bedside's choice of unit: the paper does not state it); overall and by category (Table S9).
- Easy and hard instructions: correct for every model / for none (Appendix M).
- The provider-error subset: instructions where no response is an endpoint error (the paper's 259), for re-running
  any of the above.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bedside.stats import HeadToHead, bootstrap_ci, head_to_head, point_biserial
from bedside.tasks.instruct.cases import Instruction
from bedside.tasks.instruct.labels import ResponseLabel


@dataclass(frozen=True)
class ModelRow:
    model: str
    n: int
    correct: float  # share of this model's judged responses labelled correct
    win_rate: float | None
    mean_rank: float | None


@dataclass(frozen=True)
class Table3:
    rows: list[ModelRow]
    matrix: HeadToHead


def _models(labels: Sequence[ResponseLabel], models: Sequence[str] | None) -> list[str]:
    return list(models) if models is not None else sorted({label.model for label in labels})


def rankings(labels: Sequence[ResponseLabel]) -> dict[str, dict[str, float]]:
    """instruction -> model -> rank, for labels that carry a rank."""
    ranks: dict[str, dict[str, float]] = defaultdict(dict)
    for label in labels:
        if label.rank is not None:
            ranks[label.instruction_id][label.model] = label.rank
    return dict(ranks)


def table3(labels: Sequence[ResponseLabel], models: Sequence[str] | None = None) -> Table3:
    names = _models(labels, models)
    ranks = rankings(labels)
    matrix = head_to_head(ranks, names, ties="exclude")
    rows = []
    for model in names:
        mine = [label for label in labels if label.model == model]
        ranked = [label.rank for label in mine if label.rank is not None]
        rows.append(
            ModelRow(
                model=model,
                n=len(mine),
                correct=sum(label.correct for label in mine) / len(mine) if mine else math.nan,
                win_rate=matrix.win_rate(model),
                mean_rank=sum(ranked) / len(ranked) if ranked else None,
            )
        )
    return Table3(rows, matrix)


@dataclass(frozen=True)
class Breakdown:
    key: str
    groups: list[str]
    models: list[str]
    rates: dict[str, dict[str, float | None]]  # group -> model -> correct share (None: no responses)
    counts: dict[str, int]  # group -> instructions
    micro: dict[str, float]  # model -> over all responses
    macro: dict[str, float]  # model -> mean of group rates
    row_macro: dict[str, float | None]  # group -> mean over models


def correctness_by(
    labels: Sequence[ResponseLabel],
    instructions: Mapping[str, Instruction],
    key: Callable[[Instruction], str | None],
    *,
    name: str,
    models: Sequence[str] | None = None,
) -> Breakdown:
    names = _models(labels, models)
    cells: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    members: dict[str, set[str]] = defaultdict(set)
    for label in labels:
        instruction = instructions.get(label.instruction_id)
        group = (key(instruction) if instruction else None) or "(unlabelled)"
        cells[group][label.model].append(label.correct)
        members[group].add(label.instruction_id)
    groups = sorted(cells, key=lambda g: (-len(members[g]), g))
    rates = {g: {m: (sum(v) / len(v) if (v := cells[g].get(m)) else None) for m in names} for g in groups}
    micro = {}
    macro = {}
    for m in names:
        values = [c for g in groups for c in cells[g].get(m, [])]
        micro[m] = sum(values) / len(values) if values else math.nan
        defined = [r for g in groups if (r := rates[g][m]) is not None]
        macro[m] = sum(defined) / len(defined) if defined else math.nan
    row_macro = {
        g: (sum(d) / len(d) if (d := [r for r in rates[g].values() if r is not None]) else None) for g in groups
    }
    return Breakdown(name, groups, names, rates, {g: len(members[g]) for g in groups}, micro, macro, row_macro)


def with_label_specialties(
    instructions: Mapping[str, Instruction], labels: Sequence[ResponseLabel]
) -> dict[str, Instruction]:
    """The instructions with each one's submitter specialty filled from the labels where the instructions file
    has none (the release's gold file does not carry it; its reviewed file does, per row). An instruction the
    labels name but the file lacks is added with only its id and specialty, so the specialty breakdown (Appendix
    J) counts it. A specialty the instructions file gives wins over the labels'."""
    found: dict[str, str] = {}
    for label in labels:
        if label.submitter_specialty:
            found.setdefault(label.instruction_id, label.submitter_specialty)
    merged = dict(instructions)
    for item, specialty in found.items():
        existing = merged.get(item)
        if existing is None:
            merged[item] = Instruction(
                id=item, question="(not in the instructions file)", submitter_specialty=specialty
            )
        elif not existing.submitter_specialty:
            merged[item] = existing.model_copy(update={"submitter_specialty": specialty})
    return merged


@dataclass(frozen=True)
class PointBiserial:
    mean: float | None
    low: float | None
    high: float | None
    n: int  # instructions with a defined correlation
    skipped: int  # all correct or all incorrect (or a constant rank)
    per_instruction: dict[str, float]


def rank_correctness_correlation(labels: Sequence[ResponseLabel], *, seed: int = 0) -> PointBiserial:
    by_instruction: dict[str, list[ResponseLabel]] = defaultdict(list)
    for label in labels:
        if label.rank is not None:
            by_instruction[label.instruction_id].append(label)
    values: dict[str, float] = {}
    skipped = 0
    for instruction, group in sorted(by_instruction.items()):
        correct = [int(label.correct) for label in group]
        ranks = [float(label.rank or 0) for label in group]
        if len(group) < 2 or len(set(correct)) < 2 or len(set(ranks)) < 2:
            skipped += 1
            continue
        values[instruction] = point_biserial(correct, ranks).statistic
    if not values:
        return PointBiserial(None, None, None, 0, skipped, {})
    interval = bootstrap_ci(list(values.values()), seed=seed)
    return PointBiserial(interval.estimate, interval.low, interval.high, len(values), skipped, values)


def correlation_by(
    labels: Sequence[ResponseLabel],
    instructions: Mapping[str, Instruction],
    key: Callable[[Instruction], str | None],
    *,
    seed: int = 0,
) -> dict[str, PointBiserial]:
    """:func:`rank_correctness_correlation` within each group of instructions (Table S9: by category), groups
    sorted by name; an instruction not in ``instructions`` or without the key is in ``(unlabelled)``."""
    groups: dict[str, list[ResponseLabel]] = defaultdict(list)
    for label in labels:
        instruction = instructions.get(label.instruction_id)
        groups[(key(instruction) if instruction else None) or "(unlabelled)"].append(label)
    return {group: rank_correctness_correlation(members, seed=seed) for group, members in sorted(groups.items())}


@dataclass(frozen=True)
class Difficulty:
    all_correct: list[str]
    none_correct: list[str]
    mixed: int
    n: int


def easy_and_hard(labels: Sequence[ResponseLabel]) -> Difficulty:
    by_instruction: dict[str, list[bool]] = defaultdict(list)
    for label in labels:
        by_instruction[label.instruction_id].append(label.correct)
    easy = sorted(i for i, v in by_instruction.items() if all(v))
    hard = sorted(i for i, v in by_instruction.items() if not any(v))
    return Difficulty(easy, hard, len(by_instruction) - len(easy) - len(hard), len(by_instruction))


def without_provider_errors(labels: Sequence[ResponseLabel]) -> list[ResponseLabel]:
    """Labels of the instructions where no model's response was an endpoint error (the paper's 259 subset)."""
    flagged = {label.instruction_id for label in labels if label.provider_error}
    return [label for label in labels if label.instruction_id not in flagged]


@dataclass(frozen=True)
class Quartiles:
    edges: list[float]  # 5 edges: min, q1, median, q3, max of the records' lengths
    counts: list[int]  # instructions per quartile
    correct: dict[str, list[float | None]]  # model -> per quartile
    mean_rank: dict[str, list[float | None]]
    tokenizer: str


def by_length_quartile(
    labels: Sequence[ResponseLabel], lengths: Mapping[str, int], *, tokenizer: str, models: Sequence[str] | None = None
) -> Quartiles:
    """Correctness and mean rank by the quartile of the instruction's record length (in ``tokenizer`` tokens)."""
    names = _models(labels, models)
    judged = sorted({label.instruction_id for label in labels if label.instruction_id in lengths})
    if not judged:
        raise ValueError("no judged instruction has a record length")
    values = np.array([lengths[i] for i in judged], dtype=float)
    edges = [float(v) for v in np.quantile(values, [0, 0.25, 0.5, 0.75, 1.0])]

    def quartile(instruction: str) -> int:
        length = lengths[instruction]
        for q in range(3):
            if length <= edges[q + 1]:
                return q
        return 3

    counts = [0, 0, 0, 0]
    for instruction in judged:
        counts[quartile(instruction)] += 1
    correct: dict[str, list[float | None]] = {}
    mean_rank: dict[str, list[float | None]] = {}
    for model in names:
        cells: list[list[ResponseLabel]] = [[], [], [], []]
        for label in labels:
            if label.model == model and label.instruction_id in lengths:
                cells[quartile(label.instruction_id)].append(label)
        correct[model] = [sum(x.correct for x in c) / len(c) if c else None for c in cells]
        mean_rank[model] = [
            (sum(r) / len(r) if (r := [x.rank for x in c if x.rank is not None]) else None) for c in cells
        ]
    return Quartiles(edges, counts, correct, mean_rank, tokenizer)


@dataclass(frozen=True)
class LengthPercentiles:
    source: str  # a model, or "clinicians" for the reference answers
    n: int
    percentiles: list[float]  # 0, 25, 50, 75, 100


def response_lengths(
    labels: Sequence[ResponseLabel],
    instructions: Mapping[str, Instruction],
    count: Callable[[str], int],
    *,
    models: Sequence[str] | None = None,
) -> list[LengthPercentiles]:
    """Token-length percentiles of each model's responses and of the clinicians' references (Table S15; the
    paper counted in cl100k_base, bedside in the tokenizer given)."""
    rows = []
    for model in _models(labels, models):
        lengths = [count(x.response) for x in labels if x.model == model]
        if lengths:
            rows.append(LengthPercentiles(model, len(lengths), _percentiles(lengths)))
    judged = {x.instruction_id for x in labels}
    references = [count(r.text) for i in judged if i in instructions for r in instructions[i].references]
    if references:
        rows.append(LengthPercentiles("clinicians", len(references), _percentiles(references)))
    return rows


def _percentiles(values: list[int]) -> list[float]:
    return [float(v) for v in np.percentile(np.asarray(values, dtype=float), [0, 25, 50, 75, 100])]
