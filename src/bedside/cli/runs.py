"""`bedside run | ls | show | export | report | compare`: runs from a config, and what the store holds."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from bedside.cli.app import DEFAULT_STORE, JsonOption, NoCacheOption, StoreOption, app, read_store
from bedside.console import data_table, err, fail, out, show_rule, show_table
from bedside.llm import ModelError

RUN_HELP = "Run id, a unique prefix of one, or a config name (its latest run; the others are listed)."
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
        bool,
        typer.Option(
            "--allow-errors", help="Exit 0 even when some samples are errors or a declared scorer scored no sample."
        ),
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
    processes: Annotated[
        str,
        typer.Option(
            "--processes",
            help="With the local executor: worker processes on this machine, each endpoint's cap split between "
            "them (for runs of fast calls that keep one process's event loop busy), or auto: measured on the "
            "first samples (docs/scale-out.md).",
        ),
    ] = "1",
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
    from bedside.runs.processes import parse_processes

    try:
        chosen_processes = parse_processes(processes)
    except ValueError as exc:
        raise fail(exc) from None
    if chosen_processes != 1 and executor != "local":
        raise fail(ValueError("--processes is for the local executor; with --executor ray use --workers"))
    if dry_run:
        print_dry_run(loaded, retry_errors=retry_errors, cache=cache_choice, as_json=as_json)
        return
    try:  # before anything is printed or a store is opened: a scorer that cannot run here, an unknown option
        from bedside.runs.registry import resolve_task
        from bedside.runs.runner import check_config

        check_config(loaded, resolve_task(loaded.task))
    except ValueError as exc:
        raise fail(exc) from None
    if not as_json:
        from bedside.llm.secrets import scrub

        out.print(f"run [bold]{loaded.run_id}[/] -> {escape(scrub(loaded.store))}", highlight=False)
    progress = TerminalProgress(err)
    with _stop_on_sigterm() as terminated:
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
                            runtime_env=runtime_env_for(py_module or [], working_dir, loaded.runtime_env),
                        )
                    )
                except RayExecutorError as exc:
                    raise fail(exc) from None
            elif chosen_processes != 1:
                from bedside.runs.processes import ProcessExecutorError, execute_processes

                try:
                    summary = asyncio.run(
                        execute_processes(
                            loaded,
                            processes=chosen_processes,
                            progress=progress,
                            retry_errors=retry_errors,
                            cache=cache_choice,
                            on_choice=lambda choice: err.print(str(choice), highlight=False),
                        )
                    )
                except ProcessExecutorError as exc:
                    raise fail(exc) from None
            else:
                summary = asyncio.run(execute(loaded, progress=progress, retry_errors=retry_errors, cache=cache_choice))
        except KeyboardInterrupt:
            why = "terminated (SIGTERM)" if terminated else "interrupted"
            err.print(f"[yellow]{why}[/]: finished samples are stored; run the same command again to resume")
            raise typer.Exit(code=143 if terminated else 130) from None
        except (ValueError, ModelError, StorageError, RunLockedError) as exc:
            raise fail(exc) from None
    gated = _gate_results(loaded.store, summary.run_id, gates)
    failed_gates = [g for g in gated if not g.passed]
    empty = _unscored(loaded.store, summary.run_id)
    causes, steps = _failures(loaded.store, summary.run_id, summary.errors > 0)
    if as_json:
        data = summary_data(summary, loaded.store)
        data["error_causes"] = causes
        data["step_failures"] = steps
        if gates:
            data["gates"] = [{**g.__dict__, "passed": g.passed} for g in gated]
        data["unscored"] = empty
        typer.echo(json.dumps(data, indent=2))
        if ((summary.errors or empty) and not allow_errors) or failed_gates:
            raise typer.Exit(code=1)
        return
    if gated:
        _print_gates(gated)
    out.print(
        f"{summary.ran} samples run"
        + (f" and {summary.failed} failed" if summary.failed else "")
        + f", {summary.reused} reused, {summary.rescored} re-scored, in {summary.wall_s:.1f} s"
        + (f"; {summary.retried_errors} were errors tried again (--retry-errors)" if summary.retried_errors else "")
        + (
            f"; {summary.truncated} with an answer cut off (max_tokens or the repetition guard)"
            if summary.truncated
            else ""
        )
        + (f"; {summary.retried} run again after their Ray worker was lost" if summary.retried else "")
    )
    for cell, (count, where) in summary.reused_from_elsewhere.items():
        err.print(
            f"[yellow]warning:[/] {count} samples of {escape(cell)} were reused from another run whose answers came "
            f"from {escape(where)}, which this config does not name: a model's identity holds no URL, so if that "
            "server runs another model under the same name, give the models different names "
            "(docs/models.md), else ignore this",
            highlight=False,
            soft_wrap=True,
        )
    if summary.errors:
        _print_error_causes(causes)
        report_hint = f"bedside report {summary.run_id}" + _store_flag(loaded.store)
        rerun = _rerun_command(
            config, set_, limit=limit, cache=cache, no_cache=no_cache, executor=executor, address=address,
            workers=workers, processes=processes,
        )  # fmt: skip
        err.print(
            f"see `{escape(report_hint)}` for every error; `{escape(rerun)}` tries them again",
            highlight=False,
        )
    if steps:
        listed = ", ".join(f"{step} {count}" for step, count in steps.items())
        err.print(
            f"[yellow]failed steps[/] in stored samples ({listed}): their scores are absent, never zero; "
            f"`{escape(f'bedside report {summary.run_id}' + _store_flag(loaded.store))}` gives each cause",
            highlight=False,
        )
    out.print(
        f"{summary.errors} error(s); every table: `bedside report {summary.run_id}{_store_flag(loaded.store)}`",
        highlight=False,
        markup=False,
    )
    if empty:
        err.print(
            f"[red]nothing scored[/]: {', '.join(empty)} scored no sample of this run (every judgement failed, or "
            "nothing to compare with): the run fails as one with errors does"
            + (" (--allow-errors: exit 0)" if allow_errors else ""),
            highlight=False,
            soft_wrap=True,
        )
    if failed_gates:
        err.print(f"{len(failed_gates)} gate(s) failed", highlight=False)
    if ((summary.errors or empty) and not allow_errors) or failed_gates:
        raise typer.Exit(code=1)


@contextlib.contextmanager
def _stop_on_sigterm() -> Iterator[list[int]]:
    """While the run runs, SIGTERM (a container or job scheduler stopping it) stops it as Ctrl-C does: finished
    samples are kept and the run is marked interrupted, not left "stale". The handler hands the signal to
    asyncio's SIGINT handler where one is installed (it cancels the run), else raises KeyboardInterrupt (a
    process started with SIGINT ignored, as under nohup or a shell's ``&``). Yields a list that holds the signal
    once one arrived (exit 143); the previous handler comes back afterwards."""
    import signal

    arrived: list[int] = []

    def stop(signum: int, frame: Any) -> None:
        arrived.append(signum)
        if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
            raise KeyboardInterrupt
        signal.raise_signal(signal.SIGINT)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield arrived
    finally:
        signal.signal(signal.SIGTERM, previous)


def _unscored(store: str, run_id: str) -> list[str]:
    """Declared scorers that scored no sample (see :func:`bedside.runs.gates.unscored`)."""
    from bedside.errors import StorageError
    from bedside.runs import Store
    from bedside.runs.gates import unscored

    try:
        opened = Store(store)
    except StorageError:
        return []
    try:
        return unscored(opened, run_id)
    finally:
        opened.close()


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


MAX_CAUSES_SHOWN = 5


def _failures(store: str, run_id: str, errors: bool) -> tuple[dict[str, int], dict[str, int]]:
    """The run's stored errors grouped by cause, commonest first (see :func:`bedside.runs.report.error_causes`;
    read only when there are ``errors``), and its successful samples' failed later steps (a judge, a document)
    counted by step: a run whose samples all finished can still have every judge fail, and that is said at the
    end, not only in the report."""
    from bedside.errors import StorageError
    from bedside.runs import Store
    from bedside.runs.report import error_causes

    try:
        opened = Store(store)
    except StorageError:
        return {}, {}
    try:
        causes = dict(error_causes(opened.results(run_id)).most_common()) if errors else {}
        return causes, opened.step_failures(run_id)
    finally:
        opened.close()


def _print_error_causes(causes: dict[str, int]) -> None:
    """Each cause once, with how many samples it failed: a run where every sample failed for one reason says
    so in one line instead of leaving the reader to open the report."""
    if not causes:
        return
    total = sum(causes.values())
    err.print(f"[red]errors by cause[/] ({total} sample(s), {len(causes)} cause(s)):", highlight=False)
    for cause, count in list(causes.items())[:MAX_CAUSES_SHOWN]:
        err.print(f"  {count} × {escape(cause)}", highlight=False)
    if len(causes) > MAX_CAUSES_SHOWN:
        rest = list(causes.values())[MAX_CAUSES_SHOWN:]
        err.print(f"  ... and {len(rest)} other cause(s) ({sum(rest)} sample(s))", highlight=False)


def _store_flag(store: str) -> str:
    """`` --store STORE`` when the run's store is not the default one, quoted for a shell."""
    import shlex

    from bedside.llm.secrets import scrub

    return "" if store == DEFAULT_STORE else f" --store {shlex.quote(scrub(store))}"


