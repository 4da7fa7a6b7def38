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
