"""Caching through the public API, against the scripted HTTP server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bedside.llm import GenerationSettings, ResponseCache, UsageLedger, get_model
from bedside.testing import ScriptedServer


def test_second_identical_call_is_a_cache_hit(cache_path: Path) -> None:
    with ScriptedServer({"knee": "Ice it and rest."}) as server:

        async def run() -> tuple[str, bool, str, bool]:
            async with get_model(server.model_name(), cache=cache_path) as model:
                first = await model.generate("My knee hurts", GenerationSettings(temperature=0.7))
                second = await model.generate("My knee hurts", GenerationSettings(temperature=0.7))
            return first.text, first.cached, second.text, second.cached

        first_text, first_cached, second_text, second_cached = asyncio.run(run())
        assert server.stats()["requests"] == 1
    assert (first_text, second_text) == ("Ice it and rest.", "Ice it and rest.")
    assert (first_cached, second_cached) == (False, True)


def test_cache_survives_a_new_process_view_of_the_file(cache_path: Path) -> None:
    with ScriptedServer() as server:
        for _ in range(2):  # a fresh model and cache object each time, as a re-run would have

            async def run() -> bool:
                async with get_model(server.model_name(), cache=ResponseCache(cache_path)) as model:
                    return (await model.generate("hello")).cached

            asyncio.run(run())
        assert server.stats()["requests"] == 1


def test_epoch_tags_are_distinct_cached_samples(cache_path: Path) -> None:
    usage = UsageLedger()
    with ScriptedServer() as server:

        async def run() -> list[bool]:
            async with get_model(server.model_name(), cache=cache_path, usage=usage) as model:
                fresh = [await model.generate("sample me", epoch=e) for e in (0, 1, 2)]
                again = [await model.generate("sample me", epoch=e) for e in (0, 1, 2)]
            assert len({c.cache_key for c in fresh}) == 3
            assert [c.cache_key for c in fresh] == [c.cache_key for c in again]
            return [c.cached for c in fresh + again]

        assert asyncio.run(run()) == [False, False, False, True, True, True]
        assert server.stats()["requests"] == 3
    assert len(ResponseCache(cache_path)) == 3
    system = usage.snapshot()["system"]
    assert (system.calls, system.cache_hits, system.requests) == (6, 3, 3)


def test_settings_and_messages_change_the_key(cache_path: Path) -> None:
    with ScriptedServer() as server:

        async def run() -> None:
            async with get_model(server.model_name(), cache=cache_path) as model:
                await model.generate("a")
                await model.generate("a", GenerationSettings(max_tokens=5))
                await model.generate("a", GenerationSettings(frequency_penalty=0.5))
                await model.generate("a", system="be brief")
                await model.generate("b")

        asyncio.run(run())
        assert server.stats()["requests"] == 5
        penalised = [body for body in server.recent if "frequency_penalty" in body]
        assert [body["frequency_penalty"] for body in penalised] == [0.5]  # sent only when set


def test_identical_concurrent_calls_share_one_request(cache_path: Path) -> None:
    with ScriptedServer(latency_ms=100) as server:

        async def run() -> list[str]:
            async with get_model(server.model_name(), cache=cache_path) as model:
                completions = await asyncio.gather(*(model.generate("same") for _ in range(5)))
            return [c.text for c in completions]

        assert asyncio.run(run()) == ["same"] * 5
        assert server.stats()["requests"] == 1


def test_no_cache_means_every_call_is_sent() -> None:
    with ScriptedServer() as server:

        async def run() -> None:
            async with get_model(server.model_name(), cache=None) as model:
                await model.generate("x")
                await model.generate("x")

        asyncio.run(run())
        assert server.stats()["requests"] == 2


def test_lookups_in_one_loop_turn_are_answered_together(cache_path: Path) -> None:
    """``lookup`` batches the lookups of a loop turn into one query: stored answers, answers only put (not yet
    committed), misses and the same key twice each get their own answer, and a caller cancelled meanwhile
    does not disturb the others."""
    from bedside.llm.types import ProviderResponse

    cache = ResponseCache(cache_path)
    cache.put("stored", {"k": 1}, ProviderResponse(texts=("from disk",)))  # outside a loop: committed at once

    async def run() -> list[str | None]:
        cache.put("pending", {"k": 2}, ProviderResponse(texts=("in memory",)))  # in a loop: committed later
        cancelled = asyncio.ensure_future(cache.lookup("stored"))
        lookups = [cache.lookup(key) for key in ("stored", "pending", "missing", "stored")]
        answers = asyncio.gather(*lookups)
        await asyncio.sleep(0)  # the lookups are waiting for the end of the turn
        cancelled.cancel()
        found = await answers
        return [answer.texts[0] if answer is not None else None for answer in found]

    assert asyncio.run(run()) == ["from disk", "in memory", None, "from disk"]
    cache.close()


def test_a_lookup_batch_left_by_a_closed_loop_does_not_hold_up_the_next_loop(cache_path: Path) -> None:
    """A loop stopped before the end of its turn (Ctrl-C) leaves its batch unanswered; a later ``asyncio.run``
    with the same cache gets its own batch, and the stale one is dropped."""
    from bedside.llm.types import ProviderResponse

    cache = ResponseCache(cache_path)
    cache.put("stored", {"k": 1}, ProviderResponse(texts=("from disk",)))
    gone = asyncio.new_event_loop()
    cache._wanted[gone] = {"stored": [gone.create_future()]}  # as a stopped loop leaves it
    gone.close()

    async def run() -> str | None:
        answer = await cache.lookup("stored")
        return answer.texts[0] if answer is not None else None

    assert asyncio.run(run()) == "from disk"
    assert gone not in cache._wanted
    cache.close()
