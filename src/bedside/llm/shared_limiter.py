"""Endpoint limits that hold across a Ray cluster: one actor per run owns the limiters, workers lease slots.

In one process, every model talking to an endpoint shares one :class:`~bedside.llm.limiter.AdaptiveLimiter`
(the cap, and the AIMD back-off after 429s). With several Ray workers, each would have its own and the endpoint
would see workers × cap. So on Ray the limiters live in one named actor per run (:class:`_Limits`: one
:class:`_LimiterState` per endpoint, detached, named from the run's token; one actor rather than one per
endpoint, since each is a process), and each worker's models hold a :class:`RemoteLimiter` per endpoint, a
stand-in with the same interface.

Slots are *leased*: a worker holds a block of slots that the actor counts as taken from the grant until they
come back, and its requests take and return them locally (no message per request). Why: a round trip to the
actor per request, or per batch of requests, left slots idle while the grant and the return travelled, and on
a busy machine that cost half the endpoint's capacity (bench/scale.py). How:

* the actor knows each owner's *demand* (its requests in flight plus those waiting) and gives each its *share*:
  the limit split max-min fairly over the demands, what nobody asked for split evenly (spare slots a worker
  may keep, so a burst needs no round trip);
* a worker talks to the actor in one message type (``renew``): its demand, the slots it gives back, the
  successes since; the answer grants it what is free up to its share (at once: no call waits at the actor),
  and says its share and the limit. It sends one every ``RENEW_S`` while it holds slots or has callers
  waiting (slowing to ``QUIET_RENEW_S`` while the answers change nothing), and at once when a caller finds no
  free slot and the last answer granted something or renewals had slowed. Slots it holds
  beyond its share go back as soon as they are idle, so a worker that starts asking gets its share within
  about two renewals;
* the cap is exact: the actor grants only while the slots out (leased, by every owner) are below the limit,
  and a worker starts a request only on a slot of its lease. A 429 (``on_rate_limited``) halves the limit at
  the actor (once per second at most, so one burst counts once; it grows back by one after ``limit``
  successes across the cluster); every share shrinks with it (a worker that saw the 429 asks at once), and from
  a worker's next answer on, no request of it starts while it holds more than its share: slots over a share
  go back as their requests end, until the cluster is under the new limit;
* the actor counts slots per *owner* (a worker's stable name plus its life); a worker that is restarted, or that
  the driver gives up on, has what its earlier lives held returned after their requests' timeout (``timeout_s``:
  until then they may still be running at the endpoint), so a killed worker neither leaks its share of the cap
  nor lets the endpoint see more than the cap;
* a restarted actor (its process or node was lost) has a new *life* id, which every answer carries: a worker
  seeing a new life drops its lease (the requests still in flight count against nothing it holds now and
  their returns are not sent) and asks again; the new life counts the whole cap as taken for the longest
  ``timeout_s`` of the run, so callers wait (they are not errors) and the endpoint never sees more than its
  cap; returns tagged with an earlier life are ignored.

The hook is :func:`bedside.llm.limiter.install_limiter_factory`: :func:`install` sets it in a worker, and every
endpoint limiter the model layer asks for from then on (pools' replicas included) is a :class:`RemoteLimiter`.
Ray is imported only here, and only when this is used (the ``ray`` extra).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import os
import uuid
from typing import Any

from bedside.llm.limiter import AdaptiveLimiter, install_limiter_factory

NAME_PREFIX = "bedside-limiter"
RESERVED = "reserved-after-restart"
"""The owner a restarted limits actor books its predecessor's possible grants to (see :meth:`_Limits._state`)."""


