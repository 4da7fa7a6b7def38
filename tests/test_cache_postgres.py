"""The response cache on PostgreSQL, over a real connection (BEDSIDE_TEST_POSTGRES_URL), and open_cache's choice."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bedside.errors import StorageError
from bedside.llm import ResponseCache, RetriesExhaustedError, UsageLedger, get_model
from bedside.llm.cache_postgres import PostgresResponseCache, is_postgres_url, open_cache
from bedside.llm.scope import call_scope
from bedside.llm.types import ProviderResponse
from bedside.testing import ScriptedServer

POSTGRES_URL = os.environ.get("BEDSIDE_TEST_POSTGRES_URL")
needs_postgres = pytest.mark.skipif(
    not POSTGRES_URL,
    reason="set BEDSIDE_TEST_POSTGRES_URL (postgresql+psycopg://user@127.0.0.1/db) to test the cache on PostgreSQL",
)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """The test server's URL naming a table of this test's own, dropped afterwards."""
    assert POSTGRES_URL is not None
    table = f"bedside_test_cache_{uuid.uuid4().hex[:12]}"
    url = f"{POSTGRES_URL}{'&' if '?' in POSTGRES_URL else '?'}table={table}"
    yield url
    PostgresResponseCache(url).drop()


def test_open_cache_picks_the_backend(tmp_path: Path) -> None:
    assert is_postgres_url("postgresql+psycopg://u@127.0.0.1/db")
    assert is_postgres_url("postgres://u@127.0.0.1/db")
    assert not is_postgres_url(str(tmp_path / "c.sqlite"))
    sqlite = open_cache(tmp_path / "c.sqlite")
    assert type(sqlite) is ResponseCache
    assert type(open_cache(f"sqlite:///{tmp_path / 'd.sqlite'}")) is ResponseCache
    with pytest.raises(StorageError, match="unsupported"):
        open_cache("redis://127.0.0.1/0")
    with pytest.raises(StorageError, match="identifier"):
        PostgresResponseCache("postgresql://u@127.0.0.1/db", table="x; DROP TABLE y")


def test_an_unreachable_server_is_a_storage_error() -> None:
    with pytest.raises(StorageError, match="cannot open the response cache"):
        PostgresResponseCache("postgresql://nobody:secret@127.0.0.1:1/none")


@needs_postgres
def test_put_get_and_a_second_connection_sees_it(pg_url: str) -> None:
    first, second = open_cache(pg_url), open_cache(pg_url)  # two connections, as two workers hold
    assert isinstance(first, PostgresResponseCache)
    answer = ProviderResponse(texts=("hello",), finish_reason="stop")
    first.put("k1", {"messages": []}, answer)  # outside a loop: committed at once
    assert second.get("k1") == answer
    assert second.get("missing") is None
    first.put("k1", {"messages": []}, ProviderResponse(texts=("again",)))  # an upsert, as a retried key does
    again = second.get("k1")
    assert again is not None
    assert list(again.texts) == ["again"]
    assert len(second) == 1
    first.close()
    second.close()


@needs_postgres
def test_model_over_postgres_hits_errors_and_bypass(pg_url: str) -> None:
    usage = UsageLedger()
    with ScriptedServer({"knee": "Ice it."}, faults="first=500") as server:

        async def run() -> None:
            # 1. the first request fails (500, no retries): nothing is cached
            async with get_model(server.model_name(), cache=pg_url, usage=usage, max_retries=0) as model:
                with pytest.raises(RetriesExhaustedError):
                    await model.generate("my knee")
            # 2. a fresh model (fresh connection) asks again and caches the answer
            async with get_model(server.model_name(), cache=pg_url, usage=usage) as model:
                fresh = await model.generate("my knee")
                assert not fresh.cached
            # 3. another fresh model gets it from PostgreSQL
            async with get_model(server.model_name(), cache=pg_url, usage=usage) as model:
                hit = await model.generate("my knee")
                assert hit.cached
                assert hit.text == "Ice it."
                # 4. a retry's bypass key is asked again once, then served from the cache
                with call_scope([hit.cache_key]):
                    again = await model.generate("my knee")
                    assert not again.cached
                    assert (await model.generate("my knee")).cached

        asyncio.run(run())
        assert server.stats()["requests"] == 3  # the 500, the first answer, the bypassed one
    cache = PostgresResponseCache(pg_url)
    assert len(cache) == 1
    cache.close()


@needs_postgres
def test_batched_writes_inside_a_loop_are_served_before_commit(pg_url: str) -> None:
    cache = PostgresResponseCache(pg_url)
    other = PostgresResponseCache(pg_url)

    async def run() -> None:
        for i in range(300):  # crosses the 256-answer batch: one flush on the way
            cache.put(f"k{i}", {}, ProviderResponse(texts=(str(i),)))
        assert cache.get("k299") is not None  # pending, served from memory
        await asyncio.sleep(0.2)  # timers fire in deadline order: the flush due 50 ms after the puts has run
        assert other.get("k299") is not None

    asyncio.run(run())
    assert len(other) == 300
    cache.close()
    other.close()
