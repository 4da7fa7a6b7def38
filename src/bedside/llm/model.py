"""The one wrapper every provider goes through: cache, retries, concurrency limit, accounting, JSON output.

Providers do one request each; everything a serious evaluation needs around that request lives here, once:

* answers are cached in SQLite (see :mod:`bedside.llm.cache`), and identical calls in flight at the same time
  share one request;
* retryable failures (429, 5xx, timeouts, dropped connections, unreadable bodies) are retried with
  exponential backoff and jitter, honouring ``Retry-After``; after a bounded number of retries the call raises
  :class:`RetriesExhaustedError` carrying the last cause;
* requests in flight to one endpoint never exceed its limit, which halves after bursts of 429 and grows back;
* usage is accounted per role (calls, requests, tokens, cache hits, cost);
* :meth:`Model.generate_structured` returns a validated pydantic object, re-asking with the validation error
  a bounded number of times;
* an answer with no text is an :class:`EmptyAnswerError`, never an empty string to score, and never cached (asked
  once more with more tokens where ``empty_retry_max_tokens`` is configured); text made only of whitespace and
  invisible format characters (zero-width spaces and joiners, BOM) is no text; a cut-off answer
  (``finish_reason: length``) is kept and counted as truncated;
* an answer the endpoint's content filter stopped (``finish_reason: content_filter``) is a
  :class:`ContentFilterError`, never cached or scored;
* configured secrets (API keys, URL passwords) in an answer are masked before it is cached or handed out;
* inside a :func:`~bedside.llm.scope.call_scope`, the answers handed out and rejected are recorded, and the keys
  the scope says to bypass are asked again instead of replayed (how ``--retry-errors`` re-asks).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from bedside.llm.cache import ResponseCache, cache_request, canonical_json, key_of
from bedside.llm.config import ModelConfig, parse_model_spec
from bedside.llm.errors import (
    CacheMissError,
    ContentFilterError,
    EmptyAnswerError,
    EndpointUnreachableError,
    ModelRequestError,
    RetriesExhaustedError,
    StructuredOutputError,
)
from bedside.llm.limiter import AdaptiveLimiter, endpoint_limiter, release_endpoint_limiter
from bedside.llm.pool import build_provider
from bedside.llm.providers import Provider
from bedside.llm.repetition import CUT_FINISH_REASONS, REPETITION
from bedside.llm.retry import RetryPolicy
from bedside.llm.scope import current_scope
from bedside.llm.secrets import RedactingFilter, known_secret_count, redact, scrub
from bedside.llm.structured import parse_structured
from bedside.llm.types import ChatMessage, Completion, GenerationSettings, ProviderResponse, Role, as_messages
from bedside.llm.usage import UsageLedger
from bedside.prompts import render

T = TypeVar("T", bound=BaseModel)

logger = logging.getLogger("bedside.llm")
logger.addFilter(RedactingFilter())

_DEFAULT_SETTINGS = GenerationSettings()  # frozen: one object, so what is derived from it is computed once

STRUCTURED_INSTRUCTIONS = "llm/structured_instructions.j2"
STRUCTURED_REPAIR = "llm/structured_repair.j2"


def sent_settings(settings: GenerationSettings) -> dict[str, Any]:
    """The generation settings a request carried, as a call's timeline entry records them (only those set)."""
    return dict(settings.request_fields())


def served_at(config: ModelConfig) -> str | None:
    """The endpoint a model's answers come from, as its config names it (its replicas' URLs joined by ","),
    scrubbed of credentials (a URL's ``user:key@``, a known key anywhere in it): it is stored with each answer;
    None for a model served in this process."""
    where = ",".join(config.base_urls) if config.base_urls else config.base_url
    return scrub(where) if where else None


def has_text(text: str) -> bool:
    """Whether ``text`` holds anything a reader could see: whitespace and invisible format characters
    (Unicode category Cf: zero-width space and joiners, word joiner, BOM, direction marks) do not count."""
    return any(not char.isspace() and (char < "\xad" or unicodedata.category(char) != "Cf") for char in text)


def _check_not_filtered(
    response: ProviderResponse, name: str, role: Role, spent: Callable[[ProviderResponse], None]
) -> None:
    """Refuse an answer the endpoint's content filter stopped: its text (often a canned apology, or nothing)
    is not the model's answer, and scored it would be a zero that hides the cause."""
    if response.finish_reason != "content_filter":
        return
    spent(response)
    raise ContentFilterError(
        f"{name} ({role}): the endpoint's content filter stopped the answer (finish_reason: content_filter); "
        "the prompt or the answer tripped the provider's moderation, so there is no answer to score"
    )


