"""What reviewers read beside the outputs: the task's context, readable, never the gold answers (issue 46)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from pathlib import Path

from bedside.cli import app
from bedside.runs import Store, load_config
from bedside.testing import ScriptedServer
from bedside.web import review as rv
from test_compare_cells import _grid, runner


def test_a_drafting_review_shows_the_message_and_chart_never_the_clinicians_replies(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        path = _grid(tmp_path, server)
        assert runner.invoke(app, ["run", str(path), "--no-cache"]).exit_code == 0
    config = load_config(path)
    store = Store(config.store)
    try:
        rows = store.results(config.run_id)
        cells = sorted({r.cell for r in rows if r.system == "short"})
        spec = rv.ReviewSpec(name="n", task_type="pairwise", annotators=["a"], per_annotator=10, cells=cells)
        items = rv.items_from_run(store, config.run_id, spec)
    finally:
        store.close()
    assert items
    for _, payload, _ in items:
        context = payload["context"]
        assert context.startswith("Patient's message:\n")
        assert "\n\nChart summary:\n" in context
        assert "references" not in context
        assert "theme_fields" not in context
    replies = [ref["text"] for r in rows for ref in r.sample["inputs"]["references"]]
    assert replies
    assert not any(reply in payload["context"] for reply in replies for _, payload, _ in items)


def test_the_generic_context_leaves_gold_inputs_out() -> None:
    shown = rv._inputs_text({"inputs": {"question": "Is it urgent?", "reference": "Yes", "answers": ["Yes"]}})
    assert shown == "question:\nIs it urgent?"
