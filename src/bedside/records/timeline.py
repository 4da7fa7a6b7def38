"""A record as a MedAlign-style XML timeline: ``<record>`` > ``<visit>`` > ``<day>`` > events.

This is the form MedAlign shows a model a whole EHR in. Events carry ``[VOCAB/CODE] text`` code lines (with the
value and unit appended for measurements, and the source's status in parentheses for an item it says did not
hold: a cancelled or draft order, a refuted condition, a resolved allergy) and notes carry their text. Items
recorded at an encounter go under that visit; items without one go under the visit whose span holds their time,
else under an ``Unattached`` visit for their day. Within a day, events are in time order. Times are written in
one form (``10/08/2018 08:00 PM``, on the UTC clock of :mod:`bedside.records.times`) whatever the source mixed.

The output is built so that :mod:`bedside.records.fit` can cut it between elements and still close it well:
each event is one line, or for notes a fixed block, and every visit and day opens and closes on its own line.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from xml.sax.saxutils import escape, quoteattr

from bedside.records.model import ENDED, NEVER_TAKEN, NOT_A_CONDITION, Encounter, Record
from bedside.records.times import EARLIEST

TIME_FORMAT = "%m/%d/%Y %I:%M %p"


def format_time(when: datetime) -> str:
    return when.strftime(TIME_FORMAT)


@dataclass(order=True)
class _Event:
    time: datetime
    order: int
    xml: str = field(compare=False)


@dataclass
class _Visit:
    start: datetime
    type: str
    end: datetime | None = None
    details: list[str] = field(default_factory=list)
    events: list[_Event] = field(default_factory=list)


def _code_line(label: str, value: str = "") -> str:
    return f"<code>{escape(f'{label} {value}'.strip())}</code>"


_TimelineEvent = tuple[datetime, str, str | None, str, str]


def _flag(status: str | None, marked: frozenset[str]) -> str:
    """``(cancelled)`` after an item whose status says it did not hold (never taken, refuted, ended); else nothing.

    The timeline keeps such items, as the record does, but a model reading it must not take them as current.
    """
    return f"({status})" if status and status.lower() in marked else ""


def timeline_events(record: Record) -> list[_TimelineEvent]:
    """Every dated item as ``(time, element, encounter id, inner XML, extra attributes)``.

    Undated items cannot be placed on a timeline and are left out.
    """
    events: list[_TimelineEvent] = []
    for c in record.conditions:
        if c.onset:
            line = _code_line(c.coded_label, _flag(c.verification, NOT_A_CONDITION))
            events.append((c.onset, "condition_occurrence", c.encounter_id, line, ""))
    for m in record.measurements:
        if m.time:
            element = "observation" if m.category == "observation" else "measurement"
            events.append((m.time, element, m.encounter_id, _code_line(m.coded_label, m.value_text), ""))
    for p in record.procedures:
        if p.start:
            events.append((p.start, "procedure_occurrence", p.encounter_id, _code_line(p.coded_label), ""))
    for d in record.medications:
        if d.start:
            value = " ".join(part for part in (d.dose or "", _flag(d.status, NEVER_TAKEN)) if part)
            events.append((d.start, "drug_exposure", d.encounter_id, _code_line(d.coded_label, value), ""))
    for i in record.immunizations:
        if i.time:
            events.append((i.time, "drug_exposure", i.encounter_id, _code_line(i.coded_label), ""))
    for a in record.allergies:
        if a.recorded:
            reactions = f"(reaction: {', '.join(a.reactions)})" if a.reactions else ""
            flags = (_flag(a.verification, NOT_A_CONDITION), _flag(a.status, ENDED))
            line = _code_line(f"allergy: {a.coded_label}", " ".join(p for p in (reactions, *flags) if p))
            events.append((a.recorded, "observation", a.encounter_id, line, ""))
    for n in record.notes:
        if n.time:
            events.append((n.time, "note", n.encounter_id, escape(n.text.strip()), f" type={quoteattr(n.type)}"))
    return events


def _visits(record: Record) -> list[_Visit]:
    visits: dict[str, _Visit] = {}
    spans: list[tuple[Encounter, _Visit]] = []
    for encounter in sorted(record.encounters, key=lambda e: (e.start or EARLIEST, e.id)):
        if encounter.start is None:
            continue
        opened = _Visit(encounter.start, encounter.label, encounter.end, list(encounter.details))
        visits[encounter.id] = opened
        spans.append((encounter, opened))
    starts = [visit.start for _, visit in spans]
    loose: dict[date, _Visit] = {}
    for order, (when, element, encounter_id, inner, attributes) in enumerate(timeline_events(record)):
        found = visits.get(encounter_id or "") or _containing(spans, starts, when)
        visit = found or loose.setdefault(
            when.date(), _Visit(datetime.combine(when.date(), datetime.min.time(), UTC), "Unattached")
        )
        if element == "note":
            xml = f'<note{attributes} start="{format_time(when)}">\n{inner}\n</note>'
        else:
            xml = f'<{element}{attributes} start="{format_time(when)}">{inner}</{element}>'
        visit.events.append(_Event(when, order, xml))
    return sorted([*(visit for _, visit in spans), *loose.values()], key=lambda v: v.start)


def _containing(spans: list[tuple[Encounter, _Visit]], starts: list[datetime], when: datetime) -> _Visit | None:
    """The latest-starting visit whose span holds ``when`` (a visit without an end lasts its day)."""
    for index in range(bisect_right(starts, when) - 1, -1, -1):
        visit = spans[index][1]
        if when <= (visit.end or visit.start.replace(hour=23, minute=59, second=59)):
            return visit
    return None


def _person(record: Record, day: date) -> str:
    patient = record.patient
    lines = []
    if patient.birth_date:
        lines.append(f"Birth: {patient.birth_date.month}/{patient.birth_date.day}/{patient.birth_date.year}")
    for label, value in (("Race", patient.race), ("Gender", patient.gender), ("Ethnicity", patient.ethnicity)):
        if value:
            lines.append(f"{label}: {value.upper() if label == 'Gender' else value}")
    age = patient.age_at(datetime.combine(day, datetime.min.time(), UTC))
    if age is not None:
        lines.append(f"Age in Years: {age}")
    # Like the birth date, the death date is the person's (a view as of a time has already dropped a later one:
    # Record.as_of); a record that says deceased with no date says so too, never shown as living (issue 48).
    died = patient.deceased_at
    if died is not None:
        lines.append(f"Death: {died.month}/{died.day}/{died.year}")
    elif patient.deceased and died is None:
        lines.append("Deceased: yes (date not recorded)")
    return "<person>\n" + "\n".join(escape(line) for line in lines) + "\n</person>" if lines else ""


@dataclass(frozen=True)
class Block:
    """One event of the timeline with the visit and day it sits in (their opening tags).

    Blocks are the units :mod:`bedside.records.fit` keeps or drops; :func:`assemble` turns any run of them back
    into a well-formed document, opening and closing visits and days as needed.
    """

    visit: str
    day: str
    body: str
    element: str


def timeline_blocks(record: Record, at: datetime | None = None) -> list[Block]:
    """The record (as of ``at`` when given) as blocks, oldest first."""
    if at is not None:
        record = record.as_of(at)
    blocks: list[Block] = []
    for visit in _visits(record):
        if not visit.events and not visit.details:
            continue
        end = f" end={quoteattr(format_time(visit.end))}" if visit.end else ""
        visit_open = f"<visit type={quoteattr(visit.type)} start={quoteattr(format_time(visit.start))}{end}>"
        by_day: dict[date, list[_Event]] = defaultdict(list)
        for event in visit.events:
            by_day[event.time.date()].append(event)
        for index, day in enumerate(sorted(by_day) or [visit.start.date()]):
            day_open = f'<day start="{day.month:02d}/{day.day:02d}/{day.year}">'
            person = _person(record, day)
            if person:
                blocks.append(Block(visit_open, day_open, person, "person"))
            if index == 0:
                blocks.extend(
                    Block(
                        visit_open,
                        day_open,
                        f'<visit_detail start="{format_time(visit.start)}">{_code_line(d)}</visit_detail>',
                        "visit_detail",
                    )
                    for d in visit.details
                )
            blocks.extend(
                Block(visit_open, day_open, event.xml, event.xml[1 : event.xml.index(" ")])
                for event in sorted(by_day.get(day, []))
            )
    return blocks


def assemble(blocks: list[Block]) -> str:
    """Blocks as one well-formed ``<record>`` document."""
    out = ["<record>"]
    visit = day = None
    for block in blocks:
        if block.visit != visit:
            if day is not None:
                out.append("</day>")
            if visit is not None:
                out.append("</visit>")
            out.append(block.visit)
            visit, day = block.visit, None
        if block.day != day:
            if day is not None:
                out.append("</day>")
            out.append(block.day)
            day = block.day
        out.append(block.body)
    if day is not None:
        out.append("</day>")
    if visit is not None:
        out.append("</visit>")
    out.append("</record>")
    return "\n".join(out) + "\n"


def render_timeline_xml(record: Record, at: datetime | None = None) -> str:
    """The record (as of ``at`` when given) as one XML document, oldest visit first."""
    return assemble(timeline_blocks(record, at))
