"""Grounded QA as a runnable task (``task: citeqa`` in a run config).

Datasets: ``path`` to cases (``.jsonl``, case ``.xml`` or the website examples ``.json``) with
``options.key`` for a key JSON; without a path, the 10 synthetic cases shipped with bedside. Systems:
``one_stage``, ``two_stage`` and ``classifier`` (options below). An output's text is the answer in the official
submission form; the trace records the selected evidence per stage.

``classifier`` options: ``model`` (a saved ``.npz``), or ``train`` (cases with a key; ``train_key`` when they
need one) to fit one at run start; by default it trains on the synthetic cases. A case that is also in the
training set is answered by a classifier fitted without it (leave-one-case-out), so no case is selected for by a
model that saw its key.

Scorers (per case; a report's means are the macro averages, and the task's report table gives the micro
ones, pooled as the official scorer pools them; ``bedside citeqa submission`` exports a run's answers for
``bedside citeqa score`` or the official scorer): ``strict_precision|recall|f1``, ``lenient_precision|recall|f1`` (2025
definition), ``lenient2026_f1``, ``evidence_recall`` (stage 1's selection against essential + supplementary),
``relevance_<metric>`` for each relevance metric and ``relevance`` (their mean). See :mod:`.scoring`.
Three more count what should be zero: ``invalid_citations`` (cited ids the case does not have; they also count
as false positives), ``citation_syntax_in_text`` (statements whose text held citation syntax, taken out) and
``cut_to_word_limit`` (1 for an answer still over 75 words after its re-asks, kept cut to 75; see
:mod:`.systems`).

System options besides each system's own: ``max_repairs`` (re-asks after a rejected reply, default 2),
``fix_role`` (the role whose model reformats a rejected reply, e.g. ``helper`` with ``models.helper`` set;
default the system model), ``word_limit`` (75) and the prompt templates (``stage1_template``,
``stage2_template``, ``template`` for ``one_stage``, ``fix_template``, ``stage1_examples``, ``answer_examples``).

The factuality scorers read the citations from the statements' citation field, stored in the output's
``extra["statements"]``, never from the text: the text is the submission form, and text a model was talked into
writing must not cite anything (see :mod:`.systems`). An output stored without that field (an older run) is
read from its text.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from bedside.llm import GenerationSettings, Model
from bedside.runs.config import DatasetConfig
from bedside.runs.task import Output, ReportTable, Sample, SampleContext, System
from bedside.tasks.citeqa.cases import Case
from bedside.tasks.citeqa.classifier import EvidenceClassifier
from bedside.tasks.citeqa.options import ClassifierOptions, DatasetOptions, OneStageOptions, TwoStageOptions
from bedside.tasks.citeqa.readers import read_cases
from bedside.tasks.citeqa.scoring import (
    RELEVANCE_METRICS,
    STAND_INS,
    CiteQAScores,
    Counts,
    prf_2025,
    score_answers,
)
from bedside.tasks.citeqa.submission import AnswerSentence, format_answer, neutralise_citation_syntax
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
    "invalid_citations",
    "citation_syntax_in_text",
    "cut_to_word_limit",
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
    extra: dict[str, Any] = {
        "selected": answer.selected,
        "statements": [{"statement": s.text, "citations": list(s.citations)} for s in answer.sentences],
    }
    if answer.citation_syntax:
        extra["citation_syntax_in_text"] = answer.citation_syntax
    if answer.cut:
        extra["cut_to_word_limit"] = answer.cut
    return Output(text=answer.text, trace=answer.trace, extra=extra)


def answer_of(output: Output) -> str:
    """The answer the factuality scorers read: rebuilt from the statements' citation fields when stored.

    Rebuilding goes through the submission form, so an honest answer scores exactly as its text does; the
    statements' text is cleaned of citation syntax first, so only the field can cite.
    """
    statements = output.extra.get("statements")
    if statements is None:
        return output.text
    sentences = []
    for s in statements:
        text, _ = neutralise_citation_syntax(str(s["statement"]))
        sentences.append(AnswerSentence(text, tuple(str(c) for c in s["citations"])))
    return format_answer(sentences)


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
def _scores(case_json: str, text: str, variant: str, relevance: bool = True) -> CiteQAScores:
    """One case's scores; ``relevance=False`` for the factuality scorers, which need only the citations (the
    relevance metrics load MiniLM and the 1 GB MeSH index, which a factuality-only run must not pay for)."""
    case = Case.model_validate_json(case_json)
    metrics = RELEVANCE_METRICS if case.sentences and relevance else ()
    return score_answers([case], {case.id: text}, lenient=variant, metrics=tuple(metrics))  # type: ignore[arg-type]


@lru_cache(maxsize=4096)
def _counts(case_json: str, text: str) -> dict[str, Counts]:
    case = Case.model_validate_json(case_json)
    return score_answers([case], {case.id: text}, metrics=None).cases[0].counts


def factuality_counts_of(row: Any) -> dict[str, Counts]:
    """A stored result row's strict and lenient tp/fp/fn, from its citation field (see :func:`answer_of`)."""
    case_json = json.dumps(row.sample["inputs"]["case"], sort_keys=True)
    return _counts(case_json, answer_of(Output.model_validate(row.output)))


