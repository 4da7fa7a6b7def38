"""`bedside metrics`: the metrics bedside computes and whether each can run here."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from bedside.cli.app import app
from bedside.console import out, show_table

metrics_app = typer.Typer(help="The metrics bedside computes.", no_args_is_help=True)
app.add_typer(metrics_app, name="metrics")


@metrics_app.command("list")
def metrics_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Every metric with its definition, the name a run config's `scorers:` gives it, and whether it can run
    offline on this machine now."""
    from bedside.metrics.catalog import CATALOG

    rows = [(info, info.availability()) for info in CATALOG]
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {
                        "name": info.name,
                        "family": info.family,
                        "level": info.level,
                        "scorer": info.scorer,
                        "definition": info.definition,
                        "available": reason is None,
                        "unavailable_because": reason,
                    }
                    for info, reason in rows
                ],
                indent=2,
            )
        )
        return
    table = Table(title="bedside metrics", box=None, padding=(0, 1))
    for column in ("metric", "level", "run scorer", "offline", "definition"):
        table.add_column(column, no_wrap=column != "definition", overflow="fold")
    family = None
    for info, reason in rows:
        if info.family != family:
            family = info.family
            table.add_row(f"[bold]{family}[/]", "", "", "", "")
        table.add_row(
            f"  {escape(info.name)}",
            info.level,
            escape(info.scorer or "-"),
            "[green]yes[/]" if reason is None else "[yellow]no[/]",
            escape(info.definition),
        )
    show_table(table)
    out.print(
        "run scorer: the name a run config's `scorers:` takes for bedside's own scorer of the metric ('-': computed "
        "by a task or an analysis command); a task adds its own scorers (`bedside config check CONFIG` lists what "
        "each of a config's names runs).",
        highlight=False,
    )
    missing = [(info.name, reason) for info, reason in rows if reason]
    if missing:
        out.print("\nNot runnable here now:")
        for name, reason in missing:
            out.print(f"  {escape(name)}: {escape(reason)}", highlight=False)
