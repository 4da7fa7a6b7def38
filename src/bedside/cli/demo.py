"""`bedside demo`: every shipped task on synthetic data, end to end, on the embedded model by default.

The one command that knows the shipped tasks by name; it imports each lazily, inside its section. Each section is
one small case with bounded tokens, so the whole demo runs in minutes on a CPU: it says what it cost (wall time)
and how often the repetition guard cut the small model's answers, and names the command that runs the full version.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from bedside.cli.app import (
    DEFAULT_STORE,  # the store `bedside ls`, `report` and `serve` read by default, so they find the demo's runs
    ApiKeyEnvOption,
    CacheOption,
    ModelOption,
    NoCacheOption,
    StoreOption,
    app,
    print_task_tables,
)
from bedside.console import data_table, err, fail, out, show_rule, show_table
from bedside.llm import ModelError
from bedside.llm.providers.embedded import RuntimeCounts, runtime_counts

DEMO_DRAFTS = 1
"""Portal messages the demo drafts replies to (each with both systems); the config drafts all of them."""
DEMO_CITEQA_CASES = 1
DEMO_INSTRUCTIONS = 1
DEMO_TURNS_SHOWN = 4
"""Turns of each simulated conversation the demo prints (the stored transcript has all of them): the small
model's later turns mostly repeat its earlier ones, and the tables are what the demo is for."""


def _demo_citeqa(model: str, *, cases: int, cache: str | Path | bool, store: str, api_key_env: str | None) -> int:
    """The 2-stage grounded-QA system on the synthetic cases through a stored run, with the official
    factuality/relevance table. Returns how many answers the repetition guard cut."""
    from bedside.runs import Output, RunConfig, Sample
    from bedside.tasks.citeqa import score_answers
    from bedside.tasks.citeqa.cli import print_scores
    from bedside.tasks.citeqa.task import answer_of, case_of

    config = RunConfig.model_validate(
        {
            "name": "demo-citeqa",
            "task": "citeqa",
            "datasets": {"synthetic": {"limit": cases}},
            "systems": {"two_stage": {"type": "two_stage"}},
            **_demo_models(model, ["system"], api_key_env),
            # the endpoint's default temperature, seeded: at temperature 0 this model's stage-1 answer runs past
            # 400 tokens and the case fails; seeded at the default it answers
            "settings": {"system": {"max_tokens": 400, "seed": 0}},
            "concurrency": 2,
            "store": store,
        }
    )
    show_rule(f"grounded answers with citations: 2-stage system, {cases} synthetic cases")
    summary, stored, _ = _run_and_read(config, cache)
    answered, answers = [], {}
    for row in sorted(stored, key=lambda r: r.sample_id):
        case = case_of(Sample.model_validate(row.sample))
        out.print(f"[bold]{case.id}[/] {escape(case.clinician_question)}", highlight=False)
        if row.status == "ok" and row.output:
            answers[case.id] = answer_of(Output.model_validate(row.output))
            answered.append(case)
            out.print(answers[case.id], highlight=False, markup=False)
        else:
            out.print(f"[red]failed:[/] {escape(row.error or 'no output stored')}", highlight=False, soft_wrap=True)
    if answered:
        print_scores(score_answers(answered, answers), out)
    failed = len(stored) - len(answered)
    out.print(
        f"{len(answered)} of {len(stored)} cases answered"
        + (f"; {failed} failed, each listed above with its cause" if failed else "")
        + f"; `bedside report {summary.run_id} --store {store}` shows every table",
        highlight=False,
    )
    return sum(_repetitions(r.usage) for r in stored)


def _run_and_read(config: Any, cache: str | Path | bool) -> tuple[Any, list[Any], Any]:
    """Run one section's config with progress on stderr, then read back what it stored: (the run's summary, every
    stored row, its report)."""
    from bedside.runs import Store, execute
    from bedside.runs.progress import TerminalProgress
    from bedside.runs.report import build_report

    summary = asyncio.run(execute(config, progress=TerminalProgress(err), cache=cache))
    opened = Store(config.store)
    try:
        return summary, opened.results(summary.run_id), build_report(opened, summary.run_id)
    finally:
        opened.close()


