"""Several servers of one model (vLLM replicas) behind one provider, balanced by least requests in flight.

A model configured with ``base_urls`` (or ``PROVIDER/MODEL@URL1,URL2``) is built as a :class:`PooledProvider`:
one ordinary provider per replica, each behind its *own* endpoint limiter (keyed by the replica's URL, so every
model of the process talking to that server shares it, as with a single base URL), capped at
``replica_max_concurrency`` (or ``max_concurrency`` when that is unset). The model's own limiter, keyed by the
pool, still caps the pool as a whole at ``max_concurrency``.

Each request goes to the replica with the fewest requests in flight *or waiting* from this process, relative
to its current limit (ties: the replica that has sent the fewest so far, then the first listed), passing over
a replica that answered 429 within its Retry-After (at least a second) while another is available; it then waits
for that replica's limiter, so a replica is never sent more than its cap. A 429 from a replica halves that
replica's limit (its adaptive back-off) and is passed on to the model's retry loop, whose retry is balanced
again (usually onto another replica). On Ray, the replicas' limiters are cluster-wide actors
(:mod:`bedside.llm.shared_limiter`): the caps hold across workers, while the balancing uses what this worker has
in flight (each worker balances its own share).

The cache key names the pool (``pool:`` and the sorted URLs), not the replica that answered: replicas serve the
same model, and an answer is the same whichever served it. Adding a replica changes the key (a fresh draw is
asked once); the samples already stored are not re-run, since the sample key names the model string only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from bedside.llm.config import ModelConfig
from bedside.llm.errors import ModelRequestError
from bedside.llm.limiter import AdaptiveLimiter, endpoint_limiter, release_endpoint_limiter
from bedside.llm.providers import Provider, create_provider
from bedside.llm.types import ChatMessage, GenerationSettings, ProviderResponse

REST_S = 1.0
"""How long a replica that answered 429 is passed over, at least."""


class PooledProvider:
    """Replicas of one model behind one provider interface (see the module docstring)."""

    def __init__(self, config: ModelConfig, replicas: Sequence[Any], limiters: Sequence[AdaptiveLimiter]) -> None:
        if not replicas or len(replicas) != len(limiters):
            raise ValueError("a pool needs one limiter per replica, and at least one replica")
        self.replicas = list(replicas)
        self.limiters = list(limiters)
        self._closed = False
        first = self.replicas[0]
        self.name: str = first.name
        self.model: str = config.model
        urls = sorted(r.base_url or "" for r in self.replicas)
        self.base_url: str | None = "pool:" + ",".join(urls)
        self.default_concurrency: int = sum(int(r.default_concurrency) for r in self.replicas)
        self.supports_json_schema: bool = all(r.supports_json_schema for r in self.replicas)
        self.waiting = [0] * len(self.replicas)
        """Requests of this process waiting for, or in flight at, each replica."""
        self.sent = [0] * len(self.replicas)
        """Requests sent to each replica (balance checks, benchmarks)."""
        self.resting_until = [0.0] * len(self.replicas)
        """A replica that answered 429 is passed over until then (its Retry-After, at least ``REST_S``) while
        another replica can take the request: a rate-limited server answers at once, so by in-flight counts
        alone it would look the least loaded."""

    def _pick(self) -> int:
        now = time.monotonic()

        def load(i: int) -> tuple[bool, float, int, int]:
            limit = max(self.limiters[i].limit, 1)
            return (self.resting_until[i] > now, self.waiting[i] / limit, self.sent[i], i)

        return min(range(len(self.replicas)), key=load)

    async def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: GenerationSettings,
        response_schema: dict[str, Any] | None,
    ) -> ProviderResponse:
        index = self._pick()
        limiter = self.limiters[index]
        self.waiting[index] += 1
        try:
            async with limiter:
                self.sent[index] += 1
                try:
                    response: ProviderResponse = await self.replicas[index].generate(
                        messages, settings, response_schema
                    )
                except ModelRequestError as exc:
                    if exc.status == 429:
                        limiter.on_rate_limited()
                        rest = max(exc.retry_after or 0.0, REST_S)
                        self.resting_until[index] = max(self.resting_until[index], time.monotonic() + rest)
                    raise
                limiter.on_success()
                return response
        finally:
            self.waiting[index] -= 1

    async def aclose(self) -> None:
        if not self._closed:  # once, however many roles close the model
            self._closed = True
            for limiter in self.limiters:
                release_endpoint_limiter(limiter)
        await asyncio.gather(*(r.aclose() for r in self.replicas))


def create_pool(config: ModelConfig) -> PooledProvider:
    """One provider per base URL, each behind its endpoint's (process- or cluster-wide) limiter."""
    assert config.base_urls
    cap = config.replica_max_concurrency or config.max_concurrency
    replicas = []
    limiters = []
    for url in config.base_urls:
        replica_config = config.model_copy(update={"base_url": url, "base_urls": None, "max_concurrency": cap})
        provider = create_provider(replica_config)
        replicas.append(provider)
        limiters.append(endpoint_limiter(provider, cap or provider.default_concurrency))
    return PooledProvider(config, replicas, limiters)


def build_provider(config: ModelConfig) -> Provider | PooledProvider:
    """The provider a model config asks for: a pool of its replicas when it lists ``base_urls``, else the one
    provider of its protocol (:func:`bedside.llm.providers.create_provider`). The model layer and ``config check``
    build providers through here, so the pool sits above the single providers and neither imports the other back.
    """
    return create_pool(config) if config.base_urls else create_provider(config)
