"""The whole record behind a review item: read from the stored sample (or the item's own context), unclipped,
with the sentences the outputs repeat highlighted, and no system or model named."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient

from bedside.runs.store import ResultRow, Store
from bedside.web import review as rv
from bedside.web.app import create_app
from bedside.web.record_view import quoted_spans
from web_support import add_accounts, items_jsonl, login

NOTE = "Knee pain since Monday. " + "Walks with a cane. " * 200 + "Take ibuprofen 400 mg with food twice a day."


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = Store(str(tmp_path / "store.sqlite"))
    opened.begin_run("notes-1", "notes", "drafting", {})
    rows = []
    for cell, system, text in (
        ("d|secret-sys-a|m", "secret-sys-a", "Take ibuprofen 400 mg with food twice a day. Rest the knee."),
        ("d|secret-sys-b|m", "secret-sys-b", "Rest and ice the knee."),
    ):
        rows.append(
            ResultRow("notes-1", cell, "s1", 0, "d", system, "m", "k", "ok", None, {"text": text}, {}, {}, {},
                      {"id": "s1", "inputs": {"note": NOTE}})
        )  # fmt: skip
    opened.write(rows)
    add_accounts(opened)
    yield opened
    opened.close()


def _client(store: Store, name: str) -> TestClient:
    client = TestClient(create_app(store))
    assert login(client, name).status_code == 303
    return client


def test_a_run_item_opens_its_whole_record_with_the_quoted_sentence_marked(store: Store) -> None:
    spec = rv.ReviewSpec(name="r", task_type="pairwise", annotators=["ann1"], per_annotator=5)
    review_id = rv.create_review(store.engine, spec, rv.items_from_run(store, "notes-1", spec), source="run:notes-1",
                                 created_by="admin")  # fmt: skip
    one = _client(store, "ann1")
    item = one.get(f"/reviews/{review_id}/items/0")
    assert f"/reviews/{review_id}/items/0/record" in item.text
    page = one.get(f"/reviews/{review_id}/items/0/record")
    assert page.status_code == 200
    assert "Walks with a cane. " * 200 in page.text  # whole, not clipped
    assert '<mark class="hl quoted" title="in output ' in page.text
    assert ">Take ibuprofen 400 mg with food twice a day.</mark>" in page.text
    assert "secret-sys" not in page.text  # blinded
    assert _client(store, "ann2").get(f"/reviews/{review_id}/items/0/record").status_code == 404  # not theirs


def test_a_jsonl_item_shows_its_own_context() -> None:
    spans = quoted_spans("a. The dose is twenty mg daily. b.", ["The dose is twenty mg daily. Fine."])
    assert [(s["start"], s["end"]) for s in spans] == [(3, 31)]
    assert quoted_spans("short words here", ["short words here"]) == []  # under four words: not a quote


def test_a_jsonl_review_item_record(store: Store) -> None:
    spec = rv.ReviewSpec(name="j", task_type="evidence", annotators=["ann1"], per_annotator=5)
    items = rv.items_from_jsonl("evidence", items_jsonl("evidence").decode())
    review_id = rv.create_review(store.engine, spec, items, source="jsonl", created_by="admin")
    page = _client(store, "ann1").get(f"/reviews/{review_id}/items/0/record")
    assert page.status_code == 200
    assert "Dose raised to 20 mg." in page.text
    assert "What this item was built from" in page.text


def test_a_pairwise_item_marks_the_words_that_differ(store: Store) -> None:
    spec = rv.ReviewSpec(name="r", task_type="pairwise", annotators=["ann1"], per_annotator=5)
    review_id = rv.create_review(store.engine, spec, rv.items_from_run(store, "notes-1", spec), source="run:notes-1",
                                 created_by="admin")  # fmt: skip
    page = _client(store, "ann1").get(f"/reviews/{review_id}/items/0").text
    marked = re.findall(r'<mark class="diff-word">([^<]*)</mark>', page)
    assert "Take ibuprofen 400 mg with food twice a day. " in marked  # only in the first output
    assert "and ice " in marked  # only in the second
    assert not any("knee." in m for m in marked)  # shared by both: unmarked
