"""Readers given damaged input fail with a RecordError or read cleanly: never another exception."""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bedside.records import Record, RecordError, RecordWarning, bundle_to_record, read_medalign_xml, read_records_jsonl
from bedside.records.chart import chart_summary, render_chart_summary
from bedside.records.numbered import render_numbered_sentences
from bedside.records.timeline import render_timeline_xml

BUNDLE: dict[str, Any] = {
    "resourceType": "Bundle",
    "entry": [
        {
            "resource": {
                "resourceType": "Patient",
                "id": "p",
                "birthDate": "1970-02-03",
                "gender": "male",
                "deceasedDateTime": "2021-03-04T05:06:07+02:00",
            }
        },
        {
            "resource": {
                "resourceType": "Encounter",
                "id": "e",
                "class": {"code": "AMB"},
                "type": [{"text": "Office visit"}],
                "period": {"start": "2020-01-01T10:00:00+00:00", "end": "2020-01-01T10:30:00+00:00"},
            }
        },
        {
            "resource": {
                "resourceType": "Condition",
                "id": "c",
                "code": {"coding": [{"system": "http://snomed.info/sct", "code": "38341003", "display": "HTN"}]},
                "onsetDateTime": "2019-05-01",
                "encounter": {"reference": "urn:uuid:e"},
                "clinicalStatus": {"coding": [{"code": "active"}]},
                "verificationStatus": {"coding": [{"code": "confirmed"}]},
            }
        },
        {
            "resource": {
                "resourceType": "Condition",
                "id": "s",
                "code": {"coding": [{"system": "http://snomed.info/sct", "code": "266948004", "display": "Record"}]},
                "onsetDateTime": "2019-05-01T08:00:00",
                "abatementDateTime": "2020-01-01T00:00:00-05:00",
                "clinicalStatus": {"coding": [{"code": "resolved"}]},
                "verificationStatus": {"coding": [{"code": "entered-in-error"}]},
            }
        },
        {
            "resource": {
                "resourceType": "AllergyIntolerance",
                "id": "a",
                "code": {"text": "Eggs"},
                "category": ["food"],
                "criticality": "high",
                "recordedDate": "2018-01-01T00:00:00Z",
                "clinicalStatus": {"coding": [{"code": "active"}]},
                "verificationStatus": {"coding": [{"code": "confirmed"}]},
                "reaction": [{"manifestation": [{"text": "Hives"}]}],
            }
        },
        {
            "resource": {
                "resourceType": "Observation",
                "id": "o",
                "code": {"text": "BP"},
                "effectiveDateTime": "2020-01-01T10:05:00Z",
                "component": [{"code": {"text": "systolic"}, "valueQuantity": {"value": 150, "unit": "mm[Hg]"}}],
            }
        },
        {
            "resource": {
                "resourceType": "MedicationRequest",
                "id": "m",
                "status": "cancelled",
                "medicationCodeableConcept": {"text": "lisinopril 10 MG"},
                "authoredOn": "2020-01-01",
                "dosageInstruction": [{"timing": {"repeat": {"frequency": 1, "period": 1, "periodUnit": "d"}}}],
            }
        },
        {
            "resource": {
                "resourceType": "DocumentReference",
                "id": "d",
                "date": "2020-01-01T10:30:00Z",
                "content": [{"attachment": {"contentType": "text/plain", "data": "UGF0aWVudCBpcyB3ZWxsLg=="}}],
            }
        },
    ],
}

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, child in value.items():
            found += paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += paths(child, (*prefix, index))
    return found


ALL_PATHS = paths(BUNDLE)


AT = (datetime(2020, 1, 1, 10, 15), datetime(2020, 1, 1, 10, 15, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC))
"""Times to view a read record at: naive (taken as UTC), aware, and after everything."""


def read_or_error(read: Callable[[], Record]) -> Record | str:
    """The record read, or the text of the RecordError raised; any other exception fails the test.

    A record that reads must also render in every view, as of naive and aware times: a reader that lets a time
    or a status through that a view cannot handle fails here, not in a user's run (issue 37).
    """
    try:
        record = read()
    except RecordError as exc:
        return str(exc)
    views(record)
    return record


def views(record: Record) -> None:
    span = record.span()
    for at in (*AT, *(span or ())):
        render_chart_summary(record, at)
        render_timeline_xml(record, at)
        render_numbered_sentences(record, at)
    render_timeline_xml(record)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(ALL_PATHS), st.booleans(), JUNK), min_size=1, max_size=4))
def test_damaged_fhir_bundles_fail_cleanly(damage: list[tuple[tuple[Any, ...], bool, Any]]) -> None:
    bundle = copy.deepcopy(BUNDLE)
    for path, delete, junk in damage:
        parent: Any = bundle
        try:
            for step in path[:-1]:
                parent = parent[step]
            if delete and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = junk
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed this place
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = read_or_error(lambda: bundle_to_record(bundle, path="fuzz.json"))
    assert isinstance(outcome, Record) or outcome.startswith("fuzz.json")


