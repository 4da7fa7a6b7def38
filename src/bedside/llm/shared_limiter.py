"""Endpoint limits that hold across a Ray cluster: one actor per endpoint owns the limiter.

In one process, every model talking to an endpoint shares one :class:`~bedside.llm.limiter.AdaptiveLimiter`
(the cap, and the AIMD back-off after 429s). With several Ray workers, each would have its own and the endpoint
would see workers × cap. So on Ray the limiters live in one named actor per run (:class:`_Limits`: one
limiter per endpoint, detached, named from the run's token; one actor rather than one per endpoint, since each
is a process), and each worker's models hold a :class:`RemoteLimiter` per endpoint, a stand-in with the same
interface:

* ``acquire`` waits for a slot granted by the actor (the actor queues waiters in order, as the local limiter
  does); a worker asks for the slots of all its waiting callers in one message and returns slots in batches
  (every 2 ms) with the successes seen since, so the actor sees a few messages per batch, not two per request;
* ``on_rate_limited`` goes to the actor at once: the limit halves for every worker (once per second at most,
  so one burst counts once), and grows back by one after ``limit`` successes across the cluster;
* the actor counts slots per *owner* (a worker's stable name plus its life); a worker that is restarted
  returns what its earlier lives held, after their requests' timeout (``timeout_s``: until then they may still
  be running at the endpoint), so a killed worker neither leaks its share of the cap nor lets the endpoint
  see more than the cap;
* a caller cancelled while waiting for a grant returns the slot as soon as it is granted.

The hook is :func:`bedside.llm.limiter.install_limiter_factory`: :func:`install` sets it in a worker, and every
endpoint limiter the model layer asks for from then on (pools' replicas included) is a :class:`RemoteLimiter`.
Ray is imported only here, and only when this is used (the ``ray`` extra).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import uuid
from typing import Any

from bedside.llm.limiter import AdaptiveLimiter, install_limiter_factory

NAME_PREFIX = "bedside-limiter"
RESERVED = "reserved-after-restart"
"""The owner a restarted limits actor books its predecessor's possible grants to (see :meth:`_Limits._state`)."""


