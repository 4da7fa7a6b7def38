"""Grounded QA as a runnable task (``task: citeqa`` in a run config).

Datasets: ``path`` to cases (``.jsonl``, case ``.xml`` or the website examples ``.json``) with
``options.key`` for a key JSON; without a path, the 10 synthetic cases shipped with bedside. Systems:
``one_stage``, ``two_stage`` and ``classifier`` (options below). An output's text is the answer in the official
submission form; the trace records the selected evidence per stage.

``classifier`` options: ``model`` (a saved ``.npz``), or ``train`` (cases with a key; ``train_key`` when they
need one) to fit one at run start; by default it trains on the synthetic cases. A case that is also in the
training set is answered by a classifier fitted without it (leave-one-case-out), so no case is selected for by a
model that saw its key.

Scorers (per case; a report's means are the macro averages; ``bedside citeqa score`` on an exported
submission gives micro ones too): ``strict_precision|recall|f1``, ``lenient_precision|recall|f1`` (2025
definition), ``lenient2026_f1``, ``evidence_recall`` (stage 1's selection against essential + supplementary),
``relevance_<metric>`` for each relevance metric and ``relevance`` (their mean). See :mod:`.scoring`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from bedside.llm import GenerationSettings, Model
from bedside.runs.config import DatasetConfig
from bedside.runs.task import Output, Sample, SampleContext, System
from bedside.tasks.citeqa.cases import Case
from bedside.tasks.citeqa.classifier import EvidenceClassifier
from bedside.tasks.citeqa.readers import read_cases
from bedside.tasks.citeqa.scoring import RELEVANCE_METRICS, CiteQAScores, score_answers
from bedside.tasks.citeqa.systems import Answer, classifier_then_answer, one_stage, two_stage

SYNTHETIC_CASES = Path(__file__).parent / "data" / "synthetic_cases.jsonl"

_FACTUALITY = {
    f"{variation}_{measure}": (variation, measure)
    for variation in ("strict", "lenient")
    for measure in ("precision", "recall", "f1")
}
SCORERS = (
    *_FACTUALITY,
    "lenient2026_f1",
    "evidence_recall",
    *(f"relevance_{m}" for m in RELEVANCE_METRICS),
    "relevance",
)


def case_of(sample: Sample) -> Case:
    return Case.model_validate(sample.inputs["case"])


def _load(name: str, config: DatasetConfig) -> list[Sample]:
    path = Path(config.path) if config.path else SYNTHETIC_CASES
    cases = read_cases(path, config.options.get("key"))
    return [
        Sample(
            id=case.id,
            inputs={"case": case.model_dump(mode="json")},
            references=[case.reference_answer] if case.reference_answer else [],
        )
        for case in cases
    ]


def _output(answer: Answer) -> Output:
    return Output(text=answer.text, trace=answer.trace, extra={"selected": answer.selected})


async def _one_stage(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    return _output(await one_stage(case_of(sample), context, dict(options)))


async def _two_stage(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    return _output(await two_stage(case_of(sample), context, dict(options)))


@lru_cache(maxsize=64)
def _fitted(train: str, key: str | None, without: str | None) -> EvidenceClassifier:
    cases = [c for c in read_cases(train, key) if c.id != without]
    return EvidenceClassifier.fit(cases)


@lru_cache(maxsize=8)
def _training_ids(train: str, key: str | None) -> frozenset[str]:
    return frozenset(c.id for c in read_cases(train, key))


def classifier_for(case: Case, options: Mapping[str, Any]) -> EvidenceClassifier:
    if options.get("model"):
        return EvidenceClassifier.load(options["model"])
    train = str(options.get("train") or SYNTHETIC_CASES)
    key = options.get("train_key")
    held_out = case.id if case.id in _training_ids(train, key) else None
    return _fitted(train, key, held_out)


async def _classifier(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    case = case_of(sample)
    return _output(await classifier_then_answer(case, context, classifier_for(case, options), dict(options)))


@lru_cache(maxsize=256)
def _scores(case_json: str, text: str, variant: str) -> CiteQAScores:
    case = Case.model_validate_json(case_json)
    metrics = RELEVANCE_METRICS if case.sentences else ()
    return score_answers([case], {case.id: text}, lenient=variant, metrics=tuple(metrics))  # type: ignore[arg-type]


class CiteQATask:
    name = "citeqa"
    systems: Mapping[str, System] = {"one_stage": _one_stage, "two_stage": _two_stage, "classifier": _classifier}
    default_scorers = (
        "strict_precision",
        "strict_recall",
        "strict_f1",
        "lenient_f1",
        "evidence_recall",
        "relevance",
        "words",
    )
    scorers: tuple[str, ...] = SCORERS

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        return _load(name, config)

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        case_json = json.dumps(sample.inputs["case"], sort_keys=True)
        if scorer in _FACTUALITY:
            variation, measure = _FACTUALITY[scorer]
            prf = _scores(case_json, output.text, "2025").cases[0].prf[variation]
            return float(getattr(prf, measure))
        if scorer == "lenient2026_f1":
            return _scores(case_json, output.text, "2026").cases[0].prf["lenient"].f1
        if scorer == "evidence_recall":
            selected = output.extra.get("selected")
            relevant = set(case_of(sample).labelled("essential", "supplementary"))
            if selected is None or not relevant:
                return None
            return len(set(selected) & relevant) / len(relevant)
        if scorer == "relevance" or scorer.startswith("relevance_"):
            scores = _scores(case_json, output.text, "2025")
            if scorer == "relevance":
                return scores.overall_relevance
            return scores.relevance.get(scorer.removeprefix("relevance_"))
        raise KeyError(scorer)


TASK = CiteQATask()


async def answer_cases(
    cases: list[Case],
    system: str,
    model: Model,
    *,
    options: Mapping[str, Any] | None = None,
    settings: GenerationSettings | None = None,
    concurrency: int = 4,
    on_done: Callable[[str, str | None], None] | None = None,
) -> tuple[dict[str, str], dict[str, str]]:
    """Answer each case with one system outside a run: (case id → answer text, case id → error).

    A case whose answer fails its guardrails (or whose model call fails) is reported in the errors, never
    written as an answer. ``on_done(case_id, error_or_None)`` is called as each case finishes.
    """
    if system not in CiteQATask.systems:
        raise ValueError(f"unknown system {system!r}; choose from {', '.join(CiteQATask.systems)}")
    run = CiteQATask.systems[system]
    gate = asyncio.Semaphore(concurrency)
    answers: dict[str, str] = {}
    errors: dict[str, str] = {}

    async def one(case: Case) -> None:
        async with gate:
            context = SampleContext({"system": model}, {"system": settings} if settings else {}, "0", 0)
            sample = Sample(id=case.id, inputs={"case": case.model_dump(mode="json")})
            try:
                answers[case.id] = (await run(sample, dict(options or {}), context)).text
                error: str | None = None
            except Exception as exc:  # every failure is reported per case, with its cause
                error = errors[case.id] = f"{type(exc).__name__}: {exc}"
            if on_done:
                on_done(case.id, error)

    await asyncio.gather(*(one(case) for case in cases))
    order = [c.id for c in cases]
    return {i: answers[i] for i in order if i in answers}, {i: errors[i] for i in order if i in errors}
