"""Retries, backoff and typed failures, driven by the scripted server's fault injection."""

from __future__ import annotations

import asyncio
import logging
import re
import socket
from typing import Any

import pytest

from bedside.llm import ModelRequestError, RetriesExhaustedError, RetryPolicy, UsageLedger, get_model
from bedside.llm.errors import EndpointUnreachableError
from bedside.testing import ScriptedServer

FAST = RetryPolicy(max_retries=3, initial_delay_s=0.01, max_delay_s=0.05)


def test_retry_after_is_honoured(caplog: pytest.LogCaptureFixture) -> None:
    with ScriptedServer({"hi": "hello"}, faults="first=429,retry-after=1") as server:

        async def run() -> str:
            async with get_model(server.model_name(), retry=FAST) as model:
                return (await model.generate("hi")).text

        with caplog.at_level(logging.INFO, logger="bedside.llm"):
            assert asyncio.run(run()) == "hello"
        waits = [r.getMessage() for r in caplog.records if " retry " in r.getMessage()]
        assert len(waits) == 1
        assert "retry 1/3 in 1.00 s after" in waits[0]  # the computed backoff would have been <= 0.05 s
        assert server.stats()["requests"] == 2
        assert server.stats()["answers"] == {"429": 1, "ok": 1}


@pytest.mark.parametrize("fault", ["500", "malformed", "hang"])
def test_transient_faults_are_retried(fault: str) -> None:
    usage = UsageLedger()
    # Only the hung request needs the client to give up (timeout_s): the others keep the default timeout, so no
    # answer a busy machine is slow to send is taken for a fault. The retry of the hung one has 3 s too; a stall
    # longer than that would add a retry, which the counts below allow.
    timeout_s = 3.0 if fault == "hang" else None
    with ScriptedServer(faults=f"first={fault}", hang_s=60) as server:

        async def run() -> str:
            options: dict[str, Any] = {"timeout_s": timeout_s} if timeout_s else {}
            async with get_model(server.model_name(), retry=FAST, usage=usage, **options) as model:
                return (await model.generate("ping")).text

        assert asyncio.run(run()) == "ping"
        requests = server.stats()["requests"]
        if fault == "hang":
            assert 2 <= requests <= 4
        else:
            assert requests == 2
    entry = usage.snapshot()["system"]
    assert (entry.requests, entry.calls, entry.errors) == (requests, 1, 0)


def test_exhausted_retries_raise_a_typed_error_with_the_cause() -> None:
    usage = UsageLedger()
    with ScriptedServer(faults="500=1.0") as server:

        async def run() -> None:
            async with get_model(server.model_name(), retry=FAST, usage=usage) as model:
                await model.generate("ping")

        with pytest.raises(RetriesExhaustedError) as info:
            asyncio.run(run())
        assert server.stats()["requests"] == 4  # one try and three retries
    assert info.value.attempts == 4
    assert isinstance(info.value.cause, ModelRequestError)
    assert info.value.cause.status == 500
    assert "HTTP 500" in str(info.value)
    assert usage.snapshot()["system"].errors == 1


def test_too_long_retry_after_fails_at_once() -> None:
    policy = RetryPolicy(max_retries=3, max_retry_after_s=2)
    with ScriptedServer(faults="429=1.0,retry-after=60") as server:

        async def run() -> None:
            async with get_model(server.model_name(), retry=policy) as model:
                await model.generate("ping")

        with pytest.raises(RetriesExhaustedError, match="asked to wait 60 s"):
            asyncio.run(run())
        assert server.stats()["requests"] == 1


def test_client_errors_are_not_retried() -> None:
    with ScriptedServer(api_key="right") as server:

        async def run() -> None:
            async with get_model(server.model_name(), retry=FAST) as model:
                await model.generate("ping")

        with pytest.raises(ModelRequestError) as info:
            asyncio.run(run())
        assert info.value.status == 401
        assert server.stats()["requests"] == 1


def test_unreachable_endpoint_fails_at_once_naming_its_url() -> None:
    """Nothing listens on the port: retrying for half a minute cannot help (issue 35); see test_model_unreachable.
    The port is bound here and never listened on, so no other process can answer on it while the test runs."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"

        async def run() -> None:
            async with get_model(f"openai-compatible/x@{url}", retry=FAST) as model:
                await model.generate("ping")

        with pytest.raises(EndpointUnreachableError, match=f"cannot reach {re.escape(url)}"):
            asyncio.run(run())


def test_backoff_grows_and_stays_within_bounds() -> None:
    import random

    policy = RetryPolicy(initial_delay_s=1.0, max_delay_s=8.0)
    rng = random.Random(0)
    for retry, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)]:
        for _ in range(50):
            assert ceiling / 2 <= policy.delay(retry, None, rng) <= ceiling
    assert policy.delay(1, 7.5, rng) == 7.5
