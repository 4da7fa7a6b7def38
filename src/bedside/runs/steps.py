"""What a multi-step system (a simulation, then documents, exams, judges) does with a step that fails.

The conversation's failure is the sample's error. A later step's failure (a judge that never answers on the
scale, a document still malformed after its re-asks) is recorded under the step's name with its cause, and
that step's scores are absent, never zero; a step that had nothing to work on is recorded as skipped, with why.
Tasks store both in ``Output.extra["errors"]`` / ``["skipped"]`` and :func:`failures_table` counts them per
cell for the report.
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from bedside.judges import JudgeError, Judgement, RubricJudge
from bedside.llm.types import Role
from bedside.runs.task import ReportTable, SampleContext

T = TypeVar("T")
FAILURES_TITLE = "Failed and skipped steps"
_FAILURES_NOTE = "A failed step's scores are absent, never zero; a skipped step had nothing to work on."


class Steps:
    """Runs a sample's later steps, keeping each one's failure as data."""

    def __init__(self) -> None:
        self.errors: dict[str, str] = {}
        self.skipped: dict[str, str] = {}

    async def run(self, name: str, step: Callable[[], Awaitable[T]]) -> T | None:
        try:
            return await step()
        except Exception as exc:  # a later step's failure is that step's error, kept with its cause
            self.errors[name] = f"{type(exc).__name__}: {exc}"
            return None

    def skip(self, name: str, why: str) -> None:
        self.skipped[name] = why


def judgement_data(judgement: Judgement) -> dict[str, Any]:
    """A judgement as stored in a sample's output."""
    return {
        "rubric": judgement.rubric,
        "aggregate": judgement.aggregate,
        "groups": dict(judgement.groups),
        "scores": {name: s.score for name, s in judgement.scores.items()},
        "justifications": {name: s.justification for name, s in judgement.scores.items()},
        "evidence": {name: [e.model_dump(mode="json") for e in s.evidence] for name, s in judgement.scores.items()},
        "attempts": judgement.attempts,
    }


async def judge_in_sample(
    rubric: str,
    inputs: Mapping[str, str],
    context: SampleContext,
    *,
    role: Role = "judge",
    max_repairs: int = 2,
) -> dict[str, Any]:
    """One rubric judgement through the sample's context: cached with its epoch, its prompt kept, every attempt
    counted in the sample's usage. A malformed answer is re-asked at most ``max_repairs`` times. Raises
    :class:`~bedside.judges.JudgeError` when no valid answer came."""
    judge = RubricJudge(rubric, context.model(role), settings=context.settings.get(role), max_repairs=max_repairs)
    context.prompts.append(judge.messages(inputs))
    judgement = await judge.judge(inputs, epoch=context.epoch, on_completion=lambda c: context.record(role, c))
    return judgement_data(judgement)


async def judge_all(
    rubrics: Mapping[str, str],
    inputs: Mapping[str, Mapping[str, str]],
    context: SampleContext,
    *,
    max_repairs: int = 2,
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Run judge ``name`` (rubric ``rubrics[name]``) on ``inputs[name]`` for every name in ``inputs``, at once:
    (name → stored judgement, name → the failure's cause). A failed judge is data, never a score."""

    async def one(name: str) -> tuple[str, dict[str, Any] | str]:
        try:
            return name, await judge_in_sample(rubrics[name], inputs[name], context, max_repairs=max_repairs)
        except JudgeError as exc:
            return name, f"JudgeError: {exc.cause}"

    results = await asyncio.gather(*(one(name) for name in inputs))
    done = {name: value for name, value in results if isinstance(value, dict)}
    failed = {name: value for name, value in results if isinstance(value, str)}
    return done, failed


def _shortened(cause: str, limit: int = 160) -> str:
    """A cause as the table shows it: whole when short, else cut at a word with an ellipsis, never mid-phrase
    as if complete (the output's ``extra.errors`` keeps it whole)."""
    if len(cause) <= limit:
        return cause
    return cause[:limit].rsplit(" ", 1)[0] + " …"


def failures_table(rows: Sequence[Any], note: str = "") -> ReportTable | None:
    """Per cell and step: how many samples failed it and how many skipped it, with the first cause."""
    failed: dict[tuple[str, str], list[str]] = defaultdict(list)
    skipped: Counter[tuple[str, str]] = Counter()
    for row in rows:
        if row.status != "ok" or not row.output:
            failed[(row.cell, "sample")].append(row.error or "error")
            continue
        extra = row.output.get("extra", {})
        for step, cause in (extra.get("errors") or {}).items():
            failed[(row.cell, step)].append(cause)
        for step in extra.get("skipped") or {}:
            skipped[(row.cell, step)] += 1
    keys = sorted(set(failed) | set(skipped))
    if not keys:
        return None
    out = [
        [
            cell,
            step,
            str(len(failed.get((cell, step), []))),
            str(skipped.get((cell, step), 0)),
            _shortened((failed.get((cell, step)) or [""])[0]),
        ]
        for cell, step in keys
    ]
    return ReportTable(
        FAILURES_TITLE,
        ["cell", "step", "failed", "skipped", "first cause"],
        out,
        f"{_FAILURES_NOTE} {note}".strip(),
    )
