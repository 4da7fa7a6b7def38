"""The instruct report table counts what is absent: failed samples and judge failures, per system and model."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from bedside.tasks.instruct.tables import report_tables


def _row(judge: dict[str, Any] | None, error: str | None = None) -> SimpleNamespace:
    extra: dict[str, Any] = {"system_kind": "budgeted", "context": 2048, "record_view": "paper"}
    if error is not None:
        extra["judge_error"] = error
    scores = {} if judge is None else {"judge_correct": float(judge["correct"])}
    return SimpleNamespace(status="ok", output={"extra": extra}, scores=scores, system="budgeted", model="m", strata={})


def test_a_judge_that_never_answered_is_absent_and_counted() -> None:
    """Two samples whose judge failed and one judged correct: judge correct is 1.000 over the one verdict (the
    failures are not scored 0), and the note counts the two failures."""
    rows = [_row(None, "no valid verdict"), _row(None, "no valid verdict"), _row({"correct": True})]
    (table,) = report_tables(rows)
    assert table.rows[0][table.columns.index("judge correct")] == "1.000"
    assert table.note.endswith("Judge failures (no valid verdict after the re-asks: judge correct absent for that "
                               "sample, never 0): budgeted/m: 2.")  # fmt: skip
    every_failed = report_tables([_row(None, "no valid verdict")])[0]
    assert every_failed.rows[0][table.columns.index("judge correct")] == "-"
