"""`bedside run | ls | show | export | report | compare`: runs from a config, and what the store holds."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from bedside.cli.app import DEFAULT_STORE, JsonOption, NoCacheOption, StoreOption, app
from bedside.console import data_table, err, fail, out, show_rule, show_table
from bedside.llm import ModelError

FollowSymlinksOption = Annotated[
    bool,
    typer.Option(
        "--follow-symlinks",
        help="Write through a symbolic link at the output path (refused by default: a planted link would make "
        "bedside overwrite its target).",
    ),
]


@app.command("run")
def run_command(
    config: Annotated[Path, typer.Argument(help="Run config (YAML or TOML).")],
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a config value: KEY=VALUE (dotted key); repeatable.")
    ] = None,
    retry_errors: Annotated[
        bool,
        typer.Option(
            "--retry-errors", help="Run the samples stored as errors again, asking anew for the answers that failed."
        ),
    ] = False,
    allow_errors: Annotated[
        bool, typer.Option("--allow-errors", help="Exit 0 even when some samples are errors.")
    ] = False,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N samples of each dataset.")
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Say what would run, what the cache would answer and what it may cost; send nothing."
        ),
    ] = False,
    cache: Annotated[
        str | None,
        typer.Option(
            "--cache",
            help="Response cache: a SQLite file or a postgresql+psycopg:// URL "
            "[default: $BEDSIDE_CACHE or ~/.cache/bedside/llm-cache.sqlite]",
        ),
    ] = None,
    no_cache: NoCacheOption = False,
    as_json: JsonOption = False,
    executor: Annotated[
        str,
        typer.Option("--executor", help="local (one process) or ray (samples sharded over Ray workers; extra `ray`)."),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(
            "--address",
            help="With --executor ray: an existing cluster (ray://HOST:10001, auto); else Ray starts "
            "here on 127.0.0.1.",
        ),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="With --executor ray: Ray workers.")] = 2,
    py_module: Annotated[
        list[Path] | None,
        typer.Option(
            "--py-module",
            help="With --executor ray: a package folder shipped to every worker (Ray runtime_env py_modules; "
            "repeatable), e.g. your task's package when the workers do not have it installed.",
        ),
    ] = None,
    working_dir: Annotated[
        Path | None,
        typer.Option(
            "--working-dir",
            help="With --executor ray: a folder shipped to every worker as its working directory (Ray "
            "runtime_env working_dir; at most 100 MiB), e.g. one holding the config's prompt templates.",
        ),
    ] = None,
    fail_under: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-under",
            help="A CI gate, METRIC=MINIMUM (repeatable): exit 1 unless every cell's mean of METRIC is at least "
            "MINIMUM (a cell where it is absent fails).",
        ),
    ] = None,
) -> None:
    """Run a config (or resume it): every finished sample is kept; re-running skips what is done.

    Exits 1 when any sample of the run is an error (stored now or before), unless --allow-errors; the error count
    is the last line printed. --limit N is a run of its own (its id differs), but the samples it finishes are
    reused, without a model call, by the full run afterwards."""
    from bedside.errors import StorageError
    from bedside.runs import ConfigError, execute, load_config
    from bedside.runs.gates import GateError, parse_gate
    from bedside.runs.progress import TerminalProgress
    from bedside.runs.store import RunLockedError

    try:
        loaded = load_config(config, set_ or [])
        gates = [parse_gate(text) for text in fail_under or []]
    except (ConfigError, GateError) as exc:
        raise fail(exc) from None
    if limit is not None:
        loaded = limited(loaded, limit)
    # --no-cache, else --cache, else the config's cache, else the default cache file.
    cache_choice: str | Path | bool = False if no_cache else _cache_location(cache or loaded.cache)
    if executor not in {"local", "ray"}:
        raise fail(ValueError(f"--executor must be local or ray, not {executor!r}"))
    if dry_run:
        print_dry_run(loaded, retry_errors=retry_errors, cache=cache_choice, as_json=as_json)
        return
    if not as_json:
        out.print(f"run [bold]{loaded.run_id}[/] -> {escape(loaded.store)}", highlight=False)
    progress = TerminalProgress(err)
    try:
        if executor == "ray":  # [scale-out] bedside.runs.ray_executor
            from bedside.runs.ray_executor import RayExecutorError, execute_ray

            try:
                summary = asyncio.run(
                    execute_ray(
                        loaded,
                        progress=progress,
                        retry_errors=retry_errors,
                        cache=cache_choice,
                        address=address,
                        workers=workers,
                        runtime_env=runtime_env_for(py_module or [], working_dir),
                    )
                )
            except RayExecutorError as exc:
                raise fail(exc) from None
        else:
            summary = asyncio.run(execute(loaded, progress=progress, retry_errors=retry_errors, cache=cache_choice))
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: finished samples are stored; run the same command again to resume")
        raise typer.Exit(code=130) from None
    except (ValueError, ModelError, StorageError, RunLockedError) as exc:
        raise fail(exc) from None
    gated = _gate_results(loaded.store, summary.run_id, gates)
    failed_gates = [g for g in gated if not g.passed]
    if as_json:
        data = summary_data(summary, loaded.store)
        if gates:
            data["gates"] = [{**g.__dict__, "passed": g.passed} for g in gated]
        typer.echo(json.dumps(data, indent=2))
        if (summary.errors and not allow_errors) or failed_gates:
            raise typer.Exit(code=1)
        return
    if gated:
        _print_gates(gated)
    out.print(
        f"{summary.ran} samples run, {summary.reused} reused, {summary.rescored} re-scored, in {summary.wall_s:.1f} s"
        + (
            f"; {summary.truncated} with an answer cut off (max_tokens or the repetition guard)"
            if summary.truncated
            else ""
        )
        + (f"; {summary.retried} run again after their Ray worker was lost" if summary.retried else "")
    )
    if summary.errors:
        err.print(
            f"see `bedside report {summary.run_id}` for the causes; `bedside run --retry-errors` tries them again",
            highlight=False,
        )
    out.print(f"{summary.errors} error(s)", highlight=False)
    if failed_gates:
        err.print(f"{len(failed_gates)} gate(s) failed", highlight=False)
    if (summary.errors and not allow_errors) or failed_gates:
        raise typer.Exit(code=1)


def _gate_results(store: str, run_id: str, gates: list[Any]) -> list[Any]:
    """The ``--fail-under`` gates checked on the stored run (see :mod:`bedside.runs.gates`)."""
    if not gates:
        return []
    from bedside.runs import Store
    from bedside.runs.gates import GateError, check_gates

    opened = Store(store)
    try:
        return check_gates(opened, run_id, gates)
    except GateError as exc:
        raise fail(exc) from None
    finally:
        opened.close()


def _print_gates(results: list[Any]) -> None:
    rows = [
        [r.cell, r.metric, f">= {r.minimum:g}", "absent" if r.mean is None else f"{r.mean:.4f}", str(r.n),
         "pass" if r.passed else "FAIL"]
        for r in results
    ]  # fmt: skip
    show_table(data_table("Gates (--fail-under)", ["cell", "metric", "minimum", "mean", "n", "result"], rows))


def _cache_location(location: str | None) -> str | Path | bool:
    """A cache named on the command line or in the config: a PostgreSQL URL stays a string, a path a Path;
    nothing named is the default cache (``True``)."""
    from bedside.llm.cache_postgres import is_postgres_url

    if not location:
        return True
    return location if is_postgres_url(location) else Path(location)


def limited(config: Any, limit: int) -> Any:
    """``config`` with every dataset cut to its first ``limit`` samples (or fewer, if its own limit is lower)."""
    datasets = {
        name: dataset.model_copy(update={"limit": min(dataset.limit or limit, limit)})
        for name, dataset in config.datasets.items()
    }
    return config.model_copy(update={"datasets": datasets})


def print_dry_run(config: Any, *, retry_errors: bool, cache: str | Path | bool, as_json: bool) -> None:
    from bedside.errors import StorageError
    from bedside.runs.dryrun import dry_run

    try:
        result = asyncio.run(dry_run(config, retry_errors=retry_errors, cache=cache))
    except (ValueError, ModelError, StorageError) as exc:
        raise fail(exc) from None
    data = result.data()
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    out.print(f"dry run of [bold]{data['run']}[/] (nothing is sent or written)", highlight=False)
    table = Table(title="Samples by cell")
    for column in ("cell", "samples", "finished", "stored errors", "re-score", "reuse", "to run"):
        table.add_column(column, justify="left" if column == "cell" else "right")
    for cell, counts in data["cells"].items():
        table.add_row(
            escape(cell), *(str(counts[k]) for k in ("samples", "finished", "stored_errors", "rescore", "reuse", "run"))
        )
    show_table(table)
    to_run = sum(c["run"] for c in data["cells"].values())
    if not to_run:
        out.print("nothing to run: every sample is finished or can be reused")
        return
    if data["cache"] is None:
        out.print(f"no response cache to replay from: all {to_run} sample(s) need the endpoint")
    else:
        out.print(
            f"from the cache ({data['cache']}): {data['replayable']} of {to_run} sample(s) replay entirely "
            f"({data['replayed_answers']} answers); {data['need_endpoint']} need the endpoint "
            f"({data['hits_before_miss']} answers cached before their first miss)",
            highlight=False,
        )
    for sample, cause in data["replay_errors"].items():
        err.print(f"[yellow]{escape(sample)}[/] would be an error again: {escape(cause)}")
    expected = data["expected"]
    if expected["calls"] is None:
        out.print("calls and cost: unknown (no successful sample of these systems in the store yet to estimate from)")
    else:
        cost = "unknown (set model_options.ROLE.price)" if expected["cost"] is None else f"{expected['cost']:.4f}"
        out.print(
            f"expected ≈ {expected['calls']} model calls (from the stored samples' mean per system), cost ≈ {cost}",
            highlight=False,
        )


def runtime_env_for(py_modules: list[Path], working_dir: Path | None) -> dict[str, Any] | None:
    """The Ray ``runtime_env`` that ships ``--py-module`` folders and the ``--working-dir`` to the workers, and
    passes on ``BEDSIDE_TASKS`` (which module:attribute tasks may be imported) so a worker resolves the same
    task as the driver."""
    env: dict[str, Any] = {}
    for folder in py_modules:
        if not folder.is_dir():
            raise fail(ValueError(f"--py-module {folder}: not a folder (give the package's folder)"))
    if py_modules:
        env["py_modules"] = [str(folder.resolve()) for folder in py_modules]
    if working_dir is not None:
        if not working_dir.is_dir():
            raise fail(ValueError(f"--working-dir {working_dir}: not a folder"))
        env["working_dir"] = str(working_dir.resolve())
    if os.environ.get("BEDSIDE_TASKS"):
        env["env_vars"] = {"BEDSIDE_TASKS": os.environ["BEDSIDE_TASKS"]}
    return env or None


def summary_data(summary: Any, store: str) -> dict[str, Any]:
    """What ``bedside run --json`` prints: the run's counts, per cell and in all, and usage by role."""
    return {
        "run": summary.run_id,
        "store": store,
        "ran": summary.ran,
        "reused": summary.reused,
        "rescored": summary.rescored,
        "errors": summary.errors,
        "truncated": summary.truncated,
        "retried": summary.retried,
        "interrupted": summary.interrupted,
        "wall_s": round(summary.wall_s, 3),
        "cells": {cell: dataclasses.asdict(counts) for cell, counts in summary.cells.items()},
        "usage": {role: usage.model_dump() for role, usage in summary.usage.snapshot().items()},
    }