class _LimiterState:
    """The actor's body (kept a plain class so it can be tested without Ray)."""

    def __init__(self, maximum: int, cooldown_s: float = 1.0) -> None:
        self.limiter = AdaptiveLimiter(maximum, cooldown_s=cooldown_s)
        self.held: dict[str, int] = {}
        self.asking: dict[str, int] = {}
        """Owners waiting for a grant now (for :meth:`watch`'s fair share)."""
        self.requests = 0
        self.rate_limited = 0
        self.lowest_limit = maximum

    async def acquire(self, owner: str, wanted: int = 1) -> tuple[int, int]:
        """Wait for one slot, then take as many more of the ``wanted`` as are free now (nobody else waiting);
        returns (slots granted, current limit)."""
        self.asking[owner] = self.asking.get(owner, 0) + 1
        try:
            await self.limiter.acquire()
        finally:
            self.asking[owner] -= 1
            if not self.asking[owner]:
                del self.asking[owner]
        granted = 1
        limiter = self.limiter
        while granted < wanted and limiter.in_flight < limiter.limit and not limiter._waiters:
            limiter._take()
            granted += 1
        self.held[owner] = self.held.get(owner, 0) + granted
        self.requests += granted
        return granted, limiter.limit

    def release(self, owner: str, count: int = 1, successes: int = 0) -> int:
        """Give back ``count`` slots after ``successes`` successful requests; returns the current limit."""
        for _ in range(successes):
            self.limiter.on_success()
        count = min(count, self.held.get(owner, 0))
        if count:
            self.held[owner] -= count
            for _ in range(count):
                self.limiter.release()
        return self.limiter.limit

    def watch(self, owner: str, successes: int = 0) -> tuple[int, int]:
        """(current limit, ``owner``'s share): how many slots ``owner`` may keep re-using itself, the limit
        split evenly over the owners that hold or ask for slots (nobody else waiting: all it holds). 0 when it
        holds nothing here (its slots were granted by a lost life of this actor) or more are out than the limit
        (after a 429): then every slot goes back to the actor."""
        for _ in range(successes):
            self.limiter.on_success()
        limiter = self.limiter
        if self.held.get(owner, 0) < 1 or limiter.in_flight > limiter.limit:
            return limiter.limit, 0
        if not limiter._waiters:
            return limiter.limit, self.held[owner]
        owners = {o for o, n in self.held.items() if n > 0 and o != RESERVED} | set(self.asking)
        return limiter.limit, -(-limiter.limit // max(1, len(owners)))

    def on_rate_limited(self) -> int:
        self.rate_limited += 1
        self.limiter.on_rate_limited()
        self.lowest_limit = min(self.lowest_limit, self.limiter.limit)
        return self.limiter.limit

    def tighten(self, maximum: int) -> None:
        if maximum < self.limiter.maximum:
            self.limiter.maximum = maximum
            self.limiter.limit = min(self.limiter.limit, maximum)
            self.lowest_limit = min(self.lowest_limit, self.limiter.limit)

    async def reset_owners(self, prefix: str, keep: str, grace_s: float = 0.0) -> int:
        """Give back the slots of every owner named ``prefix...`` but ``keep`` (the earlier lives of a worker that
        died and was restarted), after ``grace_s``; how many there were.

        The grace is the requests' own timeout: a dead worker's requests may still be running at the endpoint
        (a server does not always notice a client gone), and handing their slots on at once would let the
        endpoint see more than its cap."""
        leaked = 0
        for owner in [o for o in self.held if o.startswith(prefix) and o != keep]:
            leaked += self.held.pop(owner)
        if leaked:
            if grace_s > 0:
                await asyncio.sleep(grace_s)
            for _ in range(leaked):
                self.limiter.release()
        return leaked

    def reserve(self, count: int, grace_s: float) -> None:
        """Count ``count`` slots as taken for ``grace_s`` (then free them): what a restarted actor assumes its
        previous life had granted, since those requests may still be running at the endpoint."""
        self.held[RESERVED] = self.held.get(RESERVED, 0) + count
        for _ in range(count):
            self.limiter._take()

        def expire() -> None:
            count_now = min(count, self.held.get(RESERVED, 0))
            self.held[RESERVED] -= count_now
            if not self.held[RESERVED]:
                del self.held[RESERVED]
            for _ in range(count_now):
                self.limiter.release()

        asyncio.get_running_loop().call_later(grace_s, expire)

    def stats(self) -> dict[str, Any]:
        return {
            "maximum": self.limiter.maximum,
            "limit": self.limiter.limit,
            "in_flight": self.limiter.in_flight,
            "max_in_flight": self.limiter.max_in_flight,
            "requests": self.requests,
            "rate_limited": self.rate_limited,
            "lowest_limit": self.lowest_limit,
            "held": dict(self.held),
        }


class _Limits:
    """The actor's body: every endpoint limiter of one run, by endpoint id. One actor (one process) serves
    them all: an actor per endpoint would cost a process per endpoint, which on a small cluster competes with
    the workers for CPU, while one actor's load is a few messages per batch of requests."""

    def __init__(self, grace_s: float = 0.0, restarted: bool = False) -> None:
        self.endpoints: dict[str, _LimiterState] = {}
        self.grace_s = grace_s
        self.restarted = restarted
        """This is a restarted life: what the previous one granted is unknown."""

    def _state(self, endpoint: str, maximum: int) -> _LimiterState:
        """An endpoint's limiter, made on first use. In a restarted actor (its process or node was lost), the
        previous life's grants are unknown and may still be running at the endpoint: the whole cap counts as
        taken until the longest request timeout of the run (``grace_s``) has passed, and callers wait (they
        are not errors) -- conservative, so the endpoint never sees more than its cap. Slots returned for a
        life the actor does not know are ignored (they are part of that reservation)."""
        state = self.endpoints.get(endpoint)
        if state is None:
            state = self.endpoints[endpoint] = _LimiterState(maximum)
            if self.restarted and self.grace_s > 0:
                state.reserve(maximum, self.grace_s)
        else:
            state.tighten(maximum)  # the strictest configured limit wins, cluster-wide too
        return state

    async def ensure(self, endpoint: str, maximum: int) -> int:
        return self._state(endpoint, maximum).limiter.limit

    async def acquire(self, endpoint: str, owner: str, wanted: int, maximum: int) -> tuple[int, int]:
        return await self._state(endpoint, maximum).acquire(owner, wanted)

    def release(self, endpoint: str, owner: str, count: int = 1, successes: int = 0) -> int:
        state = self.endpoints.get(endpoint)
        return state.release(owner, count, successes) if state is not None else 0  # granted by a lost life

    def watch(self, endpoint: str, owner: str, successes: int = 0) -> tuple[int, int]:
        state = self.endpoints.get(endpoint)
        return state.watch(owner, successes) if state is not None else (0, 0)

    def on_rate_limited(self, endpoint: str) -> int:
        state = self.endpoints.get(endpoint)
        return state.on_rate_limited() if state is not None else 0

    def pid(self) -> int:
        return os.getpid()

    async def reset_owners(self, prefix: str, keep: str, grace_s: float = 0.0) -> int:
        results = await asyncio.gather(
            *(state.reset_owners(prefix, keep, grace_s) for state in self.endpoints.values())
        )
        return sum(results)

    def stats(self, endpoint: str | None = None) -> dict[str, Any]:
        if endpoint is not None:
            return self.endpoints[endpoint].stats()
        return {name: state.stats() for name, state in self.endpoints.items()}


_actor_class: Any = None


def actor_class() -> Any:
    """The Ray actor class (built on first use, so importing this module does not import Ray)."""
    global _actor_class
    if _actor_class is None:
        import ray

        class EndpointLimits(_Limits):
            def __init__(self, grace_s: float = 0.0) -> None:
                super().__init__(grace_s, restarted=ray.get_runtime_context().was_current_actor_reconstructed)

        # Restarted whenever it dies (its process, or its node), calls made meanwhile retried by Ray: a lost
        # limiter makes callers wait, never fail.
        _actor_class = ray.remote(num_cpus=0, max_concurrency=100_000, max_restarts=-1, max_task_retries=-1)(
            EndpointLimits
        )
    return _actor_class


def endpoint_id(key: tuple[str, str]) -> str:
    return hashlib.sha256("\0".join(key).encode()).hexdigest()[:16] + " " + " ".join(key)[:80]


def limits_actor(token: str, grace_s: float = 0.0, *, near_driver: bool = False) -> Any:
    """The run's limits actor: created by the run's driver (``near_driver``: placed on the driver's node when
    it can be, so losing a worker node does not take it along) or by the first worker that asks, found by the
    others. Detached, so it outlives a killed worker; the driver kills it at the end. ``grace_s``: how long a
    restarted actor counts its previous life's grants as still running (the longest request timeout)."""
    options: dict[str, Any] = {"name": f"{NAME_PREFIX}-{token}", "get_if_exists": True, "lifetime": "detached"}
    if near_driver:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        node = ray.get_runtime_context().get_node_id()
        options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id=node, soft=True)
    return actor_class().options(**options).remote(grace_s)


