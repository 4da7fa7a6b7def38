"""Mental-health sensemaking by simulation as a runnable task (``task: sensemaking`` in a run config).

Datasets: ``path`` to cases (bedside JSONL) or, with ``format: mediq``, MediQ's JSONL (``psych_index`` names
bedside's derived index file and ``subset`` strict | union; the 22 strict cases whose answer is a diagnosis keep
it as a given label, the rest get a derived one), or, with ``format: medagent_csv``, the MedAgent authors' case
CSV (``id``, ``clinical_case_study``, ``mental_health_classification``; ``Yes`` rows only; ``columns`` maps other
names). Without a path: bedside's synthetic vignettes.
``options.personas``: ``all`` (the paper's 5 traits × 2 literacy levels) or a list of ``trait-literacy`` ids.
Each case × persona is one sample, with trait and literacy as strata.

System ``medagent`` (per sample, each step through the sample's context, so cached and counted per role):

1. prepare the case (``helper`` role): decompose the vignette, split vitals, assign intent and goal, derive a
   diagnosis label when none is given (:mod:`.prepare`);
2. the conversation on :mod:`bedside.sim`: the patient (``patient`` role, :mod:`.patient`) opens; the sensemaker
   (:mod:`.sensemaker`) is both the stage policy and the clinician: its stage calls and generation are the
   ``system`` role, its fact extraction, fact matching and redundancy filter the ``helper`` role (the paper's
   fixed GPT-4o side; the cell's system model when the run sets no helper);
3. MultiSenseEval (``judge`` role, :mod:`.evaluation`) and SMOG;
4. simulator fidelity (``judge`` role), rates split into closed-world stages (1-3) and later ones.

Options: ``path`` (``reference`` | ``efficient``), ``fold_mining`` and ``fold_decision`` (efficient path; default
true: set one false to keep the reference's separate calls for that step when the replay validation,
``bedside sensemaking validate-efficient``, misses its bar on your model), ``max_sensemaker_messages``
(default 30: above the 21 the stage caps allow, so only a runaway conversation meets it), ``vitals`` (``rules`` |
``llm``), ``judges``, ``judge_stage_labels`` (bool, default false), ``judge_max_repairs`` (re-asks of a judge's
malformed answer, default 2), ``fidelity`` (bool, default true),
``fidelity_checker`` (``llm`` | ``embedding`` | ``combined``), ``fidelity_prefilter`` (a cosine) and
``fidelity_verify`` (bool: the combined checker asks the judge about the sentences its rules leave uncertain; see
:mod:`bedside.sim.fidelity`).

A failure in preparation or in the conversation is the sample's error; a later step's failure is that step's
error in ``extra["errors"]`` with its cause, and its scores are absent, never zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bedside.runs.config import DatasetConfig
from bedside.runs.steps import Steps
from bedside.runs.task import Output, ReportPlot, ReportTable, Sample, SampleContext, System
from bedside.sim import Knowledge, Simulation
from bedside.sim.fidelity import FidelityReport, check_fidelity
from bedside.tasks.sensemaking.cases import SensemakingCase
from bedside.tasks.sensemaking.evaluation import JUDGES, conversation_smog, render_conversation, run_judges
from bedside.tasks.sensemaking.options import DatasetOptions, SystemOptions
from bedside.tasks.sensemaking.patient import SensemakingPatient
from bedside.tasks.sensemaking.personas import Persona, goals, intents, select_personas
from bedside.tasks.sensemaking.prepare import prepare_case
from bedside.tasks.sensemaking.readers import (
    PSYCH_DIAGNOSIS_IDS,
    psych_index_ids,
    read_cases,
    read_medagent_csv,
    read_mediq,
)
from bedside.tasks.sensemaking.sensemaker import Sensemaker, helper_role, new_memory
from bedside.tasks.sensemaking.stages import CLOSED_WORLD, EMOTIONS, EXIT, PROVIDING, sim_stages
from bedside.text.readability import ReadabilityUnavailableError, textstat_smog

SYNTHETIC_CASES = Path(__file__).parent / "data" / "synthetic_vignettes.jsonl"
MAX_SENSEMAKER_MESSAGES = 30
JUDGE_SCORERS = {
    "susceptibility": ("susceptibility", "susceptibility"),
    "severity": ("severity", "severity"),
    "benefits": ("benefits", "benefits"),
    "flow": ("flow", "flow_correctness"),
    "diagnosis_hard": ("hard", "correct"),
    "diagnosis_soft": ("soft", "correct"),
}
SCORERS = (
    *JUDGE_SCORERS,
    "hbm_mean",
    "smog",
    "smog_textstat",
    "sensemaker_messages",
    "completed",
    "fidelity_unsupported_closed",
    "fidelity_unsupported_open",
    "fidelity_contradicted",
)
_CONVERSATION = "the conversation as Patient:/Sensemaker: lines"
SCORER_TEXTS: dict[str, str] = {
    "susceptibility": f"MultiSenseEval perceived susceptibility (1-4) on {_CONVERSATION}",
    "severity": f"MultiSenseEval perceived severity (1-4) on {_CONVERSATION}",
    "benefits": f"MultiSenseEval perceived benefits (1-4) on {_CONVERSATION}",
    "flow": f"MultiSenseEval flow and correctness (1-4) on {_CONVERSATION}",
    "diagnosis_hard": "hard diagnostic accuracy (0/1) of the Providing Information message against the case's label",
    "diagnosis_soft": "soft diagnostic accuracy (0/1) of the Providing Information message against the case's label",
    "hbm_mean": "mean of susceptibility, severity and benefits (absent unless all three are)",
    "smog": "SMOG (bedside's counter) of the sensemaker's messages only, joined: one value per conversation",
    "smog_textstat": "SMOG (textstat) of the sensemaker's messages only, joined: one value per conversation",
    "sensemaker_messages": "sensemaker messages in the conversation",
    "completed": "1 when the conversation is complete (exit message, or a stagnation end at Emotions/Exit), else 0",
    "fidelity_unsupported_closed": "share of the patient's informative sentences unsupported, stages 1-3",
    "fidelity_unsupported_open": "share of the patient's informative sentences unsupported, stages 4-5",
    "fidelity_contradicted": "share of the patient's informative sentences contradicting its facts",
}
"""What each scorer reads (config check and the report's methods note)."""


def case_of(sample: Sample) -> SensemakingCase:
    return SensemakingCase.model_validate(sample.inputs["case"])


def _load(name: str, config: DatasetConfig) -> list[Sample]:
    options = config.options
    if options.get("format") == "mediq":
        if not config.path:
            raise ValueError(f"dataset {name!r}: format mediq needs a path to the MediQ JSONL")
        index = options.get("psych_index")
        ids = psych_index_ids(Path(index), str(options.get("subset", "strict"))) if index else None
        cases = read_mediq(Path(config.path), ids=ids, diagnosis_ids=PSYCH_DIAGNOSIS_IDS)
    elif options.get("format") == "medagent_csv":
        if not config.path:
            raise ValueError(f"dataset {name!r}: format medagent_csv needs a path to the case CSV")
        cases = read_medagent_csv(Path(config.path), columns=options.get("columns"))
    elif options.get("format") not in (None, "bedside"):
        raise ValueError(f"dataset {name!r}: format must be bedside, mediq or medagent_csv, not {options['format']!r}")
    else:
        cases = read_cases(Path(config.path) if config.path else SYNTHETIC_CASES)
    limit = options.get("cases")
    if limit is not None:
        cases = cases[: int(limit)]
    personas = select_personas(options.get("personas"))
    return [
        Sample(
            id=f"{case.id}/{persona.id}",
            inputs={"case": case.model_dump(mode="json"), "persona": persona.id},
            references=[case.diagnosis.label] if case.diagnosis else [],
            strata=persona.strata(),
        )
        for case in cases
        for persona in personas
    ]


def stagnation_stage(trace: Sequence[Mapping[str, Any]]) -> str | None:
    """The stage whose candidates were all redundant when a stagnation ended the conversation."""
    if not trace or trace[-1].get("ended") != "stagnation_end":
        return None
    rounds = trace[-1]["decision"].get("rounds") or []
    return str(rounds[-1]["stage"]) if rounds else None


def _completed(termination: str, stagnated_at: str | None) -> bool:
    """Complete: closed with an exit message, or ended by a stagnation while moving to Responding to Emotions or
    Exit (the reference's own way to end there, without an exit message). Any other end is incomplete."""
    return termination == "completed" or (termination == "stagnation_end" and stagnated_at in (EMOTIONS, EXIT))


def exclusion_cause(extra: Mapping[str, Any]) -> str | None:
    """Why a finished sample is left out of the paper-style comparison (None: it is kept)."""
    if not _completed(extra["termination"], extra.get("stagnation_at")):
        return str(extra["termination"])
    if PROVIDING not in extra["messages_per_stage"]:
        return "no_diagnosis"  # a stagnation jumped over Providing Information
    if extra.get("errors"):
        return "failed_step"
    return None


def _messages_per_stage(transcript: Sequence[Any]) -> dict[str, int]:
    """Table 1's count: patient and sensemaker messages together, each under its stage label."""
    counts: dict[str, int] = {}
    for turn in transcript:
        counts[turn.stage] = counts.get(turn.stage, 0) + 1
    return counts


async def _simulate(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    persona = Persona.parse(sample.inputs["persona"])
    case = await prepare_case(case_of(sample), context, vitals=options.get("vitals", "rules"))
    sensemaker = Sensemaker(
        case,
        path=options.get("path", "reference"),
        fold_mining=bool(options.get("fold_mining", True)),
        fold_decision=bool(options.get("fold_decision", True)),
    )
    patient = SensemakingPatient(case, persona)
    assert case.intent is not None
    assert case.goal is not None
    knowledge = Knowledge(
        tuple(case.facts or []),
        {"intent": intents()[case.intent]["definition"], "goal": goals()[case.goal]["definition"]},
    )
    simulation = Simulation(
        sim_stages(),
        sensemaker,
        patient,
        int(options.get("max_sensemaker_messages", MAX_SENSEMAKER_MESSAGES)),
        policy=sensemaker,
        opener="patient",
    )
    conversation = await simulation.run(
        context, sample_id=sample.id, knowledge={"patient": knowledge}, memory=new_memory(case)
    )
    transcript = conversation.transcript
    memory = conversation.memory["sensemaker"]
    steps = Steps()
    names = options.get("judges", list(JUDGES))
    names = [names] if isinstance(names, str) else list(names)
    judgements, judge_errors, judge_skipped = await run_judges(
        names,
        context,
        transcript=transcript,
        label=case.diagnosis.label if case.diagnosis else None,
        stage_labels=bool(options.get("judge_stage_labels", False)),
        max_repairs=int(options.get("judge_max_repairs", 2)),
    )
    steps.errors.update({f"judge_{k}": v for k, v in judge_errors.items()})
    steps.skipped.update({f"judge_{k}": v for k, v in judge_skipped.items()})
    extra: dict[str, Any] = {
        "path": sensemaker.path,
        "helper_side": helper_role(context),
        "persona": persona.id,
        "case": case.model_dump(mode="json", exclude={"vignette"}),
        "termination": conversation.termination,
        "stages_reached": conversation.stages_reached,
        "stagnation_at": stagnation_stage(conversation.trace),
        "messages_per_stage": _messages_per_stage(transcript),
        "sensemaker_messages": conversation.clinician_messages,
        "sensemaker_facts": list(memory.facts),
        "judgements": judgements,
        "smog": conversation_smog(transcript),
    }
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
    extra["excluded"] = exclusion_cause(extra)
    return Output(text=render_conversation(transcript), transcript=transcript, trace=conversation.trace, extra=extra)


def fidelity_rate(fidelity: Mapping[str, Any], label: str, *, closed: bool | None) -> float | None:
    """Share of informative patient sentences with ``label``; ``closed`` picks closed-world stages (1-3), the
    later ones (4-5), or all (None)."""
    report = FidelityReport.from_dict(fidelity)
    chosen = [
        s
        for s in report.sentences
        if s.label != "non_informative" and (closed is None or ((s.stage in CLOSED_WORLD) == closed))
    ]
    return sum(s.label == label for s in chosen) / len(chosen) if chosen else None


class SensemakingTask:
    name = "sensemaking"
    systems: Mapping[str, System] = {"medagent": _simulate}
    lower_is_better = frozenset({"fidelity_unsupported_closed", "fidelity_unsupported_open", "fidelity_contradicted"})
    """Metrics where lower is better (the report says so beside each)."""
    no_direction = frozenset({"sensemaker_messages"})
    headline_metric = "hbm_mean"  # the Health Belief Model rubrics' mean
    judge_scorers: Mapping[str, tuple[str, str]] = JUDGE_SCORERS
    """metric -> (judgement, criterion) it reads: a review of a run shows annotators that criterion's reasoning."""
    default_scorers = SCORERS
    scorers: tuple[str, ...] = SCORERS
    scorer_texts: Mapping[str, str] = SCORER_TEXTS
    dataset_options = DatasetOptions
    system_options: Mapping[str, type[SystemOptions]] = {"medagent": SystemOptions}

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        return _load(name, config)

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        extra = output.extra
        if scorer in JUDGE_SCORERS:
            judge, criterion = JUDGE_SCORERS[scorer]
            judgement = extra.get("judgements", {}).get(judge)
            value = None if judgement is None else judgement["scores"].get(criterion)
            return None if value is None else float(value)
        if scorer == "hbm_mean":
            parts = [self.score(s, sample, output) for s in ("susceptibility", "severity", "benefits")]
            present = [p for p in parts if p is not None]
            return sum(present) / 3 if len(present) == 3 else None
        if scorer == "smog":
            return extra.get("smog")
        if scorer == "smog_textstat":  # the cross-check: absent (None) without the readability extra
            try:
                return conversation_smog(output.transcript or [], textstat_smog)
            except ReadabilityUnavailableError:
                return None
        if scorer == "sensemaker_messages":
            return float(extra["sensemaker_messages"])
        if scorer == "completed":
            return float(_completed(extra["termination"], extra.get("stagnation_at")))
        if scorer.startswith("fidelity_"):
            fidelity = extra.get("fidelity")
            if not fidelity:
                return None
            label, _, part = scorer.removeprefix("fidelity_").partition("_")
            return fidelity_rate(fidelity, label, closed={"closed": True, "open": False, "": None}[part])
        raise KeyError(scorer)

    def report_tables(self, rows: Sequence[Mapping[str, Any]]) -> list[ReportTable]:
        from bedside.tasks.sensemaking.tables import report_tables

        return report_tables(rows)

    def report_plots(self, rows: Sequence[Mapping[str, Any]]) -> list[ReportPlot]:
        from bedside.tasks.sensemaking.figures import report_plots

        return report_plots(rows)


TASK = SensemakingTask()
