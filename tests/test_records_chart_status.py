"""The chart reads what the source says about each item: status, verification, abatement, allergies, death."""

from __future__ import annotations

import copy
import json
import warnings
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from bedside.records import Code, Condition, Patient, Record, RecordWarning, bundle_to_record, read_fhir_bundle
from bedside.records.chart import chart_summary, render_chart_summary
from bedside.records.social import is_social_code
from bedside.records.timeline import render_timeline_xml

SNOMED = "http://snomed.info/sct"
RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"


def _condition(id_: str, code: str, display: str, **fields: Any) -> dict[str, Any]:
    return {
        "resourceType": "Condition",
        "id": id_,
        "clinicalStatus": {"coding": [{"code": fields.pop("clinical", "active")}]},
        "verificationStatus": {"coding": [{"code": fields.pop("verification", "confirmed")}]},
        "code": {"coding": [{"system": SNOMED, "code": code, "display": display}]},
        "onsetDateTime": "2023-01-10T09:00:00Z",
        **fields,
    }


def _order(id_: str, code: str, display: str, status: str) -> dict[str, Any]:
    return {
        "resourceType": "MedicationRequest",
        "id": id_,
        "status": status,
        "intent": "order",
        "medicationCodeableConcept": {"coding": [{"system": RXNORM, "code": code, "display": display}]},
        "authoredOn": "2024-01-05T09:00:00+00:00",
    }


def _allergy(id_: str, display: str, **fields: Any) -> dict[str, Any]:
    return {
        "resourceType": "AllergyIntolerance",
        "id": id_,
        "clinicalStatus": {"coding": [{"code": fields.pop("clinical", "active")}]},
        "verificationStatus": {"coding": [{"code": fields.pop("verification", "confirmed")}]},
        "code": {"coding": [{"system": SNOMED, "code": id_, "display": display}]},
        "recordedDate": "2010-05-03T04:04:01+00:00",
        **fields,
    }


BUNDLE: dict[str, Any] = {
    "resourceType": "Bundle",
    "entry": [
        {"resource": r}
        for r in [
            {"resourceType": "Patient", "id": "p", "birthDate": "1980-02-01", "gender": "female"},
            _condition("hypertension", "59621000", "Essential hypertension (disorder)"),
            _condition(
                "wrong-chart", "44054006", "Diabetes mellitus type 2 (disorder)", verification="entered-in-error"
            ),
            _condition("ruled-out", "195967001", "Asthma (disorder)", verification="refuted"),
            _condition("old-sprain", "44465007", "Sprain of ankle (disorder)", clinical="resolved"),
            _condition("obesity", "162864005", "Body mass index 30+ - obesity (finding)"),
            _condition("record", "266948004", "Has a criminal record (finding)"),
            _condition("job", "160903007", "Full-time employment (finding)"),
            _order("lisinopril", "314076", "lisinopril 10 MG Oral Tablet", "active"),
            _order("cancelled", "197361", "amlodipine 5 MG Oral Tablet", "cancelled"),
            _order("mistake", "860975", "metformin 500 MG Oral Tablet", "entered-in-error"),
            _order("planned", "310798", "hydrochlorothiazide 25 MG Oral Tablet", "draft"),
            _allergy(
                "102263004",
                "Eggs (edible) (substance)",
                category=["food"],
                criticality="high",
                reaction=[{"manifestation": [{"text": "Vomiting"}, {"text": "Hives"}]}],
            ),
            _allergy("91936005", "Penicillin (substance)", category=["medication"], verification="refuted"),
            _allergy("256277009", "Grass pollen (substance)", clinical="resolved"),
            _allergy("762952008", "Peanut (substance)", verification="entered-in-error"),
        ]
    ],
}
AT = datetime(2024, 3, 1, 12, tzinfo=UTC)


def _read(bundle: dict[str, Any]) -> Record:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecordWarning)
        return bundle_to_record(copy.deepcopy(bundle), path="status.json")


def test_cancelled_draft_and_entered_in_error_orders_are_not_active_medications() -> None:
    summary = chart_summary(_read(BUNDLE), AT)
    assert summary.medications == ("lisinopril 10 MG Oral Tablet",)


def test_withdrawn_refuted_and_resolved_conditions_are_not_active_problems() -> None:
    summary = chart_summary(_read(BUNDLE), AT)
    assert summary.problems == ("Essential hypertension (disorder)", "Body mass index 30+ - obesity (finding)")


