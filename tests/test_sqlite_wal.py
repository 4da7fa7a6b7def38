"""Opening a SQLite store or cache while other processes open or hold it (bedside.sqlite_wal)."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bedside.llm.cache import ResponseCache
from bedside.runs.store import Store
from bedside.sqlite_wal import is_busy, retry_while_busy, use_wal


def test_a_locked_step_is_tried_again_until_it_succeeds() -> None:
    calls: list[int] = []

    def step() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "done"

    assert retry_while_busy(step, wait_s=5) == "done"
    assert len(calls) == 3


def test_another_error_is_raised_at_once_and_a_lock_past_the_wait_is_raised() -> None:
    calls: list[int] = []

    def broken() -> None:
        calls.append(1)
        raise sqlite3.OperationalError("no such table: completions")

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        retry_while_busy(broken, wait_s=5)
    assert len(calls) == 1

    def locked() -> None:
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(sqlite3.OperationalError, match="locked"):
        retry_while_busy(locked, wait_s=0.05)


def test_busy_is_read_from_the_error_code(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError) as caught:
        other.execute("SELECT * FROM t").fetchall()
    assert is_busy(caught.value)
    assert not is_busy(sqlite3.OperationalError("no such table: t"))
    holder.execute("ROLLBACK")


def test_wal_is_set_once_and_kept_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    first = sqlite3.connect(path, isolation_level=None)
    use_wal(first)
    assert first.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    second = sqlite3.connect(path, isolation_level=None)
    second.execute("BEGIN IMMEDIATE")  # a writer: switching modes would need the file to itself, reading does not
    third = sqlite3.connect(path, timeout=0, isolation_level=None)
    use_wal(third, wait_s=0)
    assert third.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL
    second.execute("ROLLBACK")


def _open_together(kind: str, path: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        for _ in range(20):
            if kind == "cache":
                ResponseCache(path).close()
            else:
                Store(path).close()
        results.put("ok")
    except Exception as exc:  # reported to the test
        results.put(f"{type(exc).__name__}: {exc}")


@pytest.mark.parametrize("kind", ["cache", "store"])
def test_processes_opening_a_new_file_at_once_all_succeed(tmp_path: Path, kind: str) -> None:
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(4), context.Queue()
    path = str(tmp_path / f"{kind}.sqlite")
    workers = [context.Process(target=_open_together, args=(kind, path, barrier, results)) for _ in range(4)]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=300) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert outcomes == ["ok"] * 4