@app.command("ls")
def ls_command(store: StoreOption = DEFAULT_STORE, as_json: JsonOption = False) -> None:
    """List the runs in a store."""
    from bedside.runs import Store

    opened = Store(store)
    if as_json:
        runs = opened.runs()
        opened.close()
        fields = ("id", "name", "task", "status", "samples", "errors", "created_at", "updated_at", "git_commit")
        typer.echo(json.dumps([{k: run[k] for k in fields} for run in runs], indent=2, default=str))
        return
    table = Table(box=None, padding=(0, 2))
    for column in ("run", "task", "created", "status", "samples", "errors"):
        table.add_column(column, no_wrap=True)
    for run in opened.runs():
        table.add_row(
            run["id"],
            run["task"],
            f"{run['created_at']:%Y-%m-%d %H:%M}",
            run["status"],
            str(run["samples"]),
            str(run["errors"]),
        )
    show_table(table)
    opened.close()


@app.command("show")
def show_command(
    run: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    sample: Annotated[str, typer.Argument(help="Sample id.")],
    store: StoreOption = DEFAULT_STORE,
    as_json: JsonOption = False,
) -> None:
    """Print one sample end to end: inputs, prompts sent, output, scores, errors, usage."""
    from bedside.runs import Store

    opened = Store(store)
    try:
        found = opened.run(run)
    except LookupError as exc:
        raise fail(exc) from None
    rows = [r for r in opened.results(found["id"]) if r.sample_id == sample]
    if not rows:
        raise fail(LookupError(f"run {found['id']} has no sample {sample!r}"))
    if as_json:  # every stored row of the sample (one per cell and epoch), as `bedside export` writes them
        opened.close()
        typer.echo(json.dumps([row.__dict__ for row in rows], indent=2, ensure_ascii=False))
        return
    show_rule(f"sample {escape(sample)}: inputs and references")
    typer.echo(json.dumps(rows[0].sample, indent=2, ensure_ascii=False))
    for row in rows:
        show_rule(f"{escape(row.cell)} epoch {row.epoch}: {row.status}")
        if row.error:
            err.print(f"[red]error:[/] {escape(row.error)}")
        if row.output:
            for i, prompt in enumerate(row.output.get("prompts") or [], start=1):
                out.print(f"[dim]prompt {i}[/]")
                for message in prompt:
                    out.print(f"[bold]\\[{message['role']}][/]", highlight=False)
                    typer.echo(message["content"])
            if row.output.get("transcript"):
                out.print("[dim]transcript[/]")
                for turn in row.output["transcript"]:
                    typer.echo(f"{turn['role']}: {turn['content']}")
            out.print("[dim]output[/]")
            typer.echo(row.output.get("text", ""))
        if row.failure:
            out.print(f"[dim]failure[/] {escape(json.dumps(row.failure))}", highlight=False)
        out.print(f"[dim]scores[/] {escape(json.dumps(row.scores))}", highlight=False)
        out.print(f"[dim]usage[/] {escape(json.dumps(row.usage))}", highlight=False)
    opened.close()


