"""MedAlign-style XML timelines into a :class:`~bedside.records.model.Record`.

The shape is ``<record>`` > ``<visit type start>`` > ``<day start>`` > events, each event holding one or more
``<code>[VOCAB/CODE] text</code>`` lines (or, for notes, free text). Each ``<code>`` line becomes one item:
a ``<measurement>`` with ten codes is ten measurements. Element mapping:

============================= =========================================================
element                       becomes
============================= =========================================================
``visit``                     an encounter (``type`` is its text; ``end`` if given)
``person``                    the patient (``Birth``, ``Gender``, ``Race``, ``Ethnicity``)
``condition_occurrence``      conditions, onset at ``start``
``measurement``/``observation`` measurements (``category`` is the element name)
``procedure_occurrence``      procedures
``drug_exposure``             medications (``source="exposure"``)
``note``                      a note (``type="NULL"`` is read as ``note``; empty notes skipped, with a warning)
``visit_detail``              the visit's ``details`` (care site lines)
============================= =========================================================

Values are not split out of code text (``Diastolic blood pressure 100`` stays text), because the files do not
mark where a name ends and a value begins. Times mix 24-hour and AM/PM forms; both are read. Other elements
are skipped with a :class:`RecordWarning`. Errors name the file and line.
"""

from __future__ import annotations

import re
import textwrap
import warnings
import xml.parsers.expat
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bedside.records.errors import RecordError, RecordWarning, read_bounded
from bedside.records.model import (
    Code,
    Condition,
    Encounter,
    Measurement,
    Medication,
    Note,
    Patient,
    Procedure,
    Record,
)
from bedside.records.times import parse_medalign_time

DEFAULT_MAX_BYTES = 512 * 1024 * 1024

_CODE = re.compile(r"^\[(?P<system>[^/\]\s]+)/(?P<code>[^\]\s]+)\]\s*(?P<text>.*)$", re.DOTALL)

EVENT_ELEMENTS = frozenset(
    {
        "person",
        "condition_occurrence",
        "measurement",
        "observation",
        "procedure_occurrence",
        "drug_exposure",
        "note",
        "visit_detail",
    }
)


@dataclass
class _Element:
    tag: str
    attrs: dict[str, str]
    line: int
    children: list[_Element] = field(default_factory=list)
    text_parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.text_parts)


def _parse(data: bytes, path: Path) -> _Element:
    """A small tree with line numbers (ElementTree keeps none), built with expat."""
    parser = xml.parsers.expat.ParserCreate()
    stack: list[_Element] = []
    root: list[_Element] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        element = _Element(tag, attrs, parser.CurrentLineNumber)
        (stack[-1].children if stack else root).append(element)
        stack.append(element)

    def end(tag: str) -> None:
        stack.pop()

    def text(data: str) -> None:
        if stack:
            stack[-1].text_parts.append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    parser.buffer_text = True
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as exc:
        raise RecordError(
            f"not well-formed XML: {xml.parsers.expat.errors.messages[exc.code]}",
            path=path,
            where=f"line {exc.lineno} column {exc.offset + 1}",
        ) from None
    if not root:
        raise RecordError("no XML element found", path=path)
    return root[0]


