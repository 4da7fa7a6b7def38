"""When and how long to wait before trying a failed request again."""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field


class RetryPolicy(BaseModel):
    """Exponential backoff with jitter, bounded; a server's ``Retry-After`` overrides the computed wait.

    The n-th retry (n = 1, 2, ...) waits a random time in ``[d/2, d]`` where
    ``d = min(max_delay_s, initial_delay_s * 2**(n-1))`` ("equal jitter": spread out, never near zero).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_retries: int = Field(default=6, ge=0)
    initial_delay_s: float = Field(default=0.5, ge=0.0)
    max_delay_s: float = Field(default=30.0, ge=0.0)
    max_retry_after_s: float = Field(default=300.0, ge=0.0)
    """A ``Retry-After`` longer than this is not waited for: the call fails at once, with the cause."""

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None:
            return retry_after
        ceiling = min(self.max_delay_s, self.initial_delay_s * 2 ** (retry - 1))
        return rng.uniform(ceiling / 2, ceiling)
