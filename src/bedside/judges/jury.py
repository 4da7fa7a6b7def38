"""Juries (several judges, scored independently) and stability checks (one judge, k repeated draws).

Jury aggregation, per criterion over the judges that answered:

- ``mean`` / ``median`` of their scores;
- ``majority``: the most frequent score; a tie between equally frequent scores goes to the *lower* one, the
  conservative reading (two binary judges split 0/1 give 0). The share of judges agreeing is kept.

Each judge's own judgement is kept, and a judge that failed is listed with its cause; the verdict aggregates the
rest. When every judge fails the jury raises :class:`JuryError` with all causes: there is no score to give.
A rubric's groups are aggregated from the jury's per-criterion scores, like its overall aggregate.

Stability: the same judge is asked k times with distinct epoch tags (``stability-0`` ..), which the cache keys
on, so each is a fresh draw (use a temperature above 0, or every draw is the same answer). Per criterion the
mean, sample standard deviation (ddof 1) and range of the k scores make an unstable judge visible; so do the
same figures for the overall aggregate and each group's.
"""

from __future__ import annotations

import asyncio
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from bedside.judges.judge import JudgeError, Judgement, RubricJudge

JuryAggregate = Literal["mean", "median", "majority"]


class JuryError(RuntimeError):
    def __init__(self, rubric: str, errors: Mapping[str, str]) -> None:
        causes = "; ".join(f"{judge}: {cause}" for judge, cause in errors.items())
        super().__init__(f"no judge of the jury could judge {rubric}: {causes}")
        self.rubric = rubric
        self.errors = dict(errors)


@dataclass(frozen=True)
class JuryVerdict:
    rubric: str
    aggregate_by: JuryAggregate
    judgements: dict[str, Judgement]
    errors: dict[str, str]
    scores: dict[str, float]  # per criterion, over the judges that answered
    agreement: dict[str, float]  # per criterion: share of answering judges that gave the aggregated score
    aggregate: float  # the rubric's aggregate of ``scores``
    groups: dict[str, float] = field(default_factory=dict)  # each rubric group's aggregate of ``scores``


def combine_scores(values: Sequence[float], how: JuryAggregate) -> float:
    if not values:
        raise ValueError("no scores to combine")
    if how == "mean":
        return statistics.fmean(values)
    if how == "median":
        return float(statistics.median(values))
    counts = Counter(values)
    top = max(counts.values())
    return min(value for value, count in counts.items() if count == top)


class Jury:
    """Judges sharing one rubric, each with its own model; they are asked concurrently."""

    def __init__(self, judges: Sequence[RubricJudge], *, aggregate: JuryAggregate = "mean") -> None:
        if not judges:
            raise ValueError("a jury needs at least one judge")
        rubrics = {j.rubric.id for j in judges}
        if len(rubrics) != 1:
            raise ValueError(f"a jury's judges must share one rubric; got {sorted(rubrics)}")
        names = [j.name for j in judges]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"judge names must be unique within a jury (name= sets one); repeated: {repeated}")
        self.judges = list(judges)
        self.rubric = judges[0].rubric
        self.aggregate = aggregate

    async def judge(self, inputs: Mapping[str, str], *, epoch: int | str = 0) -> JuryVerdict:
        results = await asyncio.gather(*(j.judge(inputs, epoch=epoch) for j in self.judges), return_exceptions=True)
        judgements: dict[str, Judgement] = {}
        errors: dict[str, str] = {}
        for judge, result in zip(self.judges, results, strict=True):
            if isinstance(result, JudgeError):
                errors[judge.name] = result.cause
            elif isinstance(result, BaseException):
                raise result
            else:
                judgements[judge.name] = result
        if not judgements:
            raise JuryError(self.rubric.id, errors)
        scores, agreement = {}, {}
        for criterion in self.rubric.criterion_names:
            values = [j.score(criterion) for j in judgements.values()]
            scores[criterion] = combine_scores(values, self.aggregate)
            agreement[criterion] = sum(v == scores[criterion] for v in values) / len(values)
        return JuryVerdict(
            rubric=self.rubric.id,
            aggregate_by=self.aggregate,
            judgements=judgements,
            errors=errors,
            scores=scores,
            agreement=agreement,
            aggregate=self.rubric.combine(list(scores.values())),
            groups=self.rubric.group_scores(scores),
        )


@dataclass(frozen=True)
class Spread:
    mean: float
    stdev: float  # sample standard deviation; 0 with a single draw
    low: float
    high: float

    @property
    def range(self) -> float:
        return self.high - self.low


def spread(values: Sequence[float]) -> Spread:
    if not values:
        raise ValueError("no values")
    stdev = statistics.stdev(values) if len(values) > 1 else 0.0
    return Spread(statistics.fmean(values), stdev, min(values), max(values))


@dataclass(frozen=True)
class Stability:
    rubric: str
    judge: str
    judgements: list[Judgement]
    errors: dict[str, str] = field(default_factory=dict)  # epoch tag -> cause
    criteria: dict[str, Spread] = field(default_factory=dict)
    aggregate: Spread | None = None
    groups: dict[str, Spread] = field(default_factory=dict)  # per rubric group, over the draws


async def repeat_judgement(judge: RubricJudge, inputs: Mapping[str, str], k: int) -> Stability:
    """Ask ``judge`` k times (epochs ``stability-0`` .. ``stability-{k-1}``) and summarise the spread."""
    if k < 1:
        raise ValueError("k must be at least 1")
    epochs = [f"stability-{i}" for i in range(k)]
    results = await asyncio.gather(*(judge.judge(inputs, epoch=e) for e in epochs), return_exceptions=True)
    judgements, errors = [], {}
    for epoch, result in zip(epochs, results, strict=True):
        if isinstance(result, JudgeError):
            errors[epoch] = result.cause
        elif isinstance(result, BaseException):
            raise result
        else:
            judgements.append(result)
    if not judgements:
        return Stability(judge.rubric.id, judge.name, [], errors)
    criteria = {c: spread([j.score(c) for j in judgements]) for c in judge.rubric.criterion_names}
    groups = {g: spread([j.groups[g] for j in judgements]) for g in judge.rubric.groups}
    return Stability(
        judge.rubric.id, judge.name, judgements, errors, criteria, spread([j.aggregate for j in judgements]), groups
    )
