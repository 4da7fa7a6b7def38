"""A task defined entirely in one YAML file: your prompts × your dataset × bedside's metrics and rubric judges.

A run config names the file as its task (``task: my-task.yaml``; a path ending in ``.yaml``/``.yml``). The file
is data, never code: it names prompt template files, a CSV or JSON Lines dataset with a column map, bedside's
generic metrics and rubric judges (see :mod:`bedside.judges`). Example (paths relative to the task file)::

    name: patient-questions
    description: Plain-language answers to patients' questions.
    dataset:                          # what datasets.<name> reads when it gives no path
      path: questions.csv             # .csv, or JSON Lines (one object a line)
      columns: {id: qid, question: question, reference: answer}
    prompts:                          # one system type per prompt, each a Jinja2 template file
      plain: prompts/plain.j2
      careful: prompts/careful.j2
    metrics: [rougeL, bleu]           # bedside's generic metrics (bedside metrics list)
    classification:                   # optional: the answer is a label (scorer `accuracy`, report tables)
      labels: [emergency, urgent, routine]   # optional: the label set
      extract: first_line             # or whole, or regex:PATTERN (its first group)
    judges:                           # rubric judges, run with the judge role inside each sample
      clarity:
        rubric: rubrics/clarity.toml  # a shipped rubric id, or a rubric file
        inputs: {question: question, answer: output}   # rubric input <- a variable, output or reference

``columns`` maps a name to a column of the file; ``id`` (default: the row's line number) and ``reference``
(several references separated by ``||``) become the sample's id and references, every other name a template
variable. With no column map, every column is a variable under its own name (``id`` and ``reference`` as above
when present). A prompt is rendered with the variables (and ``reference``); a template holding ``[[user]]``
markers is a chat, any other is one user message. A judge's inputs default to the rubric's own input names, each
taken from the variable of that name, where ``output`` is the system's answer.

Scorers: the metrics by name, each judge's aggregate under the judge's name, and each criterion as
``<judge>.<criterion>``. With ``classification`` (:mod:`bedside.metrics.classification`), each answer's label is
read by the ``extract`` rule and kept in the output (``extra["label"]``), ``accuracy`` scores it against the
reference label, and the report adds, per cell, accuracy with macro and micro F1, each label's precision, recall
and F1, and the confusion matrix. A judge that gives no valid answer is recorded in the output's ``extra["errors"]`` and
its scores are absent (None), never zero. Every sample carries a hash of the task file, its prompts and rubrics,
so editing any of them re-runs the samples rather than resuming stale results.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from difflib import get_close_matches
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bedside.inputs import InputError, read_text, table_dicts
from bedside.judges import Rubric, load_rubric
from bedside.llm.types import ChatMessage
from bedside.prompts import render, render_chat, template_variables
from bedside.runs.config import DatasetConfig
from bedside.runs.options import Options
from bedside.runs.steps import Steps, judge_in_sample
from bedside.runs.task import Output, ReportTable, Sample, SampleContext, System
from bedside.safe_yaml import MAX_NODES, YamlLimitError, safe_load

TASK_FILE_SUFFIXES = (".yaml", ".yml")
MAX_TASK_FILE_BYTES = 1_000_000
REFERENCE_SEPARATOR = "||"
OUTPUT = "output"


class TaskFileError(InputError):
    """A task file or its dataset cannot be read or does not validate; the message names the file and the key."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatasetSpec(_Strict):
    path: str
    columns: dict[str, str] = Field(default_factory=dict)


class JudgeSpec(_Strict):
    rubric: str
    inputs: dict[str, str] = Field(default_factory=dict)


class ClassificationSpec(_Strict):
    labels: list[str] | None = Field(None, min_length=2)
    extract: str = "first_line"

    @field_validator("extract")
    @classmethod
    def _known_rule(cls, value: str) -> str:
        from bedside.metrics.classification import check_extract_rule

        return check_extract_rule(value)


