"""``bedside discharge``: parse notes into cases, list cases, and judge–expert agreement on a stored run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from bedside.cli.app import ApiKeyEnvOption
from bedside.console import err, fail, out, show_table
from bedside.private_files import write_private_text

discharge_app = typer.Typer(
    help="Discharge education by simulation (DischargeSim): parse notes, list cases, judge-expert agreement.",
    no_args_is_help=True,
)


@discharge_app.command("parse")
def parse_command(
    cases: Annotated[Path, typer.Argument(help="Cases without a structure: bedside JSONL or OSCE-format.jsonl.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the parsed cases (JSONL).")],
    notes: Annotated[Path | None, typer.Option(help="The notes file paired with OSCE records.")] = None,
    model: Annotated[str, typer.Option("--model", "-m", help="PROVIDER/MODEL[@BASE_URL]")] = "embedded/smollm2-135m",
    max_tokens: Annotated[int, typer.Option(min=1, help="Most tokens per answer.")] = 2000,
    cache: Annotated[Path | None, typer.Option("--cache", help="SQLite response cache.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")] = False,
    api_key_env: ApiKeyEnvOption = None,
) -> None:
    """Parse each case's note into the structure the doctor sees (validated JSON), so a person can check and
    correct it before runs; cases that already have a structure are copied unchanged."""
    from bedside.llm import GenerationSettings, ModelError, default_cache_path, get_model
    from bedside.runs.task import SampleContext
    from bedside.tasks.discharge.parse import parse_note
    from bedside.tasks.discharge.readers import read_cases

    if output.exists():
        raise fail(ValueError(f"{output} exists; choose another --output (nothing is overwritten)"))
    try:
        loaded = read_cases(cases, notes=notes)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None

    async def run() -> list[str]:
        lines, failed = [], 0
        cache_path = None if no_cache else cache or default_cache_path()
        async with get_model(model, role="helper", cache=cache_path, api_key_env=api_key_env) as llm:
            settings = GenerationSettings(max_tokens=max_tokens, temperature=0.0)
            for case in loaded:
                context = SampleContext({"helper": llm}, {"helper": settings}, "0", 0)
                try:
                    parsed = await parse_note(case, context)
                except ModelError as exc:
                    failed += 1
                    err.print(f"case {case.id}: [red]not parsed[/] {escape(str(exc))}", soft_wrap=True)
                    continue
                lines.append(parsed.model_dump_json())
                err.print(f"case {case.id}: parsed")
        if failed:
            err.print(f"{failed} case(s) not parsed; they are left out of {output}")
        return lines

    lines = asyncio.run(run())
    write_private_text(output, "".join(f"{line}\n" for line in lines))
    out.print(f"{len(lines)} of {len(loaded)} cases written to {output}", highlight=False)


@discharge_app.command("cases")
def cases_command(
    cases: Annotated[Path | None, typer.Argument(help="Cases file [default: the shipped synthetic cases].")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON.")] = False,
) -> None:
    """One line per case: diagnosis, medicines, questions by category, whether it has a reference summary."""
    from bedside.tasks.discharge.readers import read_cases
    from bedside.tasks.discharge.task import SYNTHETIC_CASES

    try:
        loaded = read_cases(cases or SYNTHETIC_CASES)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    rows = [
        {
            "id": c.id,
            "diagnosis": "; ".join(c.structure.diagnoses_and_medications.primary_diagnoses) if c.structure else "",
            "medicines": len(c.structure.diagnoses_and_medications.medications) if c.structure else None,
            "questions": len(c.questions),
            "reference_summary": c.reference_summary is not None,
            "parsed": c.structure is not None,
        }
        for c in loaded
    ]
    unexamined = [str(row["id"]) for row in rows if not row["questions"]]
    if unexamined:  # on stderr, so --json stays one document
        err.print(
            f"[yellow]{len(unexamined)} case(s) have no exam questions[/] ({escape(', '.join(unexamined))}): a run "
            "skips their comprehension exam (counted as skipped, not scored), and exam accuracy is over the others",
            highlight=False,
        )
    if as_json:
        out.print_json(json.dumps(rows))
        return
    table = Table(title=f"{len(rows)} discharge cases")
    for column in ("id", "diagnosis", "medicines", "questions", "reference summary"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            str(row["id"]),
            str(row["diagnosis"] or "(not parsed yet)"),
            str(row["medicines"] if row["medicines"] is not None else "-"),
            str(row["questions"]),
            "yes" if row["reference_summary"] else "no",
        )
    show_table(table)


@discharge_app.command("agreement")
def agreement_command(
    run_id: Annotated[str, typer.Argument(help="A stored discharge run.")],
    labels: Annotated[Path, typer.Option("--labels", help="Expert pairwise preferences (JSONL; see the docs).")],
    store: Annotated[
        str, typer.Option("--store", help="Results store: a SQLite path or a SQLAlchemy URL.", envvar="BEDSIDE_STORE")
    ] = "runs/bedside.sqlite",
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Cohen's kappa, % agreement and Spearman rho: expert vs expert and the judge vs each expert, per criterion."""
    from bedside.runs import Store
    from bedside.tasks.discharge.agreement import agreement, read_labels, run_scores

    try:
        expert_labels = read_labels(labels)
        opened = Store(store)
        try:
            scores = run_scores(opened.results(opened.run(run_id)["id"]))
        finally:
            opened.close()
    except (ValueError, LookupError, OSError) as exc:
        raise fail(exc) from None
    reports = agreement(expert_labels, scores)
    if as_json:
        out.print_json(
            json.dumps(
                [
                    {"criterion": r.criterion, "unmatched": r.unmatched, "pairs": [p.as_dict() for p in r.pairs]}
                    for r in reports
                ]
            )
        )
        return
    for report in reports:
        table = Table(
            title=f"{report.criterion}: pairwise preference agreement",
            caption=(
                f"{report.unmatched} expert decision(s) had no judge score in the run" if report.unmatched else None
            ),
        )
        for column in ("raters", "n", "kappa", "% agree", "rho", "p", "ties left out"):
            table.add_column(column, justify="left" if column == "raters" else "right")
        for pair in report.pairs:
            table.add_row(
                f"{pair.first} vs {pair.second}",
                str(pair.n),
                "-" if pair.kappa is None else f"{pair.kappa:.3f}",
                "-" if pair.percent is None else f"{100 * pair.percent:.1f}",
                "-" if pair.rho is None else f"{pair.rho:.3f}",
                "-" if pair.rho_p is None else f"{pair.rho_p:.3g}",
                str(pair.ties),
            )
        show_table(table)
