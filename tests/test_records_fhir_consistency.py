"""FHIR bundles that contradict themselves (issue 37): duplicate ids and backwards periods are errors naming the
entry; attachments with no inline data and references outside the bundle are read with a counting warning;
attachments given as an object rather than a list are an error. Nothing of this passes without a word."""

from __future__ import annotations

import base64
import copy
import warnings
from typing import Any

import pytest

from bedside.records import RecordError, bundle_to_record
from bedside.records.errors import RecordWarning

PATIENT = {"resourceType": "Patient", "id": "p", "birthDate": "1970-02-03", "gender": "male"}
ENCOUNTER = {
    "resourceType": "Encounter",
    "id": "e",
    "class": {"code": "AMB"},
    "type": [{"text": "Office visit"}],
    "period": {"start": "2020-01-01T10:00:00+00:00", "end": "2020-01-01T10:30:00+00:00"},
}
CONDITION = {
    "resourceType": "Condition",
    "id": "c",
    "code": {"text": "HTN"},
    "onsetDateTime": "2019-05-01",
    "encounter": {"reference": "Encounter/e"},
}
NOTE: dict[str, Any] = {
    "resourceType": "DocumentReference",
    "id": "n",
    "type": {"text": "Progress note"},
    "date": "2020-01-01T11:00:00Z",
    "content": [{"attachment": {"contentType": "text/plain", "data": base64.b64encode(b"Seen today.").decode()}}],
}


def bundle(*resources: dict[str, Any]) -> dict[str, Any]:
    return {"resourceType": "Bundle", "entry": [{"resource": copy.deepcopy(r)} for r in (PATIENT, *resources)]}


def read_quietly(data: dict[str, Any]) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        record = bundle_to_record(data, path="b.json")
    return record, [str(w.message) for w in caught if issubclass(w.category, RecordWarning)]


def test_a_consistent_bundle_reads_without_warnings() -> None:
    record, said = read_quietly(bundle(ENCOUNTER, CONDITION, NOTE))
    assert said == []
    assert [n.text for n in record.notes] == ["Seen today."]


def test_two_resources_with_one_id_are_an_error_naming_the_entry() -> None:
    with pytest.raises(RecordError, match=r"b.json: entry\[3\]: Condition/c appears twice \(also entry\[2\]\)"):
        bundle_to_record(bundle(ENCOUNTER, CONDITION, CONDITION), path="b.json")
    other = dict(CONDITION, resourceType="Procedure")  # one id across types is allowed: references name the type
    assert read_quietly(bundle(ENCOUNTER, CONDITION, dict(other, code={"text": "x"}, performedDateTime="2020-01-01")))


@pytest.mark.parametrize(
    ("resource", "field"),
    [
        (dict(ENCOUNTER, period={"start": "2020-01-02T00:00:00Z", "end": "2020-01-01T00:00:00Z"}), "period.end"),
        (dict(NOTE, context={"period": {"start": "2020-01-02", "end": "2020-01-01"}}), "context.period.end"),
    ],
)
def test_a_period_that_ends_before_it_starts_is_an_error(resource: dict[str, Any], field: str) -> None:
    with pytest.raises(RecordError, match=rf"field '{field}'.*ends .* before it starts"):
        bundle_to_record(bundle(resource), path="b.json")


def test_notes_whose_attachment_has_no_data_are_counted_in_a_warning() -> None:
    by_url = dict(NOTE, id="n2", content=[{"attachment": {"contentType": "text/plain", "url": "http://x/n2"}}])
    record, said = read_quietly(bundle(ENCOUNTER, NOTE, by_url, dict(by_url, id="n3")))
    assert [n.id for n in record.notes] == ["n"]
    assert said == ["b.json: skipped 2 note(s) whose attachment has no inline data (an attachment given only by url "
                    "is not fetched)"]  # fmt: skip


def test_attachments_given_as_an_object_are_an_error() -> None:
    as_object = dict(NOTE, content={"attachment": NOTE["content"][0]["attachment"]})
    with pytest.raises(RecordError, match=r"DocumentReference/n field 'content'.*expected a list"):
        bundle_to_record(bundle(as_object), path="b.json")


def test_references_to_encounters_outside_the_bundle_are_counted_in_a_warning() -> None:
    elsewhere = dict(CONDITION, encounter={"reference": "Encounter/missing"})
    record, said = read_quietly(bundle(ENCOUNTER, elsewhere, dict(NOTE, context={"encounter": {"reference": "x"}})))
    assert len(record.conditions) == 1  # usable: kept, and said
    assert said == ["b.json: 2 item(s) refer to an encounter that is not in the bundle"]


def test_a_resource_about_another_patient_is_skipped_and_counted() -> None:
    mine = {**CONDITION, "id": "c1", "subject": {"reference": "Patient/p"}}
    theirs = {**CONDITION, "id": "c2", "code": {"text": "Asthma"}, "subject": {"reference": "Patient/OTHER"}}
    by_uuid = {**CONDITION, "id": "c3", "code": {"text": "Gout"}, "subject": {"reference": "urn:uuid:p"}}
    record, said = read_quietly(bundle(ENCOUNTER, mine, theirs, by_uuid))
    assert sorted(c.label for c in record.conditions) == ["Gout", "HTN"]
    assert said == ["b.json: skipped 1 Condition resource(s) about another patient (their subject is not Patient/p)"]
    allergy = {"resourceType": "AllergyIntolerance", "id": "a", "code": {"text": "Peanut"},
               "patient": {"reference": "Patient/OTHER"}}  # fmt: skip
    record, said = read_quietly(bundle(allergy))
    assert record.allergies == []
    assert said == [
        "b.json: skipped 1 AllergyIntolerance resource(s) about another patient (their subject is not Patient/p)"
    ]


def test_the_cli_prints_a_record_warning_as_one_plain_line(tmp_path: Any) -> None:
    import json

    from typer.testing import CliRunner

    from bedside.cli import app

    theirs = {**CONDITION, "subject": {"reference": "Patient/OTHER"}}
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle(ENCOUNTER, theirs)), encoding="utf-8")
    result = CliRunner().invoke(app, ["records", "show", str(path)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "warning: " in result.output
    assert "skipped 1 Condition resource(s) about another patient" in result.output
    assert "RecordWarning" not in result.output
    assert "io.py" not in result.output


@pytest.mark.parametrize(
    ("resource", "field", "value"),
    [
        ({**PATIENT, "gender": "banana"}, "gender", "banana"),
        (
            {
                "resourceType": "MedicationRequest",
                "id": "m",
                "status": "actve",
                "medicationCodeableConcept": {"text": "x"},
            },
            "status",
            "actve",
        ),
    ],
)
def test_a_code_outside_a_required_binding_is_an_error_naming_the_field(
    resource: dict[str, Any], field: str, value: str
) -> None:
    data = (
        bundle(resource)
        if resource["resourceType"] != "Patient"
        else {"resourceType": "Bundle", "entry": [{"resource": resource}]}
    )
    with pytest.raises(
        RecordError, match=rf"field '{field}': '{value}' is not a {resource['resourceType']}\.{field} code"
    ):
        bundle_to_record(data, path="b.json")
