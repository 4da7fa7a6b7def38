"""Clinician instructions over patient records as a runnable task (``task: instruct`` in a run config).

Datasets: without a ``path``, bedside's 32 synthetic instructions over the demo cohort; with one, any file
:func:`.readers.read_instructions` reads (bedside JSONL, MedAlign's sample CSV, a release gold TSV). Options:
``records`` (bedside JSONL or a folder of record files, matched by ``person_id``; default the demo cohort for
the synthetic set), ``columns`` and ``quoting`` (release TSVs), ``references`` (``primary``, the default, as the
paper's metrics used Annotator_1, or ``all``). Instructions without a record are refused at load, by id.

Systems: ``budgeted``, ``refine`` and ``rag`` (see :mod:`.systems`); list one system per context length to make
context a grid axis (``budgeted_2k: {type: budgeted, options: {context: 2048}}``): every result stores its
context, budget tokenizer, record view and truncation. ``judge: true`` in a system's options also runs the
``medalign_correctness`` rubric with the judge model on the answer (record cut to ``judge_record_tokens``, 1024).

Scorers: ``facts_recall`` and ``facts_correct`` (synthetic cases: the answer states each/every answer fact),
``judge_correct`` (the rubric judge's verdict), ``truncated`` (1 when the record was cut), plus bedside's
generic text metrics against the references (``google_bleu``, ``rougeL``, ``chrf++``, ``meteor``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bedside.data import DEMO_DIR
from bedside.judges import JudgeError
from bedside.runs.config import DatasetConfig
from bedside.runs.task import Output, ReportTable, Sample, SampleContext, System
from bedside.tasks.instruct.cases import Instruction, facts_recall
from bedside.tasks.instruct.ehr import load_ehr
from bedside.tasks.instruct.judging import judge_correctness
from bedside.tasks.instruct.labels import REVIEW_CRITERIA
from bedside.tasks.instruct.options import DatasetOptions, RagOptions, RefineOptions, SystemOptions
from bedside.tasks.instruct.plots import report_plots
from bedside.tasks.instruct.prompting import cut_record
from bedside.tasks.instruct.readers import InstructDataError, read_instructions
from bedside.tasks.instruct.systems import budgeted, rag, refine
from bedside.tasks.instruct.tables import report_tables
from bedside.text.tokens import get_tokenizer

SYNTHETIC_INSTRUCTIONS = Path(__file__).parent / "data" / "synthetic_instructions.jsonl"
SYNTHETIC_LABELS = Path(__file__).parent / "data" / "synthetic_labels.jsonl"
DEMO_RECORDS = DEMO_DIR / "cohort.jsonl"
PAPER_SYSTEMS = ("budgeted", "refine")
SCORERS = ("facts_recall", "facts_correct", "judge_correct", "truncated")


def instruction_of(sample: Sample) -> Instruction:
    return Instruction.model_validate(sample.inputs["instruction"])


def load_samples(config: DatasetConfig) -> list[Sample]:
    options = dict(config.options)
    unknown = sorted(set(options) - {"records", "columns", "quoting", "references"})
    if unknown:
        raise ValueError(
            f"unknown instruct dataset option(s) {', '.join(unknown)}; known: columns, quoting, records, references"
        )
    path = Path(config.path) if config.path else SYNTHETIC_INSTRUCTIONS
    records = options.get("records") or (str(DEMO_RECORDS) if not config.path else None)
    instructions = read_instructions(path, columns=options.get("columns"), quoting=options.get("quoting", "csv"))
    references = options.get("references", "primary")
    if references not in ("primary", "all"):
        raise ValueError(f"dataset option references must be 'primary' or 'all', not {references!r}")
    missing = [i.id for i in instructions if not i.record and not (records and i.person_id)]
    if missing:
        raise InstructDataError(
            f"{path}: {len(missing)} instruction(s) have no record ({', '.join(missing[:5])}"
            f"{', ...' if len(missing) > 5 else ''}): give each a 'record' file, or person_ids and the "
            "dataset's 'records' option"
        )
    samples = []
    for instruction in instructions[: config.limit]:
        primary = instruction.primary_reference
        texts = [r.text for r in instruction.references] if references == "all" else ([primary.text] if primary else [])
        samples.append(
            Sample(
                id=instruction.id,
                inputs={"instruction": instruction.model_dump(mode="json"), "records": records},
                references=texts,
                strata={
                    "category": instruction.category or "(none)",
                    "subcategory": instruction.subcategory or "(none)",
                    "specialty": instruction.submitter_specialty or "(none)",
                },
            )
        )
    return samples


async def _with_judge(sample: Sample, output: Output, options: Mapping[str, Any], context: SampleContext) -> Output:
    if not options.get("judge"):
        return output
    instruction = instruction_of(sample)
    ehr = load_ehr(instruction, sample.inputs.get("records"))
    tokenizer = get_tokenizer(str(options.get("tokenizer") or "embedded"))
    record, _ = cut_record(
        ehr, str(options.get("view", "paper")), tokenizer, int(options.get("judge_record_tokens", 1024))
    )
    reference = instruction.primary_reference
    try:
        verdict = await judge_correctness(
            context.model("judge"),
            instruction=instruction.question,
            record=record,
            response=output.text,
            reference=reference.text if reference else None,
            settings=context.settings.get("judge"),
            epoch=context.epoch,
        )
    except JudgeError as exc:
        output.extra["judge_error"] = str(exc)
    else:
        output.extra["judge"] = verdict
    return output


def _system(kind: str) -> System:
    run = {"budgeted": budgeted, "refine": refine, "rag": rag}[kind]

    async def system(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
        instruction = instruction_of(sample)
        ehr = load_ehr(instruction, sample.inputs.get("records"))
        system_options = {k: v for k, v in options.items() if k not in ("judge", "judge_record_tokens")}
        output = await run(instruction, ehr, system_options, context)
        output.extra["system_kind"] = kind if kind in PAPER_SYSTEMS else f"{kind} (extension)"
        return await _with_judge(sample, output, options, context)

    return system


class InstructTask:
    name = "instruct"
    systems: Mapping[str, System] = {kind: _system(kind) for kind in ("budgeted", "refine", "rag")}
    lower_is_better = frozenset(("truncated",))
    """Metrics where lower is better (the report says so beside each)."""
    headline_metric = "judge_correct"  # MedAlign's headline: is the answer correct
    default_scorers = ("facts_recall", "facts_correct", "judge_correct", "truncated", "google_bleu", "rougeL", "words")
    scorers: tuple[str, ...] = SCORERS
    dataset_options = DatasetOptions
    system_options: Mapping[str, type[SystemOptions]] = {
        "budgeted": SystemOptions,
        "refine": RefineOptions,
        "rag": RagOptions,
    }

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        return load_samples(config)

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        if scorer == "facts_recall":
            return facts_recall(instruction_of(sample), output.text)
        if scorer == "facts_correct":
            recall = facts_recall(instruction_of(sample), output.text)
            return None if recall is None else float(recall == 1.0)
        if scorer == "judge_correct":
            verdict = output.extra.get("judge")
            return None if verdict is None else float(bool(verdict["correct"]))
        if scorer == "truncated":
            value = output.extra.get("truncated")
            return None if value is None else float(bool(value))
        raise KeyError(scorer)

    def report_tables(self, rows: Sequence[Any]) -> list[ReportTable]:
        return report_tables(rows)

    review_criteria = REVIEW_CRITERIA  # a rank review of instruct outputs flags C1–C3 beside each rank

    def review_context(self, sample: Mapping[str, Any]) -> str:
        """What a reviewer ranking a run's answers reads (see :func:`review_context`)."""
        return review_context(sample)

    def report_plots(self, rows: Sequence[Any]) -> list[tuple[str, str]]:
        return report_plots(rows)


def review_context(sample: Mapping[str, Any]) -> str:
    """A stored sample as a clinician reviewing its answers reads it: the instruction, then the whole record as
    the systems' paper view shows it (the file's own XML for MedAlign records, bedside's timeline otherwise) with
    its as-of time. The sample's inputs name the records file; a reviewer needs the record, not its path. A
    record that cannot be loaded any more is said so, with the reason, in its place."""
    inputs = sample.get("inputs") or {}
    instruction = Instruction.model_validate(inputs["instruction"])
    try:
        ehr = load_ehr(instruction, inputs.get("records"))
    except (LookupError, ValueError, OSError) as exc:
        return f"Instruction:\n{instruction.question}\n\nPatient record: not available ({exc})"
    as_of = f", as of {ehr.as_of:%Y-%m-%d %H:%M}" if ehr.as_of else ""
    who = instruction.person_id or Path(ehr.source).name
    return f"Instruction:\n{instruction.question}\n\nPatient record ({who}{as_of}):\n{ehr.text('paper')}"


TASK = InstructTask()
