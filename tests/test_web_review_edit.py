"""Changing a review after creation (bedside.web.review_edit, the admin forms and `bedside review ...`): adding
annotators, who get the items the review is short of; moving or releasing an annotator's unlabelled items, with
every label kept and attributed; closing labelling and reopening it. Each change is audited; each refusal changes
nothing. SQLite, and PostgreSQL when BEDSIDE_TEST_POSTGRES_URL is set."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient
from sqlalchemy import select
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs.store import Store
from bedside.web import review as rv
from bedside.web import review_edit, review_export, review_labels
from bedside.web.app import create_app
from bedside.web.db import assignments_table, audit_table
from bedside.web.security import add_user, disable_user
from web_support import (
    BACKENDS,
    PASSWORD,
    add_accounts,
    backend_store,
    create_review,
    csrf_of,
    logged_in,
)

EVIDENCE_LABEL = {"rel_1": "essential", "rel_2": "not-relevant"}


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    for opened in backend_store(request.param, tmp_path):
        add_accounts(opened)
        add_user(opened.engine, "ann3", PASSWORD, "annotator")
        add_user(opened.engine, "ann4", PASSWORD, "annotator")
        yield opened


def _client(store: Store, name: str) -> TestClient:
    return logged_in(create_app(store), name)  # type: ignore[no-any-return]


def _post(client: TestClient, path: str, **fields: Any) -> Any:
    token = csrf_of(client.get("/reviews").text)
    return client.post(path, data={"csrf": token, **fields}, follow_redirects=False)


def _held(store: Store, review_id: str) -> dict[str, list[str]]:
    """Annotator -> their items in position order."""
    a = assignments_table.c
    with store.engine.connect() as db:
        rows = db.execute(
            select(a.annotator, a.item_id, a.position).where(a.review_id == review_id).order_by(a.annotator, a.position)
        ).all()
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(row.annotator, []).append(row.item_id)
    positions = {name: [r.position for r in rows if r.annotator == name] for name in found}
    assert all(p == list(range(len(p))) for p in positions.values()), positions  # "my n-th item": no gaps
    return found


def _audit(store: Store, review_id: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    t = audit_table.c
    with store.engine.connect() as db:
        rows = db.execute(select(t.user, t.action, t.detail).where(t.target == review_id).order_by(t.id)).all()
    return [(r.user, r.action, r.detail) for r in rows if r.action != "review-created"]


def _label(client: TestClient, review_id: str, position: int) -> Any:
    page = client.get(f"/reviews/{review_id}/items/{position}")
    assert page.status_code == 200, page.text[:300]
    token = re.search(r'name="item" value="([0-9a-f]+)"', page.text)
    assert token, "no item token on the item page"
    data = {"csrf": csrf_of(page.text), "item": token.group(1), **EVIDENCE_LABEL}
    return client.post(f"/reviews/{review_id}/items/{position}", data=data, follow_redirects=False)


def test_an_added_annotator_gets_the_items_the_review_is_short_of(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "evidence", ["ann1"], overlap=1, per=1)  # 3 items, room for 1
    short = rv.unassigned_items(store.engine, review_id)
    assert len(short) == 2
    response = _post(admin, f"/reviews/{review_id}/annotators", annotators=["ann2"])
    assert response.status_code == 303, response.text[:500]
    # ann2 may take one (items per annotator), the first of the short items in the review's seeded draw
    order = rv.assignment_order(list(review_labels.all_items(store.engine, review_id)), 7)
    expected = [i for i in order if i in short][:1]
    assert _held(store, review_id)["ann2"] == expected
    assert rv.unassigned_items(store.engine, review_id) == [i for i in short if i not in expected]
    assert rv.review(store.engine, review_id)["config"]["annotators"] == ["ann1", "ann2"]  # type: ignore[index]
    assert _audit(store, review_id) == [("admin", "annotators-added", {"annotators": ["ann2"], "items": {"ann2": 1}})]
    # the newcomer labels it like anyone else
    ann2 = _client(store, "ann2")
    assert _label(ann2, review_id, 0).status_code == 303
    assert [lab["annotator"] for lab in review_labels.all_labels(store.engine, review_id)] == ["ann2"]
    assert "ann2" in admin.get(f"/reviews/{review_id}").text


def test_an_item_is_given_only_when_it_reaches_the_overlap(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "evidence", ["ann1", "ann2"], overlap=2, per=2)  # 2 items each, 1 left
    (left,) = rv.unassigned_items(store.engine, review_id)
    alone = _post(admin, f"/reviews/{review_id}/annotators", annotators=["ann3"])
    assert alone.status_code == 400
    assert "short of no item its new annotators can take" in alone.text
    assert "ann3" not in _held(store, review_id)
    both = _post(admin, f"/reviews/{review_id}/annotators", annotators=["ann3", "ann4"])
    assert both.status_code == 303
    held = _held(store, review_id)
    assert held["ann3"] == held["ann4"] == [left]
    assert rv.unassigned_items(store.engine, review_id) == []
    assert [action for _, action, _ in _audit(store, review_id)] == ["annotators-added"]  # the refusal left none


def test_adding_annotators_is_refused_with_the_reason(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "evidence", ["ann1"], overlap=1, per=1)
    disable_user(store.engine, "ann4")
    before = _held(store, review_id)
    for names, reason in (
        (["ann1"], "already on this review: ann1"),
        (["nobody"], "no active account for nobody"),
        (["ann4"], "no active account for ann4"),
        ([], "name at least one annotator"),
    ):
        response = _post(admin, f"/reviews/{review_id}/annotators", annotators=names)
        assert response.status_code == 400, names
        assert reason in response.text, names
    full = create_review(admin, "evidence", ["ann1"], overlap=1, per=10)
    with pytest.raises(rv.ReviewError, match="short of no item"):
        review_edit.add_annotators(store.engine, full, ["ann2"], by="admin")
    with pytest.raises(rv.ReviewError, match="no review"):
        review_edit.add_annotators(store.engine, "rv-missing", ["ann2"], by="admin")
    assert _held(store, review_id) == before
    assert _audit(store, review_id) == []


def test_moving_unlabelled_items_keeps_every_label_with_who_gave_it(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "evidence", ["ann1"], overlap=1, per=10)
    ann1 = _client(store, "ann1")
    assert _label(ann1, review_id, 1).status_code == 303
    (given,) = review_labels.all_labels(store.engine, review_id)
    before = _held(store, review_id)["ann1"]
    labelled = before[1]
    # one at a time: the last unlabelled item first
    response = _post(admin, f"/reviews/{review_id}/move", source="ann1", target="ann2", limit="1")
    assert response.status_code == 303, response.text[:500]
    held = _held(store, review_id)
    assert held == {"ann1": before[:2], "ann2": [before[2]]}
    moved = review_edit.move_items(store.engine, review_id, "ann1", "ann2", by="admin")
    assert (moved.moved, moved.kept, moved.labelled) == ([before[0]], [], 1)
    held = _held(store, review_id)
    assert held["ann1"] == [labelled]
    assert sorted(held["ann2"]) == sorted([before[0], before[2]])
    assert review_labels.all_labels(store.engine, review_id) == [given]  # the label stays, ann1's
    progress = {p.annotator: (p.labelled, p.assigned) for p in rv.progress(store.engine, review_id)}
    assert progress == {"ann1": (1, 1), "ann2": (0, 2)}
    text, _ = review_export.export_labels(store.engine, review_id, "labels")
    assert [(line["item"], line["annotator"]) for line in map(json.loads, text.splitlines())] == [(labelled, "ann1")]
    assert _audit(store, review_id)[-2:] == [
        ("admin", "items-moved", {"source": "ann1", "to": "ann2", "items": 1, "kept": 0, "labelled_stay": 1}),
        ("admin", "items-moved", {"source": "ann1", "to": "ann2", "items": 1, "kept": 0, "labelled_stay": 1}),
    ]
    # the moved items reach ann2, and only theirs
    ann2 = _client(store, "ann2")
    assert _label(ann2, review_id, 0).status_code == 303
    assert _label(ann2, review_id, 1).status_code == 303
    assert ann2.get(f"/reviews/{review_id}/items/2").status_code == 404
    with pytest.raises(rv.ReviewError, match="every item of ann1 is labelled"):
        review_edit.move_items(store.engine, review_id, "ann1", "ann3", by="admin")


def test_released_items_are_short_until_an_annotator_is_added(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "evidence", ["ann1", "ann2"], overlap=1, per=10)
    ann2_items = _held(store, review_id)["ann2"]
    response = _post(admin, f"/reviews/{review_id}/move", source="ann2", target="")
    assert response.status_code == 303
    assert "ann2" not in _held(store, review_id)
    assert sorted(rv.unassigned_items(store.engine, review_id)) == sorted(ann2_items)
    assert _audit(store, review_id)[-1] == (
        "admin", "items-released", {"source": "ann2", "to": None, "items": len(ann2_items), "kept": 0,
                                    "labelled_stay": 0},
    )  # fmt: skip
    assert _post(admin, f"/reviews/{review_id}/annotators", annotators=["ann3"]).status_code == 303
    assert sorted(_held(store, review_id)["ann3"]) == sorted(ann2_items)
    assert rv.unassigned_items(store.engine, review_id) == []


def test_moving_is_refused_with_the_reason(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "evidence", ["ann1", "ann2"], overlap=2, per=10)
    before = _held(store, review_id)
    for fields, reason in (
        ({"source": "ann3", "target": "ann1"}, "ann3 has no items in this review"),
        ({"source": "ann1", "target": "ann1"}, "choose another annotator"),
        ({"source": "ann1", "target": "nobody"}, "no active account for nobody"),
        ({"source": "ann1", "target": "ann2"}, "ann2 already has every item that would move"),
        ({"source": "ann1", "target": "ann3", "limit": "0"}, "at least 1"),
        ({"source": "ann1", "target": "ann3", "limit": "two"}, "must be a whole number"),
    ):
        response = _post(admin, f"/reviews/{review_id}/move", **fields)
        assert response.status_code == 400, fields
        assert reason in response.text, fields
    assert _held(store, review_id) == before
    assert _audit(store, review_id) == []


def test_a_form_left_open_on_a_moved_item_saves_nothing(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "evidence", ["ann1"], overlap=1, per=10)
    ann1 = _client(store, "ann1")
    assert _label(ann1, review_id, 0).status_code == 303
    assert _label(ann1, review_id, 2).status_code == 303
    stale = ann1.get(f"/reviews/{review_id}/items/1")  # open on the one unlabelled item
    token = re.search(r'name="item" value="([0-9a-f]+)"', stale.text)
    assert token
    review_edit.move_items(store.engine, review_id, "ann1", "ann2", by="admin")
    labels_before = review_labels.all_labels(store.engine, review_id)
    # position 1 is now ann1's labelled third item: the stale form must not overwrite its label
    response = ann1.post(
        f"/reviews/{review_id}/items/1",
        data={"csrf": csrf_of(stale.text), "item": token.group(1), "rel_1": "supplementary", "rel_2": "essential"},
        follow_redirects=False,
    )
    assert response.status_code == 409
    assert "moved the item this page showed to another annotator" in response.text
    assert review_labels.all_labels(store.engine, review_id) == labels_before


def test_closing_refuses_every_label_until_reopened(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "evidence", ["ann1", "ann2"], overlap=2, per=10)  # each has all three
    ann1 = _client(store, "ann1")
    assert _label(ann1, review_id, 0).status_code == 303
    open_page = ann1.get(f"/reviews/{review_id}/items/1")
    assert _post(ann1, f"/reviews/{review_id}/close").status_code == 403  # annotators cannot close
    assert rv.labelling_closed(rv.review(store.engine, review_id) or {}) is None
    assert _post(admin, f"/reviews/{review_id}/close").status_code == 303
    assert "<strong>closed</strong> by admin" in admin.get(f"/reviews/{review_id}").text

    page = ann1.get(f"/reviews/{review_id}/items/0")
    assert page.status_code == 409
    assert "This review is closed" in page.text
    assert "You labelled 1 of" in page.text
    assert ann1.get(f"/reviews/{review_id}/items/0/record").status_code == 409
    assert ann1.get(f"/reviews/{review_id}", follow_redirects=True).status_code == 409
    posted = ann1.post(
        f"/reviews/{review_id}/items/1",
        data={"csrf": csrf_of(open_page.text), **EVIDENCE_LABEL},
        follow_redirects=False,
    )
    assert posted.status_code == 409
    assert "labels can no longer be given or changed" in posted.text
    assert _post(ann1, f"/reviews/{review_id}/submit").status_code == 409
    assert _post(ann1, f"/reviews/{review_id}/reopen").status_code == 409
    with pytest.raises(rv.ReviewClosed):
        review_labels.save_label(
            store.engine, review_id, "e1", "ann1", {"relevance": {"1": "essential", "2": "essential"}}
        )
    assert len(review_labels.all_labels(store.engine, review_id)) == 1
    listed = ann1.get("/reviews").text
    assert re.search(r'<td class="status">closed</td>', listed)
    assert re.search(r'<td class="status">closed</td>', admin.get("/reviews").text)
    # changing its annotators waits for a reopen; closing twice says so
    for path, fields in (("annotators", {"annotators": ["ann3"]}), ("move", {"source": "ann2", "target": "ann3"})):
        response = _post(admin, f"/reviews/{review_id}/{path}", **fields)
        assert response.status_code == 400
        assert "reopen it before" in response.text
    assert "already closed" in _post(admin, f"/reviews/{review_id}/close").text

    assert _post(ann1, f"/reviews/{review_id}/open").status_code == 403
    assert _post(admin, f"/reviews/{review_id}/open").status_code == 303
    assert ann1.get(f"/reviews/{review_id}", follow_redirects=False).headers["location"].endswith("/items/1")
    assert _label(ann1, review_id, 1).status_code == 303
    assert "nothing to reopen" in _post(admin, f"/reviews/{review_id}/open").text
    assert _audit(store, review_id)[-2:] == [
        ("admin", "labelling-closed", None),
        ("admin", "labelling-reopened", {"closed_by": "admin"}),
    ]


def test_the_command_line_makes_the_same_changes(tmp_path: Path) -> None:
    where = str(tmp_path / "cli.sqlite")
    store = Store(where)
    add_accounts(store)
    add_user(store.engine, "ann3", PASSWORD, "annotator")
    add_user(store.engine, "ann4", PASSWORD, "annotator")
    admin = _client(store, "admin")
    review_id = create_review(admin, "evidence", ["ann1"], overlap=1, per=1)
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(app, ["review", *args, "--store", where])

    added = run("add-annotators", review_id, "ann2", "ann3")
    assert added.exit_code == 0, added.output
    assert "ann2: 1 item(s)" in added.stdout
    assert run("add-annotators", review_id, "ann2").exit_code == 1
    moved = run("move", review_id, "ann3", "--to", "ann4")
    assert moved.exit_code == 0, moved.output
    assert "1 item(s) of ann3 to ann4" in moved.stdout
    released = run("move", review_id, "ann4")
    assert released.exit_code == 0
    assert "released" in released.stdout
    assert run("close", review_id).exit_code == 0
    refused = run("close", review_id)
    assert refused.exit_code == 1
    assert "already closed" in refused.stderr
    (row,) = json.loads(run("list", "--json").stdout)
    assert (row["labelling"], row["unassigned"], row["annotators"]) == ("closed", 1, 2)
    assert run("open", review_id).exit_code == 0
    assert [action for _, action, _ in _audit(store, review_id)] == [
        "annotators-added", "items-moved", "items-released", "labelling-closed", "labelling-reopened",
    ]  # fmt: skip


def test_a_review_is_created_from_a_run_or_items_and_exported_from_the_command_line(tmp_path: Path) -> None:
    """Issue 46: reviews without the web form; a pairwise review from a run pairs the two cells named, one item
    per (sample, epoch), and the export reads back through the CLI."""
    from web_support import CELLS, cell_id, fill_run

    where = str(tmp_path / "cli.sqlite")
    store = Store(where)
    add_accounts(store)
    fill_run(store, "alpha-111", 40)
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(app, ["review", *args, "--store", where])

    a, b = cell_id(*CELLS[0]), cell_id(*CELLS[1])
    made = run(
        "create", "nurses", "--type", "pairwise", "--run", "alpha-111", "--cell", a, "--cell", b,
        "-a", "ann1", "-a", "ann2", "--overlap", "2", "--per-annotator", "100", "--json",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    created = json.loads(made.stdout)
    both = {r.sample_id for r in store.results("alpha-111") if r.cell == a and r.status == "ok"} & {
        r.sample_id for r in store.results("alpha-111") if r.cell == b and r.status == "ok"
    }
    assert (created["items"], created["unassigned"]) == (len(both), 0)
    review_id = created["id"]
    items = review_labels.all_items(store.engine, review_id)
    first = min(items, key=lambda i: items[i]["position"])
    review_labels.save_label(store.engine, review_id, first, "ann1", {"preference": 0, "evidence": []})
    exported = tmp_path / "labels.jsonl"
    assert run("export", review_id, str(exported), "--format", "labels").exit_code == 0
    (label,) = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    assert (label["annotator"], label["label"]["preference"]) == ("ann1", 0)
    assert label["key"]["cells"] == [a, b]

    jsonl = tmp_path / "items.jsonl"
    jsonl.write_text(
        json.dumps({"id": "q1", "context": "Is it urgent?", "outputs": [{"id": "x", "text": "Yes."},
                                                                      {"id": "y", "text": "No."}]}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    from_items = run("create", "file", "--type", "pairwise", "--items", str(jsonl), "-a", "ann1")
    assert from_items.exit_code == 0, from_items.output
    assert ": 1 item(s)" in from_items.stdout
    neither = run("create", "x", "--type", "pairwise", "-a", "ann1")
    assert neither.exit_code == 1
    assert "give one of --run RUN or --items FILE.jsonl" in neither.stderr
    nobody = run("create", "x", "--type", "pairwise", "--items", str(jsonl), "-a", "ghost")
    assert nobody.exit_code == 1
    assert "no active account for ghost" in nobody.stderr
    wrong = run("create", "x", "--type", "ranking", "--items", str(jsonl), "-a", "ann1")
    assert "task type 'ranking': choose one of" in wrong.stderr
    store.close()
