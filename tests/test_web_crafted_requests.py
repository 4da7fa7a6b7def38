"""Crafted requests get a 4xx with a message, never a 500 (issue 37): huge integers in path and query ids
overflowed SQLite's INTEGER; malformed query parameters must be refused, not crash a handler."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient

from bedside.runs.store import Store
from bedside.web.app import create_app
from web_support import add_accounts, fill_run, login

BIG = "9" * 30
GETS = [
    f"/reviews/{BIG}/items/{BIG}",
    f"/reviews/1/items/{BIG}",
    "/reviews/1/items/-1",
    f"/runs/alpha-111/sample?cell=x&sample=s&epoch={BIG}",
    "/runs/alpha-111/sample?cell=x&sample=s&epoch=-1",
    "/runs/alpha-111/sample?cell=x&sample=s&epoch=abc",
    "/runs/alpha-111/sample",
    f"/runs/alpha-111/samples?after_epoch={BIG}",
    "/runs/alpha-111/samples?after_epoch=abc",
    f"/runs/alpha-111/samples?limit={BIG}",
    "/runs/alpha-111/samples?min=abc&metric=bleu",
    f"/runs/alpha-111/samples?min={BIG}&metric=bleu",
    "/runs/alpha-111/samples?cell=%00",
    f"/reviews/{BIG}",
    f"/reviews/{BIG}/export",
    "/compare?a=alpha-111&b=nope",
    f"/audit?limit={BIG}",
]


@pytest.fixture(scope="module")
def admin(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    store = Store(str(tmp_path_factory.mktemp("web") / "store.sqlite"))
    fill_run(store, "alpha-111", 40)
    add_accounts(store)
    client = TestClient(create_app(store), raise_server_exceptions=False)
    assert login(client, "admin").status_code == 303
    return client


@pytest.mark.parametrize("path", GETS)
def test_crafted_gets_are_refused_not_a_server_error(admin: TestClient, path: str) -> None:
    response = admin.get(path)
    assert response.status_code < 500, (path, response.status_code)


def test_an_epoch_too_large_for_the_database_is_a_422_saying_so(admin: TestClient) -> None:
    response = admin.get(f"/runs/alpha-111/sample?cell=x&sample=s&epoch={BIG}")
    assert response.status_code == 422
    assert "less than or equal to" in response.text


def test_an_item_position_past_any_review_is_no_such_item(admin: TestClient) -> None:
    response = admin.get(f"/reviews/1/items/{BIG}")
    assert response.status_code == 404
    assert "no such item" in response.text


def test_a_crafted_post_with_a_huge_position_is_refused(admin: TestClient) -> None:
    page = admin.get("/reviews")
    assert page.status_code == 200
    response = admin.post(f"/reviews/1/items/{BIG}", data={"label": "1"})
    assert 400 <= response.status_code < 500
