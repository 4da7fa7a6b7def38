"""The ``bedside`` command. Thin on purpose: parse arguments, call the library, print."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bedside import __version__
from bedside.console import err, fail, out
from bedside.llm import GenerationSettings, Model, ModelError, Role, UsageLedger, default_cache_path, get_model
from bedside.llm.usage import RoleUsage
from bedside.tasks.citeqa.cli import citeqa_app
from bedside.tasks.discharge.cli import discharge_app
from bedside.tasks.drafting.cli import drafting_app
from bedside.tasks.instruct.cli import instruct_app
from bedside.tasks.sensemaking.cli import sensemaking_app
from bedside.training.cli import train_app

app = typer.Typer(
    name="bedside",
    help="Build, simulate and evaluate LLM systems that talk to patients, grounded in their records.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
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
        raise fail(exc) from None


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
        raise fail(exc) from None


async def _demo_citeqa(llm: Model, limit: int) -> None:
    """The 2-stage grounded-QA system on the synthetic cases, with the official factuality/relevance table."""
    from bedside.tasks.citeqa import read_cases, score_answers
    from bedside.tasks.citeqa.cli import print_scores
    from bedside.tasks.citeqa.task import SYNTHETIC_CASES, answer_cases

    cases = read_cases(SYNTHETIC_CASES)[:limit]
    out.rule(f"grounded answers with citations: 2-stage system, {len(cases)} synthetic cases")
    answers, errors = await answer_cases(
        cases, "two_stage", llm, settings=GenerationSettings(max_tokens=400, seed=0), concurrency=2
    )
    for case in cases:
        out.print(f"[bold]{case.id}[/] {escape(case.clinician_question)}", highlight=False)
        if case.id in answers:
            out.print(answers[case.id], highlight=False, markup=False)
        else:
            out.print(f"[red]failed:[/] {escape(errors[case.id])}", highlight=False, soft_wrap=True)
    answered = [c for c in cases if c.id in answers]
    if answered:
        print_scores(score_answers(answered, answers), out)
    out.print(f"{len(answered)} of {len(cases)} cases answered; failures are listed above with their cause")


def print_task_tables(tables: Sequence[Any], console: Console = out) -> None:
    """A run's task tables (``ReportTable``) as rich tables."""
    for task_table in tables:
        table = Table(title=task_table.title, caption=task_table.note or None, caption_justify="left")
        for index, column in enumerate(task_table.columns):
            table.add_column(column, justify="left" if index == 0 else "right")
        for row in task_table.rows:
            table.add_row(*row)
        console.print(table)


def _demo_drafting(
    model: str,
    *,
    messages: Path | None,
    records: Path | None,
    limit: int,
    cache: str | Path | bool,
    store: str,
    reports: Path,
) -> None:
    """Zero-shot and thematic drafts for the synthetic messages, through a stored run; EditJudge tables."""
    from bedside.runs import RunConfig, Store, execute
    from bedside.runs.progress import TerminalProgress
    from bedside.runs.report import build_report, write_report
    from bedside.tasks.drafting.cli import print_judgement
    from bedside.tasks.drafting.editjudge import EditJudgement

    dataset: dict[str, Any] = {"options": {"records": str(records)} if records else {}}
    if messages:
        dataset["path"] = str(messages)
    if limit > 0:
        dataset["limit"] = limit
    evaluation = {"matcher": "embedding", "themes": "offline"}
    config = RunConfig.model_validate(
        {
            "name": "demo-drafting",
            "task": "drafting",
            "datasets": {"demo": dataset},
            "systems": {
                "zero_shot": {"type": "zero_shot", "options": evaluation},
                "thematic": {"type": "thematic", "options": evaluation},
            },
            "models": {"system": [model]},
            "settings": {"system": {"max_tokens": 200, "temperature": 0.0, "seed": 0}},
            "concurrency": 2,
            "store": store,
        }
    )
    out.rule("portal reply drafting: zero-shot and thematic, scored with EditJudge (embedding matcher)")
    summary = asyncio.run(execute(config, progress=TerminalProgress(err), cache=cache))
    opened = Store(store)
    try:
        rows = [r for r in opened.results(summary.run_id) if r.status == "ok"]
        report = build_report(opened, summary.run_id)
        md, page = write_report(opened, summary.run_id, reports)
    finally:
        opened.close()
    shown = next((r for r in rows if r.system == "thematic"), None)
    if shown is not None and shown.output:
        out.print(f"[bold]{shown.sample_id}[/], thematic draft ({model}):", highlight=False)
        out.print(shown.output["text"], highlight=False, markup=False)
        evaluation_data = shown.output["extra"]["editjudge"]
        print_judgement(EditJudgement.from_dict(evaluation_data["content"]))
    print_task_tables(report.tables[:2])
    out.print(f"{summary.errors} sample(s) failed; full report with every table: {page} (and {md})", highlight=False)


