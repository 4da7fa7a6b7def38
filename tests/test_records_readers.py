from __future__ import annotations

import base64
import json
import warnings
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import pytest

from bedside.records import (
    Record,
    RecordError,
    RecordWarning,
    bundle_to_record,
    read_fhir_bundle,
    read_medalign_xml,
    read_records,
    read_records_jsonl,
    write_records_jsonl,
)


def synthea_files(external: Path) -> list[Path]:
    files = sorted(p for p in (external / "synthea_fhir").glob("*.json") if p.name != "MANIFEST.json")
    assert len(files) == 15
    return files


def expected_counts(bundle: dict[str, object]) -> Counter[str]:
    """Counts computed straight from the bundle's JSON, without bedside's reader."""
    resources = [entry["resource"] for entry in bundle["entry"]]  # type: ignore[attr-defined]
    by_type = Counter(r["resourceType"] for r in resources)
    linked = {
        identifier["value"].removeprefix("urn:uuid:")
        for r in resources
        if r["resourceType"] == "DocumentReference"
        for identifier in r.get("identifier", [])
    }
    documents = sum(
        1
        for r in resources
        if r["resourceType"] == "DocumentReference"
        and any("data" in c.get("attachment", {}) for c in r.get("content", []))
    )
    reports = sum(
        1
        for r in resources
        if r["resourceType"] == "DiagnosticReport" and r.get("presentedForm") and r["id"] not in linked
    )
    return Counter(
        {
            "encounters": by_type["Encounter"],
            "conditions": by_type["Condition"],
            "medications": by_type["MedicationRequest"]
            + by_type["MedicationAdministration"]
            + by_type["MedicationStatement"],
            "measurements": by_type["Observation"],
            "procedures": by_type["Procedure"],
            "allergies": by_type["AllergyIntolerance"],
            "immunizations": by_type["Immunization"],
            "notes": documents + reports,
        }
    )


def test_every_synthea_bundle_reads_with_the_counts_of_its_own_resources(external: Path) -> None:
    for path in synthea_files(external):
        bundle = json.loads(path.read_text(encoding="utf-8"))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nothing in these bundles is skipped unannounced or announced
            record = read_fhir_bundle(path)
        assert +record.counts() == +expected_counts(bundle), path.name
        patient = next(e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "Patient")
        assert str(record.patient.birth_date) == patient["birthDate"]
        assert record.patient.gender == patient["gender"]
        assert record.patient.deceased == ("deceasedDateTime" in patient)


def test_synthea_notes_are_decoded_from_base64_and_counted_once(external: Path) -> None:
    path = synthea_files(external)[0]
    bundle = json.loads(path.read_text(encoding="utf-8"))
    document = next(e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "DocumentReference")
    text = base64.b64decode(document["content"][0]["attachment"]["data"]).decode("utf-8")
    record = read_fhir_bundle(path)
    assert [n.text for n in record.notes].count(text) == 1
    assert all(n.time is not None for n in record.notes)


def test_codes_keep_their_vocabulary(external: Path) -> None:
    record = read_fhir_bundle(synthea_files(external)[0])
    systems = {c.system for item in [*record.conditions, *record.measurements, *record.medications] for c in item.codes}
    assert {"SNOMED", "LOINC", "RxNorm"} <= systems
    assert all(c.tag.startswith("[") and "/" in c.tag for c in record.conditions[0].codes)


def test_medalign_sample_reads_with_the_counts_of_its_own_elements(external: Path) -> None:
    path = external / "som-shahlab_medalign" / "data" / "sample-ehr-clean.xml"
    root = ET.parse(path).getroot()

    def codes_under(*tags: str) -> int:
        return sum(len(element.findall("code")) for tag in tags for element in root.iter(tag))

    record = read_medalign_xml(path)
    assert record.counts() == Counter(
        {
            "encounters": len(root.findall("visit")),
            "conditions": codes_under("condition_occurrence"),
            "medications": codes_under("drug_exposure"),
            "measurements": codes_under("measurement", "observation"),
            "procedures": codes_under("procedure_occurrence"),
            "allergies": 0,
            "immunizations": 0,
            "notes": len(list(root.iter("note"))),
        }
    )
    assert str(record.patient.birth_date) == "1966-07-19"
    assert record.patient.gender == "female"


