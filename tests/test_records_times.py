"""One time model for every reader: aware UTC inside; a time without an offset is taken to be UTC.

Each reader with times is fed a time with ``Z``, one with another offset and one with none, and everything
downstream (span, chart, XML timeline, numbered sentences, the ``records`` commands, drafting cases) is then
asked for the record as of a naive and an aware time. Before one model, a ``Z`` in bedside JSONL crashed
``records show`` with "can't compare offset-naive and offset-aware datetimes".
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.records import Encounter, Note, Patient, Record, bundle_to_record, read_records, write_records_jsonl
from bedside.records.chart import render_chart_summary
from bedside.records.numbered import render_numbered_sentences
from bedside.records.timeline import render_timeline_xml
from bedside.records.times import parse_fhir_time, parse_medalign_time, parse_user_time
from bedside.tasks.drafting.readers import read_cases

TEN_UTC = datetime(2020, 1, 1, 10, tzinfo=UTC)
WRITTEN = ["2020-01-01T10:00:00Z", "2020-01-01T12:00:00+02:00", "2020-01-01T10:00:00"]
"""The same instant three ways: UTC marked ``Z``, another offset, and no offset (taken as UTC)."""
AT = [
    datetime(2020, 6, 1),
    datetime(2020, 6, 1, tzinfo=UTC),
    datetime(2020, 6, 1, 2, tzinfo=timezone(timedelta(hours=2))),
]


def _renders(record: Record) -> None:
    """Every view of the record, as of naive and aware times, without a clock mismatch anywhere."""
    span = record.span()
    assert span is not None
    assert all(t.tzinfo is UTC for t in record.times())
    for at in [*AT, span[1]]:
        chart = render_chart_summary(record, at)
        assert "2020-01-01" in chart
        assert "10:00 AM" in render_timeline_xml(record, at)
        assert "(2020-01-01 10:00)" in render_numbered_sentences(record, at)
    assert "10:00 AM" in render_timeline_xml(record)


@pytest.mark.parametrize("written", WRITTEN)
def test_parsers_put_every_form_on_the_utc_clock(written: str) -> None:
    assert parse_fhir_time(written) == TEN_UTC
    assert parse_user_time(written) == TEN_UTC
    assert parse_medalign_time(written) == TEN_UTC
    assert parse_fhir_time(written).tzinfo is UTC


def test_naive_and_partial_forms_are_utc() -> None:
    assert parse_medalign_time("01/01/2020 10:00 AM") == TEN_UTC
    assert parse_fhir_time("2020-01") == datetime(2020, 1, 1, tzinfo=UTC)
    assert parse_user_time("2020-01-01") == datetime(2020, 1, 1, tzinfo=UTC)


def test_records_built_in_code_land_on_the_same_clock() -> None:
    naive = Encounter(id="e", start=datetime(2020, 1, 1, 10))
    shifted = Encounter(id="e", start=datetime(2020, 1, 1, 5, tzinfo=timezone(timedelta(hours=-5))))
    assert naive.start == shifted.start == TEN_UTC
    assert naive.start is not None
    assert naive.start.tzinfo is UTC


@pytest.mark.parametrize("written", WRITTEN)
def test_fhir_times_with_and_without_offsets(written: str) -> None:
    bundle = {
        "resourceType": "Bundle",
        "entry": [
            {"resource": {"resourceType": "Patient", "id": "p", "birthDate": "1970-01-01"}},
            {
                "resource": {
                    "resourceType": "Encounter",
                    "id": "e",
                    "type": [{"text": "Office visit"}],
                    "period": {"start": written},
                }
            },
            {
                "resource": {
                    "resourceType": "Condition",
                    "id": "c",
                    "code": {"text": "Asthma"},
                    "onsetDateTime": "2019-06-01",
                    "encounter": {"reference": "urn:uuid:e"},
                }
            },
            {
                "resource": {
                    "resourceType": "DocumentReference",
                    "id": "d",
                    "date": written,
                    "content": [{"attachment": {"contentType": "text/plain", "data": "V2hlZXplLg=="}}],
                }
            },
        ],
    }
    record = bundle_to_record(bundle, path="t.json")
    assert record.encounters[0].start == TEN_UTC
    _renders(record)


MEDALIGN = (
    '<record><visit type="Office visit" start="{start}"><day start="01/01/2020">'
    '<condition_occurrence start="{start}"><code>[ICD10CM/J45] Asthma</code></condition_occurrence>'
    '<note type="NULL" start="{start}">Wheeze.</note></day></visit></record>'
)
EVENTSTREAM = (
    '<eventstream person_id="p"><encounter start_timestamp="{start}" type="Office visit"><events>'
    '<entry timestamp="{start}"><event type="condition" code="ICD10CM/J45" name="Asthma"/>'
    '<event type="note" name="note">Wheeze.</event></entry></events></encounter></eventstream>'
)


@pytest.mark.parametrize("dialect", [MEDALIGN, EVENTSTREAM], ids=["record", "eventstream"])
@pytest.mark.parametrize("written", [*WRITTEN, "01/01/2020 10:00", "01/01/2020 10:00 AM", "2020-01-01 10:00:00"])
def test_medalign_times_with_and_without_offsets(tmp_path: Path, dialect: str, written: str) -> None:
    path = tmp_path / "ehr.xml"
    path.write_text(dialect.format(start=written), encoding="utf-8")
    (record,) = read_records(path)
    assert record.encounters[0].start == TEN_UTC
    assert record.conditions[0].onset == TEN_UTC
    _renders(record)


def _jsonl(tmp_path: Path, written: str) -> Path:
    line = {
        "patient": {"id": "p", "birth_date": "1970-01-01"},
        "encounters": [{"id": "e", "text": "Office visit", "start": written}],
        "conditions": [{"id": "c", "text": "Asthma", "onset": "2019-06-01T00:00:00", "encounter_id": "e"}],
        "notes": [{"id": "n", "time": written, "text": "Wheeze."}],
    }
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("written", WRITTEN)
def test_bedside_jsonl_times_with_and_without_offsets(tmp_path: Path, written: str) -> None:
    (record,) = read_records(_jsonl(tmp_path, written))
    assert record.encounters[0].start == TEN_UTC
    _renders(record)
    again = tmp_path / "again.jsonl"
    write_records_jsonl([record], again)
    assert '"start":"2020-01-01T10:00:00Z"' in again.read_text(encoding="utf-8")
    assert read_records(again) == [record]


@pytest.mark.parametrize(
    ("written", "at"),
    [
        (WRITTEN[0], None),
        (WRITTEN[0], "2020-06-01"),
        (WRITTEN[1], "2020-06-01T09:00+05:00"),
        (WRITTEN[2], "2020-06-01T00:00Z"),
    ],
)
def test_records_commands_with_offset_times(tmp_path: Path, written: str, at: str | None) -> None:
    """The previous drill's worst finding: ``Z`` in bedside JSONL crashed ``records show`` and ``render``."""
    path = str(_jsonl(tmp_path, written))
    runner = CliRunner()
    shown = runner.invoke(app, ["records", "show", path])
    assert shown.exit_code == 0, shown.output
    assert "2019-06-01 to 2020-01-01" in shown.output
    options = ["--at", at] if at else []
    for form in ("chart", "xml", "sentences"):
        rendered = runner.invoke(app, ["records", "render", path, "--as", form, *options])
        assert rendered.exit_code == 0, rendered.output
        assert "2020-01-01" in rendered.output or "01/01/2020" in rendered.output


