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


def test_a_message_sent_before_its_patients_record_begins_is_warned_of() -> None:
    import warnings
    from datetime import timedelta

    import pytest

    from bedside.records import RecordWarning

    records = read_records(DEMO_DIR / "cohort.jsonl")
    messages = load_portal_messages(DEMO_DIR / "portal_messages.jsonl")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the demo's messages all fall inside their records
        with_chart_from(messages, records)
    first = next(r.span() for r in records if r.id == messages[0].patient_id)
    assert first is not None
    early = messages[0].model_copy(update={"sent_at": first[0] - timedelta(days=400)})  # a year typed wrong
    with pytest.warns(RecordWarning, match=rf"1 portal message\(s\) sent before .* empty chart: {early.id} \("):
        with_chart_from([early, *messages[1:]], records)
