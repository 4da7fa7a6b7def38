"""Open a SQLite file in WAL mode when other processes open it at the same moment.

The run store and the response cache are shared by a run's worker processes (``bedside run --processes``),
Ray workers on one machine, and runs started side by side. SQLite's busy timeout does not cover every lock it
meets while a connection sets itself up: switching a file to WAL needs the file to itself, and a connection
that opens while the last one closes (SQLite then checkpoints and removes the ``-wal`` file) can be told
"database is locked" at once, without waiting. CI saw exactly that once, in a worker of a two-process run. The
set-up is short and safe to repeat, so it is retried until ``wait_s`` have passed; any other error, or a lock
still held then, is raised.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any, TypeVar

_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED: their extended codes share the low byte
OPEN_WAIT_S = 30.0
"""How long a connection's set-up waits out another's lock: the busy timeout bedside gives its connections."""

T = TypeVar("T")


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` says another connection holds the lock (and trying again later may succeed)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _BUSY_CODES
    text = str(exc).lower()
    return "database is locked" in text or "database table is locked" in text


def retry_while_busy(step: Callable[[], T], *, wait_s: float = OPEN_WAIT_S) -> T:
    """``step()``, run again (after a short, growing pause) while it fails because the file is locked."""
    deadline = time.monotonic() + wait_s
    pause = 0.005
    while True:
        try:
            return step()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def use_wal(connection: Any, *, wait_s: float = OPEN_WAIT_S) -> None:
    """Put a DB-API SQLite connection in WAL mode with ``synchronous=NORMAL``.

    The journal mode is read first and set only when it is not WAL already: WAL is kept in the file, so after
    the first connection this is a read, which never needs the file to itself."""

    def setup() -> None:
        cursor = connection.cursor()
        try:
            mode = cursor.execute("PRAGMA journal_mode").fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    retry_while_busy(setup, wait_s=wait_s)


__all__ = ["OPEN_WAIT_S", "is_busy", "retry_while_busy", "use_wal"]
