"""``bedside sensemaking``: list cases, the paper's human validation protocol on a stored run, and the replay
validation of the efficient path."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from bedside.cli.app import ApiKeyEnvOption, CacheOption, JsonOption, ModelOption, NoCacheOption, _cache_path
from bedside.console import err, fail, out, show_table
from bedside.private_files import write_private_text

sensemaking_app = typer.Typer(
    help="Mental-health sensemaking by simulation (MedAgent + MultiSenseEval): cases, human validation.",
    no_args_is_help=True,
)
StoreOption = Annotated[str, typer.Option("--store", help="Run store (SQLite path or database URL).")]


@sensemaking_app.command("cases")
def cases_command(
    path: Annotated[
        Path | None, typer.Argument(help="Cases (bedside JSONL) [default: the synthetic vignettes]")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Each case: facts, vital facts, diagnosis label and its provenance, intent and goal."""
    from bedside.tasks.sensemaking.readers import read_cases
    from bedside.tasks.sensemaking.task import SYNTHETIC_CASES

    try:
        cases = read_cases(path or SYNTHETIC_CASES)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    if as_json:
        out.print_json(json.dumps([c.model_dump(mode="json") for c in cases]))
        return
    table = Table("case", "facts", "vitals", "diagnosis", "provenance", "intent", "goal")
    for case in cases:
        diagnosis = case.diagnosis
        table.add_row(
            case.id,
            str(len(case.facts or [])),
            "-" if case.vital_facts is None else str(len(case.vital_facts)),
            diagnosis.label if diagnosis else "(derived at run time)",
            "-" if not diagnosis else diagnosis.provenance + ("" if diagnosis.reviewed else ", unreviewed"),
            case.intent or "(assigned at run time)",
            case.goal or "(assigned at run time)",
        )
    show_table(table)


