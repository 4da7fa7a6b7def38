"""Discharge cases from bedside's JSONL or the DischargeSim release's OSCE format.

- bedside JSONL: one :class:`~bedside.tasks.discharge.cases.DischargeCase` per line (the shipped synthetic cases).
  A line may leave out ``structure``; the note is then parsed at run time (:mod:`.parse`).
- The DischargeSim release (``OSCE-format.jsonl`` + ``original-notes.txt``): line *i* of the OSCE file is paired
  with line *i* of the notes file, which holds one JSON-encoded string per line (decoded here; the reference code
  strips quotes instead and keeps literal ``\\n`` escapes). The OSCE record carries no medicines, follow-up or
  return precautions, so its note is parsed into bedside's structure like any unparsed note; the OSCE fields are
  kept as the case's ``source``. The release's loader opens ``osce-format.jsonl`` in lower case; bedside takes the
  path it is given.

Every error names the file and the line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bedside.inputs import InputError, loads_json, text_lines
from bedside.jsonlines import json_objects
from bedside.tasks.discharge.cases import Demographics, DischargeCase


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
