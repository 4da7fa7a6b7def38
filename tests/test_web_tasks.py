"""Task-aware views and review items through the tasks' hooks (``web_sections``, ``review_items``), on real runs
of the drafting and grounded-QA tasks against the scripted server."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient

from bedside.runs import Store, execute, load_config
from bedside.testing import ScriptedServer
from bedside.web import review as rv
from bedside.web.app import create_app
from web_support import add_accounts, login

DRAFT = "I'm sorry the cough is keeping you up. Please keep taking it for now. Our team will review your chart."
DRAFTING_RULES = [
    (r"Clinician sentence:\s*I'm sorry the cough", "I'm sorry the cough is keeping you up."),
    (r"Clinician sentence:", "NO MATCH"),
    (r"Sentence:", '{"theme": "other"}'),
    (r"Patient(?:'s)? message:", DRAFT),
]
CITEQA_RULES = [
    (
        r"Note sentences:",
        json.dumps(
            {"relevant": ["1"], "statements": [{"statement": "He needs two antiplatelet drugs.", "citations": ["1"]}]}
        ),
    )
]


def _run(tmp_path: Path, server: ScriptedServer, config: dict[str, Any]) -> Store:
    config = {**config, "store": str(tmp_path / "store.sqlite"), "concurrency": 2}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    summary = asyncio.run(execute(load_config(path), cache=False))
    assert summary is not None
    store = Store(str(tmp_path / "store.sqlite"))
    add_accounts(store)
    return store


def _sample_page(client: TestClient, store: Store) -> str:
    run = store.runs()[0]
    row = next(r for r in store.results(run["id"]) if r.status == "ok")
    page = client.get(
        f"/runs/{run['id']}/sample?cell={quote(row.cell)}&sample={quote(row.sample_id)}&epoch={row.epoch}"
    )
    assert page.status_code == 200
    return page.text


def test_drafting_views_and_review_items(tmp_path: Path) -> None:
    with ScriptedServer(DRAFTING_RULES) as server:
        store = _run(
            tmp_path,
            server,
            {
                "name": "drafting-web",
                "task": "drafting",
                "datasets": {"demo": {"limit": 2}},
                "systems": {"z": {"type": "zero_shot", "options": {"matcher": "llm"}}},
                "models": {"system": [server.model_name("drafter")], "judge": [server.model_name("judge")]},
            },
        )
    client = TestClient(create_app(store))
    login(client, "admin")
    html = _sample_page(client, store)
    assert "EditJudge decisions" in html
    assert re.search(r'<mark class="hl hl-EM" title="EM">I&#39;m sorry the cough is keeping you up.</mark>', html)
    assert 'class="hl hl-ED"' in html
    assert 'class="hl hl-EA"' in html
    run_id = store.runs()[0]["id"]
    spec = rv.ReviewSpec("m", "match", ["ann1"], per_annotator=100)
    items = rv.items_from_run(store, run_id, spec)
    assert items
    assert all(payload["draft"] == DRAFT for _, payload, _ in items)
    assert {key["judge"] for _, _, key in items} >= {"I'm sorry the cough is keeping you up.", "NO MATCH"}
    assert all("|" not in item_id for item_id, _, _ in items)  # no cell in ids annotators could see
    gold = rv.items_from_run(store, run_id, rv.ReviewSpec("g", "gold", ["ann1"], per_annotator=100))
    assert len(gold) == 2
    assert "medication_questions" in gold[0][1]["themes"] or gold[0][1]["themes"]


def test_citeqa_views_and_evidence_items(tmp_path: Path) -> None:
    with ScriptedServer(CITEQA_RULES) as server:
        store = _run(
            tmp_path,
            server,
            {
                "name": "citeqa-web",
                "task": "citeqa",
                "datasets": {"synthetic": {"limit": 2}},
                "systems": {"one": {"type": "one_stage"}},
                "models": {"system": [server.model_name("m")]},
                "scorers": ["strict_f1"],
            },
        )
    client = TestClient(create_app(store))
    login(client, "admin")
    html = _sample_page(client, store)
    assert 'He needs two antiplatelet drugs. <a href="#s-1" class="cite">[1]</a>' in html
    assert re.search(r'<li id="s-1" class="cited">', html)
    assert "essential" in html  # the key's labels on the note sentences
    run_id = store.runs()[0]["id"]
    items = rv.items_from_run(store, run_id, rv.ReviewSpec("e", "evidence", ["ann1"], per_annotator=100))
    assert len(items) == 2
    _, payload, key = items[0]
    assert key["judge"]["1"] == "essential"
    assert all(v == "not-relevant" for k, v in key["judge"].items() if k != "1")
    assert payload["sentences"][0]["id"] == "1"
