"""Runs: a config expanded into a grid of cells, executed resumably into a results store, then reported.

The names below are imported when first used (PEP 562), not with the package: ``bedside.runs.config`` alone must
not pull in SQLAlchemy and the runner, or every CLI command would pay for them at start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bedside.lazy import lazy_names

if TYPE_CHECKING:
    from bedside.runs.config import ConfigError, DatasetConfig, RunConfig, SystemConfig, load_config
    from bedside.runs.registry import resolve_task
    from bedside.runs.results import load
    from bedside.runs.runner import Cell, Progress, RunSummary, execute
    from bedside.runs.store import ResultRow, Store
    from bedside.runs.task import Output, Sample, SampleContext, Task, Turn

_WHERE = {
    "ConfigError": "config",
    "DatasetConfig": "config",
    "RunConfig": "config",
    "SystemConfig": "config",
    "load_config": "config",
    "load": "results",
    "Cell": "runner",
    "Progress": "runner",
    "RunSummary": "runner",
    "execute": "runner",
    "ResultRow": "store",
    "Store": "store",
    "Output": "task",
    "Sample": "task",
    "SampleContext": "task",
    "Task": "task",
    "Turn": "task",
    "resolve_task": "registry",
}


__getattr__ = lazy_names(__name__, _WHERE)


__all__ = [
    "Cell",
    "ConfigError",
    "DatasetConfig",
    "Output",
    "Progress",
    "ResultRow",
    "RunConfig",
    "RunSummary",
    "Sample",
    "SampleContext",
    "Store",
    "SystemConfig",
    "Task",
    "Turn",
    "execute",
    "load",
    "load_config",
    "resolve_task",
]