def _rerun_command(
    config: Path,
    set_: list[str] | None,
    *,
    limit: int | None,
    cache: str | None,
    no_cache: bool,
    executor: str,
    address: str | None,
    workers: int,
    processes: str = "1",
) -> str:
    """The ``bedside run ... --retry-errors`` that retries this run: the same config and every option that
    changes which run it is or where it runs (``--set``, ``--limit``, the cache, the executor)."""
    import shlex

    parts = ["bedside", "run", str(config)]
    for item in set_ or []:
        parts += ["--set", item]
    if limit is not None:
        parts += ["--limit", str(limit)]
    if no_cache:
        parts.append("--no-cache")
    elif cache:
        parts += ["--cache", cache]
    if executor != "local":
        parts += ["--executor", executor, "--workers", str(workers)] + (["--address", address] if address else [])
    elif processes not in ("", "1"):
        parts += ["--processes", processes]
    parts.append("--retry-errors")
    return shlex.join(parts)


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
        bounds = expected.get("max_tokens") or {}
        per_call = ", ".join(f"{role} {n}" for role, n in sorted(bounds.items())) or "no max_tokens set"
        system = bounds.get("system")
        first = f"; the first calls: at most {expected['requests_at_least'] * system:,} output tokens" if system else ""
        out.print(
            "calls and cost: no successful sample of these systems in the store yet to estimate from. Known "
            f"bounds: at least {expected['requests_at_least']} request(s) (one a sample that needs the endpoint; "
            f"judges and simulations make more), each answer at most max_tokens ({per_call}){first}",
            highlight=False,
        )
    else:
        cost = (
            "unknown (set model_options.ROLE.price, or one price on every model alias of the role)"
            if expected["cost"] is None
            else f"{expected['cost']:.4f}"
        )
        out.print(
            f"expected ≈ {expected['calls']} model calls (from the stored samples' mean per system), cost ≈ {cost}",
            highlight=False,
        )