def test_social_findings_are_social_history_never_problems() -> None:
    summary = chart_summary(_read(BUNDLE), AT)
    assert summary.social_history == ("Full-time employment (finding)", "Has a criminal record (finding)")
    assert not set(summary.social_history) & set(summary.problems)
    text = render_chart_summary(_read(BUNDLE), AT)
    problems = text.split("###Full Active Problem List###:\n")[1].split("\n")[0]
    assert "criminal" not in problems
    assert "employment" not in problems
    assert "###Social History###\nFull-time employment (finding) - Has a criminal record (finding)\n" in text


def test_allergies_reach_the_chart_with_category_reactions_and_criticality() -> None:
    summary = chart_summary(_read(BUNDLE), AT)
    # refuted, resolved and entered-in-error allergies are left out
    assert summary.allergies == ("Eggs (edible) (substance) (food; reaction: Vomiting, Hives; criticality high)",)
    text = render_chart_summary(_read(BUNDLE), AT)
    assert "###Allergies###\nEggs (edible) (substance) (food; reaction: Vomiting, Hives; criticality high)\n" in text


def test_a_chart_without_allergies_says_none_recorded_and_has_no_social_heading() -> None:
    text = render_chart_summary(Record(patient=Patient(id="p")), AT)
    assert "###Allergies###\nNone recorded\n" in text
    assert "Social History" not in text


def test_entered_in_error_resources_are_skipped_with_a_warning() -> None:
    with pytest.warns(RecordWarning) as caught:
        record = bundle_to_record(copy.deepcopy(BUNDLE), path="status.json")
    messages = [str(w.message) for w in caught]
    assert "status.json: skipped 1 AllergyIntolerance resource(s) marked entered-in-error" in messages
    assert "status.json: skipped 1 Condition resource(s) marked entered-in-error" in messages
    assert "status.json: skipped 1 MedicationRequest resource(s) marked entered-in-error" in messages
    ids = {item.id for kind in ("conditions", "medications", "allergies") for item in getattr(record, kind)}
    assert not ids & {"wrong-chart", "mistake", "762952008"}
    assert {"cancelled", "ruled-out", "91936005"} <= ids  # other statuses are kept, for the views to read
    assert next(c for c in record.conditions if c.id == "ruled-out").verification == "refuted"


def test_the_timeline_keeps_items_that_did_not_hold_but_says_so() -> None:
    xml = render_timeline_xml(_read(BUNDLE))
    assert "amlodipine 5 MG Oral Tablet (cancelled)</code>" in xml
    assert "hydrochlorothiazide 25 MG Oral Tablet (draft)</code>" in xml
    assert "Asthma (disorder) (refuted)</code>" in xml
    assert "Penicillin (substance) (refuted)</code>" in xml
    assert "Grass pollen (substance) (resolved)</code>" in xml
    assert "lisinopril 10 MG Oral Tablet</code>" in xml
    assert "Essential hypertension (disorder)</code>" in xml
    assert "metformin" not in xml  # entered in error: dropped when read


def test_a_withdrawn_note_does_not_come_back_through_its_diagnostic_report_copy() -> None:
    text = "UGF0aWVudCBpcyB3ZWxsLg=="  # "Patient is well."
    bundle = copy.deepcopy(BUNDLE)
    bundle["entry"] += [
        {
            "resource": {
                "resourceType": "DocumentReference",
                "id": "doc",
                "status": "entered-in-error",
                "identifier": [{"value": "urn:uuid:report"}],
                "date": "2024-01-05T09:00:00Z",
                "content": [{"attachment": {"contentType": "text/plain", "data": text}}],
            }
        },
        {
            "resource": {
                "resourceType": "DiagnosticReport",
                "id": "report",
                "code": {"text": "History and physical note"},
                "effectiveDateTime": "2024-01-05T09:00:00Z",
                "presentedForm": [{"contentType": "text/plain", "data": text}],
            }
        },
    ]
    assert _read(bundle).notes == []


def test_a_condition_resolved_by_a_stated_date_was_active_before_it() -> None:
    bundle = copy.deepcopy(BUNDLE)
    bundle["entry"].append(
        {
            "resource": _condition(
                "flu", "6142004", "Influenza (disorder)", clinical="resolved", abatementDateTime="2024-02-20"
            )
        }
    )
    record = _read(bundle)
    assert "Influenza (disorder)" in chart_summary(record, datetime(2024, 2, 1)).problems
    assert "Influenza (disorder)" not in chart_summary(record, AT).problems


