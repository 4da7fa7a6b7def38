"""The `bedside` command: a thin layer over the library, one module per command group.

Core groups live here (``models``, ``demo``, ``records``, ``metrics``, ``judges``, ``runs``, ``config``, ``sim``). A
task's commands (``bedside drafting ...``) are its own typer app, registered through the ``bedside.cli`` entry
point group as tasks are through ``bedside.tasks``: the core never imports a task package, and another package
can add its group the same way. A group that cannot be imported is left out with a warning on stderr, so one
broken extra never takes the whole command down.
"""

from __future__ import annotations

import importlib
import importlib.metadata

import typer

from bedside.cli import config, demo, judges, metrics, models, records, runs, sim, tasks, web  # noqa: F401 - each registers its commands
from bedside.cli.app import app
from bedside.console import err

CLI_ENTRY_POINTS = "bedside.cli"


def register_groups(root: typer.Typer) -> list[str]:
    """Add every ``bedside.cli`` entry point's typer app to ``root``; the names added."""
    added = []
    for entry in sorted(importlib.metadata.entry_points(group=CLI_ENTRY_POINTS), key=lambda e: e.name):
        try:
            group = entry.load()
        except Exception as exc:  # a broken plugin must not break every other command
            err.print(f"[yellow]warning:[/] command group {entry.name!r} ({entry.value}) left out: {exc}")
            continue
        if not isinstance(group, typer.Typer):
            err.print(f"[yellow]warning:[/] command group {entry.name!r} ({entry.value}) is not a typer app")
            continue
        root.add_typer(group, name=entry.name)
        added.append(entry.name)
    return added


register_groups(app)


def main() -> None:
    app()


__all__ = ["app", "main", "register_groups"]
