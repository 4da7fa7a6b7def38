"""Run a config on a Ray cluster: the same plan, its samples sharded over Ray workers, one shared store.

``bedside run CONFIG --executor ray [--address ADDR] [--workers N]``. What is the same as the local executor
(:func:`bedside.runs.runner.execute`), because it is the same code: the plan (:func:`plan_run`, in the driver),
the run's lock (held by the driver, renewed by the workers), every sample's run, scoring, error handling and
writing (each worker runs its shard with the runner's own ``_Running``), sample keys, and so the results: the
same stored outputs and scores, sample by sample (tested against the local executor).

How the work is split:

* the driver plans, takes the lock, finishes from the store what needs no model (re-scores, reuse), then
  splits the samples to generate into ``workers`` shards by a hash of (dataset, sample id, epoch): every cell
  of one sample lands on the same worker, where identical calls (a draft shared by a grid of matchers, say)
  meet the worker's single-flight and cache instead of being paid for twice on two machines;
* each worker is a Ray actor running its shard on its own event loop with ``ceil(concurrency / workers)``
  samples in flight, building its own models and writing finished samples to the shared store every 50 ms;
* endpoint limits are cluster-wide: each worker's endpoint limiters are handles on the run's limits actor (one
  limiter per endpoint, :mod:`bedside.llm.shared_limiter`), so the cap and the 429 back-off hold across workers;
* the response cache is shared through its location (a PostgreSQL URL, or on a one-machine cluster a SQLite
  file), so an answer one worker committed is a cache hit for every other.

Faults: a worker actor that dies (killed, out of memory, node lost) is restarted by Ray (``max_restarts``) and its
shard is retried (``max_task_retries``); the retried shard first reads which of its samples the store already
holds with the same key and runs only the rest, so a finished sample is never sent again, and the cache answers
what the dead worker had received but not yet stored. The restarted worker hands back the limiter slots its
previous life held. Each sample is stored exactly once (the store's primary key; a re-run replaces its row).

Stores: PostgreSQL for clusters of several machines. A SQLite store (and cache) is refused unless every node of
the cluster is this machine (a local cluster: ``ray.init`` here, or an address on the loopback), where SQLite's
WAL mode makes concurrent writers from several processes safe (each transaction waits for the previous one);
over a network filesystem SQLite's locking is not to be trusted, hence the refusal.

Ray started here (no ``--address``) listens on 127.0.0.1 only: ``_node_ip_address`` is pinned, the dashboard is
off, and nothing outside the loopback is contacted.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import math
import os
import resource
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from bedside.llm import UsageLedger
from bedside.llm.cache import default_cache_path
from bedside.llm.cache_postgres import is_postgres_url
from bedside.runs.config import RunConfig
from bedside.runs.runner import (
    CellProgress,
    Item,
    Plan,
    Progress,
    RunSummary,
    _Running,
    _settings,
    build_models,
    check_config,
    load_datasets,
    plan_run,
)
from bedside.runs.store import RunLock, Store, results_table
from bedside.runs.task import Task, resolve_task

WORKER_PREFIX = "bedside-worker"
MAX_RESTARTS = 4
"""How often one worker may die and be restarted in a run before the run fails."""
POLL_S = 0.5
"""How often the driver reads progress from the store."""


class RayExecutorError(RuntimeError):
    """A Ray run cannot start (Ray missing, a SQLite store on a multi-node cluster) or a worker gave up."""


def shard_of(item: Item, workers: int) -> int:
    """The worker an item goes to: stable, and the same for every cell of one (dataset, sample, epoch)."""
    digest = hashlib.sha256(f"{item.cell.dataset}\0{item.sample.id}\0{item.epoch}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % workers


def _is_local_address(address: str | None) -> bool:
    if address is None:
        return True
    if address in {"local", "auto"}:  # "auto": the cluster `ray start` made on this machine
        return True
    host = urlsplit(address if "://" in address else f"ray://{address}").hostname or ""
    return host in {"localhost", "127.0.0.1", "::1"} or host.startswith("127.")


def pin_loopback() -> None:
    """Keep Ray's node IP on 127.0.0.1 without asking the network: given ``_node_ip_address='127.0.0.1'``, Ray
    (2.x) still swaps a loopback address for the one its own detection finds, which opens a UDP socket towards
    8.8.8.8. Ray skips that detection where clusters are disabled (its macOS/Windows default): this turns that
    switch off here and, through the environment, in every process Ray starts from here (raylet, workers)."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    # Ray's usage statistics look for a cloud provider at start-up (the metadata address 169.254.169.254 and a DNS
    # lookup, seen with strace); with them off, nothing is sent anywhere.
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False


_NOWHERE_PROXY = "http://127.0.0.1:9"
"""A loopback port nothing listens on (discard): where Ray's own HTTP probes are sent to fail at once."""


