"""`bedside records`: read patient records and render them as a model will see them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from bedside.cli.app import JsonOption, app
from bedside.console import err, fail, out, show_table

records_app = typer.Typer(help="Read patient records and render them as a model will see them.", no_args_is_help=True)
app.add_typer(records_app, name="records")

RecordFile = Annotated[
    Path,
    typer.Argument(
        help="FHIR R4 bundle (.json), MedAlign XML (.xml), bedside JSONL, or a folder of them (one dataset)."
    ),
]
PatientOption = Annotated[str | None, typer.Option("--patient", help="Which record of a multi-record JSONL file.")]


@records_app.command("show")
def records_show(path: RecordFile, as_json: JsonOption = False) -> None:
    """Print a short summary of each record in FILE: patient, counts by type, time span."""
    from bedside.records import RecordError, read_records

    try:
        records = read_records(path)
    except RecordError as exc:
        raise fail(exc) from None
    if as_json:
        summary = [
            {
                "id": r.id,
                "gender": r.patient.gender,
                "birth_date": r.patient.birth_date,
                "deceased": r.patient.deceased or r.patient.deceased_at is not None,
                "deceased_at": r.patient.deceased_at,
                "span": r.span(),
                "counts": r.counts(),
            }
            for r in records
        ]
        typer.echo(json.dumps(summary, indent=2, default=str))
        return
    for record in records:
        span = record.span()
        patient = record.patient
        born = f"born {patient.birth_date}" if patient.birth_date else "birth date unknown"
        died = (
            f", died {patient.deceased_at:%Y-%m-%d}"
            if patient.deceased_at
            else (", deceased (date not recorded)" if patient.deceased else "")
        )
        period = f"{span[0]:%Y-%m-%d} to {span[1]:%Y-%m-%d}" if span else "no dated events"
        out.print(
            f"[bold]{record.id}[/]  {patient.gender or 'gender unknown'}, {born}{died}; {period}", highlight=False
        )
        table = Table(show_header=False, box=None, padding=(0, 2))
        table.add_column("type")
        table.add_column("count", justify="right")
        for kind, count in record.counts().items():
            table.add_row(kind, str(count))
        show_table(table)


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
    reserve: Annotated[
        int, typer.Option("--reserve", min=0, help="Tokens kept free for the answer when fitting.")
    ] = 256,
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
