"""The per-endpoint concurrency limit, observed from the server's side."""

from __future__ import annotations

import asyncio

import pytest

from bedside.llm import RetryPolicy, get_model
from bedside.llm.limiter import AdaptiveLimiter
from bedside.testing import ScriptedServer


def test_limit_is_never_exceeded() -> None:
    with ScriptedServer(latency_ms=30) as server:
        server.hold(until_in_flight=5, at_most_s=60)  # the first five wait for each other: reached however slow

        async def run() -> None:
            async with get_model(server.model_name(), max_concurrency=5) as model:
                await asyncio.gather(*(model.generate(f"q{i}") for i in range(60)))

        asyncio.run(run())
        stats = server.stats()
    assert stats["requests"] == 60
    assert stats["max_in_flight"] == 5  # reached, never passed


def test_roles_of_one_model_share_the_endpoint_limit() -> None:
    with ScriptedServer(latency_ms=30) as server:

        async def run() -> None:
            async with get_model(server.model_name(), max_concurrency=4) as model:
                judge = model.with_role("judge")
                await asyncio.gather(
                    *(model.generate(f"s{i}") for i in range(20)), *(judge.generate(f"j{i}") for i in range(20))
                )
                snapshot = model.usage.snapshot()
                assert snapshot["system"].calls == 20
                assert snapshot["judge"].calls == 20

        asyncio.run(run())
        assert server.stats()["max_in_flight"] <= 4


def test_run_under_rate_limits_completes_within_the_maximum() -> None:
    # The server's draws are one seeded sequence, so the 429s it gives before the 80th answer are a fixed number
    # (asserted below), whichever request each lands on; retries at least that many mean no request can run out,
    # however the 8 in flight are scheduled (with 8, one request drawing 9 of them failed about 1 run in 500).
    policy = RetryPolicy(max_retries=60, initial_delay_s=0.01, max_delay_s=0.05)
    with ScriptedServer(latency_ms=20, faults="429=0.3,retry-after=0.05", seed=7) as server:

        async def run() -> None:
            async with get_model(server.model_name(), max_concurrency=8, retry=policy) as model:
                await asyncio.gather(*(model.generate(f"q{i}") for i in range(80)))

        asyncio.run(run())
        stats = server.stats()
    assert stats["answers"]["ok"] == 80
    assert 0 < stats["answers"]["429"] <= policy.max_retries
    assert stats["max_in_flight"] <= 8


def test_limiter_halves_once_per_burst_then_grows_back() -> None:
    limiter = AdaptiveLimiter(8, cooldown_s=60)
    for _ in range(5):  # one burst of five 429s
        limiter.on_rate_limited()
    assert limiter.limit == 4
    for _ in range(4):
        limiter.on_success()
    assert limiter.limit == 5
    for _ in range(5 + 6 + 7 + 100):
        limiter.on_success()
    assert limiter.limit == 8  # never above the maximum


def test_waiting_acquirers_are_woken_in_order_and_cancellation_frees_nothing() -> None:
    async def run() -> list[int]:
        limiter = AdaptiveLimiter(1)
        order: list[int] = []

        async def worker(i: int) -> None:
            async with limiter:
                order.append(i)
                await asyncio.sleep(0)

        await limiter.acquire()
        tasks = [asyncio.create_task(worker(i)) for i in range(4)]
        await asyncio.sleep(0)  # one turn of the loop: every worker is now waiting in acquire(), in order
        tasks[1].cancel()
        limiter.release()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert limiter.in_flight == 0
        return order

    assert asyncio.run(run()) == [0, 2, 3]


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        AdaptiveLimiter(0)


def test_a_closed_models_cap_does_not_bind_a_later_model_of_the_same_endpoint() -> None:
    """The registry of endpoint limiters forgets an endpoint when its last open model closes. It kept the
    strictest cap forever: a scripted server given a closed one's port inherited its cap of 2 (a flaky test)."""
    from bedside.llm import limiter as registry

    with ScriptedServer() as server:

        async def cap_of(maximum: int) -> int:
            async with get_model(server.model_name(), max_concurrency=maximum) as model:
                return model.limiter.maximum

        assert asyncio.run(cap_of(2)) == 2
        assert asyncio.run(cap_of(5)) == 5  # was 2: the closed model's stricter cap
        assert not any(key[1] == server.base_url for key in registry._limiters)

        async def two_open() -> tuple[int, int]:
            async with (
                get_model(server.model_name(), max_concurrency=5) as wide,
                get_model(server.model_name(), max_concurrency=3) as narrow,
            ):
                assert wide.limiter is narrow.limiter  # one endpoint, one limit while both are open
                return wide.limiter.maximum, narrow.limiter.maximum

        assert asyncio.run(two_open()) == (3, 3)
        assert not any(key[1] == server.base_url for key in registry._limiters)
