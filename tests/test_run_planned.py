"""A run records how many samples it has in all, so the live-progress page can say "N of M" (issue 47), and a
store made before the column existed gets it when opened."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from bedside.runs import Store, execute, load_config
from bedside.testing import ScriptedServer
from test_compare_cells import _grid


def test_a_run_records_its_planned_samples_per_cell(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        config = load_config(_grid(tmp_path, server))
        asyncio.run(execute(config, cache=False))
    store = Store(config.store)
    try:
        planned = store.run(config.run_id)["planned"]
        assert planned == {cell: 6 for cell in {r.cell for r in store.results(config.run_id)}}
        pytest.importorskip("fastapi")
        from bedside.web import browse

        cells = browse.progress(store, config.run_id)
        assert [(c.done, c.total) for c in cells] == [(6, 6)] * 4
    finally:
        store.close()


def test_a_store_from_before_the_planned_column_gets_it(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE runs (id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL, task VARCHAR NOT NULL, config JSON "
            "NOT NULL, bedside_version VARCHAR, python_version VARCHAR, git_commit VARCHAR, created_at DATETIME, "
            "updated_at DATETIME, status VARCHAR)"
        )
        db.execute(
            "INSERT INTO runs (id, name, task, config, status) VALUES ('r-1', 'r', 'drafting', '{}', 'finished')"
        )
    store = Store(str(path))
    try:
        assert store.run("r-1")["planned"] is None  # an old run: no total, and the views say so ("–")
        store.set_planned("r-1", {"c": 3})
        assert store.run("r-1")["planned"] == {"c": 3}
    finally:
        store.close()
