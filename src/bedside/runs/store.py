"""The results store: SQLite by default, any SQLAlchemy URL (PostgreSQL) works the same.

Tables:
- ``runs``: id, name, task, config (JSON), versions (bedside, Python), bedside's git commit, times, status.
- ``results``: one row per (run, cell, sample, epoch): the sample's key (hash of everything that produced it),
  status ``ok`` or ``error`` (with the cause), the output (text, transcript, trace, prompts), scores and the
  sample's own usage by role, the sample itself (inputs, references, strata), and times.
- ``scores``: the same scores, one row per metric, for querying with SQL.
- ``run_locks``: which process is running a run now (host, pid, heartbeat), so a second live process refuses
  to run the same run instead of paying for every request twice; a lock whose process is gone (same host, pid
  not alive) or whose heartbeat is older than ``LOCK_STALE_S`` is taken over.

An error row's ``failure`` holds the error's type and the cache keys of the answers that caused it, which
``--retry-errors`` asks again instead of replaying (see :mod:`bedside.llm.scope`).

Rows are written in batches, one transaction per batch (the runner flushes every 50 ms), so a sample is either
fully stored or absent, whatever kills the process.
"""

from __future__ import annotations

import dataclasses
import json
import operator
import os
import platform
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    case,
    create_engine,
    delete,
    event,
    func,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, NoSuchModuleError, SQLAlchemyError

from bedside import __version__
from bedside.errors import StorageError
from bedside.fastjson import dumper
from bedside.llm.secrets import scrub, scrub_data, strip_userinfo
from bedside.private_files import create_private_file
from bedside.sqlite_wal import use_wal

LOCK_STALE_S = 120.0
"""A run lock whose heartbeat is older than this is abandoned (its process died on another host)."""
HEARTBEAT_S = 15.0
"""How often a running run renews its lock."""
STALE = "stale"
"""The status :meth:`Store.runs` and :meth:`Store.run` report for a ``running`` run whose process is gone."""

metadata = MetaData()

runs_table = Table(
    "runs",
    metadata,
    Column("id", String, primary_key=True),
    Column("name", String, nullable=False),
    Column("task", String, nullable=False),
    Column("config", JSON, nullable=False),
    Column("bedside_version", String),
    Column("python_version", String),
    Column("git_commit", String),
    Column("created_at", DateTime),
    Column("updated_at", DateTime),
    Column("status", String),
    Column("planned", JSON),
)

results_table = Table(
    "results",
    metadata,
    Column("run_id", String, primary_key=True),
    Column("cell", String, primary_key=True),
    Column("sample_id", String, primary_key=True),
    Column("epoch", Integer, primary_key=True),
    Column("dataset", String, nullable=False),
    Column("system", String, nullable=False),
    Column("model", String, nullable=False),
    Column("key", String, nullable=False, index=True),
    Column("status", String, nullable=False),
    Column("error", Text),
    Column("output", JSON),
    Column("scores", JSON),
    Column("usage", JSON),
    Column("strata", JSON),
    Column("sample", JSON),
    Column("finished_at", DateTime),
    Column("failure", JSON),
    Column("calls", JSON),
)

locks_table = Table(
    "run_locks",
    metadata,
    Column("run_id", String, primary_key=True),
    Column("owner", String, nullable=False),
    Column("host", String, nullable=False),
    Column("pid", Integer, nullable=False),
    Column("heartbeat", Float, nullable=False),
)

scores_table = Table(
    "scores",
    metadata,
    Column("run_id", String, primary_key=True),
    Column("cell", String, primary_key=True),
    Column("sample_id", String, primary_key=True),
    Column("epoch", Integer, primary_key=True),
    Column("metric", String, primary_key=True),
    Column("value", Float),
)


@dataclass(frozen=True)
class ResultRow:
    run_id: str
    cell: str
    sample_id: str
    epoch: int
    dataset: str
    system: str
    model: str
    key: str
    status: str
    error: str | None
    output: dict[str, Any] | None
    scores: dict[str, float | None]
    usage: dict[str, Any]
    strata: dict[str, str]
    sample: dict[str, Any]
    failure: dict[str, Any] | None = None
    """For an error: its type and the cache keys of the answers that caused it (``retry_bypass``); for a sample
    answered on ``--retry-errors`` after it was stored as an error, ``{"retried_after_error": true}``."""
    calls: list[dict[str, Any]] | None = None
    """The sample's call timeline: one entry per model call (role, model, start_s/end_s since the sample began,
    tokens, cache hit, finish reason, error); None for rows stored before timelines were kept."""