def test_medalign_times_in_24_hour_and_am_pm_forms_agree(tmp_path: Path) -> None:
    path = tmp_path / "ehr.xml"
    path.write_text(
        '<record><visit type="Visit" start="10/08/2018 20:00"><day start="10/08/2018 20:00">'
        '<condition_occurrence start="10/08/2018 08:00 PM"><code>[ICD10CM/I63.5] Stroke</code></condition_occurrence>'
        '<note type="NULL" start="10/08/2018 9:00 PM">CT negative.</note>'
        "</day></visit></record>"
    )
    record = read_medalign_xml(path)
    assert record.encounters[0].start == record.conditions[0].onset
    assert record.notes[0].time is not None
    assert record.notes[0].time.hour == 21
    assert record.notes[0].type == "note"
    assert record.conditions[0].codes[0].tag == "[ICD10CM/I63.5]"


def test_jsonl_round_trip_is_lossless(external: Path, tmp_path: Path) -> None:
    records = [read_fhir_bundle(p) for p in synthea_files(external)[:3]]
    records.append(read_medalign_xml(external / "som-shahlab_medalign" / "data" / "sample-ehr-clean.xml"))
    path = tmp_path / "cohort.jsonl"
    assert write_records_jsonl(records, path) == 4
    assert read_records_jsonl(path) == records
    assert read_records(path) == records


# ---------------------------------------------------------------- bad input


def minimal_bundle(*resources: Mapping[str, object]) -> dict[str, object]:
    patient = {"resourceType": "Patient", "id": "p1", "birthDate": "1970-01-01", "gender": "female"}
    return {"resourceType": "Bundle", "entry": [{"resource": r} for r in (patient, *resources)]}


def write_json(tmp_path: Path, value: object, name: str = "bundle.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_malformed_json_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"resourceType": "Bundle",\n "entry": [\n oops]}')
    with pytest.raises(RecordError, match=r"broken\.json: line 3 column 2: not valid JSON"):
        read_fhir_bundle(path)


def test_wrong_encoding_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes('{"resourceType": "Bundle", "entry": [], "note": "café"}'.encode("latin-1"))
    with pytest.raises(RecordError, match=r"latin1\.json: not UTF-8"):
        read_fhir_bundle(path)


def test_missing_required_field_names_the_entry_and_field(tmp_path: Path) -> None:
    path = write_json(
        tmp_path, minimal_bundle({"resourceType": "Condition", "id": "c9", "onsetDateTime": "2020-01-01"})
    )
    with pytest.raises(RecordError, match=r"entry\[1\] Condition/c9 field 'code': required field is missing"):
        read_fhir_bundle(path)


def test_a_bad_time_names_its_field(tmp_path: Path) -> None:
    condition = {"resourceType": "Condition", "id": "c1", "code": {"text": "Asthma"}, "onsetDateTime": "last spring"}
    with pytest.raises(RecordError, match=r"field 'onsetDateTime': 'last spring' is not a FHIR date/time"):
        read_fhir_bundle(write_json(tmp_path, minimal_bundle(condition)))


def test_undecodable_note_attachment_names_its_field(tmp_path: Path) -> None:
    document = {
        "resourceType": "DocumentReference",
        "id": "d1",
        "content": [{"attachment": {"contentType": "text/plain", "data": "not base64!!"}}],
    }
    with pytest.raises(RecordError, match=r"content\[0\]\.attachment\.data"):
        read_fhir_bundle(write_json(tmp_path, minimal_bundle(document)))


def test_unknown_resource_types_are_skipped_with_a_warning(tmp_path: Path) -> None:
    path = write_json(tmp_path, minimal_bundle({"resourceType": "Basic", "id": "b1"}, {"resourceType": "Basic"}))
    with pytest.warns(RecordWarning, match=r"skipped 2 Basic resource"):
        record = read_fhir_bundle(path)
    assert record.counts().total() == 0


def test_a_bundle_without_one_patient_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="exactly one Patient"):
        bundle_to_record({"resourceType": "Bundle", "entry": []}, path="x.json")
    with pytest.raises(RecordError, match="expected a FHIR Bundle, found 'Patient'"):
        bundle_to_record({"resourceType": "Patient"}, path="x.json")


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:  # 100 MB, sparse: costs no disk and no time
        handle.truncate(100 * 1024 * 1024)
    with pytest.raises(RecordError, match=r"huge\.json: file is 105 MB, over the 52 MB limit"):
        read_fhir_bundle(path, max_bytes=50 * 1024 * 1024)
    with pytest.raises(RecordError, match=r"huge\.json: line 1: holds a NUL character"):
        read_fhir_bundle(path)  # under the default limit it is read: zero bytes, not text