def _repetitions(usage_by_role: dict[str, Any]) -> int:
    """Answers of one stored sample that the repetition guard cut, over every role (0 in rows stored before the
    count existed)."""
    return sum(int((counts or {}).get("repetitions", 0)) for counts in usage_by_role.values())


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
) -> int:
    """Zero-shot and thematic drafts for the synthetic messages, through a stored run; EditJudge tables. Returns
    how many answers the repetition guard cut."""
    from bedside.runs import RunConfig, Store
    from bedside.runs.report import write_report
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
    summary, stored, report = _run_and_read(config, cache)
    rows = [r for r in stored if r.status == "ok"]
    opened = Store(store)
    try:
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
    return sum(_repetitions(r.usage) for r in stored)


def _demo_simulation(
    title: str,
    run: dict[str, Any],
    *,
    model: str,
    speakers: tuple[str, str],
    cache: str | Path | bool,
    store: str,
    api_key_env: str | None,
    at_limit: str = "",
) -> int:
    """Run a short simulation config on ``model`` in every role; show the first conversation and the first tables.
    ``at_limit`` is said when a conversation ended at the demo's message limit. Returns how many answers the
    repetition guard cut."""
    from bedside.runs import RunConfig

    config = RunConfig.model_validate(
        {**run, **_demo_models(model, ("system", "patient", "helper", "judge"), api_key_env), "store": store}
    )
    show_rule(title)
    summary, stored, report = _run_and_read(config, cache)
    rows = [r for r in stored if r.status == "ok"]
    if rows and rows[0].output:
        out.print(f"[bold]{rows[0].sample_id}[/] ({model}):", highlight=False)
        transcript = rows[0].output["transcript"] or []
        for turn in transcript[:DEMO_TURNS_SHOWN]:
            speaker = speakers[0] if turn["role"] == "clinician" else speakers[1]
            out.print(f"[dim]{turn['stage']}[/] {speaker}: {escape(turn['content'])}", highlight=False)
        if len(transcript) > DEMO_TURNS_SHOWN:
            out.print(
                f"[dim]... {len(transcript) - DEMO_TURNS_SHOWN} more turn(s): `bedside show {summary.run_id} "
                f"{rows[0].sample_id} --store {store}` prints the whole conversation[/]",
                highlight=False,
            )
    from bedside.runs.steps import FAILURES_TITLE

    failures = [t for t in report.tables[3:] if t.title == FAILURES_TITLE]
    print_task_tables(report.tables[:3] + failures)  # a failed step's "-" above is explained, never silent
    limited = sum(1 for r in rows if r.output and r.output.get("extra", {}).get("termination") == "hard_limit")
    if limited and at_limit:
        out.print(
            f"{limited} conversation(s) ended at the demo's message limit (hard_limit): {at_limit}", highlight=False
        )
    out.print(
        f"{summary.errors} sample(s) failed; `bedside report {summary.run_id} --store {store}` shows every table",
        highlight=False,
    )
    return sum(_repetitions(r.usage) for r in stored)


