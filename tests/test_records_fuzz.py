"""Readers given damaged input fail with a RecordError or read cleanly: never another exception."""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bedside.records import Record, RecordError, bundle_to_record, read_medalign_xml, read_records_jsonl

BUNDLE: dict[str, Any] = {
    "resourceType": "Bundle",
    "entry": [
        {"resource": {"resourceType": "Patient", "id": "p", "birthDate": "1970-02-03", "gender": "male"}},
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


def read_or_error(read: Callable[[], Record]) -> Record | str:
    """The record read, or the text of the RecordError raised; any other exception fails the test."""
    try:
        return read()
    except RecordError as exc:
        return str(exc)


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
    '<note type="ED note" start="10/08/2018 9:00 PM">Left basal ganglia infarct.</note>\n'
    "</day>\n</visit>\n</record>\n"
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
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


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
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


def test_the_undamaged_fuzz_bundle_reads_in_full() -> None:
    record = bundle_to_record(copy.deepcopy(BUNDLE), path="base.json")
    assert {kind: n for kind, n in record.counts().items() if n} == {
        "encounters": 1,
        "conditions": 1,
        "measurements": 1,
        "medications": 1,
        "notes": 1,
    }
    assert record.notes[0].text == "Patient is well."
    assert record.medications[0].dose == "1 time(s) per 1 d"


def test_junk_in_the_patient_is_a_record_error() -> None:
    bundle = copy.deepcopy(BUNDLE)
    bundle["entry"][0]["resource"]["gender"] = 5
    with pytest.raises(RecordError, match=r"p\.json: entry\[0\] Patient/p"):
        bundle_to_record(bundle, path="p.json")