class RemoteLimiter(AdaptiveLimiter):
    """This process's handle on an endpoint's cluster-wide limiter (see the module docstring).

    Slots are asked for in batches: one request to the actor at a time, for as many slots as this process has
    callers waiting; the actor grants at least one (waiting for it in its queue) and as many more as are free.
    Slots given back are gathered for ``RELEASE_S`` and returned in one message with the successes seen since.
    So the cap is exact (a slot is counted at the actor from its grant until its return), at a handful of actor
    calls per batch instead of two per request.

    ``limit`` is the actor's limit as of its last answer; ``in_flight`` and ``max_in_flight`` count this
    process's requests only (the actor's ``stats`` has the cluster's)."""

    RELEASE_S = 0.002
    WATCH_S = 0.05
    """How often a worker holding slots asks the actor whether others wait (then it stops re-using them)."""

    def __init__(self, actor: Any, endpoint: str, maximum: int, owner: str) -> None:
        super().__init__(maximum)
        self.actor = actor
        self.endpoint = endpoint
        self.owner = owner
        self._successes_pending = 0
        self._to_release = 0
        self._release_scheduled = False
        self._queue: list[asyncio.Future[None]] = []
        self._asking: asyncio.Future[None] | None = None
        self.actor_calls = 0
        """Messages sent to the actor (benchmarks)."""
        self.reused = 0
        """Slots handed from a finished request straight to a waiting one of this worker (benchmarks)."""
        self._share = 0
        """As of the actor's last answer: how many slots this worker may keep re-using (its fair share of the
        limit; 0 until the actor says otherwise, or after a 429 or a restart of the actor)."""
        self._watching: asyncio.Future[None] | None = None

    async def acquire(self) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append(waiter)
        if self._asking is None or self._asking.done():
            self._asking = asyncio.ensure_future(self._ask())
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # granted just as we were cancelled: give it back
            elif waiter in self._queue:
                self._queue.remove(waiter)
            raise

    async def _ask(self) -> None:
        """Ask the actor for slots while callers wait, one request at a time, and hand them out in order."""
        while self._queue:
            self.actor_calls += 1
            try:
                granted, self.limit = await self.actor.acquire.remote(
                    self.endpoint, self.owner, len(self._queue), self.maximum
                )
            except Exception as exc:
                if _is_restarting(exc):  # the actor is being restarted: wait for it, as Ray retries the call
                    await asyncio.sleep(0.2)
                    continue
                # the actor is gone for good (the run is ending): every waiter fails with it
                for waiter in self._queue:
                    if not waiter.done():
                        waiter.set_exception(exc)
                self._queue.clear()
                return
            while granted and self._queue:
                waiter = self._queue.pop(0)
                if waiter.done():
                    continue  # cancelled while we asked
                granted -= 1
                self._take()
                waiter.set_result(None)
            if granted:
                self._give_back(granted)

    def release(self) -> None:
        """A request ended. Its slot goes straight to a caller of this worker that waits for one, while nobody
        else waits at the actor and the limit is not exceeded (a lease: the actor still counts it, so the cap is
        exact, and the round trip that left the slot idle is saved); otherwise back to the actor."""
        self.in_flight -= 1
        if self.in_flight < self._share:
            while self._queue:
                waiter = self._queue.pop(0)
                if waiter.done():
                    continue  # cancelled while waiting
                self._take()
                self.reused += 1
                waiter.set_result(None)
                return
        self._give_back(1)

    def _take(self) -> None:
        super()._take()
        if self._watching is None or self._watching.done():
            self._watching = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        """While this worker holds slots: every ``WATCH_S``, learn from the actor whether others wait."""
        try:
            while self.in_flight > 0:
                await asyncio.sleep(self.WATCH_S)
                successes, self._successes_pending = self._successes_pending, 0
                self.actor_calls += 1
                limit, self._share = await self.actor.watch.remote(self.endpoint, self.owner, successes)
                self.limit = limit or self.limit
        except Exception:  # the actor is gone: hand slots back
            self._share = 0
        finally:
            self._share = 0

    def _give_back(self, count: int) -> None:
        self._to_release += count
        if not self._release_scheduled:
            self._release_scheduled = True
            asyncio.get_running_loop().call_later(self.RELEASE_S, self._send_release)

    def _send_release(self) -> None:
        self._release_scheduled = False
        count, self._to_release = self._to_release, 0
        successes, self._successes_pending = self._successes_pending, 0
        if count or successes:
            self.actor_calls += 1
            self.actor.release.remote(self.endpoint, self.owner, count, successes)

    def on_success(self) -> None:
        self._successes_pending += 1

    def on_rate_limited(self) -> None:
        self._successes = 0
        self.actor_calls += 1
        self.actor.on_rate_limited.remote(self.endpoint)

    def stats(self) -> dict[str, Any]:
        import ray

        result: dict[str, Any] = ray.get(self.actor.stats.remote(self.endpoint))
        return result