def read_medalign_xml(path: str | Path, *, patient_id: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Record:
    """Read one MedAlign-style XML file; ``patient_id`` defaults to the file's stem."""
    path = Path(path)
    root = _parse(read_bounded(path, max_bytes), path)
    return _Reader(path, patient_id or path.stem).read(root)


class _Reader:
    def __init__(self, path: Path, patient_id: str) -> None:
        self.path = path
        self.patient = Patient(id=patient_id)
        self.record = Record(patient=self.patient, source=str(path))
        self.skipped: Counter[str] = Counter()
        self.empty_notes = 0
        self.counter = 0

    def error(self, element: _Element, message: str) -> RecordError:
        return RecordError(message, path=self.path, where=f"line {element.line} <{element.tag}>")

    def next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-{self.counter}"

    def time(self, element: _Element, attribute: str = "start", *, required: bool = True) -> datetime | None:
        value = element.attrs.get(attribute)
        if value is None or not value.strip():
            if required:
                raise self.error(element, f"missing the {attribute!r} attribute")
            return None
        try:
            return parse_medalign_time(value)
        except ValueError as exc:
            raise self.error(element, f"{attribute}: {exc}") from None

    def read(self, root: _Element) -> Record:
        if root.tag != "record":
            raise self.error(root, "expected the root element <record>")
        for visit in root.children:
            if visit.tag != "visit":
                self.skipped[visit.tag] += 1
                continue
            self.visit(visit)
        if self.empty_notes:
            warnings.warn(RecordWarning(f"{self.path}: skipped {self.empty_notes} empty note(s)"), stacklevel=3)
        for tag, count in sorted(self.skipped.items()):
            warnings.warn(RecordWarning(f"{self.path}: skipped {count} <{tag}> element(s): not modelled"), stacklevel=3)
        self.record.patient = self.patient
        return self.record

    def visit(self, element: _Element) -> None:
        encounter = Encounter(
            id=self.next_id("visit"),
            text=element.attrs.get("type", "").strip(),
            start=self.time(element),
            end=self.time(element, "end", required=False),
        )
        self.record.encounters.append(encounter)
        for day in element.children:
            if day.tag != "day":
                self.skipped[day.tag] += 1
                continue
            for event in day.children:
                self.event(event, encounter)

    def event(self, element: _Element, encounter: Encounter) -> None:
        tag = element.tag
        if tag not in EVENT_ELEMENTS:
            self.skipped[tag] += 1
            return
        if tag == "person":
            self.person(element)
            return
        if tag == "note":
            text = textwrap.dedent(element.text).strip()
            if not text:
                self.empty_notes += 1
                return
            note_type = element.attrs.get("type", "").strip()
            self.record.notes.append(
                Note(
                    id=self.next_id("note"),
                    type="note" if note_type in ("", "NULL") else note_type,
                    time=self.time(element),
                    text=text,
                    encounter_id=encounter.id,
                )
            )
            return
        when = self.time(element)
        for code_element in element.children:
            if code_element.tag != "code":
                self.skipped[f"{tag}/{code_element.tag}"] += 1
                continue
            codes, text = self.code(code_element)
            if tag == "visit_detail":
                encounter.details.append(f"{codes[0].tag} {text}".strip() if codes else text)
            elif tag == "condition_occurrence":
                self.record.conditions.append(
                    Condition(
                        id=self.next_id("condition"), codes=codes, text=text, onset=when, encounter_id=encounter.id
                    )
                )
            elif tag in ("measurement", "observation"):
                self.record.measurements.append(
                    Measurement(
                        id=self.next_id(tag), codes=codes, text=text, time=when, category=tag, encounter_id=encounter.id
                    )
                )
            elif tag == "procedure_occurrence":
                self.record.procedures.append(
                    Procedure(
                        id=self.next_id("procedure"),
                        codes=codes,
                        text=text,
                        start=when,
                        end=self.time(element, "end", required=False) or when,
                        encounter_id=encounter.id,
                    )
                )
            elif tag == "drug_exposure":
                self.record.medications.append(
                    Medication(
                        id=self.next_id("drug"),
                        codes=codes,
                        text=text,
                        start=when,
                        end=self.time(element, "end", required=False),
                        source="exposure",
                        encounter_id=encounter.id,
                    )
                )

    def code(self, element: _Element) -> tuple[list[Code], str]:
        raw = " ".join(element.text.split())
        match = _CODE.match(raw)
        if match is None:
            if not raw:
                raise self.error(element, "empty <code>")
            return [], raw
        return [Code(system=match["system"], code=match["code"], display=match["text"] or None)], match["text"]

    def person(self, element: _Element) -> None:
        fields: dict[str, str] = {}
        for line in element.text.splitlines():
            key, sep, value = line.partition(":")
            if sep and value.strip():
                fields[key.strip().lower()] = value.strip()
        updates: dict[str, object] = {}
        if "birth" in fields and self.patient.birth_date is None:
            try:
                updates["birth_date"] = parse_medalign_time(fields["birth"]).date()
            except ValueError as exc:
                raise self.error(element, f"Birth: {exc}") from None
        for key, attribute in (("gender", "gender"), ("race", "race"), ("ethnicity", "ethnicity")):
            if key in fields and getattr(self.patient, attribute) is None:
                updates[attribute] = fields[key].lower() if key == "gender" else fields[key]
        if updates:
            self.patient = self.patient.model_copy(update=updates)
