"""The API key is sent, and appears nowhere else: not in the cache, logs, errors or stored requests."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from bedside.llm import RetriesExhaustedError, RetryPolicy, get_model
from bedside.testing import ScriptedServer

SECRET = "sk-bedside-test-0123456789abcdef"


def test_api_key_is_used_but_never_stored_or_logged(
    cache_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("BEDSIDE_TEST_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    policy = RetryPolicy(max_retries=2, initial_delay_s=0.01)
    errors: list[str] = []
    with ScriptedServer(api_key=SECRET, faults="first=429+500,retry-after=0.01") as server:

        async def run() -> None:
            async with get_model(
                server.model_name(), cache=cache_path, api_key_env="BEDSIDE_TEST_KEY", retry=policy
            ) as model:
                await model.generate("hello")
                await model.generate("how are you")

        asyncio.run(run())
        answers = server.stats()["answers"]
        assert answers["ok"] == 2  # authorised: the key reached the server

    with ScriptedServer(faults="500=1.0") as failing:

        async def fail() -> None:
            async with get_model(
                failing.model_name(), api_key_env="BEDSIDE_TEST_KEY", retry=policy, cache=cache_path
            ) as model:
                await model.generate("x")

        with pytest.raises(RetriesExhaustedError) as info:
            asyncio.run(fail())
        errors.append(str(info.value))
        errors.append(repr(info.value.cause))

    raw = b"".join(p.read_bytes() for p in cache_path.parent.glob("cache.sqlite*"))
    assert raw
    assert SECRET.encode() not in raw
    assert "BEDSIDE_TEST_KEY" not in raw.decode("utf-8", "replace")
    assert caplog.records, "retries should have been logged"
    assert all(SECRET not in r.getMessage() for r in caplog.records)
    assert all(SECRET not in e for e in errors)
