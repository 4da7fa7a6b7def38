"""A sample's call timeline: the runner stores every model call of a sample (role, start/end, tokens, cache hit,
error) and the sample page lists them. Runs against the scripted server, so the calls are real HTTP calls."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient

from bedside.runs import Store, execute, load_config
from bedside.testing import ScriptedServer
from bedside.web import browse
from bedside.web.app import create_app
from web_support import add_accounts, login


def _config(tmp_path: Path, server: ScriptedServer, **changes: Any) -> Path:
    config: dict[str, Any] = {
        "name": "talk",
        "task": "runs_multiturn_task:TASK",
        "datasets": {"toy": {}},
        "systems": {"talk": {"type": "talk", "options": {"stages": 2}}},
        "models": {"system": server.model_name("clinician"), "patient": server.model_name("patient")},
        "scorers": None,
        "concurrency": 2,
        "store": str(tmp_path / "store.sqlite"),
        "cache": str(tmp_path / "cache.sqlite"),
    }
    config.update(changes)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_every_call_of_a_sample_is_stored_in_order_with_tokens_and_cache_hits(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        config = load_config(_config(tmp_path, server))
        asyncio.run(execute(config))
        sent = server.stats()["requests"]
        # the same run into a second store with the same cache: every call is a cache hit, and says so
        again = load_config(_config(tmp_path, server, store=str(tmp_path / "second.sqlite")))
        asyncio.run(execute(again))
        assert server.stats()["requests"] == sent
    store = Store(config.store)
    first = store.results(config.run_id)
    store.close()
    store = Store(again.store)
    second = store.results(again.run_id)
    store.close()
    assert sent == 4 * 2 * 2  # 4 conversations x 2 stages x (clinician + patient)
    row = first[0]
    assert row.calls is not None
    assert [c["role"] for c in row.calls] == ["system", "patient"] * 2  # the turns, in order
    assert all(c["end_s"] >= c["start_s"] >= 0 for c in row.calls)
    assert all(a["end_s"] <= b["start_s"] for a, b in zip(row.calls, row.calls[1:], strict=False))  # one at a time
    assert all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0 and not c["cached"] for c in row.calls)
    assert (
        sum(c["completion_tokens"] for c in row.calls if c["role"] == "system")
        == row.usage["system"]["completion_tokens"]
    )
    replayed = second[0].calls
    assert replayed is not None
    assert [c["role"] for c in replayed] == ["system", "patient"] * 2
    assert all(c["cached"] and c["prompt_tokens"] == 0 and c["completion_tokens"] == 0 for c in replayed)


def test_a_failed_call_is_in_the_timeline_with_its_error(tmp_path: Path) -> None:
    with ScriptedServer(faults="500=1.0") as server:
        config = load_config(
            _config(tmp_path, server, model_options={"system": {"max_retries": 1}, "patient": {"max_retries": 1}})
        )
        asyncio.run(execute(config))
    store = Store(config.store)
    rows = store.results(config.run_id)
    store.close()
    assert all(r.status == "error" for r in rows)
    calls = rows[0].calls
    assert calls is not None
    assert len(calls) == 1
    assert calls[0]["role"] == "system"
    assert "RetriesExhaustedError" in calls[0]["error"]
    assert calls[0]["attempts"] == 2


def test_the_sample_page_lists_the_calls(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        config = load_config(_config(tmp_path, server))
        asyncio.run(execute(config))
    store = Store(config.store)
    add_accounts(store)
    row = store.results(config.run_id)[0]
    client = TestClient(create_app(store))
    assert login(client, "admin").status_code == 303
    page = client.get(
        f"/runs/{config.run_id}/sample", params={"cell": row.cell, "sample": row.sample_id, "epoch": row.epoch}
    )
    assert page.status_code == 200
    assert "4 model calls" in page.text
    assert page.text.count('<tr class="call') == 4
    assert page.text.count('<rect class="call-bar') == 4
    from page_text import element_texts

    sent = element_texts(page.text, "table.timeline-calls td.sent")
    assert len(sent) == 4
    assert all(text == ", ".join(f"{k} {v}" for k, v in sorted(call["sent"].items())) for text, call in
               zip(sent, row.calls or [], strict=True))  # fmt: skip
    assert all(call["sent"] for call in row.calls or [])  # each call says what it sent
    laid_out = browse.timeline(row)
    assert laid_out.calls[0]["x"] == 0.0
    assert laid_out.calls[-1]["x"] + laid_out.calls[-1]["w"] >= 999
    store.close()


def test_a_row_from_before_timelines_says_so() -> None:
    from bedside.runs.store import ResultRow

    old = ResultRow("r", "c", "s", 0, "d", "sys", "m", "k", "ok", None, {"text": "x"}, {}, {}, {}, {})
    assert browse.timeline(old).note.startswith("No call timeline")
