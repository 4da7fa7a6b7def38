"""The repetition guard on scripted token streams (never the model): where it fires, where it must not, and how
the embedded provider turns a guarded stop into an answer marked ``finish_reason: repetition``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bedside.llm import GenerationSettings, get_model
from bedside.llm.providers.embedded import EmbeddedProvider, GuardedStream
from bedside.llm.repetition import REPETITION, RepetitionGuard

LOOP = "I'm glad to have you here. "  # 6 words


def tokens(text: str) -> list[str]:
    """Split like a BPE tokenizer would, roughly: a word with its leading space is one piece."""
    pieces: list[str] = []
    for i, word in enumerate(text.split(" ")):
        pieces.append(word if i == 0 else " " + word)
    return pieces


def first_firing(pieces: list[str], guard: RepetitionGuard) -> int | None:
    for index, piece in enumerate(pieces):
        if guard.feed(piece):
            return index
    return None


def test_a_loop_fires_once_the_period_is_repeated_three_times() -> None:
    pieces = tokens("Thank you for asking. " + LOOP * 10)
    fired_at = first_firing(pieces, RepetitionGuard())
    assert fired_at is not None
    # 4 opening words, then 3 copies of the 6-word loop; the 18th loop word is complete when the next piece starts.
    assert fired_at == 4 + 18
    assert "".join(pieces[: fired_at + 1]).count("glad") == 3  # stopped at the third copy, not after ten


def test_the_guard_stays_fired() -> None:
    guard = RepetitionGuard()
    first_firing(tokens(LOOP * 5), guard)
    assert guard.fired
    assert guard.feed(" anything")


@pytest.mark.parametrize(
    "text",
    [
        "No, no, no, that is not what I meant. Please take the tablet with food twice a day. ",
        LOOP * 2 + "and then something else entirely. ",  # two copies are not a loop
        "very " * 11 + "tired today. ",  # an 11-word stutter is under min_words
        "Check your blood pressure each morning, write it down, and bring the list when you come in next week. ",
    ],
)
def test_ordinary_text_does_not_fire(text: str) -> None:
    assert first_firing(tokens(text), RepetitionGuard()) is None


def test_a_one_word_loop_fires_at_min_words() -> None:
    assert first_firing(tokens("very " * 14), RepetitionGuard()) == 12  # 12 words, the 12th completed by the 13th


def test_invalid_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="repeats"):
        RepetitionGuard(repeats=1)


def chunk(content: str, predicted: int) -> dict[str, Any]:
    timings = {"cache_n": 3, "prompt_n": 30, "predicted_n": predicted}
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}], "timings": timings}


def scripted_stream(text: str) -> list[dict[str, Any]]:
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None}, "finish_reason": None}]}
    ]
    pieces = tokens(text)
    chunks += [chunk(piece, i + 1) for i, piece in enumerate(pieces)]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
    usage = {"prompt_tokens": 33, "completion_tokens": len(pieces)}
    chunks.append({"choices": [], "usage": usage})
    return chunks


def test_a_guarded_stream_stops_and_is_marked_with_usage_from_timings() -> None:
    stream = GuardedStream(RepetitionGuard())
    chunks = scripted_stream(LOOP * 10)
    sent = 0
    for item in chunks:
        sent += 1
        if stream.add(item):
            break
    assert sent < len(chunks) - 2
    body = stream.body()
    choice = body["choices"][0]
    assert choice["finish_reason"] == REPETITION
    assert choice["message"]["content"].count("glad") == 3
    assert body["usage"] == {"prompt_tokens": 33, "completion_tokens": sent - 1}


def test_an_unlooping_stream_keeps_the_endpoints_finish_reason_and_usage() -> None:
    stream = GuardedStream(RepetitionGuard())
    for item in scripted_stream("Take one tablet each morning."):
        assert not stream.add(item)
    body = stream.body()
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"] == {"prompt_tokens": 33, "completion_tokens": 5}


class ScriptedRuntime:
    """Stands in for xllamacpp.Server: streams a scripted answer to the callback until it asks to stop."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.requests: list[dict[str, Any]] = []
        self.chunks_sent = 0

    def handle_chat_completions(
        self, request: dict[str, Any], callback: Callable[[dict[str, Any]], bool] | None = None
    ) -> None:
        self.requests.append(request)
        assert callback is not None
        for item in scripted_stream(self.text):
            self.chunks_sent += 1
            if callback(item):
                return


def test_the_embedded_provider_stops_a_loop_and_the_ledger_counts_it_as_cut(tmp_path: Path) -> None:
    weights = tmp_path / "fake.gguf"
    weights.write_bytes(b"")  # never loaded: the runtime is scripted
    runtime = ScriptedRuntime("Hello. " + LOOP * 40)

    async def run() -> tuple[Any, Any]:
        async with get_model(f"embedded/{weights}") as model:
            provider = model._endpoint.provider
            assert isinstance(provider, EmbeddedProvider)
            provider.runtime._server = runtime
            completion = await model.generate("Hi", GenerationSettings(max_tokens=400))
            return completion, model.usage.snapshot()["system"]

    completion, usage = asyncio.run(run())
    assert completion.finish_reason == REPETITION
    assert runtime.requests[0]["stream"] is True
    assert runtime.chunks_sent < 40  # stopped at the third copy, not after forty
    assert usage.truncated == 1
    assert usage.repetitions == 1  # the guard's share of the cut answers, counted apart from max_tokens cuts
    assert completion.usage.completion_tokens == runtime.chunks_sent - 1


def test_a_sample_counts_guard_cuts_apart_from_max_tokens_cuts() -> None:
    from bedside.llm.types import Completion, TokenUsage
    from bedside.runs.task import SampleContext

    def completion(finish_reason: str) -> Completion:
        return Completion(
            texts=("x",),
            usage=TokenUsage(),
            finish_reason=finish_reason,
            latency_s=0.0,
            cached=True,
            provider="embedded",
            model="m",
            role="patient",
            cache_key="k",
        )

    context = SampleContext(models={}, settings={}, epoch="0", seed=0)
    for reason in ("stop", "length", REPETITION, REPETITION):
        context.record("patient", completion(reason))
    counts = context.usage["patient"]
    assert (counts.calls, counts.truncated, counts.repetitions) == (4, 3, 2)