def runtime_env_for(py_modules: list[Path], working_dir: Path | None, configured: Any = None) -> dict[str, Any] | None:
    """The Ray ``runtime_env`` that ships the config's ``runtime_env`` folders and variables, the ``--py-module``
    folders and the ``--working-dir`` (the flag over the config's) to the workers, and passes on
    ``BEDSIDE_TASKS`` (which module:attribute tasks may be imported) so a worker resolves the same task as the
    driver."""
    env: dict[str, Any] = {}
    modules = [(f"runtime_env.py_modules: {p}", Path(p)) for p in (configured.py_modules if configured else [])]
    modules += [(f"--py-module {folder}", folder) for folder in py_modules]
    for said, folder in modules:
        if not folder.is_dir():
            raise fail(ValueError(f"{said}: not a folder (give the package's folder)"))
    if modules:
        env["py_modules"] = list(dict.fromkeys(str(folder.resolve()) for _, folder in modules))
    chosen = working_dir or (Path(configured.working_dir) if configured and configured.working_dir else None)
    if chosen is not None:
        if not chosen.is_dir():
            raise fail(ValueError(f"{'--working-dir' if working_dir else 'runtime_env.working_dir:'} {chosen}: "
                                  "not a folder"))  # fmt: skip
        env["working_dir"] = str(chosen.resolve())
    variables = dict(configured.env_vars) if configured else {}
    if os.environ.get("BEDSIDE_TASKS"):
        variables["BEDSIDE_TASKS"] = os.environ["BEDSIDE_TASKS"]
    if variables:
        env["env_vars"] = variables
    return env or None


