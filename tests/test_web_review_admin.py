"""Administering reviews from the command line: `review list` with items nobody was assigned reported (never
silently dropped), and accounts enabled again, given a new password, or deleted when nothing refers to them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs.store import Store
from bedside.web import review as rv
from bedside.web.app import create_app
from web_support import PASSWORD, add_accounts, create_review, login

NEW_PASSWORD = "another-long-password"


@pytest.fixture
def where(tmp_path: Path) -> str:
    return str(tmp_path / "store.sqlite")


@pytest.fixture
def store(where: str) -> Store:
    opened = Store(where)
    add_accounts(opened)
    return opened


def test_items_beyond_capacity_are_reported_on_the_page_and_by_review_list(store: Store, where: str) -> None:
    admin = TestClient(create_app(store))
    assert login(admin, "admin").status_code == 303
    review_id = create_review(admin, "evidence", ["ann1"], overlap=1, per=2)  # 3 items, room for 2
    unassigned = rv.unassigned_items(store.engine, review_id)
    assert len(unassigned) == 1
    page = admin.get(f"/reviews/{review_id}").text
    assert "1 item(s) are assigned to nobody" in page
    assert unassigned[0] in page
    runner = CliRunner()
    listed = runner.invoke(app, ["review", "list", "--store", where, "--json"])
    assert listed.exit_code == 0, listed.output
    (row,) = json.loads(listed.stdout)
    assert (row["id"], row["items"], row["unassigned"], row["assigned"], row["annotators"]) == (review_id, 3, 1, 2, 1)
    shown = runner.invoke(app, ["review", "list", "--store", where])
    assert "1 of 3 item(s) are assigned to nobody" in " ".join(shown.stderr.split())


def test_users_enable_reset_and_delete(store: Store, where: str) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["users", "disable", "ann2", "--store", where]).exit_code == 0
    assert login(TestClient(create_app(store)), "ann2").status_code != 303
    assert runner.invoke(app, ["users", "enable", "ann2", "--store", where]).exit_code == 0
    assert login(TestClient(create_app(store)), "ann2").status_code == 303

    reset = runner.invoke(app, ["users", "reset", "ann2", "--store", where, "--password-stdin"], input=NEW_PASSWORD)
    assert reset.exit_code == 0, reset.output
    assert login(TestClient(create_app(store)), "ann2", PASSWORD).status_code != 303
    assert login(TestClient(create_app(store)), "ann2", NEW_PASSWORD).status_code == 303
    short = runner.invoke(app, ["users", "reset", "ann2", "--store", where, "--password-stdin"], input="short")
    assert short.exit_code == 1

    admin = TestClient(create_app(store))
    assert login(admin, "admin").status_code == 303
    create_review(admin, "evidence", ["ann1"], overlap=1, per=3)
    refused = runner.invoke(app, ["users", "delete", "ann1", "--store", where])
    assert refused.exit_code == 1
    assert "disable the account instead" in " ".join(refused.stderr.split())
    assert runner.invoke(app, ["users", "delete", "ann2", "--store", where]).exit_code == 0
    names = [u["name"] for u in json.loads(runner.invoke(app, ["users", "list", "--store", where, "--json"]).stdout)]
    assert names == ["admin", "ann1"]
    missing = runner.invoke(app, ["users", "enable", "nobody", "--store", where])
    assert missing.exit_code == 1
