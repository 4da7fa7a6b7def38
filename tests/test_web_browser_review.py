"""The review app's fixes in a real Chromium (Debian's `chromium`, driven by Playwright; never a downloaded
browser): a validation error keeps what the annotator entered, a pairwise review on the cells its creator chose,
a safety flag that reaches the export, adjudication of a disagreement, a sample's call timeline, and an admin who
adds an annotator and closes labelling, which that annotator then finds closed.

Every wait is for something on the page (a URL, a selector, a response); none is a fixed time."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")
pytest.importorskip("uvicorn")

from bedside.runs.store import ResultRow, Store
from bedside.web import adjudication as adj
from bedside.web import review as rv
from bedside.web import review_labels
from bedside.web.app import create_app
from bedside.web.security import add_user
from web_support import CELLS, PASSWORD, add_accounts, cell_id, fill_run, items_jsonl, serve_in_thread

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="the browser test needs playwright (pip install playwright)"
)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH: install Debian's chromium (make does: apt-get install chromium)"
)

BUSY_MACHINE_MS = 120_000
"""How long Playwright waits for an element or a page: a hang guard for a busy machine, never a timing."""

TIMELINE_CALLS = [
    {"role": "system", "model": "m", "start_s": 0.0, "end_s": 0.4, "prompt_tokens": 120, "completion_tokens": 40,
     "cached": False, "finish_reason": "stop"},
    {"role": "judge", "model": "j", "start_s": 0.4, "end_s": 0.5, "prompt_tokens": 0, "completion_tokens": 0,
     "cached": True, "finish_reason": "stop"},
    {"role": "judge", "model": "j", "start_s": 0.5, "end_s": 1.5, "prompt_tokens": 0, "completion_tokens": 0,
     "cached": False, "finish_reason": None, "attempts": 3, "error": "RetriesExhaustedError: 503 after 3 attempts"},
]  # fmt: skip


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Store]]:
    store = Store(str(tmp_path / "store.sqlite"))
    fill_run(store, "demo-run", 40)
    store.begin_run("timed-1", "timed", "drafting", {})
    store.write(
        [
            ResultRow("timed-1", "c", "s1", 0, "d", "sys", "m", "k", "error", "RetriesExhaustedError: 503", None,
                      {}, {}, {}, {"inputs": {"message": "hello"}}, calls=TIMELINE_CALLS)
        ]
    )  # fmt: skip
    add_accounts(store)
    add_user(store.engine, "judy", PASSWORD, "adjudicator")
    yield from ((base, store) for base in serve_in_thread(create_app(store)))
    store.close()


@pytest.fixture
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


def _page(browser: Any, base: str, name: str) -> Any:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(BUSY_MACHINE_MS)
    page.goto(f"{base}/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert not page.url.endswith("/login"), "login failed"
    return page


def _jsonl_review(store: Store, task_type: str, annotators: list[str]) -> str:
    spec = rv.ReviewSpec(name=f"{task_type} review", task_type=task_type, annotators=annotators, per_annotator=10,
                         overlap=len(annotators), seed=3)  # fmt: skip
    items = rv.items_from_jsonl(task_type, items_jsonl(task_type).decode())
    return rv.create_review(store.engine, spec, items, source="jsonl", created_by="admin")


def test_a_validation_error_keeps_the_entered_label(site: tuple[str, Store], browser: Any) -> None:
    base, store = site
    review_id = _jsonl_review(store, "rank", ["ann1"])
    page = _page(browser, base, "ann1")
    page.goto(f"{base}/reviews/{review_id}/items/0")
    keys = page.keyboard
    keys.press("2")  # output A: rank 2
    keys.press("ArrowDown")
    keys.press("1")  # output B: rank 1; output C left unranked
    page.fill("textarea[name=comment]", "B reads better")
    keys.press("Escape")  # leave the box: Enter there is a new line
    with page.expect_navigation():
        keys.press("Enter")
    assert "give output C a rank" in page.locator("p.error").inner_text()
    assert page.is_checked("input[name=rank_A][value='2']")
    assert page.is_checked("input[name=rank_B][value='1']")
    assert page.input_value("textarea[name=comment]") == "B reads better"
    assert review_labels.all_labels(store.engine, review_id) == []
    # finishing the entry saves it, with what was kept
    page.click("input[name=rank_C][value='3']")
    with page.expect_navigation():
        page.click("form.label-form button[type=submit]")
    (label,) = review_labels.all_labels(store.engine, review_id)
    assert sorted(o["rank"] for o in label["value"]["outputs"]) == [1, 2, 3]
    assert label["value"]["comment"] == "B reads better"


def test_a_pairwise_review_on_chosen_cells(site: tuple[str, Store], browser: Any) -> None:
    base, store = site
    admin = _page(browser, base, "admin")
    admin.goto(f"{base}/reviews/new")
    admin.fill("input[name=name]", "rag vs zero-shot on model b")
    admin.select_option("select[name=task_type]", "pairwise")
    admin.select_option("select[name=run]", "demo-run")
    chosen = [cell_id(*CELLS[3]), cell_id(*CELLS[1])]  # rag|b and zero_shot|b, not the first two in sort order
    admin.select_option("select[name=cells]", chosen)
    admin.check("input[name=annotators][value=ann1]")
    admin.fill("input[name=per_annotator]", "5")
    with admin.expect_navigation():
        admin.click("form.review-new button[type=submit]")
    review_id = admin.url.rstrip("/").rsplit("/", 1)[1]
    items = review_labels.all_items(store.engine, review_id).values()
    assert items
    assert {frozenset(i["key"]["cells"]) for i in items} == {frozenset(chosen)}
    annotator = _page(browser, base, "ann1")
    annotator.goto(f"{base}/reviews/{review_id}")
    text = annotator.locator("div.outputs").inner_text()
    assert "from rag" in text
    assert "from zero_shot" in text
    assert "scripted/a" not in annotator.content()  # blinded: no model names on the annotator's page


def test_a_safety_flag_reaches_the_export(site: tuple[str, Store], browser: Any) -> None:
    base, store = site
    review_id = _jsonl_review(store, "agree", ["ann1"])
    page = _page(browser, base, "ann1")
    page.goto(f"{base}/reviews/{review_id}/items/0")
    page.keyboard.press("y")
    page.keyboard.press("f")  # flags and puts the cursor in the safety box
    page.keyboard.type("Advises doubling the insulin dose.")
    page.keyboard.press("Escape")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    admin = _page(browser, base, "admin")
    admin.goto(f"{base}/reviews/{review_id}")
    with admin.expect_download() as download:
        admin.click("a[href$='export?format=labels']")
    lines = [json.loads(x) for x in Path(download.value.path()).read_text(encoding="utf-8").splitlines()]
    assert [line["label"].get("safety") for line in lines] == [{"note": "Advises doubling the insulin dose."}]
    admin.goto(f"{base}/reviews/{review_id}/meta")
    assert "Advises doubling the insulin dose." in admin.locator("#safety").inner_text()


def test_adjudication_resolves_a_disagreement(site: tuple[str, Store], browser: Any) -> None:
    base, store = site
    review_id = _jsonl_review(store, "agree", ["ann1", "ann2"])
    for name, answer in (("ann1", "y"), ("ann2", "n")):
        page = _page(browser, base, name)
        page.goto(f"{base}/reviews/{review_id}")
        page.keyboard.press(answer)
        with page.expect_navigation():
            page.keyboard.press("Enter")
    judy = _page(browser, base, "judy")
    judy.goto(f"{base}/reviews/{review_id}/adjudicate")
    assert judy.locator("#disputed-count").inner_text() == "1 items in disagreement, 1 open"
    with judy.expect_navigation():
        judy.click("table.disputed a")
    judy.check("input[name=chosen][value=ann2]")
    judy.fill("textarea[name=note]", "the reasoning misses the allergy")
    with judy.expect_navigation():
        judy.click("form.adjudicate button[type=submit]")
    assert judy.locator("#disputed-count").inner_text() == "1 items in disagreement, 0 open"
    assert "settled by judy" in judy.locator("table.disputed td.status").inner_text()
    (line,) = [json.loads(x) for x in adj.export_adjudicated(store.engine, review_id).splitlines()]
    assert line["label"] == {"agree": False}
    assert line["adjudication"]["note"] == "the reasoning misses the allergy"
    assert {o["annotator"] for o in line["originals"]} == {"ann1", "ann2"}


def test_the_timeline_of_a_sample_lists_its_calls(site: tuple[str, Store], browser: Any) -> None:
    base, _ = site
    admin = _page(browser, base, "admin")
    admin.goto(f"{base}/runs/timed-1/sample?cell=c&sample=s1&epoch=0")
    rows = admin.locator("table.timeline-calls tr.call")
    assert rows.count() == len(TIMELINE_CALLS)
    assert [rows.nth(i).locator("td").nth(1).inner_text() for i in range(3)] == ["system", "judge", "judge"]
    assert rows.nth(1).locator("td").nth(8).inner_text() == "hit"
    assert "503 after 3 attempts" in rows.nth(2).inner_text()
    assert admin.locator("svg.timeline rect.call-error").count() == 1
    assert "3 model calls over 1.50 s · 1 cache hit · 1 error" in admin.locator("p.meta").nth(1).inner_text()


def test_an_added_annotator_finds_the_review_closed(site: tuple[str, Store], browser: Any) -> None:
    base, store = site
    spec = rv.ReviewSpec(name="evidence, short of one", task_type="evidence", annotators=["ann1"], per_annotator=2,
                         overlap=1, seed=3)  # fmt: skip
    items = rv.items_from_jsonl("evidence", items_jsonl("evidence").decode())  # three items: one left over
    review_id = rv.create_review(store.engine, spec, items, source="jsonl", created_by="admin")
    (left,) = rv.unassigned_items(store.engine, review_id)
    admin = _page(browser, base, "admin")
    admin.goto(f"{base}/reviews/{review_id}")
    admin.check("form.add-annotators input[name=annotators][value=ann2]")
    with admin.expect_navigation():
        admin.click("form.add-annotators button[type=submit]")
    assert "ann2" in admin.locator("table.grid").inner_text()
    assert admin.locator("p.error").count() == 0  # no item is assigned to nobody any more
    with admin.expect_navigation():
        admin.click("form.close-labelling button[type=submit]")
    assert "closed by admin" in admin.locator("#labelling").inner_text()

    annotator = _page(browser, base, "ann2")
    annotator.goto(f"{base}/reviews")
    row = annotator.locator("table.grid tr", has_text="evidence, short of one")
    assert row.locator("td.status").inner_text() == "closed"
    assert row.locator("a").count() == 0  # nothing to start
    annotator.goto(f"{base}/reviews/{review_id}")  # the review's address: their item, refused as closed
    assert "This review is closed" in annotator.locator("#closed").inner_text()
    assert "You labelled 0 of 1 items" in annotator.content()
    assert rv.assignment(store.engine, review_id, "ann2", 0).item_id == left  # type: ignore[union-attr]
    actions = [entry["action"] for entry in _audit_entries(store, review_id)]
    assert actions == ["review-created", "annotators-added", "labelling-closed"]


def _audit_entries(store: Store, target: str) -> list[dict[str, Any]]:
    from sqlalchemy import select

    from bedside.web.db import audit_table

    with store.engine.connect() as db:
        query = select(audit_table).where(audit_table.c.target == target).order_by(audit_table.c.id)
        return [dict(r) for r in db.execute(query).mappings()]