def summary_data(summary: Any, store: str) -> dict[str, Any]:
    """What ``bedside run --json`` prints: the run's counts, per cell and in all, and usage by role."""
    return {
        "run": summary.run_id,
        "store": store,
        "ran": summary.ran,
        "failed": summary.failed,
        "retried_errors": summary.retried_errors,
        "reused": summary.reused,
        "reused_from_elsewhere": {
            cell: {"samples": n, "served_at": where} for cell, (n, where) in summary.reused_from_elsewhere.items()
        },
        "rescored": summary.rescored,
        "errors": summary.errors,
        "truncated": summary.truncated,
        "retried": summary.retried,
        "interrupted": summary.interrupted,
        "wall_s": round(summary.wall_s, 3),
        "cells": {cell: dataclasses.asdict(counts) for cell, counts in summary.cells.items()},
        "usage": {role: usage.model_dump() for role, usage in summary.usage.snapshot().items()},
    }


def resolve_run(opened: Any, ref: str) -> str:
    """The id of the run ``ref`` names (an id, a unique prefix, or a config name: its latest run). When a config
    name has several runs, say on stderr which one is used and list the others, so the choice is never silent."""
    resolved = opened.resolve(ref)
    if resolved.others:
        chosen = resolved.run
        err.print(
            f"{escape(ref)} has {len(resolved.others) + 1} runs; using the latest, [bold]{escape(chosen['id'])}[/] "
            f"(started {_when(chosen['created_at'])}, {escape(str(chosen['status']))}); pass a run id to choose "
            "another: " + ", ".join(f"{escape(r['id'])} ({_when(r['created_at'])})" for r in resolved.others),
            highlight=False,
        )
    return str(resolved.run["id"])


def _when(moment: Any) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S}" if moment is not None else "?"


@app.command("ls")
def ls_command(store: StoreOption = DEFAULT_STORE, as_json: JsonOption = False) -> None:
    """List the runs in a store, oldest first: each run's id, config name, start and last update, status and
    sample counts. Runs of one config name (the config changed between them) are numbered 1, 2, ... by start,
    and the latest, the one `bedside report NAME` picks, is marked."""
    from bedside.runs.store import run_recency

    opened = read_store(store)
    runs = opened.runs()
    opened.close()
    if as_json:
        fields = ("id", "name", "task", "status", "samples", "errors", "created_at", "updated_at", "git_commit")
        listed = [{**{k: run[k] for k in fields}, "planned": _planned(run)} for run in runs]
        typer.echo(json.dumps(listed, indent=2, default=str))
        return
    by_name: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by_name.setdefault(run["name"], []).append(run)
    latest = {name: max(named, key=run_recency)["id"] for name, named in by_name.items()}
    table = Table(box=None, padding=(0, 2))
    for column in ("run", "config", "task", "started", "updated", "status", "planned", "samples", "ok", "errors"):
        table.add_column(column, no_wrap=True)
    for run in runs:
        named = by_name[run["name"]]
        config = run["name"]
        if len(named) > 1:
            config += f" #{named.index(run) + 1} of {len(named)}"
            config += " (latest)" if latest[run["name"]] == run["id"] else ""
        table.add_row(
            run["id"],
            escape(config),
            run["task"],
            _when(run["created_at"]),
            _when(max(filter(None, (run["updated_at"], run.get("last_stored"))), default=None)),
            run["status"],
            "-" if (planned := _planned(run)) is None else str(planned),
            str(run["samples"]),
            str(run["samples"] - run["errors"]),
            str(run["errors"]),
        )
    show_table(table)


