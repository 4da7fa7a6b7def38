from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bedside.records import Encounter, Measurement, Note, Patient, Record, read_fhir_bundle, read_medalign_xml
from bedside.records.fit import FitError, chunks, fit
from bedside.records.numbered import number_sentences, render_numbered_sentences
from bedside.records.timeline import render_timeline_xml, timeline_blocks
from bedside.text.tokens import CharEstimate, get_tokenizer


def long_record(visits: int = 30, note_words: int = 60) -> Record:
    start = datetime(2020, 1, 1, 9, 0)
    encounters, measurements, notes = [], [], []
    for i in range(visits):
        when = start + timedelta(days=7 * i)
        encounters.append(Encounter(id=f"v{i}", text=f"Clinic visit {i}", start=when, end=when + timedelta(hours=1)))
        measurements.append(
            Measurement(
                id=f"m{i}", text="Heart rate", value=float(60 + i), unit="/min", time=when, encounter_id=f"v{i}"
            )
        )
        body = " ".join(f"word{i}_{j}" for j in range(note_words)) + " & <done>."
        notes.append(
            Note(id=f"n{i}", type="progress note", time=when + timedelta(minutes=30), text=body, encounter_id=f"v{i}")
        )
    return Record(
        patient=Patient(id="p", birth_date=date(1970, 1, 1), gender="male"),
        encounters=encounters,
        measurements=measurements,
        notes=notes,
    )


def test_timeline_is_well_formed_and_ordered(external: Path) -> None:
    record = read_medalign_xml(external / "som-shahlab_medalign" / "data" / "sample-ehr-clean.xml")
    root = ET.fromstring(render_timeline_xml(record))
    visits = root.findall("visit")
    assert [v.get("type") for v in visits] == ["Emergency Room Visit", "Visit", "Neurology Clinic Visit"]
    first_day = visits[0].find("day")
    assert first_day is not None
    assert first_day.find("person") is not None
    codes = [c.text for c in root.iter("code")]
    assert "[LOINC/8462-4] Diastolic blood pressure 100" in codes
    assert len(root.findall(".//note")) == 5


def test_synthea_timeline_parses_and_holds_every_dated_item(external: Path) -> None:
    path = next(p for p in sorted((external / "synthea_fhir").glob("*.json")) if p.name != "MANIFEST.json")
    record = read_fhir_bundle(path)
    root = ET.fromstring(render_timeline_xml(record))
    assert len(root.findall(".//note")) == len(record.notes)
    assert len(root.findall(".//measurement")) == len(record.measurements)


def test_timeline_at_leaves_out_later_events() -> None:
    record = long_record(10)
    text = render_timeline_xml(record, at=datetime(2020, 1, 20))
    assert "Clinic visit 2" in text
    assert "Clinic visit 3" not in text
    ET.fromstring(text)


@pytest.mark.parametrize("budget", [500, 900, 2000])
def test_fit_keeps_the_most_recent_events_within_the_budget(budget: int) -> None:
    tokenizer = CharEstimate(4)
    record = long_record()
    fitted = fit(record, tokenizer, budget, reserve=256)
    assert fitted.tokens <= budget - 256
    root = ET.fromstring(fitted.text)
    kept = [v.get("type") for v in root.findall("visit")]
    assert kept
    assert kept[-1] == "Clinic visit 29"
    numbers = [int(str(t).rsplit(" ", 1)[1]) for t in kept]
    assert numbers == list(range(numbers[0], 30))  # a contiguous run up to the end: oldest dropped first
    assert fitted.events_kept + fitted.events_dropped == len(timeline_blocks(record))


def test_fit_cuts_a_note_too_long_for_the_budget_and_stays_well_formed() -> None:
    record = long_record(visits=1, note_words=2000)
    fitted = fit(record, CharEstimate(4), 500, reserve=256)
    assert fitted.truncated_event
    root = ET.fromstring(fitted.text)
    note = root.find(".//note")
    assert note is not None
    assert note.get("truncated") == "true"
    assert str(note.text).strip().endswith("& <done>.")  # the end of the note is what is kept