def test_a_deceased_patient_is_shown_deceased_with_their_age_at_death() -> None:
    record = Record(
        patient=Patient(
            id="p", birth_date=date(1980, 6, 1), gender="male", deceased=True, deceased_at=datetime(2024, 5, 3, 13)
        )
    )
    after = chart_summary(record, datetime(2031, 1, 1))
    assert after.deceased_at == datetime(2024, 5, 3, 13, tzinfo=UTC)
    assert after.age == 43
    assert after.age_band == "Between 40 - 45"
    assert "Gender: Male\nDeceased: 2024-05-03\n###Full Active Problem List###" in render_chart_summary(
        record, datetime(2031, 1, 1)
    )
    before = chart_summary(record, datetime(2024, 1, 1))
    assert before.deceased_at is None
    assert before.age == 43
    assert "Deceased" not in render_chart_summary(record, datetime(2024, 1, 1))


def test_fhir_deceased_date_time_reaches_the_chart() -> None:
    bundle = copy.deepcopy(BUNDLE)
    bundle["entry"][0]["resource"]["deceasedDateTime"] = "2024-02-10T13:57:29+02:00"
    text = render_chart_summary(_read(bundle), AT)
    assert "Deceased: 2024-02-10\n" in text
    assert "Age: Between 40 - 45" in text  # 44 at death: born 1980-02-01


@pytest.mark.parametrize(
    ("system", "code", "social"),
    [
        ("SNOMED", "266948004", True),  # Has a criminal record (finding)
        ("SNOMED", "73438004", True),  # Unemployed (finding)
        ("SNOMED", "162864005", False),  # Body mass index 30+ - obesity (finding): a clinical finding
        ("SNOMED", "714628002", False),  # Prediabetes (finding)
        ("SNOMED", "361055000", False),  # Misuses drugs (finding): a treated behaviour
        ("ICD10CM", "Z59.0", True),  # Homelessness
        ("ICD10CM", "Z560", True),  # Unemployment, written without the dot
        ("ICD10CM", "Z65.3", True),
        ("ICD10CM", "Z66", False),  # Do not resuscitate: not social history
        ("ICD10CM", "Z87.891", False),  # history of nicotine dependence
        ("ICD10CM", "E11.9", False),
        ("RxNorm", "266948004", False),  # the number alone means nothing outside SNOMED
    ],
)
def test_the_social_history_rule_is_by_code(system: str, code: str, social: bool) -> None:
    assert is_social_code(Code(system=system, code=code)) is social


def test_medalign_icd10_social_codes_are_social_history() -> None:
    record = Record(
        patient=Patient(id="p"),
        conditions=[
            Condition(id="1", codes=[Code(system="ICD10CM", code="Z59.0")], text="Homelessness", onset=AT),
            Condition(id="2", codes=[Code(system="ICD10CM", code="I10")], text="Hypertension", onset=AT),
        ],
    )
    summary = chart_summary(record, AT)
    assert summary.problems == ("Hypertension",)
    assert summary.social_history == ("Homelessness",)


def test_synthea_charts_read_as_a_clinician_expects(external: Path) -> None:
    """On MITRE's sample bundles: allergies shown, social findings apart, the deceased patient deceased."""
    folder = external / "synthea_fhir"
    manifest_free = sorted(p for p in folder.glob("*.json") if p.name != "MANIFEST.json")
    allergic = next(p for p in manifest_free if p.name.startswith("Brock407"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecordWarning)
        record = read_fhir_bundle(allergic)
    span = record.span()
    assert span is not None
    summary = chart_summary(record, span[1])
    assert len(summary.allergies) == 7
    assert any(a.startswith("Eggs (edible) (substance) (food") for a in summary.allergies)
    for path in manifest_free:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RecordWarning)
            record = read_fhir_bundle(path)
        span = record.span()
        assert span is not None
        summary = chart_summary(record, span[1])
        bundle = json.loads(path.read_text(encoding="utf-8"))
        social = {
            c["display"]
            for e in bundle["entry"]
            if e["resource"]["resourceType"] == "Condition"
            for c in e["resource"]["code"]["coding"]
            if c["display"].startswith(("Full-time employment", "Has a criminal record", "Received higher education"))
        }
        assert not social & set(summary.problems), path.name
        patient = next(e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "Patient")
        if "deceasedDateTime" in patient:
            late = render_chart_summary(record, datetime(2100, 1, 1))
            assert f"Deceased: {patient['deceasedDateTime'][:10]}\n" in late, path.name