def _is_restarting(exc: BaseException) -> bool:
    """Whether an actor call failed only because the actor is briefly unreachable (being restarted)."""
    import ray

    return isinstance(exc, ray.exceptions.ActorUnavailableError)


class RemoteLimiterFactory:
    """Makes (once per endpoint, per process) the :class:`RemoteLimiter` the model layer asks for."""

    def __init__(self, token: str, owner: str, grace_s: float = 0.0) -> None:
        self.token = token
        self.owner = owner
        self.life = f"{owner}/{os.getpid()}/{uuid.uuid4().hex[:8]}"
        """This process's owner name at the actors: the worker's stable name plus this life's own part."""
        self.grace_s = grace_s
        self.actor: Any = None
        self.limiters: dict[tuple[str, str], RemoteLimiter] = {}

    def __call__(self, key: tuple[str, str], maximum: int) -> AdaptiveLimiter:
        if self.actor is None:
            self.actor = limits_actor(self.token, self.grace_s)
            # a restarted worker returns what its earlier lives held, once their requests have timed out
            self.actor.reset_owners.remote(f"{self.owner}/", self.life, self.grace_s)
        limiter = self.limiters.get(key)
        if limiter is None:
            limiter = self.limiters[key] = RemoteLimiter(self.actor, endpoint_id(key), maximum, self.life)
        if maximum < limiter.maximum:  # the strictest configured limit wins, cluster-wide too
            limiter.maximum = maximum
            limiter.limit = min(limiter.limit, maximum)
        self.actor.ensure.remote(limiter.endpoint, maximum)
        return limiter


def install(token: str, owner: str, grace_s: float = 0.0) -> RemoteLimiterFactory:
    """Make every endpoint limiter of this process cluster-wide (a Ray worker calls this before its models).
    ``grace_s``: how long the slots a dead earlier life of this worker held stay taken (its requests' timeout)."""
    factory = RemoteLimiterFactory(token, owner, grace_s)
    install_limiter_factory(factory)
    return factory


def kill_limiters(token: str) -> int:
    """Kill the run's limiter actors (the driver, at the end); how many there were."""
    import ray

    killed = 0
    for entry in ray.util.list_named_actors(all_namespaces=True):
        name = entry["name"] if isinstance(entry, dict) else entry
        namespace = entry.get("namespace") if isinstance(entry, dict) else None
        if name == f"{NAME_PREFIX}-{token}":
            try:
                ray.kill(ray.get_actor(name, namespace=namespace))
                killed += 1
            except ValueError:  # gone already
                continue
    return killed
