"""What the Ray executor and the local process executor share: a runner fed samples from outside, and the
figures a shard of a run reports.

Both executors plan a run in one driver and hand its samples to other processes, each running the runner's own
sample loop (:class:`bedside.runs.runner._Running`) on what it is given and writing to the one store. So the
results are the local executor's, sample by sample; what differs is only where the samples run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from bedside.llm import UsageLedger
from bedside.runs.config import RunConfig
from bedside.runs.runner import Item, Plan, Progress, RunSummary, _Running, _Scoring, build_models, plan_run
from bedside.runs.store import ResultRow, RunLock, Store, results_table
from bedside.runs.task import Task


class ShardRunning(_Running):
    """A worker's runner: the runner's own sample loop, fed from the worker's work queue (batches the driver
    sends as the worker asks for them), with endpoint caps taken from the whole run's config (the per-worker
    config only lowers how many samples this worker keeps in flight). A batch is answered once every one of
    its samples is stored."""

    def __init__(
        self, plan: Plan, store: Store, lock: RunLock, full_config: RunConfig, cache: str | Path | bool | None
    ) -> None:
        super().__init__(plan, store, lock, None)
        self.full_config = full_config
        self.cache = cache
        self.queue: asyncio.Queue[Item | None] = asyncio.Queue()
        self.waiting: dict[tuple[str, str, int], Batch] = {}

    def _build_models(self, cache: str | Path | bool | None) -> None:
        whole = dataclasses.replace(self.plan, config=self.full_config)
        self.models, self.cell_models = build_models(whole, cache, self.summary)

    def _sample_loops(self) -> list[Coroutine[Any, Any, None]]:
        if not self.models:  # the plan's ``generate`` is empty: samples come through the queue
            self._build_models(self.cache)

        async def worker() -> None:
            while (item := await self.queue.get()) is not None:
                await self._generate(item)

        return [worker() for _ in range(self.plan.config.concurrency)]

    def _stored(self, entries: list[ResultRow | _Scoring], rows: list[ResultRow]) -> None:
        super()._stored(entries, rows)
        for row in rows:
            batch = self.waiting.pop((row.cell, row.sample_id, row.epoch), None)
            if batch is not None:
                batch.one_stored(row.cell, row.status == "error")


@dataclasses.dataclass
class Batch:
    """A batch of samples in a worker, answered (per cell: stored, of which errors) once all are stored."""

    future: asyncio.Future[dict[str, tuple[int, int]]]
    remaining: int
    cells: dict[str, tuple[int, int]] = dataclasses.field(default_factory=dict)

    def one_stored(self, cell: str, error: bool) -> None:
        done, errors = self.cells.get(cell, (0, 0))
        self.cells[cell] = (done + 1, errors + error)
        self.remaining -= 1
        if self.remaining == 0 and not self.future.done():
            self.future.set_result(self.cells)


@dataclasses.dataclass
class ShardResult:
    index: int
    ran: int
    truncated: int
    skipped: int
    cells: dict[str, tuple[int, int]]
    """Per cell: samples finished now, of which errors."""
    usage: dict[str, Any]
    """The worker's usage by role (``RoleUsage`` fields); a worker that died took its own with it."""
    pid: int
    cpu_s: float = 0.0
    """CPU seconds the worker took while it ran samples (this life)."""
    max_rss_mb: float = 0.0
    """The worker process's peak resident memory."""
    limits: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The cluster-wide limiters as the limits actor saw them when this worker ended, by endpoint."""
    lease: dict[str, int] = dataclasses.field(default_factory=dict)
    """This worker's use of its leases, over its endpoints: ``requests`` started, of which ``local`` on a slot
    it held (no message), and ``actor_calls`` (messages to the limits actor)."""
    started: float = 0.0
    finished: float = 0.0
    """Wall-clock times (``time.time``) the worker began and ended its samples (start-up costs excluded)."""


def longest_timeout(config: RunConfig) -> float:
    """The longest request timeout of the run's models: how long a dead worker's requests may still run."""
    from bedside.llm import parse_model_spec

    longest = 0.0
    for role, specs in config.models.items():
        for spec in specs:
            with contextlib.suppress(Exception):
                longest = max(
                    longest, parse_model_spec(config.model_spec(spec), **config.model_options.get(role, {})).timeout_s
                )
    return longest


def usage_of(summary: RunSummary) -> dict[str, Any]:
    return {role: entry.model_dump() for role, entry in summary.usage.snapshot().items()}


def merge_usage(ledger: UsageLedger, usage: dict[str, Any]) -> None:
    for role, values in usage.items():
        entry = ledger._entry(role)  # type: ignore[arg-type]
        for name, value in values.items():
            if name == "priced":
                entry.priced = entry.priced or bool(value)
            else:
                setattr(entry, name, getattr(entry, name) + value)


def generated_outcomes(store: Store, run_id: str, items: list[Item]) -> tuple[int, int]:
    """How many of ``items`` the store now holds as successful and as errors (the summary's ``ran`` and
    ``failed``)."""
    if not items:
        return 0, 0
    table = results_table
    with store.engine.connect() as db:
        rows = db.execute(
            select(table.c.cell, table.c.sample_id, table.c.epoch, table.c.key, table.c.status).where(
                table.c.run_id == run_id
            )
        ).all()
    status = {(r.cell, r.sample_id, r.epoch, r.key): r.status for r in rows}
    found = [status.get((i.cell.id, i.sample.id, i.epoch, i.key)) for i in items]
    return found.count("ok"), found.count("error")


def reported_outcomes(results: list[ShardResult], generated: int) -> tuple[int, int] | None:
    """The summary's ``ran`` and ``failed`` from the shards' own reports, when together they finished exactly
    as many items as were generated; otherwise None, and the store is asked (:func:`generated_outcomes`). A lost
    worker took its counts with it and the batch taken back skips what it had stored, so a loss shows as fewer.
    Why not always ask: reading back every stored row of a 20,000-sample run cost the driver 0.14-0.18 s of CPU
    (bench/scale.py), for counts the shards already hold."""
    finished = sum(done for result in results for done, _ in result.cells.values())
    errors = sum(error for result in results for _, error in result.cells.values())
    if finished != generated:
        return None
    return finished - errors, errors


def not_yet_stored(store: Store, run_id: str, items: list[Item], retry_errors: bool) -> tuple[list[Item], int]:
    """The items whose result the store does not hold yet with the same key (a retried shard's leftovers)."""
    table = results_table
    ids = sorted({item.sample.id for item in items})
    with store.engine.connect() as db:
        rows = db.execute(
            select(table.c.cell, table.c.sample_id, table.c.epoch, table.c.key, table.c.status).where(
                (table.c.run_id == run_id) & table.c.sample_id.in_(ids)
            )
        ).all()
    done = {
        (r.cell, r.sample_id, r.epoch, r.key)
        for r in rows
        if r.status == "ok" or (r.status == "error" and not retry_errors)
    }
    todo = [i for i in items if (i.cell.id, i.sample.id, i.epoch, i.key) not in done]
    return todo, len(items) - len(todo)


def stored_counts(store: Store, run_id: str) -> dict[str, tuple[int, int]]:
    table = results_table
    query = (
        select(table.c.cell, func.count(), func.sum((table.c.status == "error").cast(results_table.c.epoch.type)))
        .where(table.c.run_id == run_id)
        .group_by(table.c.cell)
    )
    with store.engine.connect() as db:
        return {cell: (int(n), int(e or 0)) for cell, n, e in db.execute(query)}


def sample_batches(items: list[Item], size: int) -> list[list[Item]]:
    """``items`` in batches of about ``size``, every cell of one (dataset, sample, epoch) in the same batch: a
    worker then meets identical calls of a sample's cells in its own single-flight and cache."""
    groups: dict[tuple[str, str, int], list[Item]] = {}
    for item in items:
        groups.setdefault((item.cell.dataset, item.sample.id, item.epoch), []).append(item)
    batches: list[list[Item]] = []
    current: list[Item] = []
    for group in groups.values():
        current.extend(group)
        if len(current) >= size:
            batches.append(current)
            current = []
    if current:
        batches.append(current)
    return batches


def settle_summary(
    summary: RunSummary, store: Store, run_id: str, generated: list[Item], results: list[ShardResult]
) -> None:
    """A sharded run's summary once its shards have ended: the store is the record (cells, ``ran`` and ``failed``
    from there: a lost shard took its own counts with it), usage and truncations from the shards' own reports."""
    stored = stored_counts(store, run_id)
    for cell, counts in summary.cells.items():
        counts.done, counts.errors = stored.get(cell, (0, 0))
    summary.ran, summary.failed = reported_outcomes(results, len(generated)) or generated_outcomes(
        store, run_id, generated
    )
    summary.usage = UsageLedger()  # the shards' own reports, not a progress line's running sums
    for result in results:
        summary.truncated += result.truncated
        merge_usage(summary.usage, result.usage)


@contextlib.asynccontextmanager
async def driving(
    config: RunConfig,
    store: Store,
    lock: RunLock,
    task: Task,
    datasets: Any,
    *,
    retry_errors: bool,
    progress: Progress | None,
    cache: str | Path | bool | None,
    started: float,
) -> AsyncIterator[Plan]:
    """The driver's part every sharded executor shares, around what it does with the plan it yields: the run begun
    in the store, planned (the plan's totals recorded), and what needs no model (re-scores, reuse of another run's
    rows) finished here as the local runner does; on the way out, the summary's wall time, the run's status
    (finished, interrupted or failed), the progress display stopped and the lock released."""
    status = "finished"
    summary: RunSummary | None = None
    try:
        store.begin_run(config.run_id, config.name, config.task, config.model_dump())
        plan = plan_run(config, store, task=task, datasets=datasets, retry_errors=retry_errors)
        store.set_planned(config.run_id, {cell: counts.total for cell, counts in plan.summary.cells.items()})
        summary = plan.summary
        await _Running(dataclasses.replace(plan, generate=[]), store, lock, None).run(cache)
        if progress:
            progress.start(summary)
        yield plan
        summary.concurrency = config.concurrency
    except BaseException as exc:
        status = "interrupted" if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt) else "failed"
        if summary is not None:
            summary.interrupted = status == "interrupted"
        raise
    finally:
        if summary is not None:
            summary.wall_s = time.perf_counter() - started
        with contextlib.suppress(SQLAlchemyError):
            store.finish_run(config.run_id, status)
        if progress and summary is not None:
            progress.stop(summary)
        with contextlib.suppress(SQLAlchemyError):
            store.unlock_run(lock)