def test_fit_refuses_budgets_that_hold_nothing() -> None:
    with pytest.raises(FitError, match="leaves no room"):
        fit(long_record(2), CharEstimate(4), 200, reserve=256)
    with pytest.raises(FitError, match="not even part of the most recent event"):
        fit(long_record(2), CharEstimate(4), 280, reserve=256)


@settings(max_examples=25, deadline=None)
@given(st.integers(450, 3000), st.integers(1, 40), st.integers(5, 800))
def test_chunks_cover_everything_in_order_within_the_budget(budget: int, visits: int, words: int) -> None:
    tokenizer = CharEstimate(4)
    record = long_record(visits, words)
    pieces = chunks(record, tokenizer, budget, reserve=256)
    seen: list[str] = []
    for piece in pieces:
        assert tokenizer.count(piece) <= budget - 256
        root = ET.fromstring(piece)
        seen += [str(v.get("type")) for v in root.findall("visit")]
    assert list(dict.fromkeys(seen)) == [f"Clinic visit {i}" for i in range(visits)]
    text = "".join(str(n.text)[1:-1] for piece in pieces for n in ET.fromstring(piece).iter("note"))
    assert text.count("& <done>.") == visits  # every note arrives whole, possibly across parts


def test_numbered_sentences_are_stable_and_ordered_by_time() -> None:
    record = Record(
        patient=Patient(id="p"),
        notes=[
            Note(id="b", time=datetime(2024, 1, 2), text="Second note. It has two sentences."),
            Note(id="a", time=datetime(2024, 1, 1), text="Dr. Smith saw the pt. on b.i.d. dosing. BP 120/80."),
        ],
    )
    numbered = number_sentences(record.notes)
    assert [(s.id, s.note_id) for s in numbered] == [("1", "a"), ("2", "a"), ("3", "b"), ("4", "b")]
    assert numbered[0].text == "Dr. Smith saw the pt. on b.i.d. dosing."
    assert number_sentences(list(reversed(record.notes))) == numbered
    text = render_numbered_sentences(record)
    assert "[1] Dr. Smith saw the pt. on b.i.d. dosing.\n[2] BP 120/80." in text
    assert render_numbered_sentences(record, at=datetime(2024, 1, 1, 12)).count("[") == 2


def test_tokenizer_specs() -> None:
    assert get_tokenizer("chars:4").count("abcdefgh") == 2
    with pytest.raises(ValueError, match="chars:N"):
        get_tokenizer("chars:many")
    with pytest.raises(ValueError, match="no such tokenizer file"):
        get_tokenizer("/nonexistent/tokenizer.json")


def test_items_without_an_encounter_go_to_the_visit_holding_their_time() -> None:
    record = Record(
        patient=Patient(id="p"),
        encounters=[
            Encounter(id="stay", text="Hospital stay", start=datetime(2024, 1, 1, 8), end=datetime(2024, 1, 5, 12)),
            Encounter(id="clinic", text="Clinic", start=datetime(2024, 1, 2, 9), end=datetime(2024, 1, 2, 10)),
        ],
        measurements=[
            Measurement(id="in-stay", text="Lactate", time=datetime(2024, 1, 3, 6)),
            Measurement(id="in-clinic", text="Weight", time=datetime(2024, 1, 2, 9, 30)),
            Measurement(id="loose", text="Glucose", time=datetime(2024, 2, 1, 7)),
        ],
    )
    root = ET.fromstring(render_timeline_xml(record))
    placed = {str(v.get("type")): [str(c.text) for c in v.iter("code")] for v in root.findall("visit")}
    assert placed["Hospital stay"] == ["Lactate"]
    assert placed["Clinic"] == ["Weight"]
    assert placed["Unattached"] == ["Glucose"]
