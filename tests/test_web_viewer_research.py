"""The researcher's viewer: search, sort and output preview in the sample list, a run's failures across its grid,
live progress of a running run, and the compare page's difference with its CI and word-level diff."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from statistics import fmean
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient

from bedside.runs.store import ResultRow, Store
from bedside.web import browse
from bedside.web.app import create_app
from web_support import CELLS, add_accounts, cell_id, fill_run, login


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(str(tmp_path / "store.sqlite"))
    fill_run(opened, "alpha-111", 200, error_every=13)
    fill_run(opened, "beta-222", 200, error_every=17)
    add_accounts(opened)
    yield opened
    opened.close()


@pytest.fixture
def admin(store: Store) -> TestClient:
    client = TestClient(create_app(store))
    assert login(client, "admin").status_code == 303
    return client


def _ids(html: str) -> list[str]:
    return re.findall(r"sample=([^&\"]+)&amp;epoch", html.split('class="grid samples"')[1])


def test_search_finds_words_in_outputs_ids_and_errors(store: Store, admin: TestClient) -> None:
    summary = browse._summarise(store, {"id": "alpha-111", "status": "finished"})
    found = browse.sample_page(store, summary, browse.SampleFilter(search="DRAFT REPLY 7 FROM RAG"), size=500)
    assert {(r["system"], r["sample_id"]) for r in found.rows} == {("rag", "s000007")}
    assert found.rows[0]["preview"].startswith("Draft reply 7 from rag")
    by_error = browse.sample_page(store, summary, browse.SampleFilter(search="429 after"), size=500)
    assert by_error.rows
    assert all(r["status"] == "error" for r in by_error.rows)
    assert len(by_error.rows) == summary.errors
    assert browse.sample_page(store, summary, browse.SampleFilter(search="100%_"), size=500).rows == []  # escaped
    page = admin.get("/runs/alpha-111/samples?q=reply+7+from+zero_shot")
    assert page.status_code == 200
    assert _ids(page.text) == ["s000007", "s000007"]  # two models
    assert "Draft reply 7 from zero_shot: please keep taking" in page.text  # the preview


def test_sort_by_a_score_both_ways_pages_through_every_sample(store: Store, admin: TestClient) -> None:
    summary = browse._summarise(store, {"id": "alpha-111", "status": "finished"})
    rows: list[dict[str, object]] = []
    page = 0
    while True:
        found, more = browse.sorted_sample_page(store, summary, browse.SampleFilter(sort="-bleu"), page, size=30)
        rows += found
        if not more:
            break
        page += 1
    assert len(rows) == summary.samples
    scored = [r["scores"]["bleu"] for r in rows if r["status"] == "ok"]  # type: ignore[index]
    assert scored == sorted(scored, reverse=True)
    assert all(r["status"] == "error" for r in rows[len(scored) :])  # unscored last
    up = admin.get("/runs/alpha-111/samples?sort=bleu&system=rag")
    assert up.status_code == 200
    values = [float(v) for v in re.findall(r'<td class="n">([0-9.]+)</td>', up.text.split('class="grid samples"')[1])]
    bleu = values[::2]  # bleu, judge per row
    assert bleu == sorted(bleu)
    assert 'rel="next" href="?sort=bleu&amp;system=rag&amp;page=1"' in up.text
    assert admin.get("/runs/alpha-111/samples?sort=bleu&page=x").status_code == 400
    assert admin.get("/runs/alpha-111/samples?sort=nope").status_code == 200  # an unknown score: key order


def test_failures_across_the_grid(store: Store, admin: TestClient) -> None:
    found = browse.failures(store, "alpha-111")
    summary = browse._summarise(store, {"id": "alpha-111", "status": "finished"})
    assert sum(f.count for f in found) == summary.errors
    assert {f.cell for f in found} == {c.cell for c in summary.cells if c.errors}
    assert {f.cause for f in found} == {"RetriesExhaustedError"}
    page = admin.get("/runs/alpha-111/failures")
    assert page.status_code == 200
    assert f"{summary.errors} of {summary.samples} samples failed" in page.text
    assert "429 after 6 attempts" in page.text
    assert page.text.count("<tr>") == len(found) + 1


def test_live_progress_of_a_running_run(store: Store, admin: TestClient) -> None:
    store.begin_run("live-333", "live", "drafting", {})
    lock = store.lock_run("live-333")  # held by this (live) process: the run is running, not stale
    row = ResultRow("live-333", "c1", "s1", 0, "d", "s", "m", "k", "ok", None, {"text": "x"}, {}, {}, {}, {})
    store.write([row])
    first = admin.get("/runs/live-333/progress")
    assert first.status_code == 200
    assert "status running · 1 samples stored, 0 errors" in first.text
    assert 'data-live="/runs/live-333/progress"' in first.text
    store.write([ResultRow("live-333", "c2", "s1", 0, "d", "s", "m", "k", "error", "boom", None, {}, {}, {}, {})])
    assert "2 samples stored, 1 errors" in admin.get("/runs/live-333/progress").text
    assert "live progress" in admin.get("/runs/live-333").text
    assert [(c.cell, c.done, c.errors) for c in browse.progress(store, "live-333")] == [("c1", 1, 0), ("c2", 1, 1)]
    from page_text import element_text

    assert element_text(admin.get("/runs/live-333/progress").text, "#run-progress").startswith(
        "status running · 2 samples stored"  # no plan recorded: no total claimed
    )
    from datetime import datetime, timedelta

    from sqlalchemy import update

    from bedside.runs.store import results_table

    def finished(offsets: dict[str, float]) -> None:  # the rows' stored times, set here, not by the clock
        start = datetime(2026, 11, 29, 12, 0, 0)
        with store.engine.begin() as db:
            for cell, offset in offsets.items():
                db.execute(
                    update(results_table)
                    .where((results_table.c.run_id == "live-333") & (results_table.c.cell == cell))
                    .values(finished_at=start + timedelta(seconds=offset))
                )

    store.set_planned("live-333", {"c1": 3, "c2": 2, "c3": 4})
    finished({"c1": 0, "c2": 0})  # written at once (a slow machine may have written them a second apart)
    progress = admin.get("/runs/live-333/progress").text
    assert element_text(progress, "#run-progress").startswith("status running · 2 of 9 samples stored, 1 errors")
    assert [c.total for c in browse.progress(store, "live-333")] == [3, 2, 4]  # c3: planned, nothing stored yet
    assert "left at" not in element_text(progress, "#run-progress")  # two rows written at once: no pace yet
    # the time left: the samples still to do (7) at the last minute's pace (2 rows 2 s apart: 0.5 a second)
    finished({"c1": 0, "c2": 2})
    assert browse.pace(store, "live-333") == pytest.approx(0.5)
    shown = element_text(admin.get("/runs/live-333/progress").text, "#run-progress")
    assert "2 of 9 samples stored, 1 errors · under a minute left at the last minute's pace (0.5 samples/s)" in shown
    assert browse.time_left(browse.progress(store, "live-333"), 0.25) == "under a minute"  # 7 / 0.25 = 28 s
    assert browse.time_left(browse.progress(store, "live-333"), 0.01) == "about 12 min"  # 700 s
    assert browse.time_left(browse.progress(store, "live-333"), None) is None

    dashboard = admin.get("/runs/live-333").text  # its header counts what its own table shows, and says it is not live
    assert "2 samples, 1 errors" in element_text(dashboard, "#run-counts")
    assert element_text(dashboard, "#still-running").startswith(
        "This run is still running: every figure on this page is of the 2 samples stored when it was drawn"
    )
    store.unlock_run(lock)


def test_compare_shows_the_difference_with_its_ci_and_a_word_diff(store: Store, admin: TestClient) -> None:
    pair = f"{cell_id(*CELLS[2])}|{cell_id(*CELLS[2])}"
    page = admin.get(f"/compare?a=alpha-111&b=beta-222&pair={quote(pair)}")
    assert page.status_code == 200
    cell = cell_id(*CELLS[2])
    (judge,) = browse.paired_metrics(store, "alpha-111", cell, "beta-222", cell, ["judge"])
    a = {r.sample_id: r.scores.get("judge") for r in store.results("alpha-111") if r.cell == cell_id(*CELLS[2])}
    b = {r.sample_id: r.scores.get("judge") for r in store.results("beta-222") if r.cell == cell_id(*CELLS[2])}
    both = [(float(x), float(y)) for k, x in a.items() if x is not None and (y := b.get(k)) is not None]
    assert judge.n == len(both)
    assert judge.difference == pytest.approx(fmean(y for _, y in both) - fmean(x for x, _ in both))
    assert judge.low <= judge.difference <= judge.high
    assert "B − A over the samples both scored" in page.text
    assert f'<td>judge</td><td class="n">{judge.n}</td>' in page.text


def test_word_diff_marks_what_changed() -> None:
    parts_a, parts_b = browse.word_diff("Take one tablet daily with food.", "Take two tablets daily with food.")
    assert [p for p, changed in parts_a if changed] == ["one tablet "]
    assert [p for p, changed in parts_b if changed] == ["two tablets "]
    assert "".join(p for p, _ in parts_a) == "Take one tablet daily with food."
    same_a, same_b = browse.word_diff("no change here", "no change here")
    assert not any(c for _, c in same_a + same_b)


def test_compare_pairs_two_models_of_one_run(store: Store, admin: TestClient) -> None:
    """One run against itself: every two cells of a dataset and system, model against model (as ``bedside compare
    RUN --a model=X --b model=Y`` pairs them)."""
    summary = browse.RunSummary(store.run("alpha-111"), [], 0, 0, 0.0, [], {})
    summary.cells = [browse.CellSummary(cell_id(*c), *c) for c in CELLS]
    pairs = browse.matched_cells(summary, summary)
    assert pairs
    assert all(a != b and a.split("|")[:2] == b.split("|")[:2] for a, b in pairs)
    page = admin.get("/compare?a=alpha-111&b=alpha-111")
    assert page.status_code == 200
    assert "Compare two runs, or two cells of one run" in page.text
    assert f"{cell_id(*CELLS[0])} ↔ {cell_id(*CELLS[1])}" in page.text  # zero_shot: model a against model b
