"""Adjudication of disagreeing labels (an adjudicator account settles them; the export keeps the originals) and an
annotator reopening a submitted review to edit their own labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient

from bedside.runs.store import Store
from bedside.web import adjudication as adj
from bedside.web import review as rv
from bedside.web import review_labels, review_meta
from bedside.web.app import create_app
from bedside.web.security import add_user
from web_support import PASSWORD, add_accounts, create_review, csrf_of, login


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = Store(str(tmp_path / "store.sqlite"))
    add_accounts(opened)
    add_user(opened.engine, "judy", PASSWORD, "adjudicator")
    yield opened
    opened.close()


def _client(store: Store, name: str) -> TestClient:
    client = TestClient(create_app(store))
    assert login(client, name).status_code == 303
    return client


def _label_agree(store: Store, review_id: str, votes: dict[str, list[bool]]) -> dict[str, str]:
    """Save each annotator's agree/disagree per item (in item order); returns item id by position."""
    items = review_labels.all_items(store.engine, review_id)
    by_position = {int(i["position"]): item_id for item_id, i in items.items()}
    for annotator, answers in votes.items():
        for position, agree in enumerate(answers):
            value: dict[str, Any] = {"agree": agree}
            if annotator == "ann2" and position == 0:
                value["comment"] = "a comment does not make a disagreement"
            review_labels.save_label(store.engine, review_id, by_position[position], annotator, value)
    return {str(p): i for p, i in by_position.items()}


def test_disagreements_are_listed_and_settled_with_the_originals_kept(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "agree", ["ann1", "ann2"], overlap=2)
    ids = _label_agree(store, review_id, {"ann1": [True, True, False], "ann2": [True, False, True]})
    found = adj.disputed(store.engine, review_id)
    assert [d.item_id for d in found] == [ids["1"], ids["2"]]  # item 0 agrees (its comment aside)

    judy = _client(store, "judy")
    listing = judy.get(f"/reviews/{review_id}/adjudicate")
    assert listing.status_code == 200
    assert "2 items in disagreement, 2 open" in listing.text
    assert "secret-system" not in listing.text  # blinded: the item's key never reaches the adjudicator
    page = judy.get(f"/reviews/{review_id}/adjudicate/1")
    assert "disagrees with the judge" in page.text
    assert "agrees with the judge" in page.text
    # no choice: refused with the reason, nothing stored
    refused = judy.post(f"/reviews/{review_id}/adjudicate/1", data={"csrf": csrf_of(page.text), "note": "x"})
    assert refused.status_code == 400
    assert "choose one of the annotators" in refused.text
    settled = judy.post(
        f"/reviews/{review_id}/adjudicate/1",
        data={"csrf": csrf_of(page.text), "chosen": "ann2", "note": "the reply misses the red flag"},
        follow_redirects=False,
    )
    assert settled.status_code == 303
    assert settled.headers["location"].endswith("/adjudicate/2")  # on to the next open item
    assert "2 items in disagreement, 1 open" in judy.get(f"/reviews/{review_id}/adjudicate").text

    # the annotators' labels are unchanged; the exports carry the adjudicated label and the originals
    assert {
        lab["annotator"]: lab["value"]["agree"]
        for lab in review_labels.all_labels(store.engine, review_id)
        if lab["item_id"] == ids["1"]
    } == {"ann1": True, "ann2": False}
    lines = [json.loads(x) for x in admin.get(f"/reviews/{review_id}/export?format=adjudicated").text.splitlines()]
    by_item = {line["item"]: line for line in lines}
    one = by_item[ids["1"]]
    assert one["label"] == {"agree": False}
    assert one["adjudicated"] is True
    assert one["adjudication"]["adjudicator"] == "judy"
    assert one["adjudication"]["note"] == "the reply misses the red flag"
    assert sorted((o["annotator"], o["label"]["agree"]) for o in one["originals"]) == [("ann1", True), ("ann2", False)]
    assert by_item[ids["0"]]["label"] == {"agree": True}  # agreed: the shared decision, not adjudicated
    assert by_item[ids["0"]]["adjudicated"] is False
    assert by_item[ids["2"]]["label"] is None  # still disputed: never passed off as settled
    assert by_item[ids["2"]]["disputed"] is True
    generic = [json.loads(x) for x in admin.get(f"/reviews/{review_id}/export?format=labels").text.splitlines()]
    assert {line["adjudicated"]["agree"] for line in generic if line["item"] == ids["1"]} == {False}
    assert "1 settled" in admin.get(f"/reviews/{review_id}/meta").text


def test_only_adjudicators_and_admins_adjudicate(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "agree", ["ann1", "ann2"], overlap=2)
    _label_agree(store, review_id, {"ann1": [True, True, True], "ann2": [False, True, True]})
    annotator = _client(store, "ann1")
    assert annotator.get(f"/reviews/{review_id}/adjudicate").status_code == 403
    token = csrf_of(annotator.get("/reviews").text)
    posted = annotator.post(f"/reviews/{review_id}/adjudicate/0", data={"csrf": token, "chosen": "ann1"})
    assert posted.status_code == 403
    assert adj.adjudications(store.engine, review_id) == {}
    judy = _client(store, "judy")
    assert judy.get("/runs/x").status_code == 403  # an adjudicator sees no run viewer
    assert judy.get(f"/reviews/{review_id}/meta").status_code == 403
    assert admin.get(f"/reviews/{review_id}/adjudicate/0").status_code == 200
    assert judy.get(f"/reviews/{review_id}/adjudicate/1").status_code == 404  # item 1 agrees: nothing to settle


