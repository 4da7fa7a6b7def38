"""Run a config: every (cell, sample, epoch) once, resumably, with failures stored as errors.

Resume: each sample's *key* hashes everything that produced it (task, dataset, the sample itself, system and
options, the model of every role, generation settings, epoch, seed). A sample whose stored row has the same key
is skipped; if only the scorer list changed it is re-scored from the stored output without a model call; a
changed key re-runs it. A successful row with the same key from *another* run in the same store is reused the
same way. Errors are skipped on re-run too (they are finished, as errors) unless ``retry_errors`` is set; a
retried sample asks the endpoint again for the answers that caused its error (stored with the error) instead
of replaying them from the cache, and replays everything else.

Failures: anything a sample raises (retries exhausted, an invalid structured answer, a judge that never
validated, a bug in a task) is stored as that sample's error with its type and message; it never becomes a
score; an answer with no text is such a failure (:class:`~bedside.llm.EmptyAnswerError`), and a cut-off answer is
kept but counted (``truncated`` in the sample's usage). Finished samples are written in batches (one transaction
at most every 50 ms), so an interrupted or killed run keeps everything it had written, a sample is never
half-stored, and Ctrl-C cancels the samples in flight and keeps the rest (pending writes are flushed on the way
out). A store that stops accepting writes (disk full) stops the run with a :class:`~bedside.errors.StorageError`
that says how many finished samples it could not keep; everything committed before stays.

One process runs a run at a time: the run's lock in the store (renewed every ``HEARTBEAT_S``) makes a second
process refuse with :class:`~bedside.runs.store.RunLockedError` instead of paying for every request twice.

Endpoint concurrency: a role whose ``model_options`` set no ``max_concurrency`` gets the run's ``concurrency`` as
its endpoint cap, so ``concurrency: 200`` means 200 in flight, not the provider's default.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import hashlib
import logging
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from bedside.errors import StorageError
from bedside.fastjson import dumper
from bedside.llm import GenerationSettings, Model, UsageLedger, get_model
from bedside.llm.cache import default_cache_path
from bedside.llm.errors import StructuredOutputError, unreachable_cause
from bedside.llm.scope import call_scope
from bedside.llm.types import Role
from bedside.runs.config import RunConfig, SystemConfig, without_url
from bedside.runs.options import check_options
from bedside.runs.registry import resolve_task
from bedside.runs.scorers import check_scorers, prepare_scoring, score_sample
from bedside.runs.store import HEARTBEAT_S, ResultRow, RunLock, Store
from bedside.runs.task import Output, Sample, SampleContext, Task

log = logging.getLogger(__name__)

GC_YOUNG_THRESHOLD = 100_000
"""Allocations between collections of the cyclic collector's youngest generation while samples run (Python's
default is 700)."""
PROGRESS_TICK_S = 1.0
"""How often the progress display hears from a run between stored samples."""


@dataclass(frozen=True)
class Cell:
    dataset: str
    system: str
    model: str
    """The model as ``models.system`` names it: a model string or an alias."""
    label: str = ""
    """The model's name in the cell (:meth:`RunConfig.model_label`); empty: the model string without its URL."""

    # Cached (a frozen dataclass's __dict__ takes them): every stored row and every sample's start asks for them.
    @functools.cached_property
    def model_label(self) -> str:
        return self.label or without_url(self.model)

    @functools.cached_property
    def id(self) -> str:
        """What the store, reports and exports call the cell: dataset/system/model, the model by its alias or
        ``PROVIDER/MODEL``, never its URL (long, and it may carry a ``user:password@``)."""
        return f"{self.dataset}/{self.system}/{self.model_label}"


@dataclass
class CellProgress:
    total: int
    done: int = 0
    errors: int = 0
    skipped: int = 0


