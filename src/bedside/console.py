"""The consoles every bedside command prints to, the one way a command fails (a red line, exit code 1), and the
one way a table is printed (readable in a terminal and in a log)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.errors import MarkupError
from rich.markup import escape
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.progress import Progress

out = Console()
err = Console(stderr=True)
for _console in (out, err):
    # Off a terminal (a log, CI, a pipe) a line is printed whole, not broken at rich's assumed 80 columns: a
    # command a message suggests ("every table: `bedside report RUN --store URL`") stays one line to copy.
    _console.soft_wrap = not _console.is_terminal


def fail(exc: Exception) -> typer.Exit:
    """Print ``exc`` as an error (never a traceback) and return the exit to raise."""
    err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True, soft_wrap=True)
    return typer.Exit(code=1)


def column_map(values: list[str] | None, option: str = "--column") -> dict[str, str] | None:
    """Repeated ``FIELD=COLUMN`` options as a column map, field → the file's column (None when none were given):
    the one way a command names the columns of a table whose layout bedside cannot know."""
    mapping: dict[str, str] = {}
    for value in values or []:
        field, sep, column = value.partition("=")
        if not sep or not field.strip() or not column.strip():
            raise ValueError(f"{option} {value!r}: expected FIELD=COLUMN")
        mapping[field.strip()] = column.strip()
    return mapping or None


def show_table(table: Table, console: Console | None = None) -> None:
    """A table as rich draws it on a terminal; as a Markdown table anywhere else (a log, CI, ``| tee``).

    Off a terminal rich assumes 80 columns and cuts every cell to fit ("cont…", "demo…"), which leaves a log
    unreadable; a Markdown table keeps every header and value whole, and still reads as a table.
    """
    console = console or out
    if console.is_terminal:
        console.print(table)
    else:
        console.print(markdown_table(table), markup=False, highlight=False, soft_wrap=True, crop=False)


def data_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[str]], caption: str = "") -> Table:
    """A table of plain data: every title, header, cell and caption shown as written, never read as rich markup
    (names such as ``concept_f1[umls]`` or ``comet[wmt22][src=bm25-events-400]`` would otherwise lose their
    brackets). The first column is left-aligned, the rest right-aligned."""
    table = Table(
        title=Text(title) if title else None, caption=Text(caption) if caption else None, caption_justify="left"
    )
    for index, column in enumerate(columns):
        table.add_column(Text(column), justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def markdown_table(table: Table) -> str:
    """``table`` as Markdown: title, header row (or none, for a key/value table), rows, caption."""
    columns = [[_plain(cell) for cell in column.cells] for column in table.columns]
    rows = list(zip(*columns, strict=True)) if columns else []
    lines = [f"**{_plain(table.title)}**", ""] if table.title else []
    if table.show_header:
        headers = [_plain(column.header) or " " for column in table.columns]
        lines += ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
    else:
        lines += ["  ".join(row).rstrip() for row in rows]
    if table.caption:
        lines += ["", _plain(table.caption)]
    return "\n".join(lines)


def _plain(value: object) -> str:
    if isinstance(value, Text):
        text = value.plain
    elif isinstance(value, str):
        try:
            text = Text.from_markup(value).plain
        except MarkupError:
            text = value
    else:
        text = "" if value is None else str(value)
    return " ".join(text.split()).replace("|", "\\|")


def show_rule(title: str, console: Console | None = None) -> None:
    """A section heading: rich's rule on a terminal; a plain ``== title ==`` line elsewhere, where the rule would
    cut the title to fit 80 columns."""
    console = console or out
    if console.is_terminal:
        console.rule(title)
    else:
        console.print(
            f"== {Text.from_markup(title).plain} ==", markup=False, highlight=False, soft_wrap=True, crop=False
        )


class Steps:
    """Progress through the steps a command takes before it prints anything (the sets ``guard-eval`` and
    ``fidelity-eval`` measure take minutes on a CPU, and a silent command looks hung): a transient bar on a
    terminal; off one (a log, CI), a plain line at most every ``every_s`` seconds, not a line per step.

    ``quiet`` prints nothing, for output that must stay machine-readable (``--json``, whose reader may see stderr
    mixed in)."""

    def __init__(
        self,
        what: str,
        total: int,
        unit: str,
        *,
        console: Console | None = None,
        every_s: float = 30.0,
        quiet: bool = False,
    ) -> None:
        self.what, self.total, self.unit, self.every_s, self.quiet = what, total, unit, every_s, quiet
        self.console = console or err
        self.done = 0
        self._started = self._logged = time.monotonic()
        self._bar: Progress | None = None

    def __enter__(self) -> Steps:
        self._started = self._logged = time.monotonic()
        if not self.quiet and self.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.start()
            self._bar.add_task(self.what, total=self.total)
        return self

    def advance(self, name: str) -> None:
        """One step done; ``name`` says which (the last one is shown)."""
        self.done += 1
        if self.quiet:
            return
        if self._bar is not None:
            (task,) = self._bar.task_ids
            self._bar.update(task, advance=1, description=f"{self.what}: {name}")
            return
        now = time.monotonic()
        if now - self._logged >= self.every_s and self.done < self.total:
            self._logged = now
            self.console.print(
                f"{self.what}: {self.done} of {self.total} {self.unit} (last: {name}), {now - self._started:.0f} s",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
