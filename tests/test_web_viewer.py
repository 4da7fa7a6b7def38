"""The run viewer: runs list, dashboard, sample browser (filters, keyset paging), one sample, two runs side by side."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient

from bedside.runs.store import Store
from bedside.web import browse
from bedside.web.app import create_app
from page_text import element_texts
from web_support import BACKENDS, CELLS, add_accounts, cell_id, fill_run, login, postgres_store


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    made = postgres_store() if request.param == "postgres" else None
    opened = next(made) if made is not None else Store(str(tmp_path / "store.sqlite"))
    fill_run(opened, "alpha-111", 400)
    fill_run(opened, "beta-222", 200)
    add_accounts(opened)
    yield opened
    if made is not None:
        with pytest.raises(StopIteration):
            next(made)
    else:
        opened.close()


@pytest.fixture
def admin(store: Store) -> TestClient:
    client = TestClient(create_app(store))
    assert login(client, "admin").status_code == 303
    return client


def test_runs_list_shows_counts_and_cost(admin: TestClient) -> None:
    page = admin.get("/")
    assert page.status_code == 200
    assert "alpha-111" in page.text
    assert "beta-222" in page.text
    summary = browse._summarise(admin.app.state.store, {"id": "alpha-111", "status": "finished"})  # type: ignore[attr-defined]
    assert summary.samples == 400
    assert len(summary.cells) == 4
    assert summary.errors == sum(1 for c in range(4) for i in range(100) if (i + c) % 97 == 0)
    assert f"{summary.cost:.4f}" in page.text
    assert summary.strata == {"urgency": ["high", "low"]}


def test_dashboard_has_report_tables_with_intervals(admin: TestClient) -> None:
    page = admin.get("/runs/alpha-111")
    assert page.status_code == 200
    assert "Results by cell" in page.text
    assert "Usage by role" in page.text
    first = element_texts(page.text, "table")[0]  # results by cell: each mean with its interval and n
    assert re.search(r"\d\.\d{3} \[\d+\.\d{3}, \d+\.\d{3}\] n=\d+", first), first
    assert admin.get("/runs/nope").status_code == 404


def _ids(html: str) -> list[str]:
    import re

    return re.findall(r"sample=(s\d{6})&amp;epoch", html)


def test_sample_browser_pages_by_key_through_every_sample(admin: TestClient) -> None:
    seen: list[str] = []
    url = "/runs/alpha-111/samples"
    pages = 0
    while url:
        page = admin.get(url)
        assert page.status_code == 200
        seen += _ids(page.text)
        pages += 1
        import re

        nxt = re.search(r'<a rel="next" href="([^"]+)"', page.text)
        url = "/runs/alpha-111/samples" + nxt.group(1).replace("&amp;", "&") if nxt else ""
    assert len(seen) == 400
    assert pages == 8
    # back one page from the third
    store = admin.app.state.store  # type: ignore[attr-defined]
    summary = browse._summarise(store, {"id": "alpha-111", "status": "finished"})
    first = browse.sample_page(store, summary, browse.SampleFilter())
    second = browse.sample_page(store, summary, browse.SampleFilter(), after=first.after)
    back = browse.sample_page(store, summary, browse.SampleFilter(), before=second.before)
    assert [r["sample_id"] for r in back.rows] == [r["sample_id"] for r in first.rows]
    assert back.before is None


def test_sample_filters(admin: TestClient) -> None:
    store = admin.app.state.store  # type: ignore[attr-defined]
    summary = browse._summarise(store, {"id": "alpha-111", "status": "finished"})

    def every(flt: browse.SampleFilter) -> list[dict[str, Any]]:
        rows, page = [], browse.sample_page(store, summary, flt, size=37)
        rows += page.rows
        while page.after:
            page = browse.sample_page(store, summary, flt, after=page.after, size=37)
            rows += page.rows
        return rows

    assert {r["system"] for r in every(browse.SampleFilter(system="rag"))} == {"rag"}
    assert len(every(browse.SampleFilter(system="rag", model="scripted/a"))) == 100
    errors = every(browse.SampleFilter(errors_only=True))
    assert errors
    assert all(r["status"] == "error" for r in errors)
    assert len(errors) == summary.errors
    ranged = every(browse.SampleFilter(metric="bleu", low=10, high=20))
    assert ranged
    assert all(10 <= r["scores"]["bleu"] <= 20 for r in ranged)
    high = every(browse.SampleFilter(stratum="urgency=high"))
    assert high
    assert all(r["strata"]["urgency"] == "high" for r in high)
    assert every(browse.SampleFilter(dataset="nope")) == []
    page = admin.get("/runs/alpha-111/samples?system=rag&metric=bleu&low=10&high=20&errors=")
    assert page.status_code == 200
    assert "zero_shot" not in page.text.split("<table")[1].split("</table>")[0].split("</tr>", 1)[1]
    assert admin.get("/runs/alpha-111/samples?low=abc").status_code == 400
    assert admin.get("/runs/alpha-111/samples?after=%5B1").status_code == 400


def test_one_sample_end_to_end(admin: TestClient) -> None:
    cell = cell_id(*CELLS[2])
    page = admin.get(f"/runs/alpha-111/sample?cell={quote(cell)}&sample=s000001&epoch=0")
    assert page.status_code == 200
    for text in (
        "Patient message 1: my knee hurts.",
        "Draft reply 1 from rag",
        "Reply to message 1.",
        "Reference reply 1.",
        "bleu",
        "prompt 1",
    ):
        assert text in page.text
    error_page = admin.get(f"/runs/alpha-111/sample?cell={quote(cell_id(*CELLS[0]))}&sample=s000000&epoch=0")
    assert "RetriesExhaustedError" in error_page.text
    assert admin.get(f"/runs/alpha-111/sample?cell={quote(cell)}&sample=nope&epoch=0").status_code == 404


def test_transcript_and_task_sections_render_escaped(store: Store, admin: TestClient) -> None:
    from bedside.runs.store import ResultRow

    store.begin_run("conv-333", "conv", "runs_multiturn_task:TASK", {})
    store.write(
        [
            ResultRow(
                "conv-333",
                "c",
                "s1",
                0,
                "d",
                "sys",
                "m",
                "k",
                "ok",
                None,
                {
                    "text": "t",
                    "transcript": [
                        {"role": "doctor", "content": "Hello <b>there</b>", "stage": "intro"},
                        {"role": "patient", "content": "Hi", "stage": "intro"},
                    ],
                    "trace": [{"decision": "advance", "calls": {"system": 1}}],
                    "prompts": [],
                    "extra": {},
                },
                {},
                {},
                {},
                {"inputs": {"case": {"diagnosis": "CASE-DIAGNOSIS", "notes": ["n"] * 300}}},
            )
        ]
    )
    page = admin.get("/runs/conv-333/sample?cell=c&sample=s1&epoch=0")
    assert page.status_code == 200
    assert "Hello &lt;b&gt;there&lt;/b&gt;" in page.text
    assert "<b>there</b>" not in page.text
    assert "trace (exchange 1)" in page.text
    assert "advance" in page.text
    # The page opens on the conversation; the case (a long JSON record) waits in a collapsed panel below it.
    html = page.text
    assert html.index('<ol class="transcript">') < html.index("CASE-DIAGNOSIS")
    panel = html[html.rindex("<details", 0, html.index("CASE-DIAGNOSIS")) :]
    assert panel.startswith('<details class="case">')  # closed: no "open" attribute
    assert panel.index("CASE-DIAGNOSIS") < panel.index("</details>")


def test_highlight_parts() -> None:
    parts = browse.highlight_parts(
        "abcdef", [{"start": 1, "end": 3, "label": "EM"}, {"start": 2, "end": 5, "label": "x"}]
    )
    assert parts == [("a", None), ("bc", "EM"), ("de", "x"), ("f", None)]


def test_two_runs_side_by_side(admin: TestClient) -> None:
    page = admin.get("/compare?a=alpha-111&b=beta-222")
    assert page.status_code == 200
    assert "Draft reply 1 from rag" in page.text
    later = admin.get(f"/compare?a=alpha-111&b=beta-222&after={quote(json.dumps(['s000049', 0]))}")
    assert "not in this run" in later.text  # beta has 50 samples per cell, alpha 100
    pair = f"{cell_id(*CELLS[3])}|{cell_id(*CELLS[3])}"
    page = admin.get(f"/compare?a=alpha-111&b=beta-222&pair={quote(pair)}&after={quote(json.dumps(['s000010', 0]))}")
    assert page.status_code == 200
    assert "Draft reply 11 from rag" in page.text
    assert "Draft reply 5 from" not in page.text


def test_summary_cache_follows_new_samples(store: Store, admin: TestClient) -> None:
    summaries = admin.app.state.summaries  # type: ignore[attr-defined]
    before = summaries.summary({"id": "beta-222"})
    fill_run(store, "beta-222", 240)
    run = next(r for r in store.runs() if r["id"] == "beta-222")
    browse.SUMMARY_TTL_S, saved = 0.0, browse.SUMMARY_TTL_S
    try:
        assert summaries.summary(run).samples == 240 != before.samples
    finally:
        browse.SUMMARY_TTL_S = saved


def test_store_indexes_exist(store: Store) -> None:
    from sqlalchemy import inspect

    names = {i["name"] for i in inspect(store.engine).get_indexes("results")}
    assert "ix_results_run_status_key" in names
    assert "ix_scores_run_metric_value" in {i["name"] for i in inspect(store.engine).get_indexes("scores")}
