"""Discharge education by simulation as a runnable task (``task: discharge`` in a run config).

Datasets: ``path`` to cases (bedside JSONL, or the DischargeSim release's ``OSCE-format.jsonl`` with
``options.notes`` for its notes file); without a path, the synthetic cases shipped with bedside. The paper's gold
set: ``options.format: mimic`` with ``path`` the MIMIC-IV notes CSV and ``options.questions`` the exam CSV
(``patients``, ``summaries`` and ``columns`` optional; :func:`.readers.read_mimic_cases`).
``options.profiles``: ``one_at_a_time`` (default, the paper's 8 conditions), ``grid`` (18), ``none``, one
dimension's name, or a list of ``{dimension: level}``. Each case × profile is one sample; the profile's
dimensions are the sample's strata.

System ``dischargesim`` (one sample, in order; each step through the sample's context, so cached and counted
per role):

1. parse the note into the structure when the case has none (``helper`` role);
2. the conversation on :mod:`bedside.sim` (doctor = ``system`` role, patient = ``patient`` role);
3. the checklist, then the summary (``system`` role);
4. the exam in each setting (``patient`` role, no case knowledge);
5. AHRQ ACC's judged points, the five judges and the simulator fidelity check (``judge`` role).

Options: ``schedule`` (``paper`` | ``reference`` | ``demo``, see :mod:`.schedules`), ``prompt_style``
(``chat`` | ``blob``), ``documents_from`` (``note_and_dialogue`` | ``dialogue``), ``cut_note`` (bool),
``checklist_schema`` (``bedside`` | ``reference``, see :mod:`.documents`) — the last four default to the reference
code's choices under the ``reference`` schedule and to the paper's (bedside's six-area schema) otherwise —
``max_doctor_messages``, ``exam`` (list of ``dialogue``, ``summary``, ``none``), ``exam_questions`` (ask each
case's first N questions in every setting; default all, as the paper), ``judges`` (list of
``conversation``, ``coverage``, ``strategy``, ``summary_a``, ``summary_b``), ``judge_profile`` (bool),
``fidelity`` (bool), ``fidelity_checker`` (``llm`` | ``embedding`` | ``combined``), ``fidelity_prefilter`` (a
cosine), ``fidelity_verify`` (bool: the combined checker asks the judge about the sentences its rules leave
uncertain; see :mod:`bedside.sim.fidelity`), ``documents`` (bool), ``documents_max_tokens`` (default 1500: the
checklist and summary are long JSON, and the system role's ``max_tokens`` is usually set for conversation turns),
``max_repairs`` (re-asks of a malformed checklist or summary, default 2), ``judge_max_repairs`` (re-asks of a
judge's malformed answer, default 2).

A failure in the conversation is the sample's error. A failure in a later step (a checklist still malformed
after its re-asks, a judge that never answers on the scale) is recorded in ``extra["errors"]`` with its cause
and that step's scores are absent, never zero; the steps that needed its result are listed in
``extra["skipped"]``. The report's "failed steps" table counts both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from bedside.runs.config import DatasetConfig
from bedside.runs.steps import Steps
from bedside.runs.task import Output, ReportPlot, ReportTable, Sample, SampleContext, System
from bedside.sim import Knowledge, Simulation
from bedside.sim.fidelity import FidelityReport, check_fidelity
from bedside.tasks.discharge.agents import Doctor, Patient, profile_text
from bedside.tasks.discharge.cases import DischargeCase, DischargeSummary
from bedside.tasks.discharge.documents import (
    Checklist,
    reference_checklist,
    render_dialogue,
    write_checklist,
    write_summary,
)
from bedside.tasks.discharge.exam import SETTINGS, take_exam
from bedside.tasks.discharge.figures import report_plots
from bedside.tasks.discharge.judging import (
    COVERAGE_CRITERIA,
    JUDGES,
    STRATEGY_CRITERIA,
    SUMMARY_A_CRITERIA,
    SUMMARY_B_CRITERIA,
    run_judges,
)
from bedside.tasks.discharge.options import DatasetOptions, SystemOptions
from bedside.tasks.discharge.parse import parse_note
from bedside.tasks.discharge.profiles import profile_id, profiles, strata
from bedside.tasks.discharge.readers import read_cases, read_mimic_cases
from bedside.tasks.discharge.schedules import get_schedule
from bedside.tasks.discharge.scoring import ahrq_accuracy, drug_coverage
from bedside.tasks.discharge.tables import report_tables

SYNTHETIC_CASES = Path(__file__).parent / "data" / "synthetic_cases.jsonl"

# scorer name -> (judge, criterion | group | None for the rubric's aggregate)
_JUDGE_SCORERS: dict[str, tuple[str, str | None, str]] = {
    "ld": ("conversation", "language_delivery", "group"),
    "hcc": ("conversation", "human_centred", "group"),
    **{f"coverage_{c.lower()}": ("coverage", n, "criterion") for c, n in COVERAGE_CRITERIA.items()},
    "coverage_avg": ("coverage", None, "aggregate"),
    **{f"strategy_{c.lower()}": ("strategy", n, "criterion") for c, n in STRATEGY_CRITERIA.items()},
    "strategy_avg": ("strategy", None, "aggregate"),
    **{f"summary_a_{c.lower()}": ("summary_a", n, "criterion") for c, n in SUMMARY_A_CRITERIA.items()},
    "summary_a_avg": ("summary_a", None, "aggregate"),
    **{f"summary_b_{c.lower()}": ("summary_b", n, "criterion") for c, n in SUMMARY_B_CRITERIA.items()},
    "summary_b_avg": ("summary_b", None, "aggregate"),
}
_OTHER_SCORERS = (
    *(f"exam_acc_{s}" for s in SETTINGS),
    "ahrq_acc",
    "rougeL",
    "concept_f1",
    "concept_f1_umls",
    "bleurt",
    "drug_coverage",
    "doctor_messages",
    "completed",
    "fidelity_unsupported",
    "fidelity_contradicted",
)
SCORERS = (*_JUDGE_SCORERS, *_OTHER_SCORERS)

_JUDGE_TEXTS = {
    "conversation": "J1 on the conversation (Doctor:/Patient: lines) and the full note",
    "coverage": "J2 on the conversation and the full note",
    "strategy": "J3 on the conversation and the full note",
    "summary_a": "J4 on the written summary alone",
    "summary_b": "J5 on the written summary against the case's reference summary",
}


def _judge_text(name: str) -> str:
    judge, key, kind = _JUDGE_SCORERS[name]
    part = {"group": f"the {key} group mean", "criterion": f"criterion {key}", "aggregate": "the rubric's aggregate"}
    return f"{part[kind]} of {_JUDGE_TEXTS[judge]}"


_SUMMARY = "the written summary (rendered) against the case's reference summary"
SCORER_TEXTS: dict[str, str] = {
    **{name: _judge_text(name) for name in _JUDGE_SCORERS},
    **{
        f"exam_acc_{s}": f"exam accuracy of the patient model reading {m}"
        for s, m in (("dialogue", "the conversation (A)"), ("summary", "the summary (B)"), ("none", "nothing"))
    },
    "ahrq_acc": "AHRQ checklist accuracy: the written checklist's points against the case-derived checklist",
    "rougeL": f"ROUGE-L F1 (rouge-score, no stemming) of {_SUMMARY}",
    "concept_f1": f"MeSH concept F1 of {_SUMMARY}",
    "concept_f1_umls": f"UMLS concept F1 (QuickUMLS index in $BEDSIDE_UMLS_INDEX) of {_SUMMARY}",
    "bleurt": f"BLEURT (checkpoint in $BEDSIDE_BLEURT_CHECKPOINT) of {_SUMMARY}",
    "drug_coverage": "share of the case's discharge medicines the doctor named in the conversation",
    "doctor_messages": "doctor messages in the conversation",
    "completed": "1 when the conversation ended with the closing message, else 0",
    "fidelity_unsupported": "share of the patient's informative sentences unsupported by its knowledge",
    "fidelity_contradicted": "share of the patient's informative sentences contradicting its knowledge",
}
"""What each scorer reads (config check and the report's methods note)."""


def case_of(sample: Sample) -> DischargeCase:
    return DischargeCase.model_validate(sample.inputs["case"])


def _load(name: str, config: DatasetConfig) -> list[Sample]:
    options = config.options
    if options.get("format") == "mimic":
        if not config.path or not options.get("questions"):
            raise ValueError(f"dataset {name!r}: format mimic needs a path to the notes CSV and options.questions")
        cases = read_mimic_cases(
            config.path,
            options["questions"],
            patients=options.get("patients"),
            summaries=options.get("summaries"),
            columns=options.get("columns"),
        )
    elif options.get("format") not in (None, "bedside", "osce"):
        raise ValueError(f"dataset {name!r}: format must be bedside, osce or mimic, not {options['format']!r}")
    else:
        cases = read_cases(Path(config.path) if config.path else SYNTHETIC_CASES, notes=options.get("notes"))
    conditions = profiles(config.options.get("profiles", "one_at_a_time"))
    return [
        Sample(
            id=f"{case.id}/{profile_id(profile)}",
            inputs={"case": case.model_dump(mode="json"), "profile": profile},
            strata=strata(profile),
        )
        for case in cases
        for profile in conditions
    ]


def _option_list(options: Mapping[str, Any], key: str, default: Sequence[str], allowed: Sequence[str]) -> list[str]:
    value = options.get(key, list(default))
    values = [value] if isinstance(value, str) else list(value)
    unknown = sorted(set(values) - set(allowed))
    if unknown:
        raise ValueError(f"option {key}: unknown {', '.join(unknown)}; choose from {', '.join(allowed)}")
    return values


async def _simulate(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    schedule = get_schedule(str(options.get("schedule", "paper")))
    reference = schedule.name == "reference"
    exam_settings = _option_list(options, "exam", SETTINGS, SETTINGS)
    judge_names = _option_list(options, "judges", tuple(JUDGES), tuple(JUDGES))
    profile: dict[str, str] = dict(sample.inputs.get("profile") or {})
    case = await parse_note(case_of(sample), context)
    max_messages = int(options.get("max_doctor_messages", schedule.max_doctor_messages))
    doctor = Doctor(
        case,
        cut_note=bool(options.get("cut_note", reference)),
        prompt_style=options.get("prompt_style", "blob" if reference else "chat"),
        max_tokens=schedule.max_tokens,
        temperature=schedule.temperature,
    )
    patient = Patient(
        case,
        profile,
        prompt_style=doctor.prompt_style,
        max_tokens=schedule.max_tokens,
        temperature=schedule.temperature,
    )
    knowledge = Knowledge(case.patient_view().facts(), profile)
    simulation = Simulation(
        schedule.stages, doctor, patient, max_messages, policy=schedule.policy(), opener="clinician"
    )
    conversation = await simulation.run(context, sample_id=sample.id, knowledge={"patient": knowledge})
    transcript = conversation.transcript
    dialogue = render_dialogue(transcript)
    steps = Steps()
    extra: dict[str, Any] = {
        "schedule": schedule.name,
        "profile": profile,
        "termination": conversation.termination,
        "stages_reached": conversation.stages_reached,
        "messages_per_stage": conversation.messages_per_stage(),
        "doctor_messages": conversation.clinician_messages,
        "drug_coverage": drug_coverage(case.drug_names, transcript),
    }
    if sample.inputs["case"].get("structure") is None:
        extra["parsed_structure"] = case.parsed().model_dump(mode="json")
    documents_from = options.get("documents_from", "dialogue" if reference else "note_and_dialogue")
    checklist: Checklist | None = None
    summary: DischargeSummary | None = None
    document_tokens = options.get("documents_max_tokens")
    repairs = int(options.get("max_repairs", 2))
    checklist_schema = options.get("checklist_schema", "reference" if reference else "bedside")
    if checklist_schema not in ("bedside", "reference"):
        raise ValueError(f"options.checklist_schema must be bedside or reference, not {checklist_schema!r}")
    if options.get("documents", True):
        written = await steps.run(
            "checklist",
            lambda: write_checklist(
                case,
                transcript,
                context,
                documents_from=documents_from,
                max_tokens=document_tokens,
                schema=checklist_schema,
                max_repairs=repairs,
            ),
        )
        if written is not None:
            checklist, as_written = written
            if as_written is not None:
                extra["checklist_as_written"] = as_written.model_dump(mode="json", by_alias=True)
        summary = await steps.run(
            "summary",
            lambda: write_summary(
                case,
                transcript,
                checklist,
                context,
                documents_from=documents_from,
                max_tokens=document_tokens,
                max_repairs=repairs,
            ),
        )
    extra["checklist_schema"] = checklist_schema
    extra["checklist"] = checklist.model_dump(mode="json") if checklist else None
    extra["summary"] = summary.model_dump(mode="json") if summary else None
    summary_text = summary.render() if summary else None
    text_of_profile = profile_text(profile)

    exam_questions = options.get("exam_questions")
    questions = case.questions[: int(exam_questions)] if exam_questions else case.questions
    exams: dict[str, Any] = {}
    for setting in exam_settings:
        if not questions:
            steps.skip(f"exam_{setting}", "not applicable: the case has no questions")
            continue
        if setting == "summary" and summary_text is None:
            steps.skip("exam_summary", "skipped: there is no summary")
            continue
        material = {"dialogue": dialogue, "summary": summary_text or "", "none": ""}[setting]
        outcome = await steps.run(
            f"exam_{setting}",
            lambda s=setting, m=material: take_exam(  # type: ignore[misc]
                questions, s, m, text_of_profile, context, sample_id=sample.id
            ),
        )
        if outcome is not None:
            exams[setting] = outcome.as_dict()
            if outcome.accuracy is None:  # kept (what was chosen), but a failed step: absent, never 0.0
                steps.errors[f"exam_{setting}"] = f"all {outcome.total} exam answers unparsed (no option named)"
    extra["exam"] = exams

    if checklist is not None:
        ahrq = await steps.run(
            "ahrq_acc", lambda: ahrq_accuracy(checklist, reference_checklist(case.parsed()), context)
        )
        extra["ahrq"] = ahrq
    elif options.get("documents", True):
        steps.skip("ahrq_acc", "skipped: there is no checklist")

    judgements, judge_errors, judge_skipped = await run_judges(
        judge_names,
        context,
        conversation=dialogue,
        note=case.note,
        summary=summary_text,
        reference_summary=case.reference_summary.render() if case.reference_summary else None,
        profile_text=text_of_profile,
        judge_profile=bool(options.get("judge_profile", False)),
        max_repairs=int(options.get("judge_max_repairs", 2)),
    )
    extra["judgements"] = judgements
    steps.errors.update({f"judge_{k}": v for k, v in judge_errors.items()})
    steps.skipped.update({f"judge_{k}": v for k, v in judge_skipped.items()})

    if options.get("fidelity", True):
        fidelity = await steps.run(
            "fidelity",
            lambda: check_fidelity(
                transcript,
                knowledge,
                context,
                checker=options.get("fidelity_checker", "llm"),
                prefilter=options.get("fidelity_prefilter"),
                verify=bool(options.get("fidelity_verify", False)),
            ),
        )
        extra["fidelity"] = fidelity.as_dict() if fidelity else None
    extra["errors"] = steps.errors
    extra["skipped"] = steps.skipped
    return Output(text=dialogue, transcript=transcript, trace=conversation.trace, extra=extra)


BLEURT_CHECKPOINT_ENV = "BEDSIDE_BLEURT_CHECKPOINT"
"""The ``bleurt`` scorer reads a local BLEURT checkpoint (a bleurt-pytorch folder) from this variable; bedside
ships none and downloads none, so without it the scorer is absent, never zero."""
UMLS_INDEX_ENV = "BEDSIDE_UMLS_INDEX"
"""The ``concept_f1_umls`` scorer (the paper's UMLS-F) reads the user's QuickUMLS index folder from this variable:
UMLS needs a licence, so bedside ships none, and without it the scorer is absent, never zero."""


@lru_cache(maxsize=1024)
def _bleurt(summary_json: str, reference_json: str, checkpoint: str) -> float:
    from bedside.metrics.learned import bleurt_scores

    summary = DischargeSummary.model_validate_json(summary_json).render()
    reference = DischargeSummary.model_validate_json(reference_json).render()
    return bleurt_scores([summary], [reference], checkpoint)[0]


@lru_cache(maxsize=4)
def _umls_extractor(index: str) -> Any:
    from bedside.metrics import QuickUMLSExtractor

    return QuickUMLSExtractor(index)  # loading an index takes seconds: once per index per process


def _umls_f1(summary_json: str, reference_json: str, index: str) -> float | None:
    """concept_f1[umls]: the paper's UMLS-F over the user's QuickUMLS index; None (absent) when the pair has no
    concept on either side, as ``concept_f1`` does."""
    from bedside.metrics import concept_f1

    summary = DischargeSummary.model_validate_json(summary_json).render()
    reference = DischargeSummary.model_validate_json(reference_json).render()
    return concept_f1(summary, reference, _umls_extractor(index)).f1


@lru_cache(maxsize=1024)
def _summary_scores(summary_json: str, reference_json: str) -> dict[str, float | None]:
    from bedside.metrics import MeshExtractor, MetricUnavailableError, concept_f1, sentence_rouge

    summary = DischargeSummary.model_validate_json(summary_json).render()
    reference = DischargeSummary.model_validate_json(reference_json).render()
    rouge = sentence_rouge(summary, [reference])["rougeL"]
    try:
        concepts = concept_f1(summary, reference, MeshExtractor()).f1
    except MetricUnavailableError:
        concepts = None  # absent without the concepts extra, never zero
    return {"rougeL": rouge, "concept_f1": concepts}


class DischargeTask:
    name = "discharge"
    systems: Mapping[str, System] = {"dischargesim": _simulate}
    lower_is_better = frozenset({"fidelity_unsupported", "fidelity_contradicted"})
    """Metrics where lower is better (the report says so beside each)."""
    no_direction = frozenset({"doctor_messages"})
    headline_metric = "exam_acc_dialogue"  # does the patient understand: the comprehension exam after the talk
    default_scorers = (
        "ld",
        "hcc",
        *(f"coverage_{c.lower()}" for c in COVERAGE_CRITERIA),
        "coverage_avg",
        *(f"strategy_{c.lower()}" for c in STRATEGY_CRITERIA),
        "strategy_avg",
        "exam_acc_dialogue",
        "ahrq_acc",
        "rougeL",
        "concept_f1",
        *(f"summary_a_{c.lower()}" for c in SUMMARY_A_CRITERIA),
        "summary_a_avg",
        *(f"summary_b_{c.lower()}" for c in SUMMARY_B_CRITERIA),
        "summary_b_avg",
        "exam_acc_summary",
        "exam_acc_none",
        "drug_coverage",
        "doctor_messages",
        "completed",
        "fidelity_unsupported",
        "fidelity_contradicted",
    )
    scorers: tuple[str, ...] = SCORERS
    scorer_texts: Mapping[str, str] = SCORER_TEXTS
    dataset_options = DatasetOptions
    system_options: Mapping[str, type[SystemOptions]] = {"dischargesim": SystemOptions}

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        return _load(name, config)

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        extra = output.extra
        if scorer in _JUDGE_SCORERS:
            judge, key, kind = _JUDGE_SCORERS[scorer]
            judgement = extra.get("judgements", {}).get(judge)
            if judgement is None:
                return None
            if kind == "aggregate":
                return float(judgement["aggregate"])
            value = judgement["groups" if kind == "group" else "scores"].get(key)
            return None if value is None else float(value)
        if scorer.startswith("exam_acc_"):
            exam = extra.get("exam", {}).get(scorer.removeprefix("exam_acc_"))
            return None if exam is None or exam["accuracy"] is None else float(exam["accuracy"])
        if scorer == "ahrq_acc":
            ahrq = extra.get("ahrq")
            return None if not ahrq else ahrq["accuracy"]
        if scorer in ("rougeL", "concept_f1", "concept_f1_umls", "bleurt"):
            reference = sample.inputs["case"].get("reference_summary")
            if not extra.get("summary") or not reference:
                return None
            if scorer == "concept_f1_umls":
                from bedside.metrics import MetricUnavailableError

                index = os.environ.get(UMLS_INDEX_ENV)
                if not index:
                    return None
                try:
                    return _umls_f1(json.dumps(extra["summary"]), json.dumps(reference), index)
                except MetricUnavailableError:
                    return None  # no QuickUMLS or no such index: absent, never zero (the table note says why)
            if scorer == "bleurt":
                from bedside.metrics.learned import learned_unavailable

                checkpoint = os.environ.get(BLEURT_CHECKPOINT_ENV)
                if checkpoint is None or learned_unavailable("bleurt", checkpoint):
                    return None
                return _bleurt(json.dumps(extra["summary"]), json.dumps(reference), checkpoint)
            return _summary_scores(json.dumps(extra["summary"]), json.dumps(reference))[scorer]
        if scorer == "drug_coverage":
            return extra.get("drug_coverage")
        if scorer == "doctor_messages":
            return float(extra["doctor_messages"])
        if scorer == "completed":
            return float(extra["termination"] == "completed")
        if scorer in ("fidelity_unsupported", "fidelity_contradicted"):
            fidelity = extra.get("fidelity")
            if not fidelity:
                return None
            return FidelityReport.from_dict(fidelity).rate(scorer.removeprefix("fidelity_"))  # type: ignore[arg-type]
        raise KeyError(scorer)

    def report_tables(self, rows: Sequence[Mapping[str, Any]]) -> list[ReportTable]:
        return report_tables(rows)

    def report_plots(self, rows: Sequence[Mapping[str, Any]]) -> list[ReportPlot]:
        return report_plots(rows)


TASK = DischargeTask()
