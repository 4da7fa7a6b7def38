"""The ``bedside`` command. Thin on purpose: parse arguments, call the library, print."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bedside import __version__
from bedside.llm import GenerationSettings, ModelError, Role, UsageLedger, default_cache_path, get_model
from bedside.llm.usage import RoleUsage

app = typer.Typer(
    name="bedside",
    help="Build, simulate and evaluate LLM systems that talk to patients, grounded in their records.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

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


def _fail(exc: Exception) -> typer.Exit:
    err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True, soft_wrap=True)
    return typer.Exit(code=1)


def _cache_path(cache: Path | None, no_cache: bool) -> Path | None:
    return None if no_cache else cache or default_cache_path()


@app.command()
def generate(
    prompt: Annotated[str, typer.Argument(help="The user message; '-' reads it from standard input.")],
    model: ModelOption = "embedded/smollm2-135m",
    system: Annotated[str | None, typer.Option("--system", help="A system message sent before the prompt.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the completion and its usage as JSON.")] = False,
    max_tokens: Annotated[int | None, typer.Option(help="Most tokens to generate.")] = 256,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
    seed: Annotated[int | None, typer.Option(help="Sampling seed, where the endpoint supports one.")] = None,
    epoch: Annotated[str, typer.Option(help="Sample tag: each tag is a distinct cached draw.")] = "0",
    api_key_env: ApiKeyEnvOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Send one prompt to a model and print its answer."""
    text = sys.stdin.read() if prompt == "-" else prompt
    settings = GenerationSettings(max_tokens=max_tokens, temperature=temperature, seed=seed)

    async def run_command() -> None:
        async with get_model(model, cache=_cache_path(cache, no_cache), api_key_env=api_key_env) as llm:
            completion = await llm.generate(text, settings, system=system, epoch=epoch)
        if as_json:
            data = completion.model_dump(mode="json")
            data["text"] = completion.text
            data["usage"] = {**data["usage"], "total_tokens": completion.usage.total_tokens}
            out.print_json(json.dumps(data))
        else:
            out.print(completion.text, highlight=False, markup=False)

    try:
        asyncio.run(run_command())
    except (ModelError, ValueError) as exc:
        raise _fail(exc) from None


@app.command("serve-scripted")
def serve_scripted(
    port: Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")] = 8765,
    host: Annotated[str, typer.Option(help="Address to bind; keep the loopback default for tests.")] = "127.0.0.1",
    latency_ms: Annotated[float, typer.Option(help="Delay before each answer, in milliseconds.")] = 0.0,
    faults: Annotated[
        str | None, typer.Option(help="e.g. '429=0.1,500=0.05,hang=0.01,malformed=0.02,invalid-json=0.05'")
    ] = None,
    rules: Annotated[
        str | None, typer.Option(help="Rules file (YAML/JSON) or import path package.module:attribute.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the fault draws.")] = 0,
) -> None:
    """Serve scripted answers over the OpenAI chat API, for tests, benchmarks and fault drills."""
    from bedside.llm.scripted_server import ScriptedServer

    async def serve() -> None:
        server = ScriptedServer(rules, latency_ms=latency_ms, faults=faults, seed=seed, host=host, port=port)
        await server.start_async()
        out.print(f"serving scripted answers on {server.base_url}", highlight=False)
        sys.stdout.flush()
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop_async()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    except (ValueError, OSError) as exc:
        raise _fail(exc) from None


