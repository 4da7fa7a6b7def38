"""Run a config: every (cell, sample, epoch) once, resumably, with failures stored as errors.

Resume: each sample's *key* hashes everything that produced it (task, dataset, the sample itself, system and
options, the model of every role, generation settings, epoch, seed). A sample whose stored row has the same key
is skipped; if only the scorer list changed it is re-scored from the stored output without a model call; a
changed key re-runs it. A successful row with the same key from *another* run in the same store is reused the
same way. Errors are skipped on re-run too (they are finished, as errors) unless ``retry_errors`` is set.

Failures: anything a sample raises (retries exhausted, an invalid structured answer, a judge that never
validated, a bug in a task) is stored as that sample's error with its type and message; it never becomes a
score. Finished samples are written in batches (one transaction at most every 50 ms), so an interrupted or
killed run keeps everything it had written, a sample is never half-stored, and Ctrl-C cancels the samples in
flight and keeps the rest (pending writes are flushed on the way out).
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bedside.llm import GenerationSettings, Model, UsageLedger, get_model
from bedside.llm.cache import default_cache_path
from bedside.llm.types import Role
from bedside.runs.config import RunConfig, SystemConfig
from bedside.runs.scorers import check_scorers, score_sample
from bedside.runs.store import ResultRow, Store
from bedside.runs.task import Output, Sample, SampleContext, Task, resolve_task


@dataclass(frozen=True)
class Cell:
    dataset: str
    system: str
    model: str

    @property
    def id(self) -> str:
        return f"{self.dataset}/{self.system}/{self.model}"


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

    @property
    def errors(self) -> int:
        return sum(c.errors for c in self.cells.values())


class Progress:
    """Receives progress; the CLI's rich display implements it. The default does nothing."""

    def start(self, summary: RunSummary) -> None: ...

    def update(self, summary: RunSummary) -> None: ...

    def stop(self, summary: RunSummary) -> None: ...


