"""`bedside judges`: the shipped rubrics, and one judgement from the command line."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from bedside.cli.app import (
    ApiKeyEnvOption,
    CacheOption,
    JsonOption,
    NoCacheOption,
    _cache_path,
    app,
    settings_from_options,
)
from bedside.console import err, fail, out, show_table
from bedside.llm import ModelError, UsageLedger, get_model

judges_app = typer.Typer(help="Rubric judges: list the shipped rubrics, show one, run one.", no_args_is_help=True)
app.add_typer(judges_app, name="judges")


@judges_app.command("list")
def judges_list(as_json: JsonOption = False) -> None:
    """The rubrics shipped with bedside (override one by putting a file with its id in $BEDSIDE_RUBRICS)."""
    from bedside.judges import load_rubric, shipped_rubrics

    if as_json:
        listed = [load_rubric(name) for name in shipped_rubrics()]
        typer.echo(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "title": r.title,
                        "source": r.source,
                        "criteria": [c.model_dump() for c in r.criteria],
                        "scale": r.scale.describe(),
                        "inputs": list(r.inputs),
                    }
                    for r in listed
                ],
                indent=2,
            )
        )
        return
    for name in shipped_rubrics():
        rubric = load_rubric(name)
        out.print(
            f"[bold]{rubric.id}[/]  {len(rubric.criteria)} criteria, {rubric.scale.describe()}; "
            f"inputs: {', '.join(rubric.inputs)}\n    {escape(rubric.title)} [dim]({escape(rubric.source)})[/]",
            highlight=False,
        )


RubricArgument = Annotated[str, typer.Argument(help="A shipped rubric id or a rubric file (.toml/.yaml).")]


@judges_app.command("show")
def judges_show(rubric: RubricArgument, as_json: JsonOption = False) -> None:
    """Print the prompt a rubric sends, with its inputs as placeholders."""
    from bedside.judges import RubricError, load_rubric
    from bedside.prompts import PromptError, render_chat

    try:
        loaded = load_rubric(rubric)
        sections = [(label, f"<{name}>") for name, label in {**loaded.inputs, **loaded.optional_inputs}.items()]
        messages = render_chat(loaded.template, rubric=loaded, sections=sections)
    except (RubricError, PromptError) as exc:
        raise fail(exc) from None
    if as_json:
        data = {"id": loaded.id, "title": loaded.title, "source": loaded.source}
        typer.echo(json.dumps({**data, "messages": [m.model_dump() for m in messages]}, indent=2))
        return
    out.print(f"[dim]{escape(loaded.id)}: {escape(loaded.title)} ({escape(loaded.source)})[/]", highlight=False)
    for message in messages:
        out.print(f"[bold]\\[{message.role}][/]", highlight=False)
        typer.echo(message.content)


def _judge_inputs(pairs: list[str]) -> dict[str, str]:
    inputs = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"--input takes NAME=TEXT or NAME=@FILE, not {pair!r}")
        if value.startswith("@"):
            path = Path(value[1:])
            try:
                value = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(f"--input {name}: cannot read {path}: {exc}") from None
        inputs[name] = value
    return inputs


@judges_app.command("run")
def judges_run(
    rubric: RubricArgument,
    inputs: Annotated[list[str], typer.Option("--input", "-i", help="NAME=TEXT or NAME=@FILE, once per rubric input.")],
    models: Annotated[
        list[str] | None,
        typer.Option("--model", "-m", help="Judge model; repeat for a jury. [default: embedded/smollm2-135m]"),
    ] = None,
    aggregate: Annotated[str, typer.Option("--aggregate", help="Jury aggregation: mean | median | majority")] = "mean",
    repeat: Annotated[
        int, typer.Option("--repeat", min=1, help="Ask one judge this many times and show the spread.")
    ] = 1,
    temperature: Annotated[float, typer.Option("--temperature", help="Sampling temperature.")] = 0.0,
    max_repairs: Annotated[int, typer.Option("--max-repairs", min=0, help="Re-asks after an invalid answer.")] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="Print the judgement as JSON.")] = False,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
    api_key_env: ApiKeyEnvOption = None,
) -> None:
    """Score inputs with a rubric: one judge, a jury (several -m), or one judge k times (--repeat)."""

    from bedside.judges import JudgeError, Jury, JuryError, RubricError, RubricJudge, load_rubric, repeat_judgement
    from bedside.prompts import PromptError

    if aggregate not in ("mean", "median", "majority"):
        raise fail(ValueError(f"--aggregate must be mean, median or majority, not {aggregate!r}"))
    specs = models or ["embedded/smollm2-135m"]
    if repeat > 1 and len(specs) > 1:
        raise fail(ValueError("--repeat measures one judge; give a single --model"))

    settings = settings_from_options(temperature=temperature, max_tokens=1024)

    async def go() -> object:
        loaded = load_rubric(rubric)
        values = _judge_inputs(inputs)
        ledger = UsageLedger()
        judge_models = [
            get_model(spec, role="judge", cache=_cache_path(cache, no_cache), usage=ledger, api_key_env=api_key_env)
            for spec in specs
        ]
        try:
            # The same model named twice is two jurors (useful with a temperature above 0): number them.
            names = [
                m.name if specs.count(spec) == 1 else f"{m.name}#{i + 1}"
                for i, (m, spec) in enumerate(zip(judge_models, specs, strict=True))
            ]
            judges = [
                RubricJudge(loaded, m, name=name, settings=settings, max_repairs=max_repairs)
                for m, name in zip(judge_models, names, strict=True)
            ]
            if repeat > 1:
                return await repeat_judgement(judges[0], values, repeat)
            if len(judges) > 1:
                return await Jury(judges, aggregate=aggregate).judge(values)  # type: ignore[arg-type]
            return await judges[0].judge(values)
        finally:
            for m in judge_models:
                await m.aclose()

    try:
        result = asyncio.run(go())
    except (RubricError, ModelError, JudgeError, JuryError, PromptError, ValueError) as exc:
        raise fail(exc) from None
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(result), indent=2, default=_jsonable))  # type: ignore[call-overload]
    else:
        _print_judgement(result)
    if not getattr(result, "judgements", True):  # a --repeat whose every draw failed measured nothing
        err.print(f"[red]error:[/] every one of the {repeat} draws failed: no score", highlight=False)
        raise typer.Exit(1)


def _jsonable(value: object) -> object:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _print_judgement(result: object) -> None:
    from bedside.judges import Judgement, JuryVerdict, Stability

    table = Table()
    if isinstance(result, Judgement):
        table.title = f"{result.rubric} by {result.judge} (aggregate {result.aggregate:.2f})"
        for column in ("criterion", "score", "justification"):
            table.add_column(column, overflow="fold")
        for name, entry in result.scores.items():
            table.add_row(name, f"{entry.score:g}", escape(entry.justification))
    elif isinstance(result, JuryVerdict):
        table.title = (
            f"{result.rubric}: jury of {len(result.judgements)} ({result.aggregate_by}) = {result.aggregate:.2f}"
        )
        judges = list(result.judgements)
        for column in ("criterion", *judges, result.aggregate_by, "agreement"):
            table.add_column(escape(column))
        for name, score in result.scores.items():
            table.add_row(
                name,
                *(f"{result.judgements[j].score(name):g}" for j in judges),
                f"{score:.2f}",
                f"{result.agreement[name]:.0%}",
            )
        for judge, cause in result.errors.items():
            err.print(f"[yellow]{escape(judge)} failed:[/] {escape(cause)}")
    elif isinstance(result, Stability):
        table.title = f"{result.rubric} by {result.judge}: {len(result.judgements)} draws"
        for column in ("criterion", "mean", "sd", "min", "max"):
            table.add_column(column)
        for name, s in result.criteria.items():
            table.add_row(name, f"{s.mean:.2f}", f"{s.stdev:.2f}", f"{s.low:g}", f"{s.high:g}")
        for epoch, cause in result.errors.items():
            err.print(f"[yellow]{epoch} failed:[/] {escape(cause)}")
    show_table(table)