@pytest.mark.parametrize("form", ["jsonl", "csv"])
@pytest.mark.parametrize("sent_at", ["2020-06-01T09:00:00Z", "2020-06-01T09:00:00+03:00", "2020-06-01T09:00:00"])
@pytest.mark.parametrize("written", WRITTEN)
def test_drafting_cases_fill_charts_whatever_the_offsets(tmp_path: Path, form: str, sent_at: str, written: str) -> None:
    records = _jsonl(tmp_path, written)
    cases = tmp_path / f"messages.{form}"
    message = {"id": "m1", "message": "My wheeze is back.", "patient_id": "p", "sent_at": sent_at}
    if form == "csv":
        cases.write_text("id,message,patient_id,sent_at\n" + ",".join(message.values()) + "\n", encoding="utf-8")
    else:
        cases.write_text(json.dumps(message) + "\n", encoding="utf-8")
    (case,) = read_cases(cases, records=records)
    assert case.sent_at is not None
    assert case.sent_at.tzinfo is UTC
    assert case.chart_summary is not None
    assert "Asthma" in case.chart_summary
    assert "2020-01-01 Office visit" in case.chart_summary


def test_a_message_before_a_visit_does_not_see_it_across_offsets() -> None:
    """09:30 at +00:00 is before a 10:00Z visit; 11:30 at +02:00 is 09:30Z, before it too."""
    record = Record(
        patient=Patient(id="p", birth_date=date(1970, 1, 1)),
        encounters=[Encounter(id="e", text="Office visit", start=TEN_UTC)],
        notes=[Note(id="n", time=TEN_UTC, text="Wheeze.")],
    )
    for at in (datetime(2020, 1, 1, 9, 30), datetime(2020, 1, 1, 11, 30, tzinfo=timezone(timedelta(hours=2)))):
        assert "Office visit" not in render_chart_summary(record, at)
    assert "Office visit" in render_chart_summary(
        record, datetime(2020, 1, 1, 12, 30, tzinfo=timezone(timedelta(hours=2)))
    )