def report_tables(rows: Sequence[Any]) -> list[ReportTable]:
    """Micro factuality per cell: tp/fp/fn pooled over the cell's answers before P/R/F1, as the official scorer
    computes its micro scores over a submission's cases (the report's means are the per-case, macro, ones)."""
    pooled: dict[str, dict[str, list[int]]] = defaultdict(lambda: {"strict": [0, 0, 0], "lenient": [0, 0, 0]})
    answers: dict[str, int] = defaultdict(int)
    cut: dict[str, int] = defaultdict(int)
    errors: dict[str, int] = defaultdict(int)
    for row in rows:
        if row.status != "ok" or not row.output:
            errors[row.cell] += 1
            continue
        answers[row.cell] += 1
        cut[row.cell] += "cut_to_word_limit" in (row.output.get("extra") or {})
        for variation, counts in factuality_counts_of(row).items():
            total = pooled[row.cell][variation]
            total[0] += counts.tp
            total[1] += counts.fp
            total[2] += counts.fn
    if not answers and not errors:
        return []
    return [_micro_table(pooled, answers, cut, errors), *_stand_in_tables(rows)]


def _stand_in_tables(rows: Sequence[Any]) -> list[ReportTable]:
    """Which stored relevance figures average in offline stand-ins (:data:`.scoring.STAND_INS`), so the report
    marks them where they enter a figure rather than leaving ``relevance`` to pass for the official mean."""
    scored = {name for row in rows if row.status == "ok" for name in row.scores}
    used = [name for name in STAND_INS if f"relevance_{name}" in scored or "relevance" in scored]
    if not used:
        return []
    body = [[f"relevance_{name}", STAND_INS[name], "yes" if "relevance" in scored else "-"] for name in used]
    return [
        ReportTable(
            title="Relevance: offline stand-ins",
            columns=["metric", "stands in for", "averaged into relevance"],
            rows=body,
            note="These metrics run offline in place of the official model-based ones; a figure that includes "
            "them (relevance_<name>, and the relevance mean) is not comparable with leaderboard numbers.",
        )
    ]


def _micro_table(
    pooled: Mapping[str, dict[str, list[int]]],
    answers: Mapping[str, int],
    cut: Mapping[str, int],
    errors: Mapping[str, int],
) -> ReportTable:
    body = []
    for cell in sorted(set(answers) | set(errors)):
        values = []
        for variation in ("strict", "lenient"):
            prf = prf_2025(Counts(*pooled[cell][variation]))
            values += [f"{prf.precision:.3f}", f"{prf.recall:.3f}", f"{prf.f1:.3f}"]
        body.append([cell, str(answers[cell]), *values, str(cut[cell]), str(errors[cell])])
    return ReportTable(
        title="Micro factuality (citations pooled over answers)",
        columns=[
            "cell",
            "answers",
            "strict P",
            "strict R",
            "strict F1",
            "lenient P",
            "lenient R",
            "lenient F1",
            "cut to 75 words",
            "errors",
        ],
        rows=body,
        note="Per cell, true and false positives and false negatives are summed over the answers (every "
        "epoch's) before precision, recall and F1, as the official scorer's micro scores; lenient is the 2025 "
        "definition (essential + supplementary), 0-1 like the means above. Samples stored as errors are left "
        "out (the official scorer would refuse a submission missing them); 'cut to 75 words' counts answers "
        "kept cut after their re-asks.",
    )


@dataclass(frozen=True)
class RunSubmission:
    """A stored run's answers in the submission form: (case id, answer) in case order, and the cases that
    errored (case id, first line of the error), left out."""

    cell: str
    epoch: int
    answers: list[tuple[str, str]]
    errors: list[tuple[str, str]]
    cut: list[str]


def run_submission(rows: Sequence[Any], *, cell: str | None = None, epoch: int = 0) -> RunSubmission:
    """One cell and epoch of a run as a submission; the answers' citations come from their citation field.

    A submission answers each case once, so a run with several cells (systems, models or datasets) needs
    ``cell``; each error names what there is to choose from.
    """
    cells = sorted({r.cell for r in rows})
    if not cells:
        raise ValueError("the run has no stored results")
    if cell is None:
        if len(cells) > 1:
            raise ValueError(f"the run has {len(cells)} cells; choose one with --cell: {', '.join(cells)}")
        cell = cells[0]
    elif cell not in cells:
        raise ValueError(f"the run has no cell {cell!r}; its cells: {', '.join(cells)}")
    in_cell = [r for r in rows if r.cell == cell]
    chosen = [r for r in in_cell if r.epoch == epoch]
    if not chosen:
        epochs = sorted({r.epoch for r in in_cell})
        raise ValueError(f"cell {cell} has no epoch {epoch}; its epochs: {', '.join(map(str, epochs))}")
    answers, errors, cut = [], [], []
    for row in sorted(chosen, key=lambda r: r.sample_id):
        if row.status != "ok" or not row.output:
            errors.append((row.sample_id, (row.error or "no output stored").splitlines()[0]))
            continue
        output = Output.model_validate(row.output)
        answers.append((row.sample_id, answer_of(output)))
        if "cut_to_word_limit" in output.extra:
            cut.append(row.sample_id)
    return RunSubmission(cell, epoch, answers, errors, cut)