class TaskDefinition(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    dataset: DatasetSpec | None = None
    prompts: dict[str, str] = Field(min_length=1)
    metrics: list[str] = Field(default_factory=list)
    judges: dict[str, JudgeSpec] = Field(default_factory=dict)
    classification: ClassificationSpec | None = None

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, value: list[str]) -> list[str]:
        from bedside.runs.scorers import GENERIC

        unknown = [name for name in value if name not in GENERIC]
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(unknown)}; bedside's metrics: {', '.join(GENERIC)}")
        return value

    @field_validator("judges")
    @classmethod
    def _judge_names(cls, value: dict[str, JudgeSpec]) -> dict[str, JudgeSpec]:
        from bedside.runs.scorers import GENERIC

        for name in value:
            if name in GENERIC or "." in name:
                raise ValueError(f"judge {name!r}: a judge's name may be no metric's name and may not contain '.'")
        return value


class DatasetOptions(Options):
    columns: dict[str, str] | None = Field(None, description="name -> column (default: the task file's map)")


class SystemOptions(Options):
    """A prompt system takes no options: its prompt is the task file's."""


def _read_definition(source: Path) -> tuple[TaskDefinition, str]:
    try:
        size = source.stat().st_size
    except OSError as exc:
        raise TaskFileError(f"{source}: cannot read the task file: {exc.strerror}") from None
    if size > MAX_TASK_FILE_BYTES:
        raise TaskFileError(f"{source}: the task file is {size:,} bytes; a task file may be at most 1 MB")
    text = read_text(source, error=TaskFileError)
    try:
        data = safe_load(text, max_nodes=MAX_NODES, max_chars=MAX_TASK_FILE_BYTES)
    except yaml.YAMLError as exc:
        raise TaskFileError(f"{source}: not valid YAML: {exc}") from None
    except YamlLimitError as exc:
        raise TaskFileError(f"{source}: {exc}") from None
    if not isinstance(data, dict):
        raise TaskFileError(f"{source}: a task file is a mapping of keys to values")
    try:
        return TaskDefinition.model_validate(data), text
    except ValidationError as exc:
        from bedside.config_errors import problems

        raise TaskFileError(f"{source}: {'; '.join(problems(exc, root=TaskDefinition))}") from None


