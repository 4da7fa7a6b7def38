"""Run dashboards off the event loop: drawn in a worker process, cached per run and store version, and never
holding another request while they are drawn."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

import httpx
from fastapi.testclient import TestClient

from bedside.runs.store import Store
from bedside.web.app import create_app
from bedside.web.dashboards import Dashboards, dashboard_of
from web_support import PASSWORD, add_accounts, csrf_of, fill_run, login


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = Store(str(tmp_path / "store.sqlite"))
    fill_run(opened, "alpha-111", 120)
    add_accounts(opened)
    yield opened
    opened.close()


def test_a_finished_runs_dashboard_is_drawn_once_and_redrawn_when_the_run_changes(store: Store) -> None:
    with TestClient(create_app(store)) as client:
        assert login(client, "admin").status_code == 303
        dashboards: Dashboards = client.app.state.dashboards  # type: ignore[attr-defined]
        first = client.get("/runs/alpha-111")
        assert first.status_code == 200
        assert "Results by cell" in first.text
        assert "data:image/png;base64," in first.text  # the plots came back from the worker process
        assert client.get("/runs/alpha-111").text.count("data:image/png") == first.text.count("data:image/png")
        assert dashboards.computed == 1  # the second view came from the cache
        run = next(r for r in store.runs() if r["id"] == "alpha-111")
        drawn = dashboards.cached(run)
        assert drawn is not None
        assert [metric for metric, _ in drawn.images] == ["bleu", "judge"]
        for m in drawn.report.cells[0].metrics:
            assert f"{m.mean:.3f}" in first.text
        fill_run(store, "alpha-111", 160)  # the store version changes: more samples, a later update
        again = client.get("/runs/alpha-111")
        assert dashboards.computed == 2
        assert again.status_code == 200
        grown = dashboards.cached(next(r for r in store.runs() if r["id"] == "alpha-111"))
        assert grown is not None
        assert sum(c.samples for c in grown.report.cells) == 160


def test_no_request_waits_on_a_dashboard_being_drawn(store: Store) -> None:
    """While a dashboard's computation is held open, other pages (and other runs' cached dashboards) answer;
    two clients asking for the same dashboard share one computation."""
    app = create_app(store)
    dashboards: Dashboards = app.state.dashboards
    held: concurrent.futures.Future[Any] = concurrent.futures.Future()
    submitted: list[str] = []
    asked = asyncio.Event()

    def submit(run_id: str) -> concurrent.futures.Future[Any]:
        submitted.append(run_id)
        asked.set()
        return held

    dashboards._submit = submit  # type: ignore[method-assign]

    async def walk() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            page = await client.get("/login")
            done = await client.post("/login", data={"name": "admin", "password": PASSWORD, "csrf": csrf_of(page.text)})
            assert done.status_code == 303
            one = asyncio.ensure_future(client.get("/runs/alpha-111"))
            two = asyncio.ensure_future(client.get("/runs/alpha-111"))
            await asked.wait()
            for _ in range(3):
                assert (await client.get("/")).status_code == 200
                listed = await client.get("/runs/alpha-111/samples")
                assert listed.status_code == 200
            assert not one.done()
            assert not two.done()
            held.set_result(dashboard_of(store, "alpha-111"))
            pages = await asyncio.gather(one, two)
            assert all(p.status_code == 200 and "Results by cell" in p.text for p in pages)
            assert submitted == ["alpha-111"]
            assert dashboards.computed == 1

    asyncio.run(walk())


def test_a_failed_drawing_is_not_cached(store: Store) -> None:
    app = create_app(store)
    dashboards: Dashboards = app.state.dashboards
    calls: list[str] = []

    def submit(run_id: str) -> concurrent.futures.Future[Any]:
        calls.append(run_id)
        failed: concurrent.futures.Future[Any] = concurrent.futures.Future()
        failed.set_exception(RuntimeError("worker died"))
        return failed

    dashboards._submit = submit  # type: ignore[method-assign]
    run = next(r for r in store.runs() if r["id"] == "alpha-111")

    async def twice() -> None:
        for _ in range(2):
            with pytest.raises(RuntimeError):
                await dashboards.get(run)

    asyncio.run(twice())
    assert calls == ["alpha-111", "alpha-111"]
    assert dashboards.cached(run) is None


@pytest.mark.skipif(not hasattr(os, "nice"), reason="CPU priority (nice) is POSIX only")
def test_dashboard_workers_run_at_a_lower_cpu_priority(store: Store) -> None:
    """On a machine with fewer free cores than busy processes, the pages people wait on get the CPU first."""
    from bedside.web.dashboards import WORKER_NICENESS

    dashboards = Dashboards(store)
    try:
        dashboards._submit("alpha-111").result()
        executor = dashboards._executor
        assert executor is not None
        assert executor.submit(os.nice, 0).result() == min(19, os.nice(0) + WORKER_NICENESS)
    finally:
        dashboards.close()
