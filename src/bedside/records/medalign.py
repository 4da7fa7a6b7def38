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

import difflib
import re
import textwrap
import warnings
import xml.parsers.expat
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from bedside.records.errors import RecordError, RecordWarning
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


CHUNK_BYTES = 1024 * 1024


EHR_FILE_PREFIX = "EHR_"


def person_id_of_file(path: str | Path) -> str:
    """The person id a record file's name gives: its stem, less the ``EHR_`` of MedAlign's earlier layout.

    That layout (the one its ``ehr-relevance-labels.csv`` belongs to) names a person's file ``EHR_<person_id>.xml``
    while the labels, instructions and the release's own files (``<person_id>.xml``) name the person by id alone;
    taking the stem as it is gave the record the id ``EHR_<id>``, which joined no label.
    """
    stem = Path(path).stem
    person = stem.removeprefix(EHR_FILE_PREFIX)
    return person or stem


def read_medalign_xml(path: str | Path, *, patient_id: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Record:
    """Read one MedAlign-style XML file; ``patient_id`` defaults to the person id its name gives
    (:func:`person_id_of_file`), or, in the event-stream dialect, to the root's ``person_id``.

    The file is streamed (see :class:`_Reader`): memory is the record being built plus one event, not a tree of
    the whole file, so a record several hundred megabytes long reads in about its own size again
    (``bench/reader_memory.py``).
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        handle = path.open("rb")
    except OSError as exc:
        raise RecordError(
            "no such file" if isinstance(exc, FileNotFoundError) else f"cannot read: {exc.strerror}", path=path
        ) from None
    if size > max_bytes:
        handle.close()
        raise RecordError(
            f"file is {size / 1e6:.0f} MB, over the {max_bytes / 1e6:.0f} MB limit "
            "(pass a larger max_bytes if this is intended)",
            path=path,
        )
    with handle:
        return _Reader(path, patient_id or person_id_of_file(path), named=patient_id is not None).stream(handle)


@dataclass
class _Open:
    """An element being read and what it is in the file's layout (``role``)."""

    element: _Element
    role: str


# Roles: the containers of either dialect; "event" is an element read whole when it closes (an event, a person),
# "inside" anything within one (kept, with its text), "ignore" a skipped element and everything in it (dropped).
_CHILD_ROLES = {
    "record": {"visit": "visit"},
    "visit": {"day": "day"},
    "day": dict.fromkeys(EVENT_ELEMENTS, "event"),
    "eventstream": {"encounter": "encounter"},
    "encounter": {"person": "event", "events": "events"},
    "events": {"entry": "entry"},
    "entry": {"event": "event"},
}
_SKIP_PREFIX = {"encounter": "encounter/", "events": "events/", "entry": "entry/"}
_PERSON_FIELDS = ("birth", "gender", "race", "ethnicity", "death", "deceased")
_PERSON_UNMODELLED = ("age in days", "age in years", "age", "payer")
"""Fields of the release's ``<person>`` that bedside leaves unread on purpose (age comes from the birth date)."""
_ITEM_LISTS = ("conditions", "medications", "measurements", "procedures")
_SINGLE_BYTE = frozenset(
    {"iso-8859-1", "latin-1", "latin1", "iso8859-1", "windows-1252", "cp1252", "us-ascii", "ascii"}
)
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xf4][\x80-\xbf]+")
"""A UTF-8 multi-byte letter; in a genuine single-byte file an accented letter is one byte followed by ASCII."""
_DECLARATION = re.compile(rb"""^\s*<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def _declared_encoding(head: bytes) -> str:
    found = _DECLARATION.match(head)
    return found.group(1).decode("ascii").lower() if found else "utf-8"


_SILENT = {"encounter": frozenset({"caresites", "providers"})}


class _Reader:
    """Streams one file through expat: an event element is kept only until it closes, then turned into record
    items and dropped, so memory does not grow with a tree of the whole file (a MedAlign record can be hundreds
    of megabytes; the earlier reader held its bytes and a tree of every element at once). expat rather than
    ``ElementTree.iterparse`` because errors name lines, which ElementTree does not keep."""

    def __init__(self, path: Path, patient_id: str, *, named: bool = False) -> None:
        self.path = path
        self.named = named  # the caller gave the id: an <eventstream person_id> does not replace it
        self.patient = Patient(id=patient_id)
        self.record = Record(patient=self.patient, source=str(path))
        self.skipped: Counter[str] = Counter()
        self.empty_notes = 0
        self.counter = 0
        self.encounter: Encounter | None = None
        self.when: datetime | None = None
        self.stack: list[_Open] = []
        self.root: _Element | None = None
        self.declared = "utf-8"

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
            raise self.error(element, f"{attribute}: {getattr(exc, 'reason', exc)}") from None

    def stream(self, handle: BinaryIO) -> Record:
        parser = xml.parsers.expat.ParserCreate()
        parser.StartElementHandler = lambda tag, attrs: self.start(_Element(tag, attrs, parser.CurrentLineNumber))
        parser.EndElementHandler = lambda tag: self.end()
        parser.CharacterDataHandler = self.text
        parser.buffer_text = True
        try:
            lines_before = 0
            while chunk := handle.read(CHUNK_BYTES):
                if lines_before == 0:
                    self.declared = _declared_encoding(chunk)
                self.check_bytes(chunk, lines_before)
                lines_before += chunk.count(b"\n")
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
        except xml.parsers.expat.ExpatError as exc:
            raise RecordError(
                f"not well-formed XML: {xml.parsers.expat.errors.messages[exc.code]}",
                path=self.path,
                where=f"line {exc.lineno} column {exc.offset + 1}",
            ) from None
        except (LookupError, UnicodeError) as exc:  # an encoding declaration Python has no codec for
            raise RecordError(f"not readable XML: {exc}", path=self.path) from None
        except OSError as exc:
            raise RecordError(f"cannot read: {exc.strerror}", path=self.path) from None
        if self.root is None:
            raise RecordError("no XML element found", path=self.path)
        return self.finish()

    def check_bytes(self, chunk: bytes, lines_before: int) -> None:
        """UTF-8 under a single-byte declaration would be read letter by letter as mojibake ("é" as "Ã©") with no
        error: refused, naming the line, since patient text would be stored garbled."""
        if self.declared not in _SINGLE_BYTE:
            return
        found = _UTF8_SEQUENCE.search(chunk)
        if found:
            line = lines_before + chunk.count(b"\n", 0, found.start()) + 1
            raise RecordError(
                f"declares encoding {self.declared!r} but holds UTF-8 text ({found.group().decode('utf-8')!r}), "
                "which would be read as mojibake: correct the declaration to UTF-8",
                path=self.path,
                where=f"line {line}",
            )

    def text(self, data: str) -> None:
        if self.stack and self.stack[-1].role in ("event", "inside"):
            self.stack[-1].element.text_parts.append(data)

    def start(self, element: _Element) -> None:
        if not self.stack:
            self.root = element
            if element.tag not in ("record", "eventstream"):
                raise self.error(element, "expected the root element <record> (or <eventstream>)")
            if element.tag == "eventstream":
                person_id = element.attrs.get("person_id", "").strip()
                if person_id and not self.named:
                    self.patient = self.patient.model_copy(update={"id": person_id})
            self.stack.append(_Open(element, element.tag))
            return
        parent = self.stack[-1]
        if parent.role in ("event", "inside"):
            parent.element.children.append(element)
            role = "inside"
        elif parent.role == "ignore":
            role = "ignore"
        else:
            role = _CHILD_ROLES[parent.role].get(element.tag, "ignore")
            if role == "ignore" and element.tag not in _SILENT.get(parent.role, ()):
                self.skipped[_SKIP_PREFIX.get(parent.role, "") + element.tag] += 1
        if role == "visit":
            self.encounter = Encounter(
                id=self.next_id("visit"),
                text=element.attrs.get("type", "").strip(),
                start=self.time(element),
                end=self.time(element, "end", required=False),
            )
            self.record.encounters.append(self.encounter)
        elif role == "encounter":
            self.encounter = Encounter(
                id=self.next_id("visit"),
                text=element.attrs.get("type", "").strip() or "Encounter",
                start=self.time(element, "start_timestamp"),
                end=self.time(element, "end_timestamp", required=False),
            )
            self.record.encounters.append(self.encounter)
        elif role == "entry":
            self.when = self.time(element, "timestamp")
        self.stack.append(_Open(element, role))

    def end(self) -> None:
        closed = self.stack.pop()
        if closed.role != "event" or self.encounter is None:
            return
        parent = self.stack[-1].role
        if parent == "day":
            self.event(closed.element, self.encounter)
        elif closed.element.tag == "person":
            self.stream_person(closed.element)
        else:
            self.stream_event(closed.element, self.encounter, self.when)

    def finish(self) -> Record:
        record = self.record
        if not (record.encounters or record.notes or any(getattr(record, name) for name in _ITEM_LISTS)):
            warnings.warn(RecordWarning(f"{self.path}: no visits, notes or events: the record is empty"), stacklevel=4)
        if self.empty_notes:
            warnings.warn(RecordWarning(f"{self.path}: skipped {self.empty_notes} empty note(s)"), stacklevel=4)
        for tag, count in sorted(self.skipped.items()):
            warnings.warn(RecordWarning(f"{self.path}: skipped {count} <{tag}> element(s): not modelled"), stacklevel=4)
        self.record.patient = self.patient
        return self.record

    def stream_person(self, element: _Element) -> None:
        fields = {child.tag.lower().replace("_", ""): " ".join(child.text.split()) for child in element.children}
        updates: dict[str, object] = {}
        birth = fields.get("birthdate")
        if birth and self.patient.birth_date is None:
            try:
                updates["birth_date"] = parse_medalign_time(birth).date()
            except ValueError as exc:
                raise self.error(element, f"birthdate: {getattr(exc, 'reason', exc)}") from None
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

    def event(self, element: _Element, encounter: Encounter) -> None:
        tag = element.tag
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
                if key.strip().lower() not in (*_PERSON_FIELDS, *_PERSON_UNMODELLED):  # "Gendr: F": sex unknown, unsaid
                    near = difflib.get_close_matches(key.strip().lower(), _PERSON_FIELDS, n=1)
                    hint = f" (did you mean {near[0].capitalize()!r}?)" if near else ""
                    warnings.warn(
                        RecordWarning(
                            f"{self.path}: line {element.line} <person>: {key.strip()!r} is not read{hint}; "
                            f"bedside reads {', '.join(f.capitalize() for f in _PERSON_FIELDS)}"
                        ),
                        stacklevel=4,
                    )
        updates: dict[str, object] = {}
        if "birth" in fields and self.patient.birth_date is None:
            try:
                updates["birth_date"] = parse_medalign_time(fields["birth"]).date()
            except ValueError as exc:
                raise self.error(element, f"Birth: {getattr(exc, 'reason', exc)}") from None
        for key, attribute in (("gender", "gender"), ("race", "race"), ("ethnicity", "ethnicity")):
            if key in fields and getattr(self.patient, attribute) is None:
                updates[attribute] = fields[key].lower() if key == "gender" else fields[key]
        if "death" in fields and self.patient.deceased_at is None:  # bedside's own XML view writes these two
            try:
                updates["deceased_at"] = parse_medalign_time(fields["death"])
            except ValueError as exc:
                raise self.error(element, f"Death: {getattr(exc, 'reason', exc)}") from None
            updates["deceased"] = True
        if fields.get("deceased", "").lower().startswith("yes"):
            updates["deceased"] = True
        if updates:
            self.patient = self.patient.model_copy(update=updates)