@sensemaking_app.command("review-items")
def review_items_command(
    run_id: Annotated[str, typer.Argument(help="A stored sensemaking run.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Items for annotators (JSONL, blinded).")],
    key: Annotated[Path, typer.Option("--key", help="Where to write the item -> sample/cell key (JSONL).")],
    store: StoreOption = "runs/bedside.sqlite",
    seed: Annotated[int, typer.Option(help="Seed of the item order.")] = 0,
) -> None:
    """Export every judgement of a run for the agree/disagree protocol: the judge's score and reasoning and what
    it read; no system or model names, shuffled with a seed. The key unblinds items for whoever runs the study."""
    from bedside.runs import Store
    from bedside.tasks.sensemaking.validation import item_key, review_items

    for path in (output, key):
        if path.exists():
            raise fail(ValueError(f"{path} exists; choose another path (nothing is overwritten)"))
    opened = Store(store)
    try:
        if not any(r["id"] == run_id for r in opened.runs()):
            raise fail(ValueError(f"no run {run_id!r} in {store}"))
        rows = opened.results(run_id)
    finally:
        opened.close()
    items = review_items(rows, seed=seed)
    write_private_text(output, "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))
    write_private_text(key, "".join(json.dumps({"item": k, **v}) + "\n" for k, v in sorted(item_key(rows).items())))
    err.print(f"{len(items)} items -> {output}; key -> {key}")


@sensemaking_app.command("human-agreement")
def human_agreement_command(
    labels: Annotated[Path, typer.Argument(help='JSONL: {"item", "metric", "annotator", "agree": true|false}')],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Per metric, the share of items whose annotators' majority agrees with the judge (the paper's number)."""
    from bedside.tasks.sensemaking.validation import human_agreement, read_labels

    try:
        results = human_agreement(read_labels(labels))
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    if as_json:
        out.print_json(json.dumps([r.as_dict() for r in results]))
        return
    table = Table("metric", "items", "agree %", "ties", "annotations", "annotators")
    for r in results:
        rate = "-" if r.rate is None else f"{100 * r.rate:.1f}"
        table.add_row(r.metric, str(r.items), rate, str(r.ties), str(r.annotations), str(r.annotators))
    show_table(table)


@sensemaking_app.command("validate-efficient")
def validate_efficient_command(
    run_id: Annotated[str, typer.Argument(help="A stored sensemaking run with reference-path conversations.")],
    store: StoreOption = "runs/bedside.sqlite",
    model: ModelOption = "embedded/smollm2-135m",
    limit: Annotated[int | None, typer.Option(min=1, help="Replay only the first N recorded states.")] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Most tokens per folded answer.")] = 1000,
    concurrency: Annotated[int, typer.Option(min=1, help="States replayed at once.")] = 4,
    api_key_env: ApiKeyEnvOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
    as_json: JsonOption = False,
) -> None:
    """The spec's §4.5 validation of the efficient path: replay a reference run's recorded states through the
    folded call on MODEL, compare mining and MOVE/STAY with the reference's separate calls against pre-registered
    bars, and compare the two paths' full runs when the run holds both."""
    from bedside.llm import GenerationSettings, ModelError, get_model
    from bedside.runs import Store
    from bedside.runs.task import SampleContext
    from bedside.tasks.sensemaking.replay import RecordedState, compare_paths, validate_replay

    opened = Store(store)
    try:
        found = opened.run(run_id)
        if found["task"] != "sensemaking":
            raise ValueError(f"run {found['id']} is a {found['task']!r} run, not a sensemaking run")
        rows = opened.results(found["id"])
    except (LookupError, ValueError) as exc:
        raise fail(exc) from None
    finally:
        opened.close()
    settings = GenerationSettings(max_tokens=max_tokens, temperature=0.0, seed=0)
    count = 0

    def progress(state: RecordedState, error: str | None) -> None:
        nonlocal count
        count += 1
        if not as_json:
            outcome = "no valid answer" if error else "replayed"
            err.print(f"state {count}: {state.sample_id} exchange {state.exchange} ({state.stage}) {outcome}")

    async def run() -> object:
        async with get_model(model, role="system", cache=_cache_path(cache, no_cache), api_key_env=api_key_env) as llm:
            return await validate_replay(
                rows,
                lambda state: SampleContext({"system": llm}, {"system": settings}, epoch="0", seed=0),
                model=llm.name,
                limit=limit,
                concurrency=concurrency,
                on_done=progress,
            )

    if not as_json:
        err.print(f"replaying the recorded states of run {found['id']} through the folded call on {model} ...")
    try:
        result = asyncio.run(run())
    except (ModelError, ValueError) as exc:
        raise fail(exc) from None
    data: dict[str, Any] = {**result.as_dict(), "full_runs": compare_paths(rows)}  # type: ignore[attr-defined]
    if as_json:
        out.print_json(json.dumps(data))
        return
    _print_replay(data)


def _figure(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _print_replay(data: dict[str, Any]) -> None:
    mining, decision = data["mining"], data["decision"]
    table = Table(title=f"Folded call vs the reference's separate calls ({data['model']}, {data['states']} states)")
    for column in ("step", "states", "n compared", "agreement", "Cohen's κ", "recall of new", "unsupported", "bar"):
        table.add_column(column, justify="left" if column in ("step", "bar") else "right")
    verdict = {True: "met", False: "missed"}
    table.add_row(
        "mining (new vs present)",
        str(mining["states"]),
        str(mining["aligned_facts"]),
        _figure(mining["agreement"]),
        _figure(mining["kappa"]),
        _figure(mining["recall_of_new"]),
        _figure(mining["unsupported_share"]),
        f"{mining['bar']}: {verdict[mining['passes']]}",
    )
    table.add_row(
        "decision (MOVE/STAY)",
        str(decision["states"]),
        str(decision["states"]),
        _figure(decision["agreement"]),
        _figure(decision["kappa"]),
        "-",
        "-",
        f"{decision['bar']}: {verdict[decision['passes']]}",
    )
    show_table(table)
    out.print(
        f"facts: {mining['folded_facts']} folded, {mining['unaligned_folded']} without a counterpart in the separate "
        f"extraction, {mining['unaligned_separate']} separate ones without a folded counterpart",
        highlight=False,
        soft_wrap=True,
    )
    if data["keep_reference"]:
        out.print(
            "keep the reference's call for the steps that missed their bar: set "
            + ", ".join(data["keep_reference"])
            + " in the task's options (path: efficient)",
            highlight=False,
            soft_wrap=True,
        )
    else:
        out.print("both folded steps met their bars on this model: path: efficient as it is", highlight=False)
    for state, cause in data["failed"].items():
        err.print(f"[yellow]no valid answer[/] {state}: {cause}", soft_wrap=True, highlight=False)
    full = data["full_runs"]
    if len(full["conversations"]) < 2:
        out.print(
            "full-run comparison: the run holds one path only (a run with both `path: reference` and "
            "`path: efficient` systems compares them; the spec asks for ≥ 30 conversations per arm)",
            highlight=False,
            soft_wrap=True,
        )
        return
    runs = Table(
        title="Full runs by path (mean, 95% bootstrap interval; "
        + ", ".join(f"{p}: {n} conversations" for p, n in full["conversations"].items())
        + ")"
    )
    for column in ("measure", "reference", "efficient", "intervals overlap"):
        runs.add_column(column, justify="left" if column == "measure" else "right")
    for measure, row in full["measures"].items():
        cells = [
            "-" if row[p] is None else f"{row[p]['mean']:.2f} [{row[p]['low']:.2f}, {row[p]['high']:.2f}]"
            for p in ("reference", "efficient")
        ]
        runs.add_row(measure, *cells, {True: "yes", False: "NO", None: "-"}[row["overlap"]])
    show_table(runs)