def init_local_ray(*, num_cpus: int, namespace: str = "bedside", runtime_env: dict[str, Any] | None = None) -> None:
    """Start Ray on this machine, on 127.0.0.1 only: node IP pinned (and never detected), no dashboard, no usage
    statistics, and no probe of cloud metadata services.

    Even without the dashboard, Ray starts a small API server whose usage-statistics module asks the cloud
    metadata address (169.254.169.254) and ``metadata.google.internal`` (a DNS lookup) which cloud it runs on,
    whether statistics are enabled or not (seen with strace). Those probes use ``requests``, which honours proxy
    variables: while Ray starts its processes, ``http_proxy`` points at a closed loopback port, so they fail at
    once without resolving or contacting anything else. The driver's own variables are restored afterwards;
    bedside's HTTP client ignores proxy variables anyway (aiohttp without ``trust_env``).
    """
    import ray

    pin_loopback()
    saved = {name: os.environ.get(name) for name in ("http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY")}
    os.environ.update({"http_proxy": _NOWHERE_PROXY, "HTTP_PROXY": _NOWHERE_PROXY, "no_proxy": "", "NO_PROXY": ""})
    try:
        ray.init(
            _node_ip_address="127.0.0.1",
            include_dashboard=False,
            num_cpus=num_cpus,
            namespace=namespace,
            runtime_env=runtime_env,
            log_to_driver=False,
        )
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    addresses = {node.get("NodeManagerAddress") for node in ray.nodes()}
    if addresses != {"127.0.0.1"}:
        ray.shutdown()
        raise RayExecutorError(f"Ray did not stay on 127.0.0.1 (nodes at {sorted(map(str, addresses))})")


def _init_ray(address: str | None, workers: int, runtime_env: dict[str, Any] | None) -> bool:
    """Connect to Ray, or start a local one on 127.0.0.1; whether this call started (and must stop) it."""
    try:
        import ray
    except ImportError:
        raise RayExecutorError("--executor ray needs Ray: pip install 'bedside[ray]'") from None
    if ray.is_initialized():
        return False
    if address is None:
        init_local_ray(num_cpus=workers, runtime_env=runtime_env)
    else:
        ray.init(address=address, namespace="bedside", runtime_env=runtime_env, log_to_driver=False)
    return True


def _check_storage(store_url: str, cache: str | None) -> None:
    """SQLite only when every node of the cluster is this machine (see the module docstring)."""
    import ray

    sqlite = [what for what, where in (("store", store_url), ("cache", cache)) if where and not is_postgres_url(where)]
    if not sqlite:
        return
    if store_url.endswith(":memory:"):
        raise RayExecutorError("an in-memory store cannot be shared by Ray workers; use a file or PostgreSQL")
    addresses = {node.get("NodeManagerAddress", "") for node in ray.nodes() if node.get("Alive")}
    if any(not (a.startswith("127.") or a in {"localhost", "::1"}) for a in addresses) and len(addresses) > 1:
        raise RayExecutorError(
            f"the {' and '.join(sqlite)} {'is' if len(sqlite) == 1 else 'are'} SQLite, which only a one-machine "
            f"cluster may share (this one has {len(addresses)} nodes): use postgresql+psycopg://... for "
            "--store and --cache"
        )


def _cache_location(cache: str | Path | bool | None) -> str | None:
    if cache is True:
        return str(default_cache_path())
    if cache is False or cache is None:
        return None
    return str(cache)