def test_malformed_xml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "ehr.xml"
    path.write_text('<record>\n<visit type="x" start="01/01/2020 10:00">\n<day>\n</visit></record>')
    with pytest.raises(RecordError, match=r"ehr\.xml: line 4 column \d+: not well-formed XML: mismatched tag"):
        read_medalign_xml(path)


def test_a_bad_medalign_time_names_the_line_and_element(tmp_path: Path) -> None:
    path = tmp_path / "ehr.xml"
    path.write_text(
        '<record>\n<visit type="x" start="01/01/2020 10:00">\n<day>\n'
        '<note start="soon">x</note>\n</day></visit></record>'
    )
    with pytest.raises(RecordError, match=r"line 4 <note>: start: 'soon' is not a time"):
        read_medalign_xml(path)


def test_unknown_medalign_elements_are_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "ehr.xml"
    path.write_text(
        '<record><visit type="x" start="01/01/2020 10:00"><day>'
        '<device_exposure start="01/01/2020 10:00"/></day></visit></record>'
    )
    with pytest.warns(RecordWarning, match="skipped 1 <device_exposure>"):
        read_medalign_xml(path)


def test_bad_jsonl_line_names_the_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "cohort.jsonl"
    good = Record.model_validate({"patient": {"id": "a"}}).model_dump_json()
    path.write_text(good + "\n" + '{"patient": {"id": "b"}, "notes": [{"id": "n1"}]}\n')
    with pytest.raises(RecordError, match=r"cohort\.jsonl: line 2 field 'notes\.0\.text': Field required"):
        read_records_jsonl(path)
    path.write_text(good + "\n{not json\n")
    with pytest.raises(RecordError, match=r"line 2: not valid JSON"):
        read_records_jsonl(path)


def test_empty_notes_are_skipped_with_a_warning(tmp_path: Path) -> None:
    empty = {"resourceType": "DocumentReference", "id": "d0", "content": [{"attachment": {"data": ""}}]}
    with pytest.warns(RecordWarning, match="skipped 1 empty note"):
        record = read_fhir_bundle(write_json(tmp_path, minimal_bundle(empty)))
    assert record.notes == []
    path = tmp_path / "ehr.xml"
    path.write_text(
        '<record><visit type="x" start="01/01/2020 10:00"><day><note start="01/01/2020 10:00">  </note>'
        "</day></visit></record>"
    )
    with pytest.warns(RecordWarning, match="skipped 1 empty note"):
        assert read_medalign_xml(path).notes == []


def _patient_bundle(patient_id: str) -> dict[str, object]:
    bundle = minimal_bundle({"resourceType": "Condition", "id": "c1", "code": {"text": "Asthma"}})
    bundle["entry"][0]["resource"]["id"] = patient_id  # type: ignore[index]
    return bundle


