"""Run a config on several processes of this machine, without Ray: one plan, its samples split over N worker
processes, one store.

``bedside run CONFIG --processes N``. Why: one process runs every sample on one event loop, and at a few hundred
microseconds of CPU a sample (building requests, parsing answers, caching, storing) that loop, not the endpoint,
caps a run of fast calls: on a 16-core machine the local executor kept two 50 ms endpoints about half busy
(issue 47). Ray spreads the loop over processes too, but pays its start-up and a limits actor.

What is the same as the local executor, because it is the same code: the plan (in this process, the driver),
the run's lock (held by the driver, renewed by the workers), what needs no model (re-scores, reuse: finished in
the driver), and every sample's run, scoring, error handling and writing (each worker runs the runner's own
sample loop, :class:`bedside.runs.shards.ShardRunning`), so the stored outputs and scores are the local
executor's, sample by sample.

How the work and the caps are shared:

* the samples to generate are dealt to the workers in turn, every cell of one (dataset, sample, epoch) to the
  same worker (identical calls of a sample's cells then meet one worker's single-flight and cache); each worker
  keeps ``ceil(concurrency / N)`` in flight;
* each endpoint's cap is split between the workers (``cap // N``, the remainder one each to the first ones), so
  the endpoint never sees more than its cap; a 429 halves the cap of the worker that saw it. N is lowered to
  the smallest cap of the run's models (a worker with no slot could not run) and to the number of samples;
* scoring libraries size their thread pools to each worker's share of the cores (``BEDSIDE_SCORING_THREADS``);
* each worker writes its finished samples to the store itself (PostgreSQL, or SQLite in WAL mode, where each
  transaction waits for the previous one); the response cache file is shared the same way, and the driver holds
  it open while the workers run (its table made before they start; never a worker the last to close it).

Ctrl-C (or SIGTERM) stops every worker as it stops the local executor: finished samples are stored, the run is
marked interrupted, and the same command resumes it. A worker that dies (killed, out of memory) fails the run
with its exit code, the others are stopped, and a rerun finishes what it left. The split is static: a worker
that finishes early does not take over another's samples, and its share of the caps stays unused until the run
ends (deal-in-turn keeps the workers' loads within a sample of each other).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import multiprocessing
import os
import queue
import resource
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from bedside.llm.cache_postgres import open_cache
from bedside.llm.limiter import AdaptiveLimiter, install_limiter_factory
from bedside.runs.config import RunConfig
from bedside.runs.registry import resolve_task
from bedside.runs.runner import (
    Cell,
    CellProgress,
    Item,
    Plan,
    Progress,
    RunSummary,
    _settings,
    cache_location,
    check_config,
    load_datasets,
    locked_store,
)
from bedside.runs.shards import (
    ShardResult,
    ShardRunning,
    driving,
    sample_batches,
    settle_summary,
    stored_counts,
    usage_of,
)
from bedside.runs.store import RunLock, Store
from bedside.runs.task import Task

log = logging.getLogger("bedside.runs")

STOP_GRACE_S = 120.0
"""How long stopped workers get to store their finished samples before they are killed."""


class ProcessExecutorError(RuntimeError):
    """A worker process failed: the run stops, the others are stopped, finished samples are kept."""


class _ShareOfCaps:
    """The endpoint limiters of worker ``index`` of ``count``: its share of each endpoint's cap, one limiter per
    endpoint in the process (as :func:`bedside.llm.limiter.endpoint_limiter` keeps them)."""

    def __init__(self, index: int, count: int) -> None:
        self.index, self.count = index, count
        self.limiters: dict[tuple[str, str], AdaptiveLimiter] = {}

    def share(self, maximum: int) -> int:
        return maximum // self.count + (1 if self.index < maximum % self.count else 0)

    def __call__(self, key: tuple[str, str], maximum: int) -> AdaptiveLimiter:
        share = self.share(maximum)
        if share < 1:  # the driver lowers N to the smallest cap it can see; a pool's replica cap it cannot
            log.warning("worker %d: endpoint %s's cap %d is below %d workers; this worker takes 1", self.index,
                        key[1], maximum, self.count)  # fmt: skip
            share = 1
        limiter = self.limiters.get(key)
        if limiter is None:
            limiter = self.limiters[key] = AdaptiveLimiter(share)
        elif share < limiter.maximum:  # the strictest configured limit wins
            limiter.maximum = share
            limiter.limit = min(limiter.limit, share)
        return limiter


def smallest_cap(config: RunConfig) -> int:
    """The smallest endpoint cap the run's config sets (each role's ``max_concurrency``, else the run's
    ``concurrency``, as :func:`bedside.runs.runner.build_models` sets it; a pool's ``replica_max_concurrency``)."""
    caps = [config.concurrency]
    for role in config.models:
        options = config.model_options.get(role, {})
        caps.append(int(options.get("max_concurrency") or config.concurrency))
        if options.get("replica_max_concurrency"):
            caps.append(int(options["replica_max_concurrency"]))
    return max(1, min(caps))