class RunLockedError(RuntimeError):
    """Another live process is running this run in the same store."""


@dataclass(frozen=True)
class RunLock:
    run_id: str
    owner: str


def store_url(location: str) -> str:
    """A path becomes a SQLite URL; URLs pass through.

    A URL with a password is refused (:class:`StorageError`): the URL is printed and kept with each run.
    A SQLite file that does not exist yet is created here, 0600 in a 0700 folder if the folder is new, because
    the store holds every prompt and output (see :mod:`bedside.private_files`).
    """
    if location == ":memory:":
        return "sqlite:///:memory:"
    if "://" not in location:
        path = Path(location).expanduser()
        create_private_file(path)
        return f"sqlite:///{path}"
    try:
        url = make_url(location)
    except ArgumentError as exc:
        raise StorageError(f"{location!r} is not a store URL ({exc}); give a SQLite path or a SQLAlchemy URL") from None
    if url.password:
        raise StorageError(
            f"the store URL {strip_userinfo(location)} holds a password: bedside would show and store it with the "
            "run; leave it out of the URL and give it to PostgreSQL as PGPASSWORD or in ~/.pgpass "
            "(https://www.postgresql.org/docs/current/libpq-pgpass.html)"
        )
    database = url.database
    if url.get_backend_name() == "sqlite" and not database:
        # sqlite:/// with no file is an in-memory database: every result would vanish when the command ends.
        raise StorageError(
            f"{location!r} names no database file (results would be lost); give a path: sqlite:///runs/bedside.sqlite"
        )
    if url.get_backend_name() == "sqlite" and database and database != ":memory:" and "uri" not in url.query:
        create_private_file(Path(database).expanduser())
    return location


def _git_commit() -> str | None:
    root = Path(__file__).resolve().parents[3]
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except OSError:
        return None
    return done.stdout.strip() or None


class RunNotFoundError(LookupError):
    """No run with that id (or unique id prefix) in the store."""