XML = (
    '<record>\n<visit type="Visit" start="10/08/2018 20:00">\n<day start="10/08/2018">\n'
    "<person>\nBirth: 7/19/1966\nGender: FEMALE\n</person>\n"
    '<measurement start="10/08/2018 08:05 PM">\n'
    "<code>[LOINC/8462-4] Diastolic blood pressure 100</code>\n</measurement>\n"
    '<condition_occurrence start="2018-10-08T22:30:00+02:00">\n<code>[ICD10CM/Z59.0] Homeless</code>\n'
    "</condition_occurrence>\n"
    '<note type="ED note" start="10/08/2018 9:00 PM">Left basal ganglia infarct.</note>\n'
    "</day>\n</visit>\n</record>\n"
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    st.lists(
        st.tuples(st.integers(0, len(XML)), st.integers(0, 8), st.text(alphabet='<>/"=&; abc:0123PM\n', max_size=6)),
        min_size=1,
        max_size=3,
    )
)
def test_damaged_medalign_files_fail_cleanly(tmp_path: Path, edits: list[tuple[int, int, str]]) -> None:
    text = XML
    for at, length, insert in edits:
        text = text[:at] + insert + text[at + length :]
    path = tmp_path / "fuzz.xml"
    path.write_text(text, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = read_or_error(lambda: read_medalign_xml(path))
    assert isinstance(outcome, Record) or outcome.startswith(str(path))


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    st.recursive(
        JUNK,
        lambda children: st.dictionaries(st.sampled_from(["patient", "id", "notes", "text"]), children, max_size=3),
        max_leaves=6,
    )
)
def test_damaged_jsonl_lines_fail_cleanly(tmp_path: Path, value: Any) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_text(json.dumps(value) + "\n", encoding="utf-8")
    outcome = read_or_error(lambda: read_records_jsonl(path)[0])
    assert isinstance(outcome, Record) or "fuzz.jsonl: line 1" in outcome


OFFSETS = st.integers(-14 * 60, 14 * 60).map(lambda minutes: timezone(timedelta(minutes=minutes)))
TIME_TEXT = st.one_of(
    st.sampled_from(
        [
            "2020-01-01T10:00:00Z",
            "2020-01-01T12:00:00+02:00",
            "2020-01-01T10:00:00",
            "2020-01-01",
            "0001-01-01T00:00:00+05:00",
            "9999-12-31T23:00:00-05:00",
            "2020-13-01",
        ]
    ),
    st.datetimes(datetime(1000, 1, 2), datetime(2999, 12, 30), timezones=st.one_of(st.none(), OFFSETS)).map(
        datetime.isoformat
    ),
    st.none(),
    JUNK,
)
STATUS = st.one_of(
    st.sampled_from(
        ["active", "cancelled", "entered-in-error", "draft", "refuted", "resolved", "inactive", "completed", None]
    ),
    JUNK,
)


@st.composite
def jsonl_records(draw: st.DrawFn) -> dict[str, Any]:
    """A bedside JSONL record whose every time and status is drawn: offsets, none, out of range, junk."""
    social = draw(st.sampled_from(["266948004", "38341003"]))
    return {
        "patient": {"id": "p", "birth_date": "1970-01-01", "deceased_at": draw(TIME_TEXT)},
        "encounters": [{"id": "e", "text": "Visit", "start": draw(TIME_TEXT), "end": draw(TIME_TEXT)}],
        "conditions": [
            {
                "id": "c",
                "codes": [{"system": "SNOMED", "code": social}],
                "onset": draw(TIME_TEXT),
                "abatement": draw(TIME_TEXT),
                "status": draw(STATUS),
                "verification": draw(STATUS),
                "encounter_id": "e",
            }
        ],
        "medications": [{"id": "m", "text": "Drug", "start": draw(TIME_TEXT), "status": draw(STATUS)}],
        "allergies": [
            {
                "id": "a",
                "text": "Eggs",
                "recorded": draw(TIME_TEXT),
                "status": draw(STATUS),
                "verification": draw(STATUS),
                "category": draw(STATUS),
            }
        ],
        "notes": [{"id": "n", "time": draw(TIME_TEXT), "text": "Well."}],
    }


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(jsonl_records())
def test_jsonl_times_and_statuses_read_and_render_or_fail_cleanly(tmp_path: Path, value: dict[str, Any]) -> None:
    """Aware, naive, shifted and out-of-range times and any status: a record every view renders, or an error."""
    path = tmp_path / "fuzz.jsonl"
    path.write_text(json.dumps(value) + "\n", encoding="utf-8")
    outcome = read_or_error(lambda: read_records_jsonl(path)[0])
    assert isinstance(outcome, Record) or "fuzz.jsonl: line 1" in outcome
    if isinstance(outcome, Record):
        assert all(t.tzinfo is UTC for t in outcome.times())


def test_the_undamaged_fuzz_bundle_reads_in_full() -> None:
    with pytest.warns(RecordWarning, match="base.json: skipped 1 Condition resource.s. marked entered-in-error"):
        record = bundle_to_record(copy.deepcopy(BUNDLE), path="base.json")
    assert {kind: n for kind, n in record.counts().items() if n} == {
        "encounters": 1,
        "conditions": 1,
        "measurements": 1,
        "medications": 1,
        "allergies": 1,
        "notes": 1,
    }
    assert record.notes[0].text == "Patient is well."
    assert record.medications[0].dose == "1 time(s) per 1 d"
    summary = chart_summary(record, AT[2])
    assert summary.medications == ()  # the one order was cancelled
    assert summary.allergies == ("Eggs (food; reaction: Hives; criticality high)",)
    assert summary.deceased_at == datetime(2021, 3, 4, 3, 6, 7, tzinfo=UTC)
    assert all(t.tzinfo is UTC for t in record.times())


def test_junk_in_the_patient_is_a_record_error() -> None:
    bundle = copy.deepcopy(BUNDLE)
    bundle["entry"][0]["resource"]["gender"] = 5
    with pytest.raises(RecordError, match=r"p\.json: entry\[0\] Patient/p"):
        bundle_to_record(bundle, path="p.json")
