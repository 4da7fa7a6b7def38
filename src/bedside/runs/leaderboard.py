"""A leaderboard over the runs in a store: every cell of every (latest) run, ranked on one metric per task and
dataset, with its bootstrap interval, so systems and models run at different times can be read side by side.

Which runs: by default the latest run of each config name (:func:`bedside.runs.store.run_recency`), since an
older run of a changed config would otherwise sit beside its successor; ``all_runs`` keeps every run. Which
metric: the one asked for, else the first the run declares (its config's ``scorers``, else the task's defaults:
a task lists its primary metric first). Higher ranks first unless ``ascending``. Cells are compared only within
one task and dataset; means are over each cell's own samples, which may differ between runs (``n`` says how
many), so a leaderboard ranks; :func:`bedside.runs.report.compare` tests a difference on paired samples.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from bedside.runs.report import _summaries, declared_scorers, metric_order
from bedside.runs.store import ResultRow, Store, run_recency


@dataclass(frozen=True)
class Entry:
    """One cell of one run on the leaderboard."""

    task: str
    dataset: str
    system: str
    model: str
    run: str
    metric: str
    n: int
    mean: float
    low: float
    high: float
    errors: int


@dataclass(frozen=True)
class Board:
    """The ranked entries of one task and dataset on one metric (best first)."""

    task: str
    dataset: str
    metric: str
    entries: list[Entry]


def leaderboard(
    store: Store, *, metric: str | None = None, task: str | None = None, all_runs: bool = False,
    ascending: bool = False,
) -> list[Board]:  # fmt: skip
    """The store's cells ranked per (task, dataset) on ``metric`` (default: each run's first declared one)."""
    runs = store.runs()
    if task is not None:
        runs = [r for r in runs if r["task"] == task]
    if not all_runs:
        latest: dict[str, dict[str, Any]] = {}
        for run in runs:
            if run["name"] not in latest or run_recency(run) > run_recency(latest[run["name"]]):
                latest[run["name"]] = run
        runs = [r for r in runs if latest[r["name"]] is r]
    groups: dict[tuple[str, str, str], list[Entry]] = defaultdict(list)
    for run in runs:
        rows = store.results(run["id"])
        present = {m for r in rows for m in r.scores}
        chosen = metric or next(iter(metric_order(present, declared_scorers(run))), None)
        if chosen is None or chosen not in present:
            continue
        by_cell: dict[str, list[ResultRow]] = defaultdict(list)
        for row in rows:
            by_cell[row.cell].append(row)
        for cell_rows in by_cell.values():
            summaries = _summaries(cell_rows, [chosen], int(run["config"].get("seed", 0)))
            if not summaries:
                continue
            s = summaries[0]
            first = cell_rows[0]
            errors = sum(r.status == "error" for r in cell_rows)
            entry = Entry(
                run["task"], first.dataset, first.system, first.model, run["id"], chosen, s.n, s.mean, s.low, s.high,
                errors,
            )  # fmt: skip
            groups[(run["task"], first.dataset, chosen)].append(entry)
    return [
        Board(task_name, dataset, chosen, sorted(entries, key=lambda e: e.mean if ascending else -e.mean))
        for (task_name, dataset, chosen), entries in sorted(groups.items())
    ]