class Store:
    def __init__(self, location: str) -> None:
        try:
            self.url = store_url(location)
        except OSError as exc:
            raise StorageError(f"cannot create the store's folder for {location}: {exc.strerror or exc}") from None
        try:
            self.engine: Engine = create_engine(self.url)
        except (NoSuchModuleError, ArgumentError, ImportError) as exc:
            raise StorageError(
                f"cannot open the store {location}: {exc}; use a SQLite path or a SQLAlchemy URL whose driver is "
                "installed (postgresql+psycopg://... with the postgres extra)"
            ) from None
        if self.url.startswith("sqlite"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
        try:
            _create_tables(self.engine)
        except SQLAlchemyError as exc:
            self.engine.dispose()
            raise StorageError(f"cannot open the store {self.url}: {_cause(exc)}") from None
        self._sqlite = _SqliteWriter(self.engine) if self.engine.dialect.name == "sqlite" else None

    @property
    def writes_in_process(self) -> bool:
        """Whether :meth:`write` is this process's own CPU work (SQLite, a file) rather than mostly waiting on a
        database server (PostgreSQL): the runner writes the first on its event loop, the second on a thread."""
        return self._sqlite is not None

    def close(self) -> None:
        self.engine.dispose()

    def lock_run(self, run_id: str) -> RunLock:
        """Take ``run_id``'s lock for this process, or raise :class:`RunLockedError` naming who holds it."""
        mine = RunLock(run_id, uuid.uuid4().hex)
        host, pid = socket.gethostname(), os.getpid()
        for _ in range(3):
            with self.engine.begin() as db:
                held = db.execute(select(locks_table).where(locks_table.c.run_id == run_id)).mappings().first()
                if held is not None:
                    if _alive(held["host"], held["pid"], held["heartbeat"]):
                        age = time.time() - held["heartbeat"]
                        raise RunLockedError(
                            f"run {run_id} is already running in {self.url} (pid {held['pid']} on {held['host']}, "
                            f"last seen {age:.0f} s ago); wait for it to finish or stop it, then run again "
                            f"(a lock not renewed for {LOCK_STALE_S:.0f} s is taken over)"
                        )
                    db.execute(delete(locks_table).where(locks_table.c.run_id == run_id))
                try:
                    db.execute(
                        insert(locks_table).values(
                            run_id=run_id, owner=mine.owner, host=host, pid=pid, heartbeat=time.time()
                        )
                    )
                except IntegrityError:
                    continue  # another process took it between our read and our insert: look again
            return mine
        raise RunLockedError(f"run {run_id}: could not take its lock in {self.url} (another process keeps taking it)")

    def renew_lock(self, lock: RunLock) -> None:
        with self.engine.begin() as db:
            db.execute(
                update(locks_table)
                .where((locks_table.c.run_id == lock.run_id) & (locks_table.c.owner == lock.owner))
                .values(heartbeat=time.time())
            )

    def unlock_run(self, lock: RunLock) -> None:
        with self.engine.begin() as db:
            db.execute(
                delete(locks_table).where((locks_table.c.run_id == lock.run_id) & (locks_table.c.owner == lock.owner))
            )

    def begin_run(self, run_id: str, name: str, task: str, config: dict[str, Any]) -> None:
        now = datetime.now(UTC).replace(tzinfo=None)
        with self.engine.begin() as db:
            exists = db.execute(select(runs_table.c.id).where(runs_table.c.id == run_id)).first()
            if exists:
                db.execute(update(runs_table).where(runs_table.c.id == run_id).values(updated_at=now, status="running"))
            else:
                db.execute(
                    insert(runs_table).values(
                        id=run_id,
                        name=name,
                        task=task,
                        config=scrub_data(config),  # no key, URL password or userinfo kept with the run
                        bedside_version=__version__,
                        python_version=platform.python_version(),
                        git_commit=_git_commit(),
                        created_at=now,
                        updated_at=now,
                        status="running",
                    )
                )

    def set_planned(self, run_id: str, planned: dict[str, int]) -> None:
        """Samples (× epochs) the run has per cell in all, done or not: what progress views count towards."""
        with self.engine.begin() as db:
            db.execute(update(runs_table).where(runs_table.c.id == run_id).values(planned=planned))

    def finish_run(self, run_id: str, status: str) -> None:
        now = datetime.now(UTC).replace(tzinfo=None)
        with self.engine.begin() as db:
            db.execute(update(runs_table).where(runs_table.c.id == run_id).values(updated_at=now, status=status))

    def write(self, rows: Sequence[ResultRow]) -> None:
        """Store finished samples in one transaction (replacing earlier rows for the same sample).

        Error texts are scrubbed of known secrets and URL userinfo on the way in (see
        :func:`bedside.llm.secrets.scrub`): they are built from endpoint bodies bedside does not control."""
        if not rows:
            return
        rows = [_scrubbed(r) if r.error is not None or r.failure is not None else r for r in rows]
        now = datetime.now(UTC).replace(tzinfo=None)
        if self._sqlite is not None:
            self._sqlite.write(self.engine, rows, now)
            return
        keys = [{"k_run": r.run_id, "k_cell": r.cell, "k_sample": r.sample_id, "k_epoch": r.epoch} for r in rows]
        with self.engine.begin() as db:
            db.execute(_DELETE_RESULTS, keys)
            db.execute(_DELETE_SCORES, keys)
            db.execute(
                insert(results_table),
                [
                    {
                        "run_id": r.run_id,
                        "cell": r.cell,
                        "sample_id": r.sample_id,
                        "epoch": r.epoch,
                        "dataset": r.dataset,
                        "system": r.system,
                        "model": r.model,
                        "key": r.key,
                        "status": r.status,
                        "error": r.error,
                        "output": r.output,
                        "scores": r.scores,
                        "usage": r.usage,
                        "strata": r.strata,
                        "sample": r.sample,
                        "finished_at": now,
                        "failure": r.failure,
                        "calls": r.calls,
                    }
                    for r in rows
                ],
            )
            score_rows = [
                {
                    "run_id": r.run_id,
                    "cell": r.cell,
                    "sample_id": r.sample_id,
                    "epoch": r.epoch,
                    "metric": m,
                    "value": v,
                }
                for r in rows
                for m, v in r.scores.items()
            ]
            if score_rows:
                db.execute(insert(scores_table), score_rows)

    def results(self, run_id: str) -> list[ResultRow]:
        with self.engine.connect() as db:
            rows = db.execute(
                select(results_table)
                .where(results_table.c.run_id == run_id)
                .order_by(results_table.c.cell, results_table.c.sample_id, results_table.c.epoch)
            ).mappings()
            return [_row(r) for r in rows]

    def step_failures(self, run_id: str) -> dict[str, int]:
        """How many of the run's successful samples failed each later step (a judge, a document: the names in
        ``output.extra.errors``), commonest first. Read by JSON path in the database, so a large run's outputs
        are not loaded to count them."""
        path = results_table.c.output[("extra", "errors")]
        counts: dict[str, int] = {}
        with self.engine.connect() as db:
            found = db.execute(
                select(path).where((results_table.c.run_id == run_id) & (results_table.c.status == "ok"))
            ).scalars()
            for errors in found:
                for step in errors or ():
                    counts[step] = counts.get(step, 0) + 1
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    def reusable(self, keys: Iterable[str]) -> dict[str, ResultRow]:
        """Successful results (from any run) by key, so an unchanged sample is never generated twice."""
        wanted = list(set(keys))
        found: dict[str, ResultRow] = {}
        with self.engine.connect() as db:
            if self._sqlite is not None and wanted:
                # Which keys have a successful row at all, in plain SQL first: rendering SQLAlchemy's 500-value
                # IN cost more than SQLite's lookups, and most keys of a run have no row (only those that do are
                # read in full, below).
                present: set[str] = set()
                for start in range(0, len(wanted), 500):
                    chunk = wanted[start : start + 500]
                    marks = ", ".join("?" * len(chunk))
                    query = f"SELECT DISTINCT key FROM results WHERE status = 'ok' AND key IN ({marks})"
                    present.update(key for (key,) in db.exec_driver_sql(query, tuple(chunk)))
                wanted = sorted(present)
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                rows = db.execute(
                    select(results_table).where(results_table.c.key.in_(chunk) & (results_table.c.status == "ok"))
                ).mappings()
                for r in rows:
                    found.setdefault(r["key"], _row(r))
        return found

    def runs(self) -> list[dict[str, Any]]:
        """Every run with its number of stored samples and of errors, and when it last stored one
        (``last_stored``: a run killed mid-way never wrote its own ``updated_at`` again)."""
        counts = (
            select(
                results_table.c.run_id,
                func.count().label("samples"),
                func.sum(case((results_table.c.status == "error", 1), else_=0)).label("errors"),
                func.max(results_table.c.finished_at).label("last_stored"),
            )
            .group_by(results_table.c.run_id)
            .subquery()
        )
        query = (
            select(runs_table, counts.c.samples, counts.c.errors, counts.c.last_stored)
            .outerjoin(counts, counts.c.run_id == runs_table.c.id)
            .order_by(runs_table.c.created_at)
        )
        with self.engine.connect() as db:
            listed = [dict(r) for r in db.execute(query).mappings()]
            _mark_stale(db, listed)
        for run in listed:
            run["samples"], run["errors"] = int(run["samples"] or 0), int(run["errors"] or 0)
        return listed

    def run(self, run_id: str) -> dict[str, Any]:
        """The run named by ``run_id``: its id, a unique prefix of it, or a config name (its latest run); see
        :meth:`resolve`."""
        return self.resolve(run_id).run

    def resolve(self, ref: str) -> ResolvedRun:
        """Find the run ``ref`` names: an exact run id, else a config name (every re-run of a changed config
        is a run of its own with that name: the one last started or resumed is taken, and the others are
        returned so a caller can say which it picked), else a unique prefix of a run id.

        An ambiguous prefix or an unknown name raises :class:`RunNotFoundError` listing the candidates."""
        with self.engine.connect() as db:
            found = db.execute(select(runs_table).where(runs_table.c.id == ref)).mappings().first()
            if found is not None:
                return ResolvedRun(_mark_stale(db, [dict(found)])[0])
            named = [dict(r) for r in db.execute(select(runs_table).where(runs_table.c.name == ref)).mappings()]
            if named:
                named.sort(key=run_recency, reverse=True)
                _mark_stale(db, named)
                return ResolvedRun(named[0], named[1:])
            matches = [
                dict(r) for r in db.execute(select(runs_table).where(runs_table.c.id.startswith(ref))).mappings()
            ]
            if len(matches) == 1:
                return ResolvedRun(_mark_stale(db, matches)[0])
            if matches:
                listed = ", ".join(sorted(r["id"] for r in matches))
                raise RunNotFoundError(f"{ref!r} matches {len(matches)} runs in {self.url}: {listed}; name one")
            known = ", ".join(str(r) for r in db.execute(select(runs_table.c.id)).scalars())
            raise RunNotFoundError(f"no run {ref!r} in {self.url}" + (f"; runs: {known}" if known else ""))


@dataclass(frozen=True)
class ResolvedRun:
    """A run found by :meth:`Store.resolve`; ``others`` are the other runs of the same config name, latest
    first (empty when the run was named by its id)."""

    run: dict[str, Any]
    others: list[dict[str, Any]] = dataclasses.field(default_factory=list)


def run_recency(run: dict[str, Any]) -> tuple[datetime, datetime]:
    """When a run was last started or resumed, then first started: what "latest" means among runs."""
    oldest = datetime.min
    return (run.get("updated_at") or run.get("created_at") or oldest, run.get("created_at") or oldest)


def _same_sample(table: Table) -> Any:
    return (
        (table.c.run_id == bindparam("k_run"))
        & (table.c.cell == bindparam("k_cell"))
        & (table.c.sample_id == bindparam("k_sample"))
        & (table.c.epoch == bindparam("k_epoch"))
    )


# Built once: constructing SQLAlchemy expressions per row cost more than the writes themselves.
_DELETE_RESULTS = delete(results_table).where(_same_sample(results_table))
_DELETE_SCORES = delete(scores_table).where(_same_sample(scores_table))


class _SqliteWriter:
    """:meth:`Store.write` for SQLite: the same rows through ``executemany`` with plain ``?`` parameters.

    SQLAlchemy's per-row parameter handling cost more than SQLite's own work (~65 us of CPU per sample, on the
    writer thread but under the same GIL as the event loop). Each value still goes through its column type's
    own bind processor (JSON columns serialised exactly as SQLAlchemy does, ``None`` as JSON ``null``; the
    timestamp in SQLAlchemy's format), so what is stored, and read back, is byte for byte the same.
    """

    def __init__(self, engine: Engine) -> None:
        dialect = engine.dialect
        processors = {c.name: _json_processor(c, dialect) for c in results_table.columns}
        stamp = processors.pop("finished_at")
        self._stamp: Callable[[datetime], Any] = stamp if stamp is not None else (lambda now: now)
        # The timestamp is the same for a whole batch: converted once by write().
        names = [c.name for c in results_table.columns]
        self._fields = operator.itemgetter(*(name for name in names if name != "finished_at"))
        self._finished_at = names.index("finished_at")
        self._processed = [(i, processors[name]) for i, name in enumerate(names) if processors.get(name) is not None]
        self._score_value = scores_table.c.value.type._cached_bind_processor(dialect)
        # A sample's earlier row is replaced through its primary key (one statement per row instead of a
        # DELETE and an INSERT; the results table has no other unique constraint); its earlier scores are
        # deleted, since the new row may have other metrics.
        self._insert_results = _insert_sql(results_table).replace("INSERT", "INSERT OR REPLACE", 1)
        self._insert_scores = _insert_sql(scores_table)
        where = "run_id = ? AND cell = ? AND sample_id = ? AND epoch = ?"
        self._delete_scores = f"DELETE FROM scores WHERE {where}"

    def _values(self, row: ResultRow, finished_at: Any) -> tuple[Any, ...]:
        values = list(self._fields(row.__dict__))
        values.insert(self._finished_at, finished_at)
        for i, process in self._processed:
            values[i] = process(values[i])
        return tuple(values)

    def write(self, engine: Engine, rows: Sequence[ResultRow], now: datetime) -> None:
        keys = [(r.run_id, r.cell, r.sample_id, r.epoch) for r in rows]
        finished_at = self._stamp(now)  # one timestamp per batch, converted once
        results = [self._values(r, finished_at) for r in rows]
        score_process = self._score_value
        scores = [
            (r.run_id, r.cell, r.sample_id, r.epoch, m, v if score_process is None else score_process(v))
            for r in rows
            for m, v in r.scores.items()
        ]
        with engine.begin() as db:
            db.exec_driver_sql(self._delete_scores, keys)
            db.exec_driver_sql(self._insert_results, results)
            if scores:
                db.exec_driver_sql(self._insert_scores, scores)


_json_text = dumper()
"""``json.dumps(value)``: what SQLAlchemy's JSON type stores, without building encoders per value."""


def _json_processor(column: Column[Any], dialect: Any) -> Any:
    """The column's bind processor; for a JSON column on an engine with the default serializer, an equivalent
    one through :func:`_json_text` (``None`` stored as JSON ``null``, as SQLAlchemy does)."""
    process = column.type._cached_bind_processor(dialect)
    plain = (
        isinstance(column.type, JSON)
        and not column.type.none_as_null
        and getattr(dialect, "_json_serializer", None) is None
        and String()._cached_bind_processor(dialect) is None
    )
    return _json_text if plain else process


def _scrubbed(row: ResultRow) -> ResultRow:
    error = scrub(row.error) if row.error is not None else None
    failure = scrub_data(row.failure) if row.failure is not None else None
    if error == row.error and failure == row.failure:
        return row
    return dataclasses.replace(row, error=error, failure=failure)


def _insert_sql(table: Table) -> str:
    names = [c.name for c in table.columns]
    return f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})"


