"""Failures are never scores: empty and cut-off answers, leaked keys, a second live run, unwritable storage."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.errors import StorageError
from bedside.llm import EmptyAnswerError, GenerationSettings, ResponseCache, get_model
from bedside.llm.retry import RetryPolicy
from bedside.runs import Store, execute, load_config
from bedside.runs.store import RunLockedError
from bedside.testing import ScriptedServer

runner = CliRunner()
FAST = RetryPolicy(max_retries=1, initial_delay_s=0.01)


def config_file(folder: Path, server: ScriptedServer, **changes: Any) -> Path:
    config: dict[str, Any] = {
        "name": "failures",
        "task": "drafting",
        "datasets": {"demo": {"limit": 4}},
        "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},
        "models": {"system": [server.model_name()]},
        "scorers": ["words"],
        "concurrency": 2,
        "store": str(folder / "store.sqlite"),
    }
    config.update(changes)
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- empty and cut-off answers


@pytest.mark.parametrize(("fault", "shown"), [("null", "content: null, finish_reason: length"), ("empty", "empty")])
def test_an_answer_without_text_is_an_error_and_is_not_cached(tmp_path: Path, fault: str, shown: str) -> None:
    cache = tmp_path / "cache.sqlite"
    with ScriptedServer(faults=f"{fault}=1.0") as server:

        async def ask() -> None:
            async with get_model(server.model_name(), cache=cache, retry=FAST) as model:
                try:
                    await model.generate("What should I watch for after discharge?")
                finally:
                    usage = model.usage.snapshot()["system"]
                    assert (usage.calls, usage.errors, usage.requests) == (0, 1, 1)  # not retried as is
                    assert usage.prompt_tokens > 0  # paid for, so counted

        with pytest.raises(EmptyAnswerError, match=shown) as info:
            asyncio.run(ask())
    assert "no text" in str(info.value)
    assert len(ResponseCache(cache)) == 0


def test_an_empty_answer_is_asked_once_more_with_more_tokens_where_configured(tmp_path: Path) -> None:
    with ScriptedServer({"rules": [], "default": "Rest and drink fluids."}, faults="first=null") as server:

        async def ask() -> str:
            async with get_model(
                server.model_name(), cache=tmp_path / "c.sqlite", empty_retry_max_tokens=2048
            ) as model:
                completion = await model.generate("fever?", GenerationSettings(max_tokens=64))
                assert model.usage.snapshot()["system"].errors == 0  # recovered, so not a failure
                return completion.text

        assert asyncio.run(ask()) == "Rest and drink fluids."
        assert [body.get("max_tokens") for body in server.recent] == [64, 2048]


def test_a_cut_off_answer_is_kept_and_counted_as_truncated(tmp_path: Path) -> None:
    reply = "Take one tablet twice a day with food and call the clinic if the rash spreads."
    with ScriptedServer({"rules": [], "default": reply}, faults="length=1.0") as server:

        async def ask() -> tuple[str, str | None, int]:
            async with get_model(server.model_name(), cache=tmp_path / "c.sqlite") as model:
                first = await model.generate("dose?")
                again = await model.generate("dose?")  # from the cache, still marked
                return first.text, again.finish_reason, model.usage.snapshot()["system"].truncated

        text, reason, truncated = asyncio.run(ask())
    assert reply.startswith(text)
    assert text != reply
    assert (reason, truncated) == ("length", 2)


# ----------------------------------------------------------------------------- keys never leak


SECRET = "sk-live-" + "0123456789abcdefghijklmnopqrstuvwxyz" * 9  # long: a cut at 300 characters falls inside it


def _pieces(secret: str, size: int = 8) -> list[str]:
    return [secret[i : i + size] for i in range(8, len(secret) - size)]  # skip the generic "sk-live-" start


def test_a_key_echoed_in_error_and_answer_bodies_is_masked_before_any_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("BEDSIDE_LEAK_KEY", SECRET)
    caplog.set_level(logging.DEBUG, logger="bedside")
    texts: list[str] = []
    for faults, api_key in (("500=1.0", None), (None, "another-key"), (None, None)):
        # 5xx (retried, then given up), 4xx (wrong key: at once), 200 (the answer itself echoes the headers)
        with ScriptedServer(echo_headers=True, faults=faults, api_key=api_key) as server:

            async def ask(server: ScriptedServer = server) -> None:
                async with get_model(
                    server.model_name(), api_key_env="BEDSIDE_LEAK_KEY", retry=FAST, cache=tmp_path / "c.sqlite"
                ) as model:
                    texts.append((await model.generate("hello")).text)

            try:
                asyncio.run(ask())
            except Exception as exc:  # every failure's text is what is checked
                texts.append(str(exc))
                texts.append(str(getattr(exc, "cause", "")))
    assert any("Authorization: Bearer ***" in t for t in texts)  # the echo happened, masked
    assert any("HTTP 500" in t for t in texts)
    assert any("HTTP 401" in t for t in texts)
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("c.sqlite*")).decode("utf-8", "replace")
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for piece in _pieces(SECRET):
        assert all(piece not in t for t in texts)
        assert piece not in stored
        assert piece not in logged


def test_a_run_against_a_header_echoing_endpoint_stores_shows_and_exports_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BEDSIDE_LEAK_KEY", SECRET)
    with ScriptedServer(echo_headers=True, faults="500=0.5", seed=3) as server:
        path = config_file(
            tmp_path,
            server,
            datasets={"demo": {"limit": 6}},
            model_options={"system": {"api_key_env": "BEDSIDE_LEAK_KEY", "max_retries": 0}},
        )
        done = runner.invoke(app, ["-v", "run", str(path), "--cache", str(tmp_path / "cache.sqlite")])
        assert done.exit_code == 1  # some samples failed with the echoing 500
    config = load_config(path)
    store = Store(config.store)
    rows = store.results(config.run_id)
    store.close()
    assert {r.status for r in rows} == {"ok", "error"}
    failed = next(r for r in rows if r.status == "error")
    shown = runner.invoke(app, ["show", config.run_id, failed.sample_id, "--store", config.store])
    exported = runner.invoke(app, ["export", config.run_id, "--store", config.store])
    assert "Bearer ***" in shown.output + exported.output
    on_disk = b"".join(f.read_bytes() for f in tmp_path.glob("*.sqlite*")).decode("utf-8", "replace")
    for piece in _pieces(SECRET):
        for text in (done.output, shown.output, exported.output, on_disk):
            assert piece not in text


# ----------------------------------------------------------------------------- runs: one at a time


def test_a_second_live_run_of_the_same_config_is_refused(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        server.hold()  # the first run's first request waits: it stays live for as long as the test needs
        path = config_file(tmp_path, server, datasets={"demo": {"limit": 8}}, concurrency=1)
        started = subprocess.Popen(
            [sys.executable, "-m", "bedside.cli", "run", str(path), "--no-cache"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            config = load_config(path)
            server.wait_until(lambda stats: stats["held"] == 1)  # the first run holds its lock once it sends
            second = runner.invoke(app, ["run", str(path), "--no-cache"])
            assert second.exit_code == 1
            assert "already running" in second.output
            assert f"pid {started.pid}" in second.output
        finally:
            started.send_signal(signal.SIGKILL)
            started.wait()
            server.release()
        # Killed, its lock is abandoned (its pid is gone): the next run takes it over at once and finishes.
        resumed = runner.invoke(app, ["run", str(path), "--no-cache"])
        assert resumed.exit_code == 0, resumed.output
        store = Store(config.store)
        assert len(store.results(config.run_id)) == 8
        store.close()


def test_two_runs_started_together_on_a_fresh_store_send_each_request_once(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        # Whichever run takes the lock waits at its first requests until the other has been refused, so the
        # winner cannot finish before the loser starts, however slowly the second process starts.
        server.hold()
        path = config_file(tmp_path, server, datasets={"demo": {"limit": 6}})
        both = [
            subprocess.Popen(
                [sys.executable, "-m", "bedside.cli", "run", str(path), "--no-cache"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        try:
            deadline = time.monotonic() + 300  # a hang guard only
            while all(p.poll() is None for p in both):
                assert server.stats()["held"] <= 2, "both runs got past the lock and sent requests"
                assert time.monotonic() < deadline, "neither run ended while the other waited"
                time.sleep(0.05)
        finally:
            server.release()
        outputs = [p.communicate(timeout=300) for p in both]
        codes = sorted(p.returncode for p in both)
        assert codes == [0, 1], outputs
        refused = next(err for p, (_, err) in zip(both, outputs, strict=True) if p.returncode == 1)
        assert "already running" in refused
        assert "Traceback" not in "".join(out + err for out, err in outputs)
        assert server.stats()["requests"] == 6


# ----------------------------------------------------------------------------- concurrency


def test_the_runs_concurrency_is_the_default_endpoint_cap(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        server.hold(until_in_flight=17, at_most_s=60)  # 17 must be in flight together for the gate to open
        path = config_file(tmp_path, server, datasets={"demo": {"limit": 14}}, concurrency=28)
        config = load_config(path)
        config = config.model_copy(update={"models": {"system": [server.model_name("a"), server.model_name("b")]}})
        summary = asyncio.run(execute(config, cache=False))
        assert summary.errors == 0
        assert server.stats()["max_in_flight"] > 16  # the provider's default no longer caps it silently
        assert set(summary.endpoint_caps.values()) == {28}

        capped = config.model_copy(
            update={"model_options": {"system": {"max_concurrency": 4}}, "store": str(tmp_path / "capped.sqlite")}
        )
        summary = asyncio.run(execute(capped, cache=False))
        assert set(summary.endpoint_caps.values()) == {4}


def test_a_cap_below_the_runs_concurrency_is_said_at_start(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        path = config_file(tmp_path, server, concurrency=8, model_options={"system": {"max_concurrency": 2}})
        done = runner.invoke(app, ["run", str(path), "--no-cache"])
    assert done.exit_code == 0, done.output
    assert "takes at most 2 requests at once" in " ".join(done.output.split())


# ----------------------------------------------------------------------------- storage


def test_an_unwritable_store_or_cache_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    with ScriptedServer() as server:
        path = config_file(tmp_path, server, store=str(blocker / "store.sqlite"))
        done = runner.invoke(app, ["run", str(path), "--no-cache"])
        assert done.exit_code == 1
        assert "cannot create the store's folder" in done.output
        assert "Traceback" not in done.output

        path = config_file(tmp_path, server)
        done = runner.invoke(app, ["run", str(path), "--cache", str(blocker / "cache.sqlite")])
        assert done.exit_code == 1
        assert "cannot open the response cache" in done.output
    with pytest.raises(StorageError, match="cannot open the store"):
        Store(str(tmp_path))  # a folder where the database file should be


def test_a_full_disk_stops_the_run_keeps_what_was_stored_and_resumes(tmp_path: Path) -> None:
    """SQLite's page limit makes the store's file full for real: inserts fail with SQLITE_FULL."""
    from sqlalchemy import event

    with ScriptedServer(latency_ms=20) as server:
        config = load_config(config_file(tmp_path, server, datasets={"demo": {"limit": 14}}, concurrency=1))
        store = Store(config.store)
        with store.engine.connect() as db:
            pages = db.exec_driver_sql("PRAGMA page_count").scalar()
        limit = int(pages or 0) + 6

        @event.listens_for(store.engine, "connect")
        def full_soon(connection: Any, _: Any) -> None:
            connection.execute(f"PRAGMA max_page_count={limit}")

        store.engine.dispose()  # new connections get the limit
        with pytest.raises(StorageError, match=r"full.*could not be stored and will be run again on resume"):
            asyncio.run(execute(config, store=store, cache=tmp_path / "cache.sqlite"))
        kept = len(store.results(config.run_id))
        store.close()
        assert 0 < kept < 14
        sent = server.stats()["requests"]
        summary = asyncio.run(execute(config, cache=tmp_path / "cache.sqlite"))  # space again
        assert summary.ran + summary.reused == 14 - kept
        assert server.stats()["requests"] - sent <= 14 - kept  # cached answers cost nothing
        assert summary.errors == 0


POSTGRES_URL = os.environ.get("BEDSIDE_TEST_POSTGRES_URL")


@pytest.mark.skipif(
    not POSTGRES_URL,
    reason="set BEDSIDE_TEST_POSTGRES_URL (postgresql+psycopg://user@127.0.0.1/db) to test run locks on PostgreSQL",
)
def test_run_locks_hold_on_postgresql() -> None:
    assert POSTGRES_URL is not None
    run_id = f"lock-test-{os.getpid()}-{time.time_ns()}"
    store, other = Store(POSTGRES_URL), Store(POSTGRES_URL)  # two connections, as two processes would hold
    try:
        lock = store.lock_run(run_id)
        with pytest.raises(RunLockedError, match=f"run {run_id} is already running"):
            other.lock_run(run_id)
        store.unlock_run(lock)
        other.unlock_run(other.lock_run(run_id))
    finally:
        store.close()
        other.close()
