"""A record that contradicts itself is refused, naming the line and field (issue 48's second drill: each was shown
as if it were true)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bedside.records import RecordError
from bedside.records.jsonl import read_records_jsonl

PATIENT = {"id": "p1", "birth_date": "1990-01-01"}
VISIT = {"id": "e1", "start": "2020-01-02T00:00:00Z", "end": "2020-01-02T01:00:00Z"}


@pytest.mark.parametrize(
    ("record", "said"),
    [
        ({"patient": {**PATIENT, "id": " "}}, "field 'patient': the patient id is blank"),
        (
            {"patient": {**PATIENT, "deceased": False, "deceased_at": "2021-01-01T00:00:00Z"}},
            "deceased is false but a date of death (deceased_at) is given",
        ),
        (
            {"patient": {**PATIENT, "deceased": True, "deceased_at": "1980-01-01T00:00:00Z"}},
            "died (1980-01-01) before being born (1990-01-01)",
        ),
        ({"patient": PATIENT, "encounters": [VISIT, VISIT]}, "encounters: the id 'e1' is used twice"),
        (
            {"patient": PATIENT, "encounters": [{**VISIT, "end": "2020-01-01T00:00:00Z"}]},
            "encounters: 'e1' ends (2020-01-01T00:00:00+00:00) before it starts",
        ),
    ],
)
def test_a_record_that_contradicts_itself_is_refused(tmp_path: Path, record: dict[str, Any], said: str) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(RecordError) as caught:
        read_records_jsonl(path)
    assert said in str(caught.value)
    assert "line 1" in str(caught.value)
    assert "Value error" not in str(caught.value)


def test_a_date_of_death_alone_says_the_patient_died(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps({"patient": {**PATIENT, "deceased_at": "2021-01-01T00:00:00Z"}}) + "\n")
    (record,) = read_records_jsonl(path)
    assert record.patient.deceased
