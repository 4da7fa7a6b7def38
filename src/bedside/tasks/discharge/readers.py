"""Discharge cases from bedside's JSONL or the DischargeSim release's OSCE format.

- bedside JSONL: one :class:`~bedside.tasks.discharge.cases.DischargeCase` per line (the shipped synthetic cases).
  A line may leave out ``structure``; the note is then parsed at run time (:mod:`.parse`).
- The DischargeSim release (``OSCE-format.jsonl`` + ``original-notes.txt``): line *i* of the OSCE file is paired
  with line *i* of the notes file, which holds one JSON-encoded string per line (decoded here; the reference code
  strips quotes instead and keeps literal ``\\n`` escapes). The OSCE record carries no medicines, follow-up or
  return precautions, so its note is parsed into bedside's structure like any unparsed note; the OSCE fields are
  kept as the case's ``source``. The release's loader opens ``osce-format.jsonl`` in lower case; bedside takes the
  path it is given.
- The paper's gold set (:func:`read_mimic_cases`): MIMIC-IV discharge notes as MIMIC-IV-Note's ``discharge.csv``
  has them (``note_id``, ``subject_id``, ``text``, ...), and the expert exam as a CSV with one question a row:
  ``note_id``, ``question``, ``answer``, ``distractor``, ``irrelevant`` and ``category`` (the annotation
  guideline's categories, Fig. 2, in its words or bedside's ids), ``question_id`` optional. Only notes with
  questions become cases, so a subset or the whole notes file can be given. The authors share the gold set on
  request only and describe no file layout, so these column names are bedside's; map yours with ``columns``
  (per file: ``{questions: {category: label}}``).
  Optional: MIMIC-IV's ``patients.csv`` for age and sex (else the note's ``Sex:`` line), and reference summaries
  (JSONL: ``note_id`` and a ``reference_summary`` in the five-section shape) for ROUGE-L, concept F1 and AHRQ.

Every error names the file and the line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bedside.inputs import InputError, csv_table, loads_json, text_lines
from bedside.jsonlines import json_objects
from bedside.tasks.discharge.cases import CATEGORIES, Category, Demographics, DischargeCase, DischargeSummary, Question


class CaseFormatError(InputError):
    """A cases file that cannot be read; the message names the file and the line."""


def read_cases(path: str | Path, *, notes: str | Path | None = None) -> list[DischargeCase]:
    path = Path(path)
    if not path.is_file():
        raise CaseFormatError(f"{path}: no such file")
    records = json_objects(path, CaseFormatError)
    if records and all("OSCE_Examination" in r for _, r in records):
        notes_path = Path(notes) if notes else path.with_name("original-notes.txt")
        cases = _osce(path, records, notes_path)
    else:
        cases = []
        for line, record in records:
            try:
                cases.append(DischargeCase.model_validate(record))
            except ValidationError as exc:
                problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
                raise CaseFormatError(f"{path}:{line}: not a discharge case: {problems}") from None
    ids = [c.id for c in cases]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise CaseFormatError(f"{path}: case ids repeat: {repeated}")
    return cases


_AGE = re.compile(r"\b(\d{1,3})\s*(?:-?\s*year|y/?o|yo)\b", re.IGNORECASE)


def _osce(path: Path, records: list[tuple[int, Any]], notes_path: Path) -> list[DischargeCase]:
    if not notes_path.is_file():
        raise CaseFormatError(f"{path}: OSCE records need their notes file; {notes_path} does not exist")
    note_lines = [line for _, line in text_lines(notes_path, error=CaseFormatError)]
    if len(note_lines) != len(records):
        raise CaseFormatError(
            f"{notes_path}: {len(note_lines)} notes for {len(records)} OSCE records in {path} (paired line by line)"
        )
    cases = []
    for index, ((line, record), note_line) in enumerate(zip(records, note_lines, strict=True)):
        note = loads_json(note_line, path=notes_path, line=index + 1, error=CaseFormatError)
        if not isinstance(note, str) or not note.strip():
            raise CaseFormatError(f"{notes_path}:{index + 1}: expected a non-empty JSON string")
        exam = record["OSCE_Examination"]
        actor = exam.get("Patient_Actor", {}) if isinstance(exam, dict) else {}
        actor = actor if isinstance(actor, dict) else {}
        demographics = str(actor.get("Demographics", ""))
        age = _AGE.search(demographics)
        sex = next((s for s in ("female", "male") if s in demographics.lower()), "")
        cases.append(
            DischargeCase(
                id=f"{path.stem}-{line}",
                demographics=Demographics(age=int(age.group(1)) if age else None, sex=sex),
                note=note,
                source=f"DischargeSim OSCE record {path.name}:{line}: {json.dumps(exam, ensure_ascii=False)[:2000]}",
            )
        )
    return cases


NOTE_COLUMNS = {"note_id": "note_id", "subject_id": "subject_id", "text": "text"}
QUESTION_COLUMNS = {
    "note_id": "note_id",
    "question_id": "question_id",
    "question": "question",
    "answer": "answer",
    "distractor": "distractor",
    "irrelevant": "irrelevant",
    "category": "category",
}
PATIENT_COLUMNS = {"subject_id": "subject_id", "gender": "gender", "anchor_age": "anchor_age"}

# The annotation guideline's six categories (Fig. 2) in its own words, and bedside's ids, read alike: lower case,
# letters and digits only, so "Procedure(follow up/tests/interventions) after discharge" and
# "procedure follow up tests interventions after discharge" are one category.
_GUIDELINE_CATEGORIES: dict[str, Category] = {
    "diagnosis during hospital stay": "diagnosis_in_stay",
    "procedure interventions tests during hospital stay": "tests_treatments_in_stay",
    "medication during hospital stay": "medication_in_stay",
    "diagnosis in discharge": "diagnosis_at_discharge",
    "procedure follow up tests interventions after discharge": "care_after_discharge",
    "medication after discharge": "medication_after_discharge",
}
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def _category_key(text: str) -> str:
    return _NOT_ALNUM.sub("", text.lower())


_CATEGORY_KEYS: dict[str, Category] = {
    **{_category_key(words): category for words, category in _GUIDELINE_CATEGORIES.items()},
    **{_category_key(category): category for category in CATEGORIES},
}
_SEX_LINE = re.compile(r"(?im)^\s*sex\s*:\s*([mf])\b")


def category_of(text: str) -> Category | None:
    """The exam category a label names (the guideline's words or bedside's id), or None."""
    return _CATEGORY_KEYS.get(_category_key(text))


def read_mimic_cases(
    notes: str | Path,
    questions: str | Path,
    *,
    patients: str | Path | None = None,
    summaries: str | Path | None = None,
    columns: Mapping[str, Mapping[str, str]] | None = None,
) -> list[DischargeCase]:
    """The gold set: one case per note that has exam questions, in the questions file's order.

    ``columns`` maps fields to your files' column names, per file: ``{notes: {text: note_text}, questions:
    {category: label}, patients: {...}}`` over :data:`NOTE_COLUMNS`, :data:`QUESTION_COLUMNS` and
    :data:`PATIENT_COLUMNS`. Every error names the file, the line and the column."""
    maps = dict(columns or {})
    unknown_files = sorted(set(maps) - {"notes", "questions", "patients"})
    if unknown_files:
        raise CaseFormatError(f"columns: no file {unknown_files[0]!r}; the files are notes, questions and patients")
    question_fields = {f: maps.get("questions", {}).get(f, c) for f, c in QUESTION_COLUMNS.items()}
    note_fields = {f: maps.get("notes", {}).get(f, c) for f, c in NOTE_COLUMNS.items()}
    patient_fields = {f: maps.get("patients", {}).get(f, c) for f, c in PATIENT_COLUMNS.items()}
    questions_path, notes_path = Path(questions), Path(notes)
    by_note: dict[str, list[Question]] = {}
    where: dict[str, int] = {}
    for line, row in csv_table(
        questions_path, question_fields, "questions file", optional=("question_id",), error=CaseFormatError
    ):
        for field in ("note_id", "question", "answer", "distractor", "irrelevant", "category"):
            if not row[field]:
                raise CaseFormatError("empty", path=questions_path, line=line, field=question_fields[field])
        category = category_of(row["category"])
        if category is None:
            known = "; ".join([*_GUIDELINE_CATEGORIES, *CATEGORIES])
            raise CaseFormatError(
                f"unknown category {row['category']!r}; use the guideline's words or bedside's ids: {known}",
                path=questions_path,
                line=line,
                field=question_fields["category"],
            )
        asked = by_note.setdefault(row["note_id"], [])
        where.setdefault(row["note_id"], line)
        try:
            asked.append(
                Question(
                    id=row["question_id"] or f"q{len(asked) + 1}",
                    question=row["question"],
                    answer=row["answer"],
                    distractor=row["distractor"],
                    irrelevant=row["irrelevant"],
                    category=category,
                )
            )
        except ValidationError as exc:
            reason = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise CaseFormatError(reason, path=questions_path, line=line) from None
        if len({q.id for q in asked}) != len(asked):
            raise CaseFormatError(
                f"question id {asked[-1].id!r} repeats for note {row['note_id']}",
                path=questions_path,
                line=line,
                field=question_fields["question_id"],
            )
    found: dict[str, tuple[int, dict[str, str]]] = {}
    for line, row in csv_table(notes_path, note_fields, "notes file", optional=("subject_id",), error=CaseFormatError):
        if row["note_id"] in by_note:
            if row["note_id"] in found:
                raise CaseFormatError(
                    f"note {row['note_id']} appears twice", path=notes_path, line=line, field=note_fields["note_id"]
                )
            if not row["text"]:
                raise CaseFormatError("empty note", path=notes_path, line=line, field=note_fields["text"])
            found[row["note_id"]] = (line, row)
    missing = [note for note in by_note if note not in found]
    if missing:
        raise CaseFormatError(
            f"questions for note {missing[0]} but {notes_path} has no such {note_fields['note_id']}"
            + (f" (nor {len(missing) - 1} more)" if len(missing) > 1 else ""),
            path=questions_path,
            line=where[missing[0]],
            field=question_fields["note_id"],
        )
    people = _patients(Path(patients), patient_fields) if patients else {}
    references = _summaries(Path(summaries)) if summaries else {}
    unknown = sorted(set(references) - set(by_note))
    if unknown:
        raise CaseFormatError(f"a reference summary for note {unknown[0]}, which has no questions", path=summaries)
    cases = []
    for note_id, asked in by_note.items():
        _, row = found[note_id]
        demographics = people.get(row["subject_id"])
        if demographics is None:
            sex = _SEX_LINE.search(row["text"])
            demographics = Demographics(sex={"m": "male", "f": "female"}[sex.group(1).lower()] if sex else "")
        cases.append(
            DischargeCase(
                id=note_id,
                demographics=demographics,
                note=row["text"],
                questions=asked,
                reference_summary=references.get(note_id),
                source=f"MIMIC-IV note {note_id} ({notes_path.name}); exam from {questions_path.name}",
            )
        )
    return cases


def _patients(path: Path, fields: Mapping[str, str]) -> dict[str, Demographics]:
    """MIMIC-IV's ``patients.csv``: age at the anchor year and sex, by subject."""
    out = {}
    for line, row in csv_table(path, fields, "patients file", error=CaseFormatError):
        try:
            age = int(row["anchor_age"]) if row["anchor_age"] else None
            out[row["subject_id"]] = Demographics(
                age=age, sex={"m": "male", "f": "female"}.get(row["gender"].lower(), "")
            )
        except (ValueError, ValidationError):
            raise CaseFormatError(
                f"not an age from 0 to 120: {row['anchor_age']!r}", path=path, line=line, field=fields["anchor_age"]
            ) from None
    return out


def _summaries(path: Path) -> dict[str, DischargeSummary]:
    out = {}
    for line, record in json_objects(path, CaseFormatError):
        note_id = str(record.get("note_id") or "")
        if not note_id:
            raise CaseFormatError("missing", path=path, line=line, field="note_id")
        try:
            out[note_id] = DischargeSummary.model_validate(record.get("reference_summary"))
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in ("reference_summary", *problem["loc"]))
            raise CaseFormatError(problem["msg"], path=path, line=line, field=where) from None
    return out
