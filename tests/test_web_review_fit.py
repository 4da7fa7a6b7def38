"""Reviews that fit each task: entries kept on a validation error, pairwise on the creator's cells, the task's
own rank criteria, a comment and a safety flag on every type (counted and exported), and a page that tells an
annotator why a viewer link is not for them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient

from bedside.runs.store import Store
from bedside.tasks.instruct.labels import REVIEW_CRITERIA as INSTRUCT_CRITERIA
from bedside.web import review as rv
from bedside.web import review_labels
from bedside.web.app import create_app
from page_text import element_texts, field_names
from web_support import add_accounts, create_review, csrf_of, fill_run, login

CELLS3 = [("d", "sys-x", "model-x"), ("d", "sys-y", "model-y"), ("d", "sys-z", "model-z")]


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = Store(str(tmp_path / "store.sqlite"))
    fill_run(opened, "three-111", 12, cells=CELLS3)
    fill_run(opened, "instr-222", 8, task="instruct", cells=CELLS3[:2])
    add_accounts(opened)
    yield opened
    opened.close()


def _client(store: Store, name: str) -> TestClient:
    client = TestClient(create_app(store))
    assert login(client, name).status_code == 303
    return client


def _new(admin: TestClient, **fields: Any) -> Any:
    token = csrf_of(admin.get("/reviews/new").text)
    data = {"csrf": token, "name": "r", "annotators": ["ann1"], "per_annotator": "50", "overlap": "1", "blind": "on"}
    return admin.post("/reviews", data={**data, **fields}, follow_redirects=False)


def test_a_validation_error_keeps_what_the_annotator_entered(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "rank", ["ann1"], overlap=1)
    one = _client(store, "ann1")
    page = one.get(f"/reviews/{review_id}/items/0")
    # rank A and B, leave C unranked; flag C2 on A, write a comment and a safety note
    refused = one.post(
        str(page.url),
        data={
            "csrf": csrf_of(page.text),
            "rank_A": "2",
            "rank_B": "1",
            "c2_A": "on",
            "comment": "B reads better",
            "safety": "on",
            "safety_note": "A doubles the dose",
        },
    )
    assert refused.status_code == 400
    assert "give output C a rank" in refused.text
    html = refused.text
    assert re.search(r'name="rank_A" value="2" checked', html)
    assert re.search(r'name="rank_B" value="1" checked', html)
    assert re.search(r'name="c2_A" checked', html)
    assert ">B reads better</textarea>" in html
    assert ">A doubles the dose</textarea>" in html
    assert re.search(r'name="safety" checked', html)
    assert review_labels.all_labels(store.engine, review_id) == []  # nothing was saved


def test_a_safety_flag_needs_a_note_and_is_counted_and_exported(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "match", ["ann1", "ann2"], overlap=2)
    for name, note in (("ann1", "tells the patient to stop a needed drug"), ("ann2", "")):
        client = _client(store, name)
        page = client.get(f"/reviews/{review_id}/items/0")
        form = {"csrf": csrf_of(page.text), "span": "NO MATCH", "comment": f"by {name}"}
        if note:
            refused = client.post(str(page.url), data={**form, "safety": "on"})
            assert refused.status_code == 400
            assert "safety box" in refused.text
            form.update({"safety": "on", "safety_note": note})
        assert client.post(str(page.url), data=form, follow_redirects=False).status_code == 303
    labels = {lab["annotator"]: lab["value"] for lab in review_labels.all_labels(store.engine, review_id)}
    assert labels["ann1"]["safety"] == {"note": "tells the patient to stop a needed drug"}
    assert labels["ann1"]["comment"] == "by ann1"
    assert "safety" not in labels["ann2"]
    meta = admin.get(f"/reviews/{review_id}/meta").text
    assert "1 labels on 1 items flag a safety problem" in meta
    assert "tells the patient to stop a needed drug" in meta
    exported = admin.get(f"/reviews/{review_id}/export?format=labels").text
    rows = [json.loads(line) for line in exported.splitlines()]
    assert [r["label"].get("safety") for r in rows if r["annotator"] == "ann1"] == [
        {"note": "tells the patient to stop a needed drug"}
    ]


@pytest.mark.parametrize("task_type", rv.TASK_TYPES)
def test_every_type_has_a_comment_and_a_safety_box(store: Store, task_type: str) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, task_type, ["ann1"], overlap=1)
    html = _client(store, "ann1").get(f"/reviews/{review_id}/items/0").text
    assert 'name="comment"' in html
    assert 'name="safety"' in html
    assert 'name="safety_note"' in html


def test_a_pairwise_review_compares_the_cells_its_creator_chose(store: Store) -> None:
    admin = _client(store, "admin")
    refused = _new(admin, task_type="pairwise", run="three-111")
    assert refused.status_code == 400
    assert "choose the two to compare" in refused.text
    assert "d|sys-z|model-z" in refused.text  # the form offers the run's cells
    assert _new(admin, task_type="pairwise", run="three-111", cells=["d|sys-x|model-x"]).status_code == 400
    unknown = _new(admin, task_type="pairwise", run="three-111", cells=["d|sys-x|model-x", "nope"])
    assert "no cell nope" in unknown.text
    made = _new(admin, task_type="pairwise", run="three-111", cells=["d|sys-z|model-z", "d|sys-x|model-x"])
    assert made.status_code == 303, made.text[:500]
    review_id = made.headers["location"].rsplit("/", 1)[1]
    items = review_labels.all_items(store.engine, review_id).values()
    assert items
    assert {tuple(i["key"]["cells"]) for i in items} == {("d|sys-z|model-z", "d|sys-x|model-x")}
    assert rv.review(store.engine, review_id)["config"]["cells"] == ["d|sys-z|model-z", "d|sys-x|model-x"]  # type: ignore[index]


def test_rank_criteria_come_from_the_task(store: Store) -> None:
    admin = _client(store, "admin")
    one = _client(store, "ann1")

    def made(**fields: Any) -> str:
        response = _new(admin, task_type="rank", **fields)
        assert response.status_code == 303, response.text[:500]
        return str(response.headers["location"].rsplit("/", 1)[1])

    spec = rv.ReviewSpec(name="r", task_type="rank", annotators=["ann1"], per_annotator=5)
    assert rv.rank_criteria(store, "instr-222", spec) == list(INSTRUCT_CRITERIA)  # instruct's task names C1–C3
    assert rv.rank_criteria(store, "three-111", spec) == []  # drafting's names none
    assert rv.rank_criteria(store, None, spec) == list(INSTRUCT_CRITERIA)  # a JSONL of rank items
    drafting = made(run="three-111")
    html = one.get(f"/reviews/{drafting}/items/0").text
    assert element_texts(html, "[data-criterion]") == []  # drafting names no rank criteria: ranks only
    assert "rank_A" in field_names(html)
    own = made(run="three-111", criteria="unsafe: Unsafe advice\ntone: Wrong tone for a patient")
    page = one.get(f"/reviews/{own}/items/0")
    assert "Wrong tone for a patient" in page.text
    form = {"csrf": csrf_of(page.text), "rank_A": "1", "rank_B": "2", "rank_C": "3", "tone_B": "on"}
    assert one.post(str(page.url), data=form, follow_redirects=False).status_code == 303
    value = review_labels.all_labels(store.engine, own)[0]["value"]
    assert sorted(o["tone"] for o in value["outputs"]) == [False, False, True]
    assert all("c1" not in o for o in value["outputs"])
    assert "line 1" in _new(admin, task_type="rank", run="three-111", criteria="no colon here").text


def test_an_annotator_on_a_viewer_link_is_told_why(store: Store) -> None:
    page = _client(store, "ann1").get("/runs/three-111")
    assert page.status_code == 403
    assert "annotator account" in page.text
    assert 'href="/reviews"' in page.text
