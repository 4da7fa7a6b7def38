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

The release's "event stream" dialect is read too: ``<eventstream person_id>`` > ``<encounter start_timestamp
end_timestamp>`` > ``<person>`` (child elements ``birthdate``, ``gender``, ``race``, ``ethnicity``; age and payer
fields are not modelled) and ``<events>`` > ``<entry timestamp="YYYY-MM-DD HH:MM:SS">`` > ``<event type code
name ...>text</event>``. ``code`` is ``VOCAB/CODE``, ``name`` its display; the event text is a note's text or a
value appended to the name. Event types are the element names above (``condition_occurrence``, ``measurement``,
...) or their short forms (``condition``, ``procedure``, ``drug``); others are skipped with a warning, and
``<caresites>``/``<providers>`` are skipped silently (bedside models neither). This dialect is known from readers
of the release, not from first-party documentation; its layout above is what bedside accepts.

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

_STREAM_TYPES = {"condition": "condition_occurrence", "procedure": "procedure_occurrence", "drug": "drug_exposure"}


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
        if root.tag == "eventstream":
            return self.read_eventstream(root)
        if root.tag != "record":
            raise self.error(root, "expected the root element <record> (or <eventstream>)")
        for visit in root.children:
            if visit.tag != "visit":
                self.skipped[visit.tag] += 1
                continue
            self.visit(visit)
        return self.finish()

    def finish(self) -> Record:
        if self.empty_notes:
            warnings.warn(RecordWarning(f"{self.path}: skipped {self.empty_notes} empty note(s)"), stacklevel=4)
        for tag, count in sorted(self.skipped.items()):
            warnings.warn(RecordWarning(f"{self.path}: skipped {count} <{tag}> element(s): not modelled"), stacklevel=4)
        self.record.patient = self.patient
        return self.record

    def read_eventstream(self, root: _Element) -> Record:
        person_id = root.attrs.get("person_id", "").strip()
        if person_id and self.patient.id == self.path.stem:
            self.patient = self.patient.model_copy(update={"id": person_id})
        for encounter in root.children:
            if encounter.tag != "encounter":
                self.skipped[encounter.tag] += 1
                continue
            self.stream_encounter(encounter)
        return self.finish()

    def stream_encounter(self, element: _Element) -> None:
        visit = Encounter(
            id=self.next_id("visit"),
            text=element.attrs.get("type", "").strip() or "Encounter",
            start=self.time(element, "start_timestamp"),
            end=self.time(element, "end_timestamp", required=False),
        )
        self.record.encounters.append(visit)
        for part in element.children:
            if part.tag == "person":
                self.stream_person(part)
            elif part.tag == "events":
                for entry in part.children:
                    if entry.tag != "entry":
                        self.skipped[f"events/{entry.tag}"] += 1
                        continue
                    when = self.time(entry, "timestamp")
                    for event in entry.children:
                        if event.tag != "event":
                            self.skipped[f"entry/{event.tag}"] += 1
                            continue
                        self.stream_event(event, visit, when)
            elif part.tag not in ("caresites", "providers"):
                self.skipped[f"encounter/{part.tag}"] += 1

    def stream_person(self, element: _Element) -> None:
        fields = {child.tag.lower().replace("_", ""): " ".join(child.text.split()) for child in element.children}
        updates: dict[str, object] = {}
        birth = fields.get("birthdate")
        if birth and self.patient.birth_date is None:
            try:
                updates["birth_date"] = parse_medalign_time(birth).date()
            except ValueError as exc:
                raise self.error(element, f"birthdate: {exc}") from None
        for key in ("gender", "race", "ethnicity"):
            if fields.get(key) and getattr(self.patient, key) is None:
                updates[key] = fields[key].lower() if key == "gender" else fields[key]
        if updates:
            self.patient = self.patient.model_copy(update=updates)

    def stream_event(self, element: _Element, encounter: Encounter, when: datetime | None) -> None:
        raw_type = element.attrs.get("type", "").strip().lower()
        kind = _STREAM_TYPES.get(raw_type, raw_type)
        if kind not in EVENT_ELEMENTS or kind == "person":
            self.skipped[f"event type={raw_type or '(none)'}"] += 1
            return
        text = " ".join(element.text.split())
        if kind == "note":
            body = textwrap.dedent(element.text).strip()
            if not body:
                self.empty_notes += 1
                return
            note_type = element.attrs.get("name", "").strip()
            self.record.notes.append(
                Note(
                    id=self.next_id("note"),
                    type=note_type if note_type and note_type != "NULL" else "note",
                    time=when,
                    text=body,
                    encounter_id=encounter.id,
                )
            )
            return
        code_attr = element.attrs.get("code", "").strip()
        name = element.attrs.get("name", "").strip()
        label = " ".join(part for part in (name, text) if part)
        system, sep, code = code_attr.partition("/")
        codes = [Code(system=system, code=code, display=name or None)] if sep and system and code else []
        if not codes and not label:
            raise self.error(element, "an event with neither a code, a name nor text")
        self.add_event(kind, codes, label, encounter, when, when, None)

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
        end = self.time(element, "end", required=False)
        for code_element in element.children:
            if code_element.tag != "code":
                self.skipped[f"{tag}/{code_element.tag}"] += 1
                continue
            codes, text = self.code(code_element)
            self.add_event(tag, codes, text, encounter, when, end or when, end)

    def add_event(
        self,
        kind: str,
        codes: list[Code],
        text: str,
        encounter: Encounter,
        when: datetime | None,
        procedure_end: datetime | None,
        drug_end: datetime | None,
    ) -> None:
        """One coded event of either dialect into the record."""
        if kind == "visit_detail":
            encounter.details.append(f"{codes[0].tag} {text}".strip() if codes else text)
        elif kind == "condition_occurrence":
            self.record.conditions.append(
                Condition(id=self.next_id("condition"), codes=codes, text=text, onset=when, encounter_id=encounter.id)
            )
        elif kind in ("measurement", "observation"):
            self.record.measurements.append(
                Measurement(
                    id=self.next_id(kind), codes=codes, text=text, time=when, category=kind, encounter_id=encounter.id
                )
            )
        elif kind == "procedure_occurrence":
            self.record.procedures.append(
                Procedure(
                    id=self.next_id("procedure"),
                    codes=codes,
                    text=text,
                    start=when,
                    end=procedure_end,
                    encounter_id=encounter.id,
                )
            )
        elif kind == "drug_exposure":
            self.record.medications.append(
                Medication(
                    id=self.next_id("drug"),
                    codes=codes,
                    text=text,
                    start=when,
                    end=drug_end,
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
