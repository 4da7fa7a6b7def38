"""The golden runs' shared steps: run a config through `bedside run`, then read back what a user reads (the
stored rows, `bedside report --json`, the Markdown report). Each golden test keeps its own rules, config and
hand-worked values; only this plumbing is common."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs import Store
from bedside.runs.report import build_report, markdown
from bedside.runs.store import ResultRow


def run_golden(
    folder: Path, config: dict[str, Any], *, unscored: Sequence[str] = ()
) -> tuple[str, str, list[ResultRow]]:
    """`bedside run folder/run.yaml --no-cache` on ``config`` with a store in ``folder``: (store, run id, rows).

    Call it while the config's scripted servers are up. A run with any error exits 1, so a clean exit is also
    the check that no sample failed. ``unscored``: the declared scorers a run built to fail its judges scores
    nothing with; the run must then exit 1 for exactly those, with no sample an error.
    """
    store = str(folder / "store.sqlite")
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump({**config, "store": store}), encoding="utf-8")
    if unscored:
        result = CliRunner().invoke(app, ["run", str(path), "--no-cache", "--json"])
        assert result.exit_code == 1, result.output
        said = json.loads(result.stdout)
        assert (said["errors"], said["unscored"]) == (0, list(unscored)), result.output
    else:
        result = CliRunner().invoke(app, ["run", str(path), "--no-cache"])
        assert result.exit_code == 0, result.output
    opened = Store(store)
    try:
        (run,) = opened.runs()
        return store, str(run["id"]), opened.results(run["id"])
    finally:
        opened.close()


def read_report(store: str, run_id: str, written_to: Path | None = None) -> tuple[dict[str, Any], str]:
    """`bedside report --json`, and the Markdown report: the file `bedside report -o written_to` writes, or
    (``None``) the same text built by the function that writes it, skipping the HTML twin, whose plots take
    minutes for a many-cell run on a loaded CPU."""
    runner = CliRunner()
    printed = runner.invoke(app, ["report", run_id, "--store", store, "--json"])
    assert printed.exit_code == 0, printed.output
    if written_to is not None:
        written = runner.invoke(app, ["report", run_id, "--store", store, "-o", str(written_to)])
        assert written.exit_code == 0, written.output
        return json.loads(printed.output), (written_to / f"{run_id}.md").read_text(encoding="utf-8")
    opened = Store(store)
    try:
        return json.loads(printed.output), markdown(build_report(opened, run_id))
    finally:
        opened.close()