def _planned(run: dict[str, Any]) -> int | None:
    """Samples (× epochs) the run planned over all its cells; None where the store has no plan (an older bedside):
    a failed or interrupted run's stored samples are read against it."""
    planned = run.get("planned")
    return sum(int(n) for n in planned.values()) if planned else None


@app.command("show")
def show_command(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    sample: Annotated[str, typer.Argument(help="Sample id.")],
    store: StoreOption = DEFAULT_STORE,
    as_json: JsonOption = False,
) -> None:
    """Print one sample end to end: inputs, prompts sent, output, scores, errors, usage, and the generation
    settings each role's calls sent."""
    from bedside.runs.report import sent_lines

    opened = read_store(store)
    try:
        found = opened.run(resolve_run(opened, run))
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
        for line in sent_lines(row.calls or []):
            out.print(f"[dim]sent[/] {escape(line)}", highlight=False, soft_wrap=True)
    opened.close()


@app.command("export")
def export_command(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    format_: Annotated[str, typer.Option("--format", help="jsonl | parquet")] = "jsonl",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write [default: stdout for jsonl].")
    ] = None,
    store: StoreOption = DEFAULT_STORE,
    follow_symlinks: FollowSymlinksOption = False,
) -> None:
    """Export a run's results, one row per (cell, sample, epoch)."""
    from bedside.runs.report import export_jsonl, export_parquet
    from bedside.runs.store import iter_jsonl

    opened = read_store(store)
    try:
        rows = opened.results(resolve_run(opened, run))
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
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for the .md and .html files.")] = Path(
        "runs/reports"
    ),
    store: StoreOption = DEFAULT_STORE,
    as_json: JsonOption = False,
    follow_symlinks: FollowSymlinksOption = False,
) -> None:
    """Write a Markdown and a self-contained HTML report: tables with 95% CIs, strata, errors, usage, plots
    (with --json: print the same numbers, unrounded, and write no file)."""
    from bedside.runs.report import build_report, report_json, write_report

    opened = read_store(store)
    try:
        run = resolve_run(opened, run)
        if as_json:
            typer.echo(json.dumps(report_json(build_report(opened, run)), indent=2, ensure_ascii=False))
            return
        md, page = write_report(opened, run, output, follow_symlinks=follow_symlinks)
    except (LookupError, OSError) as exc:
        raise fail(exc) from None
    finally:
        opened.close()
    out.print(f"wrote {md} and {page}", highlight=False)


