"""A response cache in SQLite, keyed by everything that determines an answer and nothing secret.

The key is the sha256 of the canonical JSON of (provider, model, messages, generation settings, response
schema, epoch tag). The base URL is not part of it (its field is kept, always null, so keys made before stay
valid for models without one): an answer is the model's, not its address's, so a server moved to another host or
port keeps its cached answers, while another model name is another model. The price of that choice: two servers
that serve different weights under one model name (llama.cpp's server answers whatever name it is sent) share
answers, so give such models different names (``openai-compatible/qwen-7b-q4@...``, ``.../qwen-7b-q8@...``).
The epoch tag separates repeated samples of one prompt: epoch 0 and epoch 1 are two
distinct cached draws, and re-running either gives the same text back. API keys are never part of the key or
the stored request; only the request fields the endpoint sees (minus headers) are stored, for inspection.

Those stored requests are whole prompts, patient text included, so a new cache file is 0600 in a 0700 folder
(:mod:`bedside.private_files`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bedside.errors import StorageError
from bedside.fastjson import dumper
from bedside.llm.types import ChatMessage, GenerationSettings, ProviderResponse
from bedside.private_files import create_private_file
from bedside.sqlite_wal import OPEN_WAIT_S, retry_while_busy, use_wal

logger = logging.getLogger("bedside.llm")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""


_CANONICAL = dumper(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 as is: ``json.dumps(value, sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)``, without building encoders per call (:mod:`bedside.fastjson`)."""
    return _CANONICAL(value)


def cache_request(
    *,
    provider: str,
    base_url: str | None,
    model: str,
    messages: Sequence[ChatMessage],
    settings: GenerationSettings,
    response_schema: dict[str, Any] | None,
    epoch: str,
) -> dict[str, Any]:
    """The fields that identify a request; hashed for the key and stored beside the answer."""
    return {
        "provider": provider,
        "base_url": base_url,
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in messages],  # = m.model_dump(), cheaper
        "settings": settings_json(settings),
        "response_schema": response_schema,
        "epoch": epoch,
    }


def cache_key(request: dict[str, Any]) -> str:
    return key_of(canonical_json(request))


def key_of(request_json: str) -> str:
    """The cache key of a request already in canonical JSON (``cache_key`` without encoding it again)."""
    return hashlib.sha256(request_json.encode("utf-8")).hexdigest()


_settings_seen: dict[int, tuple[GenerationSettings, dict[str, Any]]] = {}


def settings_json(settings: GenerationSettings) -> dict[str, Any]:
    """``settings.model_dump(mode="json")``, computed once per settings object (they are frozen, and a run
    passes the same few objects with every call). Callers must not mutate the result."""
    seen = _settings_seen.get(id(settings))
    if seen is not None and seen[0] is settings:
        return seen[1]
    dumped = settings.model_dump(mode="json")
    if len(_settings_seen) >= 256:
        _settings_seen.clear()
    _settings_seen[id(settings)] = (settings, dumped)  # holding the object keeps its id from being reused
    return dumped


def default_cache_path() -> Path:
    """``$BEDSIDE_CACHE`` if set, else ``$XDG_CACHE_HOME/bedside/llm-cache.sqlite`` (``~/.cache`` by default)."""
    explicit = os.environ.get("BEDSIDE_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "bedside" / "llm-cache.sqlite"


class ResponseCache:
    """A SQLite file shared safely by threads and processes (WAL mode, short write transactions).

    Writes made from inside an event loop are gathered and committed together at most every ``_INTERVAL_S``
    (one transaction for all answers that arrived meanwhile), which keeps the cache off the critical path of a
    highly concurrent run: committing at every loop turn cost ~40 us of the loop per answer at 100 in flight.
    Pending answers are served from memory, so a lookup never misses one; a kill loses at most the last
    interval's answers. :meth:`flush` (called by ``Model.aclose`` and at interpreter exit) commits at once.
    """

    _BATCH = 256
    _INTERVAL_S = 0.05

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            if str(path) != ":memory:":  # cached requests hold whole prompts: 0600 before SQLite opens the file
                create_private_file(self.path)
            self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=OPEN_WAIT_S, isolation_level=None)
            use_wal(self._conn)
            retry_while_busy(lambda: self._conn.execute(_SCHEMA))
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(
                f"cannot open the response cache {self.path}: {getattr(exc, 'strerror', None) or exc} "
                "(choose another file with --cache or BEDSIDE_CACHE, or run without one: --no-cache)"
            ) from None
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[str, str, str, float]] = {}
        self._flush_scheduled = False
        self._warned = False
        self._finalizer = weakref.finalize(self, _close, self._conn, self._lock, self._pending)

    def get(self, key: str) -> ProviderResponse | None:
        with self._lock:
            pending = self._pending.get(key)
            row = (
                (pending[2],)
                if pending
                else self._conn.execute("SELECT response FROM completions WHERE key = ?", (key,)).fetchone()
            )
        if row is None:
            return None
        return ProviderResponse.model_validate_json(row[0])

    def put(
        self, key: str, request: dict[str, Any], response: ProviderResponse, *, request_json: str | None = None
    ) -> None:
        """Keep ``response`` under ``key``; ``request_json``, when given, is ``canonical_json(request)``."""
        row = (key, request_json or canonical_json(request), response.model_dump_json(), time.time())
        with self._lock:
            self._pending[key] = row
            full = len(self._pending) >= self._BATCH
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or full:
            self.flush()
        elif not self._flush_scheduled:
            self._flush_scheduled = True
            loop.call_later(self._INTERVAL_S, self.flush)

    def flush(self) -> None:
        """Commit every answer put so far. A cache that cannot be written (disk full) is not a run's failure:
        the answers stay in memory (this process still serves them) and the problem is logged once."""
        self._flush_scheduled = False
        try:
            _commit(self._conn, self._lock, self._pending)
        except sqlite3.Error as exc:
            if not self._warned:
                self._warned = True
                logger.warning(
                    "response cache %s cannot be written (%s): %d answer(s) kept in memory only; "
                    "a later run may ask for them again",
                    self.path,
                    exc,
                    len(self._pending),
                )

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            (count,) = self._conn.execute("SELECT COUNT(*) FROM completions").fetchone()
        return int(count)

    def close(self) -> None:
        """Commit what is pending and close the file; also done at interpreter exit."""
        self._finalizer()


def _close(conn: sqlite3.Connection, lock: threading.Lock, pending: dict[str, tuple[str, str, str, float]]) -> None:
    try:
        _commit(conn, lock, pending)
    except sqlite3.Error as exc:
        logger.warning("response cache: %d answer(s) could not be written at close (%s)", len(pending), exc)
    conn.close()


def _commit(conn: sqlite3.Connection, lock: threading.Lock, pending: dict[str, tuple[str, str, str, float]]) -> None:
    with lock:
        if not pending:
            return
        rows = list(pending.values())
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT OR REPLACE INTO completions (key, request, response, created) VALUES (?, ?, ?, ?)", rows
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        pending.clear()
