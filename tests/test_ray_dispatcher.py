"""The Ray driver's work queue (:class:`_Dispatcher`) without Ray: a scripted stand-in for the few ``ray`` calls the
driver makes decides when each worker's calls answer and when a worker is lost, so interleavings that a real
cluster produces only by chance are placed exactly. The one that once dropped samples: a worker is lost after the
other has finished its work, while Ray still counts the finishing worker's CPU as taken; its samples must wait in
the queue and run on a worker started once the CPU is free (no sleeps, no timing is asserted)."""

from __future__ import annotations

import asyncio
import logging
import sys
import types
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import pytest

from bedside.runs import ray_executor
from bedside.runs.ray_executor import BatchAnswer, RayExecutorError, _Dispatcher
from bedside.runs.runner import CellProgress, RunSummary

CELL = "synthetic/echo/m"


class _RayActorError(Exception):
    """Stands in for ``ray.exceptions.RayActorError``: the worker (or its node) is gone."""


class _RayTaskError(Exception):
    """Stands in for ``ray.exceptions.RayTaskError``: the worker raised (it is not lost)."""


@dataclass(eq=False)
class _Ref:
    """An object ref: answered (``value``), lost (``lost``), or still pending (neither)."""

    worker: _Actor
    kind: str
    items: list[Any] = field(default_factory=list)
    value: Any = None
    answered: bool = False
    lost: bool = False

    def hex(self) -> str:
        return f"ref-{id(self):x}"


class _ClientRef:
    """What Ray Client's ``wait`` hands back: a new object for the same result (same ``hex()``)."""

    def __init__(self, ref: _Ref) -> None:
        self.ref = ref

    def hex(self) -> str:
        return self.ref.hex()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ref, name)


@dataclass(eq=False)
class _Actor:
    index: int
    name: str
    refs: list[_Ref] = field(default_factory=list)
    killed: bool = False
    calls: int = 0

    @property
    def life(self) -> int:
        """The life the driver named the actor with (``<worker name>-<life>``)."""
        return int(self.name.rsplit("-", 1)[1])

    def _method(self, kind: str) -> Any:
        actor = self

        class _Remote:
            @staticmethod
            def remote(*args: Any) -> _Ref:
                ref = _Ref(actor, kind, list(args[0]) if kind == "run_batch" else [])
                actor.refs.append(ref)
                return ref

        return _Remote

    def __getattr__(self, name: str) -> Any:
        if name in ("start", "run_batch", "finish"):
            return self._method(name)
        raise AttributeError(name)


class _FakeRay(types.ModuleType):
    """``ray.wait``/``get``/``kill``/``available_resources`` over :class:`_Ref`s; before answering a blocking
    ``wait``, ``script`` moves the scenario on one step by answering or losing refs and setting the free CPUs."""

    def __init__(self, script: Callable[[_FakeRay], None]) -> None:
        super().__init__("ray")
        self.script = script
        self.actors: list[_Actor] = []
        self.free_cpus = 0.0
        self.ran: Counter[str] = Counter()
        """Each item's key, counted once per batch a worker answered: what was run and stored."""
        self.waiting = 0
        """The samples a worker says it still has waiting when it answers a batch."""
        self.client = False
        """Answer ``wait`` as Ray Client does: with new ref objects for the same results."""
        self.exceptions = SimpleNamespace(
            RayActorError=_RayActorError,
            WorkerCrashedError=_RayActorError,
            ObjectLostError=_RayActorError,
            RayTaskError=_RayTaskError,
        )

    def remote_class(self) -> Any:
        fake = self

        class _Options:
            def __init__(self, **options: Any) -> None:
                self.options = options

            def remote(self, index: int, token: str) -> _Actor:
                actor = _Actor(index, self.options["name"])
                fake.actors.append(actor)
                return actor

        return SimpleNamespace(options=lambda **options: _Options(**options))

    def answer(self, ref: _Ref) -> None:
        if ref.kind == "run_batch":
            ref.worker.calls += len(ref.items)  # one model call a sample, counted by the worker as it goes
            usage = {"system": {"calls": ref.worker.calls, "requests": ref.worker.calls}}
            ref.value = BatchAnswer({CELL: (len(ref.items), 0)}, waiting=self.waiting, usage=usage)
            self.ran.update(item.key for item in ref.items)
        else:
            ref.value = 1 if ref.kind == "start" else SimpleNamespace(index=ref.worker.index)
        ref.answered = True

    def pending(self, actor: _Actor, kind: str | None = None) -> list[_Ref]:
        return [r for r in actor.refs if not (r.answered or r.lost) and kind in (None, r.kind)]

    def wait(self, refs: list[Any], num_returns: int = 1, timeout: float | None = None) -> tuple[list[Any], ...]:
        if timeout != 0:  # the driver's blocking wait moves the scenario on; its follow-up poll only reads
            self.script(self)
        refs = [r.ref if isinstance(r, _ClientRef) else r for r in refs]
        ready = [r for r in refs if r.answered or r.lost]
        rest = [r for r in refs if r not in ready]
        if self.client:
            return [_ClientRef(r) for r in ready], [_ClientRef(r) for r in rest]
        return ready, rest

    def get(self, ref: Any) -> Any:
        ref = ref.ref if isinstance(ref, _ClientRef) else ref
        if ref.lost:
            raise _RayActorError(f"worker {ref.worker.name} died")
        return ref.value

    def kill(self, actor: _Actor, no_restart: bool = True) -> None:
        actor.killed = True

    def available_resources(self) -> dict[str, float]:
        return {"CPU": self.free_cpus}