def _demo_simulation(
    title: str, run: dict[str, Any], *, model: str, speakers: tuple[str, str], cache: str | Path | bool, store: str
) -> None:
    """Run a short simulation config on ``model`` in every role; show the first conversation and the first tables."""
    from bedside.runs import RunConfig, Store, execute
    from bedside.runs.progress import TerminalProgress
    from bedside.runs.report import build_report

    config = RunConfig.model_validate(
        {**run, "models": {role: [model] for role in ("system", "patient", "helper", "judge")}, "store": store}
    )
    out.rule(title)
    summary = asyncio.run(execute(config, progress=TerminalProgress(err), cache=cache))
    opened = Store(store)
    try:
        rows = [r for r in opened.results(summary.run_id) if r.status == "ok"]
        report = build_report(opened, summary.run_id)
    finally:
        opened.close()
    if rows and rows[0].output:
        out.print(f"[bold]{rows[0].sample_id}[/] ({model}):", highlight=False)
        for turn in rows[0].output["transcript"] or []:
            speaker = speakers[0] if turn["role"] == "clinician" else speakers[1]
            out.print(f"[dim]{turn['stage']}[/] {speaker}: {escape(turn['content'])}", highlight=False)
    print_task_tables(report.tables[:3])
    out.print(
        f"{summary.errors} sample(s) failed; `bedside report {summary.run_id} --store {store}` shows every table",
        highlight=False,
    )


def _demo_discharge(model: str, *, profiles: int, cache: str | Path | bool, store: str) -> None:
    """A short DischargeSim run: the first synthetic case under the first N profile levels, demo schedule."""
    run = {
        "name": "demo-discharge",
        "task": "discharge",
        "datasets": {"synthetic": {"limit": profiles, "options": {"profiles": "one_at_a_time"}}},
        "systems": {
            "dischargesim": {
                "type": "dischargesim",
                "options": {"schedule": "demo", "judges": ["conversation", "summary_a"], "documents_max_tokens": 600},
            }
        },
        "settings": {
            "system": {"max_tokens": 160, "temperature": 0.0},
            "patient": {"max_tokens": 80, "temperature": 0.0},
            "judge": {"max_tokens": 800, "temperature": 0.0},
        },
        "concurrency": 2,
    }
    title = f"discharge education by simulation: {profiles} conversation(s), demo schedule (one message per stage)"
    _demo_simulation(title, run, model=model, speakers=("Doctor", "Patient"), cache=cache, store=store)


def _demo_sensemaking(model: str, *, conversations: int, cache: str | Path | bool, store: str) -> None:
    """A short MedAgent run: the first synthetic vignette with N personas, efficient path, 4 sensemaker messages."""
    run = {
        "name": "demo-sensemaking",
        "task": "sensemaking",
        "datasets": {"synthetic": {"limit": conversations, "options": {"cases": 1}}},
        "systems": {
            "medagent": {
                "type": "medagent",
                "options": {"path": "efficient", "max_sensemaker_messages": 4, "judges": ["flow", "hard", "soft"]},
            }
        },
        "settings": {
            "system": {"max_tokens": 1000, "temperature": 0.0},
            "patient": {"max_tokens": 250, "temperature": 0.0},
            "judge": {"max_tokens": 400, "temperature": 0.0},
        },
        "concurrency": 2,
    }
    title = f"mental-health sensemaking: {conversations} conversation(s), at most 4 sensemaker messages (demo limit)"
    _demo_simulation(title, run, model=model, speakers=("Sensemaker", "Patient"), cache=cache, store=store)


