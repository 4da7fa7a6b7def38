"""Tasks by name: the registered entry points, the import paths a user allows, and task files.

Kept apart from :mod:`bedside.runs.task` (the protocol and its data types, which task files, scorers and steps
are built on) so that resolving a name, which reaches task files and the scorers, does not make those modules
import each other in a circle.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from collections.abc import Iterable

from bedside.runs.scorers import direction
from bedside.runs.task import Task
from bedside.runs.taskfile import TaskFromFile, is_task_file

TASK_ENTRY_POINTS = "bedside.tasks"
ALLOW_TASKS_ENV = "BEDSIDE_TASKS"


def allowed_import_paths(allow: Iterable[str] = ()) -> set[str]:
    """The ``module:attribute`` tasks the user allows: ``allow`` plus the comma-separated ``BEDSIDE_TASKS``.

    A task name is read from data (a config, a store's run row) that may come from someone else, and importing
    a module runs its code; so only the registered entry points resolve by themselves, and any other import
    path must be named by the user running the command, never by the data.
    """
    env = os.environ.get(ALLOW_TASKS_ENV, "")
    return {a.strip() for a in (*allow, *env.split(",")) if a.strip()}


def resolve_task(name: str, allow: Iterable[str] = ()) -> Task:
    """A task by short name (the ``bedside.tasks`` entry points, so other packages can add theirs), or
    ``package.module:attribute`` naming a task object, when the user allows that path (``allow`` or the
    ``BEDSIDE_TASKS`` environment variable, see :func:`allowed_import_paths`). The runs layer never imports
    a task package itself. A path ending in ``.yaml``/``.yml`` is a task file (:mod:`bedside.runs.taskfile`):
    data, never code."""
    if is_task_file(name):
        return TaskFromFile(name)
    registered = {ep.name: ep for ep in importlib.metadata.entry_points(group=TASK_ENTRY_POINTS)}
    known = ", ".join(sorted(registered)) or "none"
    if name in registered:
        target = registered[name].value
    elif ":" in name:
        if name not in allowed_import_paths(allow):
            raise ValueError(
                f"task {name!r} is not a registered task (registered: {known}); a task given as module:attribute "
                f"is imported only when you allow it: set {ALLOW_TASKS_ENV}={name} (comma-separated for several)"
            )
        target = name
    else:
        raise ValueError(f"unknown task {name!r}; registered: {known}, or give module:attribute")
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"task {name!r}: cannot import {module_name}: {exc}") from None
    try:
        task: Task = getattr(module, attribute)
    except AttributeError:
        raise ValueError(f"task {name!r}: {module_name} has no attribute {attribute!r}") from None
    missing = [a for a in ("name", "systems", "default_scorers", "load", "score") if not hasattr(task, a)]
    if missing:
        raise ValueError(f"task {name!r} is not a task (it lacks {', '.join(missing)})")
    return task


def lower_is_better(task_name: str, metric: str) -> bool:
    """Whether the named task says lower is better for ``metric`` (False for a task that cannot be loaded): what
    the leaderboard's order and ``compare --fail-if-worse`` follow when not told."""
    try:
        return direction(resolve_task(task_name), metric) == "lower"
    except (ValueError, ImportError):
        return False


__all__ = ["ALLOW_TASKS_ENV", "TASK_ENTRY_POINTS", "allowed_import_paths", "lower_is_better", "resolve_task"]