def sample_key(
    config: RunConfig, cell: Cell, system: SystemConfig, sample: Sample, epoch: int, settings: dict[str, Any]
) -> str:
    models = {role: specs[0] for role, specs in config.models.items() if role != "system"}
    models["system"] = cell.model
    data = {
        "task": config.task,
        "dataset": cell.dataset,
        "sample": sample.model_dump(),
        "system": {"name": cell.system, **system.model_dump()},
        "models": models,
        "settings": settings,
        "epoch": epoch,
        "seed": config.seed,
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


class _Writer:
    """Collects finished rows and writes them, one transaction at most every ``interval_s``, on its own thread.

    Each sample's rows land in one transaction or not at all; a kill loses at most the last interval's finished
    samples, which a resume runs again. The writes run on one worker thread (so they stay in order) instead of
    the event loop: SQLAlchemy's parameter handling and SQLite's commit cost ~75 us per sample, which on the
    loop delayed every response arriving meanwhile.
    """

    interval_s = 0.05

    def __init__(self, store: Store) -> None:
        self.store = store
        self.pending: list[ResultRow] = []
        self._scheduled = False
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bedside-store")
        self._writes: list[Future[None]] = []

    def add(self, row: ResultRow) -> None:
        for write in self._writes:
            if write.done() and write.exception() is not None:
                raise write.exception()  # type: ignore[misc]  # a failed write stops the run, nothing is paid twice
        self.pending.append(row)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_later(self.interval_s, self._submit)

    def _submit(self) -> None:
        self._scheduled = False
        rows, self.pending = self.pending, []
        if rows:
            self._writes = [f for f in self._writes if not f.done()]
            self._writes.append(self._thread.submit(self.store.write, rows))

    def flush(self) -> None:
        """Write everything pending and wait for it; raises what a write raised."""
        self._submit()
        writes, self._writes = self._writes, []
        for write in writes:
            write.result()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._thread.shutdown(wait=True)


def _settings(config: RunConfig, role: str) -> GenerationSettings:
    values = {"seed": config.seed, **config.settings.get(role, {})}
    return GenerationSettings.model_validate(values)


async def execute(
    config: RunConfig,
    *,
    store: Store | None = None,
    task: Task | None = None,
    retry_errors: bool = False,
    progress: Progress | None = None,
    cache: str | Path | bool | None = True,
) -> RunSummary:
    """Run (or resume) ``config``; returns counts. ``cache=True`` uses the default response cache."""
    started = time.perf_counter()
    task = task or resolve_task(config.task)
    scorers = list(config.scorers if config.scorers is not None else task.default_scorers)
    check_scorers(task, scorers)
    for name, system in config.systems.items():
        if system.type not in task.systems:
            raise ValueError(
                f"systems.{name}.type: task {config.task!r} has no system {system.type!r}; "
                f"it has {', '.join(sorted(task.systems))}"
            )
    datasets = {}
    for name, dataset in config.datasets.items():
        samples = task.load(name, dataset)
        if dataset.limit is not None:
            samples = samples[: dataset.limit]
        ids = [s.id for s in samples]
        if len(set(ids)) != len(ids):
            raise ValueError(f"dataset {name!r}: sample ids must be unique")
        datasets[name] = samples
    cells = [Cell(d, s, m) for d in config.datasets for s in config.systems for m in config.models["system"]]
    settings = {role: _settings(config, role) for role in config.models}
    settings_data = {role: s.model_dump() for role, s in settings.items()}

    own_store = store is None
    store = store or Store(config.store)
    run_id = config.run_id
    store.begin_run(run_id, config.name, config.task, config.model_dump())
    existing = {(r.cell, r.sample_id, r.epoch): r for r in store.results(run_id)}

    summary = RunSummary(run_id, {c.id: CellProgress(len(datasets[c.dataset]) * config.repeats) for c in cells})
    todo: list[tuple[Cell, Sample, int, str]] = []
    rescore: list[tuple[Cell, Sample, int, str, ResultRow]] = []
    for cell in cells:
        for sample in datasets[cell.dataset]:
            for epoch in range(config.repeats):
                key = sample_key(config, cell, config.systems[cell.system], sample, epoch, settings_data)
                row = existing.get((cell.id, sample.id, epoch))
                counts = summary.cells[cell.id]
                if row is not None and row.key == key:
                    if row.status == "error" and not retry_errors:
                        counts.done += 1
                        counts.errors += 1
                        counts.skipped += 1
                        continue
                    if row.status == "ok":
                        if set(scorers) <= set(row.scores):
                            counts.done += 1
                            counts.skipped += 1
                        else:
                            rescore.append((cell, sample, epoch, key, row))
                        continue
                todo.append((cell, sample, epoch, key))
    reusable = store.reusable(key for *_, key in todo)
    writer = _Writer(store)

    def row_for(cell: Cell, sample: Sample, epoch: int, key: str, **values: Any) -> ResultRow:
        return ResultRow(
            run_id=run_id,
            cell=cell.id,
            sample_id=sample.id,
            epoch=epoch,
            dataset=cell.dataset,
            system=cell.system,
            model=cell.model,
            key=key,
            strata=sample.strata,
            sample=sample.model_dump(mode="json"),
            **values,
        )

    def finish(cell: Cell, row: ResultRow) -> None:
        writer.add(row)
        counts = summary.cells[cell.id]
        counts.done += 1
        counts.errors += row.status == "error"
        if progress:
            progress.update(summary)

    def from_stored(cell: Cell, sample: Sample, epoch: int, key: str, stored: ResultRow) -> None:
        """Finish a sample from a stored successful output: no model call; scorers it lacks are computed."""
        scores = stored.scores
        if not set(scorers) <= set(scores):
            scores = score_sample(task, scorers, sample, Output.model_validate(stored.output))
        finish(
            cell,
            row_for(
                cell,
                sample,
                epoch,
                key,
                status="ok",
                error=None,
                output=stored.output,
                scores={name: scores.get(name) for name in scorers},
                usage=stored.usage,
            ),
        )

    for cell, sample, epoch, key, row in rescore:
        from_stored(cell, sample, epoch, key, row)
        summary.rescored += 1
    remaining = []
    for cell, sample, epoch, key in todo:
        found = reusable.get(key)
        if found is None:
            remaining.append((cell, sample, epoch, key))
        else:
            from_stored(cell, sample, epoch, key, found)
            summary.reused += 1
    writer.flush()

    cache_path: str | Path | None
    cache_path = default_cache_path() if cache is True else (None if cache is False else cache)
    # One model per (role, spec), shared by every cell and sample: one cache, limiter and ledger per endpoint.
    models: dict[tuple[str, str], Model] = {}
    if remaining:
        for role, specs in config.models.items():
            for spec in specs:
                options = config.model_options.get(role, {})
                models[(role, spec)] = get_model(spec, role=role, cache=cache_path, usage=summary.usage, **options)  # type: ignore[arg-type]
    cell_models: dict[str, dict[Role, Model]] = {
        cell.id: {
            role: models[(role, cell.model if role == "system" else specs[0])]  # type: ignore[misc]
            for role, specs in config.models.items()
        }
        for cell in cells
        if models
    }
    gate = asyncio.Semaphore(config.concurrency)

    async def one(cell: Cell, sample: Sample, epoch: int, key: str) -> None:
        async with gate:
            role_models = cell_models[cell.id]
            context = SampleContext(role_models, settings, str(epoch), config.seed)  # type: ignore[arg-type]
            system = config.systems[cell.system]
            try:
                output = await task.systems[system.type](sample, system.options, context)
                if not output.prompts:
                    output = output.model_copy(update={"prompts": context.prompts})
                scores = score_sample(task, scorers, sample, output)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                cause = f"{type(exc).__name__}: {exc}"
                usage = {role: vars(c) for role, c in context.usage.items()}
                finish(
                    cell,
                    row_for(cell, sample, epoch, key, status="error", error=cause, output=None, scores={}, usage=usage),
                )
                return
            usage = {role: vars(c) for role, c in context.usage.items()}
            finish(
                cell,
                row_for(
                    cell,
                    sample,
                    epoch,
                    key,
                    status="ok",
                    error=None,
                    output=output.model_dump(mode="json"),
                    scores=scores,
                    usage=usage,
                ),
            )
            summary.ran += 1

    if progress:
        progress.start(summary)
    status = "finished"
    # Everything alive now (imports, datasets, the plan) lives for the whole run: frozen, the cyclic collector
    # stops re-scanning it at every full collection. Those pauses stalled the loop for tens of milliseconds with
    # 100 requests in flight and were most of the spread between identical runs (bench/run_throughput.py).
    gc.freeze()
    tasks = [asyncio.ensure_future(one(*item)) for item in remaining]
    try:
        await asyncio.gather(*tasks)
    except BaseException as exc:
        # Ctrl-C, or a failure outside any one sample (the store cannot write): stop the samples in flight
        # rather than keep paying for answers that could not be kept.
        summary.interrupted = isinstance(exc, asyncio.CancelledError | KeyboardInterrupt)
        status = "interrupted" if summary.interrupted else "failed"
        for pending in tasks:
            pending.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        gc.unfreeze()
        try:
            writer.close()
        finally:
            for model in models.values():
                await model.aclose()
            summary.wall_s = time.perf_counter() - started
            store.finish_run(run_id, status)
            if progress:
                progress.stop(summary)
            if own_store:
                store.close()
    return summary