@app.command()
def demo(
    model: ModelOption = "embedded/smollm2-135m",
    messages: Annotated[
        Path | None, typer.Option(help="JSONL of portal messages [default: the bundled synthetic cohort's]")
    ] = None,
    records: Annotated[
        Path | None,
        typer.Option(help="Records to render chart summaries from [default: the bundled synthetic cohort]"),
    ] = None,
    limit: Annotated[int, typer.Option(help="Draft replies to the first N messages (0 = all).")] = 2,
    api_key_env: ApiKeyEnvOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Draft replies to synthetic patient portal messages and show them with token usage."""
    from bedside.data import DEMO_DIR
    from bedside.records import RecordError, read_records
    from bedside.tasks.drafting import draft_reply, load_portal_messages, with_chart_from

    usage = UsageLedger()

    async def run_command() -> None:
        portal = load_portal_messages(messages or DEMO_DIR / "portal_messages.jsonl")
        if any(m.chart_summary is None for m in portal):
            portal = with_chart_from(portal, read_records(records or DEMO_DIR / "cohort.jsonl"))
        portal = portal[:limit] if limit > 0 else portal
        async with get_model(model, cache=_cache_path(cache, no_cache), usage=usage, api_key_env=api_key_env) as llm:
            for item in portal:
                completion = await draft_reply(llm, item)
                out.rule(f"portal message {item.id}")
                out.print("[bold]Chart summary[/] (as of the message):", highlight=False)
                out.print(item.chart_summary, highlight=False, markup=False)
                out.print("[bold]Patient:[/]", escape(item.message), highlight=False)
                out.print(f"[bold]Draft reply[/] ({model}{', cached' if completion.cached else ''}):")
                out.print(completion.text, highlight=False, markup=False)
                out.print(
                    f"[dim]{completion.usage.prompt_tokens} prompt + {completion.usage.completion_tokens} "
                    f"completion tokens, {completion.latency_s:.2f} s, finish: {completion.finish_reason}[/]"
                )

    try:
        asyncio.run(run_command())
    except (ModelError, RecordError, ValueError, OSError) as exc:
        raise _fail(exc) from None
    out.print(usage_table(usage.snapshot()))


records_app = typer.Typer(help="Read patient records and render them as a model will see them.", no_args_is_help=True)
app.add_typer(records_app, name="records")

RecordFile = Annotated[Path, typer.Argument(help="FHIR R4 bundle (.json), MedAlign XML (.xml) or bedside JSONL.")]
PatientOption = Annotated[str | None, typer.Option("--patient", help="Which record of a multi-record JSONL file.")]


@records_app.command("show")
def records_show(path: RecordFile) -> None:
    """Print a short summary of each record in FILE: patient, counts by type, time span."""
    from bedside.records import RecordError, read_records

    try:
        records = read_records(path)
    except RecordError as exc:
        raise _fail(exc) from None
    for record in records:
        span = record.span()
        patient = record.patient
        born = f"born {patient.birth_date}" if patient.birth_date else "birth date unknown"
        died = f", died {patient.deceased_at:%Y-%m-%d}" if patient.deceased_at else ""
        period = f"{span[0]:%Y-%m-%d} to {span[1]:%Y-%m-%d}" if span else "no dated events"
        out.print(
            f"[bold]{record.id}[/]  {patient.gender or 'gender unknown'}, {born}{died}; {period}", highlight=False
        )
        table = Table(show_header=False, box=None, padding=(0, 2))
        table.add_column("type")
        table.add_column("count", justify="right")
        for kind, count in record.counts().items():
            table.add_row(kind, str(count))
        out.print(table)


@records_app.command("render")
def records_render(
    path: RecordFile,
    as_: Annotated[str, typer.Option("--as", help="chart | xml | sentences")] = "xml",
    at: Annotated[
        str | None, typer.Option("--at", help="ISO time: render the record as it stood then [default: its last event]")
    ] = None,
    patient: PatientOption = None,
    budget: Annotated[
        int | None, typer.Option("--budget", help="xml only: fit the most recent events into this many tokens.")
    ] = None,
    reserve: Annotated[int, typer.Option("--reserve", help="Tokens kept free for the answer when fitting.")] = 256,
    tokenizer: Annotated[
        str, typer.Option("--tokenizer", help="embedded | chars:N | path to a tokenizer.json (for --budget).")
    ] = "embedded",
) -> None:
    """Render one record as a chart summary, a MedAlign-style XML timeline, or numbered note sentences."""
    from bedside.records import RecordError, read_records
    from bedside.records.chart import render_chart_summary
    from bedside.records.fit import FitError, fit
    from bedside.records.numbered import render_numbered_sentences
    from bedside.records.timeline import render_timeline_xml
    from bedside.records.times import parse_user_time
    from bedside.text.tokens import TokenizerError, get_tokenizer

    if as_ not in ("chart", "xml", "sentences"):
        raise _fail(ValueError(f"--as must be chart, xml or sentences, not {as_!r}"))
    try:
        records = read_records(path)
        chosen = [r for r in records if patient is None or r.id == patient]
        if not chosen:
            raise ValueError(f"{path}: no record for patient {patient!r}" if patient else f"{path} holds no records")
        if len(chosen) > 1:
            raise ValueError(f"{path} holds {len(chosen)} records; choose one with --patient ID")
        record = chosen[0]
        when = parse_user_time(at) if at else None
        if as_ == "chart":
            span = record.span()
            chart_time = when or (span[1] if span else None)
            if chart_time is None:
                raise ValueError(f"{path}: the record has no dated events; give --at")
            typer.echo(render_chart_summary(record, chart_time), nl=False)
        elif as_ == "sentences":
            typer.echo(render_numbered_sentences(record, when), nl=False)
        elif budget is not None:
            fitted = fit(record, get_tokenizer(tokenizer), budget, reserve=reserve, at=when)
            typer.echo(fitted.text, nl=False)
            err.print(
                f"[dim]{fitted.tokens} tokens ({tokenizer}); kept {fitted.events_kept} events, "
                f"dropped {fitted.events_dropped} older[/]"
            )
        else:
            typer.echo(render_timeline_xml(record, when), nl=False)
    except (RecordError, FitError, TokenizerError, ValueError) as exc:
        raise _fail(exc) from None


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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