def test_stopped_completed_and_on_hold_orders_are_listed_as_such_never_as_active() -> None:
    bundle = copy.deepcopy(BUNDLE)
    bundle["entry"] += [
        {"resource": _order("stopped", "197884", "atorvastatin 20 MG Oral Tablet", "stopped")},
        {"resource": _order("done", "308182", "amoxicillin 500 MG Oral Capsule", "completed")},
        {"resource": _order("paused", "855332", "warfarin 5 MG Oral Tablet", "on-hold")},
    ]
    summary = chart_summary(_read(bundle), AT)
    assert summary.medications == ("lisinopril 10 MG Oral Tablet",)
    assert summary.medications_not_active == (  # by order date, then id
        "amoxicillin 500 MG Oral Capsule (completed, ordered 2024-01-05)",
        "warfarin 5 MG Oral Tablet (on hold, ordered 2024-01-05)",
        "atorvastatin 20 MG Oral Tablet (stopped, ordered 2024-01-05)",
    )
    text = render_chart_summary(_read(bundle), AT)
    active, _, rest = text.partition("Stopped, Completed or On Hold:\n")
    assert "warfarin" not in active
    assert rest.splitlines() == [
        "-amoxicillin 500 MG Oral Capsule (completed, ordered 2024-01-05)",
        "-warfarin 5 MG Oral Tablet (on hold, ordered 2024-01-05)",
        "-atorvastatin 20 MG Oral Tablet (stopped, ordered 2024-01-05)",
    ]
    assert "Stopped, Completed or On Hold" not in render_chart_summary(_read(BUNDLE), AT)


def test_records_render_lists_stopped_orders_apart_through_the_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bedside.cli import app

    bundle = copy.deepcopy(BUNDLE)
    bundle["entry"] += [
        {"resource": _order("stopped", "197884", "atorvastatin 20 MG Oral Tablet", "stopped")},
        {"resource": _order("paused", "855332", "warfarin 5 MG Oral Tablet", "on-hold")},
    ]
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    result = CliRunner().invoke(app, ["records", "render", str(path), "--as", "chart", "--at", AT.isoformat()])
    assert result.exit_code == 0, result.output
    active, _, rest = result.stdout.partition("Stopped, Completed or On Hold:")
    assert "warfarin" not in active
    assert "atorvastatin" not in active
    assert "-warfarin 5 MG Oral Tablet (on hold, ordered 2024-01-05)" in rest
    assert "-atorvastatin 20 MG Oral Tablet (stopped, ordered 2024-01-05)" in rest


def test_a_fhir_patient_deceased_with_no_date_is_never_shown_alive() -> None:
    bundle = copy.deepcopy(BUNDLE)
    bundle["entry"][0]["resource"]["deceasedBoolean"] = True
    summary = chart_summary(_read(bundle), AT)
    assert (summary.deceased, summary.deceased_at) == (True, None)
    assert "Gender: Female\nDeceased: date not recorded\n###Full Active Problem List###" in render_chart_summary(
        _read(bundle), AT
    )
    assert not chart_summary(_read(BUNDLE), AT).deceased


def test_a_birth_date_that_is_not_text_is_refused_naming_the_field() -> None:
    bundle = copy.deepcopy(BUNDLE)
    bundle["entry"][0]["resource"]["birthDate"] = 123
    with pytest.raises(
        ValueError, match=r"field 'birthDate': expected a date as text \(YYYY-MM-DD\), not a number 123"
    ):
        _read(bundle)


def test_records_jsonl_refuses_a_repeated_patient_and_a_nul_character(tmp_path: Path) -> None:
    from bedside.records import read_records

    twice = tmp_path / "twice.jsonl"
    twice.write_text('{"patient": {"id": "p1"}}\n{"patient": {"id": "p1"}}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2: patient 'p1' is also on line 1"):
        read_records(twice)
    nul = tmp_path / "nul.jsonl"
    nul.write_text('{"patient": {"id": "p\\u0000x"}}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 1: holds a NUL character"):
        read_records(nul)
