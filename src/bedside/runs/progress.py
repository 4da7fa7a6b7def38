"""The terminal display of a run: per cell done/total and errors, model calls, tokens and cost by role, ETA.

When stderr is not a terminal (a batch job, a log file, CI), a live display would print nothing until the end,
so a plain line goes out every ``LOG_EVERY_S`` seconds instead, with the model calls made so far: a sample can
take many minutes (a simulated conversation on a CPU), and the calls show the run is moving.
"""

from __future__ import annotations

import time

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn, TimeRemainingColumn
from rich.progress import Progress as RichBar
from rich.table import Table

from bedside.runs.runner import Progress, RunSummary

LOG_EVERY_S = 30.0


class TerminalProgress(Progress):
    def __init__(self, console: Console, log_every_s: float = LOG_EVERY_S) -> None:
        self.console = console
        self.log_every_s = log_every_s
        self._started = time.monotonic()
        self._logged = self._started
        self.bars = RichBar(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[errors]} errors"),
            TimeRemainingColumn(),
            console=console,
        )
        self.tasks: dict[str, TaskID] = {}
        self.live: Live | None = None
        self._last = 0.0

    def _usage(self, summary: RunSummary) -> Table:
        table = Table(box=None, padding=(0, 2), show_header=True, header_style="dim")
        for column in ("role", "calls", "cached", "requests", "tokens in", "tokens out", "cost"):
            table.add_column(column, justify="right" if column != "role" else "left")
        for role, entry in summary.usage.snapshot().items():
            table.add_row(
                role,
                str(entry.calls),
                str(entry.cache_hits),
                str(entry.requests),
                str(entry.prompt_tokens),
                str(entry.completion_tokens),
                f"{entry.cost:.4f}" if entry.priced else "-",
            )
        return table

    def _log_line(self, summary: RunSummary) -> None:
        done = sum(c.done for c in summary.cells.values())
        total = sum(c.total for c in summary.cells.values())
        cells = sum(c.done == c.total for c in summary.cells.values())
        usage = summary.usage.snapshot().values()
        calls, cached = sum(u.calls for u in usage), sum(u.cache_hits for u in usage)
        sent, failed = sum(u.requests for u in usage), sum(u.errors for u in usage)
        elapsed = time.monotonic() - self._started
        self.console.print(
            f"{done}/{total} samples, {summary.errors} errors, {cells}/{len(summary.cells)} cells done, "
            f"{calls} model calls answered ({cached} cached), {sent} requests sent"
            + (f", {failed} calls failed" if failed else "")
            + f", {elapsed:.0f} s",
            highlight=False,
        )

    def start(self, summary: RunSummary) -> None:
        self._started = self._logged = time.monotonic()
        below: dict[int, list[str]] = {}
        for model, cap in summary.endpoint_caps.items():
            if cap < summary.concurrency:
                below.setdefault(cap, []).append(model)
        for cap, models in below.items():  # one line per cap, however many roles share it
            self.console.print(
                f"note: {', '.join(models)} {'takes' if len(models) == 1 else 'take'} at most {cap} "
                f"request{'s' if cap != 1 else ''} at once (max_concurrency), below the run's concurrency of "
                f"{summary.concurrency}",
                highlight=False,
                markup=False,
            )
        if not self.console.is_terminal:
            self._log_line(summary)
            return
        for cell, counts in summary.cells.items():
            self.tasks[cell] = self.bars.add_task(cell, total=counts.total, completed=counts.done, errors=counts.errors)
        self.live = Live(Group(self.bars, self._usage(summary)), console=self.console, refresh_per_second=4)
        self.live.start()

    def update(self, summary: RunSummary) -> None:
        now = time.monotonic()
        if not self.console.is_terminal:
            if now - self._logged >= self.log_every_s:
                self._logged = now
                self._log_line(summary)
            return
        if self.live is None or now - self._last < 0.1:
            return
        self._last = now
        self._refresh(summary)

    def _refresh(self, summary: RunSummary) -> None:
        for cell, counts in summary.cells.items():
            if cell in self.tasks:
                self.bars.update(self.tasks[cell], completed=counts.done, errors=counts.errors)
        if self.live is not None:
            self.live.update(Group(self.bars, self._usage(summary)))

    def interrupting(self, summary: RunSummary) -> None:
        if self.live is not None:
            self._refresh(summary)
            self.live.stop()
            self.live = None
        self.console.print(
            "[yellow]interrupting[/]: stopping the samples in flight; a call to an in-process model (embedded, "
            "transformers) cannot be cut short and is waited for. Finished samples are kept.",
            highlight=False,
        )

    def stop(self, summary: RunSummary) -> None:
        if not self.console.is_terminal:
            self._log_line(summary)
            return
        if self.live is not None:
            self._refresh(summary)
            self.live.stop()
            self.live = None
            self.console.print()