@app.command("export")
def export_command(
    run: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    format_: Annotated[str, typer.Option("--format", help="jsonl | parquet")] = "jsonl",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write [default: stdout for jsonl].")
    ] = None,
    store: StoreOption = DEFAULT_STORE,
    follow_symlinks: FollowSymlinksOption = False,
) -> None:
    """Export a run's results, one row per (cell, sample, epoch)."""
    from bedside.runs import Store
    from bedside.runs.report import export_jsonl, export_parquet
    from bedside.runs.store import iter_jsonl

    opened = Store(store)
    try:
        rows = opened.results(opened.run(run)["id"])
    except LookupError as exc:
        raise fail(exc) from None
    try:
        if format_ == "jsonl":
            if output is None:
                for line in iter_jsonl(rows):
                    typer.echo(line)
            else:
                export_jsonl(rows, output, follow_symlinks=follow_symlinks)
        elif format_ == "parquet":
            if output is None:
                raise fail(ValueError("--format parquet needs --output FILE"))
            export_parquet(rows, output, follow_symlinks=follow_symlinks)
        else:
            raise fail(ValueError(f"--format must be jsonl or parquet, not {format_!r}"))
    except (ImportError, OSError) as exc:
        raise fail(exc) from None
    finally:
        opened.close()


@app.command("report")
def report_command(
    run: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for the .md and .html files.")] = Path(
        "runs/reports"
    ),
    store: StoreOption = DEFAULT_STORE,
    as_json: JsonOption = False,
    follow_symlinks: FollowSymlinksOption = False,
) -> None:
    """Write a Markdown and a self-contained HTML report: tables with 95% CIs, strata, errors, usage, plots
    (with --json: print the same numbers, unrounded, and write no file)."""
    from bedside.runs import Store
    from bedside.runs.report import build_report, report_json, write_report

    opened = Store(store)
    try:
        if as_json:
            typer.echo(json.dumps(report_json(build_report(opened, run)), indent=2, ensure_ascii=False))
            return
        md, page = write_report(opened, run, output, follow_symlinks=follow_symlinks)
    except (LookupError, OSError) as exc:
        raise fail(exc) from None
    finally:
        opened.close()
    out.print(f"wrote {md} and {page}", highlight=False)


@app.command("compare")
def compare_command(
    run_a: Annotated[str, typer.Argument(help="Baseline run (A).")],
    run_b: Annotated[str, typer.Argument(help="Run compared with it (B).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Per metric: mean difference B − A over paired samples, with a paired bootstrap 95% CI and p-value."""

    from bedside.runs import Store
    from bedside.runs.report import compare

    opened = Store(store)
    try:
        rows = compare(opened, run_a, run_b)
    except (LookupError, ValueError) as exc:
        raise fail(exc) from None
    finally:
        opened.close()
    if as_json:
        typer.echo(json.dumps([dataclasses.asdict(r) for r in rows], indent=2))
        return
    table = Table(title=f"{run_b} − {run_a}", box=None, padding=(0, 1))
    for column in ("cell (A)", "metric", "n", "A", "B", "B − A", "95% CI", "p"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            escape(r.cell_a),
            escape(r.metric),
            str(r.n),
            f"{r.mean_a:.3f}",
            f"{r.mean_b:.3f}",
            f"{r.difference:+.3f}",
            f"[{r.low:+.3f}, {r.high:+.3f}]",
            f"{r.p_value:.3g}",
        )
    show_table(table)
