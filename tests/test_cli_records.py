from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import date, datetime
from pathlib import Path

from typer.testing import CliRunner

from bedside.cli import app
from bedside.records import Condition, Encounter, Note, Patient, Record, write_records_jsonl
from page_text import line_with

runner = CliRunner()


def cohort(tmp_path: Path) -> Path:
    records = [
        Record(
            patient=Patient(id="ann", birth_date=date(1980, 5, 1), gender="female"),
            encounters=[Encounter(id="e1", text="Office visit", start=datetime(2024, 1, 10, 9))],
            conditions=[Condition(id="c1", text="Asthma", onset=datetime(2024, 1, 10, 9), encounter_id="e1")],
            notes=[Note(id="n1", time=datetime(2024, 1, 10, 10), text="Wheeze noted. Inhaler refilled.")],
        ),
        Record(patient=Patient(id="bob")),
    ]
    path = tmp_path / "cohort.jsonl"
    write_records_jsonl(records, path)
    return path


def test_show_prints_counts_and_span(tmp_path: Path) -> None:
    result = runner.invoke(app, ["records", "show", str(cohort(tmp_path))])
    assert result.exit_code == 0, result.output
    assert line_with(result.output, "ann ").endswith("2024-01-10 to 2024-01-10")
    assert line_with(result.output, "bob ").endswith("no dated events")
    assert "no dated events" in result.output


def test_render_each_form(tmp_path: Path) -> None:
    path = cohort(tmp_path)
    chart = runner.invoke(
        app, ["records", "render", str(path), "--patient", "ann", "--as", "chart", "--at", "2024-02-01"]
    )
    assert chart.exit_code == 0, chart.output
    assert "Age: Between 40 - 45" in chart.output
    assert "Asthma" in chart.output
    xml = runner.invoke(app, ["records", "render", str(path), "--patient", "ann", "--as", "xml"])
    assert xml.exit_code == 0
    assert ET.fromstring(xml.stdout).find("visit") is not None
    sentences = runner.invoke(app, ["records", "render", str(path), "--patient", "ann", "--as", "sentences"])
    assert "[2] Inhaler refilled." in sentences.output
    fitted = runner.invoke(
        app,
        [
            "records",
            "render",
            str(path),
            "--patient",
            "ann",
            "--budget",
            "400",
            "--reserve",
            "64",
            "--tokenizer",
            "chars:4",
        ],
    )
    assert fitted.exit_code == 0, fitted.output
    assert "kept" in fitted.output
    assert "<record>" in fitted.output


def test_render_errors_are_one_line_and_name_the_problem(tmp_path: Path) -> None:
    path = cohort(tmp_path)
    many = runner.invoke(app, ["records", "render", str(path)])
    assert many.exit_code == 1
    assert "holds 2 records; choose one with --patient" in many.output
    bad_time = runner.invoke(app, ["records", "render", str(path), "--patient", "ann", "--at", "soon"])
    assert bad_time.exit_code == 1
    assert "'soon' is not an ISO 8601" in bad_time.output
    missing = runner.invoke(app, ["records", "show", str(tmp_path / "none.json")])
    assert missing.exit_code == 1
    assert "no such file" in missing.output
    assert "Traceback" not in many.output + bad_time.output + missing.output
    (tmp_path / "empty.jsonl").write_text("")
    empty = runner.invoke(app, ["records", "render", str(tmp_path / "empty.jsonl")])
    assert empty.exit_code == 1
    assert "holds no records" in empty.output
    bracketed = runner.invoke(app, ["records", "render", str(path), "--patient", "[ICD10CM/E11.9]"])
    assert "no record for patient '[ICD10CM/E11.9]'" in bracketed.output  # shown as written, not as markup


def test_show_says_a_patient_died_even_when_the_record_has_no_date(tmp_path: Path) -> None:
    import json

    bundle = {
        "resourceType": "Bundle",
        "entry": [{"resource": {"resourceType": "Patient", "id": "p", "gender": "female", "deceasedBoolean": True}}],
    }
    path = tmp_path / "dead.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    result = runner.invoke(app, ["records", "show", str(path)])
    assert result.exit_code == 0, result.output
    assert "deceased (date not recorded)" in line_with(result.output, "p  female")
    (shown,) = json.loads(runner.invoke(app, ["records", "show", str(path), "--json"]).output)
    assert (shown["deceased"], shown["deceased_at"]) == (True, None)


def test_the_xml_view_says_a_patient_died_and_reads_it_back(tmp_path: Path) -> None:
    """issue 48's audit: the MedAlign XML view (the default) showed a dead patient as alive."""
    import json

    def bundle(patient: dict[str, object]) -> Path:
        resources = [
            {"resourceType": "Patient", "id": "p", "gender": "female", "birthDate": "1950-02-03", **patient},
            {"resourceType": "Condition", "id": "c", "subject": {"reference": "Patient/p"},
             "code": {"text": "heart failure"}, "onsetDateTime": "2020-01-05"},
        ]  # fmt: skip
        path = tmp_path / f"{len(list(tmp_path.iterdir()))}.json"
        path.write_text(json.dumps({"resourceType": "Bundle", "entry": [{"resource": r} for r in resources]}))
        return path

    undated = runner.invoke(app, ["records", "render", str(bundle({"deceasedBoolean": True}))])
    assert undated.exit_code == 0, undated.output
    assert "Deceased: yes (date not recorded)" in undated.output
    dated = runner.invoke(app, ["records", "render", str(bundle({"deceasedDateTime": "2020-01-09"}))])
    assert "Death: 1/9/2020" in dated.output
    alive = runner.invoke(app, ["records", "render", str(bundle({}))])
    assert "Death" not in alive.output
    assert "Deceased" not in alive.output
    xml = tmp_path / "back.xml"
    xml.write_text(dated.stdout, encoding="utf-8")
    (back,) = json.loads(runner.invoke(app, ["records", "show", str(xml), "--json"]).output)
    assert back["deceased"] is True
    assert back["deceased_at"].startswith("2020-01-09")


def test_a_nul_character_in_a_fhir_bundle_is_refused_naming_the_line(tmp_path: Path) -> None:
    # issue 48's audit: a NUL in a FHIR bundle went straight into the rendered chart
    bundle = tmp_path / "nul.json"
    bundle.write_text(
        '{"resourceType": "Bundle", "entry": [\n'
        '{"resource": {"resourceType": "Patient", "id": "p1", "gender": "female"}},\n'
        '{"resource": {"resourceType": "Condition", "id": "c1", "subject": {"reference": "Patient/p1"}, '
        '"code": {"text": "asth\\u0000ma"}}}\n]}\n'
    )
    result = CliRunner().invoke(app, ["records", "render", str(bundle)])
    assert result.exit_code == 1
    assert "nul.json: line 3: holds a NUL character" in " ".join(result.output.split())