def fair_shares(capacity: int, demands: dict[str, int], held: dict[str, int] | None = None) -> dict[str, int]:
    """``capacity`` slots split over owners by ``demands``, max-min fairly: an owner asking for less than an even
    split gets what it asks, the rest split the remainder evenly; what nobody asked for is split evenly over all
    (spare slots). The shares add up to ``capacity`` (0 each when it is 0). A slot that cannot be split evenly
    goes to the owner that ``held`` the fewest (so with fewer slots than owners, they take turns)."""
    held = held or {}
    shares = dict.fromkeys(demands, 0)
    left = max(0, capacity)

    def split(names: list[str], amount: int) -> None:
        even, extra = divmod(amount, len(names))
        for i, name in enumerate(sorted(names, key=lambda o: (held.get(o, 0), o))):
            shares[name] += even + (1 if i < extra else 0)

    pending = sorted(demands, key=lambda o: (demands[o], o))
    while pending and left > 0:
        owner = pending[0]
        if demands[owner] - shares[owner] <= left // len(pending):  # the smallest demand is met in full
            left -= demands[owner] - shares[owner]
            shares[owner] = demands[owner]
            pending.pop(0)
            continue
        split(pending, left)  # every remaining owner wants more than an even split: split it
        left = 0
    if left and shares:
        split(list(shares), left)
    return shares


class _LimiterState:
    """One endpoint's limiter at the actor (a plain class so it can be tested without Ray): the limit (an
    :class:`AdaptiveLimiter`'s, whose ``in_flight`` counts the slots out), each owner's lease and demand."""

    def __init__(self, maximum: int, cooldown_s: float = 1.0) -> None:
        self.limiter = AdaptiveLimiter(maximum, cooldown_s=cooldown_s)
        self.held: dict[str, int] = {}
        self.demand: dict[str, int] = {}
        """Each owner's requests in flight plus those waiting, as of its last message."""
        self.requests = 0
        """Slots granted (a slot is re-used by its worker many times, so this is far below the requests)."""
        self.grants = 0
        """Answers that granted slots."""
        self.rate_limited = 0
        self.lowest_limit = maximum

    @property
    def free(self) -> int:
        return self.limiter.limit - self.limiter.in_flight

    def share(self, owner: str) -> int:
        """How many slots ``owner`` may hold now (see :func:`fair_shares`): the owners are those holding slots or
        asking for some; the capacity is the limit less what a restart reserved."""
        owners = {o for o, n in self.held.items() if n > 0} | {o for o, d in self.demand.items() if d > 0}
        owners.discard(RESERVED)
        owners.add(owner)
        capacity = self.limiter.limit - self.held.get(RESERVED, 0)
        return fair_shares(capacity, {o: self.demand.get(o, 0) for o in owners}, self.held)[owner]

    def renew(self, owner: str, demand: int, count: int = 0, successes: int = 0) -> tuple[int, int, int]:
        """``owner``'s message: its demand (requests in flight and waiting), ``count`` slots it gives back,
        ``successes`` since its last message. It is leased what is free up to its share, at once (a call never
        waits here: a worker with nothing granted asks again at its next renewal); (granted, share, limit)."""
        self.demand[owner] = demand
        self.release(owner, count, successes)
        share = self.share(owner)
        granted = max(0, min(self.free, share - self.held.get(owner, 0)))
        if granted and demand > self.held.get(owner, 0):  # spare slots go only to a worker that is asking
            limiter = self.limiter
            limiter.in_flight += granted
            limiter.max_in_flight = max(limiter.max_in_flight, limiter.in_flight)
            self.held[owner] = self.held.get(owner, 0) + granted
            self.requests += granted
            self.grants += 1
        else:
            granted = 0
        return granted, share, self.limiter.limit

    def release(self, owner: str, count: int = 1, successes: int = 0) -> int:
        """``owner`` gives back ``count`` slots, after ``successes`` successful requests; returns the limit."""
        for _ in range(successes):
            self.limiter.on_success()
        count = min(count, self.held.get(owner, 0))
        if count > 0:
            self.held[owner] -= count
            self.limiter.in_flight -= count
        return self.limiter.limit

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
        gone = [o for o in set(self.held) | set(self.demand) if o.startswith(prefix) and o != keep]
        leaked = 0
        for owner in gone:
            self.demand.pop(owner, None)
            leaked += self.held.pop(owner, 0)
        if leaked:
            if grace_s > 0:
                await asyncio.sleep(grace_s)
            self.limiter.in_flight -= leaked
        return leaked

    def reserve(self, count: int, grace_s: float) -> None:
        """Count ``count`` slots as taken for ``grace_s`` (then free them): what a restarted actor assumes its
        previous life had granted, since those requests may still be running at the endpoint."""
        self.held[RESERVED] = self.held.get(RESERVED, 0) + count
        self.limiter.in_flight += count

        def expire() -> None:
            count_now = min(count, self.held.get(RESERVED, 0))
            self.held[RESERVED] -= count_now
            if not self.held[RESERVED]:
                del self.held[RESERVED]
            self.limiter.in_flight -= count_now

        asyncio.get_running_loop().call_later(grace_s, expire)

    def stats(self) -> dict[str, Any]:
        return {
            "maximum": self.limiter.maximum,
            "limit": self.limiter.limit,
            "in_flight": self.limiter.in_flight,
            "max_in_flight": self.limiter.max_in_flight,
            "requests": self.requests,
            "grants": self.grants,
            "rate_limited": self.rate_limited,
            "lowest_limit": self.lowest_limit,
            "held": dict(self.held),
            "demand": dict(self.demand),
        }


