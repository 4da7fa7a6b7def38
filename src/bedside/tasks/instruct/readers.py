"""Readers for instruction cases, clinician labels and record-relevance labels, in every layout bedside knows.

- bedside JSONL: one :class:`~.cases.Instruction` (or :class:`~.labels.ResponseLabel`, or relevance row) a line;
- MedAlign's public sample (``instructions-sample.csv``: ``instruction_id, question,
  human_assigned_subcategory_1, source``);
- the release's TSVs (``clinician-instruction-responses.tsv``, ``clinician-reviewed-model-responses.tsv``),
  read through a column map (bedside field -> column name) because the release's column names are only partly
  known: a mapped column that is missing is an error naming the column and the file. The release has been read
  both with and without quote handling, so ``quoting`` is ``"csv"`` (a field may be quoted) or ``"none"``
  (quotes are text);
- relevance labels: the earlier ``ehr-relevance-labels.csv`` (``is_selected_ehr`` = ``yes`` marks the chosen
  BM25 candidate) or bedside JSONL (``instruction_id, person_id, relevance``).

Every error names the file and the line (row) at fault; nothing is returned half-read.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from bedside.inputs import InputError, csv_rows, read_text, require_columns
from bedside.jsonlines import json_objects
from bedside.tasks.instruct.cases import Instruction, Reference
from bedside.tasks.instruct.labels import ResponseLabel
from bedside.tasks.instruct.taxonomy import TaxonomyError

Quoting = Literal["csv", "none"]
Relevance = Literal["relevant", "irrelevant", "unreviewed"]

GOLD_COLUMNS: dict[str, str] = {
    "instruction_id": "instruction_id",
    "person_id": "person_id",
    "annotator": "annotator_num",
    "response": "clinician_response",
    "question": "question",
    "filename": "filename",
}
REVIEWED_COLUMNS: dict[str, str] = {
    "instruction_id": "instruction_id",
    "model": "model_name",
    "correct": "binary_correct",
}
REVIEWED_OPTIONAL: dict[str, str] = {
    # not seen in any public reader of the release: give their names in the column map when your copy has them
    "response": "model_response",
    "rank": "clinician_rank",
    "evaluator": "evaluator_id",
    "used": "is_used_eval",
    "specialty": "submitter_specialty",
}
EHR_FOLDERS = ("ehrs", "medalign_ehr_xml")


class InstructDataError(InputError):
    """A data file that cannot be read as instructions or labels; the message names the file and line."""


def _validation_message(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(row)'}: {e['msg']}" for e in exc.errors())


def _jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return json_objects(path, InstructDataError)


def _table(path: Path, *, delimiter: str, quoting: Quoting) -> tuple[list[str], Iterator[tuple[int, dict[str, str]]]]:
    text = read_text(path, error=InstructDataError)
    lines = io.StringIO(text, newline="")  # quoted fields may hold line breaks
    style = csv.QUOTE_NONE if quoting == "none" else csv.QUOTE_MINIMAL
    reader = csv_rows(lines, path=path, error=InstructDataError, delimiter=delimiter, quoting=style)
    try:
        _, header = next(reader)
    except StopIteration:
        raise InstructDataError(f"{path}: empty file (no header row)") from None
    header = [h.strip() for h in header]

    def rows() -> Iterator[tuple[int, dict[str, str]]]:
        found = False
        for number, values in reader:
            if not any(v.strip() for v in values):
                continue
            found = True
            if len(values) != len(header):
                raise InstructDataError(
                    f"{path}:{number}: {len(values)} fields, the header has {len(header)}"
                    + (" (try quoting='none' or 'csv')" if '"' in "".join(values) else "")
                )
            yield number, dict(zip(header, values, strict=True))
        if not found:  # an empty table is a mistake, never a run over nothing
            raise InstructDataError(f"{path}: no data: the table has no rows under its header")

    return header, rows()


def read_instructions_jsonl(path: str | Path) -> list[Instruction]:
    path = Path(path)
    instructions: list[Instruction] = []
    seen: set[str] = set()
    for number, data in _jsonl(path):
        try:
            instruction = Instruction.model_validate(data)
        except ValidationError as exc:
            raise InstructDataError(f"{path}:{number}: {_validation_message(exc)}") from None
        if instruction.id in seen:
            raise InstructDataError(f"{path}:{number}: duplicate instruction id {instruction.id!r}")
        seen.add(instruction.id)
        if instruction.record and not Path(instruction.record).is_absolute():
            instruction.record = str((path.parent / instruction.record).resolve())
        instructions.append(instruction)
    return instructions


def read_sample_csv(path: str | Path) -> list[Instruction]:
    """MedAlign's public ``instructions-sample.csv`` (no records, no references: for taxonomy and matching)."""
    path = Path(path)
    header, rows = _table(path, delimiter=",", quoting="csv")
    columns = {
        "instruction_id": "instruction_id",
        "question": "question",
        "subcategory": "human_assigned_subcategory_1",
    }
    require_columns(path, header, columns, "instruction sample", error=InstructDataError)
    instructions = []
    for number, row in rows:
        try:
            instructions.append(
                Instruction(
                    id=row["instruction_id"].strip(),
                    question=row["question"].strip(),
                    subcategory=row["human_assigned_subcategory_1"].strip() or None,
                    source=f"medalign-sample:{row.get('source', '').strip()}".rstrip(":"),
                )
            )
        except (ValidationError, TaxonomyError) as exc:
            message = _validation_message(exc) if isinstance(exc, ValidationError) else str(exc)
            raise InstructDataError(f"{path}:{number}: {message}") from None
    return instructions


