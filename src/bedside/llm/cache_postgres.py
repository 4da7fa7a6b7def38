"""The response cache on PostgreSQL, for runs whose workers sit on several machines; and :func:`open_cache`,
which picks SQLite or PostgreSQL from what it is given.

Same semantics as the SQLite cache (:mod:`bedside.llm.cache`), because it *is* that cache with another place to
commit to: the key (sha256 of the canonical request), answers batched in memory and committed at most every
50 ms (served from memory meanwhile), :meth:`flush` at ``Model.aclose`` and exit, a cache that stops accepting
writes logged once and kept in memory. What is cached is decided by :class:`~bedside.llm.Model`, not here, so it
holds here too: errors and answers without text are never put, and a key the call scope says to bypass
(``--retry-errors``) is asked again and its new answer replaces the stored one (an upsert).

Several processes (Ray workers, two ``bedside run`` on different hosts) share one table; a write is an
``INSERT ... ON CONFLICT (key) DO UPDATE``, so two workers that answered the same request both succeed and the
later answer wins (for a deterministic endpoint, the same answer).

URL: ``postgresql://`` or SQLAlchemy's ``postgresql+psycopg://`` form (the driver part is dropped); the table is
``bedside_completions`` unless ``table`` (or the URL query ``?table=NAME``) says otherwise. Needs the
``postgres`` extra (psycopg 3). Prompts are patient data: who may read the table is the server's business
(grants), which bedside cannot set for you.
"""

from __future__ import annotations

import logging
import re
import threading
import weakref
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from bedside.errors import StorageError
from bedside.llm.cache import ResponseCache
from bedside.llm.types import ProviderResponse

logger = logging.getLogger("bedside.llm")

DEFAULT_TABLE = "bedside_completions"
_TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def is_postgres_url(location: str | Path) -> bool:
    return isinstance(location, str) and re.match(r"^postgres(ql)?(\+\w+)?://", location) is not None


def _connection_url(url: str) -> tuple[str, str | None]:
    """psycopg's URL (no SQLAlchemy driver suffix, no ``table`` query) and the table named in the query."""
    parts = urlsplit(url)
    scheme = parts.scheme.split("+", 1)[0]
    if scheme == "postgres":
        scheme = "postgresql"
    query = parse_qsl(parts.query, keep_blank_values=True)
    table = next((v for k, v in query if k == "table"), None)
    rest = urlencode([(k, v) for k, v in query if k != "table"])
    return urlunsplit((scheme, parts.netloc, parts.path, rest, parts.fragment)), table


def redacted_url(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


class PostgresResponseCache(ResponseCache):
    """The response cache in a PostgreSQL table (see the module docstring). Thread-safe; one connection."""

    def __init__(self, url: str, *, table: str | None = None) -> None:
        try:
            import psycopg
        except ImportError:
            raise StorageError("a PostgreSQL response cache needs psycopg: pip install 'bedside[postgres]'") from None
        conninfo, url_table = _connection_url(url)
        self.table = table or url_table or DEFAULT_TABLE
        if not _TABLE_NAME.match(self.table):
            raise StorageError(f"response cache table name {self.table!r} is not a plain SQL identifier")
        self.path = Path(self.table)  # what log lines name; a cache on a server has no file
        self.url = redacted_url(url)
        try:
            self._conn: Any = psycopg.connect(conninfo, autocommit=True, connect_timeout=10)
            self._conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self.table} ("
                "key TEXT PRIMARY KEY, request TEXT NOT NULL, response TEXT NOT NULL, "
                "created DOUBLE PRECISION NOT NULL)"
            )
        except psycopg.errors.UniqueViolation:
            pass  # two processes created the table at once: it exists now
        except psycopg.Error as exc:
            raise StorageError(
                f"cannot open the response cache {self.url} (table {self.table}): {str(exc).strip().splitlines()[0]}"
                " (check the server and the URL, or run without a cache: --no-cache)"
            ) from None
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[str, str, str, float]] = {}
        self._flush_scheduled = False
        self._warned = False
        self._insert = (
            f"INSERT INTO {self.table} (key, request, response, created) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (key) DO UPDATE SET request = EXCLUDED.request, response = EXCLUDED.response, "
            "created = EXCLUDED.created"
        )
        self._select = f"SELECT response FROM {self.table} WHERE key = %s"
        finalizer: Any = weakref.finalize(self, _close, self._conn, self._lock, self._pending, self._insert)
        self._finalizer = finalizer

    def get(self, key: str) -> ProviderResponse | None:
        with self._lock:
            pending = self._pending.get(key)
            if pending:
                row: tuple[str] | None = (pending[2],)
            else:
                try:
                    row = self._conn.execute(self._select, (key,)).fetchone()
                except Exception as exc:  # a server gone is a miss (the call is sent), logged once
                    self._warn_once("read", exc)
                    row = None
        if row is None:
            return None
        return ProviderResponse.model_validate_json(row[0])

    def flush(self) -> None:
        self._flush_scheduled = False
        try:
            _commit(self._conn, self._lock, self._pending, self._insert)
        except Exception as exc:
            self._warn_once("written", exc)

    def _warn_once(self, what: str, exc: BaseException) -> None:
        if not self._warned:
            self._warned = True
            logger.warning(
                "response cache %s (table %s) cannot be %s (%s): %d answer(s) kept in memory only; "
                "a later run may ask for them again",
                self.url,
                self.table,
                what,
                str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
                len(self._pending),
            )

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            (count,) = self._conn.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()
        return int(count)

    def drop(self) -> None:
        """Drop the table (tests and throwaway caches)."""
        with self._lock:
            self._pending.clear()
            self._conn.execute(f"DROP TABLE IF EXISTS {self.table}")


def _close(conn: Any, lock: threading.Lock, pending: dict[str, tuple[str, str, str, float]], insert: str) -> None:
    try:
        _commit(conn, lock, pending, insert)
    except Exception as exc:
        logger.warning("response cache: %d answer(s) could not be written at close (%s)", len(pending), exc)
    try:
        conn.close()
    except Exception:  # closing a connection whose server is gone
        logger.debug("response cache: closing the connection failed", exc_info=True)


def _commit(conn: Any, lock: threading.Lock, pending: dict[str, tuple[str, str, str, float]], insert: str) -> None:
    with lock:
        if not pending:
            return
        rows = list(pending.values())
        with conn.transaction(), conn.cursor() as cursor:
            cursor.executemany(insert, rows)
        pending.clear()


def open_cache(location: str | Path, *, table: str | None = None) -> ResponseCache:
    """The response cache at ``location``: a PostgreSQL URL opens :class:`PostgresResponseCache`; anything else
    (a path, ``sqlite:///PATH``, ``:memory:``) the SQLite :class:`~bedside.llm.cache.ResponseCache`."""
    if is_postgres_url(location):
        return PostgresResponseCache(str(location), table=table)
    text = str(location)
    if text.startswith("sqlite:///"):
        return ResponseCache(text.removeprefix("sqlite:///"))
    if "://" in text:
        raise StorageError(f"unsupported response cache location {text!r}: a file path or a postgresql:// URL")
    return ResponseCache(location)
