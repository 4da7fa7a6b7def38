"""Run dashboards computed off the event loop, once per run and store version.

A dashboard (the run's report with its bootstrap intervals, the spread over models, and every matplotlib plot)
takes seconds on a large run. Computed inside a request handler it would hold the server's single event loop,
so one admin opening a dashboard would stall every annotator's item page. Here it is computed in a worker
*process* (a ``spawn`` pool): the loop only awaits the result, the computation does not contend for the web
process's GIL (and runs at a lower CPU priority, :data:`WORKER_NICENESS`), and matplotlib's pyplot state
(which the tasks' own plots use and which is not thread-safe)
lives in a process that draws one dashboard at a time.

Results are cached per run under its store version (sample count, error count, status, last update): a
finished run's dashboard is computed once and then served from memory; a running run's is recomputed when a
request finds that its version changed. Concurrent requests for the same run and version share one
computation. A store the worker cannot open by its URL (an in-memory SQLite database) is computed in a thread
instead, one dashboard at a time, still off the loop.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from bedside.runs.report import OverModels, RunReport, build_report, over_models, plots
from bedside.runs.store import Store

Version = tuple[Any, ...]


@dataclass
class Dashboard:
    """Everything a run's dashboard page shows beyond its summary: picklable, so a worker process can return it."""

    report: RunReport
    spread: list[OverModels]
    images: list[tuple[str, str]]


def compute_dashboard(location: str, run_id: str) -> Dashboard:
    """Build one run's dashboard from the store at ``location`` (runs in a worker, with its own engine)."""
    store = Store(location)
    try:
        return dashboard_of(store, run_id)
    finally:
        store.close()


def dashboard_of(store: Store, run_id: str) -> Dashboard:
    report = build_report(store, run_id)
    return Dashboard(report, over_models(report), plots(report))


def run_version(run: dict[str, Any]) -> Version:
    """What identifies a run's stored state, as listed by :meth:`Store.runs`."""
    return (run["samples"], run["errors"], run["status"], run["updated_at"])


WORKER_NICENESS = 10
"""How much lower the dashboard workers' CPU priority is than the server's: on a machine with fewer free cores
than busy processes, the scheduler then gives the pages people are waiting on the CPU first, and a dashboard
takes longer instead."""


def _lower_priority() -> None:
    """A worker's initializer: lower its own CPU priority (POSIX ``nice``; elsewhere nothing changes)."""
    import contextlib
    import os

    with contextlib.suppress(AttributeError, OSError):
        os.nice(WORKER_NICENESS)


def _in_memory(url: str) -> bool:
    return url.startswith("sqlite") and (url.endswith(":memory:") or url in ("sqlite://", "sqlite:///"))


class Dashboards:
    """The dashboards of one app: a worker pool, the cache by run and version, and the computations in flight.

    The cache and the in-flight table are touched only from the event loop's thread, so they need no lock.
    ``computed`` counts finished computations (tests use it to see that a cached dashboard was not redrawn).
    """

    def __init__(self, store: Store, workers: int = 1) -> None:
        self.store = store
        self.workers = max(1, workers)
        self.computed = 0
        self._cache: dict[str, tuple[Version, Dashboard]] = {}
        self._pending: dict[tuple[str, Version], asyncio.Future[Dashboard]] = {}
        self._executor: Executor | None = None
        self._one_at_a_time = threading.Lock()

    def cached(self, run: dict[str, Any]) -> Dashboard | None:
        found = self._cache.get(run["id"])
        return found[1] if found is not None and found[0] == run_version(run) else None

    async def get(self, run: dict[str, Any]) -> Dashboard:
        """``run``'s dashboard (a row of :meth:`Store.runs`): from the cache, or computed off the loop."""
        ready = self.cached(run)
        if ready is not None:
            return ready
        version = run_version(run)
        key = (run["id"], version)
        pending = self._pending.get(key)
        if pending is None:
            loop = asyncio.get_running_loop()
            pending = asyncio.wrap_future(self._submit(run["id"]), loop=loop)
            self._pending[key] = pending
            pending.add_done_callback(self._finished(key))
        # shield: a client that goes away does not cancel the computation others (or the cache) wait for
        return await asyncio.shield(pending)

    def _finished(self, key: tuple[str, Version]) -> Callable[[asyncio.Future[Dashboard]], None]:
        def done(future: asyncio.Future[Dashboard]) -> None:
            self._pending.pop(key, None)
            if future.cancelled() or future.exception() is not None:
                return
            self.computed += 1
            run_id, version = key
            current = self._cache.get(run_id)
            if current is None or current[0] != version:
                self._cache[run_id] = (version, future.result())

        return done

    def _submit(self, run_id: str) -> Any:
        if _in_memory(self.store.url):
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bedside-dashboard")
            return self._executor.submit(self._in_thread, run_id)
        if self._executor is None:
            spawn = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=spawn, initializer=_lower_priority
            )
        return self._executor.submit(compute_dashboard, self.store.url, run_id)

    def _in_thread(self, run_id: str) -> Dashboard:
        with self._one_at_a_time:  # pyplot's global state: one dashboard at a time in this process
            return dashboard_of(self.store, run_id)

    def close(self) -> None:
        """Stop the workers (the app's shutdown); computations in flight are cancelled."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
