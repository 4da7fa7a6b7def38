"""Several base URLs for one model: balanced by least requests in flight, each replica under its own cap."""

from __future__ import annotations

import asyncio
import time

import pytest

from bedside.llm import ModelConfigError, get_model, parse_model_spec
from bedside.llm.pool import PooledProvider
from bedside.testing import ScriptedServer


def test_base_urls_in_the_string_form_and_the_config() -> None:
    config = parse_model_spec("openai-compatible/m@http://127.0.0.1:1/v1,http://127.0.0.1:2/v1")
    assert config.base_urls == ("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1")
    assert config.base_url is None
    assert config.name == "openai-compatible/m@http://127.0.0.1:1/v1,http://127.0.0.1:2/v1"
    same = parse_model_spec("openai-compatible/m@http://127.0.0.1:1/v1", base_urls=["http://127.0.0.1:1/v1"])
    assert same.base_urls == ("http://127.0.0.1:1/v1",)
    with pytest.raises(ModelConfigError, match="not one of base_urls"):
        parse_model_spec("openai-compatible/m@http://127.0.0.1:3/v1", base_urls=["http://127.0.0.1:1/v1"])
    with pytest.raises(ModelConfigError, match="http"):
        parse_model_spec({"provider": "openai-compatible", "model": "m", "base_urls": ["ftp://x"]})


def test_two_replicas_share_the_load_and_each_cap_holds() -> None:
    with ScriptedServer(latency_ms=50) as a, ScriptedServer(latency_ms=50) as b:
        spec = f"openai-compatible/scripted@{a.base_url},{b.base_url}"
        for replica in (a, b):  # each cap is reached however slow the machine: the gate opens at 6 in flight
            replica.hold(until_in_flight=6, at_most_s=60)

        async def run() -> PooledProvider:
            model = get_model(spec, max_concurrency=40, replica_max_concurrency=6)
            async with model:
                texts = await asyncio.gather(*(model.generate(f"question {i}") for i in range(120)))
            assert [t.text for t in texts] == [f"question {i}" for i in range(120)]
            provider = model._endpoint.provider
            assert isinstance(provider, PooledProvider)
            return provider

        pool = asyncio.run(run())
        stats_a, stats_b = a.stats(), b.stats()
    assert stats_a["requests"] + stats_b["requests"] == 120
    assert pool.sent == [stats_a["requests"], stats_b["requests"]]
    assert stats_a["max_in_flight"] == 6  # the per-replica cap, reached and never passed
    assert stats_b["max_in_flight"] == 6
    # both share the load (a picker that favoured one would leave the other near 0); how evenly depends on how
    # each server's thread is scheduled, so the bound is loose
    assert min(stats_a["requests"], stats_b["requests"]) >= 30


def test_least_in_flight_sends_more_to_the_faster_replica() -> None:
    """The slow replica holds every request it gets (it never answers until released), so its requests in flight
    only grow: least-in-flight then sends it a request only while the fast one has as many in flight, which with 4
    slots caps it at 3 while the fast one answers the rest. Decided by the server's gate, not by latencies a loaded
    machine would blur (a round-robin picker would stall here with half the requests held)."""
    with ScriptedServer() as fast, ScriptedServer() as slow:
        spec = f"openai-compatible/scripted@{slow.base_url},{fast.base_url}"
        slow.hold(at_most_s=300)

        def all_answered_or_held() -> None:
            deadline = time.monotonic() + 300  # only a hang guard: the loop ends on the counts
            while fast.stats()["requests"] + slow.stats()["held"] < 80:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"fast {fast.stats()}, slow {slow.stats()}")
                time.sleep(0.01)

        async def run() -> None:
            async with get_model(spec, max_concurrency=4) as model:
                calls = asyncio.gather(*(model.generate(f"q{i}") for i in range(80)))
                await asyncio.to_thread(all_answered_or_held)
                held = slow.stats()["held"]
                slow.release()
                await calls
            assert 1 <= held <= 3

        asyncio.run(run())
        assert slow.stats()["requests"] <= 3
        assert fast.stats()["requests"] >= 77
        assert fast.stats()["requests"] + slow.stats()["requests"] == 80


def test_the_cache_key_does_not_depend_on_the_replica(cache_path: object) -> None:
    with ScriptedServer() as a, ScriptedServer() as b:
        spec = f"openai-compatible/scripted@{a.base_url},{b.base_url}"

        async def run() -> list[bool]:
            async with get_model(spec, cache=cache_path) as model:  # type: ignore[arg-type]
                first = await model.generate("same")
                second = await model.generate("same")
            return [first.cached, second.cached]

        assert asyncio.run(run()) == [False, True]
        assert a.stats()["requests"] + b.stats()["requests"] == 1


def test_a_rate_limited_replica_backs_off_and_the_retry_goes_elsewhere() -> None:
    with ScriptedServer(faults="429=1.0,retry-after=0") as limited, ScriptedServer(latency_ms=5) as healthy:
        spec = f"openai-compatible/scripted@{limited.base_url},{healthy.base_url}"

        async def run() -> tuple[list[str], PooledProvider]:
            model = get_model(spec, max_concurrency=8, max_retries=6)
            async with model:
                done = await asyncio.gather(*(model.generate(f"q{i}") for i in range(20)))
            provider = model._endpoint.provider
            assert isinstance(provider, PooledProvider)
            return [c.text for c in done], provider

        texts, pool = asyncio.run(run())
        assert texts == [f"q{i}" for i in range(20)]
        assert pool.limiters[0].limit < 8  # the 429s halved the rate-limited replica's limit
        assert healthy.stats()["requests"] == 20
