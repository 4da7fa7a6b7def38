"""``bedside sensemaking``: list cases, and the paper's human validation protocol on a stored run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

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
