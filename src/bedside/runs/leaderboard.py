"""A leaderboard over the runs in a store: every cell of every (latest) run, ranked on one metric per task and
dataset, with its bootstrap interval, so systems and models run at different times can be read side by side.

Which runs: by default the latest run of each config name (:func:`bedside.runs.store.run_recency`), since an
older run of a changed config would otherwise sit beside its successor; ``all_runs`` keeps every run. Which
metric: the one asked for, else the task's headline metric (:func:`headline_metric`: drafting's Content Edit-F1,
...) when the run scored it, else the first the run declares. Higher ranks first, lower where the task says lower
is better for the metric (``lower_is_better``) or ``ascending`` says so. Cells are
compared only within one task and dataset; means are over each cell's own samples, which may differ between runs
(``n`` says how many), so a leaderboard ranks; :func:`bedside.runs.report.compare` tests a difference on paired
samples.

**Ranks are intervals.** A mean is an estimate, so a place is too: a cell's rank runs from 1 + the number of cells
whose 95% interval lies wholly above its own (surely better) to the number of cells less those whose interval
lies wholly below it (surely worse). Exact ties and overlapping intervals share places: 28 cells tied at 0.05
[0, 0.15] all read 1–28, none "#1". Entries are listed best mean first, ties by more samples scored.

**Incomplete cells are not ranked.** A cell that answered fewer than ``min_complete`` (default 0.9) of its samples
(the rest stored as errors) is listed after the ranked ones, flagged, with no rank: its mean is over the samples
it could answer, which are not the others' samples.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bedside.runs.report import _summaries, declared_scorers, headline_metric, metric_order
from bedside.runs.store import ResultRow, Store, run_recency

MIN_COMPLETE = 0.9
"""The share of a cell's samples it must have answered (not stored as errors) to be ranked."""


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
    samples: int = 0
    """Rows of the cell (samples × epochs), answered or stored as errors."""
    rank_low: int | None = None
    """Best place the cell's interval allows (None: not ranked, see ``flag``)."""
    rank_high: int | None = None
    """Worst place the cell's interval allows."""
    flag: str = ""
    """Why the cell is not ranked ("answered 25% of its samples"), or ""."""

    @property
    def answered(self) -> float:
        """Share of the cell's samples answered (not stored as errors)."""
        return (self.samples - self.errors) / self.samples if self.samples else 0.0

    @property
    def rank(self) -> str:
        """ "3", or "1–28" when the interval allows several places, or "-" when not ranked."""
        if self.rank_low is None or self.rank_high is None:
            return "-"
        return str(self.rank_low) if self.rank_low == self.rank_high else f"{self.rank_low}–{self.rank_high}"


@dataclass(frozen=True)
class Board:
    """The ranked entries of one task and dataset on one metric (best first)."""

    task: str
    dataset: str
    metric: str
    entries: list[Entry]
    ascending: bool = False
    """Lower is better for this metric: ranked lowest first."""


def leaderboard(
    store: Store, *, metric: str | None = None, task: str | None = None, all_runs: bool = False,
    ascending: bool | None = None, min_complete: float = MIN_COMPLETE,
) -> list[Board]:  # fmt: skip
    """The store's cells ranked per (task, dataset) on ``metric`` (default: each task's headline metric, else each
    run's first declared one), with rank intervals and incomplete cells flagged (see the module docstring)."""
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
        headline = headline_metric(run["task"])
        chosen = metric or (headline if headline in present else None)
        chosen = chosen or next(iter(metric_order(present, declared_scorers(run))), None)
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
                errors, len(cell_rows),
            )  # fmt: skip
            groups[(run["task"], first.dataset, chosen)].append(entry)
    return [
        Board(
            task_name,
            dataset,
            chosen,
            ranked(entries, ascending=_ascending(task_name, chosen, ascending), min_complete=min_complete),
            ascending=_ascending(task_name, chosen, ascending),
        )
        for (task_name, dataset, chosen), entries in sorted(groups.items())
    ]


def _ascending(task: str, metric: str, asked: bool | None) -> bool:
    """Lower first when asked, or, when not asked, when the task says lower is better for the metric."""
    if asked is not None:
        return asked
    from bedside.runs.registry import lower_is_better

    return lower_is_better(task, metric)


def ranked(entries: Sequence[Entry], *, ascending: bool = False, min_complete: float = MIN_COMPLETE) -> list[Entry]:
    """The entries with rank intervals, best first, the incomplete ones after them, flagged and unranked."""
    from dataclasses import replace

    sign = 1.0 if ascending else -1.0
    complete = [e for e in entries if e.answered >= min_complete]
    out = []
    for entry in complete:
        if ascending:
            better = sum(o.high < entry.low for o in complete)
            worse = sum(o.low > entry.high for o in complete)
        else:
            better = sum(o.low > entry.high for o in complete)
            worse = sum(o.high < entry.low for o in complete)
        out.append(replace(entry, rank_low=1 + better, rank_high=len(complete) - worse))
    out.sort(key=lambda e: (sign * e.mean, -e.n, e.system, e.model, e.run))
    incomplete = [
        replace(e, flag=f"answered {e.answered:.0%} of its samples (< {min_complete:.0%}): not ranked")
        for e in entries
        if e.answered < min_complete
    ]
    incomplete.sort(key=lambda e: (sign * e.mean, -e.n, e.system, e.model, e.run))
    return out + incomplete
