"""Run a config on a Ray cluster: the same plan, its samples pulled by Ray workers from a work queue, one store.

``bedside run CONFIG --executor ray [--address ADDR] [--workers N]``. What is the same as the local executor
(:func:`bedside.runs.runner.execute`), because it is the same code: the plan (:func:`plan_run`, in the driver),
the run's lock (held by the driver, renewed by the workers), every sample's run, scoring, error handling and
writing (each worker runs the runner's own ``_Running`` sample loop), sample keys, and so the results: the
same stored outputs and scores, sample by sample (tested against the local executor).

How the work is shared:

* the driver plans, takes the lock, finishes from the store what needs no model (re-scores, reuse), then cuts
  the samples to generate into small batches, every cell of one (dataset, sample, epoch) in the same batch (so
  identical calls of a sample's cells meet one worker's single-flight and cache);
* the driver is the work queue (:class:`_Dispatcher`): each worker holds a few batches and gets the next when
  one is stored, so a slow worker takes fewer, and a worker with nothing left is finished and gives its CPU back;
* each worker is a Ray actor running its samples on its own event loop with ``ceil(concurrency / workers)`` in
  flight, writing finished samples to the shared store every 50 ms;
* endpoint limits are cluster-wide: each worker's endpoint limiters are handles on the run's limits actor
  (:mod:`bedside.llm.shared_limiter`), so the cap and the 429 back-off hold across workers;
* the response cache is shared through its location (a PostgreSQL URL, or on a one-machine cluster a SQLite
  file), so an answer one worker committed is a cache hit for every other.

Faults: a worker that is lost (killed, out of memory, its node gone) fails its calls with a ``RayActorError``;
the driver puts the samples it held and the store does not hold back at the front of the queue (logged, counted
in the summary's ``retried``), starts a replacement where a CPU is free, and carries on with the others. The
limits actor is restarted by Ray and rebuilds its state conservatively (see its module). Each sample is stored
exactly once (the store's primary key; a re-run replaces its row). Too few free CPUs for ``--workers`` is an
error at the start, not a wait.

Stores: PostgreSQL for clusters of several machines. A SQLite store (and cache) is refused unless every node of
the cluster is this machine (a local cluster: ``ray.init`` here, or an address on the loopback), where SQLite's
WAL mode makes concurrent writers from several processes safe (each transaction waits for the previous one);
over a network filesystem SQLite's locking is not to be trusted, hence the refusal.

Ray started here (no ``--address``) listens on 127.0.0.1 only: ``_node_ip_address`` is pinned, the dashboard is
off, and nothing outside the loopback is contacted.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import math
import os
import resource
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bedside.llm import UsageLedger
from bedside.llm.cache import default_cache_path
from bedside.llm.cache_postgres import is_postgres_url
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
    check_config,
    load_datasets,
)
from bedside.runs.shards import (
    Batch,
    ShardResult,
    ShardRunning,
    driving,
    longest_timeout,
    merge_usage,
    not_yet_stored,
    sample_batches,
    settle_summary,
    usage_of,
)
from bedside.runs.store import RunLock, Store
from bedside.runs.task import Task

log = logging.getLogger(__name__)

WORKER_PREFIX = "bedside-worker"
MAX_RESTARTS = 4
"""How often one worker may be lost and replaced in a run (after that the others carry on without it)."""
POLL_S = 0.5
"""How often the driver reads progress from the store."""
LEFTOVER_WAIT_TRIES = 120
"""Half-second reads of the cluster's free CPUs before requeued samples with no worker left to run them are
refused (a worker just finished or lost frees its CPU in Ray's view only after its node reports it)."""


class RayExecutorError(RuntimeError):
    """A Ray run cannot start (Ray missing, a SQLite store on a multi-node cluster) or a worker gave up."""


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


NOWHERE_PROXY = "http://127.0.0.1:9"
"""A loopback port nothing listens on (discard): where Ray's own HTTP probes are sent to fail at once."""


@contextlib.contextmanager
def loopback_ray_env() -> Iterator[None]:
    """While Ray starts its processes here: node IP pinned and never detected (:func:`pin_loopback`), usage
    statistics off, and Ray's own HTTP probes sent to a closed loopback port.

    Even without the dashboard, Ray starts a small API server whose usage-statistics module asks the cloud
    metadata address (169.254.169.254) and ``metadata.google.internal`` (a DNS lookup) which cloud it runs on,
    whether statistics are enabled or not (seen with strace). Those probes use ``requests``, which honours proxy
    variables: while Ray starts its processes, ``http_proxy`` points at a closed loopback port, so they fail at
    once without resolving or contacting anything else. The driver's own variables are restored afterwards;
    bedside's HTTP client ignores proxy variables anyway (aiohttp without ``trust_env``). A cluster of
    ``ray start`` processes (:mod:`bedside.testing.ray_cluster`) gets the same variables in its environment."""
    pin_loopback()
    saved = {name: os.environ.get(name) for name in ("http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY")}
    os.environ.update({"http_proxy": NOWHERE_PROXY, "HTTP_PROXY": NOWHERE_PROXY, "no_proxy": "", "NO_PROXY": ""})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def init_local_ray(*, num_cpus: int, namespace: str = "bedside", runtime_env: dict[str, Any] | None = None) -> None:
    """Start Ray on this machine, on 127.0.0.1 only: node IP pinned (and never detected), no dashboard, no usage
    statistics, and no probe of cloud metadata services (:func:`loopback_ray_env`)."""
    import ray

    with loopback_ray_env():
        ray.init(
            # "local": always a new instance; without it Ray joins whatever cluster /tmp/ray/ray_current_cluster
            # names (a user's own `ray start`, or one still shutting down), with that cluster's settings
            address="local",
            _node_ip_address="127.0.0.1",
            include_dashboard=False,
            num_cpus=num_cpus,
            namespace=namespace,
            runtime_env=runtime_env,
            log_to_driver=False,
        )
    addresses = {node.get("NodeManagerAddress") for node in ray.nodes()}
    if addresses != {"127.0.0.1"}:
        ray.shutdown()
        raise RayExecutorError(f"Ray did not stay on 127.0.0.1 (nodes at {sorted(map(str, addresses))})")


def without_inherited(runtime_env: dict[str, Any] | None, environ: Mapping[str, str]) -> dict[str, Any] | None:
    """``runtime_env`` less the variables a Ray started here inherits anyway (``BEDSIDE_TASKS`` as the driver has
    it), None if nothing is left. A worker with a runtime_env cannot be one of the idle processes Ray starts with
    the cluster, so each would start a fresh interpreter first: a run's first sample came 1.0 s after the run began
    without one and 2.0 s with one (``bench/scale.py``, issue 47)."""
    if not runtime_env:
        return None
    kept = dict(runtime_env)
    variables = {k: v for k, v in (kept.pop("env_vars", None) or {}).items() if environ.get(k) != v}
    if variables:
        kept["env_vars"] = variables
    return kept or None


def _init_ray(address: str | None, workers: int, runtime_env: dict[str, Any] | None) -> bool:
    """Connect to Ray, or start a local one on 127.0.0.1; whether this call started (and must stop) it."""
    try:
        import ray
    except ImportError:
        raise RayExecutorError("--executor ray needs Ray: pip install 'bedside[ray]'") from None
    if ray.is_initialized():
        return False
    if address is None:
        init_local_ray(num_cpus=workers, runtime_env=without_inherited(runtime_env, os.environ))
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


@dataclasses.dataclass(frozen=True)
class BatchAnswer:
    """A worker's answer to a batch, once all its samples are stored: per cell (stored, of which errors), and how
    many samples the worker still had waiting to start (the driver keeps more batches at a worker whose queue
    runs low when a batch is answered: see :class:`_Dispatcher`)."""

    cells: dict[str, tuple[int, int]]
    waiting: int
    usage: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The worker's usage so far by role (``RoleUsage`` fields): the driver's progress line sums the latest of
    each worker (the run's final usage comes from the workers' finish reports)."""


class RunWorker:
    """One Ray worker (an async actor): ``start`` builds its runner, ``run_batch`` adds samples to its queue and
    answers once they are stored, ``finish`` ends it. Plain class; :func:`_worker_class_remote` wraps it."""

    def __init__(self, index: int, token: str) -> None:
        import ray

        from bedside.retrieval.embeddings import THREADS_ENV

        # Scoring libraries size their thread pools to this worker's CPUs, not the machine's: eight workers each
        # running MiniLM on all 16 cores of a machine spent 1.8x the CPU per sample of one process (issue 47).
        cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 1.0)
        os.environ.setdefault(THREADS_ENV, str(max(1, math.floor(cpus))))
        self.index = index
        self.token = token
        self.running: ShardRunning | None = None
        self.task: asyncio.Future[None] | None = None
        self.store: Store | None = None
        self.limits: Any = None
        self.run_id = ""
        self.retry_errors = False
        self.cpu_start = self.started = 0.0
        self.ready = asyncio.Event()
        """Set once ``start`` has built the runner: an async actor does not run its calls in order."""

    def pid(self) -> int:
        return os.getpid()

    def node(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())

    async def start(
        self,
        config: RunConfig,
        task: Task | None,
        scorers: list[str],
        cells: list[Cell],
        lock: RunLock,
        cache: str | None,
        retry_errors: bool,
        workers: int,
    ) -> int:
        from bedside.llm import shared_limiter

        self.cpu_start, self.started = time.process_time(), time.time()
        self.limits = shared_limiter.install(self.token, owner=f"worker-{self.index}", grace_s=longest_timeout(config))
        task = task or resolve_task(config.task)
        self.store = Store(config.store)
        self.run_id, self.retry_errors = config.run_id, retry_errors
        per_worker = config.model_copy(update={"concurrency": max(1, math.ceil(config.concurrency / workers))})
        summary = RunSummary(config.run_id, {c.id: CellProgress(0) for c in cells})
        settings = {role: _settings(config, role) for role in config.models}
        plan = Plan(per_worker, task, scorers, cells, settings, summary, generate=[], bypass={})
        self.running = running = ShardRunning(plan, self.store, lock, config, cache)
        self.task = asyncio.ensure_future(running.run(cache))
        self.task.add_done_callback(self._fail_waiting)
        self.ready.set()
        return os.getpid()

    def _fail_waiting(self, task: asyncio.Future[None]) -> None:
        """The runner stopped (the store cannot be written): every batch still waiting fails with its error."""
        assert self.running is not None
        error = task.exception() if not task.cancelled() else asyncio.CancelledError()
        for batch in list(self.running.waiting.values()):
            if not batch.future.done():
                batch.future.set_exception(error or RuntimeError("the worker's runner stopped"))
        self.running.waiting.clear()

    async def run_batch(self, items: list[Item], bypass: dict[str, list[str]], check_stored: bool) -> BatchAnswer:
        """Run ``items``; answered with (stored, errors) per cell once all are stored, and the samples still
        waiting in this worker's queue then. ``check_stored``: a batch taken back from a lost worker, whose
        samples the store may hold already (those are skipped)."""
        await self.ready.wait()
        running, store = self.running, self.store
        assert running is not None
        assert store is not None
        assert self.task is not None
        if self.task.done():
            self.task.result()  # raises what stopped the runner
            raise RuntimeError("the worker has finished")
        if check_stored:
            items, _ = await asyncio.to_thread(not_yet_stored, store, self.run_id, items, self.retry_errors)
        if not items:
            return BatchAnswer({}, running.queue.qsize())
        running.plan.bypass.update(bypass)
        batch = Batch(asyncio.get_running_loop().create_future(), len(items))
        for item in items:
            running.waiting[(item.cell.id, item.sample.id, item.epoch)] = batch
            running.queue.put_nowait(item)
        cells = await batch.future
        return BatchAnswer(cells, running.queue.qsize(), usage_of(running.summary))

    async def finish(self) -> ShardResult:
        """Stop taking samples (none are queued: the driver sends ``finish`` only to an idle worker), close the
        runner, and report this worker's figures."""
        await self.ready.wait()
        running, store = self.running, self.store
        assert running is not None
        assert store is not None
        assert self.task is not None
        for _ in range(running.plan.config.concurrency):
            running.queue.put_nowait(None)
        try:
            await self.task
            await self.limits.close()  # its leased slots go back for the workers still running
            seen = await self.limits.actor.stats.remote() if self.limits.actor is not None else {}
        finally:
            store.close()
        summary = running.summary
        return ShardResult(
            index=self.index,
            ran=summary.ran,
            truncated=summary.truncated,
            skipped=0,
            cells={cell: (c.done, c.errors) for cell, c in summary.cells.items()},
            usage=usage_of(summary),
            pid=os.getpid(),
            cpu_s=time.process_time() - self.cpu_start,
            max_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            limits=seen,
            lease=self.limits.lease_counts(),
            started=self.started,
            finished=time.time(),
        )


_worker_class: Any = None


def _worker_class_remote() -> Any:
    global _worker_class
    if _worker_class is None:
        import ray

        _worker_class = ray.remote(RunWorker)
    return _worker_class


def worker_name(run_id: str, index: int) -> str:
    return f"{WORKER_PREFIX}-{run_id}-{index}"


FREE_CPUS_SETTLE_S = 10.0
"""How long a short count of free CPUs is re-read before the run is refused: Ray's view of available resources
is refreshed by its nodes' reports, and right after a start or a finished job it can lag behind (seen here at
load 10: a fresh 2-CPU instance reporting 1 free)."""


def check_free_cpus(workers: int, worker_cpus: float, *, settle_s: float = FREE_CPUS_SETTLE_S) -> None:
    """Refuse to start more workers than the cluster has free CPUs for: Ray would keep the extra workers
    pending, and the run would wait for them without a word."""
    import ray

    needed = workers * worker_cpus
    deadline = time.monotonic() + settle_s
    free = ray.available_resources().get("CPU", 0.0)
    while free + 1e-9 < needed and time.monotonic() < deadline:
        time.sleep(0.25)
        free = ray.available_resources().get("CPU", 0.0)
    if free + 1e-9 < needed:
        total = ray.cluster_resources().get("CPU", 0.0)
        raise RayExecutorError(
            f"--workers {workers} needs {needed:g} free CPU(s) ({worker_cpus:g} each) but the cluster has "
            f"{free:g} free of {total:g}: lower --workers, add nodes, or wait for other jobs to finish"
        )


def _is_worker_lost(exc: BaseException) -> bool:
    """Whether a call failed because its worker (or the worker's node) is gone, rather than raised."""
    import ray

    lost = (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.ObjectLostError)
    return isinstance(exc, lost) and not isinstance(exc, ray.exceptions.RayTaskError)


@dataclasses.dataclass
class _Worker:
    index: int
    life: int
    actor: Any
    window: int
    """Batches kept at this worker (at first :attr:`_Dispatcher.PREFETCH`, growing as it needs more)."""
    outstanding: dict[Any, list[Item] | None] = dataclasses.field(default_factory=dict)
    """Calls not yet answered: a batch's ref and its samples (``None``: the ``start`` call)."""
    finishing: Any = None


class _Dispatcher:
    """The driver's work queue: batches go to the workers as they ask (each keeps a window of batches, at first
    ``PREFETCH``), so a slow worker takes fewer and a lost one delays nothing; a lost worker's batches go back to
    the front of the queue (minus what the store already holds), and a replacement starts when the cluster has a
    free CPU for it.

    A batch is answered only once all its samples are stored (so a lost worker's unstored samples are known), up
    to the writer's 50 ms after they finished; meanwhile the worker must have samples waiting, or its slots idle
    until the next batch arrives. How many it needs grows with its pace (samples finish faster against a fast
    endpoint), so a worker's window grows by one batch, up to ``MAX_PREFETCH``, whenever it answers with less
    than a batch waiting. A fixed 3 left the endpoint 89 % used at 600 requests/s and 65 % at 1,200, where the
    local executor kept 96 % and 93 % (bench/scale.py).

    Batches are sized from the run: about :attr:`BATCHES_PER_WORKER` a worker, at least half a worker's share
    of the concurrency and at most :attr:`MOST_SHARES` shares. Each batch costs a fixed round trip (the driver
    encodes it, the worker's Ray threads encode the answer): at half a share (25 samples at 100 in flight over 2
    workers) Ray spent 1.65x the local executor's CPU per sample, at 16 times that about 1.42x (bench/scale.py,
    2 cores). A worker's window is bounded in samples, not batches: :attr:`MAX_PREFETCH` half-share batches'
    worth, so a larger batch means fewer kept, never a worker hoarding the queue."""

    PREFETCH = 3
    MAX_PREFETCH = 16
    BATCHES_PER_WORKER = 12
    MOST_SHARES = 4

    def __init__(
        self,
        *,
        config: RunConfig,
        task: Task | None,
        plan: Plan,
        lock: RunLock,
        store: Store,
        cache: str | None,
        retry_errors: bool,
        workers: int,
        worker_cpus: float,
        token: str,
        progress: Progress | None,
        batch_size: int | None = None,
    ) -> None:
        self.config, self.task, self.plan, self.lock, self.store = config, task, plan, lock, store
        self.cache, self.retry_errors, self.workers, self.worker_cpus = cache, retry_errors, workers, worker_cpus
        self.token, self.progress = token, progress
        per_worker = max(1, math.ceil(config.concurrency / workers))
        least = max(1, math.ceil(per_worker / 2))
        spread = len(plan.generate) // (self.BATCHES_PER_WORKER * max(workers, 1))
        self.batch_size = batch_size or max(least, min(self.MOST_SHARES * per_worker, spread))
        self.most_batches = max(self.PREFETCH, math.ceil(self.MAX_PREFETCH * least / self.batch_size))
        """The window a worker may grow to: :attr:`MAX_PREFETCH` half-share batches' worth of samples."""
        self.queue: collections.deque[tuple[list[Item], bool]] = collections.deque(
            (batch, False) for batch in sample_batches(plan.generate, self.batch_size)
        )
        self.live: dict[int, _Worker] = {}
        self.all_actors: list[Any] = []
        self.results: list[ShardResult] = []
        self.usage_seen: dict[int, dict[str, Any]] = {}
        """Per worker (by object), its usage in its latest batch answer: what the progress line shows."""
        self.retried = 0
        """Samples taken back from a lost worker and run again elsewhere."""
        self.lost = 0
        self.lives: dict[int, int] = {}
        """The latest life started per worker index (actor names carry it, so each is new)."""
        self.limits: Any = None
        """The run's limits actor."""

    def _spawn(self, index: int, life: int) -> None:
        actor = (
            _worker_class_remote()
            .options(
                name=f"{worker_name(self.config.run_id, index)}-{life}",
                num_cpus=self.worker_cpus,
                max_restarts=0,  # the driver replaces a lost worker itself, where there is room for it
                max_concurrency=1000,
                scheduling_strategy="SPREAD",
            )
            .remote(index, self.token)
        )
        worker = _Worker(index, life, actor, self.PREFETCH)
        self.lives[index] = life
        start = actor.start.remote(
            self.config,
            self.task,
            self.plan.scorers,
            self.plan.cells,
            self.lock,
            self.cache,
            self.retry_errors,
            self.workers,
        )
        worker.outstanding[start] = None
        self.live[index] = worker
        self.all_actors.append(actor)

    def _feed(self, worker: _Worker) -> None:
        batches = sum(1 for batch in worker.outstanding.values() if batch is not None)
        while self.queue and batches < worker.window:
            items, check_stored = self.queue.popleft()
            keys = {item.key for item in items}
            bypass = {k: v for k, v in self.plan.bypass.items() if k in keys}
            worker.outstanding[worker.actor.run_batch.remote(items, bypass, check_stored)] = items
            batches += 1

    def _free_cpus(self) -> float:
        import ray

        return float(ray.available_resources().get("CPU", 0.0))

    async def _lose(self, worker: _Worker, exc: BaseException) -> None:
        """A worker (or its node) is gone: its samples go back to the queue, a replacement starts if it can."""
        import ray

        self.live.pop(worker.index, None)
        self.lost += 1
        held = [item for batch in worker.outstanding.values() if batch for item in batch]
        worker.outstanding.clear()
        with contextlib.suppress(Exception):
            ray.kill(worker.actor, no_restart=True)
        if self.limits is not None:
            # its limiter slots come back once its requests have timed out (they may still run at the endpoint)
            self.limits.reset_owners.remote(f"worker-{worker.index}/", "", longest_timeout(self.config))
        todo, kept = await asyncio.to_thread(not_yet_stored, self.store, self.config.run_id, held, self.retry_errors)
        self.retried += len(todo)
        for batch in reversed(sample_batches(todo, max(1, len(todo)))):
            self.queue.appendleft((batch, True))
        log.warning(
            "bedside: Ray worker %d lost (%s); %d of its samples requeued, %d it had stored kept",
            worker.index,
            type(exc).__name__,
            len(todo),
            kept,
        )
        if self.queue and worker.life < MAX_RESTARTS:
            room = self._free_cpus() >= self.worker_cpus
            if not room and not self.live and self.queue:
                # nobody left to run them: give the cluster a moment to report the lost worker's CPU free
                for _ in range(60):
                    await asyncio.sleep(0.5)
                    if (room := self._free_cpus() >= self.worker_cpus) is True:
                        break
            if room:
                self._spawn(worker.index, worker.life + 1)
                log.warning("bedside: Ray worker %d restarted (life %d)", worker.index, worker.life + 1)
        if not self.live and self.queue:
            left = sum(len(items) for items, _ in self.queue)
            raise RayExecutorError(
                f"every Ray worker was lost and the cluster has no free CPU to start another: {left} sample(s) "
                "not run (everything finished is stored); run the same command again to resume"
            )

    async def run(self, summary: RunSummary) -> None:
        for index in range(min(self.workers, max(1, len(self.queue)))):
            self._spawn(index, 0)
        for worker in list(self.live.values()):
            self._feed(worker)
        await self._drain(summary)
        while self.queue:  # a lost worker's samples came back after every other worker had finished
            await self._start_for_leftovers()
            await self._drain(summary)

    async def _start_for_leftovers(self) -> None:
        """Start one worker for samples left in the queue when no worker is live (a lost worker's, requeued while
        the others were finishing), waiting for the cluster to report a CPU free; refuse plainly if none comes."""
        left = sum(len(items) for items, _ in self.queue)
        if self.lost > MAX_RESTARTS * self.workers:
            raise RayExecutorError(
                f"Ray workers were lost {self.lost} times: {left} sample(s) not run (everything finished is "
                "stored); run the same command again to resume"
            )
        for _ in range(LEFTOVER_WAIT_TRIES):
            if self._free_cpus() >= self.worker_cpus:
                life = self.lives.get(0, -1) + 1
                self._spawn(0, life)
                self._feed(self.live[0])
                log.warning(
                    "bedside: %d requeued sample(s) left after the other Ray workers finished: worker 0 started "
                    "again (life %d)",
                    left,
                    life,
                )
                return
            await asyncio.sleep(0.5)
        raise RayExecutorError(
            f"every Ray worker has finished or was lost and the cluster has no free CPU to start another: {left} "
            "sample(s) not run (everything finished is stored); run the same command again to resume"
        )

    async def _drain(self, summary: RunSummary) -> None:
        """Feed the live workers from the queue until each has finished (or is lost)."""
        import ray

        while self.live:
            # By the ref's id, never the object: Ray Client's ``wait`` hands back new ref objects for the same
            # results (issue 47: a dict keyed by the objects raised KeyError at the end of every ray:// run).
            refs: dict[str, tuple[Any, Any]] = {}
            for worker in self.live.values():
                refs.update({_ref_id(ref): (worker, ref) for ref in worker.outstanding})
                if worker.finishing is not None:
                    refs[_ref_id(worker.finishing)] = (worker, worker.finishing)
            waiting = [ref for _, ref in refs.values()]
            ready, rest = await asyncio.to_thread(ray.wait, waiting, num_returns=1, timeout=POLL_S)
            if ready and rest:
                more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
                ready += more
            for returned in ready:
                worker, ref = refs[_ref_id(returned)]
                if worker.index not in self.live or self.live[worker.index] is not worker:
                    continue  # a lost worker's other calls
                try:
                    answer = ray.get(ref)
                except Exception as exc:
                    if not _is_worker_lost(exc):
                        raise
                    await self._lose(worker, exc)
                    continue
                if ref is worker.finishing:
                    self.results.append(answer)
                    self.live.pop(worker.index)
                    with contextlib.suppress(Exception):
                        ray.kill(worker.actor, no_restart=True)  # its CPU is free at once
                    continue
                batch = worker.outstanding.pop(ref)
                if batch is not None:  # (a start call is outstanding too, with no batch)
                    if answer.usage:
                        self.usage_seen[id(worker)] = answer.usage
                    for cell, (done, errors) in answer.cells.items():
                        counts = summary.cells[cell]
                        counts.done = min(counts.total, counts.done + done)
                        counts.errors += errors
                    if answer.waiting < len(batch):  # about to run dry: keep one more batch there
                        worker.window = min(worker.window + 1, self.most_batches)
            for worker in list(self.live.values()):
                if worker.finishing is not None:
                    continue
                self._feed(worker)
                if not worker.outstanding and not self.queue:
                    worker.finishing = worker.actor.finish.remote()
            if self.progress:
                shown = UsageLedger()
                for usage in self.usage_seen.values():
                    merge_usage(shown, usage)
                summary.usage = shown  # the workers' calls so far (Ray's line said "0 model calls" until the end)
                self.progress.update(summary)


def _ref_id(ref: Any) -> str:
    """An object ref's id: the same for every Python object that stands for one result (Ray's ``hex()``)."""
    found = getattr(ref, "hex", None)
    return str(found()) if callable(found) else f"object-{id(ref)}"


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
    """Run (or resume) ``config`` on Ray with ``workers`` workers; returns the same summary as ``execute``, with
    ``retried`` counting the samples a lost worker held that were run again.

    ``address``: an existing cluster (``ray://HOST:10001``, ``auto``); without it, Ray is started on 127.0.0.1
    (unless this process already called ``ray.init``). ``task`` (an object) is sent to the workers pickled;
    without it each worker resolves ``config.task`` by name, so the task's package must be installed there (or
    shipped in ``runtime_env``: ``py_modules`` / ``working_dir``). ``on_shards`` receives each worker's figures
    (CPU, memory, counts) when all have finished.
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
        check_free_cpus(workers, worker_cpus)
        lock = store.lock_run(config.run_id)
    except BaseException:
        if own_store:
            store.close()
        if started_ray:
            import ray

            ray.shutdown()
        raise
    from bedside.llm.shared_limiter import kill_limiters, limits_actor

    dispatcher: _Dispatcher | None = None
    try:
        async with driving(
            config, store, lock, task, datasets, retry_errors=retry_errors, progress=progress, cache=cache,
            started=started,
        ) as plan:  # fmt: skip
            try:
                if plan.generate:
                    # the limiter lives on the driver's node (restarted if it dies), not on a worker node that may go
                    limits = limits_actor(token, longest_timeout(config), near_driver=True)
                    dispatcher = _Dispatcher(
                        config=config,
                        task=task,
                        plan=plan,
                        lock=lock,
                        store=store,
                        cache=cache_location,
                        retry_errors=retry_errors,
                        workers=workers,
                        worker_cpus=worker_cpus,
                        token=token,
                        progress=progress,
                    )
                    dispatcher.limits = limits
                    await dispatcher.run(plan.summary)
                    plan.summary.retried = dispatcher.retried
                results = dispatcher.results if dispatcher is not None else []
                settle_summary(plan.summary, store, config.run_id, plan.generate, results)
                if on_shards is not None:
                    on_shards(results)
            finally:
                for actor in dispatcher.all_actors if dispatcher is not None else []:
                    with contextlib.suppress(Exception):
                        ray.kill(actor, no_restart=True)
                with contextlib.suppress(Exception):
                    kill_limiters(token)
        return plan.summary
    finally:
        if own_store:
            store.close()
        if started_ray:
            ray.shutdown()