def _check_not_empty(
    response: ProviderResponse, name: str, role: Role, spent: Callable[[ProviderResponse], None]
) -> None:
    """Refuse an answer without text: scored, it would be a zero that hides a failure. Its tokens were paid
    for all the same, so ``spent`` accounts them."""
    if response.texts and all(has_text(text) for text in response.texts):
        return
    spent(response)
    what = (
        "content: null"
        if response.null_content
        else "empty content"
        if all(not text for text in response.texts)
        else "only whitespace or invisible characters"
    )
    why = f"finish_reason: {response.finish_reason}" if response.finish_reason else "no finish_reason"
    hint = (
        "; the tokens ran out before any answer (with a reasoning model, raise max_tokens or set "
        "empty_retry_max_tokens)"
        if response.finish_reason == "length"
        else ""
    )
    raise EmptyAnswerError(
        f"{name} ({role}): the endpoint answered with no text ({what}, {why}){hint}",
        finish_reason=response.finish_reason,
    )


def _failure_kind(failure: ModelRequestError) -> str:
    """What a retried failure is, coarsely (its HTTP status, else its first words): one warning per kind."""
    return f"HTTP {failure.status}" if failure.status is not None else " ".join(str(failure).split()[:3])


@dataclass
class _Endpoint:
    """What all roles of one model share: the provider, its limit and the calls in flight."""

    config: ModelConfig
    provider: Provider
    limiter: AdaptiveLimiter
    cache: ResponseCache | None
    usage: UsageLedger
    retry: RetryPolicy
    rng: random.Random = field(default_factory=random.Random)
    in_flight: dict[str, asyncio.Future[ProviderResponse]] = field(default_factory=dict)
    closed: bool = False
    """Whether the model has closed (its endpoint limiter given back)."""
    answered: bool = False
    """Whether the endpoint has answered a request in this process: a refused connection is retried only then
    (a restart), never for an endpoint that was not reachable to begin with."""
    warned: set[str] = field(default_factory=set)
    """Kinds of transient failure already reported as a warning (each is warned about once, then logged)."""
    _served_at: tuple[str | None] | None = None

    def where(self) -> str | None:
        """:func:`served_at` of the config, worked out at the first answer (once a key in the URL is known to
        the redactor) and kept: it is stored with every answer."""
        if self._served_at is None:
            self._served_at = (served_at(self.config),)
        return self._served_at[0]

    merged: dict[GenerationSettings, GenerationSettings] = field(default_factory=dict)
    """A call's settings with the model's own sampling options over them (``ModelConfig.generation_overrides``)."""

    def settings_for(self, settings: GenerationSettings) -> GenerationSettings:
        """``settings`` with this model's sampling options (its config's ``options``) taking precedence."""
        overrides = self.config.generation_overrides
        if not overrides:
            return settings
        found = self.merged.get(settings)
        if found is None:
            stop = overrides.get("stop")
            update = {**overrides, **({"stop": tuple(stop)} if isinstance(stop, list) else {})}
            found = self.merged[settings] = settings.model_copy(update=update)
        return found


@dataclass(frozen=True)
class Structured(Generic[T]):
    """A validated object and the completion it was read from; ``attempts`` counts re-asks plus one."""

    value: T
    completion: Completion
    attempts: int


