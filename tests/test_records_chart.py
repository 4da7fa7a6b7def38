from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from bedside.records import Allergy, Code, Condition, Encounter, Medication, Patient, Record
from bedside.records.chart import age_band, chart_summary, render_chart_summary

START = datetime(2015, 1, 1, tzinfo=UTC)
TIMES = st.integers(0, 3650).map(lambda days: START + timedelta(days=days, hours=9))


@st.composite
def records(draw: st.DrawFn) -> Record:
    """Records whose every item has a unique name, so its presence in the text can be checked."""
    encounters = [
        Encounter(id=f"e{i}", text=f"visit-{i:03d}x", start=draw(TIMES)) for i in range(draw(st.integers(0, 14)))
    ]
    conditions = []
    for i in range(draw(st.integers(0, 10))):
        onset = draw(TIMES)
        lasted = draw(st.one_of(st.none(), st.integers(1, 2000)))
        abatement = onset + timedelta(days=lasted) if lasted is not None else None
        encounter = draw(st.one_of(st.none(), st.sampled_from(encounters))) if encounters else None
        conditions.append(
            Condition(
                id=f"c{i}",
                text=f"problem-{i:03d}x",
                codes=[Code(system="SNOMED", code=draw(st.sampled_from(["38341003", "266948004", "73438004"])))],
                onset=onset,
                abatement=abatement,
                status=draw(st.sampled_from([None, "active", "resolved", "inactive"])),
                verification=draw(st.sampled_from([None, "confirmed", "refuted", "entered-in-error"])),
                encounter_id=encounter.id if encounter else None,
            )
        )
    medications = [
        Medication(
            id=f"m{i}",
            text=f"drug-{i:03d}x",
            codes=[Code(system="RxNorm", code=str(draw(st.integers(1, 4))))],
            start=draw(TIMES),
            end=draw(st.one_of(st.none(), TIMES)),
            status=draw(st.sampled_from([None, "active", "completed", "cancelled", "entered-in-error", "draft"])),
            setting=draw(st.sampled_from([None, "outpatient", "inpatient"])),
        )
        for i in range(draw(st.integers(0, 10)))
    ]
    allergies = [
        Allergy(
            id=f"a{i}",
            text=f"allergen-{i:03d}x",
            recorded=draw(TIMES),
            status=draw(st.sampled_from([None, "active", "inactive", "resolved"])),
            verification=draw(st.sampled_from([None, "confirmed", "refuted", "entered-in-error"])),
        )
        for i in range(draw(st.integers(0, 4)))
    ]
    return Record(
        patient=Patient(
            id="p", birth_date=date(1960, 6, 15), gender="female", deceased_at=draw(st.one_of(st.none(), TIMES))
        ),
        encounters=encounters,
        conditions=conditions,
        medications=medications,
        allergies=allergies,
    )


@settings(max_examples=200, deadline=None)
@given(records(), TIMES)
def test_nothing_dated_after_the_message_reaches_the_chart(record: Record, at: datetime) -> None:
    text = render_chart_summary(record, at)
    for encounter in record.encounters:
        if encounter.start and encounter.start > at:
            assert encounter.text not in text
    for condition in record.conditions:
        if condition.onset and condition.onset > at:
            assert condition.text not in text
    for medication in record.medications:
        if medication.start and medication.start > at:
            assert medication.text not in text
    summary = chart_summary(record, at)
    assert len(summary.encounters) <= 10
    assert all(e.start <= at for e in summary.encounters)


