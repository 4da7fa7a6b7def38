"""`bedside config check`: a run config validated as far as it can be without calling a model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from bedside.cli.app import JsonOption, app
from bedside.console import fail, out

config_app = typer.Typer(help="Run configs: check one before running it.", no_args_is_help=True)
app.add_typer(config_app, name="config")


def _names_template(key: str, value: object) -> bool:
    """Whether a system option names a prompt template (``template``, ``judge_template``, ...): checked to exist
    and parse, so a typo fails here and not on every sample."""
    return (key == "template" or key.endswith("_template")) and isinstance(value, str) and bool(value)


@config_app.command("check")
def config_check(
    config: Annotated[Path, typer.Argument(help="Run config (YAML or TOML).")],
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a config value: KEY=VALUE (dotted key); repeatable.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Check a config: its keys and values, the task and its systems and scorers, every model name (and that
    its API key variable is set), and every dataset (read in full). Errors name the file and the key."""
    from bedside.llm import ModelError
    from bedside.llm.config import parse_model_spec
    from bedside.llm.pool import build_provider
    from bedside.prompts import PromptError, load_template
    from bedside.runs import ConfigError, load_config
    from bedside.runs.registry import resolve_task
    from bedside.runs.runner import check_config, load_datasets
    from bedside.runs.scorers import resolve_scorers
    from bedside.runs.taskfile import TaskFromFile

    try:
        loaded = load_config(config, set_ or [])
    except ConfigError as exc:
        raise fail(exc) from None
    try:
        task = resolve_task(loaded.task)
    except ValueError as exc:
        raise fail(ValueError(f"{config}: task: {exc}")) from None
    try:
        scorers = check_config(loaded, task)
        resolutions = resolve_scorers(task, scorers)
    except ValueError as exc:
        raise fail(ValueError(f"{config}: {exc}")) from None
    for name, system in loaded.systems.items():
        for key, value in system.options.items():
            if _names_template(key, value):
                try:
                    load_template(value)
                except PromptError as exc:
                    raise fail(ValueError(f"{config}: systems.{name}.options.{key}: {exc}")) from None
    for role, specs in loaded.models.items():
        for index, spec in enumerate(specs):
            try:
                build_provider(parse_model_spec(loaded.model_spec(spec), **loaded.model_options.get(role, {})))
            except (ModelError, TypeError) as exc:
                raise fail(ValueError(f"{config}: models.{role}[{index}] ({spec}): {exc}")) from None
    try:
        datasets = load_datasets(loaded, task)
    except (ValueError, OSError) as exc:
        raise fail(ValueError(f"{config}: datasets: {exc}")) from None
    if isinstance(task, TaskFromFile):
        try:
            for system in loaded.systems.values():
                for name, rows in datasets.items():
                    task.check_variables(system.type, name, rows)
        except ValueError as exc:
            raise fail(ValueError(f"{config}: {exc}")) from None
    cells = len(loaded.datasets) * len(loaded.systems) * len(loaded.models["system"])
    summary: dict[str, object] = {
        "config": str(config),
        "run": loaded.run_id,
        "task": loaded.task,
        "cells": cells,
        "samples": {name: len(samples) for name, samples in datasets.items()},
        "systems": {name: system.type for name, system in loaded.systems.items()},
        "models": loaded.models,
        "scorers": scorers,
        "scorer_resolution": [
            {
                "name": r.name,
                "implementation": r.implementation,
                "text": r.text,
                "overrides_generic": r.overrides_generic,
            }
            for r in resolutions
        ],
        "store": loaded.store,
    }
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    samples = ", ".join(f"{name}: {len(found)}" for name, found in datasets.items())
    out.print(f"{config}: ok", highlight=False)
    out.print(f"run {loaded.run_id}; task {loaded.task}; {cells} cell(s); samples {samples}", highlight=False)
    out.print("scorers (name: implementation, what it scores):", highlight=False)
    for resolution in resolutions:
        out.print(f"  {resolution.line()}", highlight=False, markup=False, soft_wrap=True)
