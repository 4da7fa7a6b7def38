"""Runs: a config expanded into a grid of cells, executed resumably into a results store, then reported."""

from bedside.runs.config import ConfigError, DatasetConfig, RunConfig, SystemConfig, load_config
from bedside.runs.results import load
from bedside.runs.runner import Cell, Progress, RunSummary, execute
from bedside.runs.store import ResultRow, Store
from bedside.runs.task import Output, Sample, SampleContext, Task, Turn, resolve_task

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