def _items(n: int) -> list[Any]:
    return [
        SimpleNamespace(
            cell=SimpleNamespace(id=CELL, dataset="synthetic"), sample=SimpleNamespace(id=f"s{i}"), epoch=0, key=f"k{i}"
        )
        for i in range(n)
    ]


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[_FakeRay], None]], _FakeRay]:
    """Install a :class:`_FakeRay` as ``ray`` for the dispatcher, with ``script`` driving it; the store lookup of
    what a lost worker already stored reads what the fake workers answered."""

    def install(script: Callable[[_FakeRay], None]) -> _FakeRay:
        fake = _FakeRay(script)
        monkeypatch.setitem(sys.modules, "ray", fake)
        monkeypatch.setattr(ray_executor, "_worker_class_remote", fake.remote_class)

        def not_yet_stored(store: Any, run_id: str, items: list[Any], retry_errors: bool) -> tuple[list[Any], int]:
            todo = [item for item in items if not fake.ran[item.key]]
            return todo, len(items) - len(todo)

        monkeypatch.setattr(ray_executor, "not_yet_stored", not_yet_stored)
        return fake

    return install


def _dispatcher(
    items: list[Any], workers: int, *, concurrency: int | None = None, batch_size: int | None = 1
) -> tuple[_Dispatcher, RunSummary]:
    """A dispatcher over ``items``: one item a batch unless asked otherwise (``batch_size=None``: sized from the
    run, as a real run's)."""
    config = SimpleNamespace(run_id="run-1", concurrency=concurrency or 2 * workers)
    plan = SimpleNamespace(generate=items, bypass={}, scorers=[], cells=[])
    dispatcher = _Dispatcher(
        config=cast(Any, config),
        task=None,
        plan=cast(Any, plan),
        lock=cast(Any, None),
        store=cast(Any, None),
        cache=None,
        retry_errors=False,
        workers=workers,
        worker_cpus=1.0,
        token="t",
        progress=None,
        batch_size=batch_size,
    )
    return dispatcher, RunSummary("run-1", {CELL: CellProgress(len(items))})


def _lost_after_the_other_finished(fake: _FakeRay) -> None:
    """Worker 0 runs everything it is given; worker 1 holds its batches until worker 0 is finishing, then is lost
    while worker 0's CPU is still counted as taken; worker 0's finish answers only after that, freeing its CPU;
    a worker started later runs what it is given."""
    first, second = fake.actors[0], fake.actors[1]
    for actor in fake.actors:
        for ref in fake.pending(actor, "start"):
            fake.answer(ref)
    for ref in fake.pending(first, "run_batch"):
        fake.answer(ref)
    finishing = fake.pending(first, "finish")
    if finishing and fake.pending(second, "run_batch"):
        for ref in fake.pending(second):
            ref.lost = True  # worker 1 (its node) is gone; Ray still counts worker 0's CPU as taken
        return
    if finishing and not fake.pending(second):
        fake.answer(finishing[0])
        fake.free_cpus = 1.0  # worker 0's CPU, in Ray's view once its finish is done
        return
    for actor in fake.actors[2:]:
        for ref in fake.pending(actor):
            fake.answer(ref)


