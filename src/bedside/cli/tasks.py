"""`bedside tasks`: the tasks a run config can name, and each one's systems, scorers and options with defaults."""

from __future__ import annotations

import importlib.metadata
import json
from typing import Annotated, Any

import typer

from bedside.cli.app import JsonOption, app
from bedside.console import data_table, fail, out, show_table

tasks_app = typer.Typer(help="Tasks a run config can name: list them, show one's systems and options.")
app.add_typer(tasks_app, name="tasks")


@tasks_app.command("list")
def tasks_list(as_json: JsonOption = False) -> None:
    """The registered tasks (``bedside.tasks`` entry points), with their systems. A task file (``task:
    my-task.yaml``) is a task too: see docs/own-task.md."""
    from bedside.runs.registry import TASK_ENTRY_POINTS, resolve_task

    found: list[dict[str, Any]] = []
    for entry in sorted(importlib.metadata.entry_points(group=TASK_ENTRY_POINTS), key=lambda e: e.name):
        try:
            task = resolve_task(entry.name)
        except ValueError as exc:
            found.append({"task": entry.name, "systems": [], "error": str(exc)})
            continue
        found.append(
            {"task": entry.name, "systems": sorted(task.systems), "default_scorers": list(task.default_scorers)}
        )
    if as_json:
        typer.echo(json.dumps(found, indent=2))
        return
    rows = [[t["task"], ", ".join(t["systems"]) or t.get("error", "")] for t in found]
    show_table(data_table("bedside tasks", ["task", "systems"], rows, "bedside tasks show TASK: options and defaults"))


@tasks_app.command("show")
def tasks_show(
    task: Annotated[str, typer.Argument(help="A registered task's name, or a task file (.yaml).")],
    as_json: JsonOption = False,
) -> None:
    """A task's systems, scorers, and the dataset and system options a config may set, with their defaults."""
    from bedside.runs.options import describe_options
    from bedside.runs.registry import resolve_task

    try:
        loaded = resolve_task(task)
    except ValueError as exc:
        raise fail(exc) from None
    dataset_schema = getattr(loaded, "dataset_options", None)
    system_schemas = getattr(loaded, "system_options", None) or {}
    data: dict[str, Any] = {
        "task": loaded.name,
        "default_scorers": list(loaded.default_scorers),
        "task_scorers": list(getattr(loaded, "scorers", ())),
        "dataset_options": describe_options(dataset_schema) if dataset_schema is not None else None,
        "systems": {
            name: describe_options(system_schemas[name]) if name in system_schemas else None
            for name in sorted(loaded.systems)
        },
    }
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    out.print(f"task {loaded.name}; default scorers: {', '.join(data['default_scorers'])}", highlight=False)
    sections = [("dataset options", data["dataset_options"])]
    sections += [(f"system {name}: options", options) for name, options in data["systems"].items()]
    for title, options in sections:
        if options is None:
            out.print(f"{title}: not declared (passed to the task unchecked)", highlight=False)
            continue
        rows = [[o["name"], o["type"], o["default"], o["description"]] for o in options]
        show_table(data_table(title, ["option", "type", "default", "what"], rows or [["(none)", "", "", ""]]))
