"""What the in-process providers (embedded llama.cpp, transformers) share: ``n`` texts as ``n`` seeded draws.

A local runtime samples one text per call, so ``n`` texts are ``n`` calls with seeds ``seed``, ``seed + 1``, ...
and stay reproducible; without a seed the first is 0, because these models are for reproducible offline runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bedside.llm.types import GenerationSettings, ProviderResponse, TokenUsage


@dataclass(frozen=True)
class Draw:
    """One call's answer: its texts (usually one), token counts and finish reason."""

    texts: tuple[str, ...]
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None


async def seeded_draws(
    model: str, settings: GenerationSettings, draw: Callable[[int], Awaitable[Draw]]
) -> ProviderResponse:
    """``settings.n`` calls of ``draw(seed)``, summed into one response (the first finish reason given wins)."""
    first = settings.seed if settings.seed is not None else 0
    texts: list[str] = []
    prompt_tokens = completion_tokens = 0
    finish_reason = None
    for i in range(settings.n):
        answer = await draw(first + i)
        texts.extend(answer.texts)
        prompt_tokens += answer.prompt_tokens
        completion_tokens += answer.completion_tokens
        finish_reason = finish_reason or answer.finish_reason
    return ProviderResponse(
        texts=tuple(texts),
        usage=TokenUsage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens),
        finish_reason=finish_reason,
        model=model,
    )
