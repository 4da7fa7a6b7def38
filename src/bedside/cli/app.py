"""The root command, its global options, and the options several command groups share."""

from __future__ import annotations

import csv
import logging
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from bedside import __version__
from bedside.console import data_table, err, fail, out, show_table
from bedside.errors import StorageError
from bedside.inputs import InputError
from bedside.llm import Role, default_cache_path
from bedside.llm.secrets import install_log_redaction
from bedside.llm.usage import RoleUsage

# What the standard library raises on bad input that no reader should let through; caught as a last line so a
# reader missed by the fuzz tests still fails in one line, naming what it can.
_BAD_INPUT = (UnicodeError, RecursionError, OverflowError, csv.Error)


class BedsideGroup(TyperGroup):
    """The root command: an :class:`~bedside.inputs.InputError` that reaches it from any command or task group
    is printed as one line (file, line, field, reason) with exit code 1, as :func:`bedside.console.fail` prints
    a command's own errors; never a traceback. So is a :class:`~bedside.errors.StorageError` (a store or cache
    that cannot be opened: not a database, an unknown URL scheme, a URL naming no file). Most commands catch
    ``ValueError`` themselves, and every reader
    error is one; this is for the commands and plugin groups that do not."""

    def invoke(self, ctx: Any) -> Any:  # click's Context (typer vendors click; its path is private)
        try:
            return super().invoke(ctx)
        except (InputError, StorageError) as exc:
            raise fail(exc) from None
        except _BAD_INPUT as exc:
            raise fail(InputError(f"unreadable input ({type(exc).__name__}: {exc})")) from None


app = typer.Typer(
    name="bedside",
    cls=BedsideGroup,
    help="Build, simulate and evaluate LLM systems that talk to patients, grounded in their records.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # help is plain text, printed as written: Rich markup mode read "[default: ...]" as a style tag (and dropped
    # it) and ":b:" as an emoji
    rich_markup_mode=None,
)

ModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        help="PROVIDER/MODEL[@BASE_URL], e.g. embedded/smollm2-135m or "
        "openai-compatible/qwen2.5-7b@http://127.0.0.1:8000/v1",
    ),
]
CacheOption = Annotated[
    Path | None,
    typer.Option(
        "--cache", help="SQLite response cache [default: $BEDSIDE_CACHE or ~/.cache/bedside/llm-cache.sqlite]"
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON (for scripts), not as text.")]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")]
ApiKeyEnvOption = Annotated[
    str | None, typer.Option("--api-key-env", help="Name of the environment variable holding the API key.")
]


def _version(value: bool) -> None:
    if value:
        out.print(f"bedside {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log retries and other events.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    install_log_redaction()  # every logger's records, not only bedside.llm's: keys and URL userinfo masked
    warnings.showwarning = _show_warning


def _show_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    """bedside's own warnings (a record's skipped resources, a guard without its drug list) as one plain line
    that says what and where, not Python's source path and code line; others as Python prints them."""
    if category.__module__.startswith("bedside"):
        err.print(f"[yellow]warning[/]: {escape(str(message))}", highlight=False)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning


def settings_from_options(**options: Any) -> Any:
    """A command's generation settings from its options (``GenerationSettings``); a value the settings refuse
    (``--temperature -2``, ``nan``) is an error that names the option, not a validation traceback."""
    from pydantic import ValidationError

    from bedside.llm import GenerationSettings

    try:
        return GenerationSettings(**options)
    except ValidationError as exc:
        first = exc.errors()[0]
        option = "--" + str(first["loc"][0]).replace("_", "-") if first["loc"] else "a generation setting"
        raise fail(ValueError(f"{option} {first.get('input')!r}: {first['msg'].lower()}")) from None


def _cache_path(cache: Path | None, no_cache: bool) -> Path | None:
    return None if no_cache else cache or default_cache_path()


StoreOption = Annotated[
    str, typer.Option("--store", help="Results store: a SQLite path or a SQLAlchemy URL.", envvar="BEDSIDE_STORE")
]
DEFAULT_STORE = "runs/bedside.sqlite"


def read_store(location: str) -> Any:
    """The store at ``location`` for a command that only reads it (``ls``, ``show``, ``report``...): a SQLite file
    that does not exist is an error naming the path, never an empty store created there (a misspelt ``--store``
    would otherwise list no runs and leave an empty database behind)."""
    from bedside.runs.store import Store

    if "://" not in location and location != ":memory:" and not Path(location).expanduser().is_file():
        raise fail(
            ValueError(
                f"no store at {location}: nothing has been run there yet (check --store or BEDSIDE_STORE; "
                "`bedside run` creates the store)"
            )
        )
    return Store(location)


def usage_table(by_role: dict[Role, RoleUsage]) -> Table:
    table = Table(title="Model usage by role")
    for column in ("role", "calls", "cache hits", "requests", "tokens in", "tokens out", "cost", "errors"):
        table.add_column(column, justify="left" if column == "role" else "right")
    for role, entry in by_role.items():
        table.add_row(
            role,
            str(entry.calls),
            str(entry.cache_hits),
            str(entry.requests),
            str(entry.prompt_tokens),
            str(entry.completion_tokens),
            f"{entry.cost:.4f}" if entry.priced else "-",
            str(entry.errors),
        )
    return table


def print_task_tables(tables: Sequence[Any], console: Console = out) -> None:
    """A run's task tables (``ReportTable``) as rich tables."""
    for task_table in tables:
        show_table(data_table(task_table.title, task_table.columns, task_table.rows, task_table.note), console)