class Model:
    """An async chat model behind bedside's shared behaviour. Build one with :func:`get_model`."""

    def __init__(self, endpoint: _Endpoint, role: Role) -> None:
        self._endpoint = endpoint
        self.role: Role = role

    @property
    def config(self) -> ModelConfig:
        return self._endpoint.config

    @property
    def name(self) -> str:
        return self._endpoint.config.name

    @property
    def usage(self) -> UsageLedger:
        return self._endpoint.usage

    @property
    def limiter(self) -> AdaptiveLimiter:
        return self._endpoint.limiter

    def with_role(self, role: Role) -> Model:
        """The same model (cache, limit, ledger shared) called for another reason."""
        return Model(self._endpoint, role)

    async def generate(
        self,
        prompt: str | Sequence[ChatMessage],
        settings: GenerationSettings | None = None,
        *,
        system: str | None = None,
        epoch: int | str = 0,
        response_schema: dict[str, Any] | None = None,
    ) -> Completion:
        """One completion. ``epoch`` tags a repeated sample: each tag is its own cached draw."""
        ep = self._endpoint
        messages = as_messages(prompt, system)
        settings = ep.settings_for(settings or _DEFAULT_SETTINGS)
        request = cache_request(
            provider=ep.provider.name,
            base_url=None,  # where a model is served is not what it answers: see bedside.llm.cache
            model=ep.provider.model,
            messages=messages,
            settings=settings,
            response_schema=response_schema,
            epoch=str(epoch),
        )
        request_json = canonical_json(request)  # encoded once: for the key and for the cache row
        key = key_of(request_json)
        started = time.perf_counter()
        scope = current_scope()
        fresh = scope is not None and scope.take_bypass(key)
        cached = ep.cache.get(key) if ep.cache is not None and not fresh else None
        if cached is not None:
            if known_secret_count():  # an answer cached by an older bedside, before answers were masked
                cached = self._masked(cached)
            return self._handed_out(cached, key, started, cached=True, settings=settings)
        if scope is not None and scope.cache_only:
            raise CacheMissError(f"{self.name} ({self.role}): not in the cache (key {key[:12]})")

        while not fresh and (shared := ep.in_flight.get(key)) is not None:
            # An identical call is already out: wait for its answer and pay once. If that call is cancelled
            # (its caller gave up, not us), loop and send our own.
            try:
                response = await asyncio.shield(shared)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if shared.cancelled() and not (task and task.cancelling()):
                    continue
                raise
            return self._handed_out(response, key, started, cached=True)

        future: asyncio.Future[ProviderResponse] = asyncio.get_running_loop().create_future()
        ep.in_flight.setdefault(key, future)
        bigger: GenerationSettings | None = None
        try:
            response = await self._request_with_retries(messages, settings, response_schema)
            if known_secret_count():
                response = self._masked(response)
            if response.finish_reason == "content_filter":
                _check_not_filtered(response, self.name, self.role, self._spent)  # raises
            if not response.texts or not all(has_text(text) for text in response.texts):
                _check_not_empty(response, self.name, self.role, self._spent)  # raises
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters, if any, re-raise it themselves
            if scope is not None:
                scope.note_call(
                    started,
                    role=self.role,
                    model=ep.config.model,
                    cached=False,
                    prompt_tokens=0,
                    completion_tokens=0,
                    finish_reason=None,
                    attempts=getattr(exc, "attempts", 1),
                    error=f"{type(exc).__name__}: {exc}"[:500],
                    sent=sent_settings(settings),
                )
            more = ep.config.empty_retry_max_tokens
            if not (isinstance(exc, EmptyAnswerError) and more and (settings.max_tokens or 0) < more):
                ep.usage.record_error(self.role)
                raise
            logger.info("%s (%s): empty answer; asking once more with max_tokens=%d", self.name, self.role, more)
            bigger = settings.model_copy(update={"max_tokens": more})
        else:
            future.set_result(response)
        finally:
            if ep.in_flight.get(key) is future:
                del ep.in_flight[key]
        if bigger is not None:
            # Cached (if it has text) under the larger request's own key: the store says what was really asked.
            return await self.generate(messages, bigger, epoch=epoch, response_schema=response_schema)
        if ep.cache is not None:
            ep.cache.put(key, request, response, request_json=request_json)
        price = ep.config.price
        ep.usage.record_answer(
            self.role,
            cached=False,
            prompt_tokens=response.usage.prompt_tokens,
            completion_tokens=response.usage.completion_tokens,
            cost=price.cost(response.usage.prompt_tokens, response.usage.completion_tokens) if price else None,
            truncated=response.finish_reason in CUT_FINISH_REASONS,
            repeated=response.finish_reason == REPETITION,
        )
        if scope is not None:
            scope.answered.append(key)
        return self._completion(response, key, started, cached=False, settings=settings)

    def _masked(self, response: ProviderResponse) -> ProviderResponse:
        """The answer with every configured secret (API keys, URL passwords; see :func:`redact`) masked, before
        it is cached, shared or handed out: an endpoint that echoes request headers into its answer, or a model
        that repeats a key it was shown, must not put the key into the cache or a store. Said in the log."""
        texts = tuple(redact(text) for text in response.texts)
        if texts == response.texts:
            return response
        logger.warning(
            "%s (%s): the answer contained a configured secret (an API key or URL password); it was masked "
            "as *** before caching and storing",
            self.name,
            self.role,
        )
        return response.model_copy(update={"texts": texts})

    def _spent(self, response: ProviderResponse) -> None:
        """Account the tokens of an answer that was paid for but refused."""
        price = self._endpoint.config.price
        usage = response.usage
        self._endpoint.usage.record_tokens(
            self.role,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost=price.cost(usage.prompt_tokens, usage.completion_tokens) if price else None,
        )

    def _handed_out(
        self,
        response: ProviderResponse,
        key: str,
        started: float,
        *,
        cached: bool,
        settings: GenerationSettings | None = None,
    ) -> Completion:
        """Account an answer that cost nothing (cached, or shared with an identical call in flight)."""
        self._endpoint.usage.record_answer(
            self.role,
            cached=cached,
            truncated=response.finish_reason in CUT_FINISH_REASONS,
            repeated=response.finish_reason == REPETITION,
        )
        scope = current_scope()
        if scope is not None:
            scope.answered.append(key)
        return self._completion(response, key, started, cached=cached, settings=settings)

    async def _request_with_retries(
        self,
        messages: list[ChatMessage],
        settings: GenerationSettings,
        response_schema: dict[str, Any] | None,
    ) -> ProviderResponse:
        ep = self._endpoint
        policy = ep.retry
        retry = 0
        while True:
            async with ep.limiter:
                ep.usage.record_request(self.role)
                try:
                    response = await ep.provider.generate(messages, settings, response_schema)
                except ModelRequestError as exc:
                    failure = exc
                else:
                    ep.limiter.on_success()
                    ep.answered = True
                    return response
            if failure.status == 429:
                ep.limiter.on_rate_limited()
            if not failure.retryable or (isinstance(failure, EndpointUnreachableError) and not ep.answered):
                raise failure
            retry += 1
            if retry > policy.max_retries:
                raise RetriesExhaustedError(
                    f"{self.name} ({self.role}): gave up after {retry} attempts; last error: {failure}",
                    attempts=retry,
                    cause=failure,
                )
            if failure.retry_after is not None and failure.retry_after > policy.max_retry_after_s:
                raise RetriesExhaustedError(
                    f"{self.name} ({self.role}): the endpoint asked to wait {failure.retry_after:g} s, "
                    f"more than max_retry_after_s={policy.max_retry_after_s:g}; last error: {failure}",
                    attempts=retry,
                    cause=failure,
                )
            delay = policy.delay(retry, failure.retry_after, ep.rng)
            kind = _failure_kind(failure)
            first = kind not in ep.warned
            ep.warned.add(kind)
            logger.log(
                logging.WARNING if first else logging.INFO,
                "%s (%s): retry %d/%d in %.2f s after: %s"
                + (" (transient failures are retried; later retries of this kind are logged with -v)" if first else ""),
                self.name,
                self.role,
                retry,
                policy.max_retries,
                delay,
                failure,
            )
            await asyncio.sleep(delay)

    def _completion(
        self,
        response: ProviderResponse,
        key: str,
        started: float,
        *,
        cached: bool,
        settings: GenerationSettings | None = None,
    ) -> Completion:
        scope = current_scope()
        if scope is not None:
            scope.note_call(
                started,
                role=self.role,
                model=self._endpoint.config.model,
                cached=cached,
                prompt_tokens=0 if cached else response.usage.prompt_tokens,
                completion_tokens=0 if cached else response.usage.completion_tokens,
                finish_reason=response.finish_reason,
                key=key[:16],
                # What was asked for (the request's generation settings, after the alias's options) and which
                # model the endpoint said answered: a run's record of what it really sent.
                sent=sent_settings(settings) if settings is not None else None,
                reported_model=response.model,
                fingerprint=response.system_fingerprint,
                # where it was served (never part of the identity): a run reusing it elsewhere can say so
                served_at=None if cached else self._endpoint.where(),
            )
        return Completion(
            texts=response.texts,
            usage=response.usage,
            finish_reason=response.finish_reason,
            latency_s=time.perf_counter() - started,
            cached=cached,
            provider=self._endpoint.provider.name,
            model=self._endpoint.config.model,
            role=self.role,
            cache_key=key,
        )

    async def generate_structured(
        self,
        prompt: str | Sequence[ChatMessage],
        output_type: type[T],
        settings: GenerationSettings | None = None,
        *,
        system: str | None = None,
        epoch: int | str = 0,
        max_repairs: int = 2,
        check: Callable[[T], None] | None = None,
        instructions_template: str | Path = STRUCTURED_INSTRUCTIONS,
        repair_template: str | Path = STRUCTURED_REPAIR,
        on_completion: Callable[[Completion], None] | None = None,
    ) -> Structured[T]:
        """Ask for JSON matching ``output_type``; validate; on failure re-ask with the reason, bounded.

        ``check`` may add rules a schema cannot state (e.g. a score inside a rubric's scale) by raising
        ``ValueError`` with a message for the model. Uses the endpoint's JSON-schema mode when it has one
        (``structured_mode``), and always states the schema in the prompt too, since many servers ignore it.
        ``on_completion`` sees every attempt's completion, the rejected ones too (per-sample accounting counts
        what was paid for, not only what was kept).
        """
        schema = output_type.model_json_schema()
        use_schema_mode = self.config.structured_mode == "json_schema" or (
            self.config.structured_mode == "auto" and self._endpoint.provider.supports_json_schema
        )
        messages = as_messages(prompt, system)
        instructions = render(instructions_template, schema=canonical_json(schema))
        last = messages[-1]
        messages[-1] = ChatMessage(role=last.role, content=f"{last.content}\n\n{instructions}")
        error = ""
        completion: Completion | None = None
        rejected: list[str] = []
        replayed = 0
        scope = current_scope()
        for attempt in range(1, max_repairs + 2):
            completion = await self.generate(
                messages, settings, epoch=epoch, response_schema=schema if use_schema_mode else None
            )
            if on_completion is not None:
                on_completion(completion)
            value, problem = parse_structured(completion.text, output_type, check)
            if value is not None:
                return Structured(value=value, completion=completion, attempts=attempt)
            rejected.append(completion.cache_key)
            replayed += completion.cached
            if scope is not None:
                scope.rejected.append(completion.cache_key)
            error = problem or "unknown problem"
            if completion.finish_reason == "length":  # the usual cause of broken JSON: say so, to model and user
                limit = f"max_tokens={settings.max_tokens}" if settings and settings.max_tokens else "its length limit"
                error = f"{error.rstrip('.')}; the answer was cut at {limit} before it was complete."
            logger.info("%s (%s): structured answer rejected (attempt %d): %s", self.name, self.role, attempt, error)
            messages = [
                *messages,
                ChatMessage(role="assistant", content=completion.text),
                ChatMessage(role="user", content=render(repair_template, error=error)),
            ]
        assert completion is not None
        # A fixed endpoint's first run after a failure replays the failed answers from the cache: say so.
        cached = (
            f" ({replayed} of the answers replayed from the response cache: --no-cache, or a run's --retry-errors, "
            "asks the model again)"
            if replayed
            else ""
        )
        raise StructuredOutputError(
            f"{self.name} ({self.role}): no valid {output_type.__name__} after {max_repairs + 1} "
            f"attempt{'s' if max_repairs else ''}; "
            f"last problem: {error}{cached}",
            attempts=max_repairs + 1,
            last_text=completion.text,
            last_error=error,
            rejected=tuple(rejected),
        )

    async def aclose(self) -> None:
        endpoint = self._endpoint
        if endpoint.cache is not None:
            endpoint.cache.flush()
        if not endpoint.closed:  # once for all the roles that share the endpoint
            endpoint.closed = True
            release_endpoint_limiter(endpoint.limiter)
        await endpoint.provider.aclose()

    async def __aenter__(self) -> Model:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def get_model(
    spec: str | ModelConfig | dict[str, Any],
    *,
    role: Role = "system",
    cache: ResponseCache | str | Path | None = None,
    usage: UsageLedger | None = None,
    retry: RetryPolicy | None = None,
    **overrides: Any,
) -> Model:
    """Build a model from its name or config block.

    ``cache``: a :class:`ResponseCache`, a path to its SQLite file, a ``postgresql://`` URL, or ``None`` for no
    caching.
    ``usage``: the ledger to account into (share one across the models of a run); a new one by default.
    ``overrides``: :class:`ModelConfig` fields (``api_key_env=...``, ``max_concurrency=...``, ...).
    """
    config = parse_model_spec(spec, **overrides)
    provider = build_provider(config)
    limiter = endpoint_limiter(provider, config.max_concurrency or provider.default_concurrency)
    if cache is not None and not isinstance(cache, ResponseCache):
        from bedside.llm.cache_postgres import open_cache  # [scale-out] a path or a postgresql:// URL

        cache = open_cache(cache)
    endpoint = _Endpoint(
        config=config,
        provider=provider,
        limiter=limiter,
        cache=cache,
        usage=usage or UsageLedger(),
        retry=retry or RetryPolicy(max_retries=config.max_retries),
    )
    return Model(endpoint, role)
