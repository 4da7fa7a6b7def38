"""Portal reply drafting as a runnable task (``task: drafting`` in a run config), evaluated with EditJudge.

Datasets (``datasets.<name>``): ``path`` to bedside JSONL, a flat CSV/JSONL table (``options.columns`` maps
its columns) or LiveQA XML; with ``options.format: syppm``, the seed paper's SyPPM release (CSV or JSONL, its
columns mapped by ``options.columns`` over bedside's guessed defaults; see :mod:`bedside.tasks.drafting.syppm`);
no ``path`` means the synthetic demo messages. Messages without a chart summary get
one rendered from ``options.records`` (the demo cohort for the demo messages) as the chart stood when the
message was sent. ``options.clinician`` keeps only the cases that clinician answered, with only their reply, to
evaluate drafting for one clinician.

Systems (``systems.<name>.type``): ``zero_shot``, ``thematic``, ``rag``, ``clinician_rag``, and the nudged
prompts as ``zero_shot_nudged``, ``thematic_nudged``, ``rag_nudged`` (see
:mod:`bedside.tasks.drafting.systems`). Each drafts, then scores its draft against the case's first reference
with EditJudge inside the sample, because the LLM matcher and LLM theme classifier call the ``judge`` role.
System options for the evaluation: ``matcher`` (embedding | lexical | trained | llm; default embedding),
``themes`` (offline | llm; default offline), ``threshold`` (an offline matcher's), ``guard`` (reject | flag |
off: the clinical-safety guard; default reject), ``judge_template`` (the llm matcher's prompt, e.g.
``drafting/editjudge_match_fewshot.j2``), ``min_content_share`` (the llm matcher's smallest share of a
reference sentence's content a span must carry, default 0.25; see :mod:`bedside.tasks.drafting.matchers`),
``matcher_model`` (a trained matcher's ``.npz``), ``theme_source``
(classifier | boxes: where the reference's themes come from; default classifier, the draft's path). A grid
of matchers is a grid of system entries that differ only in ``matcher``; the drafts come from the response
cache after the first.
Cases with two or more references also get the inter-clinician measures, with the same matcher.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import permutations
from typing import Any

from bedside.runs.config import DatasetConfig
from bedside.runs.task import Output, ReportTable, Sample, SampleContext, System
from bedside.tasks.drafting.cases import PortalMessage
from bedside.tasks.drafting.evaluation import (
    Classify,
    content_counts,
    evaluate_draft,
    guard_uncertain,
    matcher_all_failed,
    matcher_failures,
    theme_totals,
)
from bedside.tasks.drafting.matcher_kinds import make_matcher
from bedside.tasks.drafting.options import ClinicianRagOptions, DatasetOptions, RagOptions, SystemOptions
from bedside.tasks.drafting.readers import read_cases
from bedside.tasks.drafting.systems import (
    DEFAULT_K,
    TEMPLATES,
    clinician_chat,
    rag_chat,
    reply_pool,
    thematic_chat,
    zero_shot_chat,
)
from bedside.tasks.drafting.themes import LLMThemeClassifier, default_theme_classifier


def _only_clinician(cases: list[PortalMessage], clinician: str) -> list[PortalMessage]:
    kept = []
    for case in cases:
        reply = case.reference_by(clinician)
        if reply is not None:
            kept.append(case.model_copy(update={"references": [reply]}))
    if not kept:
        raise ValueError(f"no case has a reply from clinician {clinician!r}")
    return kept


def _load(name: str, config: DatasetConfig) -> list[Sample]:
    options = config.options
    cases = read_cases(config.path or "demo", options.get("columns"), options.get("records"), options.get("format"))
    if options.get("clinician"):
        cases = _only_clinician(cases, str(options["clinician"]))
    return [
        Sample(
            id=c.id,
            inputs={
                "message": c.message,
                "chart_summary": c.chart_summary,
                "references": [r.model_dump() for r in c.references],
            },
            references=[r.text for r in c.references],
            strata={"clinician": c.references[0].clinician_id} if c.references else {},
        )
        for c in cases
    ]


def case_of(sample: Sample) -> PortalMessage:
    return PortalMessage(id=sample.id, **sample.inputs)


def _classifier(options: Mapping[str, Any], context: SampleContext) -> Classify:
    kind = options.get("themes", "offline")
    if kind == "offline":

        async def offline(texts: Sequence[str]) -> list[str]:
            return default_theme_classifier().predict(texts)

        return offline
    if kind == "llm":

        async def structured(chat: Any, answer_type: Any) -> Any:
            return (await context.generate_structured("judge", chat, answer_type)).value

        return LLMThemeClassifier(structured).predict
    raise ValueError(f"options.themes: {kind!r} is not offline or llm")


async def _evaluate(case: PortalMessage, draft: str, options: Mapping[str, Any], context: SampleContext) -> Output:
    extra: dict[str, Any] = {}
    if case.references and options.get("evaluate", True):

        async def judge(chat: Any) -> Any:
            return await context.generate("judge", chat)

        verifier = None
        if options.get("verify", False):
            from bedside.judges.verifier import VERIFIER_TEMPLATE, MeaningVerifier

            verifier = MeaningVerifier(
                judge,
                template=options.get("verifier_template") or VERIFIER_TEMPLATE,
                scope=options.get("verify_scope", "uncertain"),
            )
        matcher = make_matcher(
            options.get("matcher", "embedding"),
            judge,
            threshold=options.get("threshold"),
            guard=options.get("guard", "reject"),
            template=options.get("judge_template"),
            model_path=options.get("matcher_model"),
            min_content_share=options.get("min_content_share"),
            uncertain=options.get("uncertain", "keep"),
            verifier=verifier,
        )
        classify = _classifier(options, context)
        source = str(options.get("theme_source", "classifier"))
        extra["editjudge"] = await evaluate_draft(draft, case.references[0], matcher, classify, theme_source=source)
        if len(case.references) >= 2:
            extra["reply_cosines"] = _reply_cosines(case)
            extra["inter_clinician"] = [
                await evaluate_draft(b.text, a, matcher, classify, theme_source=source)
                for a, b in permutations(case.references, 2)
            ]
    return Output(text=draft, extra=extra)


def _reply_cosines(case: PortalMessage) -> list[dict[str, Any]]:
    """MiniLM cosine of every unordered pair of the case's replies (the paper's Table 11 averages these)."""
    from itertools import combinations

    from bedside.retrieval.embeddings import default_embedder

    vectors = default_embedder().embed([r.text for r in case.references])
    return [
        {
            "a": case.references[i].clinician_id,
            "b": case.references[j].clinician_id,
            "cosine": float(vectors[i] @ vectors[j]),
        }
        for i, j in combinations(range(len(case.references)), 2)
    ]


async def _draft(chat: Any, context: SampleContext) -> str:
    return (await context.generate("system", chat)).text.strip()


def _template(options: Mapping[str, Any], kind: str) -> str:
    return str(options.get("template", TEMPLATES[kind]))


async def _zero_shot(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    case = case_of(sample)
    return await _evaluate(
        case, await _draft(zero_shot_chat(case, _template(options, "zero_shot")), context), options, context
    )


async def _thematic(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    case = case_of(sample)
    return await _evaluate(
        case, await _draft(thematic_chat(case, _template(options, "thematic")), context), options, context
    )


async def _rag(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    case = case_of(sample)
    examples = reply_pool(options).nearest(case, int(options.get("k", DEFAULT_K)))
    chat = rag_chat(case, examples, _template(options, "rag"))
    return await _evaluate(case, await _draft(chat, context), options, context)


async def _clinician_rag(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    case = case_of(sample)
    clinician = options.get("clinician") or (case.references[0].clinician_id if case.references else None)
    if not clinician:
        raise ValueError("clinician_rag needs options.clinician, or cases whose first reply names its clinician")
    pool = reply_pool(options, str(clinician))
    examples = pool.nearest(case, int(options.get("k", DEFAULT_K)))
    chat = clinician_chat(case, examples, pool.theme_profile, _template(options, "clinician_rag"))
    return await _evaluate(case, await _draft(chat, context), options, context)


def _nudged(system: System, kind: str) -> System:
    """The same system with bedside's earlier, nudged prompt (unless options.template names another)."""

    async def run(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
        return await system(sample, {"template": TEMPLATES[kind], **options}, context)

    return run


SCORERS = (
    "content_precision",
    "content_recall",
    "content_f1",
    "theme_precision",
    "theme_recall",
    "theme_f1",
    "em",
    "ea",
    "ed",
    "matcher_failures",
    "guard_uncertain",
)


def _score(scorer: str, output: Output) -> float | None:
    evaluation = output.extra.get("editjudge")
    if evaluation is None:
        return None
    level, _, measure = scorer.partition("_")
    if scorer == "matcher_failures":
        return float(matcher_failures(evaluation))
    if scorer == "guard_uncertain":
        return float(guard_uncertain(evaluation))
    if (level == "content" or scorer in ("em", "ea", "ed")) and matcher_all_failed(evaluation):
        return None  # no matcher answer could be used: the content level was not judged (absent, never 0.0)
    if scorer in ("em", "ea", "ed"):
        return float(getattr(content_counts(evaluation), scorer))
    counts = content_counts(evaluation) if level == "content" else theme_totals(evaluation)
    return float(getattr(counts, measure))


class DraftingTask:
    name = "drafting"
    systems: Mapping[str, System] = {
        "zero_shot": _zero_shot,
        "thematic": _thematic,
        "rag": _rag,
        "clinician_rag": _clinician_rag,
        "zero_shot_nudged": _nudged(_zero_shot, "zero_shot_nudged"),
        "thematic_nudged": _nudged(_thematic, "thematic_nudged"),
        "rag_nudged": _nudged(_rag, "rag_nudged"),
    }

    def review_context(self, sample: Mapping[str, Any]) -> str | None:
        """What a nurse or clinician reviewing drafts reads: the patient's message and the chart summary beside
        it, never the clinicians' own replies (the gold a review would be biased by); None for a sample that is
        not a portal message (the generic view, gold inputs left out, is shown)."""
        inputs = sample.get("inputs") or {}
        if "message" not in inputs:
            return None
        chart = inputs.get("chart_summary") or "(no chart summary)"
        return f"Patient's message:\n{inputs.get('message', '')}\n\nChart summary:\n{chart}"

    lower_is_better = frozenset(("matcher_failures", "guard_uncertain", "ea", "ed"))
    """Metrics where lower is better (the report says so beside each)."""
    headline_metric = "content_f1"  # the paper's Content Edit-F1: the leaderboard's default
    default_scorers = (
        "content_precision",
        "content_recall",
        "content_f1",
        "theme_precision",
        "theme_recall",
        "theme_f1",
    )
    scorers: tuple[str, ...] = SCORERS
    dataset_options = DatasetOptions
    system_options: Mapping[str, type[SystemOptions]] = {
        "zero_shot": SystemOptions,
        "thematic": SystemOptions,
        "rag": RagOptions,
        "clinician_rag": ClinicianRagOptions,
        "zero_shot_nudged": SystemOptions,
        "thematic_nudged": SystemOptions,
        "rag_nudged": RagOptions,
    }

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        return _load(name, config)

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        if scorer not in SCORERS:
            raise KeyError(scorer)
        return _score(scorer, output)

    def report_tables(self, rows: Sequence[Any]) -> list[ReportTable]:
        from bedside.tasks.drafting.tables import drafting_tables

        return drafting_tables(rows)

    def web_sections(self, row: Any) -> list[dict[str, Any]]:
        """Views of one stored sample for the web viewer (see :mod:`bedside.tasks.drafting.web`)."""
        from bedside.tasks.drafting.web import web_sections

        return web_sections(row)

    def review_items(self, task_type: str, rows: Sequence[Any]) -> list[dict[str, Any]] | None:
        """Review items built from a run's rows (see :mod:`bedside.tasks.drafting.web`); None for other types."""
        from bedside.tasks.drafting.web import review_items

        return review_items(task_type, rows)


TASK = DraftingTask()