class _Limits:
    """The actor's body: every endpoint limiter of one run, by endpoint id. One actor (one process) serves
    them all: an actor per endpoint would cost a process per endpoint, which on a small cluster competes with
    the workers for CPU, while one actor's load is a message per worker and endpoint every renewal. No call
    waits at the actor (each is answered at once), so one caller's calls never queue behind its own.

    ``life`` names this life of the actor; every answer to a worker carries it, and slots given back with an
    earlier life's name are ignored (see the module docstring)."""

    def __init__(self, grace_s: float = 0.0, restarted: bool = False) -> None:
        self.endpoints: dict[str, _LimiterState] = {}
        self.grace_s = grace_s
        self.restarted = restarted
        """This is a restarted life: what the previous one granted is unknown."""
        self.life = uuid.uuid4().hex[:12]

    def _state(self, endpoint: str, maximum: int) -> _LimiterState:
        """An endpoint's limiter, made on first use. In a restarted actor (its process or node was lost), the
        previous life's grants are unknown and may still be running at the endpoint: the whole cap counts as
        taken until the longest request timeout of the run (``grace_s``) has passed, and callers wait (they
        are not errors) -- conservative, so the endpoint never sees more than its cap."""
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

    async def renew(
        self, endpoint: str, owner: str, demand: int, maximum: int, returned: int, successes: int, life: str
    ) -> tuple[int, int, int, str]:
        """(granted, share, limit, this life); see :meth:`_LimiterState.renew`. ``returned`` slots count only if
        this life granted them (``life``)."""
        state = self._state(endpoint, maximum)
        granted, share, limit = state.renew(owner, demand, returned if life == self.life else 0, successes)
        return granted, share, limit, self.life

    async def release(self, endpoint: str, owner: str, count: int, successes: int, life: str) -> int:
        state = self.endpoints.get(endpoint)
        if state is None:
            return 0
        return state.release(owner, count if life == self.life else 0, successes)

    async def on_rate_limited(self, endpoint: str, maximum: int) -> int:
        return self._state(endpoint, maximum).on_rate_limited()

    def pid(self) -> int:
        return os.getpid()

    async def reset_owners(self, prefix: str, keep: str, grace_s: float = 0.0) -> int:
        results = await asyncio.gather(
            *(state.reset_owners(prefix, keep, grace_s) for state in self.endpoints.values())
        )
        return sum(results)

    async def stats(self, endpoint: str | None = None) -> dict[str, Any]:
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
    """This process's lease on an endpoint's cluster-wide limiter (see the module docstring).

    ``held`` slots are this worker's (the actor counts them as taken); a request starts on a free one at once,
    and its slot stays with the worker when it ends, unless the worker holds more than its ``share``. One task
    talks to the actor: every ``RENEW_S`` while the worker holds slots or has callers waiting, and at once when
    a caller finds no free slot and the last answer granted something (more may be free); slots to give back
    between messages are gathered for ``RELEASE_S`` and sent in one message.

    ``limit`` is the actor's limit as of its last answer; ``in_flight`` and ``max_in_flight`` count this
    process's requests only (the actor's ``stats`` has the cluster's)."""

    RELEASE_S = 0.002
    RENEW_S = 0.025
    """How often a worker holding slots or waiting for some reports its demand, learns its share and is granted
    what is free of it (so the longest a worker waits for another's spare slots is about two of these)."""
    QUIET_RENEW_S = 0.2
    """The slowest renewal: while answers change nothing (nothing granted or given back, the same share and limit,
    no caller waiting, the limit at its maximum) the interval doubles up to this; any change brings it back to
    ``RENEW_S``. Renewing every 25 ms whatever happened was most of a worker's CPU per sample at 600 requests/s
    (bench/scale.py at 600 requests/s: 2,205 actor calls for 6,000 samples and 0.81 ms of CPU a sample; with
    this, 355 and 0.54 ms)."""
    IDLE_S = 1.0
    """A worker with nothing in flight or waiting for this long gives back its whole lease and stops renewing."""

    def __init__(self, actor: Any, endpoint: str, maximum: int, owner: str) -> None:
        super().__init__(maximum)
        self.actor = actor
        self.endpoint = endpoint
        self.owner = owner
        self.held = 0
        """Slots of the actor's current life leased to this worker."""
        self.share = 0
        """As of the actor's last answer: how many slots this worker may keep."""
        self.stale = 0
        """Requests in flight on slots of an earlier life of the actor (they return nothing)."""
        self.life: str | None = None
        """The actor's life that granted ``held``."""
        self._successes_pending = 0
        self._to_release = 0
        self._release_scheduled = False
        self._queue: collections.deque[asyncio.Future[None]] = collections.deque()
        self._talking: asyncio.Future[None] | None = None
        self._ask_now = asyncio.Event()
        self._interval = self.RENEW_S
        """The wait until the next renewal (see ``QUIET_RENEW_S``)."""
        self._may_ask = True
        """Whether a caller finding no free slot should have the actor asked at once (the last answer granted
        slots, or there was none yet); otherwise it waits for the next renewal."""
        self.actor_calls = 0
        """Messages sent to the actor (benchmarks)."""
        self.started = 0
        """Requests started (benchmarks)."""
        self.local = 0
        """Of those, started on a slot the worker already held, with no message (benchmarks)."""

    def _using(self) -> int:
        return self.in_flight - self.stale

    def _room(self) -> bool:
        """Whether a request may start on a slot of the lease now (never on one held beyond the share)."""
        return self._using() < min(self.held, self.share)

    async def acquire(self) -> None:
        if not self._queue and self._room():
            self.local += 1
            self._take()
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append(waiter)
        if self._may_ask or self._interval > self.RENEW_S:  # after a quiet spell, a caller waiting is news
            self._ask_now.set()
        self._ensure_talking()
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # granted just as we were cancelled: give it back
            elif waiter in self._queue:
                self._queue.remove(waiter)
            raise

    def _serve(self, local: bool = False) -> None:
        """Start waiting callers on the free slots of the lease, in order (``local``: slots that were already
        held, not just granted)."""
        while self._queue and self._room():
            waiter = self._queue.popleft()
            if not waiter.done():  # else cancelled while waiting
                self.local += local
                self._take()
                waiter.set_result(None)

    def _waiting(self) -> int:
        while self._queue and self._queue[0].done():
            self._queue.popleft()
        return len(self._queue)

    def _ensure_talking(self) -> None:
        if self._talking is None or self._talking.done():
            self._talking = asyncio.ensure_future(self._talk())

    async def _talk(self) -> None:
        """The worker's side of the lease: report, be granted, learn the share, give back what is over it."""
        idle = 0.0
        while self.held > 0 or self.in_flight > 0 or self._waiting():
            demand = self._using() + self._waiting()
            if idle >= self.IDLE_S:  # nothing to do for a while: the whole lease goes back
                self.share = 0
                self._trim()
            returned, self._to_release = self._to_release, 0
            successes, self._successes_pending = self._successes_pending, 0
            self.actor_calls += 1
            try:
                granted, share, limit, life = await self.actor.renew.remote(
                    self.endpoint, self.owner, demand, self.maximum, returned, successes, self.life or ""
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
                self.share = 0
                return
            known = (self.share, self.limit)
            self._learn(life, share, limit)
            self.held += granted
            self._serve()
            if idle >= self.IDLE_S and self.held == 0 and not self._waiting():
                return
            self._may_ask = granted > 0
            if self._waiting() and granted > 0:
                continue  # more may be free
            changed = granted or returned or self._waiting() or known != (self.share, self.limit)
            quiet = not changed and self.limit >= self.maximum
            self._interval = min(self._interval * 2, self.QUIET_RENEW_S) if quiet else self.RENEW_S
            self._ask_now.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ask_now.wait(), self._interval)
            idle = idle + self._interval if self.in_flight == 0 and not self._waiting() else 0.0

    def _learn(self, life: str, share: int, limit: int) -> None:
        """Take in an answer of the actor. A new life of it (it was restarted) knows nothing of this worker's
        lease: drop it; the requests in flight now hold slots of the lost life, which are not returned."""
        if self.life is not None and life != self.life:
            self.stale = self.in_flight
            self.held = 0
            self._to_release = 0
        self.life = life
        self.share = share
        self.limit = limit or self.limit
        self._trim()

    def _trim(self) -> None:
        """Give back the idle slots held beyond the share."""
        over = min(self.held - self.share, self.held - self._using())
        if over > 0:
            self.held -= over
            self._give_back(over)

    def release(self) -> None:
        """A request ended: its slot stays with this worker (the next caller, or spare) unless it holds more than
        its share; a request of the actor's earlier life returns nothing."""
        self.in_flight -= 1
        if self.stale > 0:
            self.stale -= 1
        elif self.held > self.share:
            self.held -= 1
            self._give_back(1)
        self._serve(local=True)

    def _take(self) -> None:
        super()._take()
        self.started += 1
        self._ensure_talking()

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
            self.actor.release.remote(self.endpoint, self.owner, count, successes, self.life or "")

    def on_success(self) -> None:
        self._successes_pending += 1

    def on_rate_limited(self) -> None:
        """Tell the actor (the limit halves for every worker); this worker's share shrinks at its next message."""
        self._successes = 0
        self.actor_calls += 1
        self.actor.on_rate_limited.remote(self.endpoint, self.maximum)
        self._ask_now.set()

    async def close(self) -> None:
        """Give the whole lease back (this worker is done: nothing is in flight), with the successes since."""
        if self._talking is not None:
            self._talking.cancel()
        count, self.held = self.held + self._to_release, 0
        self._to_release = 0
        successes, self._successes_pending = self._successes_pending, 0
        if count or successes:
            self.actor_calls += 1
            await self.actor.release.remote(self.endpoint, self.owner, count, successes, self.life or "")

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

    async def close(self) -> None:
        """Give back every lease of this process (a worker that has finished its samples): a finished worker's
        spare slots would otherwise stay taken while other workers still run."""
        await asyncio.gather(*(limiter.close() for limiter in self.limiters.values()))

    def lease_counts(self) -> dict[str, int]:
        """Over this process's endpoints: requests started, of which on a slot already held, and actor calls."""
        limiters = self.limiters.values()
        return {
            "requests": sum(limiter.started for limiter in limiters),
            "local": sum(limiter.local for limiter in limiters),
            "actor_calls": sum(limiter.actor_calls for limiter in limiters),
        }


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
