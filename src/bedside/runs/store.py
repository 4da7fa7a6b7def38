"""The results store: SQLite by default, any SQLAlchemy URL (PostgreSQL) works the same.

Tables:
- ``runs``: id, name, task, config (JSON), versions (bedside, Python), bedside's git commit, times, status.
- ``results``: one row per (run, cell, sample, epoch): the sample's key (hash of everything that produced it),
  status ``ok`` or ``error`` (with the cause), the output (text, transcript, trace, prompts), scores and the
  sample's own usage by role, the sample itself (inputs, references, strata), and times.
- ``scores``: the same scores, one row per metric, for querying with SQL.

Rows are written in batches, one transaction per batch (the runner flushes every 50 ms), so a sample is either
fully stored or absent, whatever kills the process.
"""

from __future__ import annotations

import json
import platform
import subprocess
from collections.abc import Iterable, Iterator, Sequence
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
    select,
    update,
)

from bedside import __version__

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


def store_url(location: str) -> str:
    """A path becomes a SQLite URL (its folder is created); URLs pass through."""
    if "://" in location:
        return location
    path = Path(location).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


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
        self.url = store_url(location)
        self.engine: Engine = create_engine(self.url)
        if self.url.startswith("sqlite"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
        metadata.create_all(self.engine)

    def close(self) -> None:
        self.engine.dispose()

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
                        config=config,
                        bedside_version=__version__,
                        python_version=platform.python_version(),
                        git_commit=_git_commit(),
                        created_at=now,
                        updated_at=now,
                        status="running",
                    )
                )

    def finish_run(self, run_id: str, status: str) -> None:
        now = datetime.now(UTC).replace(tzinfo=None)
        with self.engine.begin() as db:
            db.execute(update(runs_table).where(runs_table.c.id == run_id).values(updated_at=now, status=status))

    def write(self, rows: Sequence[ResultRow]) -> None:
        """Store finished samples in one transaction (replacing earlier rows for the same sample)."""
        if not rows:
            return
        now = datetime.now(UTC).replace(tzinfo=None)
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

    def reusable(self, keys: Iterable[str]) -> dict[str, ResultRow]:
        """Successful results (from any run) by key, so an unchanged sample is never generated twice."""
        wanted = list(set(keys))
        found: dict[str, ResultRow] = {}
        with self.engine.connect() as db:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                rows = db.execute(
                    select(results_table).where(results_table.c.key.in_(chunk) & (results_table.c.status == "ok"))
                ).mappings()
                for r in rows:
                    found.setdefault(r["key"], _row(r))
        return found

    def runs(self) -> list[dict[str, Any]]:
        """Every run with its number of stored samples and of errors."""
        counts = (
            select(
                results_table.c.run_id,
                func.count().label("samples"),
                func.sum(case((results_table.c.status == "error", 1), else_=0)).label("errors"),
            )
            .group_by(results_table.c.run_id)
            .subquery()
        )
        query = (
            select(runs_table, counts.c.samples, counts.c.errors)
            .outerjoin(counts, counts.c.run_id == runs_table.c.id)
            .order_by(runs_table.c.created_at)
        )
        with self.engine.connect() as db:
            listed = [dict(r) for r in db.execute(query).mappings()]
        for run in listed:
            run["samples"], run["errors"] = int(run["samples"] or 0), int(run["errors"] or 0)
        return listed

    def run(self, run_id: str) -> dict[str, Any]:
        with self.engine.connect() as db:
            found = db.execute(select(runs_table).where(runs_table.c.id == run_id)).mappings().first()
            if found is None:
                matches = list(db.execute(select(runs_table).where(runs_table.c.id.startswith(run_id))).mappings())
                if len(matches) == 1:
                    return dict(matches[0])
                known = ", ".join(str(r) for r in db.execute(select(runs_table.c.id)).scalars())
                raise RunNotFoundError(f"no run {run_id!r} in {self.url}" + (f"; runs: {known}" if known else ""))
            return dict(found)


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
    )


def _sqlite_pragmas(connection: Any, _: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def iter_jsonl(rows: Iterable[ResultRow]) -> Iterator[str]:
    for row in rows:
        yield json.dumps(row.__dict__, sort_keys=True, ensure_ascii=False)