def _demo_discharge(model: str, *, profiles: int, cache: str | Path | bool, store: str, api_key_env: str | None) -> int:
    """A short DischargeSim run: the first synthetic case under the first N profile levels, demo schedule, every
    step once at a small budget. Measured on a quiet 2-core machine with configs/discharge-demo.yaml's budgets, one
    conversation took 420 s: the checklist (which this model never writes as valid JSON) and its two re-asks at
    600 tokens were 129 s, the 27 exam answers 70 s, the two judges 52 s, the 13 turns 127 s. With these settings
    and the conversation judge, 146 s: the 13 turns 61 s, the checklist and summary 39 s, 9 exam answers 13 s, the
    judge 26 s. That judge never answered on its scale within 300 or 600 tokens (its columns stayed empty), so the
    demo runs none here; the sensemaking section shows judges that this model does answer."""
    run = {
        "name": "demo-discharge",
        "task": "discharge",
        "datasets": {"synthetic": {"limit": profiles, "options": {"profiles": "one_at_a_time"}}},
        "systems": {
            "dischargesim": {
                "type": "dischargesim",
                "options": {
                    "schedule": "demo",
                    "judges": [],
                    "documents_max_tokens": 400,
                    "max_repairs": 0,  # a malformed checklist or summary is the step's recorded error at once
                    "exam_questions": 3,  # in each of the three settings
                    "fidelity_checker": "combined",  # the embedded model checks at chance (ARCHITECTURE.md, sim)
                },
            }
        },
        "settings": {
            # the penalty breaks the small model's repetition loops, as in configs/discharge-demo.yaml
            "system": {"max_tokens": 120, "temperature": 0.0, "frequency_penalty": 0.5},
            "patient": {"max_tokens": 60, "temperature": 0.0, "frequency_penalty": 0.5},
            "judge": {"max_tokens": 300, "temperature": 0.0},  # the judge role's calls, if any (none by default)
        },
        "concurrency": 2,
    }
    title = f"discharge education by simulation: {profiles} conversation(s), demo schedule (one message per stage)"
    return _demo_simulation(
        title, run, model=model, speakers=("Doctor", "Patient"), cache=cache, store=store, api_key_env=api_key_env
    )


def _demo_sensemaking(
    model: str, *, conversations: int, cache: str | Path | bool, store: str, api_key_env: str | None
) -> int:
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
                    # flow and hard accuracy, which this model answers; its soft-accuracy judgement ran past 400
                    # tokens (15 s, the step failed)
                    "judges": ["flow", "hard"],
                    "judge_max_repairs": 0,  # a malformed judgement is the step's recorded error at once
                    "fidelity_checker": "combined",  # the embedded model checks at chance (ARCHITECTURE.md, sim)
                },
            }
        },
        "settings": {
            # demo budgets, not the paper's 1000 tokens, but room for each role's structured answers: the
            # sensemaker's stage decision (reasoning up to 600 characters) and the patient's choice of facts (up to
            # 300); at 80 tokens the patient's choice was cut mid-string three times and the conversation failed
            "system": {"max_tokens": 400, "temperature": 0.0, "frequency_penalty": 0.5},
            "patient": {"max_tokens": 160, "temperature": 0.0, "frequency_penalty": 0.5},
            # room for the largest fact list the extraction schema allows (8 facts of up to 200 characters): at 300
            # tokens the small model's list was cut mid-string three times and the conversation failed
            "helper": {"max_tokens": 600, "temperature": 0.0},
            "judge": {"max_tokens": 400, "temperature": 0.0},
        },
        "concurrency": 2,
    }
    title = f"mental-health sensemaking: {conversations} conversation(s), at most 4 sensemaker messages (demo limit)"
    return _demo_simulation(
        title,
        run,
        model=model,
        speakers=("Sensemaker", "Patient"),
        cache=cache,
        store=store,
        api_key_env=api_key_env,
        at_limit="the paper's comparisons leave such conversations out (the exclusions table counts them), so the "
        "tables that compare cells stay empty here; `bedside run configs/sensemaking-demo.yaml` runs whole "
        "conversations",
    )


def _demo_instruct(
    model: str, *, instructions: int, cache: str | Path | bool, store: str, api_key_env: str | None
) -> int:
    """MedAlign-style instructions: the budgeted prompt at two context lengths and multi-step refinement."""
    from bedside.runs import RunConfig

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
        f"clinician instructions over records: {instructions} synthetic instruction(s), 512 vs 1536 tokens of "
        "record, and multi-step refinement (MR) at 1536"
    )
    summary, stored, report = _run_and_read(config, cache)
    rows = [r for r in stored if r.status == "ok" and r.system == "budgeted_1536"]
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
    return sum(_repetitions(r.usage) for r in stored)