def _ehr_path(folder: Path, filename: str, person_id: str) -> str | None:
    names = [n for n in (filename, f"{person_id}.xml", f"EHR_{person_id}.xml") if n]
    for sub in EHR_FOLDERS:
        for name in names:
            candidate = folder / sub / name
            try:
                if candidate.is_file():
                    return str(candidate)
            except OSError:  # a name no file system takes (too long, a NUL byte): no record by that name
                continue
    return None


def read_release_gold(
    path: str | Path,
    *,
    columns: Mapping[str, str] | None = None,
    quoting: Quoting = "csv",
    source: str = "medalign-v1.3",
) -> list[Instruction]:
    """The release's gold file: one row per (instruction, annotator) -> one instruction with its references.

    Records are looked up beside the file in ``ehrs/`` or ``medalign_ehr_xml/`` (by ``filename``, then
    ``<person_id>.xml``, then ``EHR_<person_id>.xml``); an instruction whose record is not there keeps
    ``record=None`` and fails when a system needs it, with the reason."""
    path = Path(path)
    mapping = {**GOLD_COLUMNS, **(columns or {})}
    header, rows = _table(path, delimiter="\t", quoting=quoting)
    require_columns(path, header, mapping, "gold-answer file", error=InstructDataError)
    by_id: dict[str, Instruction] = {}
    for number, row in rows:
        instruction_id = row[mapping["instruction_id"]].strip()
        person_id = row[mapping["person_id"]].strip()
        text = row[mapping["response"]].strip()
        if not instruction_id:
            raise InstructDataError(f"{path}:{number}: empty {mapping['instruction_id']!r}")
        existing = by_id.get(instruction_id)
        if existing is None:
            existing = by_id[instruction_id] = Instruction(
                id=instruction_id,
                question=row[mapping["question"]].strip() or "(no question text)",
                person_id=person_id or None,
                record=_ehr_path(path.parent, row[mapping["filename"]].strip(), person_id),
                source=source,
            )
        elif existing.person_id != (person_id or None):
            raise InstructDataError(
                f"{path}:{number}: instruction {instruction_id} is paired with person {person_id}, "
                f"an earlier row says {existing.person_id}"
            )
        if text:
            existing.references.append(
                Reference(annotator=row[mapping["annotator"]].strip() or "Annotator_1", text=text)
            )
    return list(by_id.values())


def _boolean(value: str, *, path: Path, line: int, column: str) -> bool:
    text = value.strip().lower()
    if text in ("1", "1.0", "true", "yes", "y", "correct"):
        return True
    if text in ("0", "0.0", "false", "no", "n", "incorrect"):
        return False
    raise InstructDataError(f"{path}:{line}: column {column!r}: {value!r} is not a 0/1 label")


def read_release_reviewed(
    path: str | Path,
    *,
    columns: Mapping[str, str] | None = None,
    quoting: Quoting = "csv",
    used_only: bool = True,
) -> list[ResponseLabel]:
    """The release's reviewed-responses file: one clinician label per (instruction, model).

    ``columns`` maps bedside fields (``instruction_id, model, correct, response, rank, evaluator, used,
    specialty``) to column names; the first three are required, the rest read when present (a column you name
    explicitly must exist). ``specialty`` (``submitter_specialty``) is kept on each label for the by-specialty
    breakdown (see :func:`.evaluation.with_label_specialties`). With ``used_only``, rows whose ``is_used_eval``
    is not ``yes`` are left out, as the paper's 303 are."""
    path = Path(path)
    given = dict(columns or {})
    header, rows = _table(path, delimiter="\t", quoting=quoting)
    required = {**REVIEWED_COLUMNS, **{k: v for k, v in given.items() if k in REVIEWED_COLUMNS}}
    explicit_optional = {k: v for k, v in given.items() if k in REVIEWED_OPTIONAL}
    unknown = sorted(set(given) - set(REVIEWED_COLUMNS) - set(REVIEWED_OPTIONAL))
    if unknown:
        raise InstructDataError(
            f"column map: unknown field(s) {', '.join(unknown)}; fields are "
            f"{', '.join([*REVIEWED_COLUMNS, *REVIEWED_OPTIONAL])}"
        )
    require_columns(path, header, {**required, **explicit_optional}, "reviewed-responses file", error=InstructDataError)
    optional = {k: v for k, v in {**REVIEWED_OPTIONAL, **explicit_optional}.items() if v in header}
    labels: list[ResponseLabel] = []
    for number, row in rows:
        if used_only and "used" in optional and row[optional["used"]].strip().lower() not in ("yes", "1", "true"):
            continue
        rank_text = row[optional["rank"]].strip() if "rank" in optional else ""
        try:
            labels.append(
                ResponseLabel(
                    instruction_id=row[required["instruction_id"]].strip(),
                    model=row[required["model"]].strip(),
                    correct=_boolean(row[required["correct"]], path=path, line=number, column=required["correct"]),
                    response=row[optional["response"]] if "response" in optional else "",
                    rank=float(rank_text) if rank_text else None,
                    evaluator=(row[optional["evaluator"]].strip() if "evaluator" in optional else "") or "Annotator_1",
                    submitter_specialty=(row[optional["specialty"]].strip() if "specialty" in optional else "") or None,
                )
            )
        except ValidationError as exc:
            raise InstructDataError(f"{path}:{number}: {_validation_message(exc)}") from None
        except ValueError as exc:
            raise InstructDataError(f"{path}:{number}: {exc}") from None
    return labels