def _demo_instruct(model: str, *, instructions: int, cache: str | Path | bool, store: str) -> None:
    """MedAlign-style instructions: the budgeted prompt at two context lengths and multi-step refinement."""
    from bedside.runs import RunConfig, Store, execute
    from bedside.runs.progress import TerminalProgress
    from bedside.runs.report import build_report

    # Budgets are counted in the model's own tokens: the embedded model's tokenizer, else a named estimate of
    # one token per 3 characters (conservative for English clinical text); give a real one in a run config.
    tokenizer = "embedded" if model.startswith("embedded/") else "chars:3"
    config = RunConfig.model_validate(
        {
            "name": "demo-instruct",
            "task": "instruct",
            "datasets": {"synthetic": {"limit": instructions}},
            "systems": {
                "budgeted_512": {"type": "budgeted", "options": {"context": 512, "tokenizer": tokenizer}},
                "budgeted_1536": {"type": "budgeted", "options": {"context": 1536, "tokenizer": tokenizer}},
                "refine_1536": {"type": "refine", "options": {"context": 1536, "tokenizer": tokenizer}},
            },
            "models": {"system": [model]},
            "settings": {"system": {"max_tokens": 48, "temperature": 0.0, "seed": 0}},
            "scorers": ["facts_recall", "facts_correct", "truncated", "google_bleu"],
            "concurrency": 2,
            "store": store,
        }
    )
    out.rule(
        f"clinician instructions over records: {instructions} synthetic instruction(s), 512 vs 1536 tokens, MR at 1536"
    )
    summary = asyncio.run(execute(config, progress=TerminalProgress(err), cache=cache))
    opened = Store(store)
    try:
        rows = [r for r in opened.results(summary.run_id) if r.status == "ok" and r.system == "budgeted_1536"]
        report = build_report(opened, summary.run_id)
    finally:
        opened.close()
    if rows and rows[0].output:
        question = rows[0].sample["inputs"]["instruction"]["question"]
        out.print(f"[bold]{rows[0].sample_id}[/] {escape(question)}", highlight=False)
        out.print(rows[0].output["text"], highlight=False, markup=False)
    if report.tables:
        wanted = ("system", "context", "n", "facts correct", "facts recall", "truncated", "prompt tokens")
        full = report.tables[0]
        keep = [full.columns.index(c) for c in wanted]
        compact = dataclasses.replace(
            full, columns=list(wanted), rows=[[row[i] for i in keep] for row in full.rows], note=""
        )
        print_task_tables([compact])
    out.print(
        f"{summary.errors} sample(s) failed; `bedside report {summary.run_id} --store {store}` shows every table",
        highlight=False,
    )


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
    limit: Annotated[int, typer.Option(help="Draft replies to the first N messages (0 = all).")] = 0,
    citeqa_cases: Annotated[
        int, typer.Option(help="Answer the first N synthetic grounded-QA cases with the 2-stage system (0 = none).")
    ] = 10,
    discharge_conversations: Annotated[
        int, typer.Option(help="Simulate discharge conversations for the first N profile levels (0 = none).")
    ] = 1,
    sensemaking_conversations: Annotated[
        int, typer.Option(help="Simulate sensemaking conversations for the first N personas (0 = none).")
    ] = 1,
    instruct_instructions: Annotated[
        int, typer.Option(help="Answer the first N synthetic clinician instructions over records (0 = none).")
    ] = 3,
    store: StoreOption = "runs/demo.sqlite",
    reports: Annotated[Path, typer.Option(help="Folder for the drafting run's HTML and Markdown report.")] = Path(
        "runs/reports"
    ),
    api_key_env: ApiKeyEnvOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Draft replies to synthetic portal messages and score them with EditJudge; answer synthetic questions
    about a stay with cited evidence; simulate a discharge conversation and a sensemaking conversation and score
    them."""
    from bedside.records import RecordError

    cache_choice: str | Path | bool = False if no_cache else (cache or True)
    try:
        _demo_drafting(
            model, messages=messages, records=records, limit=limit, cache=cache_choice, store=store, reports=reports
        )
    except (ModelError, RecordError, ValueError, OSError) as exc:
        raise fail(exc) from None
    if citeqa_cases > 0:
        usage = UsageLedger()

        async def run_citeqa() -> None:
            async with get_model(
                model, cache=_cache_path(cache, no_cache), usage=usage, api_key_env=api_key_env
            ) as llm:
                await _demo_citeqa(llm, citeqa_cases)

        try:
            asyncio.run(run_citeqa())
        except (ModelError, ValueError, OSError) as exc:
            raise fail(exc) from None
        out.print(usage_table(usage.snapshot()))
    if discharge_conversations > 0:
        try:
            _demo_discharge(model, profiles=discharge_conversations, cache=cache_choice, store=store)
        except (ModelError, ValueError, OSError) as exc:
            raise fail(exc) from None
    if sensemaking_conversations > 0:
        try:
            _demo_sensemaking(model, conversations=sensemaking_conversations, cache=cache_choice, store=store)
        except (ModelError, ValueError, OSError) as exc:
            raise fail(exc) from None
    if instruct_instructions > 0:
        try:
            _demo_instruct(model, instructions=instruct_instructions, cache=cache_choice, store=store)
        except (ModelError, ValueError, OSError) as exc:
            raise fail(exc) from None


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
        raise fail(exc) from None
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
        raise fail(ValueError(f"--as must be chart, xml or sentences, not {as_!r}"))
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
        raise fail(exc) from None


metrics_app = typer.Typer(help="The metrics bedside computes.", no_args_is_help=True)
app.add_typer(metrics_app, name="metrics")


@metrics_app.command("list")
def metrics_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Every metric with its definition, and whether it can run offline on this machine now."""
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
    for column in ("metric", "level", "offline", "definition"):
        table.add_column(column, no_wrap=column != "definition", overflow="fold")
    family = None
    for info, reason in rows:
        if info.family != family:
            family = info.family
            table.add_row(f"[bold]{family}[/]", "", "", "")
        table.add_row(
            f"  {escape(info.name)}",
            info.level,
            "[green]yes[/]" if reason is None else "[yellow]no[/]",
            info.definition,
        )
    out.print(table)
    missing = [(info.name, reason) for info, reason in rows if reason]
    if missing:
        out.print("\nNot runnable here now:")
        for name, reason in missing:
            out.print(f"  {escape(name)}: {escape(reason)}", highlight=False)