def test_a_worker_lost_after_the_other_finished_has_its_samples_run_by_a_new_worker(
    fake_ray: Callable[[Callable[[_FakeRay], None]], _FakeRay], caplog: pytest.LogCaptureFixture
) -> None:
    fake = fake_ray(_lost_after_the_other_finished)
    items = _items(6)
    dispatcher, summary = _dispatcher(items, workers=2)
    with caplog.at_level(logging.WARNING, logger=ray_executor.log.name):
        asyncio.run(dispatcher.run(summary))

    assert fake.ran == Counter({item.key: 1 for item in items})  # every sample run once: none lost, none twice
    assert [(a.index, a.life) for a in fake.actors] == [(0, 0), (1, 0), (0, 1)]  # worker 0 started again
    assert fake.actors[1].killed
    assert not fake.pending(fake.actors[2])
    assert dispatcher.lost == 1
    assert dispatcher.retried == 3  # worker 1's three samples, none of which it had stored
    assert not dispatcher.queue
    assert not dispatcher.live
    assert [r.index for r in dispatcher.results] == [0, 0]  # worker 0, then its successor, each finished
    assert summary.cells[CELL].done == 6
    messages = [r.getMessage() for r in caplog.records]
    assert any("Ray worker 1 lost" in m and "3 of its samples requeued" in m for m in messages)
    assert any("3 requeued sample(s) left after the other Ray workers finished" in m for m in messages)


def test_leftovers_with_no_cpu_ever_free_are_refused_plainly(
    fake_ray: Callable[[Callable[[_FakeRay], None]], _FakeRay], monkeypatch: pytest.MonkeyPatch
) -> None:
    def script(fake: _FakeRay) -> None:
        _lost_after_the_other_finished(fake)
        fake.free_cpus = 0.0  # another job took the CPU worker 0 gave back

    fake = fake_ray(script)
    monkeypatch.setattr(ray_executor, "LEFTOVER_WAIT_TRIES", 1)
    dispatcher, summary = _dispatcher(_items(6), workers=2)
    with pytest.raises(RayExecutorError, match=r"no free CPU to start another: 3 sample\(s\) not run"):
        asyncio.run(dispatcher.run(summary))
    assert sum(fake.ran.values()) == 3
    assert len(fake.actors) == 2  # no worker was started without a CPU for it


