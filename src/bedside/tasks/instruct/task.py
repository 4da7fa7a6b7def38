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

from collections import defaultdict
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
from bedside.tasks.instruct.prompting import cut_record
from bedside.tasks.instruct.readers import InstructDataError, read_instructions
from bedside.tasks.instruct.systems import budgeted, rag, refine
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
        from bedside.tasks.instruct.plots import report_plots

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


def _mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.3f}" if values else "-"


def report_cell(row: Any) -> tuple[str, str, int]:
    """(system kind, model, context tokens): the cell a result row is reported in, by the tables and the plots."""
    extra = row.output.get("extra", {})
    return str(extra.get("system_kind", row.system)), row.model, int(extra.get("context", 0))


def context_label(kind: str, context: int) -> str:
    """A cell's context as shown: multi-step refinement reads the whole record ("unbounded", the paper's †)."""
    return "unbounded" if kind.startswith("refine") else str(context)


def report_tables(rows: Sequence[Any]) -> list[ReportTable]:
    """Systems × context lengths (paper systems first, extensions labelled), and correctness by category."""
    cells: dict[tuple[str, str, int], list[Any]] = defaultdict(list)
    errors: dict[tuple[str, str], int] = defaultdict(int)
    for row in rows:
        if row.status != "ok" or not row.output:
            errors[(row.system, row.model)] += 1
            continue
        cells[report_cell(row)].append(row)
    ordered = sorted(cells, key=lambda c: ("extension" in c[0], c[0], c[1], c[2]))
    body = []
    for kind, model, context in ordered:
        group = cells[(kind, model, context)]
        extras = [r.output["extra"] for r in group]

        def scores(name: str, group: list[Any] = group) -> list[float]:
            return [v for r in group if (v := r.scores.get(name)) is not None]

        body.append(
            [
                kind,
                model,
                context_label(kind, context),
                str(len(group)),
                _mean(scores("facts_correct")),
                _mean(scores("judge_correct")),
                _mean(scores("facts_recall")),
                _mean(scores("truncated")),
                _mean([float(e["prompt_tokens"]) for e in extras if "prompt_tokens" in e]),
                str(sum(int(e.get("step_errors", 0)) for e in extras)),
                ",".join(sorted({str(e.get("record_view")) for e in extras})),
            ]
        )
    tables = [
        ReportTable(
            title="Instructions: systems × context length",
            columns=[
                "system",
                "model",
                "context",
                "n",
                "facts correct",
                "judge correct",
                "facts recall",
                "truncated",
                "prompt tokens",
                "MR step errors",
                "view",
            ],
            rows=body,
            note="Paper systems first; rows marked (extension) were not in the paper. MR's context is unbounded "
            "(the paper's 32,768†). Failed samples by system/model: "
            + (", ".join(f"{s}/{m}: {n}" for (s, m), n in sorted(errors.items())) or "none"),
        )
    ]
    # One column per system and model: pooling a grid's models into one column would hide what differs.
    by_category: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in rows:
        if row.status == "ok" and (v := row.scores.get("facts_correct")) is not None:
            by_category[(row.strata.get("category", "(none)"), f"{row.system} / {row.model}")].append(v)
    if by_category:
        systems = sorted({s for _, s in by_category})
        categories = sorted({c for c, _ in by_category})
        tables.append(
            ReportTable(
                title="Facts correct by instruction category",
                columns=["category", *systems],
                rows=[[c, *(_mean(by_category.get((c, s), [])) for s in systems)] for c in categories],
                note="Columns: system / model; each cell the mean of facts correct over its instructions.",
            )
        )
    return tables


TASK = InstructTask()