judges_app = typer.Typer(help="Rubric judges: list the shipped rubrics, show one, run one.", no_args_is_help=True)
app.add_typer(judges_app, name="judges")
app.add_typer(citeqa_app, name="citeqa")
app.add_typer(discharge_app, name="discharge")
app.add_typer(sensemaking_app, name="sensemaking")
app.add_typer(drafting_app, name="drafting")
app.add_typer(train_app, name="train")
app.add_typer(instruct_app, name="instruct")


@judges_app.command("list")
def judges_list() -> None:
    """The rubrics shipped with bedside (override one by putting a file with its id in $BEDSIDE_RUBRICS)."""
    from bedside.judges import load_rubric, shipped_rubrics

    for name in shipped_rubrics():
        rubric = load_rubric(name)
        out.print(
            f"[bold]{rubric.id}[/]  {len(rubric.criteria)} criteria, {rubric.scale.describe()}; "
            f"inputs: {', '.join(rubric.inputs)}\n    {escape(rubric.title)} [dim]({escape(rubric.source)})[/]",
            highlight=False,
        )


RubricArgument = Annotated[str, typer.Argument(help="A shipped rubric id or a rubric file (.toml/.yaml).")]


@judges_app.command("show")
def judges_show(rubric: RubricArgument) -> None:
    """Print the prompt a rubric sends, with its inputs as placeholders."""
    from bedside.judges import RubricError, load_rubric
    from bedside.prompts import PromptError, render_chat

    try:
        loaded = load_rubric(rubric)
        sections = [(label, f"<{name}>") for name, label in {**loaded.inputs, **loaded.optional_inputs}.items()]
        messages = render_chat(loaded.template, rubric=loaded, sections=sections)
    except (RubricError, PromptError) as exc:
        raise fail(exc) from None
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
    repeat: Annotated[int, typer.Option("--repeat", help="Ask one judge this many times and show the spread.")] = 1,
    temperature: Annotated[float, typer.Option("--temperature", help="Sampling temperature.")] = 0.0,
    max_repairs: Annotated[int, typer.Option("--max-repairs", help="Re-asks after an invalid answer.")] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="Print the judgement as JSON.")] = False,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Score inputs with a rubric: one judge, a jury (several -m), or one judge k times (--repeat)."""

    from bedside.judges import JudgeError, Jury, JuryError, RubricError, RubricJudge, load_rubric, repeat_judgement
    from bedside.prompts import PromptError

    if aggregate not in ("mean", "median", "majority"):
        raise fail(ValueError(f"--aggregate must be mean, median or majority, not {aggregate!r}"))
    specs = models or ["embedded/smollm2-135m"]
    if repeat > 1 and len(specs) > 1:
        raise fail(ValueError("--repeat measures one judge; give a single --model"))

    async def go() -> object:
        loaded = load_rubric(rubric)
        values = _judge_inputs(inputs)
        ledger = UsageLedger()
        settings = GenerationSettings(temperature=temperature, max_tokens=1024)
        judge_models = [
            get_model(spec, role="judge", cache=_cache_path(cache, no_cache), usage=ledger) for spec in specs
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
    out.print(table)


StoreOption = Annotated[
    str, typer.Option("--store", help="Results store: a SQLite path or a SQLAlchemy URL.", envvar="BEDSIDE_STORE")
]
DEFAULT_STORE = "runs/bedside.sqlite"


@app.command("run")
def run_command(
    config: Annotated[Path, typer.Argument(help="Run config (YAML or TOML).")],
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a config value: KEY=VALUE (dotted key); repeatable.")
    ] = None,
    retry_errors: Annotated[bool, typer.Option("--retry-errors", help="Re-run only samples stored as errors.")] = False,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Run a config (or resume it): every finished sample is kept; re-running skips what is done."""
    from bedside.runs import ConfigError, execute, load_config
    from bedside.runs.progress import TerminalProgress

    try:
        loaded = load_config(config, set_ or [])
    except ConfigError as exc:
        raise fail(exc) from None
    out.print(f"run [bold]{loaded.run_id}[/] -> {escape(loaded.store)}", highlight=False)
    progress = TerminalProgress(err)
    # --no-cache, else --cache, else the config's cache, else the default cache file.
    cache_choice: Path | bool = False if no_cache else cache or (Path(loaded.cache) if loaded.cache else True)
    try:
        summary = asyncio.run(execute(loaded, progress=progress, retry_errors=retry_errors, cache=cache_choice))
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: finished samples are stored; run the same command again to resume")
        raise typer.Exit(code=130) from None
    except (ValueError, ModelError) as exc:
        raise fail(exc) from None
    out.print(
        f"{summary.ran} samples run, {summary.reused} reused, {summary.rescored} re-scored, "
        f"{summary.errors} errors, in {summary.wall_s:.1f} s"
    )
    if summary.errors:
        err.print(
            f"[yellow]{summary.errors} samples are errors[/]: see `bedside report {summary.run_id}`; "
            "`bedside run --retry-errors` re-tries them"
        )