def test_a_worker_lost_while_a_cpu_is_free_is_replaced_at_once(
    fake_ray: Callable[[Callable[[_FakeRay], None]], _FakeRay], caplog: pytest.LogCaptureFixture
) -> None:
    def script(fake: _FakeRay) -> None:
        first = fake.actors[0]
        for actor in fake.actors:
            for ref in fake.pending(actor, "start"):
                fake.answer(ref)
        if len(fake.actors) == 1:
            stored = next(ref for ref in first.refs if ref.kind == "run_batch")
            fake.ran.update(item.key for item in stored.items)  # its first batch is stored, then the node goes
            for ref in fake.pending(first):
                ref.lost = True
            fake.free_cpus = 1.0
            return
        for ref in fake.pending(fake.actors[-1]):
            fake.answer(ref)

    fake = fake_ray(script)
    items = _items(4)
    dispatcher, summary = _dispatcher(items, workers=1)
    with caplog.at_level(logging.WARNING, logger=ray_executor.log.name):
        asyncio.run(dispatcher.run(summary))
    assert fake.ran == Counter({item.key: 1 for item in items})
    assert dispatcher.lost == 1
    assert dispatcher.retried == 2
    assert [(a.index, a.life) for a in fake.actors] == [(0, 0), (0, 1)]
    assert any("Ray worker 0 restarted (life 1)" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(("waiting", "most"), [(0, _Dispatcher.MAX_PREFETCH), (1, _Dispatcher.PREFETCH)])
def test_a_worker_that_runs_dry_is_kept_more_batches_up_to_the_most(
    fake_ray: Callable[[Callable[[_FakeRay], None]], _FakeRay], waiting: int, most: int
) -> None:
    """A batch is answered only once stored, so a fast worker needs more batches waiting than a slow one: one
    that answers with less than a batch (here one sample) waiting gets one more batch each time, never more than
    ``MAX_PREFETCH``; one that answers with a batch waiting keeps ``PREFETCH``."""
    held: list[int] = []

    def script(fake: _FakeRay) -> None:
        (worker,) = fake.actors
        for ref in fake.pending(worker, "start"):
            fake.answer(ref)
        batches = fake.pending(worker, "run_batch")
        held.append(len(batches))
        for ref in batches[:1]:  # one answer a step: the driver tops the worker up after each
            fake.answer(ref)
        for ref in fake.pending(worker, "finish"):
            fake.answer(ref)

    fake = fake_ray(script)
    fake.waiting = waiting
    items = _items(60)
    dispatcher, summary = _dispatcher(items, workers=1)
    asyncio.run(dispatcher.run(summary))
    assert fake.ran == Counter({item.key: 1 for item in items})
    assert max(held) == most
    assert summary.cells[CELL].done == 60


@pytest.mark.parametrize(
    ("samples", "concurrency", "workers", "size", "most"),
    [
        (60, 100, 2, 25, 16),  # a small run: half a worker's share a batch, as before
        (2400, 100, 2, 100, 4),  # about twelve batches a worker, each worker's window bounded in samples
        (200_000, 100, 2, 200, 3),  # at most four shares a batch
    ],
)
def test_batches_are_sized_from_the_run(samples: int, concurrency: int, workers: int, size: int, most: int) -> None:
    """Each batch costs a fixed round trip, so a large run takes larger batches (issue 47: Ray's CPU per sample
    1.65x the local executor's at 25 a batch, about 1.42x at 400); a worker's window shrinks in batches so it
    never holds more samples than before."""
    dispatcher, _ = _dispatcher(_items(samples), workers, concurrency=concurrency, batch_size=None)
    assert dispatcher.batch_size == size
    assert dispatcher.most_batches == most
    assert sum(len(batch) for batch, _ in dispatcher.queue) == samples
    assert max(len(batch) for batch, _ in dispatcher.queue) == size


def test_ray_client_refs_new_objects_for_the_same_results_and_the_run_still_finishes(
    fake_ray: Callable[[Callable[[_FakeRay], None]], _FakeRay],
) -> None:
    """Issue 47: under ``ray://`` (Ray Client) ``wait`` returns new ref objects; refs are matched by id, so the
    run ends with every sample run once instead of a KeyError."""

    def answer_all(fake: _FakeRay) -> None:
        for actor in fake.actors:
            for ref in fake.pending(actor):
                fake.answer(ref)

    fake = fake_ray(answer_all)
    fake.client = True
    fake.free_cpus = 2.0
    items = _items(6)
    dispatcher, summary = _dispatcher(items, workers=2)
    asyncio.run(dispatcher.run(summary))
    assert fake.ran == Counter({item.key: 1 for item in items})
    assert all(not fake.pending(actor) for actor in fake.actors)


def test_the_progress_line_counts_the_workers_calls_while_they_run(
    fake_ray: Callable[[Callable[[_FakeRay], None]], _FakeRay],
) -> None:
    """Issue 47: Ray's progress line said "0 model calls" until the run ended; each batch answer now carries its
    worker's usage so far, and the line sums the latest of each worker."""
    from bedside.runs.runner import Progress

    seen: list[int] = []

    class Calls(Progress):
        def update(self, summary: RunSummary) -> None:
            seen.append(sum(u.calls for u in summary.usage.snapshot().values()))

    def answer_all(fake: _FakeRay) -> None:
        for actor in fake.actors:
            for ref in fake.pending(actor):
                fake.answer(ref)

    fake = fake_ray(answer_all)
    fake.free_cpus = 2.0
    items = _items(6)
    dispatcher, summary = _dispatcher(items, workers=2)
    dispatcher.progress = Calls()
    asyncio.run(dispatcher.run(summary))
    assert seen
    assert seen[-1] == 6, seen  # every sample's call, summed over the two workers
    assert seen == sorted(seen)
