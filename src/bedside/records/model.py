"""One typed record of a patient, whatever the source (FHIR R4 bundle, MedAlign XML, bedside JSONL).

Times are timezone-aware ``datetime`` values in UTC, whatever the source: a time that carries an offset is
converted to UTC, and a time that carries none (MedAlign's, a naive value in bedside JSONL or in Python code) is
taken to be UTC, its digits kept as written (:func:`bedside.records.times.utc`). The :data:`Time` type does this on
validation, so every reader, and every record built in code, lands on the one clock, and a time from any source
compares with any other (MedAlign's times are local wall-clock times: comparing them with a FHIR bundle's is
meaningful only to the extent the sources agree on a clock; within one record it always is).

Every clinical item keeps its codes with their vocabulary (``[ICD10CM/E11.9]``, ``[LOINC/8462-4]``,
``[RxNorm/197361]``): models are shown codes in that form, and matching across sources needs the vocabulary.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from bedside.inputs import check_year
from bedside.records.times import utc


def _in_range(value: date) -> date:
    check_year(value)
    return value


def _utc_in_range(value: datetime) -> datetime:
    try:
        value = utc(value)
    except OverflowError:
        raise ValueError(f"{value.isoformat()} cannot be moved to UTC (its year is out of range)") from None
    check_year(value)
    return value


Time = Annotated[datetime, AfterValidator(_utc_in_range)]
"""A time in UTC (naive input taken as UTC) whose year a chart can do arithmetic on (:data:`bedside.inputs.MIN_YEAR`
to ``MAX_YEAR``)."""
Day = Annotated[date, AfterValidator(_in_range)]


NEVER_TAKEN = frozenset({"cancelled", "entered-in-error", "draft", "intended", "not-taken"})
"""Medication statuses (MedicationRequest, MedicationStatement) of an order or statement that was never taken."""
NOT_ACTIVE = frozenset({"stopped", "completed", "on-hold"})
"""Medication statuses of an order that was taken but is not now: listed as such with its date, never as active."""
NOT_A_CONDITION = frozenset({"refuted", "entered-in-error"})
"""Verification statuses of a condition or allergy the patient does not have."""
ENDED = frozenset({"inactive", "remission", "resolved"})
"""Clinical statuses of a condition or allergy that has ended."""


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Code(_Item):
    """A code in a named vocabulary, with the source's display text."""

    system: str
    code: str
    display: str | None = None

    @property
    def tag(self) -> str:
        return f"[{self.system}/{self.code}]"

    def __str__(self) -> str:
        return f"{self.tag} {self.display}" if self.display else self.tag


class _Coded(_Item):
    id: str
    codes: list[Code] = Field(default_factory=list)
    text: str = ""
    encounter_id: str | None = None

    @property
    def label(self) -> str:
        """The text a person reads: the source's text, else the first code's display, else the code."""
        if self.text:
            return self.text
        for code in self.codes:
            if code.display:
                return code.display
        return self.codes[0].tag if self.codes else "(uncoded)"

    @property
    def coded_label(self) -> str:
        """``[VOCAB/CODE] text`` as MedAlign prints events; just the text when there is no code."""
        return f"{self.codes[0].tag} {self.label}" if self.codes else self.label


class Patient(_Item):
    id: str
    birth_date: Day | None = None
    sex: str | None = None
    gender: str | None = None
    race: str | None = None
    ethnicity: str | None = None
    deceased: bool = False
    deceased_at: Time | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Patient:
        """A record that contradicts itself is refused rather than shown: a blank id, a date of death on a
        patient said to be alive (``deceased: false``), or a death before the birth."""
        if not self.id.strip():
            raise ValueError("the patient id is blank")
        if self.deceased_at is not None and not self.deceased:
            if "deceased" in self.model_fields_set:
                raise ValueError("deceased is false but a date of death (deceased_at) is given")
            self.deceased = True  # a date of death says it
        if self.deceased_at is not None and self.birth_date is not None and self.deceased_at.date() < self.birth_date:
            raise ValueError(f"died ({self.deceased_at.date()}) before being born ({self.birth_date})")
        return self

    def age_at(self, when: datetime) -> int | None:
        """Completed years at ``when`` (at death, for a time after it); None without a birth date."""
        if self.birth_date is None:
            return None
        when = utc(when)
        if self.deceased_at is not None and when > self.deceased_at:
            when = self.deceased_at
        born = self.birth_date
        return when.year - born.year - ((when.month, when.day) < (born.month, born.day))


class Encounter(_Coded):
    """A visit. ``kind`` is the encounter class (AMB, EMER, IMP, ...) where the source gives one."""

    kind: str | None = None
    start: Time | None = None
    end: Time | None = None
    location: str | None = None
    reasons: list[Code] = Field(default_factory=list)
    details: list[str] = Field(default_factory=list)


class Condition(_Coded):
    """A problem or diagnosis. ``status`` is the source's clinical status (``active``, ``resolved``, ...) and
    ``verification`` its verification status (``confirmed``, ``refuted``, ...), both *at export time*."""

    onset: Time | None = None
    abatement: Time | None = None
    status: str | None = None
    verification: str | None = None


Setting = Literal["outpatient", "inpatient"]


class Medication(_Coded):
    """A medication order, administration or exposure.

    ``end`` is set only where the source states it; ``status`` is the source's status *at export time*, which
    is why the chart summary does not use it to decide what was active at an earlier time.
    """

    start: Time | None = None
    end: Time | None = None
    dose: str | None = None
    status: str | None = None
    setting: Setting | None = None
    source: Literal["order", "administration", "exposure"] = "order"