class _ShardRunning(_Running):
    """A worker's share of a plan: the runner's own sample loop, with endpoint caps taken from the whole run's
    config (the per-worker config only lowers how many samples this worker keeps in flight)."""

    def __init__(self, plan: Plan, store: Store, lock: RunLock, full_config: RunConfig) -> None:
        super().__init__(plan, store, lock, None)
        self.full_config = full_config

    def _build_models(self, cache: str | Path | bool | None) -> None:
        whole = dataclasses.replace(self.plan, config=self.full_config)
        self.models, self.cell_models = build_models(whole, cache, self.summary)


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
    """CPU seconds the shard took in the worker (this life)."""
    max_rss_mb: float = 0.0
    """The worker process's peak resident memory."""
    limits: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The cluster-wide limiters as the limits actor saw them when this shard ended, by endpoint."""
    started: float = 0.0
    finished: float = 0.0
    """Wall-clock times (``time.time``) the shard began and ended in the worker (start-up costs excluded)."""


class RunWorker:
    """One Ray worker (an async actor): runs shards of a run's plan. Plain class; :func:`_worker_class` wraps it."""

    def __init__(self, index: int, token: str) -> None:
        self.index = index
        self.token = token

    def pid(self) -> int:
        return os.getpid()

    async def run_shard(
        self,
        config: RunConfig,
        task: Task | None,
        scorers: list[str],
        items: list[Item],
        bypass: dict[str, list[str]],
        lock: RunLock,
        cache: str | None,
        retry_errors: bool,
        workers: int,
    ) -> ShardResult:
        from bedside.llm import shared_limiter

        cpu_start, started = time.process_time(), time.time()
        limits = shared_limiter.install(self.token, owner=f"worker-{self.index}", grace_s=_longest_timeout(config))
        task = task or resolve_task(config.task)
        store = Store(config.store)
        try:
            todo, skipped = _not_yet_stored(store, config.run_id, items, retry_errors)
            per_worker = config.model_copy(update={"concurrency": max(1, math.ceil(config.concurrency / workers))})
            cells = sorted({item.cell for item in todo}, key=lambda c: c.id)
            summary = RunSummary(config.run_id, {c.id: CellProgress(0) for c in cells})
            settings = {role: _settings(config, role) for role in config.models}
            plan = Plan(per_worker, task, scorers, cells, settings, summary, generate=todo, bypass=bypass)
            running = _ShardRunning(plan, store, lock, config)
            await running.run(cache)
            seen = await limits.actor.stats.remote() if limits.actor is not None else {}
        finally:
            store.close()
        return ShardResult(
            index=self.index,
            ran=summary.ran,
            truncated=summary.truncated,
            skipped=skipped,
            cells={cell: (c.done, c.errors) for cell, c in summary.cells.items()},
            usage={role: entry.model_dump() for role, entry in summary.usage.snapshot().items()},
            pid=os.getpid(),
            cpu_s=time.process_time() - cpu_start,
            max_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            limits=seen,
            started=started,
            finished=time.time(),
        )


def _longest_timeout(config: RunConfig) -> float:
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


def _merge_usage(ledger: UsageLedger, usage: dict[str, Any]) -> None:
    for role, values in usage.items():
        entry = ledger._entry(role)  # type: ignore[arg-type]
        for name, value in values.items():
            if name == "priced":
                entry.priced = entry.priced or bool(value)
            else:
                setattr(entry, name, getattr(entry, name) + value)


def _generated_ok(store: Store, run_id: str, items: list[Item]) -> int:
    """How many of ``items`` the store now holds as successful (the summary's ``ran``)."""
    if not items:
        return 0
    table = results_table
    with store.engine.connect() as db:
        rows = db.execute(
            select(table.c.cell, table.c.sample_id, table.c.epoch, table.c.key).where(
                (table.c.run_id == run_id) & (table.c.status == "ok")
            )
        ).all()
    ok = {(r.cell, r.sample_id, r.epoch, r.key) for r in rows}
    return sum((i.cell.id, i.sample.id, i.epoch, i.key) in ok for i in items)


def _not_yet_stored(store: Store, run_id: str, items: list[Item], retry_errors: bool) -> tuple[list[Item], int]:
    """The items whose result the store does not hold yet with the same key (a retried shard's leftovers)."""
    table = results_table
    with store.engine.connect() as db:
        rows = db.execute(
            select(table.c.cell, table.c.sample_id, table.c.epoch, table.c.key, table.c.status).where(
                table.c.run_id == run_id
            )
        ).all()
    done = {
        (r.cell, r.sample_id, r.epoch, r.key)
        for r in rows
        if r.status == "ok" or (r.status == "error" and not retry_errors)
    }
    todo = [i for i in items if (i.cell.id, i.sample.id, i.epoch, i.key) not in done]
    return todo, len(items) - len(todo)


_worker_class: Any = None


def _worker_class_remote() -> Any:
    global _worker_class
    if _worker_class is None:
        import ray

        _worker_class = ray.remote(RunWorker)
    return _worker_class


def worker_name(run_id: str, index: int) -> str:
    return f"{WORKER_PREFIX}-{run_id}-{index}"


def _stored_counts(store: Store, run_id: str) -> dict[str, tuple[int, int]]:
    table = results_table
    query = (
        select(table.c.cell, func.count(), func.sum((table.c.status == "error").cast(results_table.c.epoch.type)))
        .where(table.c.run_id == run_id)
        .group_by(table.c.cell)
    )
    with store.engine.connect() as db:
        return {cell: (int(n), int(e or 0)) for cell, n, e in db.execute(query)}