class CiteQATask:
    name = "citeqa"
    systems: Mapping[str, System] = {"one_stage": _one_stage, "two_stage": _two_stage, "classifier": _classifier}
    lower_is_better = frozenset(("invalid_citations", "citation_syntax_in_text", "cut_to_word_limit"))
    """Metrics where lower is better (the report says so beside each)."""
    headline_metric = "strict_f1"  # factuality (strict F1) per sample; "overall" is a corpus figure
    default_scorers = (
        "strict_precision",
        "strict_recall",
        "strict_f1",
        "lenient_f1",
        "evidence_recall",
        "relevance",
        "invalid_citations",
        "citation_syntax_in_text",
        "cut_to_word_limit",
        "words",
    )
    scorers: tuple[str, ...] = SCORERS
    percent_scale = frozenset({"relevance", *(f"relevance_{m}" for m in RELEVANCE_METRICS)})
    """Stored on 0-100 (the shared task's scale); the generic report shows them divided by 100."""
    dataset_options = DatasetOptions
    system_options: Mapping[str, type[OneStageOptions | TwoStageOptions | ClassifierOptions]] = {
        "one_stage": OneStageOptions,
        "two_stage": TwoStageOptions,
        "classifier": ClassifierOptions,
    }

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        return _load(name, config)

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        case_json = json.dumps(sample.inputs["case"], sort_keys=True)
        answer = answer_of(output)
        if scorer in _FACTUALITY:
            variation, measure = _FACTUALITY[scorer]
            prf = _scores(case_json, answer, "2025", relevance=False).cases[0].prf[variation]
            return float(getattr(prf, measure))
        if scorer == "lenient2026_f1":
            return _scores(case_json, answer, "2026", relevance=False).cases[0].prf["lenient"].f1
        if scorer == "invalid_citations":
            return float(len(_scores(case_json, answer, "2025", relevance=False).cases[0].invalid))
        if scorer == "citation_syntax_in_text":
            return float(len(output.extra.get("citation_syntax_in_text", ())))
        if scorer == "cut_to_word_limit":
            return float("cut_to_word_limit" in output.extra)
        if scorer == "evidence_recall":
            selected = output.extra.get("selected")
            relevant = set(case_of(sample).labelled("essential", "supplementary"))
            if selected is None or not relevant:
                return None
            return len(set(selected) & relevant) / len(relevant)
        if scorer == "relevance" or scorer.startswith("relevance_"):
            scores = _scores(case_json, answer, "2025")
            if scorer == "relevance":
                return scores.overall_relevance
            return scores.relevance.get(scorer.removeprefix("relevance_"))
        raise KeyError(scorer)

    def report_tables(self, rows: Sequence[Any]) -> list[ReportTable]:
        return report_tables(rows)

    def web_sections(self, row: Any) -> list[dict[str, Any]]:
        """Views of one stored sample for the web viewer (see :mod:`bedside.tasks.citeqa.web`)."""
        from bedside.tasks.citeqa.web import web_sections

        return web_sections(row)

    def review_items(self, task_type: str, rows: Sequence[Any]) -> list[dict[str, Any]] | None:
        """Review items built from a run's rows (see :mod:`bedside.tasks.citeqa.web`); None for other types."""
        from bedside.tasks.citeqa.web import review_items

        return review_items(task_type, rows)


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
    flags: dict[str, list[dict[str, Any]]] | None = None,
    cuts: dict[str, dict[str, Any]] | None = None,
) -> tuple[dict[str, str], dict[str, str]]:
    """Answer each case with one system outside a run: (case id → answer text, case id → error).

    A case whose answer fails its guardrails (or whose model call fails) is reported in the errors, never
    written as an answer. ``on_done(case_id, error_or_None)`` is called as each case finishes. ``flags``, when
    given, receives case id → the statements whose text held citation syntax (taken out of the answer);
    ``cuts`` receives case id → how an answer still over the word limit was cut.
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
                output = await run(sample, dict(options or {}), context)
                answers[case.id] = output.text
                if flags is not None and output.extra.get("citation_syntax_in_text"):
                    flags[case.id] = output.extra["citation_syntax_in_text"]
                if cuts is not None and output.extra.get("cut_to_word_limit"):
                    cuts[case.id] = output.extra["cut_to_word_limit"]
                error: str | None = None
            except Exception as exc:  # every failure is reported per case, with its cause
                error = errors[case.id] = f"{type(exc).__name__}: {exc}"
            if on_done:
                on_done(case.id, error)

    await asyncio.gather(*(one(case) for case in cases))
    order = [c.id for c in cases]
    return {i: answers[i] for i in order if i in answers}, {i: errors[i] for i in order if i in errors}