def read_labels_jsonl(path: str | Path) -> list[ResponseLabel]:
    path = Path(path)
    labels: list[ResponseLabel] = []
    seen: set[tuple[str, str, str]] = set()
    for number, data in _jsonl(path):
        try:
            label = ResponseLabel.model_validate(data)
        except ValidationError as exc:
            raise InstructDataError(f"{path}:{number}: {_validation_message(exc)}") from None
        key = (label.instruction_id, label.model, label.evaluator)
        if key in seen:
            raise InstructDataError(f"{path}:{number}: a second label by {key[2]} for {key[1]} on {key[0]}")
        seen.add(key)
        labels.append(label)
    models: dict[tuple[str, str], set[str]] = {}
    for label in labels:
        models.setdefault((label.instruction_id, label.evaluator), set()).add(label.model)
    for label in labels:
        ranked = len(models[(label.instruction_id, label.evaluator)])
        if label.rank is not None and label.rank > ranked:
            raise InstructDataError(
                f"{path}: {label.evaluator}'s rank {label.rank:g} for {label.model} on {label.instruction_id} is above "
                f"the {ranked} responses ranked there"
            )
    return labels


def read_relevance(path: str | Path) -> dict[str, dict[str, Relevance]]:
    """instruction id -> person id -> ``relevant``/``irrelevant``; pairs not listed are unreviewed.

    ``.csv``: the earlier ``ehr-relevance-labels.csv`` layout, where ``is_selected_ehr`` = ``yes`` marks the
    relevant candidate and other listed rows are irrelevant. ``.jsonl``: rows with ``relevance`` given."""
    path = Path(path)
    labels: dict[str, dict[str, Relevance]] = {}
    if path.suffix.lower() == ".jsonl":
        for number, data in _jsonl(path):
            missing = [k for k in ("instruction_id", "person_id", "relevance") if k not in data]
            if missing:
                raise InstructDataError(f"{path}:{number}: missing {', '.join(missing)}")
            value = str(data["relevance"])
            if value not in ("relevant", "irrelevant", "unreviewed"):
                raise InstructDataError(f"{path}:{number}: relevance {value!r} is not relevant/irrelevant/unreviewed")
            if value != "unreviewed":
                labels.setdefault(str(data["instruction_id"]), {})[str(data["person_id"])] = value  # type: ignore[assignment]
        return labels
    header, rows = _table(path, delimiter=",", quoting="csv")
    require_columns(
        path,
        header,
        {"instruction_id": "instruction_id", "person_id": "person_id", "relevant": "is_selected_ehr"},
        "relevance-label file",
        error=InstructDataError,
    )
    for number, row in rows:
        selected = _boolean(row["is_selected_ehr"], path=path, line=number, column="is_selected_ehr")
        labels.setdefault(row["instruction_id"].strip(), {})[row["person_id"].strip()] = (
            "relevant" if selected else "irrelevant"
        )
    return labels


def read_instructions(path: str | Path, **options: Any) -> list[Instruction]:
    """Instructions from any supported file, chosen by its name: ``.jsonl`` (bedside), a ``.csv`` with the
    sample's columns, or a ``.tsv`` gold file (``columns`` and ``quoting`` options apply)."""
    path = Path(path)
    if not path.is_file():
        raise InstructDataError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return read_instructions_jsonl(path)
    if suffix == ".csv":
        return read_sample_csv(path)
    if suffix == ".tsv":
        return read_release_gold(path, columns=options.get("columns"), quoting=options.get("quoting", "csv"))
    raise InstructDataError(f"{path}: unknown instruction file type (use .jsonl, the sample .csv or a gold .tsv)")
