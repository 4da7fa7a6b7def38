"""Plain, serialisable values that cross the model layer.

Every object here is a frozen pydantic model so it can be hashed into a cache key, stored in a run and shown
in the viewer without a custom encoder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "patient", "helper", "judge"]
"""Why a model is called. Usage and cost are reported per role: ``system`` is the system under test, ``patient``
a simulated patient, ``helper`` auxiliary calls that are neither (parsing a note, extracting facts), ``judge``
scoring."""

ROLES: tuple[Role, ...] = ("system", "patient", "helper", "judge")


class ChatMessage(BaseModel):
    """One turn of a chat, in the OpenAI chat shape every supported endpoint accepts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


MAX_CHOICES = 128
"""The most completions one request may ask for (``n``), as the OpenAI API allows."""


class GenerationSettings(BaseModel):
    """Sampling settings. ``None`` means "the endpoint's default" and is left out of the request."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float | None = Field(default=None, ge=0.0)
    max_tokens: int | None = Field(default=None, gt=0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    # OpenAI's penalties on tokens already written, which vLLM, Ollama and llama.cpp also take: small local models
    # fall into repetition loops ("I'm glad to have you here" x20) that a frequency penalty breaks.
    frequency_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    presence_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    stop: tuple[str, ...] | None = None
    seed: int | None = None
    # OpenAI's own bound on choices per request; an unbounded n would have a local or scripted endpoint build
    # 10^12 answers (a config typo that hung a run at full CPU).
    n: int = Field(default=1, ge=1, le=MAX_CHOICES)

    def request_fields(self) -> dict[str, object]:
        """The settings as OpenAI request fields, defaults omitted so the endpoint's own apply."""
        fields = self.model_dump(exclude_none=True)
        if fields.get("n") == 1:
            del fields["n"]
        if "stop" in fields:
            fields["stop"] = list(fields["stop"])
        return fields


class TokenUsage(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ProviderResponse(BaseModel):
    """What a provider returns for one request: the part of a completion that is cached."""

    model_config = ConfigDict(frozen=True)

    texts: tuple[str, ...]
    usage: TokenUsage = TokenUsage()
    finish_reason: str | None = None
    model: str | None = None
    """The model name the endpoint reported, which may differ from the one asked for."""
    system_fingerprint: str | None = None
    """The endpoint's build or configuration tag (OpenAI's and llama.cpp's ``system_fingerprint``): two runs
    answered under different fingerprints may differ with the same seed."""
    null_content: bool = False
    """The endpoint sent ``content: null`` (not a text at all); such a response is an error, never cached."""


class Completion(BaseModel):
    """A model's answer to one call, as the wrapper hands it to callers."""

    model_config = ConfigDict(frozen=True)

    texts: tuple[str, ...]
    usage: TokenUsage
    finish_reason: str | None
    latency_s: float
    """Seconds the call took, retries and waits included; near zero for a cache hit."""
    cached: bool
    provider: str
    model: str
    role: Role
    cache_key: str

    @property
    def text(self) -> str:
        """The first (usually the only) sampled text."""
        return self.texts[0] if self.texts else ""


def as_messages(prompt: str | Sequence[ChatMessage], system: str | None = None) -> list[ChatMessage]:
    """Accept a bare prompt string as a single user turn, optionally after a system turn."""
    messages = [ChatMessage(role="user", content=prompt)] if isinstance(prompt, str) else list(prompt)
    if system is not None:
        messages.insert(0, ChatMessage(role="system", content=system))
    if not messages:
        raise ValueError("a chat needs at least one message")
    return messages