@app.command("ls")
def ls_command(store: StoreOption = DEFAULT_STORE) -> None:
    """List the runs in a store."""
    from bedside.runs import Store

    opened = Store(store)
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
    out.print(table)
    opened.close()


@app.command("show")
def show_command(
    run: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    sample: Annotated[str, typer.Argument(help="Sample id.")],
    store: StoreOption = DEFAULT_STORE,
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
    out.rule(f"sample {escape(sample)}: inputs and references")
    typer.echo(json.dumps(rows[0].sample, indent=2, ensure_ascii=False))
    for row in rows:
        out.rule(f"{escape(row.cell)} epoch {row.epoch}: {row.status}")
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
) -> None:
    """Export a run's results, one row per (cell, sample, epoch)."""
    from bedside.runs import Store
    from bedside.runs.report import export_parquet
    from bedside.runs.store import iter_jsonl

    opened = Store(store)
    try:
        rows = opened.results(opened.run(run)["id"])
    except LookupError as exc:
        raise fail(exc) from None
    if format_ == "jsonl":
        if output is None:
            for line in iter_jsonl(rows):
                typer.echo(line)
        else:
            output.write_text("".join(line + "\n" for line in iter_jsonl(rows)), encoding="utf-8")
    elif format_ == "parquet":
        if output is None:
            raise fail(ValueError("--format parquet needs --output FILE"))
        try:
            export_parquet(rows, output)
        except ImportError as exc:
            raise fail(exc) from None
    else:
        raise fail(ValueError(f"--format must be jsonl or parquet, not {format_!r}"))
    opened.close()


@app.command("report")
def report_command(
    run: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for the .md and .html files.")] = Path(
        "runs/reports"
    ),
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Write a Markdown and a self-contained HTML report: tables with 95% CIs, strata, errors, usage, plots."""
    from bedside.runs import Store
    from bedside.runs.report import write_report

    opened = Store(store)
    try:
        md, page = write_report(opened, run, output)
    except LookupError as exc:
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
            r.metric,
            str(r.n),
            f"{r.mean_a:.3f}",
            f"{r.mean_b:.3f}",
            f"{r.difference:+.3f}",
            f"[{r.low:+.3f}, {r.high:+.3f}]",
            f"{r.p_value:.3g}",
        )
    out.print(table)


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