@app.command("leaderboard")
def leaderboard_command(
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric", help="Rank on this metric [default: the task's headline metric, else the run's first]."
        ),
    ] = None,
    task: Annotated[str | None, typer.Option("--task", help="Only runs of this task.")] = None,
    all_runs: Annotated[
        bool, typer.Option("--all-runs", help="Every run, not only the latest of each config name.")
    ] = False,
    ascending: Annotated[
        bool | None,
        typer.Option(
            "--ascending/--descending",
            help="Lower (or higher) is better [default: what the task says of the metric; higher otherwise].",
        ),
    ] = None,
    min_complete: Annotated[
        float,
        typer.Option(
            "--min-complete", min=0.0, max=1.0, help="Rank only cells that answered at least this share of samples."
        ),
    ] = 0.9,
    store: StoreOption = DEFAULT_STORE,
    as_json: JsonOption = False,
) -> None:
    """Rank every cell of the store's runs (the latest of each config, by default) per task and dataset on one
    metric, with its 95% interval, n scored and the share answered. A rank is an interval ("1–3"): cells whose
    intervals overlap share places; cells that answered too few samples are listed unranked. A ranking over
    unpaired samples: `bedside compare` tests a difference."""
    from bedside.runs.leaderboard import leaderboard

    opened = read_store(store)
    try:
        boards = leaderboard(
            opened, metric=metric, task=task, all_runs=all_runs, ascending=ascending, min_complete=min_complete
        )
    finally:
        opened.close()
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {
                        **dataclasses.asdict(b),
                        "entries": [
                            {**dataclasses.asdict(e), "rank": e.rank, "answered": e.answered, "note": e.note}
                            | ({"mean": None, "low": None, "high": None} if e.n == 0 else {})
                            for e in b.entries
                        ],
                    }
                    for b in boards
                ],
                indent=2,
            )
        )
        return
    if not boards:
        what = f"the metric {escape(metric)}" if metric else "a scored cell"
        of_task = f" of task {escape(task)}" if task else ""
        err.print(f"[red]error:[/] no run{of_task} in this store has {what}", highlight=False)
        raise typer.Exit(1)
    for board in boards:
        rows = [
            [e.rank, e.system, e.model, f"{e.mean:.4g} [{e.low:.4g}, {e.high:.4g}]" if e.n else "-", str(e.n),
             f"{e.answered:.0%}", str(e.errors), e.run, e.note]
            for e in board.entries
        ]  # fmt: skip
        title = f"{board.task} / {board.dataset}: {board.metric} ({'lower' if board.ascending else 'higher'} is better)"
        columns = ["rank", "system", "model", "mean [95% CI]", "n", "answered", "errors", "run", "note"]
        show_table(data_table(title, columns, rows))
    err.print(
        "a rank is the range of places the 95% intervals allow: overlapping cells share places",
        highlight=False,
    )


