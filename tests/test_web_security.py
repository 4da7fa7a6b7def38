"""Security of the web app: login on every route, CSRF on every POST, cookies, idle expiry, throttling, headers,
upload limits, logs without bodies or query strings, audit log, accounts. On SQLite, and on PostgreSQL when
BEDSIDE_TEST_POSTGRES_URL is set."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from bedside.runs.store import Store
from bedside.web.app import WebSettings, create_app
from bedside.web.db import audit_table, sessions_table, users_table
from bedside.web.security import AccountError, add_user, disable_user, list_users
from web_support import (
    BACKENDS,
    PASSWORD,
    add_accounts,
    csrf_of,
    fill_run,
    login,
    postgres_store,
    serve_process,
)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "postgres":
        made = postgres_store()
        opened = next(made)
    else:
        opened = Store(str(tmp_path / "store.sqlite"))
    fill_run(opened, "alpha-111", 40)
    add_accounts(opened)
    yield opened
    if request.param == "postgres":
        with pytest.raises(StopIteration):
            next(made)
    else:
        opened.close()


def _routes(client: TestClient) -> list[tuple[str, str]]:
    found = []
    for route in client.app.routes:  # type: ignore[attr-defined]
        if isinstance(route, APIRoute):
            path = re.sub(r"\{[^}]+\}", "1", route.path.replace("{run_id}", "alpha-111"))
            found += [(method, path) for method in sorted(route.methods or ())]
    return found


def test_every_route_but_login_needs_a_session(store: Store) -> None:
    client = TestClient(create_app(store))
    routes = _routes(client)
    assert len(routes) >= 20
    for method, path in routes:
        if path == "/login":
            continue
        response = client.request(method, path, follow_redirects=False)
        if method == "GET":
            assert response.status_code == 303, (method, path)
            assert response.headers["location"] == "/login"
        else:
            assert response.status_code == 401, (method, path)
    # the only anonymous content: the login page and the app's own CSS/JS (code, no data)
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/login").status_code == 200


def test_annotators_cannot_reach_admin_pages(store: Store) -> None:
    client = TestClient(create_app(store))
    assert login(client, "ann1").status_code == 303
    for path in (
        "/runs/alpha-111",
        "/runs/alpha-111/samples",
        "/compare",
        "/reviews/new",
        "/audit",
        "/reviews/1/meta",
        "/reviews/1/export",
    ):
        assert client.get(path, follow_redirects=False).status_code == 403, path
    assert client.get("/", follow_redirects=False).headers["location"] == "/reviews"


def test_csrf_missing_or_invalid_is_refused_on_every_post(store: Store) -> None:
    client = TestClient(create_app(store))
    assert login(client, "admin").status_code == 303
    good = csrf_of(client.get("/reviews/new").text)
    posts = [path for method, path in _routes(client) if method == "POST" and path != "/login"]
    assert {"/logout", "/reviews", "/reviews/1/items/1", "/reviews/1/submit", "/reviews/1/import"} <= set(posts)
    for path in posts:
        assert client.post(path, data={}, follow_redirects=False).status_code == 403, path
        assert client.post(path, data={"csrf": good[:-2] + "xx"}, follow_redirects=False).status_code == 403, path
        wrong_header = client.post(path, data={}, headers={"x-csrf-token": "nope"}, follow_redirects=False)
        assert wrong_header.status_code == 403, path
    # still logged in (logout without a token did nothing), and a valid token works
    assert client.get("/", follow_redirects=False).status_code == 200
    assert client.post("/logout", data={"csrf": good}, follow_redirects=False).status_code == 303
    assert client.get("/", follow_redirects=False).status_code == 303


def test_login_form_needs_its_own_token(store: Store) -> None:
    client = TestClient(create_app(store))
    client.get("/login")
    response = client.post(
        "/login", data={"name": "admin", "password": PASSWORD, "csrf": "forged"}, follow_redirects=False
    )
    assert response.status_code == 403
    fresh = TestClient(create_app(store))
    response = fresh.post("/login", data={"name": "admin", "password": PASSWORD, "csrf": "x"}, follow_redirects=False)
    assert response.status_code == 403


def test_session_cookie_flags(store: Store) -> None:
    client = TestClient(create_app(store))
    cookie = login(client, "admin").headers["set-cookie"]
    assert "bedside_session=" in cookie
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie.replace("Strict", "strict")
    assert "Secure" not in cookie
    tls = TestClient(create_app(store), base_url="https://testserver")
    cookie = login(tls, "admin").headers["set-cookie"]
    assert "Secure" in cookie


def test_idle_session_expires(store: Store) -> None:
    client = TestClient(create_app(store, WebSettings(idle_s=60)))
    assert login(client, "admin").status_code == 303
    assert client.get("/", follow_redirects=False).status_code == 200
    with store.engine.begin() as db:
        db.execute(update(sessions_table).values(last_seen=time.time() - 61))
    assert client.get("/", follow_redirects=False).status_code == 303
    with store.engine.connect() as db:
        assert db.execute(select(sessions_table)).first() is None  # the expired session is deleted
    assert client.post("/logout", data={"csrf": "x"}).status_code == 401


def test_wrong_password_and_throttling(store: Store) -> None:
    client = TestClient(create_app(store, WebSettings(max_login_failures=3)))
    for _ in range(3):
        assert login(client, "ann1", "wrong password!").status_code == 401
    blocked = login(client, "ann1")  # right password, but throttled
    assert blocked.status_code == 429
    assert "bedside_session" not in blocked.headers.get("set-cookie", "")
    assert login(client, "nobody", "whatever123").status_code in (401, 429)
    with store.engine.connect() as db:
        actions = [r.action for r in db.execute(select(audit_table.c.action))]
    assert actions.count("login-failed") >= 3
    assert "login-throttled" in actions


def test_disabled_user_loses_sessions_and_cannot_log_in(store: Store) -> None:
    client = TestClient(create_app(store))
    assert login(client, "ann2").status_code == 303
    disable_user(store.engine, "ann2")
    assert client.get("/reviews", follow_redirects=False).status_code == 303
    assert login(client, "ann2").status_code == 401


def test_account_rules_and_hashes(store: Store) -> None:
    with pytest.raises(AccountError, match="at least"):
        add_user(store.engine, "short", "abc", "annotator")
    with pytest.raises(AccountError, match="role"):
        add_user(store.engine, "x", PASSWORD, "root")
    with pytest.raises(AccountError, match="exists"):
        add_user(store.engine, "admin", PASSWORD, "admin")
    with store.engine.connect() as db:
        hashes = [r.password_hash for r in db.execute(select(users_table.c.password_hash))]
    assert all(h.startswith("$argon2id$") for h in hashes)
    assert all(PASSWORD not in h for h in hashes)
    assert [u["name"] for u in list_users(store.engine)] == ["admin", "ann1", "ann2"]


def test_headers_on_every_response(store: Store) -> None:
    client = TestClient(create_app(store))
    for response in (client.get("/login"), client.get("/static/app.css"), client.get("/", follow_redirects=False)):
        csp = response.headers["content-security-policy"]
        assert "default-src 'self'" in csp
        assert "script-src 'self'" in csp
        assert "frame-ancestors 'none'" in csp
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["cache-control"] == "no-store"


def test_pages_load_nothing_from_elsewhere(store: Store) -> None:
    client = TestClient(create_app(store))
    login(client, "admin")
    for path in ("/", "/runs/alpha-111", "/runs/alpha-111/samples", "/reviews/new"):
        html = client.get(path).text
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), path
        assert "style=" not in html  # the CSP allows no inline styles
        assert "<script>" not in html


def test_upload_size_limit(store: Store) -> None:
    client = TestClient(create_app(store, WebSettings(max_upload_bytes=2000)))
    login(client, "admin")
    token = csrf_of(client.get("/reviews/new").text)
    big = b'{"id": "x", "sentence": "a", "draft": "b"}\n' * 200
    response = client.post(
        "/reviews", data={"csrf": token, "task_type": "match", "name": "big"}, files={"items": ("i.jsonl", big)}
    )
    assert response.status_code == 413


def test_logs_hold_no_bodies_query_strings_or_item_text(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    client = TestClient(create_app(store))
    caplog.set_level(logging.DEBUG)
    login(client, "admin")
    client.get("/runs/alpha-111/samples?system=SECRET-QUERY-VALUE")
    client.get("/runs/alpha-111/sample?cell=demo%7Crag%7Cscripted%2Fa&sample=s000001&epoch=0")
    token = csrf_of(client.get("/reviews/new").text)
    client.post(
        "/reviews",
        data={"csrf": token, "name": "SECRET-BODY-NAME", "task_type": "match"},
        files={"items": ("i.jsonl", b'{"id": "i1", "sentence": "SECRET-ITEM-TEXT", "draft": "d"}\n')},
    )
    # the server's records (the test client's own httpx log shows the URLs it sent, as any client would)
    text = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith(("httpx", "asyncio")))
    assert "GET /runs/{run_id}/samples 200" in text
    assert "POST /reviews" in text
    for secret in (
        "SECRET-QUERY-VALUE",
        "SECRET-BODY-NAME",
        "SECRET-ITEM-TEXT",
        PASSWORD,
        "s000001",
        "my knee",
        "csrf",
    ):
        assert secret not in text, secret


def test_audit_log_page(store: Store) -> None:
    client = TestClient(create_app(store))
    login(client, "admin")
    page = client.get("/audit")
    assert page.status_code == 200
    assert "login" in page.text


def test_serve_binds_localhost_by_default() -> None:
    import inspect as pyinspect

    from bedside.cli.web import serve

    assert pyinspect.signature(serve).parameters["host"].default == "127.0.0.1"


def test_the_real_server_logs_no_query_strings(tmp_path: Path) -> None:
    """`bedside serve` in its own process: binds 127.0.0.1, and its log holds route templates only."""
    path = tmp_path / "store.sqlite"
    opened = Store(str(path))
    fill_run(opened, "alpha-111", 8)
    add_accounts(opened)
    opened.close()
    log = tmp_path / "server.log"
    with serve_process(path, log) as (client, port):
        page = client.get("/login")
        client.post("/login", data={"name": "admin", "password": PASSWORD, "csrf": csrf_of(page.text)})
        assert client.get("/runs/alpha-111/samples?system=SECRET-QUERY").status_code == 200
        client.post("/login", data={"name": "SECRET-NAME", "password": "SECRET-PASSWORD", "csrf": "x"})
    text = log.read_text()
    assert f"http://127.0.0.1:{port}/" in text
    assert "admin GET /runs/{run_id}/samples 200" in text
    for secret in ("SECRET-QUERY", "SECRET-NAME", "SECRET-PASSWORD", "alpha-111/samples"):
        assert secret not in text, secret


def test_serve_on_a_port_in_use_says_so_in_one_line(tmp_path: Path) -> None:
    """The port is held by a listening socket of this test for the whole call, so the refusal cannot be chance."""
    import socket

    from typer.testing import CliRunner

    from bedside.cli import app

    with socket.create_server(("127.0.0.1", 0)) as held:
        port = held.getsockname()[1]
        result = CliRunner().invoke(app, ["serve", "--store", str(tmp_path / "s.sqlite"), "--port", str(port)])
    assert result.exit_code == 1
    assert f"error: cannot listen on 127.0.0.1:{port}:" in result.output
    assert "Traceback" not in result.output


def test_a_request_naming_another_host_is_refused(tmp_path: Path) -> None:
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 reaches a loopback server with ``Host:
    evil.example``; ``bedside serve`` answers only the names it was bound to or told (--allowed-host)."""
    from bedside.cli.web import allowed_hosts

    assert allowed_hosts("127.0.0.1", []) == ("127.0.0.1", "localhost", "::1", "[::1]")
    assert allowed_hosts("0.0.0.0", ["review.example.org"])[-1] == "review.example.org"
    assert "0.0.0.0" not in allowed_hosts("0.0.0.0", [])
    opened = Store(str(tmp_path / "hosts.sqlite"))
    app = create_app(opened, WebSettings(allowed_hosts=allowed_hosts("127.0.0.1", ["review.example.org"])))
    for name in ("127.0.0.1:8400", "localhost:8400", "review.example.org"):
        assert TestClient(app, base_url=f"http://{name}").get("/login").status_code == 200, name
    refused = TestClient(app, base_url="http://evil.example:8400").get("/login")
    assert refused.status_code == 400
    assert refused.text == "Invalid host header"
    opened.close()
