"""The review app in a real Chromium (Debian's `chromium`, driven by Playwright; never a downloaded browser):
log in, label one item of each task type with the keyboard only, resume after a reload, and watch the
meta-evaluation page update by itself. Screenshots go to the test's tmp folder (and to
$BEDSIDE_SCREENSHOTS when set, which is how docs/screenshots/ is made)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")
pytest.importorskip("uvicorn")

from bedside.runs.store import Store
from bedside.web import review as rv
from bedside.web import review_labels
from bedside.web.app import create_app
from web_support import PASSWORD, add_accounts, fill_run, items_jsonl, serve_in_thread

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="the browser test needs playwright (pip install playwright)"
)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH: install Debian's chromium (make does: apt-get install chromium)"
)


BUSY_MACHINE_MS = 120_000
"""How long Playwright waits for a page or an element: a hang guard, long enough for a machine busy with
other work (every wait is for an event on the page, never a fixed time)."""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Store, dict[str, str]]]:
    store = Store(str(tmp_path / "store.sqlite"))
    fill_run(store, "demo-run", 200, error_every=29)
    add_accounts(store)
    reviews = {}
    for task_type in rv.TASK_TYPES:
        spec = rv.ReviewSpec(
            name=f"{rv.TASK_TITLES[task_type]} (demo)",
            task_type=task_type,
            annotators=["ann1", "ann2"],
            per_annotator=10,
            overlap=2,
            seed=3,
            instructions="Label each item; keys are listed under every form.",
        )
        items = rv.items_from_jsonl(task_type, items_jsonl(task_type).decode())
        reviews[task_type] = rv.create_review(store.engine, spec, items, source="jsonl", created_by="admin")
    try:
        for base in serve_in_thread(create_app(store)):  # the port is bound and handed over: nobody can take it
            yield base, store, reviews
    finally:
        store.close()


def _shots(tmp_path: Path) -> list[Path]:
    folders = [tmp_path / "screenshots"]
    if os.environ.get("BEDSIDE_SCREENSHOTS"):
        folders.append(Path(os.environ["BEDSIDE_SCREENSHOTS"]))
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    return folders


def _shot(page: Any, folders: list[Path], name: str) -> None:
    first = folders[0] / f"{name}.png"
    page.screenshot(path=str(first), full_page=True)
    for folder in folders[1:]:
        shutil.copyfile(first, folder / f"{name}.png")


def _login(page: Any, base: str, name: str) -> None:
    page.goto(f"{base}/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert not page.url.endswith("/login"), "login failed"


def _label_with_keys(page: Any, task_type: str) -> None:
    """One item of ``task_type``, keyboard only."""
    keys = page.keyboard
    if task_type == "rank":
        keys.press("1")
        keys.press("ArrowDown")
        keys.press("2")
        keys.press("ArrowDown")
        keys.press("3")
        keys.press("w")  # C2 on the third output
    elif task_type == "pairwise":
        keys.press("a")
    elif task_type == "agree":
        keys.press("y")
        keys.press("c")
        keys.type("Reasoning matches the reply.")
        keys.press("Escape")
    elif task_type == "gold":
        keys.press("1")
        keys.type("Ibuprofen is fine with food for a few days.")
        keys.press("Escape")
        keys.press("2")
        keys.type("Tell us if the pain lasts beyond a week.")
        keys.press("Escape")
    elif task_type == "match":
        keys.press("x")  # the focused (first) draft sentence matches
    elif task_type == "evidence":
        keys.press("e")
        keys.press("ArrowDown")
        keys.press("n")


def test_label_every_task_type_with_the_keyboard(server: tuple[str, Store, dict[str, str]], tmp_path: Path) -> None:
    base, store, reviews = server
    folders = _shots(tmp_path)
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            admin = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            admin.set_default_timeout(BUSY_MACHINE_MS)
            _login(admin, base, "admin")
            _shot(admin, folders, "viewer-runs")
            admin.goto(f"{base}/runs/demo-run")
            _shot(admin, folders, "viewer-dashboard")
            admin.goto(f"{base}/runs/demo-run/samples?system=rag&metric=bleu&low=20&high=80")
            _shot(admin, folders, "viewer-samples")
            with admin.expect_navigation():
                admin.click("table.samples a >> nth=0")
            _shot(admin, folders, "viewer-sample")

            annotator = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            annotator.set_default_timeout(BUSY_MACHINE_MS)
            _login(annotator, base, "ann1")
            for task_type in rv.TASK_TYPES:
                review_id = reviews[task_type]
                annotator.goto(f"{base}/reviews/{review_id}")
                assert annotator.url.endswith("/items/0"), annotator.url
                _label_with_keys(annotator, task_type)
                _shot(annotator, folders, f"review-{task_type}")
                annotator.keyboard.press("Enter")
                annotator.wait_for_url(f"**/reviews/{review_id}/items/1")
                labels = review_labels.all_labels(store.engine, review_id)
                assert [lab["annotator"] for lab in labels] == ["ann1"], task_type
                value = labels[0]["value"]
                if task_type == "rank":
                    assert sorted(o["rank"] for o in value["outputs"]) == [1, 2, 3]
                    assert sum(o["c2"] for o in value["outputs"]) == 1
                elif task_type == "pairwise":
                    assert value["preference"] in (0, 1)
                elif task_type == "agree":
                    assert value == {"agree": True, "comment": "Reasoning matches the reply."}
                elif task_type == "gold":
                    assert value["boxes"]["follow-up"] == "Tell us if the pain lasts beyond a week."
                elif task_type == "match":
                    assert value["span"] == "Continue omeprazole every day."
                else:
                    assert value["relevance"] == {"1": "essential", "2": "not-relevant"}

                # resume after a reload: the review's address brings the annotator to the first open item
                annotator.reload()
                annotator.goto(f"{base}/reviews/{review_id}")
                assert annotator.url.endswith("/items/1"), annotator.url
                # and the saved item shows its label for editing ([ goes back)
                annotator.keyboard.press("[")
                annotator.wait_for_url(f"**/reviews/{review_id}/items/0")
                assert annotator.locator("input:checked").count() + annotator.locator("textarea").count() > 0

            # the meta-evaluation page updates by itself as labels arrive
            agree_id = reviews["agree"]
            two = rv.assignment(store.engine, agree_id, "ann2", 0)
            assert two is not None
            admin.goto(f"{base}/reviews/{agree_id}/meta")
            before = admin.locator("[data-live] p.meta").inner_text()
            assert before.startswith("1 labels")
            review_labels.save_label(store.engine, agree_id, two.item_id, "ann2", {"agree": True, "comment": ""})
            annotator.goto(f"{base}/reviews/{agree_id}/items/1")
            annotator.keyboard.press("n")
            annotator.keyboard.press("Enter")
            annotator.wait_for_url(f"**/reviews/{agree_id}/items/2")
            admin.wait_for_function(
                "() => document.querySelector('[data-live] p.meta').innerText.startsWith('3 labels')"
            )
            assert "labels agreeing with the judge" in admin.locator("#judge").inner_text()
            _shot(admin, folders, "review-meta")
        finally:
            browser.close()
    assert len(list(folders[0].glob("*.png"))) == 11


def test_a_simulated_conversation_opens_on_its_transcript(server: tuple[str, Store, dict[str, str]]) -> None:
    """A DischargeSim or MedAgent sample: the transcript is in the first screen, the long case collapsed below."""
    from bedside.runs.store import ResultRow

    base, store, _ = server
    case = {"summary": "Admitted with pneumonia.", "medications": [f"drug {i}: 1 tablet daily" for i in range(300)]}
    transcript = [
        {"role": "doctor", "content": "You are going home today. Let us go over your medicines.", "stage": "intro"},
        {"role": "patient", "content": "Which ones do I keep taking?", "stage": "intro"},
    ]
    output = {"text": "doctor: ...", "transcript": transcript, "trace": [], "prompts": [], "extra": {}}
    store.begin_run("conv-444", "conv", "discharge", {})
    store.write(
        [
            ResultRow(
                "conv-444",
                "c",
                "s1",
                0,
                "d",
                "sys",
                "m",
                "k",
                "ok",
                None,
                output,
                {},
                {},
                {},
                {"inputs": {"case": case}},
            )
        ]
    )
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.set_default_timeout(BUSY_MACHINE_MS)
            _login(page, base, "admin")
            page.goto(f"{base}/runs/conv-444/sample?cell=c&sample=s1&epoch=0")
            first_turn = page.locator("ol.transcript li").first.bounding_box()
            assert first_turn is not None
            assert first_turn["y"] < 900  # on the first screen, without scrolling
            panel = page.locator("details.case")
            assert panel.get_attribute("open") is None
            assert not page.get_by_text("drug 299: 1 tablet daily").is_visible()
            panel.locator("summary").click()
            assert page.get_by_text("drug 299: 1 tablet daily", exact=False).is_visible()
        finally:
            browser.close()
