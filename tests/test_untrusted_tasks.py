"""A task named by data (a store's run row, a config) is never imported unless the user allows it.

A store or a config may come from someone else; importing the module their ``task`` names would run its code
(a run row saying ``antigravity:x`` made ``bedside serve`` open a browser). These tests name a module whose
import leaves a mark, and check that ``bedside report``, the web viewer and ``bedside run`` refuse it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs.registry import resolve_task
from bedside.runs.store import ResultRow, Store

MODULE = "bedside_marker_task"


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An importable module that writes a file when imported; the path of that file (absent until then)."""
    mark = tmp_path / "imported"
    code = tmp_path / "code"
    code.mkdir()
    source = f"from pathlib import Path\nPath({str(mark)!r}).write_text('ran')\nTASK = None\n"
    (code / f"{MODULE}.py").write_text(source)
    monkeypatch.syspath_prepend(str(code))
    monkeypatch.delenv("BEDSIDE_TASKS", raising=False)
    yield mark
    sys.modules.pop(MODULE, None)


def _store_with_run(path: Path) -> Store:
    store = Store(str(path))
    store.begin_run("evil-1", "evil", f"{MODULE}:TASK", {"scorers": ["words"]})
    output: dict[str, Any] = {"text": "a reply", "transcript": None, "trace": None, "prompts": [], "extra": {}}
    row = ResultRow("evil-1", "d|s|m", "s1", 0, "d", "s", "m", "k", "ok", None, output, {"words": 2.0}, {}, {}, {})
    store.write([row])
    return store


def test_an_import_path_resolves_only_when_allowed(marker: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=r"not a registered task.*BEDSIDE_TASKS="):
        resolve_task(f"{MODULE}:TASK")
    assert not marker.exists()
    # Allowed by the user, it is imported (so the checks above would see an import) and then refused as no task.
    with pytest.raises(ValueError, match="is not a task"):
        resolve_task(f"{MODULE}:TASK", allow=[f"{MODULE}:TASK"])
    assert marker.exists()
    marker.unlink()
    del sys.modules[MODULE]
    monkeypatch.setenv("BEDSIDE_TASKS", f"other:TASK, {MODULE}:TASK")
    with pytest.raises(ValueError, match="is not a task"):
        resolve_task(f"{MODULE}:TASK")
    assert marker.exists()


def test_report_refuses_a_stored_task_that_names_a_module(marker: Path, tmp_path: Path) -> None:
    _store_with_run(tmp_path / "store.sqlite").close()
    result = CliRunner().invoke(
        app, ["report", "evil-1", "--store", str(tmp_path / "store.sqlite"), "-o", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    assert not marker.exists()
    md = (tmp_path / "out" / "evil-1.md").read_text()
    assert "task tables left out" in md
    assert "not a registered task" in md
    assert "words" in md  # the rest of the report is all there


def test_web_viewer_refuses_a_stored_task_that_names_a_module(marker: Path, tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("argon2")
    from fastapi.testclient import TestClient

    from bedside.web.app import create_app
    from bedside.web.review import ReviewError, ReviewSpec, items_from_run
    from web_support import add_accounts, login

    store = _store_with_run(tmp_path / "store.sqlite")
    add_accounts(store)
    client = TestClient(create_app(store))
    assert login(client, "admin").status_code == 303
    page = client.get("/runs/evil-1/sample?cell=d%7Cs%7Cm&sample=s1&epoch=0")
    assert page.status_code == 200
    assert "not a registered task" in page.text
    with pytest.raises(ReviewError, match="cannot be built"):  # the task's own review_items hook is not consulted
        items_from_run(store, "evil-1", ReviewSpec("r", "rate", ["admin"], 1))
    assert not marker.exists()
    store.close()


@pytest.mark.parametrize("command", [["config", "check"], ["run"], ["run", "--dry-run"]])
def test_a_config_naming_a_function_as_task_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.delenv("BEDSIDE_TASKS", raising=False)
    config = tmp_path / "run.yaml"
    config.write_text(
        json.dumps(
            {
                "name": "x",
                "task": "os:system",
                "datasets": {"d": {}},
                "systems": {"s": {"type": "t"}},
                "models": {"system": "scripted/x"},
                "store": str(tmp_path / "store.sqlite"),
            }
        )
    )
    result = CliRunner().invoke(app, [*command, str(config)])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert "'os:system' is not a registered task" in result.output
    monkeypatch.setenv("BEDSIDE_TASKS", "os:system")  # allowed, it is still no task
    result = CliRunner().invoke(app, [*command, str(config)])
    assert result.exit_code == 1
    assert "'os:system' is not a task" in result.output