@app.command("compare")
def compare_command(
    run_a: Annotated[str, typer.Argument(help="Baseline run (A): " + RUN_HELP)],
    run_b: Annotated[
        str | None, typer.Argument(help="Run compared with it (B) [default: A again, with --a/--b or --baseline]")
    ] = None,
    select_a: Annotated[
        str | None,
        typer.Option("--a", help="Cells of A to compare, FIELD=VALUE[,...] (fields dataset, system, model, cell)."),
    ] = None,
    select_b: Annotated[str | None, typer.Option("--b", help="Cells of B to compare, as --a.")] = None,
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", help="Every other model of the run against this one (Holm over all of them)."),
    ] = None,
    fail_if_worse: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if-worse",
            help="A CI gate, METRIC[:MARGIN] (repeatable): exit 1 unless B − A's 95% CI lies above −MARGIN "
            "(non-inferiority) in every paired cell; a metric no pair scored fails.",
        ),
    ] = None,
    lower_is_better: Annotated[
        bool,
        typer.Option(
            "--lower-is-better",
            help="For --fail-if-worse: lower is better for every gated metric (a task's own error rates, such as "
            "matcher_failures, are known without it).",
        ),
    ] = False,
    allow_errors: Annotated[
        bool,
        typer.Option(
            "--allow-errors",
            help="For --fail-if-worse: gate on the samples both answered even where B failed samples A answered "
            "(by default that fails the gate).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Per paired cells and metric: mean difference B − A over paired samples, with a paired bootstrap 95% CI, its
    p-value and the p-value adjusted for every comparison shown (Holm), and the paired effect size d_z; warns
    below 20 pairs. Two runs, two selections of one run (--a model=X --b model=Y) or every model against
    --baseline MODEL; how cells pair: docs/comparing.md."""

    from bedside.runs.gates import GateError, check_worse, parse_worse_gate
    from bedside.runs.pairing import parse_selection
    from bedside.runs.report import compare

    opened = read_store(store)
    try:
        gates = [parse_worse_gate(text) for text in fail_if_worse or []]
        a = parse_selection(select_a, "--a") if select_a else None
        b = parse_selection(select_b, "--b") if select_b else None
        run_a = resolve_run(opened, run_a)
        run_b = resolve_run(opened, run_b) if run_b is not None else None
        comparison = compare(opened, run_a, run_b, a=a, b=b, baseline=baseline)
        task_name = opened.run(run_a)["task"]
    except (LookupError, ValueError, GateError) as exc:
        raise fail(exc) from None
    finally:
        opened.close()
    from bedside.runs.registry import lower_is_better as task_says_lower

    lower = {g.metric for g in gates if lower_is_better or task_says_lower(task_name, g.metric)}
    checked = [
        *check_worse(comparison, [g for g in gates if g.metric not in lower], allow_errors=allow_errors),
        *check_worse(
            comparison, [g for g in gates if g.metric in lower], lower_is_better=True, allow_errors=allow_errors
        ),
    ]
    if as_json:
        typer.echo(json.dumps([dataclasses.asdict(r) for r in comparison.rows], indent=2))
    else:
        title = f"{run_b or run_a} − {run_a}" if baseline is None else f"{run_a}: each model − {baseline}"
        _print_comparisons(comparison.rows, title)
    for pair in comparison.unpaired:
        err.print(
            f"[yellow]not compared:[/] {escape(pair.cell_b)} vs {escape(pair.cell_a)}: no sample answered by both "
            "(one of them failed or never ran every sample: see `bedside report`)",
            highlight=False,
            soft_wrap=True,
        )
    for pair in comparison.one_sided:
        sides = [f"{side} failed {n}" for side, n in (("B", pair.failed_b), ("A", pair.failed_a)) if n]
        err.print(
            f"[yellow]left out:[/] {escape(pair.cell_b)} vs {escape(pair.cell_a)}: {' and '.join(sides)} of the "
            f"samples the other answered (compared on the {pair.paired} both answered: see `bedside report`)",
            highlight=False,
            soft_wrap=True,
        )
    for result in checked:
        err.print(
            ("pass: " if result.passed else "[red]FAIL[/]: ") + escape(result.reason), highlight=False, soft_wrap=True
        )
    failed = [r for r in checked if not r.passed]
    if failed:
        err.print(f"{len(failed)} of {len(checked)} --fail-if-worse check(s) failed", highlight=False)
        raise typer.Exit(code=1)


def _p(p: float) -> str:
    """A bootstrap p-value: 0 means smaller than the resamples can resolve, never zero."""
    from bedside.stats.bootstrap import DEFAULT_RESAMPLES

    return f"<{2 / DEFAULT_RESAMPLES:.1g}" if p == 0 else f"{p:.3g}"


def _print_comparisons(rows: list[Any], title: str) -> None:
    from bedside.stats.rounding import rounded, signed

    table = Table(title=title, box=None, padding=(0, 1))
    for column in ("cell (A)", "cell (B)", "metric", "n", "A", "B", "B − A", "95% CI", "p", "p (Holm)", "d_z"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            escape(r.cell_a),
            escape(r.cell_b),
            escape(r.metric),
            str(r.n) + (" (small)" if r.small_n else ""),
            rounded(r.mean_a),
            rounded(r.mean_b),
            signed(r.difference),
            f"[{signed(r.low)}, {signed(r.high)}]",
            _p(r.p_value),
            _p(r.p_holm),
            "-" if r.effect_size is None else f"{r.effect_size:+.2f}",
        )
    show_table(table)
    if len(rows) > 1:
        err.print(
            f"{len(rows)} comparisons: read p (Holm), adjusted for all of them, before calling a difference real",
            highlight=False,
        )
    small = sorted({r.n for r in rows if r.small_n})
    if small:
        from bedside.runs.report import SMALL_N

        err.print(
            f"[yellow]warning[/]: {sum(r.small_n for r in rows)} comparison(s) rest on fewer than {SMALL_N} paired "
            f"samples (n = {', '.join(map(str, small))}): their intervals are too narrow and p-values too small to "
            "trust; run more samples",
            highlight=False,
        )