def test_an_annotator_reopens_a_submitted_review_to_edit_their_labels(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "agree", ["ann1"], overlap=1)
    _label_agree(store, review_id, {"ann1": [True, True, True]})
    one = _client(store, "ann1")
    token = csrf_of(one.get(f"/reviews/{review_id}/done").text)
    assert one.post(f"/reviews/{review_id}/submit", data={"csrf": token}, follow_redirects=False).status_code == 303
    page = one.get(f"/reviews/{review_id}/items/0")
    assert "reopen" in page.text
    locked = one.post(f"/reviews/{review_id}/items/0", data={"csrf": token, "agree": "no"}, follow_redirects=False)
    assert locked.status_code == 409
    done = one.get(f"/reviews/{review_id}/done")
    assert "Reopen to edit my labels" in done.text
    reopened = one.post(f"/reviews/{review_id}/reopen", data={"csrf": token}, follow_redirects=False)
    assert reopened.status_code == 303
    edited = one.post(f"/reviews/{review_id}/items/0", data={"csrf": token, "agree": "no"}, follow_redirects=False)
    assert edited.status_code == 303
    item = rv.assignment(store.engine, review_id, "ann1", 0)
    assert item is not None
    assert item.label is not None
    assert item.label["agree"] is False
    assert rv.progress(store.engine, review_id, only="ann1")[0].submitted is False
    # someone else's review: nothing to reopen
    assert _client(store, "ann2").post(f"/reviews/{review_id}/reopen", data={"csrf": token}).status_code in (403, 404)


def test_rank_meta_evaluation_reports_agreement_on_the_ranks(store: Store) -> None:
    """Rank agreement covers the ranks (Kendall's W and τ between annotators), not only the flags."""
    admin = _client(store, "admin")
    review_id = create_review(admin, "rank", ["ann1", "ann2"], overlap=2)
    items = sorted(review_labels.all_items(store.engine, review_id).values(), key=lambda i: i["position"])
    orders = {"ann1": [[1, 2, 3], [1, 2, 3], [2, 1, 3]], "ann2": [[1, 2, 3], [3, 2, 1], [1, 2, 3]]}
    for annotator, per_item in orders.items():
        for item, ranks in zip(items, per_item, strict=True):
            value = {"outputs": [{"rank": r, "correct": True, "c1": False, "c2": False, "c3": False} for r in ranks]}
            review_labels.save_label(store.engine, review_id, item["item_id"], annotator, value)
    meta = review_meta.meta_evaluation(store.engine, review_id)
    found = {e.name: e for e in meta["inter"]}
    w = found["rank: Kendall's W between annotators (mean over items)"]
    tau = found["rank: Kendall τ-b between annotator pairs (mean over items)"]
    # per item, two raters: τ = 1, −1, 1/3; W = (1 + Spearman ρ) / 2 with ρ = 1, −1, 1/2 → W = 1, 0, 3/4
    assert tau.value == pytest.approx((1 - 1 + 1 / 3) / 3)
    assert w.value == pytest.approx((1 + 0 + 3 / 4) / 3)
    assert w.low is not None  # three items: an interval
    assert "Kendall&#39;s W between annotators" in admin.get(f"/reviews/{review_id}/meta").text


def test_the_cli_reports_the_same_meta_evaluation(store: Store) -> None:
    from typer.testing import CliRunner

    from bedside.cli import app

    admin = _client(store, "admin")
    review_id = create_review(admin, "agree", ["ann1", "ann2"], overlap=2)
    _label_agree(store, review_id, {"ann1": [True, True, False], "ann2": [True, False, False]})
    result = CliRunner().invoke(app, ["review", "meta", review_id, "--store", store.url, "--json"])
    assert result.exit_code == 0, result.output
    printed = {s["name"]: s["value"] for s in json.loads(result.output)["statistics"]}
    web = {
        e.name: e.value
        for group in ("inter", "judge")
        for e in review_meta.meta_evaluation(store.engine, review_id)[group]
    }
    assert printed == web
    assert printed["agree: percent agreement"] == pytest.approx(2 / 3)


def test_the_meta_page_counts_the_items_in_disagreement(store: Store) -> None:
    """The meta page's line once printed a dict method (``<built-in method items ...>``)."""
    admin = _client(store, "admin")
    review_id = create_review(admin, "agree", ["ann1", "ann2"], overlap=2)
    _label_agree(store, review_id, {"ann1": [True, True, False], "ann2": [True, False, True]})
    page = admin.get(f"/reviews/{review_id}/meta")
    assert page.status_code == 200
    from page_text import element_text

    assert element_text(page.text, "#disputed").startswith("2 items in disagreement, 0 settled")
