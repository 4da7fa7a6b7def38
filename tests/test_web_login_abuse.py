"""The web app under hostile clients: nobody can lock an owner out, X-Forwarded-For only from configured proxies,
bounded audit writes from strangers, and crafted item and compare URLs answered 4xx with a message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from bedside.runs.store import Store
from bedside.web.app import WebSettings, create_app
from bedside.web.db import audit_table
from bedside.web.security import MAX_NAME_CHARS, client_address
from web_support import PASSWORD, add_accounts, csrf_of, fill_run, login, serve_process


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(str(tmp_path / "store.sqlite"))
    fill_run(opened, "alpha-111", 20)
    fill_run(opened, "beta-222", 20)
    add_accounts(opened)
    yield opened
    opened.close()


def attempt(client: TestClient, name: str, password: str, forwarded_for: str | None = None) -> Any:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    page = client.get("/login")
    return client.post(
        "/login",
        data={"name": name, "password": password, "csrf": csrf_of(page.text)},
        headers=headers,
        follow_redirects=False,
    )


def test_failures_from_one_address_never_lock_the_owner_out_from_theirs(store: Store) -> None:
    settings = WebSettings(max_login_failures=5, trusted_proxies=frozenset({"testclient"}), clock=Clock())
    client = TestClient(create_app(store, settings))
    for _ in range(5):
        assert attempt(client, "ann1", "wrong password!", "203.0.113.9").status_code == 401
    blocked = attempt(client, "ann1", PASSWORD, "203.0.113.9")  # the attacker, even with the right password
    assert blocked.status_code == 429
    assert int(blocked.headers["Retry-After"]) > 0
    owner = attempt(client, "ann1", PASSWORD, "198.51.100.7")  # the owner, from their own address
    assert owner.status_code == 303
    assert "bedside_session" in owner.headers.get("set-cookie", "")


def test_backoff_doubles_after_each_further_failure_and_ends(store: Store) -> None:
    clock = Clock()
    client = TestClient(create_app(store, WebSettings(max_login_failures=3, clock=clock)))
    for _ in range(3):
        assert attempt(client, "ann1", "wrong password!").status_code == 401
    first = attempt(client, "ann1", "wrong password!")
    assert first.status_code == 429
    assert first.headers["Retry-After"] == "30"
    clock.now += 31
    assert attempt(client, "ann1", "wrong password!").status_code == 401  # checked again, and wrong again
    second = attempt(client, "ann1", PASSWORD)
    assert second.status_code == 429
    assert second.headers["Retry-After"] == "60"  # doubled
    clock.now += 61
    assert attempt(client, "ann1", PASSWORD).status_code == 303  # the wait is over: the right password works


def test_forwarded_for_is_ignored_unless_the_peer_is_a_configured_proxy(store: Store) -> None:
    client = TestClient(create_app(store, WebSettings(max_login_failures=3, clock=Clock())))
    for i in range(3):  # a client claiming a new address each time is still one address
        assert attempt(client, "ann1", "wrong password!", f"10.0.0.{i}").status_code == 401
    assert attempt(client, "ann1", PASSWORD, "10.0.0.99").status_code == 429
    trusted = frozenset({"10.1.1.1"})
    assert client_address("127.0.0.1", "6.6.6.6", trusted) == "127.0.0.1"
    assert client_address("10.1.1.1", "6.6.6.6, 192.0.2.4", trusted) == "192.0.2.4"
    assert client_address("10.1.1.1", "6.6.6.6, 192.0.2.4, 10.1.1.1", trusted) == "192.0.2.4"
    assert client_address("10.1.1.1", None, trusted) == "10.1.1.1"


def test_what_failed_logins_can_write_to_the_store_is_bounded(store: Store) -> None:
    settings = WebSettings(max_login_failures=5, audit_rows_per_address=10, clock=Clock())
    client = TestClient(create_app(store, settings))
    huge = "x" * 200_000
    with store.engine.connect() as db:
        before = db.execute(select(func.count()).select_from(audit_table)).scalar_one()
    for i in range(40):
        assert attempt(client, f"{huge}{i}", "wrong password!").status_code in (401, 429)
    with store.engine.connect() as db:
        rows = db.execute(select(audit_table.c.user, audit_table.c.action).offset(before)).all()
    assert len(rows) == 10
    assert all(len(r.user) <= MAX_NAME_CHARS for r in rows)
    assert sum(len(r.user) for r in rows) <= 10 * MAX_NAME_CHARS


def test_a_huge_item_position_is_404_with_a_message(store: Store) -> None:
    client = TestClient(create_app(store), raise_server_exceptions=False)
    assert login(client, "ann1").status_code == 303
    for position in ("99999999999999999999", str(2**63), "-1"):
        response = client.get(f"/reviews/R/items/{position}")
        assert response.status_code == 404, position
        assert "no such item" in response.text


CRAFTED_PAGE_KEYS = [
    '["s000001", 1e999]',
    '["s000001", Infinity]',
    '["s000001", NaN]',
    '["s000001", 99999999999999999999999]',
    '["s\\ud800", 0]',
    "[" * 5000,
    '[["s"], 0]',
    '["s"]',
    "x" * 5000,
]


def test_a_crafted_compare_page_key_is_400_with_a_message(store: Store) -> None:
    client = TestClient(create_app(store), raise_server_exceptions=False)
    assert login(client, "admin").status_code == 303
    for after in CRAFTED_PAGE_KEYS:
        response = client.get("/compare", params={"a": "alpha-111", "b": "beta-222", "after": after})
        assert response.status_code == 400, after[:40]
        assert "bad page key" in response.text
    after = json.dumps(["s000001", 0])  # what the page's own "next" link carries still pages
    response = client.get("/compare", params={"a": "alpha-111", "b": "beta-222", "after": after})
    assert response.status_code == 200


def test_the_real_server_does_not_believe_forwarded_for_from_a_loopback_client(tmp_path: Path) -> None:
    """uvicorn, left to itself, takes X-Forwarded-For from any client on 127.0.0.1: each forged address would be
    a fresh (name, address) pair, never throttled. `bedside serve` turns that off."""
    import re

    path = tmp_path / "store.sqlite"
    opened = Store(str(path))
    add_accounts(opened)
    opened.close()
    with serve_process(path, tmp_path / "server.log") as (client, _):
        codes = []
        for i in range(7):
            page = client.get("/login")
            token = re.search(r'name="csrf" value="([^"]+)"', page.text)
            assert token
            codes.append(
                client.post(
                    "/login",
                    data={"name": "ann1", "password": "wrong password!", "csrf": token.group(1)},
                    headers={"X-Forwarded-For": f"10.9.9.{i}"},
                ).status_code
            )
    assert codes == [401] * 5 + [429] * 2


def test_a_crafted_sample_page_key_is_400_with_a_message(store: Store) -> None:
    """The samples pages read their keys as the compare page does (3,000 nested ``[`` was a 500)."""
    client = TestClient(create_app(store), raise_server_exceptions=False)
    assert login(client, "admin").status_code == 303
    crafted = [key.replace('["s', '["c", "s') for key in CRAFTED_PAGE_KEYS] + ["[" * 3000, '["c", "s"]']
    for key in crafted:
        for side in ("after", "before"):
            response = client.get("/runs/alpha-111/samples", params={side: key})
            assert response.status_code == 400, (side, key[:40])
            assert "bad page key" in response.text
    fine = client.get("/runs/alpha-111/samples", params={"after": json.dumps(["c", "s000001", 0])})
    assert fine.status_code == 200


def test_serving_a_store_a_run_made_says_there_are_no_accounts_yet(tmp_path: Path) -> None:
    """issue 48's audit: a store with no web tables yet (made by `bedside run`) ended `bedside serve` in a
    traceback (no such table: web_users)."""
    path = tmp_path / "runs.sqlite"
    Store(str(path)).close()  # a run's store: run tables only
    log = tmp_path / "server.log"
    with serve_process(path, log) as (client, _):
        assert client.get("/login").status_code == 200
    said = log.read_text()
    assert "no accounts yet" in said
    assert "Traceback" not in said
