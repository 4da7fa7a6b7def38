"""Providers: one thin class per protocol, each doing a single request and nothing more.

Retries, caching, concurrency limits, accounting and structured output live in :class:`bedside.llm.Model`,
never here. Providers are imported only when a model of theirs is built, so a missing optional dependency
only matters to the user who asks for that provider.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Protocol

from bedside.llm.config import ModelConfig
from bedside.llm.errors import ModelConfigError
from bedside.llm.types import ChatMessage, GenerationSettings, ProviderResponse


class Provider(Protocol):
    """One endpoint. ``generate`` sends exactly one request and raises ``ModelRequestError`` on failure."""

    name: str
    """The provider's id as used in model names, e.g. ``openai-compatible``."""
    model: str
    base_url: str | None
    default_concurrency: int
    supports_json_schema: bool

    async def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: GenerationSettings,
        response_schema: dict[str, Any] | None,
    ) -> ProviderResponse: ...

    async def aclose(self) -> None: ...


_REGISTRY: dict[str, str] = {
    "openai-compatible": "bedside.llm.providers.openai_compatible:OpenAICompatibleProvider",
    "embedded": "bedside.llm.providers.embedded:EmbeddedProvider",
    "scripted": "bedside.llm.providers.scripted:ScriptedProvider",
    "transformers": "bedside.llm.providers.transformers_local:TransformersProvider",
}


def provider_names() -> list[str]:
    return sorted(_REGISTRY)


def create_provider(config: ModelConfig) -> Provider:
    """The one provider of ``config``'s protocol. A config with ``base_urls`` (replicas of one model) is built as
    a pool by :func:`bedside.llm.pool.build_provider`, which calls this once per replica."""
    if config.base_urls:  # never silently one replica of a pool
        raise ModelConfigError("a config with base_urls is a pool of replicas: build it with bedside.llm.pool")
    target = _REGISTRY.get(config.provider)
    if target is None:
        raise ModelConfigError(
            f"unknown model provider {config.provider!r}; known providers: {', '.join(provider_names())}"
        )
    module_name, _, class_name = target.partition(":")
    module = importlib.import_module(module_name)
    provider: Provider = getattr(module, class_name)(config)
    return provider
