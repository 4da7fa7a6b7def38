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

* the samples to generate go into one work queue in batches (every cell of one (dataset, sample, epoch) in the
  same batch: identical calls of a sample's cells then meet one worker's single-flight and cache; about eight
  batches a worker, at most :data:`WORK_BATCH_MAX` samples each), and each worker takes the next batch as its
  sample loops free up, keeping ``ceil(concurrency / N)`` in flight: a worker held up by slow samples (a long
  simulated conversation) takes fewer, and the others do the rest;
* each endpoint's cap is split between the workers (``cap // N``, the remainder one each to the first ones), so
  the endpoint never sees more than its cap; a 429 halves the cap of the worker that saw it. N is lowered to
  the smallest cap of the run's models (a worker with no slot could not run) and to the number of samples;
* scoring libraries size their thread pools to each worker's share of the cores (``BEDSIDE_SCORING_THREADS``);
* each worker writes its finished samples to the store itself (PostgreSQL, or SQLite in WAL mode, where each
  transaction waits for the previous one); the response cache file is shared the same way, and the driver holds
  it open while the workers run (its table made before they start; never a worker the last to close it).

``--processes auto`` measures before it chooses: the driver runs the first samples itself (:data:`PROBE_SHARE`
of the work, at least :data:`PROBE_MIN` and at most :data:`PROBE_MAX`; stored like any others) and reads how busy
its event loop was (CPU seconds over wall seconds) and how busy the endpoints were (the mean share of each cap in
flight). A loop that is not busy, or endpoints that already are, gain nothing from more processes: the rest runs
in the driver. Otherwise N is what would bring the busiest endpoint to :data:`TARGET_USE` at the measured rate,
within what the cores hold at the measured load (:func:`cores_hold`), the smallest cap and
:data:`MIN_PER_PROCESS` samples a worker (:func:`choose_processes`); the choice and its figures are logged and
shown.

Ctrl-C (or SIGTERM) stops every worker as it stops the local executor: finished samples are stored, the run is
marked interrupted, and the same command resumes it. A worker that dies (killed, out of memory) fails the run
with its exit code, the others are stopped, and a rerun finishes what it left. The caps' split is static: a
worker that has run out of work keeps its share of each cap unused until the run ends (the queue keeps that to
the last batch or so).
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
import threading
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
AUTO = "auto"
PROBE_SHARE = 0.05
PROBE_MIN = 100
PROBE_MAX = 1000
"""How many samples ``--processes auto`` runs in the driver to measure: 5 % of the work, 100 to 1,000."""
WORK_BATCH_MAX = 64
"""Most samples a worker takes from the work queue at once (fewer on small runs: about eight batches a worker)."""
MIN_PER_PROCESS = 200
"""Fewest samples worth a worker process: each takes about a second to start (a fresh interpreter)."""
BUSY_LOOP = 0.6
"""A loop busier than this (CPU seconds per wall second) is what holds the run back."""
TARGET_USE = 0.9
"""The endpoint use ``auto`` aims at; at or above it, more processes would only queue at the caps."""


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
            limiter = self.limiters[key] = self._new(share)
        elif share < limiter.maximum:  # the strictest configured limit wins
            limiter.maximum = share
            limiter.limit = min(limiter.limit, share)
        return limiter

    def _new(self, maximum: int) -> AdaptiveLimiter:
        return AdaptiveLimiter(maximum)


class _MeasuredCaps(_ShareOfCaps):
    """The driver's endpoint limiters while ``auto`` measures: the whole cap each, and how long each slot was
    taken (requests in flight integrated over time), from which the endpoints' use follows."""

    def __init__(self) -> None:
        super().__init__(0, 1)

    def _new(self, maximum: int) -> AdaptiveLimiter:
        return _Occupancy(maximum)

    def busiest(self, wall_s: float) -> float:
        """The highest share of its cap an endpoint had in flight on average over ``wall_s``."""
        return max(
            (limiter.use(wall_s) for limiter in self.limiters.values() if isinstance(limiter, _Occupancy)),
            default=0.0,
        )


class _Occupancy(AdaptiveLimiter):
    def __init__(self, maximum: int) -> None:
        super().__init__(maximum)
        self.slot_seconds = 0.0
        self._since = time.perf_counter()

    def _account(self) -> None:
        now = time.perf_counter()
        self.slot_seconds += self.in_flight * (now - self._since)
        self._since = now

    def _take(self) -> None:
        self._account()
        super()._take()

    def release(self) -> None:
        self._account()
        super().release()

    def use(self, wall_s: float) -> float:
        self._account()
        return self.slot_seconds / (wall_s * self.maximum) if wall_s > 0 else 0.0


