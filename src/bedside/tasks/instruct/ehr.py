"""The record an instruction is about, in the form a system shows it (see :data:`.cases.RecordView`).

Records come from the instruction's own file (``record``: a MedAlign XML of either dialect, a FHIR bundle or
bedside JSONL) or from the dataset's records (bedside JSONL or a folder of files) by ``person_id``. The paper view
of an XML record is the file's text as it is, which is what MedAlign's models and clinicians read; other sources
have no raw text, so their paper view is bedside's rendered timeline (cut at a token boundary all the same).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path

from bedside.inputs import read_xml_text
from bedside.records import Record, RecordError, read_records
from bedside.records.medalign import EHR_FILE_PREFIX
from bedside.records.timeline import render_timeline_xml
from bedside.tasks.instruct.cases import Instruction
from bedside.text.tokens import Tokenizer


class RecordNotFoundError(LookupError):
    """An instruction's record is not where its case says it is."""


@dataclass
class EHR:
    record: Record
    raw_text: str | None  # the file's own text (XML records only)
    source: str
    _rendered: str | None = field(default=None, repr=False, compare=False)
    _counts: dict[tuple[str, str], int] = field(default_factory=dict, repr=False, compare=False)

    def text(self, view: str) -> str:
        """The whole record as the view shows it before any cut (as of the record's last event)."""
        if view == "paper" and self.raw_text is not None:
            return self.raw_text
        if self._rendered is None:  # rendered once: every system and context of a run reuses it
            self._rendered = render_timeline_xml(self.record)
        return self._rendered

    def tokens(self, view: str, tokenizer: Tokenizer) -> int:
        """The whole record's length in ``tokenizer``'s tokens, counted once per view and tokenizer."""
        key = (view, tokenizer.name)
        if key not in self._counts:
            self._counts[key] = tokenizer.count(self.text(view))
        return self._counts[key]

    @property
    def as_of(self) -> datetime | None:
        """MedAlign's time anchor: the latest time in the record (answers are written as of then)."""
        times = [t for t in _times(self.record) if t is not None]
        return max(times) if times else None


def _times(record: Record) -> list[datetime | None]:
    return [
        *(e.start for e in record.encounters),
        *(c.onset for c in record.conditions),
        *(m.time for m in record.measurements),
        *(m.start for m in record.medications),
        *(p.start for p in record.procedures),
        *(n.time for n in record.notes),
    ]


@lru_cache(maxsize=64)
def _file(path: str) -> EHR:
    records = read_records(path)
    if len(records) != 1:
        raise RecordNotFoundError(f"{path}: holds {len(records)} records; an instruction's record file holds one")
    raw = read_xml_text(path, error=RecordError) if path.lower().endswith(".xml") else None
    return EHR(records[0], raw, path)


@lru_cache(maxsize=8)
def records_by_person(path: str) -> Mapping[str, Record]:
    """Every record of a bedside JSONL file (or the files of a folder), by patient id."""
    folder = Path(path)
    records: dict[str, Record] = {}
    files = sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else [folder]
    for file in files:
        for record in read_records(file):
            records[record.patient.id] = record
    return records


def person_xml(folder: str | Path, person: str) -> Path | None:
    """A person's own XML file in a records folder: ``<person>.xml`` (the release), else ``EHR_<person>.xml``
    (MedAlign's earlier layout, whose files give the person id without the prefix); None when neither is there."""
    base = Path(folder)
    if not base.is_dir():
        return None
    for name in (f"{person}.xml", f"{EHR_FILE_PREFIX}{person}.xml"):
        if (base / name).is_file():
            return base / name
    return None


_PEOPLE: dict[tuple[str, str], EHR] = {}


def _person_ehr(records: str, person: str, record: Record, raw: str | None) -> EHR:
    """One EHR object per (records source, person), so its rendering and counts are shared by a run's samples."""
    key = (records, person)
    if key not in _PEOPLE or _PEOPLE[key].record is not record:
        _PEOPLE[key] = EHR(record, raw, records)
    return _PEOPLE[key]


def load_ehr(instruction: Instruction, records: str | None = None) -> EHR:
    """The instruction's record: its own file first, else the dataset's records by ``person_id``."""
    if instruction.record:
        if not Path(instruction.record).is_file():
            raise RecordNotFoundError(f"instruction {instruction.id}: record file {instruction.record} not found")
        return _file(instruction.record)
    if records and instruction.person_id:
        found = records_by_person(records).get(instruction.person_id)
        if found is None:
            raise RecordNotFoundError(
                f"instruction {instruction.id}: no record for person {instruction.person_id} in {records}"
            )
        xml = person_xml(records, instruction.person_id)
        raw = read_xml_text(xml, error=RecordError) if xml is not None else None
        return _person_ehr(records, instruction.person_id, found, raw)
    raise RecordNotFoundError(
        f"instruction {instruction.id} has no record: give it a 'record' file, or a person_id and the dataset's "
        "'records' option"
    )
