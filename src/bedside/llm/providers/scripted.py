"""Deterministic in-process answers for tests: no network, no sampling, same reply every time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bedside.llm.config import ModelConfig
from bedside.llm.scripted import ScriptedRules, count_words
from bedside.llm.types import ChatMessage, GenerationSettings, ProviderResponse, TokenUsage


class ScriptedProvider:
    name = "scripted"
    default_concurrency = 64
    supports_json_schema = False

    def __init__(self, config: ModelConfig) -> None:
        self.model = config.model
        self.base_url = None
        self._rules = ScriptedRules.coerce(config.options.get("rules"))

    async def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: GenerationSettings,
        response_schema: dict[str, Any] | None,
    ) -> ProviderResponse:
        text = self._rules.answer(messages)
        return ProviderResponse(
            texts=(text,) * settings.n,
            usage=TokenUsage(
                prompt_tokens=sum(count_words(m.content) for m in messages),
                completion_tokens=count_words(text) * settings.n,
            ),
            finish_reason="stop",
            model=self.model,
        )

    async def aclose(self) -> None:
        return None