@dataclasses.dataclass(frozen=True)
class AutoChoice:
    """What ``--processes auto`` measured on its first samples and chose for the rest."""

    processes: int
    reason: str
    probed: int = 0
    loop_busy: float = 0.0
    """The driver's CPU seconds per wall second while it ran the probe."""
    cpu_ms_per_sample: float = 0.0
    endpoint_use: float = 0.0
    """The busiest endpoint's mean share of its cap in flight during the probe."""
    cores_hold: int = 0
    """How many such processes the cores hold at the measured load (:func:`cores_hold`)."""

    def __str__(self) -> str:
        measured = (
            f"; the first {self.probed} samples: loop {self.loop_busy:.0%} busy, {self.cpu_ms_per_sample:.2f} ms "
            f"CPU a sample, busiest endpoint {self.endpoint_use:.0%} used, room on the cores for {self.cores_hold}"
            if self.probed
            else ""
        )
        noun = "process" if self.processes == 1 else "processes"
        return f"--processes auto: {self.processes} {noun} ({self.reason}{measured})"


def choose_processes(loop_busy: float, endpoint_use: float, *, cores: int, cap: int, remaining: int) -> tuple[int, str]:
    """How many processes the rest of a run should take, from one process's measured loop and endpoint use, and
    why. Throughput grows with processes while the loop is what limits it, until the busiest endpoint's cap is
    full: ``ceil(TARGET_USE / endpoint_use)``, within the cores, the smallest cap and the samples left."""
    if remaining < 2 * MIN_PER_PROCESS:
        return 1, f"{remaining} samples left: too few for a worker's start-up to pay"
    if endpoint_use >= TARGET_USE:
        return 1, f"the endpoints are already {endpoint_use:.0%} used by one process"
    if loop_busy < BUSY_LOOP:
        return 1, "one process's loop has time to spare: the endpoints, not the loop, set the pace"
    wanted = math.ceil(TARGET_USE / max(endpoint_use, 0.01))
    limits = {
        "the cores": cores,
        "the smallest cap": cap,
        f"{MIN_PER_PROCESS} samples a process": remaining // MIN_PER_PROCESS,
    }
    binding = min(limits, key=limits.__getitem__)
    if limits[binding] < wanted:
        chosen = max(1, limits[binding])
        return chosen, f"one process's loop is the limit; {chosen}, as many as {binding} allow"
    return wanted, f"one process's loop is the limit; {wanted} to bring the busiest endpoint near {TARGET_USE:.0%}"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform says, else all)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def machine_busy_s() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (Linux ``/proc/stat``); None elsewhere."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [float(x) for x in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle and waiting for I/O
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def cores_hold(own_busy: float, others_busy: float | None) -> int:
    """How many processes like the driver the cores this process may use can run at once, if the other work the
    probe saw grows with the run's rate as a model server on the same machine does (a remote endpoint adds none):
    ``floor(cores / (own + others))``, at least 1. ``others_busy`` is in cores, measured while the probe ran (the
    1-minute load average less this process where the machine's own figure is not known). On a 2-core machine
    whose scripted servers took a core's fraction, a second process slowed the run (issue 47)."""
    cores = usable_cores()
    if others_busy is None:
        try:
            others_busy = max(0.0, os.getloadavg()[0] - own_busy)
        except OSError:
            others_busy = 0.0
    return max(1, min(cores, math.floor(cores / max(own_busy + others_busy, 1e-9) + 1e-9)))


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


def parse_processes(value: int | str) -> int | str:
    """``--processes``: a count of at least 1, or ``auto``."""
    if value == AUTO:
        return AUTO
    try:
        count = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"--processes must be a number of processes or 'auto', not {value!r}") from None
    if count < 1:
        raise ValueError(f"--processes must be at least 1 (or 'auto'), not {count}")
    return count


def split_probe(items: list[Item]) -> tuple[list[Item], list[Item]]:
    """``auto``'s first samples (whole samples, every cell of each) and the rest; all of them when the work is too
    small to be worth a second measurement."""
    groups = list(sample_batches(items, 1))
    size = min(PROBE_MAX, max(PROBE_MIN, math.ceil(PROBE_SHARE * len(groups))))
    if len(groups) <= size + 2 * MIN_PER_PROCESS:
        size = len(groups)
    probe = [item for group in groups[:size] for item in group]
    return probe, [item for group in groups[size:] for item in group]


