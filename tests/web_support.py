"""Shared helpers for the web tests and the viewer benchmark: a filled store, accounts, a logged-in client."""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bedside.runs.store import ResultRow, Store

PASSWORD = "correct horse battery"
POSTGRES_URL = os.environ.get("BEDSIDE_TEST_POSTGRES_URL")
BACKENDS = [
    "sqlite",
    pytest.param(
        "postgres",
        marks=pytest.mark.skipif(not POSTGRES_URL, reason="set BEDSIDE_TEST_POSTGRES_URL to run on PostgreSQL"),
    ),
]
"""The store backends the web tests run on (PostgreSQL where BEDSIDE_TEST_POSTGRES_URL is set)."""

CELLS = [
    ("demo", "zero_shot", "scripted/a"),
    ("demo", "zero_shot", "scripted/b"),
    ("demo", "rag", "scripted/a"),
    ("demo", "rag", "scripted/b"),
]


def cell_id(dataset: str, system: str, model: str) -> str:
    return f"{dataset}|{system}|{model}"


def fill_run(
    store: Store,
    run_id: str,
    samples: int,
    *,
    task: str = "drafting",
    cells: list[tuple[str, str, str]] = CELLS,
    error_every: int = 97,
    batch: int = 5000,
) -> int:
    """A run with ``samples`` stored samples spread over ``cells`` (some errors, strata, scores, usage)."""
    store.begin_run(run_id, run_id.split("-")[0], task, {"seed": 0, "scorers": ["bleu", "judge"]})
    rows: list[ResultRow] = []
    written = 0
    per_cell = max(1, samples // len(cells))
    for c, (dataset, system, model) in enumerate(cells):
        for i in range(per_cell):
            if written + len(rows) >= samples:
                break
            sample_id = f"s{i:06d}"
            error = (i + c) % error_every == 0
            scores: dict[str, float | None] = (
                {} if error else {"bleu": ((i * 7 + c * 13) % 100) / 1.0, "judge": float((i + c) % 5 + 1)}
            )
            rows.append(
                ResultRow(
                    run_id=run_id,
                    cell=cell_id(dataset, system, model),
                    sample_id=sample_id,
                    epoch=0,
                    dataset=dataset,
                    system=system,
                    model=model,
                    key=uuid.uuid4().hex,
                    status="error" if error else "ok",
                    error="RetriesExhaustedError: 429 after 6 attempts" if error else None,
                    output=None
                    if error
                    else {
                        "text": f"Draft reply {i} from {system}: please keep taking your medicine and call us.",
                        "transcript": None,
                        "trace": None,
                        "prompts": [[{"role": "user", "content": f"Reply to message {i}."}]],
                        "extra": {"judgements": {"judge": {"score": scores.get("judge"), "reasoning": "clear"}}},
                    },
                    scores=scores,
                    usage={
                        "system": {
                            "calls": 1,
                            "cache_hits": 0,
                            "prompt_tokens": 100,
                            "completion_tokens": 40,
                            "cost": 0.0001,
                            "truncated": 0,
                        }
                    },
                    strata={"urgency": "high" if i % 3 == 0 else "low"},
                    sample={
                        "id": sample_id,
                        "inputs": {"message": f"Patient message {i}: my knee hurts."},
                        "references": [f"Reference reply {i}."],
                        "strata": {},
                    },
                )
            )
            if len(rows) >= batch:
                store.write(rows)
                written += len(rows)
                rows = []
    store.write(rows)
    written += len(rows)
    store.finish_run(run_id, "finished")
    return written


def add_accounts(store: Store) -> None:
    from bedside.web.db import create_web_tables
    from bedside.web.security import add_user

    create_web_tables(store.engine)
    add_user(store.engine, "admin", PASSWORD, "admin")
    add_user(store.engine, "ann1", PASSWORD, "annotator")
    add_user(store.engine, "ann2", PASSWORD, "annotator")


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF field on the page"
    return found.group(1)


def login(client: Any, name: str, password: str = PASSWORD) -> Any:
    page = client.get("/login")
    response = client.post(
        "/login", data={"name": name, "password": password, "csrf": csrf_of(page.text)}, follow_redirects=False
    )
    return response


def backend_store(backend: str, tmp_path: Path) -> Iterator[Store]:
    """An empty store on ``backend`` ("sqlite" in ``tmp_path``, or "postgres": a database of its own), closed (and
    dropped) when the generator ends: the body of the web tests' parametrised ``store`` fixtures."""
    if backend == "postgres":
        yield from postgres_store()
        return
    opened = Store(str(tmp_path / "store.sqlite"))
    try:
        yield opened
    finally:
        opened.close()


def logged_in(app: Any, name: str, password: str = PASSWORD) -> Any:
    """A test client of ``app`` with ``name`` logged in."""
    from fastapi.testclient import TestClient

    client = TestClient(app)
    assert login(client, name, password).status_code == 303
    return client


def postgres_store() -> Iterator[Store]:
    """A Store in a fresh PostgreSQL database made for the test (dropped afterwards)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    assert POSTGRES_URL is not None
    url = make_url(POSTGRES_URL)
    name = f"bedside_web_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as db:
        db.execute(text(f'CREATE DATABASE "{name}"'))
    store = Store(url.set(database=name).render_as_string(hide_password=False))
    try:
        yield store
    finally:
        store.close()
        with admin.connect() as db:
            db.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


# One small item of each review task type (JSONL objects), with the judge's answer where the type has one.
REVIEW_ITEMS: dict[str, list[dict[str, Any]]] = {
    "rank": [
        {
            "id": f"r{i}",
            "context": f"Instruction {i}: summarise the last visit.",
            "outputs": [
                {"id": "system-alpha", "text": f"Alpha answer {i}."},
                {"id": "system-beta", "text": f"Beta answer {i}."},
                {"id": "system-gamma", "text": f"Gamma answer {i}."},
            ],
            "judge": {"scores": [3.0, 2.0, 1.0]},
        }
        for i in range(3)
    ],
    "pairwise": [
        {
            "id": f"p{i}",
            "context": f"Discharge case {i}.",
            "outputs": [
                {"id": "model-one", "text": f"First text {i}."},
                {"id": "model-two", "text": f"Second text {i}."},
            ],
            "judge": "A",
        }
        for i in range(3)
    ],
    "agree": [
        {
            "id": f"a{i}",
            "context": f"Vignette {i}.",
            "output": f"Sensemaker reply {i}.",
            "metric": "severity",
            "score": 3,
            "reasoning": f"The reply explains severity {i}.",
            "key": {"system": "secret-system"},
        }
        for i in range(3)
    ],
    "gold": [
        {"id": f"g{i}", "message": f"Portal message {i}: can I take ibuprofen?", "themes": ["medication", "follow-up"]}
        for i in range(2)
    ],
    "match": [
        {
            "id": f"m{i}",
            "sentence": "Keep taking omeprazole daily.",
            "draft": "Continue omeprazole every day. "
            + ("Call us if the pain comes back.", "Book a visit if it is no better in two weeks.", "We will call you.")[
                i
            ],
            "judge": "Continue omeprazole every day.",
        }
        for i in range(3)
    ],
    "evidence": [
        {
            "id": f"e{i}",
            "question": ("Why was my dose changed?", "Why did my dose go up?", "Is the new dose safe?")[i],
            "sentences": [{"id": "1", "text": "Dose raised to 20 mg."}, {"id": "2", "text": "Patient ate lunch."}],
            "judge": {"1": "essential", "2": "not-relevant"},
        }
        for i in range(3)
    ],
}


def items_jsonl(task_type: str) -> bytes:
    import json

    return "".join(json.dumps(i) + "\n" for i in REVIEW_ITEMS[task_type]).encode()


def create_review(client: Any, task_type: str, annotators: list[str], *, overlap: int = 2, per: int = 10) -> str:
    token = csrf_of(client.get("/reviews/new").text)
    response = client.post(
        "/reviews",
        data={
            "csrf": token,
            "name": f"{task_type} review",
            "task_type": task_type,
            "annotators": annotators,
            "per_annotator": str(per),
            "overlap": str(overlap),
            "blind": "on",
            "seed": "7",
            "instructions": "Label carefully.",
        },
        files={"items": ("items.jsonl", items_jsonl(task_type))},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text[:500]
    return str(response.headers["location"]).rsplit("/", 1)[1]


def serve_in_thread(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port in a thread; yields its base URL, stops it after. The
    socket is bound here and handed to uvicorn, so no other process can take the port in between."""
    import threading
    import time

    import uvicorn

    from bedside.web.listen import listen

    sock = listen("127.0.0.1", 0)
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 300  # a hang guard only: wait for the server, however busy the machine
    while not running.started:
        assert thread.is_alive(), "the web app's server stopped before it started"
        assert time.monotonic() < deadline, "the web app's server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        running.should_exit = True
        thread.join(timeout=10)
        sock.close()


@contextlib.contextmanager
def serve_process(store_path: Path, log: Path, *, start_timeout_s: float = 300.0) -> Iterator[tuple[Any, int]]:
    """`bedside serve --port 0` in its own process, its output in ``log``: yields an httpx client for it (120 s
    per request: a password hash takes seconds on a loaded machine) and the port the server bound and printed,
    once it answers. The server binds the port itself, so no other process can hold it first. A server that exits
    or does not answer within ``start_timeout_s`` (a hang guard: it starts slowly on a busy machine) fails with
    its log, never a bare connection error."""
    import subprocess
    import sys
    import time

    import httpx

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    with log.open("w") as sink:
        server = subprocess.Popen(
            [sys.executable, "-m", "bedside.cli", "serve", "--store", str(store_path), "--port", "0"],
            stdout=sink,
            stderr=sink,
            env=env,
        )
        try:
            deadline = time.monotonic() + start_timeout_s
            while not (bound := re.search(r"bedside web on http://127\.0\.0\.1:(\d+)/", log.read_text())):
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
            port = int(bound.group(1))
            client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
            while True:
                try:
                    client.get("/login")
                    break
                except httpx.TransportError:
                    assert server.poll() is None, log.read_text()
                    assert time.monotonic() < deadline, log.read_text()
                    time.sleep(0.05)
            yield client, port
        finally:
            server.terminate()
            server.wait(timeout=120)