class Component(_Item):
    codes: list[Code] = Field(default_factory=list)
    text: str = ""
    value: float | str | None = None
    unit: str | None = None


class Measurement(_Coded):
    """A measurement or observation: a vital sign, a lab value, a survey answer, a social history item."""

    time: Time | None = None
    value: float | str | None = None
    unit: str | None = None
    category: str | None = None
    components: list[Component] = Field(default_factory=list)

    @property
    def value_text(self) -> str:
        if self.components:
            return "; ".join(
                f"{c.text}: {_format_value(c.value)}{' ' + c.unit if c.unit else ''}".rstrip() for c in self.components
            )
        if self.value is None:
            return ""
        return f"{_format_value(self.value)}{' ' + self.unit if self.unit else ''}"


def _format_value(value: float | str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e6 else f"{value:.6g}"
    return value


class Procedure(_Coded):
    start: Time | None = None
    end: Time | None = None


class Allergy(_Coded):
    """An allergy or intolerance. ``category`` is what it is to (``food``, ``medication``, ``environment``,
    ``biologic``); ``status`` and ``verification`` are the source's clinical and verification status."""

    recorded: Time | None = None
    criticality: str | None = None
    reactions: list[str] = Field(default_factory=list)
    category: str | None = None
    status: str | None = None
    verification: str | None = None


class Immunization(_Coded):
    time: Time | None = None


class Note(_Item):
    """A clinical note. ``id`` is stable for a given source, so sentence ids built from it are too."""

    id: str
    type: str = "note"
    time: Time | None = None
    text: str
    encounter_id: str | None = None
    author: str | None = None


KINDS = (
    "encounters",
    "conditions",
    "medications",
    "measurements",
    "procedures",
    "allergies",
    "immunizations",
    "notes",
)


class Record(_Item):
    """Everything bedside knows about one patient. ``source`` says where it was read from."""

    patient: Patient
    encounters: list[Encounter] = Field(default_factory=list)
    conditions: list[Condition] = Field(default_factory=list)
    medications: list[Medication] = Field(default_factory=list)
    measurements: list[Measurement] = Field(default_factory=list)
    procedures: list[Procedure] = Field(default_factory=list)
    allergies: list[Allergy] = Field(default_factory=list)
    immunizations: list[Immunization] = Field(default_factory=list)
    notes: list[Note] = Field(default_factory=list)
    source: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Record:
        """Ids unique within each kind (an encounter's items are found by its id) and visits that end no earlier
        than they start, as FHIR requires of a period."""
        for kind in KINDS:
            seen: set[str] = set()
            for item in getattr(self, kind):
                if item.id in seen:
                    raise ValueError(f"{kind}: the id {item.id!r} is used twice")
                seen.add(item.id)
        for encounter in self.encounters:
            if encounter.start and encounter.end and encounter.end < encounter.start:
                raise ValueError(
                    f"encounters: {encounter.id!r} ends ({encounter.end.isoformat()}) before it starts "
                    f"({encounter.start.isoformat()})"
                )
        return self

    @property
    def id(self) -> str:
        return self.patient.id

    def counts(self) -> Counter[str]:
        return Counter({kind: len(getattr(self, kind)) for kind in KINDS})

    def times(self) -> list[datetime]:
        """Every time stated anywhere in the record (for its span)."""
        found: list[datetime] = []
        for encounter in self.encounters:
            found += [t for t in (encounter.start, encounter.end) if t]
        for condition in self.conditions:
            found += [t for t in (condition.onset, condition.abatement) if t]
        for medication in self.medications:
            found += [t for t in (medication.start, medication.end) if t]
        found += [m.time for m in self.measurements if m.time]
        for procedure in self.procedures:
            found += [t for t in (procedure.start, procedure.end) if t]
        found += [a.recorded for a in self.allergies if a.recorded]
        found += [i.time for i in self.immunizations if i.time]
        found += [n.time for n in self.notes if n.time]
        return found

    def span(self) -> tuple[datetime, datetime] | None:
        times = self.times()
        return (min(times), max(times)) if times else None

    def as_of(self, when: datetime) -> Record:
        """The record as it stood at ``when``: what happened later, and anything undated, is left out.

        Items that started by ``when`` but ended after it are kept with their end cleared (they were ongoing
        then). Undated items are dropped because nothing proves they were known at ``when``; so is a death
        without a date. A naive ``when`` is taken to be UTC.
        """

        when = utc(when)

        def keep(time: datetime | None) -> bool:
            return time is not None and time <= when

        def cut(time: datetime | None) -> datetime | None:
            return time if time is not None and time <= when else None

        deceased_at = cut(self.patient.deceased_at)
        return Record(
            patient=self.patient.model_copy(update={"deceased_at": deceased_at, "deceased": deceased_at is not None}),
            encounters=[e.model_copy(update={"end": cut(e.end)}) for e in self.encounters if keep(e.start)],
            conditions=[c.model_copy(update={"abatement": cut(c.abatement)}) for c in self.conditions if keep(c.onset)],
            medications=[m.model_copy(update={"end": cut(m.end)}) for m in self.medications if keep(m.start)],
            measurements=[m for m in self.measurements if keep(m.time)],
            procedures=[p.model_copy(update={"end": cut(p.end)}) for p in self.procedures if keep(p.start)],
            allergies=[a for a in self.allergies if keep(a.recorded)],
            immunizations=[i for i in self.immunizations if keep(i.time)],
            notes=[n for n in self.notes if keep(n.time)],
            source=self.source,
        )