@dataclasses.dataclass(frozen=True)
class DemoSection:
    """One section of the demo: what it shows, the command that runs its full version, and how to run it (a
    callable returning how many answers the repetition guard cut)."""

    name: str
    full: str
    run: Callable[[], int]


@dataclasses.dataclass(frozen=True)
class SectionTiming:
    name: str
    wall_s: float
    cpu_s: float
    """This process's CPU seconds (every thread, the embedded model's included): on a loaded machine the wall time
    grows with the load, the CPU time much less, so the two together say what a quiet machine would take."""
    repetitions: int
    full: str
    work: RuntimeCounts = dataclasses.field(default_factory=RuntimeCounts)
    """What the embedded model did in the section: calls, prompt tokens processed and reused from a slot's cache,
    tokens generated (zero on a warm re-run, and for models outside the process)."""


def run_sections(
    sections: Sequence[DemoSection],
    clock: Callable[[], float] = time.perf_counter,
    cpu_clock: Callable[[], float] = time.process_time,
    counter: Callable[[], RuntimeCounts] = runtime_counts,
) -> list[SectionTiming]:
    """Run the sections in order, timing each and counting the embedded model's work in it; after each one say
    what it took and what the full version is."""
    timings: list[SectionTiming] = []
    for section in sections:
        started, cpu_started, work_started = clock(), cpu_clock(), counter()
        repetitions = section.run()
        timing = SectionTiming(
            section.name,
            clock() - started,
            cpu_clock() - cpu_started,
            repetitions,
            section.full,
            counter() - work_started,
        )
        timings.append(timing)
        work = timing.work
        out.print(
            f"{section.name}: {timing.wall_s:.0f} s wall ({timing.cpu_s:.0f} s CPU); repetition guard fired "
            f"{repetitions} time(s); full version: {section.full}",
            highlight=False,
            markup=False,
        )
        out.print(
            f"  embedded model: {work.calls} call(s), prompt tokens {work.prompt_processed} processed + "
            f"{work.prompt_cached} reused from cache, {work.generated} generated",
            highlight=False,
            markup=False,
        )
    return timings


def timings_table(timings: Sequence[SectionTiming]) -> Table:
    """Per section and in total: wall and CPU seconds, answers the repetition guard cut, the full version's
    command, and the embedded model's work (calls; prompt tokens processed and reused; tokens generated)."""

    def work(w: RuntimeCounts) -> list[str]:
        return [str(w.calls), str(w.prompt_processed), str(w.prompt_cached), str(w.generated)]

    rows = [[t.name, f"{t.wall_s:.0f}", f"{t.cpu_s:.0f}", str(t.repetitions), t.full, *work(t.work)] for t in timings]
    total = RuntimeCounts()
    for t in timings:
        total = RuntimeCounts(
            total.calls + t.work.calls,
            total.prompt_processed + t.work.prompt_processed,
            total.prompt_cached + t.work.prompt_cached,
            total.generated + t.work.generated,
        )
    rows.append(
        [
            "total",
            f"{sum(t.wall_s for t in timings):.0f}",
            f"{sum(t.cpu_s for t in timings):.0f}",
            str(sum(t.repetitions for t in timings)),
            "",
            *work(total),
        ]
    )
    return data_table(
        "Demo: wall time per section",
        [
            "section",
            "wall s",
            "CPU s",
            "repetition guard fired",
            "full version",
            "embedded model calls",
            "prompt tokens processed",
            "prompt tokens reused",
            "tokens generated",
        ],
        rows,
        "A warm re-run answers from the store and the response cache in seconds (no model calls). The guard count "
        "covers every answer of the section's stored samples (cache hits included): answers cut because the small "
        "model looped. The embedded model's calls and tokens are llama.cpp's own: requests it ran (answers from the "
        "response cache and identical calls shared in flight are not among them, unlike the progress line's "
        "model calls) and tokens it processed (reused = found in a slot's cache).",
    )


