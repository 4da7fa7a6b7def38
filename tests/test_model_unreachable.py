"""An endpoint nobody listens on fails at once, naming its URL; one that answered before and then refuses (a server
restarting) is retried like any transient failure, with a visible warning."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.llm import RetriesExhaustedError, RetryPolicy, UsageLedger, get_model
from bedside.llm.errors import EndpointUnreachableError
from bedside.runs import Store
from bedside.testing import ScriptedServer

FAST = RetryPolicy(max_retries=3, initial_delay_s=0.01, max_delay_s=0.05)


_HELD: list[socket.socket] = []
"""Sockets bound and never listening, kept for the session: Linux refuses connections to such a port, and no
other process can start listening on it meanwhile (a released port could be taken)."""


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on, and nothing can while the tests run."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    _HELD.append(probe)
    return int(probe.getsockname()[1])


def test_a_closed_port_fails_the_first_call_without_retrying_and_names_the_url() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    usage = UsageLedger()

    async def call() -> None:
        async with get_model(f"openai-compatible/mine@{url}", usage=usage, retry=FAST) as model:
            await model.generate("ping")

    with pytest.raises(EndpointUnreachableError) as info:
        asyncio.run(call())
    assert url in str(info.value)
    assert "connection refused" in str(info.value)
    assert usage.snapshot()["system"].requests == 1  # no retry


def test_an_endpoint_that_answered_before_is_retried_when_it_refuses(caplog: pytest.LogCaptureFixture) -> None:
    usage = UsageLedger()

    async def call(server: ScriptedServer) -> None:
        async with get_model(server.model_name(), usage=usage, retry=FAST) as model:
            assert (await model.generate("ping")).text == "ping"
            server.stop()  # the server goes away mid-run
            await model.generate("pong")

    server = ScriptedServer().start()
    with caplog.at_level(logging.WARNING, logger="bedside.llm"), pytest.raises(RetriesExhaustedError) as info:
        asyncio.run(call(server))
    assert isinstance(info.value.cause, EndpointUnreachableError)
    assert usage.snapshot()["system"].requests == 1 + 4  # the answer, then one try and three retries
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    # One warning per kind of failure (the kept-alive connection dropping, then the refusals), not one per retry.
    assert len(warnings) < 4, warnings
    assert sum("cannot reach" in w for w in warnings) == 1, warnings


def test_a_run_against_a_closed_port_stops_at_once_naming_the_url_and_stores_no_errors(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    store = tmp_path / "store.sqlite"
    config = {
        "name": "unreachable",
        "task": "drafting",
        "datasets": {"demo": {"limit": 3}},
        "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},
        "models": {"system": f"openai-compatible/mine@{url}"},
        "scorers": ["words"],
        "store": str(store),
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "--no-cache"])
    assert result.exit_code == 1
    said = " ".join(result.stderr.split())
    assert f"cannot reach {url}/chat/completions (connection refused" in said, said
    opened = Store(str(store))
    try:
        (run,) = opened.runs()
        assert run["status"] == "failed"
        assert opened.results(run["id"]) == []  # nothing stored as an error: the same command resumes
    finally:
        opened.close()