@settings(max_examples=200, deadline=None)
@given(records(), TIMES, st.booleans())
def test_what_the_source_withdrew_or_ended_never_reaches_the_chart(record: Record, at: datetime, naive: bool) -> None:
    """Never-taken orders, refuted, withdrawn or social conditions, ended allergies: whatever the times."""
    summary = chart_summary(record, at.replace(tzinfo=None) if naive else at)
    shown = [*summary.problems, *summary.medications, *summary.allergies, *summary.social_history]
    for medication in record.medications:
        if medication.status in ("cancelled", "entered-in-error", "draft"):
            assert medication.text not in summary.medications
    for condition in record.conditions:
        if condition.verification in ("refuted", "entered-in-error"):
            assert condition.text not in shown
        social = condition.codes[0].code != "38341003"
        ended_undated = condition.abatement is None and condition.status in ("resolved", "inactive")
        if social or ended_undated:
            assert condition.text not in summary.problems
    for allergy in record.allergies:
        if allergy.verification in ("refuted", "entered-in-error") or allergy.status in ("inactive", "resolved"):
            assert allergy.text not in summary.allergies
    died = record.patient.deceased_at
    assert summary.deceased_at == (died if died is not None and died <= at else None)
    if died is not None and died <= at:
        assert summary.age == record.patient.age_at(died)


def test_the_four_sections_follow_the_papers_rules() -> None:
    at = datetime(2024, 3, 1, 12, 0)
    record = Record(
        patient=Patient(id="p", birth_date=date(1987, 2, 1), gender="female"),
        encounters=[
            Encounter(id="old", text="Annual exam", start=datetime(2021, 5, 1)),
            Encounter(id="new", text="Cough visit", start=datetime(2024, 2, 1)),
            Encounter(id="later", text="Future visit", start=datetime(2024, 6, 1)),
        ],
        conditions=[
            Condition(id="1", text="Hypothyroidism", onset=datetime(2020, 1, 1), encounter_id="old"),
            Condition(id="2", text="Ankle sprain", onset=datetime(2021, 5, 1), abatement=datetime(2021, 7, 1)),
            Condition(id="3", text="Persistent cough", onset=datetime(2024, 2, 1), encounter_id="new"),
        ],
        medications=[
            Medication(id="a", text="LEVOTHYROXINE 75 MCG TABLET", start=datetime(2020, 1, 1), status="active"),
            Medication(id="b", text="AMOXICILLIN 500 MG", start=datetime(2023, 1, 1), end=datetime(2023, 1, 10)),
            Medication(id="c", text="BENZONATATE 100 MG", start=datetime(2024, 2, 1)),
            Medication(id="d", text="CEFAZOLIN 2 G", start=datetime(2024, 2, 1), setting="inpatient"),
            Medication(id="e", text="OLD STATIN", start=datetime(2019, 1, 1), status="completed"),
        ],
    )
    summary = chart_summary(record, at)
    assert summary.age == 37
    assert summary.age_band == "Between 35 - 40"
    assert summary.gender == "Female"
    assert summary.problems == ("Hypothyroidism", "Persistent cough")  # the sprain abated before T
    assert summary.diagnoses_past_year == ("Persistent cough",)
    assert summary.diagnoses_older == ("Hypothyroidism",)
    assert [e.type for e in summary.encounters] == ["Cough visit", "Annual exam"]
    # ended, inpatient, and open-ended but older than the 365-day window are all left out
    assert summary.medications == ("LEVOTHYROXINE 75 MCG TABLET", "BENZONATATE 100 MG")
    text = render_chart_summary(record, at)
    for heading in ("###Demographics###", "###Full Active Problem List###", "###Recent Encounters (Max 10)###"):
        assert heading in text
    assert "###Medications (Outpatient)###" in text
    assert "-BENZONATATE 100 MG" in text


def test_a_reordered_medication_closes_its_earlier_open_order() -> None:
    code = [Code(system="RxNorm", code="314076")]
    record = Record(
        patient=Patient(id="p"),
        medications=[
            Medication(id="1", codes=code, text="lisinopril 10 MG", start=datetime(2023, 6, 1), status="completed"),
            Medication(id="2", codes=code, text="lisinopril 10 MG (renewal)", start=datetime(2024, 1, 5)),
        ],
    )
    assert chart_summary(record, datetime(2024, 2, 1)).medications == ("lisinopril 10 MG (renewal)",)
    assert chart_summary(record, datetime(2023, 12, 1)).medications == ("lisinopril 10 MG",)


def test_age_bands_are_five_years_wide() -> None:
    assert age_band(35) == "Between 35 - 40"
    assert age_band(39) == "Between 35 - 40"
    assert age_band(40) == "Between 40 - 45"
    assert age_band(None) is None
