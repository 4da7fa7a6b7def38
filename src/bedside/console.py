"""The consoles every bedside command prints to, and the one way a command fails: a red line, exit code 1."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape

out = Console()
err = Console(stderr=True)


def fail(exc: Exception) -> typer.Exit:
    """Print ``exc`` as an error (never a traceback) and return the exit to raise."""
    err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True, soft_wrap=True)
    return typer.Exit(code=1)
