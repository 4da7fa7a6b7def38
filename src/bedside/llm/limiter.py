"""A concurrency limit per endpoint that halves after a burst of rate limits and grows back (AIMD).

The limit never rises above the configured maximum, so the endpoint never sees more requests in flight than
the user allowed. After a 429 the limit halves (at most once per ``cooldown_s``, so one burst counts once);
after ``limit`` consecutive successes it grows by one. Waiters are plain futures created on the running loop, so
one limiter can serve successive event loops (as tests and notebooks create them).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bedside.llm.providers import Provider


class AdaptiveLimiter:
    def __init__(self, maximum: int, *, minimum: int = 1, cooldown_s: float = 1.0) -> None:
        if maximum < 1:
            raise ValueError("the concurrency limit must be at least 1")
        self.maximum = maximum
        self.minimum = min(minimum, maximum)
        self.limit = maximum
        self.in_flight = 0
        self.max_in_flight = 0
        self._cooldown_s = cooldown_s
        self._last_shrink = float("-inf")
        self._successes = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        if self.in_flight < self.limit and not self._waiters:
            self._take()
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # the slot was handed over just as we were cancelled: pass it on
            else:
                self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _take(self) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._take()
                waiter.set_result(None)

    def on_rate_limited(self) -> None:
        now = time.monotonic()
        self._successes = 0
        if now - self._last_shrink >= self._cooldown_s and self.limit > self.minimum:
            self.limit = max(self.minimum, self.limit // 2)
            self._last_shrink = now

    def on_success(self) -> None:
        if self.limit >= self.maximum:
            return
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            self.limit += 1
            self._wake()

    async def __aenter__(self) -> AdaptiveLimiter:
        await self.acquire()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


# [scale-out] Where endpoint limiters come from. ``None``: this process's own (kept below, one per endpoint).
# A Ray worker installs a factory whose limiters are cluster-wide (bedside.llm.shared_limiter).
LimiterFactory = Callable[[tuple[str, str], int], AdaptiveLimiter]
_factory: LimiterFactory | None = None


def install_limiter_factory(factory: LimiterFactory | None) -> None:
    """Have every endpoint limiter asked for from now on made by ``factory`` (``None``: back to local ones)."""
    global _factory
    _factory = factory


def limiter_factory() -> LimiterFactory | None:
    return _factory


_limiters: dict[tuple[str, str], AdaptiveLimiter] = {}
_holders: dict[tuple[str, str], int] = {}
"""How many open models hold each endpoint's limiter: the last one closed takes it out of the registry, so a cap
from a run that has ended does not bind a later one to the same URL (a stale cap of 2 once held a test's cap of
5 at 2, when the new scripted server was given the old one's port)."""


def endpoint_limiter(provider: Provider, maximum: int) -> AdaptiveLimiter:
    """The limiter shared by every open model of this process that talks to the same endpoint; give it back with
    :func:`release_endpoint_limiter` when the model closes."""
    key = (provider.name, provider.base_url or provider.model)
    factory = limiter_factory()  # [scale-out] cluster-wide limiters on Ray (bedside.llm.shared_limiter)
    if factory is not None:
        return factory(key, maximum)
    limiter = _limiters.get(key)
    if limiter is None:
        limiter = _limiters[key] = AdaptiveLimiter(maximum)
    elif maximum < limiter.maximum:  # the strictest configured limit of the open models wins
        limiter.maximum = maximum
        limiter.limit = min(limiter.limit, maximum)
    _holders[key] = _holders.get(key, 0) + 1
    return limiter


def release_endpoint_limiter(limiter: AdaptiveLimiter) -> None:
    """A model that held ``limiter`` has closed; the endpoint's entry goes when no open model holds it."""
    for key, registered in list(_limiters.items()):
        if registered is limiter:
            _holders[key] -= 1
            if _holders[key] <= 0:
                del _limiters[key], _holders[key]
            return