async def execute_ray(
    config: RunConfig,
    *,
    store: Store | None = None,
    task: Task | None = None,
    retry_errors: bool = False,
    progress: Progress | None = None,
    cache: str | Path | bool | None = True,
    address: str | None = None,
    workers: int = 2,
    worker_cpus: float = 1.0,
    runtime_env: dict[str, Any] | None = None,
    on_shards: Callable[[list[ShardResult]], None] | None = None,
) -> RunSummary:
    """Run (or resume) ``config`` on Ray with ``workers`` workers; returns the same summary as ``execute``.

    ``address``: an existing cluster (``ray://HOST:10001``, ``auto``); without it, Ray is started on 127.0.0.1
    (unless this process already called ``ray.init``). ``task`` (an object) is sent to the workers pickled;
    without it each worker resolves ``config.task`` by name, so the task's package must be installed there.
    ``on_shards`` receives each worker's figures (CPU, memory, counts) when all have finished.
    """
    if workers < 1:
        raise ValueError("--workers must be at least 1")
    started = time.perf_counter()
    task = task or resolve_task(config.task)
    check_config(config, task)
    datasets = load_datasets(config, task)
    cache_location = _cache_location(cache)
    store_location = store.url if store is not None else config.store
    if not _is_local_address(address):
        # checked before connecting: a remote cluster's workers cannot share this machine's SQLite files
        for what, where in (("store", store_location), ("cache", cache_location)):
            if where and not is_postgres_url(where):
                raise RayExecutorError(
                    f"the {what} {where} is SQLite, which a cluster on another machine ({address}) cannot share: "
                    "use postgresql+psycopg://... for --store and --cache (or --no-cache)"
                )
    own_store = store is None
    store = store or Store(config.store)
    started_ray = False
    token = uuid.uuid4().hex[:12]
    try:
        started_ray = _init_ray(address, workers, runtime_env)
        import ray

        _check_storage(store.url, cache_location)
        lock = store.lock_run(config.run_id)
    except BaseException:
        if own_store:
            store.close()
        if started_ray:
            import ray

            ray.shutdown()
        raise
    actors: list[Any] = []
    status = "finished"
    summary: RunSummary | None = None
    try:
        store.begin_run(config.run_id, config.name, config.task, config.model_dump())
        plan = plan_run(config, store, task=task, datasets=datasets, retry_errors=retry_errors)
        summary = plan.summary
        # What needs no model (re-scores, reuse of another run's rows) is finished here, as the local runner does.
        local = _Running(dataclasses.replace(plan, generate=[]), store, lock, None)
        await local.run(cache)
        if progress:
            progress.start(summary)
        shards: list[list[Item]] = [[] for _ in range(workers)]
        for item in plan.generate:
            shards[shard_of(item, workers)].append(item)
        worker_cls = _worker_class_remote()
        refs = []
        for index, items in enumerate(shards):
            if not items:
                continue
            actor = worker_cls.options(
                name=worker_name(config.run_id, index),
                max_restarts=MAX_RESTARTS,
                max_task_retries=MAX_RESTARTS,
                num_cpus=worker_cpus,
                max_concurrency=4,
            ).remote(index, token)
            actors.append(actor)
            keys = {item.key for item in items}
            bypass = {k: v for k, v in plan.bypass.items() if k in keys}
            refs.append(
                actor.run_shard.remote(
                    config, task, plan.scorers, items, bypass, lock, cache_location, retry_errors, workers
                )
            )
        base = {cell: c.done for cell, c in summary.cells.items()}
        before = _stored_counts(store, config.run_id)
        pending = list(refs)
        results: list[ShardResult] = []
        while pending:
            done, pending = await asyncio.to_thread(ray.wait, pending, num_returns=1, timeout=POLL_S)
            for ref in done:
                results.append(await asyncio.to_thread(ray.get, ref))
            if progress:
                with contextlib.suppress(SQLAlchemyError):
                    now = _stored_counts(store, config.run_id)
                    for cell, counts in summary.cells.items():
                        grew = now.get(cell, (0, 0))[0] - before.get(cell, (0, 0))[0]
                        counts.done = min(counts.total, base[cell] + max(grew, 0))
                    progress.update(summary)
        # The store is the record (a worker that died took its counts with it): cells and ``ran`` from there.
        stored = _stored_counts(store, config.run_id)
        for cell, counts in summary.cells.items():
            counts.done, counts.errors = stored.get(cell, (0, 0))
        summary.ran = _generated_ok(store, config.run_id, plan.generate)
        for result in results:
            summary.truncated += result.truncated
            _merge_usage(summary.usage, result.usage)
        if on_shards is not None:
            on_shards(results)
        summary.concurrency = config.concurrency
        return summary
    except BaseException as exc:
        status = "interrupted" if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt) else "failed"
        if summary is not None:
            summary.interrupted = status == "interrupted"
        raise
    finally:
        import ray

        if summary is not None:
            summary.wall_s = time.perf_counter() - started
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor, no_restart=True)
        from bedside.llm.shared_limiter import kill_limiters

        with contextlib.suppress(Exception):
            kill_limiters(token)
        with contextlib.suppress(SQLAlchemyError):
            store.finish_run(config.run_id, status)
        if progress and summary is not None:
            progress.stop(summary)
        with contextlib.suppress(SQLAlchemyError):
            store.unlock_run(lock)
        if own_store:
            store.close()
        if started_ray:
            ray.shutdown()