def _row(r: Any) -> ResultRow:
    return ResultRow(
        run_id=r["run_id"],
        cell=r["cell"],
        sample_id=r["sample_id"],
        epoch=r["epoch"],
        dataset=r["dataset"],
        system=r["system"],
        model=r["model"],
        key=r["key"],
        status=r["status"],
        error=r["error"],
        output=r["output"],
        scores=r["scores"] or {},
        usage=r["usage"] or {},
        strata=r["strata"] or {},
        sample=r["sample"] or {},
        failure=r["failure"],
        calls=r.get("calls"),
    )


def _create_tables(engine: Engine) -> None:
    """Create missing tables and columns. Two processes opening a fresh store at once may race on CREATE
    TABLE; the loser finds the tables made and carries on. Columns added since a store was made are added."""
    for attempt in range(3):
        try:
            metadata.create_all(engine)
            break
        except SQLAlchemyError:
            if attempt == 2:
                raise
            time.sleep(0.05 * (attempt + 1))
    added: tuple[tuple[str, tuple[str, ...]], ...] = (("results", ("failure", "calls")), ("runs", ("planned",)))
    for table_name, names in added:
        present = {c["name"] for c in inspect(engine).get_columns(table_name)}
        for column in names:
            if column not in present:
                with engine.begin() as db:
                    db.execute(text(f"ALTER TABLE {table_name} ADD COLUMN {column} JSON"))
    # Indexes for browsing large runs (the viewer): counts of samples and errors per run and errors-only pages
    # (in key order) read the first; score-range filters probe the second. Created here too
    # (not only by create_all), so stores made before these indexes existed get them when opened.
    for name, table, columns in _INDEXES:
        try:
            with engine.begin() as db:
                db.execute(text(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({columns})"))
        except SQLAlchemyError:
            pass  # another process created it at the same moment (PostgreSQL can report that as a conflict)


_INDEXES = (
    ("ix_results_run_status_key", "results", "run_id, status, cell, sample_id, epoch"),
    ("ix_scores_run_metric_value", "scores", "run_id, metric, value"),
)


def _alive(host: str, pid: int, heartbeat: float) -> bool:
    """Whether a lock's holder may still be running: on this host, its pid answers; elsewhere, a recent beat."""
    if host == socket.gethostname():
        if pid == os.getpid():
            return True  # this very process (e.g. a second run of the same config in one program)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return time.time() - heartbeat < LOCK_STALE_S
    return time.time() - heartbeat < LOCK_STALE_S


def _mark_stale(db: Any, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Report a ``running`` run whose lock is gone or whose holder is dead as ``stale``.

    A run killed by SIGTERM or SIGKILL never writes its final status, so the row says ``running`` forever; the
    run's lock (renewed every :data:`HEARTBEAT_S` while it runs) tells the truth. The stored row is left as it
    is: re-running the config resumes the run and writes its real status.
    """
    ids = [r["id"] for r in runs if r.get("status") == "running"]
    if not ids:
        return runs
    locks = {
        row["run_id"]: row for row in db.execute(select(locks_table).where(locks_table.c.run_id.in_(ids))).mappings()
    }
    for run in runs:
        if run["id"] in ids:
            held = locks.get(run["id"])
            if held is None or not _alive(held["host"], held["pid"], held["heartbeat"]):
                run["status"] = STALE
    return runs


def _cause(exc: SQLAlchemyError) -> str:
    original = getattr(exc, "orig", None)
    return str(original or exc).splitlines()[0]


def _sqlite_pragmas(connection: Any, _: Any) -> None:
    use_wal(connection)


def iter_jsonl(rows: Iterable[ResultRow]) -> Iterator[str]:
    for row in rows:
        yield json.dumps(row.__dict__, sort_keys=True, ensure_ascii=False)
