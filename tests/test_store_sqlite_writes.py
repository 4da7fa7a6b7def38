"""SQLite stores write batches through plain ``executemany``: the stored bytes must be what SQLAlchemy's own
insert stores (JSON columns, ``None`` as JSON ``null``, NaN, non-ASCII, the timestamp format), rows replaced by a
later write of the same sample, stale scores removed."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from bedside.runs.store import ResultRow, Store


def _rows() -> list[ResultRow]:
    rows = []
    for i in range(7):
        ok = i % 3 != 0
        output = {
            "text": 'é x 🙂 "q" \\ \n',
            "numbers": [1, 2.5, 1e300, -0.0, float("nan"), float("inf"), True, False, None],
            "prompts": [[{"role": "user", "content": "hi"}]],
        }
        rows.append(
            ResultRow(
                run_id="r",
                cell="c",
                sample_id=f"s{i}",
                epoch=i % 2,
                dataset="d",
                system="sys",
                model="m",
                key=f"k{i}",
                status="ok" if ok else "error",
                error=None if ok else "Boom: x",
                output=output if ok else None,
                scores={"words": 1.0, "bleu": None, "third": 1 / 3} if ok else {},
                usage={"system": {"calls": 1, "cost": 0.1}},
                strata={"a": "ü"},
                sample={"id": f"s{i}", "inputs": {"k": [{"z": "ü"}]}},
                failure=None if ok else {"type": "Boom", "retry_bypass": ["a", "b"]},
            )
        )
    return rows


def _stored(path: Path, fast: bool) -> tuple[list[Any], list[Any]]:
    store = Store(str(path))
    if not fast:
        store._sqlite = None  # the SQLAlchemy path every other database takes
    rows = _rows()
    store.write(rows)
    store.write([*rows[:3], rows[3].__class__(**{**rows[3].__dict__, "scores": {"words": 2.0}})])
    store.close()
    db = sqlite3.connect(path)
    columns = [c[1] for c in db.execute("PRAGMA table_info(results)")]
    at = columns.index("finished_at")
    results = [r[:at] + r[at + 1 :] for r in db.execute("SELECT * FROM results ORDER BY sample_id, epoch")]
    stamps = [r[0] for r in db.execute("SELECT finished_at FROM results")]
    scores = list(db.execute("SELECT * FROM scores ORDER BY sample_id, epoch, metric"))
    db.close()
    assert all(len(s) == len("2026-01-01 00:00:00.000000") for s in stamps)
    return results, scores


def test_sqlite_batches_store_the_same_bytes_as_sqlalchemy(tmp_path: Path) -> None:
    fast = _stored(tmp_path / "fast.sqlite", fast=True)
    slow = _stored(tmp_path / "slow.sqlite", fast=False)
    assert fast == slow
    assert [s for s in fast[1] if s[2] == "s3"] == [("r", "c", "s3", 1, "words", 2.0)]  # stale scores gone
    store = Store(str(tmp_path / "fast.sqlite"))
    read = {r.sample_id: r for r in store.results("r")}
    store.close()
    assert read["s1"].output is not None
    assert read["s1"].output["text"] == 'é x 🙂 "q" \\ \n'
    assert read["s0"].failure == {"type": "Boom", "retry_bypass": ["a", "b"]}
    assert read["s1"].failure is None