def deal(items: list[Item], count: int) -> list[list[Item]]:
    """``items`` dealt to ``count`` workers in turn, one (dataset, sample, epoch) at a time with all its cells."""
    shares: list[list[Item]] = [[] for _ in range(count)]
    for turn, group in enumerate(sample_batches(items, 1)):
        shares[turn % count].extend(group)
    return [share for share in shares if share]


@dataclasses.dataclass(frozen=True)
class _ShardOrder:
    """What a worker process is given (pickled to it): its share of the samples and how to run them."""

    index: int
    count: int
    config: RunConfig
    scorers: list[str]
    cells: list[Cell]
    lock: RunLock
    cache: str | Path | bool | None
    bypass: dict[str, list[str]]
    items: list[Item]


def _worker_main(order: _ShardOrder, results: Any) -> None:
    """A worker process: run the shard, put ``("ok", index, ShardResult)`` or ``("error", index, message)``."""
    from bedside.retrieval.embeddings import THREADS_ENV

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver stops its workers with SIGTERM, once, in order
    os.environ.setdefault(THREADS_ENV, str(max(1, (os.cpu_count() or 1) // order.count)))
    install_limiter_factory(_ShareOfCaps(order.index, order.count))
    try:
        result = asyncio.run(_run_shard(order))
    except BaseException as exc:  # reported to the driver, which fails the run with it
        results.put(("error", order.index, f"{type(exc).__name__}: {exc}"))
        return
    results.put(("ok", order.index, result))


async def _run_shard(order: _ShardOrder) -> ShardResult:
    cpu_start, started = time.process_time(), time.time()
    config = order.config
    task = resolve_task(config.task)
    store = Store(config.store)
    try:
        per_worker = config.model_copy(update={"concurrency": max(1, math.ceil(config.concurrency / order.count))})
        summary = RunSummary(config.run_id, {c.id: CellProgress(0) for c in order.cells})
        settings = {role: _settings(config, role) for role in config.models}
        plan = Plan(per_worker, task, order.scorers, order.cells, settings, summary, generate=[], bypass=order.bypass)
        running = ShardRunning(plan, store, order.lock, config, order.cache)
        for item in order.items:
            running.queue.put_nowait(item)
        for _ in range(per_worker.concurrency):
            running.queue.put_nowait(None)
        main = asyncio.ensure_future(running.run(order.cache))
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main.cancel)
        await main
    finally:
        store.close()
    return ShardResult(
        index=order.index,
        ran=summary.ran,
        truncated=summary.truncated,
        skipped=0,
        cells={cell: (c.done, c.errors) for cell, c in summary.cells.items()},
        usage=usage_of(summary),
        pid=os.getpid(),
        cpu_s=time.process_time() - cpu_start,
        max_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        started=started,
        finished=time.time(),
    )


class _Workers:
    """The driver's side: start the worker processes, follow the store for progress, collect their reports,
    and stop them all on an interrupt or on the first that fails."""

    def __init__(self, orders: list[_ShardOrder], store: Store, run_id: str, progress: Progress | None) -> None:
        context = multiprocessing.get_context("spawn")  # no copy of the driver's threads, loop or connections
        self.results: Any = context.Queue()
        self.processes = [
            context.Process(target=_worker_main, args=(order, self.results), name=f"bedside-worker-{order.index}")
            for order in orders
        ]
        self.store, self.run_id, self.progress = store, run_id, progress
        self.reports: dict[int, ShardResult] = {}

    async def run(self, summary: RunSummary) -> list[ShardResult]:
        for process in self.processes:
            process.start()
        try:
            await self._collect(summary)
        except BaseException:
            await asyncio.shield(asyncio.to_thread(self.stop))
            raise
        return [self.reports[i] for i in sorted(self.reports)]

    async def _collect(self, summary: RunSummary) -> None:
        waiting = set(range(len(self.processes)))
        while waiting:
            try:
                status, index, payload = await asyncio.to_thread(self.results.get, True, 0.5)
            except queue.Empty:
                self._follow(summary)
                self._check_alive(waiting)
                continue
            waiting.discard(index)
            if status == "error":
                raise ProcessExecutorError(f"worker process {index} failed: {payload}")
            self.reports[index] = payload
            self._follow(summary)

    def _check_alive(self, waiting: set[int]) -> None:
        """A worker that died without a report (killed, out of memory) fails the run."""
        for index in waiting:
            process = self.processes[index]
            if not process.is_alive() and process.exitcode not in (None, 0):
                raise ProcessExecutorError(
                    f"worker process {index} (pid {process.pid}) exited with code {process.exitcode}; finished "
                    "samples are stored: run the same command again to finish the rest"
                )

    def _follow(self, summary: RunSummary) -> None:
        """The progress line from the store, which every worker writes to."""
        if self.progress is None:
            return
        with contextlib.suppress(SQLAlchemyError):
            for cell, (done, errors) in stored_counts(self.store, self.run_id).items():
                if cell in summary.cells:
                    summary.cells[cell].done, summary.cells[cell].errors = done, errors
            self.progress.update(summary)

    def stop(self) -> None:
        """SIGTERM to every worker still running (each stores what it finished), then wait; kill after
        :data:`STOP_GRACE_S`."""
        for process in self.processes:
            if process.is_alive() and process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for process in self.processes:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(timeout=10)


@contextlib.contextmanager
def _cache_held_open(cache: str | Path | bool | None) -> Iterator[None]:
    """The response cache opened by the driver while its workers run. Its table then exists before they start,
    so they never race to create it, and the driver's connection outlives theirs: a worker closing early is
    never SQLite's last connection, whose close checkpoints and removes the ``-wal`` file while another worker
    may be opening it."""
    location = cache_location(cache)
    if location is None or str(location) == ":memory:":
        yield
        return
    held = open_cache(location)
    try:
        yield
    finally:
        held.close()


async def execute_processes(
    config: RunConfig,
    *,
    processes: int,
    store: Store | None = None,
    task: Task | None = None,
    retry_errors: bool = False,
    progress: Progress | None = None,
    cache: str | Path | bool | None = True,
    on_shards: Callable[[list[ShardResult]], None] | None = None,
) -> RunSummary:
    """Run (or resume) ``config`` with its samples split over ``processes`` worker processes; returns the same
    summary as :func:`bedside.runs.runner.execute`. ``on_shards`` receives each worker's figures (CPU, memory,
    counts) when all have finished. The task is resolved by name in each worker (``config.task``)."""
    if processes < 1:
        raise ValueError("--processes must be at least 1")
    if store is None and config.store == ":memory:":
        raise ProcessExecutorError("an in-memory SQLite store cannot be shared by worker processes: give a file")
    started = time.perf_counter()
    task = task or resolve_task(config.task)
    check_config(config, task)
    datasets = load_datasets(config, task)
    own_store = store is None
    store, lock = locked_store(config, store)
    try:
        async with driving(
            config, store, lock, task, datasets, retry_errors=retry_errors, progress=progress, cache=cache,
            started=started,
        ) as plan:  # fmt: skip
            results: list[ShardResult] = []
            if plan.generate:
                shares = deal(plan.generate, min(processes, smallest_cap(config)))
                orders = [
                    _ShardOrder(i, len(shares), config, plan.scorers, plan.cells, lock, cache, plan.bypass, share)
                    for i, share in enumerate(shares)
                ]
                with _cache_held_open(cache):
                    results = await _Workers(orders, store, config.run_id, progress).run(plan.summary)
            settle_summary(plan.summary, store, config.run_id, plan.generate, results)
            if on_shards is not None:
                on_shards(results)
        return plan.summary
    finally:
        if own_store:
            store.close()


__all__ = ["ProcessExecutorError", "deal", "execute_processes", "smallest_cap"]