def work_batches(items: list[Item], count: int) -> list[list[Item]]:
    """``items`` in the batches ``count`` workers take from the work queue: whole samples (every cell of one
    (dataset, sample, epoch) together), about eight batches a worker, at most :data:`WORK_BATCH_MAX` samples."""
    groups = list(sample_batches(items, 1))
    size = max(1, min(WORK_BATCH_MAX, len(groups) // (8 * max(count, 1))))
    return [[item for group in groups[i : i + size] for item in group] for i in range(0, len(groups), size)]


def _next_batch(work: Any, stop: threading.Event) -> list[Item] | None:
    """The next batch from the work queue (None: no more), waiting in short steps so a stopping worker's thread
    does not stay blocked."""
    while not stop.is_set():
        with contextlib.suppress(queue.Empty):
            return work.get(timeout=0.2)  # type: ignore[no-any-return]
    return None


async def _feed(work: Any, running: ShardRunning, loops: int) -> None:
    """Move batches from the work queue to the worker's sample loops as they free up: the local queue holds as
    many samples as the worker has loops, so a worker takes little more than it is about to run; then one end
    mark per loop."""
    stop = threading.Event()
    try:
        while (batch := await asyncio.to_thread(_next_batch, work, stop)) is not None:
            for item in batch:
                await running.queue.put(item)
        for _ in range(loops):
            await running.queue.put(None)
    finally:
        stop.set()


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


def _worker_main(order: _ShardOrder, results: Any, work: Any) -> None:
    """A worker process: run its share of the work queue, put ``("ok", index, ShardResult)`` or ``("error",
    index, message)``."""
    from bedside.retrieval.embeddings import THREADS_ENV

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver stops its workers with SIGTERM, once, in order
    os.environ.setdefault(THREADS_ENV, str(max(1, (os.cpu_count() or 1) // order.count)))
    install_limiter_factory(_ShareOfCaps(order.index, order.count))
    try:
        result = asyncio.run(_run_shard(order, work=work))
    except BaseException as exc:  # reported to the driver, which fails the run with it
        results.put(("error", order.index, f"{type(exc).__name__}: {exc}"))
        return
    results.put(("ok", order.index, result))


async def _run_shard(order: _ShardOrder, *, work: Any = None, in_driver: bool = False) -> ShardResult:
    """Run ``order.items``, or what the ``work`` queue hands out; in a worker process, or ``in_driver``
    (``auto``'s probe and a run it keeps to one process), where Ctrl-C and SIGTERM stay the CLI's."""
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
        feeding = None
        if work is None:
            for item in order.items:
                running.queue.put_nowait(item)
            for _ in range(per_worker.concurrency):
                running.queue.put_nowait(None)
        else:
            running.queue = asyncio.Queue(maxsize=per_worker.concurrency)
            feeding = asyncio.ensure_future(_feed(work, running, per_worker.concurrency))
        main = asyncio.ensure_future(running.run(order.cache))
        if not in_driver:
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main.cancel)
        try:
            await main
        finally:
            if feeding is not None:
                feeding.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await feeding
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

    def __init__(
        self, orders: list[_ShardOrder], batches: list[list[Item]], store: Store, run_id: str,
        progress: Progress | None,
    ) -> None:  # fmt: skip
        context = multiprocessing.get_context("spawn")  # no copy of the driver's threads, loop or connections
        self.results: Any = context.Queue()
        self.work: Any = context.Queue()
        for batch in batches:
            self.work.put(batch)
        for _ in orders:
            self.work.put(None)  # one end mark a worker
        self.processes = [
            context.Process(
                target=_worker_main, args=(order, self.results, self.work), name=f"bedside-worker-{order.index}"
            )
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
        finally:
            # Batches no worker took (an interrupt, a worker that failed) stay unsent: the driver must not wait at
            # exit for a reader that is gone.
            self.work.cancel_join_thread()
            self.work.close()
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
        _follow_store(self.store, self.run_id, summary, self.progress)

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


def _follow_store(store: Store, run_id: str, summary: RunSummary, progress: Progress | None) -> None:
    """The progress line from the store, which every shard writes to."""
    if progress is None:
        return
    with contextlib.suppress(SQLAlchemyError):
        for cell, (done, errors) in stored_counts(store, run_id).items():
            if cell in summary.cells:
                summary.cells[cell].done, summary.cells[cell].errors = done, errors
        progress.update(summary)


async def _in_driver(order: _ShardOrder, store: Store, summary: RunSummary, progress: Progress | None) -> ShardResult:
    """A shard run in the driver, with the progress line followed from the store as the workers' is."""
    shard = asyncio.ensure_future(_run_shard(order, in_driver=True))
    try:
        while not shard.done():
            await asyncio.wait([shard], timeout=0.5)
            _follow_store(store, order.config.run_id, summary, progress)
        return shard.result()
    finally:
        if not shard.done():  # interrupted: the shard stores what it finished before the driver goes on
            shard.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await shard


async def _probe(
    order: _ShardOrder, store: Store, summary: RunSummary, progress: Progress | None, *, remaining: int
) -> tuple[ShardResult, AutoChoice]:
    """``auto``'s first samples, run in the driver with its endpoints' use measured, and the choice for the rest."""
    caps = _MeasuredCaps()
    install_limiter_factory(caps)
    machine_before = machine_busy_s()
    try:
        result = await _in_driver(order, store, summary, progress)
    finally:
        install_limiter_factory(None)
    machine_after = machine_busy_s()
    wall = max(result.finished - result.started, 1e-9)
    busy, use = result.cpu_s / wall, caps.busiest(wall)
    others = (
        None
        if machine_before is None or machine_after is None
        else max(0.0, (machine_after - machine_before - result.cpu_s) / wall)
    )
    free = cores_hold(busy, others)
    count, reason = choose_processes(busy, use, cores=free, cap=smallest_cap(order.config), remaining=remaining)
    probed = len(order.items)
    choice = AutoChoice(count, reason, probed, busy, 1000 * result.cpu_s / max(probed, 1), use, free)
    log.info("%s", choice)
    return result, choice


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
    processes: int | str,
    store: Store | None = None,
    task: Task | None = None,
    retry_errors: bool = False,
    progress: Progress | None = None,
    cache: str | Path | bool | None = True,
    on_shards: Callable[[list[ShardResult]], None] | None = None,
    on_choice: Callable[[AutoChoice], None] | None = None,
) -> RunSummary:
    """Run (or resume) ``config`` with its samples split over ``processes`` worker processes (``"auto"``: as
    many as its first samples show will pay; see the module docstring); returns the same summary as
    :func:`bedside.runs.runner.execute`. ``on_shards`` receives each shard's figures (CPU, memory, counts) when
    all have finished, ``on_choice`` what ``auto`` measured and chose. The task is resolved by name in each
    worker (``config.task``)."""
    processes = parse_processes(processes)
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
            rest, count = plan.generate, processes

            def order(index: int, of: int, items: list[Item]) -> _ShardOrder:
                return _ShardOrder(index, of, config, plan.scorers, plan.cells, lock, cache, plan.bypass, items)

            if rest and processes == AUTO:
                probe, rest = split_probe(rest)
                if rest:
                    left = sum(1 for _ in sample_batches(rest, 1))
                    result, choice = await _probe(order(0, 1, probe), store, plan.summary, progress, remaining=left)
                else:
                    result = await _in_driver(order(0, 1, probe), store, plan.summary, progress)
                    choice = AutoChoice(1, f"{len(probe)} samples: too few to measure, run in this process")
                results.append(result)
                if on_choice is not None:
                    on_choice(choice)
                count = choice.processes
            if rest and count == 1 and processes == AUTO:
                results.append(await _in_driver(order(0, 1, rest), store, plan.summary, progress))
            elif rest:
                batches = work_batches(rest, int(count))
                workers = min(int(count), smallest_cap(config), len(batches))
                orders = [order(i, workers, []) for i in range(workers)]
                with _cache_held_open(cache):
                    results += await _Workers(orders, batches, store, config.run_id, progress).run(plan.summary)
            settle_summary(plan.summary, store, config.run_id, plan.generate, results)
            if on_shards is not None:
                on_shards(results)
        return plan.summary
    finally:
        if own_store:
            store.close()


__all__ = [
    "AUTO",
    "AutoChoice",
    "ProcessExecutorError",
    "choose_processes",
    "execute_processes",
    "parse_processes",
    "smallest_cap",
    "split_probe",
    "work_batches",
]
