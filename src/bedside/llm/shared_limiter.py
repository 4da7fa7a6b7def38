"""Endpoint limits that hold across a Ray cluster: one actor per endpoint owns the limiter.

In one process, every model talking to an endpoint shares one :class:`~bedside.llm.limiter.AdaptiveLimiter`
(the cap, and the AIMD back-off after 429s). With several Ray workers, each would have its own and the endpoint
would see workers × cap. So on Ray the limiter lives in a named actor per endpoint (:class:`EndpointLimiterActor`,
detached, named from the run's token and a hash of the endpoint key), and each worker's models hold a
:class:`RemoteLimiter`, a stand-in with the same interface:

* ``acquire`` asks the actor for a slot and waits for the grant (the actor queues waiters in order, exactly as
  the local limiter does); ``release`` is sent without waiting, carrying the successes seen since the last one,
  so a request costs one awaited round trip and one message;
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


class _LimiterState:
    """The actor's body (kept a plain class so it can be tested without Ray)."""

    def __init__(self, maximum: int, cooldown_s: float = 1.0) -> None:
        self.limiter = AdaptiveLimiter(maximum, cooldown_s=cooldown_s)
        self.held: dict[str, int] = {}
        self.requests = 0

    async def acquire(self, owner: str) -> int:
        await self.limiter.acquire()
        self.held[owner] = self.held.get(owner, 0) + 1
        self.requests += 1
        return self.limiter.limit

    def release(self, owner: str, successes: int = 0) -> None:
        for _ in range(successes):
            self.limiter.on_success()
        if self.held.get(owner, 0) > 0:
            self.held[owner] -= 1
            self.limiter.release()

    def on_rate_limited(self) -> int:
        self.limiter.on_rate_limited()
        return self.limiter.limit

    def tighten(self, maximum: int) -> None:
        if maximum < self.limiter.maximum:
            self.limiter.maximum = maximum
            self.limiter.limit = min(self.limiter.limit, maximum)

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

    def stats(self) -> dict[str, Any]:
        return {
            "maximum": self.limiter.maximum,
            "limit": self.limiter.limit,
            "in_flight": self.limiter.in_flight,
            "max_in_flight": self.limiter.max_in_flight,
            "requests": self.requests,
            "held": dict(self.held),
        }


_actor_class: Any = None
_background: set[asyncio.Future[None]] = set()


def actor_class() -> Any:
    """The Ray actor class (built on first use, so importing this module does not import Ray)."""
    global _actor_class
    if _actor_class is None:
        import ray

        class EndpointLimiterActor(_LimiterState):
            pass

        _actor_class = ray.remote(num_cpus=0, max_concurrency=100_000)(EndpointLimiterActor)
    return _actor_class


def actor_name(token: str, key: tuple[str, str]) -> str:
    digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:16]
    return f"{NAME_PREFIX}-{token}-{digest}"


def limiter_actor(token: str, key: tuple[str, str], maximum: int) -> Any:
    """The endpoint's actor: created by the first caller (detached, so it outlives a killed worker; the run's
    driver kills it at the end), found by the others."""
    return actor_class().options(name=actor_name(token, key), get_if_exists=True, lifetime="detached").remote(maximum)


class RemoteLimiter(AdaptiveLimiter):
    """This process's handle on an endpoint's cluster-wide limiter (see the module docstring).

    ``limit`` is the actor's limit as of the last grant; ``in_flight`` and ``max_in_flight`` count this
    process's requests only (the actor's ``stats`` has the cluster's)."""

    def __init__(self, actor: Any, maximum: int, owner: str) -> None:
        super().__init__(maximum)
        self.actor = actor
        self.owner = owner
        self._successes_pending = 0

    async def acquire(self) -> None:
        grant = self.actor.acquire.remote(self.owner)
        try:
            self.limit = await grant
        except asyncio.CancelledError:
            giving_back = asyncio.ensure_future(self._give_back_when_granted(grant))
            _background.add(giving_back)
            giving_back.add_done_callback(_background.discard)
            raise
        self._take()

    async def _give_back_when_granted(self, grant: Any) -> None:
        try:
            await grant
        except Exception:  # the actor is gone: nothing to give back
            return
        self.actor.release.remote(self.owner, 0)

    def release(self) -> None:
        self.in_flight -= 1
        successes, self._successes_pending = self._successes_pending, 0
        self.actor.release.remote(self.owner, successes)

    def on_success(self) -> None:
        self._successes_pending += 1

    def on_rate_limited(self) -> None:
        self._successes = 0
        self.actor.on_rate_limited.remote()

    def stats(self) -> dict[str, Any]:
        import ray

        result: dict[str, Any] = ray.get(self.actor.stats.remote())
        return result


class RemoteLimiterFactory:
    """Makes (once per endpoint, per process) the :class:`RemoteLimiter` the model layer asks for."""

    def __init__(self, token: str, owner: str, grace_s: float = 0.0) -> None:
        self.token = token
        self.owner = owner
        self.life = f"{owner}/{os.getpid()}/{uuid.uuid4().hex[:8]}"
        """This process's owner name at the actors: the worker's stable name plus this life's own part."""
        self.grace_s = grace_s
        self.limiters: dict[tuple[str, str], RemoteLimiter] = {}

    def __call__(self, key: tuple[str, str], maximum: int) -> AdaptiveLimiter:
        limiter = self.limiters.get(key)
        if limiter is None:
            actor = limiter_actor(self.token, key, maximum)
            # a restarted worker returns what its earlier lives held, once their requests have timed out
            actor.reset_owners.remote(f"{self.owner}/", self.life, self.grace_s)
            limiter = self.limiters[key] = RemoteLimiter(actor, maximum, self.life)
        if maximum < limiter.maximum:  # the strictest configured limit wins, cluster-wide too
            limiter.maximum = maximum
            limiter.limit = min(limiter.limit, maximum)
        limiter.actor.tighten.remote(maximum)
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
        if name.startswith(f"{NAME_PREFIX}-{token}-"):
            try:
                ray.kill(ray.get_actor(name, namespace=namespace))
                killed += 1
            except ValueError:  # gone already
                continue
    return killed