def _load_average() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:  # not every platform reports one
        return "unknown"


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
    limit: Annotated[int, typer.Option(min=0, help="Draft replies to the first N messages (0 = all).")] = DEMO_DRAFTS,
    citeqa_cases: Annotated[
        int, typer.Option(help="Answer the first N synthetic grounded-QA cases with the 2-stage system (0 = none).")
    ] = DEMO_CITEQA_CASES,
    discharge_conversations: Annotated[
        int, typer.Option(help="Simulate discharge conversations for the first N profile levels (0 = none).")
    ] = 1,
    sensemaking_conversations: Annotated[
        int, typer.Option(help="Simulate sensemaking conversations for the first N personas (0 = none).")
    ] = 1,
    instruct_instructions: Annotated[
        int, typer.Option(help="Answer the first N synthetic clinician instructions over records (0 = none).")
    ] = DEMO_INSTRUCTIONS,
    store: StoreOption = DEFAULT_STORE,
    reports: Annotated[Path, typer.Option(help="Folder for the drafting run's HTML and Markdown report.")] = Path(
        "runs/reports"
    ),
    api_key_env: ApiKeyEnvOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Draft replies to synthetic portal messages and score them with EditJudge; answer synthetic questions
    about a stay with cited evidence; simulate a discharge conversation and a sensemaking conversation and score
    them; answer clinician instructions over records. Prints each section's wall time and the total."""
    from bedside.records import RecordError

    cache_choice: str | Path | bool = False if no_cache else (cache or True)

    def drafting() -> int:
        return _demo_drafting(
            model,
            messages=messages,
            records=records,
            limit=limit,
            cache=cache_choice,
            store=store,
            reports=reports,
            api_key_env=api_key_env,
        )

    def citeqa() -> int:
        return _demo_citeqa(model, cases=citeqa_cases, cache=cache_choice, store=store, api_key_env=api_key_env)

    sections = [DemoSection("drafting", "bedside run configs/drafting-demo.yaml", drafting)]
    if citeqa_cases > 0:
        sections.append(DemoSection("citeqa", "bedside run configs/citeqa-systems.yaml", citeqa))
    if discharge_conversations > 0:
        sections.append(
            DemoSection(
                "discharge",
                "bedside run configs/discharge-demo.yaml",
                lambda: _demo_discharge(
                    model, profiles=discharge_conversations, cache=cache_choice, store=store, api_key_env=api_key_env
                ),
            )
        )
    if sensemaking_conversations > 0:
        sections.append(
            DemoSection(
                "sensemaking",
                "bedside run configs/sensemaking-demo.yaml",
                lambda: _demo_sensemaking(
                    model,
                    conversations=sensemaking_conversations,
                    cache=cache_choice,
                    store=store,
                    api_key_env=api_key_env,
                ),
            )
        )
    if instruct_instructions > 0:
        sections.append(
            DemoSection(
                "instruct",
                "bedside run configs/instruct-demo.yaml",
                lambda: _demo_instruct(
                    model, instructions=instruct_instructions, cache=cache_choice, store=store, api_key_env=api_key_env
                ),
            )
        )
    load_before = _load_average()
    try:
        timings = run_sections(sections)
    except (ModelError, RecordError, ValueError, OSError) as exc:
        raise fail(exc) from None
    show_table(timings_table(timings))
    out.print(  # wall time grows with the machine's load: say what it was, so the figure can be judged
        f"1-minute load average: {load_before} at the start, {_load_average()} at the end; {os.cpu_count()} CPU(s)",
        highlight=False,
    )
    out.print(
        f"Next: `bedside ls --store {store}`, `bedside report demo-drafting --store {store}`, "
        f"`bedside serve --store {store}` (README.md, Quickstart)",
        highlight=False,
    )
