"""The chart summary a clinician sees beside a portal message, as of the time the message was sent.

Four sections, as seed 000 (after Gatto et al., 2025) describes them: demographics (age band and gender), the
full active problem list, recent encounters (at most 10, their diagnoses split into the past year and older),
and active outpatient medications (started before the message, not yet ended). bedside adds what a clinician
reading a chart expects and the paper's example does not show: the patient's allergies (always, "None recorded"
when there are none), a social-history section (only when there is any) and, for a patient who had died by T,
the date of death (their age is their age at death).

It is built from :meth:`Record.as_of`, so nothing dated after the message (and nothing undated) can reach it.
Choices the paper leaves open, made here and tested:

* age bands are five years wide (``Between 35 - 40``), as in the paper's example chart;
* a problem is active when its onset is at or before T and it has not abated by T. A condition the source
  marks refuted or entered-in-error is never one, nor is one it marks inactive, remission or resolved without
  saying when it abated (the record says it ended, only not when). Social circumstances recorded as conditions
  (employment, education, criminal record, housing, ...: :mod:`bedside.records.social`) are listed under social
  history by the same rules, never as problems;
* an encounter's diagnoses are the conditions recorded at it plus its stated reasons (social circumstances,
  refuted and entered-in-error conditions left out); an encounter is in the past year when it started within
  365 days before T;
* a medication is an outpatient one unless the source marks it inpatient (administrations always are); it is
  active when it started at or before T and its stated end, if any, is after T. An order or statement the
  source marks cancelled, entered-in-error, draft, intended or not-taken was never taken and is never active.
  Sources often state no end (Synthea renews chronic prescriptions yearly and only marks the latest "active"),
  so an order without an end stays active until the same medication is ordered again or
  ``medication_window_days`` (365) pass, unless the source still lists it as active. Duplicates by name are
  shown once;
* an allergy is listed when it was recorded by T, unless the source marks it inactive, resolved, refuted or
  entered-in-error; each shows its category, reactions and criticality where the source gives them.

What the chart leaves out: measurements, procedures, immunizations and notes (the paper's chart has none of
them), inpatient medications, and anything undated.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from bedside.prompts import render
from bedside.records.model import (
    ENDED,
    NEVER_TAKEN,
    NOT_A_CONDITION,
    NOT_ACTIVE,
    Allergy,
    Condition,
    Encounter,
    Medication,
    Record,
)
from bedside.records.social import is_social_code, is_social_history
from bedside.records.times import utc

CHART_TEMPLATE = "records/chart_summary.j2"
MAX_ENCOUNTERS = 10


@dataclass(frozen=True)
class RecentEncounter:
    start: datetime
    type: str
    diagnoses: tuple[str, ...]
    past_year: bool


@dataclass(frozen=True)
class ChartSummary:
    at: datetime
    age: int | None
    age_band: str | None
    gender: str | None
    problems: tuple[str, ...]
    encounters: tuple[RecentEncounter, ...]
    medications: tuple[str, ...]
    allergies: tuple[str, ...] = ()
    social_history: tuple[str, ...] = ()
    deceased_at: datetime | None = None
    deceased: bool = False
    """Dead by T: a death date on or before it, or a record that says deceased with no date (FHIR
    ``deceasedBoolean``), which the chart shows as "date not recorded" rather than as a living patient."""
    medications_not_active: tuple[str, ...] = ()
    """Orders the record says are stopped, completed or on hold, with their status and order date."""

    @property
    def diagnoses_past_year(self) -> tuple[str, ...]:
        return _unique(d for e in self.encounters if e.past_year for d in e.diagnoses)

    @property
    def diagnoses_older(self) -> tuple[str, ...]:
        recent = set(self.diagnoses_past_year)
        older = _unique(d for e in self.encounters if not e.past_year for d in e.diagnoses)
        return tuple(d for d in older if d not in recent)


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    """Each item once (case-insensitively), in first-seen order."""
    seen: dict[str, str] = {}
    for item in items:
        seen.setdefault(item.casefold(), item)
    return tuple(seen.values())


def age_band(age: int | None, width: int = 5) -> str | None:
    if age is None or age < 0:
        return None
    low = age // width * width
    return f"Between {low} - {low + width}"


def chart_summary(record: Record, at: datetime, *, medication_window_days: int = 365) -> ChartSummary:
    """What the chart showed at ``at`` (a naive ``at`` is taken to be UTC)."""
    at = utc(at)
    past = record.as_of(at)
    age = past.patient.age_at(at)
    gender = past.patient.gender or past.patient.sex

    ended_undated = {c.id for c in record.conditions if c.abatement is None and (c.status or "").lower() in ENDED}
    current = [
        c
        for c in sorted(past.conditions, key=lambda c: (c.onset or at, c.id))
        if c.abatement is None and c.id not in ended_undated and _is_real(c)
    ]
    problems = _unique(c.label for c in current if not is_social_history(c))
    social_history = _unique(c.label for c in current if is_social_history(c))

    recent = sorted(past.encounters, key=lambda e: (e.start or at, e.id), reverse=True)[:MAX_ENCOUNTERS]
    by_encounter: dict[str, list[str]] = {}
    for condition in sorted(past.conditions, key=lambda c: (c.onset or at, c.id)):
        if condition.encounter_id and _is_real(condition) and not is_social_history(condition):
            by_encounter.setdefault(condition.encounter_id, []).append(condition.label)
    encounters = tuple(
        RecentEncounter(
            start=e.start or at,
            type=e.label if e.codes or e.text else (e.kind or "encounter"),
            diagnoses=_unique([*by_encounter.get(e.id, []), *(_reason_labels(e))]),
            past_year=(e.start or at) >= at - timedelta(days=365),
        )
        for e in recent
    )

    window = timedelta(days=medication_window_days)
    # A stopped/completed/on-hold status is today's. An order renewed after T was, at T, most likely still running
    # (it completed when renewed): read as before. Any other is listed as not active, with its status and date.
    renewed = {_medication_key(m) for m in record.medications if m.start and m.start > at}
    ended = [
        m for m in past.medications if (m.status or "").lower() in NOT_ACTIVE and _medication_key(m) not in renewed
    ]
    taken = [m for m in past.medications if m not in ended]
    medications = _active_medications(taken, at, window)
    return ChartSummary(
        at=at,
        age=age,
        age_band=age_band(age),
        gender=gender.capitalize() if gender else None,
        problems=problems,
        encounters=encounters,
        medications=medications,
        allergies=_unique(
            _allergy_text(a) for a in sorted(past.allergies, key=lambda a: (a.recorded or at, a.id)) if _current(a)
        ),
        social_history=social_history,
        deceased_at=past.patient.deceased_at,
        deceased=past.patient.deceased_at is not None or (record.patient.deceased and not record.patient.deceased_at),
        medications_not_active=_not_active_medications(ended, at, window),
    )


def _is_real(item: Condition | Allergy) -> bool:
    """Not refuted or entered in error by the source."""
    return (item.verification or "").lower() not in NOT_A_CONDITION


def _current(allergy: Allergy) -> bool:
    return _is_real(allergy) and (allergy.status or "").lower() not in ENDED


def _allergy_text(allergy: Allergy) -> str:
    """``Eggs (food; reaction: vomiting; criticality high)``: what the source gives, nothing guessed."""
    details = [allergy.category] if allergy.category else []
    if allergy.reactions:
        details.append(f"reaction: {', '.join(_unique(allergy.reactions))}")
    if allergy.criticality:
        details.append(f"criticality {allergy.criticality}")
    return f"{allergy.label} ({'; '.join(details)})" if details else allergy.label


def _reason_labels(encounter: Encounter) -> list[str]:
    return [code.display or code.tag for code in encounter.reasons if not is_social_code(code)]


def _medication_key(medication: Medication) -> str:
    return medication.codes[0].tag if medication.codes else medication.label.casefold()


def _active_medications(medications: list[Medication], at: datetime, window: timedelta) -> tuple[str, ...]:
    outpatient = sorted(
        (
            m
            for m in medications
            if m.setting != "inpatient"
            and m.source != "administration"
            and m.start
            and (m.status or "").lower() not in NEVER_TAKEN
        ),
        key=lambda m: (m.start, m.id),
    )
    seen: set[str] = set()  # medications ordered again later (by T): their earlier open orders are closed
    active: list[Medication] = []
    for medication in reversed(outpatient):
        assert medication.start is not None
        key = _medication_key(medication)
        superseded = key in seen
        seen.add(key)
        if medication.end is not None:
            if medication.end > at:
                active.append(medication)
        elif not superseded and (medication.status == "active" or at - medication.start <= window):
            active.append(medication)
    return _unique(m.label for m in sorted(active, key=lambda m: (m.start or at, m.id)))


def _not_active_medications(medications: list[Medication], at: datetime, window: timedelta) -> tuple[str, ...]:
    """Outpatient orders within the window (those whose status is stopped, completed or on hold): "label
    (stopped, ordered 2025-03-01)"."""
    return _unique(
        f"{m.label} ({(m.status or '').lower().replace('-', ' ')}, ordered {m.start:%Y-%m-%d})"
        for m in sorted(medications, key=lambda m: (m.start or at, m.id))
        if m.setting != "inpatient"
        and m.source != "administration"
        and m.start
        and (m.status or "").lower() in NOT_ACTIVE
        and at - m.start <= window
    )


def render_chart_summary(
    record: Record, at: datetime, *, template: str | Path = CHART_TEMPLATE, medication_window_days: int = 365
) -> str:
    """The chart summary as text, through an overridable template (``records/chart_summary.j2``)."""
    summary = chart_summary(record, at, medication_window_days=medication_window_days)
    return render(template, chart=summary).strip() + "\n"