def test_a_folder_of_fhir_bundles_is_one_dataset(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Synthea writes one bundle per patient beside hospital and practitioner bundles and a manifest: the folder
    reads as every patient's record, in name order; the files without a patient are skipped, and said so."""
    folder = tmp_path / "fhir"
    folder.mkdir()
    write_json(folder, _patient_bundle("p2"), "b_patient.json")
    write_json(folder, _patient_bundle("p1"), "a_patient.json")
    write_json(
        folder, {"resourceType": "Bundle", "entry": [{"resource": {"resourceType": "Organization"}}]}, "hosp.json"
    )
    write_json(folder, {"files": ["a_patient.json"]}, "MANIFEST.json")
    (folder / "README.md").write_text("not a record", encoding="utf-8")
    with caplog.at_level("WARNING", logger="bedside.records"):
        records = read_records(folder)
    assert [r.patient.id for r in records] == ["p1", "p2"]
    assert [r.counts()["conditions"] for r in records] == [1, 1]
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "skipped 2 file(s) that hold no patient: MANIFEST.json, hosp.json" in warning

    write_json(folder, _patient_bundle("p1"), "c_again.json")
    with pytest.raises(RecordError, match=r"c_again\.json: patient 'p1' is also in a_patient\.json"):
        read_records(folder)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RecordError, match="no patient record in this folder"):
        read_records(empty)


def test_records_show_reads_a_folder(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bedside.cli import app

    for name in ("p1", "p2", "p3"):
        write_json(tmp_path, _patient_bundle(name), f"{name}.json")
    shown = CliRunner().invoke(app, ["records", "show", str(tmp_path), "--json"])
    assert shown.exit_code == 0, shown.output
    assert len(json.loads(shown.stdout)) == 3


def test_an_empty_medalign_record_is_said_to_be_empty(tmp_path: Path) -> None:
    path = tmp_path / "ehr.xml"
    path.write_text("<record></record>")
    with pytest.warns(RecordWarning, match="no visits, notes or events: the record is empty"):
        read_medalign_xml(path)


def test_a_misspelt_person_field_is_named_not_dropped(tmp_path: Path) -> None:
    path = tmp_path / "ehr.xml"
    path.write_text(
        '<record>\n<visit type="x" start="01/01/2020 10:00">\n<day>\n'
        '<person start="01/01/2020 10:00">Birth: 1950-01-01\nGendr: F\nAge in Years: 70\n</person>\n'
        '<note start="01/01/2020 10:00">seen</note></day></visit></record>'
    )
    with pytest.warns(RecordWarning, match=r"line 4 <person>: 'Gendr' is not read \(did you mean 'Gender'\?\)"):
        record = read_medalign_xml(path)
    assert record.patient.gender is None
    assert str(record.patient.birth_date) == "1950-01-01"
    with warnings.catch_warnings():  # the release's age fields are left unread on purpose, and silently
        warnings.simplefilter("error")
        path.write_text(path.read_text().replace("Gendr", "Gender"))
        assert read_medalign_xml(path).patient.gender == "f"


def test_utf8_under_a_latin1_declaration_is_refused_not_garbled(tmp_path: Path) -> None:
    head = b'<?xml version="1.0" encoding="ISO-8859-1"?>\n<record>\n<visit type="x" start="01/01/2020 10:00">\n<day>\n'
    tail = b"</note>\n</day></visit></record>"
    path = tmp_path / "ehr.xml"
    path.write_bytes(head + b'<note start="01/01/2020 10:00">caf\xc3\xa9 pain' + tail)
    with pytest.raises(RecordError, match=r"line 5: declares encoding 'iso-8859-1' but holds UTF-8 text \('é'\)"):
        read_medalign_xml(path)
    path.write_bytes(head + b'<note start="01/01/2020 10:00">caf\xe9 pain' + tail)  # truly Latin-1: read as such
    assert read_medalign_xml(path).notes[0].text == "café pain"