@dataclass
class RunSummary:
    run_id: str
    cells: dict[str, CellProgress]
    ran: int = 0
    reused: int = 0
    rescored: int = 0
    interrupted: bool = False
    wall_s: float = 0.0
    usage: UsageLedger = field(default_factory=UsageLedger)
    truncated: int = 0
    """Samples run now with at least one answer cut off by the endpoint (``finish_reason: length``)."""
    endpoint_caps: dict[str, int] = field(default_factory=dict)
    """Requests in flight at most, per model of the run (``role model``)."""
    concurrency: int = 0
    """Samples in flight at most (the config's ``concurrency``)."""
    retried: int = 0
    """Samples run again because the Ray worker (or node) holding them was lost (``--executor ray``)."""
    failed: int = 0
    """Samples run now that failed (stored as errors now; ``ran`` counts those that succeeded)."""
    retried_errors: int = 0
    """Samples stored as errors before and run again now (``--retry-errors``)."""
    reused_from_elsewhere: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Per cell, samples reused from another run whose answers an endpoint this config does not name served
    (count, one such endpoint): the same model name on another server, perhaps another model (a model's identity
    holds no URL)."""

    @property
    def errors(self) -> int:
        return sum(c.errors for c in self.cells.values())


class Progress:
    """Receives progress; the CLI's rich display implements it. The default does nothing.

    ``update`` comes after each stored batch of samples and every ``PROGRESS_TICK_S`` while samples run, so a
    display can show model calls made inside a sample that takes minutes (a simulated conversation on a CPU);
    it should return quickly and may ignore calls that come too often.
    """

    def start(self, summary: RunSummary) -> None: ...

    def update(self, summary: RunSummary) -> None: ...

    def interrupting(self, summary: RunSummary) -> None:
        """Ctrl-C arrived: the samples in flight are being stopped (an in-process model call cannot be, and is
        waited for), then ``stop`` comes."""

    def stop(self, summary: RunSummary) -> None: ...


def sample_key(
    config: RunConfig,
    cell: Cell,
    system: SystemConfig,
    sample: Sample,
    epoch: int,
    settings: dict[str, Any],
    *,
    sample_data: dict[str, Any] | None = None,
    system_data: dict[str, Any] | None = None,
) -> str:
    """The hash of everything that produces a sample's result. ``sample_data`` and ``system_data``, when given,
    are ``sample.model_dump()`` and ``system.model_dump()`` already made (a plan reuses them across cells and
    epochs).

    It is the sha256 of ``json.dumps(data, sort_keys=True, default=str)`` for ``data`` = {task, dataset, sample,
    system (its name and config), models (each role's :meth:`RunConfig.model_identity`), settings, epoch, seed};
    :class:`CellKeys` writes that same text from parts encoded once per cell."""
    keys = CellKeys(config, cell, system_data if system_data is not None else system.model_dump(), settings)
    return keys.key(sample_data if sample_data is not None else sample.model_dump(), epoch)


_KEY_JSON = dumper(sort_keys=True, default=str)  # json.dumps(data, sort_keys=True, default=str), cheaper


class CellKeys:
    """:func:`sample_key` for the samples of one cell, with what they share encoded once.

    ``json.dumps`` with ``sort_keys`` writes the top-level fields in the order dataset, epoch, models, sample,
    seed, settings, system, task, and each value's text does not depend on the others; so the text is the cell's
    fixed parts around each sample's own (its data and epoch). Encoding the models, settings and system once per
    cell instead of once per sample was most of a 2,000-sample plan's CPU (bench/before_after.py).
    """

    def __init__(self, config: RunConfig, cell: Cell, system_data: dict[str, Any], settings: dict[str, Any]) -> None:
        models = {role: config.model_identity(specs[0]) for role, specs in config.models.items() if role != "system"}
        models["system"] = config.model_identity(cell.model)
        encode = _KEY_JSON
        self._head = '{"dataset": ' + encode(cell.dataset) + ', "epoch": '
        self._middle = ', "models": ' + encode(models) + ', "sample": '
        self._tail = (
            f', "seed": {encode(config.seed)}, "settings": {encode(settings)}, '
            f'"system": {encode({"name": cell.system, **system_data})}, "task": {encode(config.task)}}}'
        )

    def key(self, sample_data: dict[str, Any], epoch: int) -> str:
        """The key of the sample whose ``sample.model_dump()`` is ``sample_data``, at ``epoch``."""
        text = self._head + _KEY_JSON(epoch) + self._middle + _KEY_JSON(sample_data) + self._tail
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class _Scoring:
    """A sample whose system returned, waiting to be scored and turned into its row on the writer's thread."""

    item: Item
    output: Output
    usage: dict[str, Any]
    culprits: list[str]
    """The cache keys a retry must ask again for, should a scorer fail (the sample's call scope is closed)."""
    truncated: bool
    calls: list[dict[str, Any]] | None = None
    """The sample's call timeline (:meth:`bedside.llm.scope.CallScope.timeline`)."""


class _Writer:
    """Collects finished samples, scores them on its own thread and writes their rows, one transaction at most
    every ``interval_s``.

    Each sample's rows land in one transaction or not at all; a kill loses at most the last interval's finished
    samples (and those still being scored), which a resume runs again. Scoring runs on one worker thread (so the
    batches stay in order), just before the write: a slow scorer (BLEU, an embedding model) does not hold up the
    responses arriving on the loop. Where a scored batch is written depends on the store
    (:attr:`Store.writes_in_process`): a SQLite file is written on the event loop as soon as its batch is scored,
    since SQLite's work is CPU in this process, and on the thread its calls, each handing the GIL
    back and forth with the loop's, cost more CPU than the write itself (~0.02 ms a sample,
    ``bench/before_after.py``); a database server (PostgreSQL) is written on the thread, where waiting for it
    holds nothing up. A sample is counted as done (``on_stored``, on the loop) once its batch is written.
    """

    interval_s = 0.05
    max_behind = 4

    def __init__(
        self,
        store: Store,
        to_row: Callable[[_Scoring], ResultRow] | None = None,
        on_stored: Callable[[list[ResultRow | _Scoring], list[ResultRow]], None] | None = None,
        prepare: Callable[[list[_Scoring]], None] | None = None,
    ) -> None:
        self.store = store
        self.to_row = to_row
        self.on_stored = on_stored
        self.prepare = prepare
        self.pending: list[ResultRow | _Scoring] = []
        self._scheduled = False
        self._on_loop = store.writes_in_process
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bedside-store")
        self._writes: list[Future[list[ResultRow]]] = []
        """Batches handed to the thread, oldest first, until they are stored and counted."""
        self._entries: dict[Future[list[ResultRow]], list[ResultRow | _Scoring]] = {}
        self.failed: list[ResultRow | _Scoring] = []
        """Finished samples a failed write could not keep."""
        self._failure: BaseException | None = None
        """The first write failure not yet reported by :meth:`flush`."""
        self._broken = False

    def _storage_error(self, exc: BaseException) -> StorageError:
        cause = getattr(exc, "orig", None) or exc
        return StorageError(
            f"the store {self.store.url} stopped accepting writes ({str(cause).splitlines()[0]}); "
            f"{len(self.failed)} finished sample(s) could not be stored and will be run again on resume "
            "(answers already in the response cache cost nothing); everything stored before is intact"
        )

    def run_on_thread(self, call: Any, *args: Any) -> Future[Any]:
        """Run a store call on the writer's thread, after the batches queued before it."""
        return self._thread.submit(call, *args)

    def add(self, entry: ResultRow | _Scoring) -> None:
        self.pending.append(entry)
        if self._broken:
            self.flush()  # raises: a failed write stops the run, so nothing more is paid for that cannot be kept
        if not self._scheduled:
            self._scheduled = True
            self._loop = asyncio.get_running_loop()
            self._loop.call_later(self.interval_s, self._submit)

    def behind(self) -> Future[list[ResultRow]] | None:
        """The oldest unfinished batch when more than ``max_behind`` are queued (scorers slower than the samples
        arrive): the caller waits for it, so finished but unstored samples stay a few batches' worth."""
        if len(self._writes) <= self.max_behind:
            return None
        unfinished = [write for write in self._writes if not write.done()]
        return unfinished[0] if len(unfinished) > self.max_behind else None

    def _score(self, entries: list[ResultRow | _Scoring]) -> list[ResultRow]:
        """On the writer's thread: score what needs it; a store on a server is written here too."""
        to_row = self.to_row
        scoring = [entry for entry in entries if isinstance(entry, _Scoring)]
        if scoring and self.prepare is not None:
            try:
                self.prepare(scoring)
            except Exception:  # only a saving: each sample's own scoring meets the same error and records it
                log.debug("preparing a batch for scoring failed; each sample is scored on its own", exc_info=True)
        rows = [entry if isinstance(entry, ResultRow) else to_row(entry) for entry in entries]  # type: ignore[misc]
        if not self._on_loop:
            self.store.write(rows)
        return rows

    def _submit(self) -> None:
        self._scheduled = False
        self._collect()
        entries, self.pending = self.pending, []
        if entries:
            write = self._thread.submit(self._score, entries)
            self._entries[write] = entries
            self._writes.append(write)
            write.add_done_callback(self._scored)

    def _scored(self, write: Future[list[ResultRow]]) -> None:
        """On the writer's thread, a batch done: the loop stores it (SQLite) and counts it now rather than at the
        next batch, so a Ray worker's last batch is answered, and a kill loses no more than it must."""
        if write.exception() is not None:
            self._broken = True  # seen by the next add(): a plain flag, set from the writer's thread
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the run is over
                self._loop.call_soon_threadsafe(self._collect)

    def _finish(self, write: Future[list[ResultRow]]) -> None:
        """On the loop: write a scored batch (a store written in process) and count it; a batch the store
        refused goes to ``failed``, its error kept for :meth:`flush` to raise. Waits for the batch if need be."""
        entries = self._entries.pop(write)
        try:
            rows = write.result()
            if self._on_loop:
                self.store.write(rows)
        except (SQLAlchemyError, OSError) as exc:
            self.failed.extend(entries)
            self._failure = self._failure or exc
            self._broken = True
            return
        if self.on_stored is not None:
            self.on_stored(entries, rows)

    def _collect(self) -> None:
        """Store and count every batch scored so far, oldest first (a batch that raised something other than a
        storage error is a bug: it stays, with those after it, for :meth:`flush` to raise)."""
        while self._writes and self._writes[0].done():
            failure = self._writes[0].exception()
            if failure is not None and not isinstance(failure, SQLAlchemyError | OSError):
                return
            self._finish(self._writes.pop(0))

    def flush(self) -> None:
        """Write everything pending and wait for it; raises a :class:`StorageError` if a write failed."""
        self._submit()
        writes, self._writes = self._writes, []
        for write in writes:
            self._finish(write)
        failure, self._failure = self._failure, None
        self._broken = False
        if failure is not None:
            raise self._storage_error(failure) from None

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._thread.shutdown(wait=True)


def _settings(config: RunConfig, role: str) -> GenerationSettings:
    values = {"seed": config.seed, **config.settings.get(role, {})}
    return GenerationSettings.model_validate(values)


@dataclass(frozen=True)
class Item:
    """One (cell, sample, epoch) of a run, with the key that identifies what produces its result."""

    cell: Cell
    sample: Sample
    epoch: int
    key: str


@dataclass
class Plan:
    """What a run will do, decided from the config and the store alone: no model is built, nothing is written.

    ``summary`` already counts what is finished (stored with the same key: skipped). ``rescore`` holds stored
    outputs that lack a scorer; ``reuse`` successful rows with the same key from another run in the store; both
    finish without a model call. ``generate`` is what needs the models; ``bypass`` the cache keys a retried
    error must ask again for (see :mod:`bedside.llm.scope`).
    """

    config: RunConfig
    task: Task
    scorers: list[str]
    cells: list[Cell]
    settings: dict[str, GenerationSettings]
    summary: RunSummary
    rescore: list[tuple[Item, ResultRow]] = field(default_factory=list)
    reuse: list[tuple[Item, ResultRow]] = field(default_factory=list)
    generate: list[Item] = field(default_factory=list)
    bypass: dict[str, list[str]] = field(default_factory=dict)


def load_datasets(config: RunConfig, task: Task) -> dict[str, list[Sample]]:
    """Each dataset's samples, cut to its ``limit``; ids must be unique within a dataset."""
    datasets = {}
    for name, dataset in config.datasets.items():
        samples = task.load(name, dataset)
        if not samples:  # a run over nothing would finish "successfully" and report nothing
            source = f" ({dataset.path})" if dataset.path else ""
            raise ValueError(f"dataset {name!r}{source}: no samples to run (the input or its filters left none)")
        if dataset.limit is not None:
            samples = samples[: dataset.limit]
        ids = [s.id for s in samples]
        if len(set(ids)) != len(ids):
            raise ValueError(f"dataset {name!r}: sample ids must be unique")
        datasets[name] = samples
    return datasets


def check_config(config: RunConfig, task: Task) -> list[str]:
    """The scorers a run computes, after checking that the task knows every scorer and system type named, and
    that every dataset and system option is one the task declares, with a value it accepts."""
    scorers = list(config.scorers if config.scorers is not None else task.default_scorers)
    check_scorers(task, scorers)
    for name, system in config.systems.items():
        if system.type not in task.systems:
            raise ValueError(
                f"systems.{name}.type: task {config.task!r} has no system {system.type!r}; "
                f"it has {', '.join(sorted(task.systems))}"
            )
    check_options(task, config.datasets, config.systems)
    _check_wordnet_setting()
    return scorers


def _check_wordnet_setting() -> None:
    """A ``BEDSIDE_WORDNET`` that names no WordNet fails the run before it starts, rather than every sample the
    checkers read (the guard and the fidelity checker take antonyms from it)."""
    import os

    from bedside.text.wordnet import WORDNET_ENV, WordNetMissing, wordnet_folder

    if os.environ.get(WORDNET_ENV):
        try:
            wordnet_folder()
        except WordNetMissing as exc:
            raise ValueError(str(exc)) from None


def plan_run(
    config: RunConfig,
    store: Store,
    *,
    task: Task | None = None,
    datasets: dict[str, list[Sample]] | None = None,
    retry_errors: bool = False,
) -> Plan:
    """Decide what ``config`` still has to do in ``store`` (read-only; ``bedside run --dry-run`` shows it)."""
    task = task or resolve_task(config.task)
    scorers = check_config(config, task)
    datasets = datasets if datasets is not None else load_datasets(config, task)
    cells = [
        Cell(d, s, m, config.model_label(m))
        for d in config.datasets
        for s in config.systems
        for m in config.models["system"]
    ]
    settings = {role: _settings(config, role) for role in config.models}
    settings_data = {role: s.model_dump() for role, s in settings.items()}
    summary = RunSummary(
        config.run_id,
        {c.id: CellProgress(len(datasets[c.dataset]) * config.repeats) for c in cells},
        concurrency=config.concurrency,
    )
    plan = Plan(config, task, scorers, cells, settings, summary)
    existing = {(r.cell, r.sample_id, r.epoch): r for r in store.results(config.run_id)}
    todo: list[Item] = []
    dumped = {name: [sample.model_dump() for sample in samples] for name, samples in datasets.items()}
    for cell in cells:
        counts = summary.cells[cell.id]
        system = config.systems[cell.system]
        keys = CellKeys(config, cell, system.model_dump(), settings_data)
        for sample, sample_data in zip(datasets[cell.dataset], dumped[cell.dataset], strict=True):
            for epoch in range(config.repeats):
                item = Item(cell, sample, epoch, keys.key(sample_data, epoch))
                row = existing.get((cell.id, sample.id, epoch))
                if row is None or row.key != item.key:
                    todo.append(item)
                elif row.status == "error" and not retry_errors:
                    counts.done += 1
                    counts.errors += 1
                    counts.skipped += 1
                elif row.status == "error":
                    plan.bypass[item.key] = list((row.failure or {}).get("retry_bypass") or [])
                    todo.append(item)
                elif set(scorers) <= set(row.scores):
                    counts.done += 1
                    counts.skipped += 1
                else:
                    plan.rescore.append((item, row))
    summary.retried_errors = len(plan.bypass)
    reusable = store.reusable(item.key for item in todo)
    for item in todo:
        found = reusable.get(item.key)
        if found is None:
            plan.generate.append(item)
        else:
            plan.reuse.append((item, found))
    _note_foreign_reuse(plan)
    return plan


def _note_foreign_reuse(plan: Plan) -> None:
    """Count the reused samples whose answers were served at an endpoint this config does not name
    (``summary.reused_from_elsewhere``): a second config naming a different server's model "llm" reused the first
    server's answers without a word (a newcomer's sweep). Moving a server is the reason URLs are not identity, so
    this warns rather than refuses."""
    if not plan.reuse:
        return
    from bedside.llm.config import parse_model_spec
    from bedside.llm.model import served_at

    config = plan.config
    named = {served_at(parse_model_spec(config.model_spec(spec))) for specs in config.models.values() for spec in specs}
    for item, row in plan.reuse:
        elsewhere = sorted({w for c in row.calls or () if (w := c.get("served_at")) and w not in named})
        if elsewhere:
            count, _ = plan.summary.reused_from_elsewhere.get(item.cell.id, (0, ""))
            plan.summary.reused_from_elsewhere[item.cell.id] = (count + 1, elsewhere[0])


def cache_location(cache: str | Path | bool | None) -> str | Path | None:
    """Where a run's ``cache`` argument puts the response cache: True is the default file, False or None none."""
    return default_cache_path() if cache is True else (None if cache is False or cache is None else cache)


def build_models(
    plan: Plan, cache: str | Path | bool | None, summary: RunSummary
) -> tuple[dict[tuple[str, str], Model], dict[str, dict[Role, Model]]]:
    """One model per (role, spec), shared by every cell and sample: one cache, limiter and ledger per endpoint;
    and each cell's models by role. A role without ``max_concurrency`` gets the run's concurrency as its cap."""
    config = plan.config
    cache_path = cache_location(cache)
    models: dict[tuple[str, str], Model] = {}
    for role, specs in config.models.items():
        for spec in specs:
            options = {"max_concurrency": config.concurrency, **config.model_options.get(role, {})}
            model = get_model(config.model_spec(spec), role=role, cache=cache_path, usage=summary.usage, **options)  # type: ignore[arg-type]
            models[(role, spec)] = model
            summary.endpoint_caps[f"{role} {model.name}"] = model.limiter.maximum
    cell_models = {
        cell.id: {
            role: models[(role, cell.model if role == "system" else specs[0])] for role, specs in config.models.items()
        }
        for cell in plan.cells
    }
    return models, cell_models  # type: ignore[return-value]


def locked_store(config: RunConfig, store: Store | None) -> tuple[Store, RunLock]:
    """``store`` (or the config's, opened here) with the run's lock taken; a store opened here is closed again
    when the lock cannot be taken (the run is running elsewhere), so nothing is left open."""
    opened = store or Store(config.store)
    try:
        return opened, opened.lock_run(config.run_id)
    except BaseException:
        if store is None:
            opened.close()
        raise


async def execute(
    config: RunConfig,
    *,
    store: Store | None = None,
    task: Task | None = None,
    retry_errors: bool = False,
    progress: Progress | None = None,
    cache: str | Path | bool | None = True,
) -> RunSummary:
    """Run (or resume) ``config``; returns counts. ``cache=True`` uses the default response cache.

    Three steps: :func:`plan_run` (read-only), then, under the run's lock, :class:`_Running` finishes what the
    store already holds and runs the rest, and the run's status is written.
    """
    started = time.perf_counter()
    task = task or resolve_task(config.task)
    check_config(config, task)
    datasets = load_datasets(config, task)  # bad data fails before the store is touched
    own_store = store is None
    store, lock = locked_store(config, store)
    try:
        store.begin_run(config.run_id, config.name, config.task, config.model_dump())
        plan = plan_run(config, store, task=task, datasets=datasets, retry_errors=retry_errors)
        store.set_planned(config.run_id, {cell: counts.total for cell, counts in plan.summary.cells.items()})
        running = _Running(plan, store, lock, progress)
        try:
            await running.run(cache)
        finally:
            plan.summary.wall_s = time.perf_counter() - started
            # An unwritable store (the error being raised says so) leaves the status "running".
            with contextlib.suppress(SQLAlchemyError):
                store.finish_run(config.run_id, running.status)
            if progress:
                progress.stop(plan.summary)
        return plan.summary
    finally:
        # A store that cannot be written keeps the lock; its next run sees it abandoned (this pid is gone).
        with contextlib.suppress(SQLAlchemyError):
            store.unlock_run(lock)
        if own_store:
            store.close()


class _Running:
    """Carries out a plan: stored outputs finished first (no model), then the samples that need the models, at
    most ``concurrency`` in flight, each sample's rows handed to the writer as it finishes."""

    def __init__(self, plan: Plan, store: Store, lock: RunLock, progress: Progress | None) -> None:
        self.plan = plan
        self.summary = plan.summary
        self.store = store
        self.lock = lock
        self.progress = progress
        self.writer = _Writer(store, self._scored_row, self._stored, self._prepare_scoring)
        self.models: dict[tuple[str, str], Model] = {}
        self.cell_models: dict[str, dict[Role, Model]] = {}
        self.status = "finished"

    async def run(self, cache: str | Path | bool | None) -> None:
        plan = self.plan
        try:
            for item, row in plan.rescore:
                self._from_stored(item, row)
                self.summary.rescored += 1
            for item, row in plan.reuse:
                self._from_stored(item, row)
                self.summary.reused += 1
            self.writer.flush()
            if plan.generate:
                self._build_models(cache)
            if self.progress:
                self.progress.start(self.summary)
            await self._generate_all()
        except BaseException as exc:
            interrupted = isinstance(exc, asyncio.CancelledError | KeyboardInterrupt)
            self.summary.interrupted = interrupted
            self.status = "interrupted" if interrupted else "failed"
            raise
        finally:
            try:
                self.writer.close()
            except StorageError:
                self.status = "failed"
                raise
            finally:
                for model in self.models.values():
                    await model.aclose()

    def _build_models(self, cache: str | Path | bool | None) -> None:
        self.models, self.cell_models = build_models(self.plan, cache, self.summary)

    def _sample_loops(self) -> list[Coroutine[Any, Any, None]]:
        """The coroutines that run the samples: ``concurrency`` of them pull the samples in order from one
        iterator, so a sample starts as soon as one finishes, as with one task per sample behind a semaphore,
        without a task and a semaphore wait each. (A Ray worker pulls from its work queue instead.)"""
        to_run = iter(self.plan.generate)

        async def worker() -> None:
            for item in to_run:
                await self._generate(item)

        return [worker() for _ in range(min(self.plan.config.concurrency, len(self.plan.generate)))]

    async def _generate_all(self) -> None:
        # Everything alive now (imports, datasets, the plan) lives for the whole run: frozen, the cyclic
        # collector stops re-scanning it at every full collection. Those pauses stalled the loop for tens of
        # milliseconds with 100 requests in flight and were most of the spread between identical runs
        # (bench/run_throughput.py). The youngest generation is also collected less often: with hundreds of
        # samples in flight, most objects a collection finds are still in use and were promoted to older
        # generations, whose collections then cost more (bench/run_throughput.py, CPU per sample).
        gc.freeze()
        threshold = gc.get_threshold()
        gc.set_threshold(max(threshold[0], GC_YOUNG_THRESHOLD), *threshold[1:])
        tasks = [asyncio.ensure_future(loop) for loop in self._sample_loops()]
        beating = asyncio.ensure_future(self._heartbeat())
        ticking = asyncio.ensure_future(self._tick()) if self.progress else None
        try:
            await asyncio.gather(*tasks)
        except BaseException as exc:
            # Ctrl-C, or a failure outside any one sample (the store cannot write): stop the samples in flight
            # rather than keep paying for answers that could not be kept.
            if self.progress and isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
                self.progress.interrupting(self.summary)
            for pending in tasks:
                pending.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            gc.set_threshold(*threshold)
            gc.unfreeze()
            beating.cancel()
            if ticking:
                ticking.cancel()

    async def _tick(self) -> None:
        assert self.progress is not None
        while True:
            await asyncio.sleep(PROGRESS_TICK_S)
            self.progress.update(self.summary)

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            with contextlib.suppress(SQLAlchemyError):  # the next sample write reports an unwritable store
                await asyncio.wrap_future(self.writer.run_on_thread(self.store.renew_lock, self.lock))

    async def _generate(self, item: Item) -> None:
        plan = self.plan
        context = SampleContext(self.cell_models[item.cell.id], plan.settings, str(item.epoch), plan.config.seed)  # type: ignore[arg-type]
        system = plan.config.systems[item.cell.system]
        with call_scope(plan.bypass.get(item.key, ())) as calls:
            try:
                output = await plan.task.systems[system.type](item.sample, system.options, context)
                if not output.prompts:
                    output = output.model_copy(update={"prompts": context.prompts})
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                unreachable = unreachable_cause(exc)
                if unreachable is not None:
                    # Every sample would fail the same way: stop the run, naming the URL, rather than store an
                    # error per sample. What finished is kept; the same command resumes once the server is up.
                    raise unreachable from None
                self._finish_error(item, exc, calls.culprits(), context, calls.timeline())
                return
            culprits = calls.culprits()
        usage = {role: vars(c) for role, c in context.usage.items()}
        truncated = any(c.truncated for c in context.usage.values())
        # Scored on the writer's thread (``_scored_row``), counted once stored (``_stored``).
        self.writer.add(_Scoring(item, output, usage, culprits, truncated, calls.timeline()))
        if (behind := self.writer.behind()) is not None:
            await asyncio.wait([asyncio.wrap_future(behind)])  # its failure is reported by the next add or flush

    def _finish_error(
        self,
        item: Item,
        exc: Exception,
        culprits: list[str],
        context: SampleContext,
        timeline: list[dict[str, Any]] | None = None,
    ) -> None:
        """Store what a sample raised (its system, or a scorer) as the sample's error."""
        rejected = exc.rejected if isinstance(exc, StructuredOutputError) else ()
        failure = {
            "type": type(exc).__name__,
            "retry_bypass": list(dict.fromkeys([*rejected, *culprits])),
        }
        self.writer.add(
            self._row(
                item,
                status="error",
                error=f"{type(exc).__name__}: {exc}",
                output=None,
                scores={},
                usage={role: vars(c) for role, c in context.usage.items()},
                failure=failure,
                calls=timeline,
            )
        )

    def _prepare_scoring(self, batch: list[_Scoring]) -> None:
        """On the writer's thread, before a batch is scored: what its scorers embed, embedded together."""
        prepare_scoring(self.plan.task, self.plan.scorers, [(done.item.sample, done.output) for done in batch])

    def _scored_row(self, done: _Scoring) -> ResultRow:
        """On the writer's thread: a returned sample's scores and row; a scorer that raises makes the sample an
        error, exactly as if its system had raised."""
        plan = self.plan
        try:
            scores = score_sample(plan.task, plan.scorers, done.item.sample, done.output)
        except Exception as exc:
            failure = {"type": type(exc).__name__, "retry_bypass": list(dict.fromkeys(done.culprits))}
            return self._row(
                done.item,
                status="error",
                error=f"{type(exc).__name__}: {exc}",
                output=None,
                scores={},
                usage=done.usage,
                failure=failure,
                calls=done.calls,
            )
        output = done.output.model_dump(mode="json")
        # a sample stored as an error before and answered now (--retry-errors) says so: the retry keeps the
        # cell's mean honest, and this keeps its reliability on record (a model failing a sixth of its calls read
        # as reliable as any once its errors were retried)
        retried = {"retried_after_error": True} if done.item.key in plan.bypass else None
        return self._row(
            done.item,
            status="ok",
            error=None,
            output=output,
            scores=scores,
            usage=done.usage,
            calls=done.calls,
            failure=retried,
        )

    def _stored(self, entries: list[ResultRow | _Scoring], rows: list[ResultRow]) -> None:
        """On the loop: count a written batch's samples, and show progress."""
        summary = self.summary
        cells = summary.cells
        for entry, row in zip(entries, rows, strict=True):
            counts = cells[row.cell]
            counts.done += 1
            if row.status == "error":
                counts.errors += 1
                summary.failed += 1  # an error row is written only for a sample run now
            elif isinstance(entry, _Scoring):
                summary.ran += 1
                summary.truncated += entry.truncated
        if self.progress:
            self.progress.update(summary)

    def _from_stored(self, item: Item, stored: ResultRow) -> None:
        """Finish a sample from a stored successful output: no model call; scorers it lacks are computed."""
        plan = self.plan
        scores = stored.scores
        if not set(plan.scorers) <= set(scores):
            scores = score_sample(plan.task, plan.scorers, item.sample, Output.model_validate(stored.output))
        self.writer.add(
            self._row(
                item,
                status="ok",
                error=None,
                output=stored.output,
                scores={name: scores.get(name) for name in plan.scorers},
                usage=stored.usage,
                calls=stored.calls,
            )
        )

    def _row(self, item: Item, **values: Any) -> ResultRow:
        return ResultRow(
            run_id=self.summary.run_id,
            cell=item.cell.id,
            sample_id=item.sample.id,
            epoch=item.epoch,
            dataset=item.cell.dataset,
            system=item.cell.system,
            model=item.cell.model_label,
            key=item.key,
            strata=item.sample.strata,
            sample=item.sample.model_dump(mode="json"),
            **values,
        )