def _split_references(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [part.strip() for part in str(value).split(REFERENCE_SEPARATOR) if part.strip()]


def read_samples(path: Path, columns: Mapping[str, str]) -> list[Sample]:
    """A CSV/JSONL table as samples through ``columns`` (name -> column); errors name the file and line."""
    if not path.is_file():
        raise TaskFileError(f"{path}: no such dataset file")
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for line, row in table_dicts(path, error=TaskFileError):
        if columns:
            missing = [f"{column!r} (for {name})" for name, column in columns.items() if column not in row]
            if missing:
                raise TaskFileError(
                    f"{path}:{line}: no column {', '.join(missing)}; the row has {', '.join(map(repr, row))}"
                )
            named = {name: row[column] for name, column in columns.items()}
        else:
            named = dict(row)
        for name, value in named.items():
            if name == "reference" and (value is None or isinstance(value, list)):
                continue  # no reference, or several
            if value is None or isinstance(value, bool | dict | list):
                shown = "null" if value is None else type(value).__name__
                raise TaskFileError(f"{path}:{line}: {name} is {shown}, not text (a number is read as its text)")
        raw_id = named.pop("id", line)
        if isinstance(raw_id, float):
            raise TaskFileError(f"{path}:{line}: id {raw_id!r} is a decimal number: give ids as text or whole numbers")
        sample_id = str(raw_id).strip()
        if not sample_id:
            raise TaskFileError(f"{path}:{line}: the id is blank")
        if sample_id in seen:
            raise TaskFileError(f"{path}:{line}: id {sample_id!r} is also on line {seen[sample_id]}")
        seen[sample_id] = line
        references = _split_references(named.pop("reference", None))
        if OUTPUT in named:
            raise TaskFileError(f"{path}:{line}: {OUTPUT!r} is the system's answer; map that column to another name")
        samples.append(Sample(id=sample_id, inputs={"variables": named}, references=references))
    if not samples:
        raise TaskFileError(f"{path}: the dataset has no rows")
    return samples


class TaskFromFile:
    """A run task built from a task file (see the module docstring)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.definition, text = _read_definition(self.path)
        self.base = self.path.parent
        self.name = self.definition.name
        digest = hashlib.sha256(text.encode("utf-8"))
        self.prompts: dict[str, Path] = {}
        for name, file in self.definition.prompts.items():
            prompt = self.base / file
            if not prompt.is_file():
                raise TaskFileError(f"{self.path}: prompts.{name}: no such template file {prompt}")
            self.prompts[name] = prompt
            digest.update(read_text(prompt, error=TaskFileError).encode("utf-8"))
        self.rubrics: dict[str, Rubric] = {}
        self.rubric_refs: dict[str, str] = {}  # what judge_in_sample loads: a rubric file's path, or a shipped id
        for name, judge in self.definition.judges.items():
            located = self.base / judge.rubric
            self.rubric_refs[name] = str(located) if located.suffix and located.is_file() else judge.rubric
            try:
                self.rubrics[name] = load_rubric(self.rubric_refs[name])
            except InputError as exc:
                raise TaskFileError(f"{self.path}: judges.{name}.rubric: {exc}") from None
            digest.update(self.rubrics[name].model_dump_json().encode("utf-8"))
            unknown = sorted(
                set(judge.inputs) - set(self.rubrics[name].inputs) - set(self.rubrics[name].optional_inputs)
            )
            if unknown:
                raise TaskFileError(
                    f"{self.path}: judges.{name}.inputs: the rubric takes no input(s) {', '.join(unknown)}; "
                    f"it takes {', '.join([*self.rubrics[name].inputs, *self.rubrics[name].optional_inputs])}"
                )
        self.digest = digest.hexdigest()
        self.systems: Mapping[str, System] = {name: partial(self._answer, name) for name in self.prompts}
        self.system_options: Mapping[str, type[Options]] = {name: SystemOptions for name in self.prompts}
        self.dataset_options = DatasetOptions
        classifies = ("accuracy",) if self.definition.classification is not None else ()
        self.default_scorers: Sequence[str] = (*classifies, *self.definition.metrics, *self.definition.judges)
        self.scorers: tuple[str, ...] = classifies + tuple(
            name
            for judge, rubric in self.rubrics.items()
            for name in (judge, *(f"{judge}.{criterion}" for criterion in rubric.criterion_names))
        )

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        spec = self.definition.dataset
        columns = config.options.get("columns")
        if config.path:
            path = Path(config.path)
        elif spec is not None:
            path = self.base / spec.path
        else:
            raise ValueError(f"dataset {name!r}: give a path (the task file {self.path} names no dataset)")
        if columns is None:
            columns = spec.columns if spec is not None and not config.path else {}
        samples = read_samples(path, columns)
        # The task's definition is part of every sample, so the run's keys change when the task file does.
        return [s.model_copy(update={"inputs": {**s.inputs, "task": self.digest}}) for s in samples]

    def check_variables(self, system: str, dataset: str, samples: Sequence[Sample]) -> None:
        """Refuse a prompt that reads a variable a sample does not give: with a column named wrong in the map
        (``qustion: question``), every sample would fail at run time, one by one."""
        used = template_variables(self.prompts[system])
        for sample in samples:
            given = {*sample.inputs["variables"], "reference"}
            missing = sorted(used - given)
            if missing:
                hints = [
                    f"{m!r} (did you mean {near[0]!r}?)" if (near := get_close_matches(m, given, 1)) else repr(m)
                    for m in missing
                ]
                raise TaskFileError(
                    f"prompts.{system} ({self.prompts[system].name}) uses {', '.join(hints)}, which dataset "
                    f"{dataset!r} does not give (sample {sample.id!r} has {', '.join(sorted(given))}): check the "
                    "template and the dataset's columns map"
                )

    def _chat(self, prompt: Path, variables: Mapping[str, Any]) -> list[ChatMessage]:
        text = render(prompt, **variables)
        if text.startswith("[["):
            return render_chat(prompt, **variables)
        return [ChatMessage(role="user", content=text)]

    async def _answer(self, prompt: str, sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
        variables = dict(sample.inputs["variables"])
        variables.setdefault("reference", sample.references[0] if sample.references else "")
        answer = (await context.generate("system", self._chat(self.prompts[prompt], variables))).text.strip()
        steps = Steps()
        judgements: dict[str, Any] = {}
        for name, spec in self.definition.judges.items():
            rubric = self.rubrics[name]
            wanted = spec.inputs or {n: n for n in [*rubric.inputs, *rubric.optional_inputs]}
            values = {**variables, OUTPUT: answer}
            inputs = {field: str(values[source]) for field, source in wanted.items() if source in values}
            found = await steps.run(name, partial(judge_in_sample, self.rubric_refs[name], inputs, context))
            if found is not None:
                judgements[name] = found
        extra: dict[str, Any] = {"judgements": judgements, "errors": steps.errors}
        if (classify := self.definition.classification) is not None:
            from bedside.metrics.classification import extract_label

            extra["label"] = extract_label(answer, classify.extract, classify.labels)
        return Output(text=answer, extra=extra)

    def report_tables(self, rows: Sequence[Any]) -> list[ReportTable]:
        """Classification tables per cell (with ``classification``), and judge failures per cell: how many
        answers each judge left unscored (their scores are absent)."""
        tables = self._classification_tables(rows)
        if not self.definition.judges:
            return tables
        counts: dict[tuple[str, str], list[int]] = {}
        for row in rows:
            if row.status != "ok":
                continue
            errors = (row.output or {}).get("extra", {}).get("errors", {})
            for judge in self.definition.judges:
                failed, total = counts.setdefault((row.cell, judge), [0, 0])
                counts[(row.cell, judge)] = [failed + (judge in errors), total + 1]
        table = [[cell, judge, f"{failed} of {total}"] for (cell, judge), (failed, total) in sorted(counts.items())]
        return [
            *tables,
            ReportTable(
                "Judge failures",
                ["cell", "judge", "failed"],
                table,
                note="A failed judgement (no valid answer after its re-asks) leaves that judge's scores absent; "
                "the causes are in each output's extra.errors.",
            ),
        ]

    def _classification_tables(self, rows: Sequence[Any]) -> list[ReportTable]:
        """Per cell: accuracy, macro and micro F1 and unreadable answers; each label's figures; the confusion
        matrix (:func:`bedside.metrics.classification.summarise_labels`)."""
        spec = self.definition.classification
        if spec is None:
            return []
        from bedside.metrics.classification import UNREADABLE, summarise_labels

        by_cell: dict[str, list[tuple[str, str | None]]] = {}
        for row in rows:
            references = (row.sample or {}).get("references") or []
            if row.status != "ok" or not references:
                continue
            by_cell.setdefault(row.cell, []).append((references[0], (row.output or {}).get("extra", {}).get("label")))
        overall, per_label, confusion = [], [], []
        for cell, pairs in sorted(by_cell.items()):
            found = summarise_labels(pairs, spec.labels)
            overall.append(
                [cell, str(found.n), f"{found.accuracy:.3f}", f"{found.macro_f1:.3f}", f"{found.micro_f1:.3f}",
                 str(found.unreadable)]
            )  # fmt: skip
            per_label += [
                [cell, s.label, f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}", str(s.support)]
                for s in found.per_label
            ]
            confusion += [
                [cell, gold, *(str(v) for v in row)] for gold, row in zip(found.labels, found.confusion, strict=True)
            ]
        if not overall:
            return []
        labels = summarise_labels([], spec.labels).labels if spec.labels else ()
        columns = [*(labels or sorted({r[1] for r in confusion})), UNREADABLE]
        return [
            ReportTable(
                "Classification",
                ["cell", "n", "accuracy", "macro F1", "micro F1", "unreadable"],
                overall,
                note=f"Labels read from each answer by `{spec.extract}`; an answer no label could be read from is "
                "unreadable (wrong for accuracy, a miss for recall). Macro F1 weights labels equally.",
            ),
            ReportTable("Per label", ["cell", "label", "precision", "recall", "F1", "support"], per_label),
            ReportTable(
                "Confusion matrix",
                ["cell", "gold", *columns],
                confusion,
                note="Rows: the reference label; columns: the label read from the answer.",
            ),
        ]

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        if scorer == "accuracy" and self.definition.classification is not None:
            from bedside.metrics.classification import normalise_label

            if not sample.references:
                return None
            label = output.extra.get("label")
            return float(label is not None and label == normalise_label(sample.references[0]))
        judge, _, criterion = scorer.partition(".")
        if judge not in self.definition.judges:
            raise KeyError(scorer)
        judgement = output.extra.get("judgements", {}).get(judge)
        if judgement is None:
            return None  # the judge failed (see extra["errors"]): absent, never zero
        value = judgement["scores"].get(criterion) if criterion else judgement["aggregate"]
        return None if value is None else float(value)


def is_task_file(name: str) -> bool:
    return Path(name).suffix.lower() in TASK_FILE_SUFFIXES
