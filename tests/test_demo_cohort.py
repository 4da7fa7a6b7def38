"""The bundled synthetic cohort that `make demo` and the tests use."""

from __future__ import annotations

from bedside.data import DEMO_DIR
from bedside.records import read_records
from bedside.tasks.drafting import load_portal_messages, with_chart_from


def test_cohort_has_a_dozen_adults_each_with_portal_messages_inside_their_record() -> None:
    records = read_records(DEMO_DIR / "cohort.jsonl")
    messages = load_portal_messages(DEMO_DIR / "portal_messages.jsonl")
    assert len(records) == 12
    by_id = {r.id: r for r in records}
    assert {m.patient_id for m in messages} == set(by_id)
    for message in messages:
        record = by_id[str(message.patient_id)]
        assert message.sent_at is not None
        span = record.span()
        assert span is not None
        assert span[0] <= message.sent_at  # the message comes after the chart starts
        age = record.patient.age_at(message.sent_at)
        assert age is not None
        assert age >= 18
        assert message.references[0].clinician_id == "dr-a"
    assert sum(len(m.references) >= 2 for m in messages) >= 5  # for the inter-clinician measures


def test_every_message_gets_a_chart_as_of_its_time() -> None:
    records = read_records(DEMO_DIR / "cohort.jsonl")
    filled = with_chart_from(load_portal_messages(DEMO_DIR / "portal_messages.jsonl"), records)
    assert all(m.chart_summary and "###Medications (Outpatient)###" in m.chart_summary for m in filled)
