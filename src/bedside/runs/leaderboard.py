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

**Incomplete cells are not ranked.** A cell that answered fewer than ``min_complete`` (default 0.9) of the
samples its run planned (the rest stored as errors, or never run: an interrupted or failed run) is listed after the
ranked ones, flagged, with no rank: its mean is over the samples it could answer, which are not the others'
samples. A cell that answered none is listed too, with no mean: a model whose endpoint was down is a row that
says so, never a row that is missing. A cell of a run that did not finish says so in its note.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from bedside.runs.report import (
    MIN_COMPLETE,
    SMALL_N,
    _summaries,
    cell_parts,
    declared_scorers,
    headline_metric,
    metric_order,
    retried_after_error,
    truncated,
)
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
    samples: int = 0
    """The cell's samples (× epochs) its run planned (answered, stored as errors or never run); where the store
    has no plan (an older bedside), the rows stored."""
    rank_low: int | None = None
    """Best place the cell's interval allows (None: not ranked, see ``flag``)."""
    rank_high: int | None = None
    """Worst place the cell's interval allows."""
    flag: str = ""
    """Why the cell is not ranked ("answered 25% of its samples"), or ""."""
    status: str = "finished"
    """Its run's status: a cell of an interrupted, failed or still running run says so in its note."""
    stored: int | None = None
    """Rows stored (answered or errors); None: all ``samples`` were (the share answered is then theirs less the
    errors)."""
    retried: int = 0
    """Answered samples that were stored as errors first (answered on ``--retry-errors``)."""
    truncated: int = 0
    """Answered samples with an answer cut off at ``max_tokens`` (or the repetition guard)."""
    shadows: str = ""
    """Where the latest run of a config planned fewer samples than an older one (a ``--limit`` smoke run after the
    full sweep): that older run's id and plan, which the leaderboard does not show unless asked (``all_runs``)."""

    @property
    def answered(self) -> float:
        """Share of the cell's planned samples answered (stored, and not as errors)."""
        stored = self.samples if self.stored is None else self.stored
        return (stored - self.errors) / self.samples if self.samples else 0.0

    @property
    def note(self) -> str:
        """The flag, a ranked cell's few samples, the run's status when it did not finish, the samples answered
        only on a retry or cut off at max_tokens, and an older, fuller run of the same config."""
        few = f"n < {SMALL_N}: a rough interval" if self.rank_low is not None and self.n < SMALL_N else ""
        unfinished = f"run {self.status}" if self.status != "finished" else ""
        retried = f"{self.retried} answered only on --retry-errors" if self.retried else ""
        cut = f"{self.truncated} of its answers cut off at max_tokens" if self.truncated else ""
        return "; ".join(part for part in (self.flag, few, unfinished, retried, cut, self.shadows) if part)

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
    shadows: dict[str, str] = {}
    if not all_runs:
        latest: dict[str, dict[str, Any]] = {}
        for run in runs:
            if run["name"] not in latest or run_recency(run) > run_recency(latest[run["name"]]):
                latest[run["name"]] = run
        for run in runs:  # a smaller latest run (a --limit smoke test) must not pass for the sweep it follows
            newest = latest[run["name"]]
            if run is not newest and _planned(run) > _planned(newest):
                shadows[newest["id"]] = (
                    f"its run planned {_planned(newest)} samples, an older run of its config ({run['id']}) "
                    f"{_planned(run)}: --all-runs shows both"
                )
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
        planned: dict[str, int] = run.get("planned") or {}
        status = str(run.get("status") or "finished")
        for cell in sorted(set(by_cell) | set(planned)):
            cell_rows = by_cell.get(cell, [])
            summaries = _summaries(cell_rows, [chosen], int(run["config"].get("seed", 0))) if cell_rows else []
            n, mean, low, high = (
                (summaries[0].n, summaries[0].mean, summaries[0].low, summaries[0].high)
                if summaries
                else (0, math.nan, math.nan, math.nan)
            )
            dataset, system, model = (
                (cell_rows[0].dataset, cell_rows[0].system, cell_rows[0].model) if cell_rows else cell_parts(cell)
            )
            errors = sum(r.status == "error" for r in cell_rows)
            entry = Entry(
                run["task"], dataset, system, model, run["id"], chosen, n, mean, low, high, errors,
                max(planned.get(cell, 0), len(cell_rows)), status=status, stored=len(cell_rows),
                retried=retried_after_error(cell_rows), shadows=shadows.get(run["id"], ""),
                truncated=sum(r.status == "ok" and truncated(r) for r in cell_rows),
            )  # fmt: skip
            groups[(run["task"], dataset, chosen)].append(entry)
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


def _planned(run: dict[str, Any]) -> int:
    """The samples a run planned over all its cells (0 where the store kept no plan)."""
    return sum((run.get("planned") or {}).values())


def _ascending(task: str, metric: str, asked: bool | None) -> bool:
    """Lower first when asked, or, when not asked, when the task says lower is better for the metric."""
    if asked is not None:
        return asked
    from bedside.runs.registry import lower_is_better

    return lower_is_better(task, metric)


def ranked(entries: Sequence[Entry], *, ascending: bool = False, min_complete: float = MIN_COMPLETE) -> list[Entry]:
    """The entries with rank intervals, best first, the incomplete ones after them, flagged and unranked (those
    with no scored sample last)."""
    sign = 1.0 if ascending else -1.0

    def order(e: Entry) -> tuple[bool, float, int, str, str, str]:
        return (e.n == 0, 0.0 if e.n == 0 else sign * e.mean, -e.n, e.system, e.model, e.run)

    complete = [e for e in entries if e.answered >= min_complete and e.n > 1]  # one value has no interval
    out = []
    for entry in complete:
        if ascending:
            better = sum(o.high < entry.low for o in complete)
            worse = sum(o.low > entry.high for o in complete)
        else:
            better = sum(o.low > entry.high for o in complete)
            worse = sum(o.high < entry.low for o in complete)
        out.append(replace(entry, rank_low=1 + better, rank_high=len(complete) - worse))
    out.sort(key=order)
    incomplete = [replace(e, flag=_why_unranked(e, min_complete)) for e in entries if e not in complete]
    incomplete.sort(key=order)
    return out + incomplete


def _why_unranked(entry: Entry, min_complete: float) -> str:
    if entry.answered == 0 and entry.stored == 0:
        return f"none of its {entry.samples} samples run: not ranked"  # a run cut short, or an endpoint down
    if entry.answered == 0:
        return f"answered none of its {entry.samples} samples: not ranked"
    if entry.answered < min_complete:
        return f"answered {entry.answered:.0%} of its samples (< {min_complete:.0%}): not ranked"
    if entry.n == 1:
        return "one sample scored: no interval, not ranked"
    return f"no answered sample scored {entry.metric}: not ranked"
