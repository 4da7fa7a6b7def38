"""`bedside demo`: every shipped task on synthetic data, end to end, on the embedded model by default.

The one command that knows the shipped tasks by name; it imports each lazily, inside its section.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from bedside.cli.app import (
    ApiKeyEnvOption,
    CacheOption,
    ModelOption,
    NoCacheOption,
    StoreOption,
    _cache_path,
    app,
    print_task_tables,
    usage_table,
)
from bedside.console import err, fail, out, show_rule, show_table
from bedside.llm import GenerationSettings, Model, ModelError, UsageLedger, get_model


async def _demo_citeqa(llm: Model, limit: int) -> None:
    """The 2-stage grounded-QA system on the synthetic cases, with the official factuality/relevance table."""
    from bedside.tasks.citeqa import read_cases, score_answers
    from bedside.tasks.citeqa.cli import print_scores
    from bedside.tasks.citeqa.task import SYNTHETIC_CASES, answer_cases

    cases = read_cases(SYNTHETIC_CASES)[:limit]
    show_rule(f"grounded answers with citations: 2-stage system, {len(cases)} synthetic cases")
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


def _demo_models(model: str, roles: Sequence[str], api_key_env: str | None) -> dict[str, Any]:
    """``models`` and ``model_options`` for a demo run: ``model`` in every role, each sending the API key."""
    options = {role: {"api_key_env": api_key_env} for role in roles} if api_key_env else {}
    return {"models": {role: [model] for role in roles}, "model_options": options}


def _demo_drafting(
    model: str,
    *,
    messages: Path | None,
    records: Path | None,
    limit: int,
    cache: str | Path | bool,
    store: str,
    reports: Path,
    api_key_env: str | None,
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
            **_demo_models(model, ["system"], api_key_env),
            "settings": {"system": {"max_tokens": 200, "temperature": 0.0, "seed": 0}},
            "concurrency": 2,
            "store": store,
        }
    )
    show_rule("portal reply drafting: zero-shot and thematic, scored with EditJudge (embedding matcher)")
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
    title: str,
    run: dict[str, Any],
    *,
    model: str,
    speakers: tuple[str, str],
    cache: str | Path | bool,
    store: str,
    api_key_env: str | None,
) -> None:
    """Run a short simulation config on ``model`` in every role; show the first conversation and the first tables."""
    from bedside.runs import RunConfig, Store, execute
    from bedside.runs.progress import TerminalProgress
    from bedside.runs.report import build_report

    config = RunConfig.model_validate(
        {**run, **_demo_models(model, ("system", "patient", "helper", "judge"), api_key_env), "store": store}
    )
    show_rule(title)
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


def _demo_discharge(
    model: str, *, profiles: int, cache: str | Path | bool, store: str, api_key_env: str | None
) -> None:
    """A short DischargeSim run: the first synthetic case under the first N profile levels, demo schedule."""
    run = {
        "name": "demo-discharge",
        "task": "discharge",
        "datasets": {"synthetic": {"limit": profiles, "options": {"profiles": "one_at_a_time"}}},
        "systems": {
            "dischargesim": {
                "type": "dischargesim",
                "options": {
                    "schedule": "demo",
                    "judges": ["conversation", "summary_a"],
                    "documents_max_tokens": 600,
                    "fidelity_checker": "combined",  # the embedded model checks at chance (ARCHITECTURE.md, sim)
                },
            }
        },
        "settings": {
            # as configs/discharge-demo.yaml: the penalty breaks the small model's repetition loops
            "system": {"max_tokens": 160, "temperature": 0.0, "frequency_penalty": 0.5},
            "patient": {"max_tokens": 80, "temperature": 0.0, "frequency_penalty": 0.5},
            "judge": {"max_tokens": 800, "temperature": 0.0},
        },
        "concurrency": 2,
    }
    title = f"discharge education by simulation: {profiles} conversation(s), demo schedule (one message per stage)"
    _demo_simulation(
        title, run, model=model, speakers=("Doctor", "Patient"), cache=cache, store=store, api_key_env=api_key_env
    )


def _demo_sensemaking(
    model: str, *, conversations: int, cache: str | Path | bool, store: str, api_key_env: str | None
) -> None:
    """A short MedAgent run: the first synthetic vignette with N personas, 4 sensemaker messages, on the reference
    path (on the embedded model the efficient path's folded call missed both replay-validation bars)."""
    run = {
        "name": "demo-sensemaking",
        "task": "sensemaking",
        "datasets": {"synthetic": {"limit": conversations, "options": {"cases": 1}}},
        "systems": {
            "medagent": {
                "type": "medagent",
                "options": {
                    "path": "reference",
                    "max_sensemaker_messages": 4,
                    "judges": ["flow", "hard", "soft"],
                    "fidelity_checker": "combined",  # the embedded model checks at chance (ARCHITECTURE.md, sim)
                },
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
    _demo_simulation(
        title, run, model=model, speakers=("Sensemaker", "Patient"), cache=cache, store=store, api_key_env=api_key_env
    )


def _demo_instruct(
    model: str, *, instructions: int, cache: str | Path | bool, store: str, api_key_env: str | None
) -> None:
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
            **_demo_models(model, ["system"], api_key_env),
            "settings": {"system": {"max_tokens": 48, "temperature": 0.0, "seed": 0}},
            "scorers": ["facts_recall", "facts_correct", "truncated", "google_bleu"],
            "concurrency": 2,
            "store": store,
        }
    )
    show_rule(
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
            model,
            messages=messages,
            records=records,
            limit=limit,
            cache=cache_choice,
            store=store,
            reports=reports,
            api_key_env=api_key_env,
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
        show_table(usage_table(usage.snapshot()))
    if discharge_conversations > 0:
        try:
            _demo_discharge(
                model, profiles=discharge_conversations, cache=cache_choice, store=store, api_key_env=api_key_env
            )
        except (ModelError, ValueError, OSError) as exc:
            raise fail(exc) from None
    if sensemaking_conversations > 0:
        try:
            _demo_sensemaking(
                model,
                conversations=sensemaking_conversations,
                cache=cache_choice,
                store=store,
                api_key_env=api_key_env,
            )
        except (ModelError, ValueError, OSError) as exc:
            raise fail(exc) from None
    if instruct_instructions > 0:
        try:
            _demo_instruct(
                model, instructions=instruct_instructions, cache=cache_choice, store=store, api_key_env=api_key_env
            )
        except (ModelError, ValueError, OSError) as exc:
            raise fail(exc) from None
