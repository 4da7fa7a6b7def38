"""``bedside citeqa``: score a submission, answer cases with a system, train the evidence classifier."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bedside.cli.app import ApiKeyEnvOption
from bedside.console import err, fail, out, show_table
from bedside.tasks.citeqa.scoring import RELEVANCE_METRICS, STAND_INS, CiteQAScores

citeqa_app = typer.Typer(
    help="Grounded patient QA with sentence citations (ArchEHR-QA): score, answer, train.", no_args_is_help=True
)

ALL_METRICS = ",".join(RELEVANCE_METRICS)
CasesOption = Annotated[Path, typer.Option("--cases", help="Cases: .jsonl (bedside), case .xml, or website .json.")]
KeyOption = Annotated[Path | None, typer.Option("--key", help="Key JSON (relevance of each sentence), if separate.")]
MetricsOption = Annotated[
    str,
    typer.Option("--metrics", help=f"Relevance metrics, comma-separated, or 'none' ({', '.join(RELEVANCE_METRICS)})."),
]
LenientOption = Annotated[
    str, typer.Option("--lenient", help="Lenient factuality: 2025 (essential + supplementary) or 2026 variant.")
]
ParseOption = Annotated[
    str,
    typer.Option(
        "--parse",
        help="How answers are read: 'default' (forgiving) or 'official' (exactly as the official 2025 scorer). "
        "Either way every place the two differ is noted.",
    ),
]


def _metrics(value: str) -> tuple[str, ...]:
    if value.strip().lower() == "none":
        return ()
    return tuple(m.strip() for m in value.split(",") if m.strip())


def print_scores(scores: CiteQAScores, console: Console = out, *, notes: int = 20) -> None:
    """The factuality and relevance tables, as the task's leaderboard shows them (0–100)."""
    table = Table(
        title=f"Factuality ({len(scores.cases)} cases; lenient = {scores.lenient} definition; {scores.parse} parse)"
    )
    for column in ("", "precision", "recall", "F1"):
        table.add_column(column, justify="right" if column else "left")
    for variation in ("strict", "lenient"):
        for kind in ("micro", "macro"):
            prf = scores.factuality[variation][kind]
            table.add_row(f"{variation} {kind}", *(f"{100 * v:.2f}" for v in (prf.precision, prf.recall, prf.f1)))
    show_table(table, console)
    if scores.relevance:
        relevance = Table(title="Relevance (answers cut to 75 words)")
        relevance.add_column("metric")
        relevance.add_column("score", justify="right")
        relevance.add_column("what it is")
        for name, value in scores.relevance.items():
            label = f"{name} (stand-in)" if name in STAND_INS else name
            relevance.add_row(label, f"{value:.2f}", RELEVANCE_METRICS[name])
        show_table(relevance, console)
    overall_relevance = scores.overall_relevance
    overall = scores.overall
    # A figure that averages in an offline stand-in is marked where it is shown: it is no leaderboard number.
    mark = " *" if scores.stand_ins else ""
    console.print(f"overall factuality (strict micro F1)  {scores.overall_factuality:.2f}")
    console.print(
        "overall relevance (mean of metrics)   "
        + (f"{overall_relevance:.2f}{mark}" if overall_relevance is not None else "not computed")
    )
    console.print(
        "overall score                         " + (f"{overall:.2f}{mark}" if overall is not None else "not computed")
    )
    if mark:
        instead = "; ".join(f"{name} for {STAND_INS[name]}" for name in scores.stand_ins)
        console.print(
            f"* averages offline stand-ins ({instead}): not comparable with leaderboard numbers "
            "(--metrics bleu,rougeLsum,sari leaves them out)",
            soft_wrap=True,
        )
    invalid = scores.invalid_citations
    if invalid:
        total = sum(len(ids) for ids in invalid.values())
        cases = list(invalid.items()) if notes <= 0 else list(invalid.items())[:notes]
        listed = "; ".join(f"{case} {list(ids)}" for case, ids in cases)
        console.print(
            f"[red]errors: {total} citation(s) of ids outside their case, in {len(invalid)} case(s)[/] "
            f"(counted as false positives, never as correct): {escape(listed)}",
            soft_wrap=True,
        )
    shown = scores.notes if notes <= 0 else scores.notes[:notes]
    for note in shown:
        console.print(f"[dim]note: {escape(note)}[/]", soft_wrap=True)
    if len(scores.notes) > len(shown):
        console.print(
            f"[dim]... and {len(scores.notes) - len(shown)} more notes (--notes 0 prints them all; --json lists "
            "them all)[/]"
        )


def scores_json(scores: CiteQAScores) -> dict[str, Any]:
    """The leaderboard fields with the parse, out-of-case citations and every note, for scripts."""
    invalid = {case: list(ids) for case, ids in scores.invalid_citations.items()}
    return {
        **scores.leaderboard(),
        "stand_ins": {name: STAND_INS[name] for name in scores.stand_ins},
        "parse": scores.parse,
        "invalid_citations": invalid,
        "notes": scores.notes,
    }


@citeqa_app.command("score")
def score_command(
    submission: Annotated[Path, typer.Argument(help="Submission JSON: [{case_id, answer}], cited '|1,2|'.")],
    cases: CasesOption,
    key: KeyOption = None,
    metrics: MetricsOption = ALL_METRICS,
    lenient: LenientOption = "2025",
    parse: ParseOption = "default",
    as_json: Annotated[bool, typer.Option("--json", help="Print the leaderboard fields and notes as JSON.")] = False,
    notes: Annotated[int, typer.Option("--notes", help="Most notes printed with the tables; 0 prints them all.")] = 20,
) -> None:
    """Score any submission, ours or another system's: factuality of the citations and relevance of the text.

    Citations of ids a case does not have are reported as errors (and counted as false positives). With
    --parse official, what the official scorer refuses is an error here too (a numeric case id, an answer
    citing nothing).
    """
    from bedside.tasks.citeqa.readers import read_cases
    from bedside.tasks.citeqa.scoring import score_answers
    from bedside.tasks.citeqa.submission import PARSE_MODES, load_submission

    if lenient not in ("2025", "2026"):
        raise fail(ValueError(f"--lenient must be 2025 or 2026, not {lenient!r}"))
    if parse not in PARSE_MODES:
        raise fail(ValueError(f"--parse must be default or official, not {parse!r}"))
    try:
        loaded = load_submission(submission, parse)
        scores = score_answers(
            read_cases(cases, key),
            loaded.answers,
            lenient=lenient,  # type: ignore[arg-type]
            metrics=_metrics(metrics),
            parse=parse,
        )
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    scores.notes[:0] = loaded.notes
    if as_json:
        out.print_json(json.dumps(scores_json(scores)))
    else:
        print_scores(scores, notes=notes)


@citeqa_app.command("answer")
def answer_command(
    cases: CasesOption,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the submission JSON.")],
    key: KeyOption = None,
    system: Annotated[str, typer.Option(help="one_stage, two_stage or classifier.")] = "two_stage",
    model: Annotated[str, typer.Option("--model", "-m", help="PROVIDER/MODEL[@BASE_URL]")] = "embedded/smollm2-135m",
    limit: Annotated[int | None, typer.Option(min=1, help="Answer only the first N cases.")] = None,
    classifier: Annotated[
        Path | None, typer.Option(help="A saved evidence classifier (.npz) for 'classifier'.")
    ] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Most tokens per model answer.")] = 400,
    concurrency: Annotated[int, typer.Option(min=1, help="Cases answered at once.")] = 4,
    metrics: MetricsOption = ALL_METRICS,
    cache: Annotated[Path | None, typer.Option("--cache", help="SQLite response cache.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print what was written, failures, flags, cuts and scores as JSON.")
    ] = False,
    api_key_env: ApiKeyEnvOption = None,
) -> None:
    """Answer cases with one system, write the submission, and score it when the cases have a key."""
    from bedside.llm import GenerationSettings, default_cache_path, get_model
    from bedside.tasks.citeqa.readers import read_cases
    from bedside.tasks.citeqa.scoring import score_answers
    from bedside.tasks.citeqa.submission import write_submission
    from bedside.tasks.citeqa.task import answer_cases

    try:
        loaded = read_cases(cases, key)[:limit]
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    options = {"model": str(classifier)} if classifier else {}

    def done(case_id: str, error: str | None) -> None:
        err.print(f"case {case_id}: " + (f"[red]error[/] {escape(error)}" if error else "answered"), soft_wrap=True)

    flags: dict[str, list[dict[str, Any]]] = {}
    cuts: dict[str, dict[str, Any]] = {}

    async def run() -> tuple[dict[str, str], dict[str, str]]:
        cache_path = None if no_cache else cache or default_cache_path()
        async with get_model(model, cache=cache_path, api_key_env=api_key_env) as llm:
            return await answer_cases(
                loaded,
                system,
                llm,
                options=options,
                settings=GenerationSettings(max_tokens=max_tokens, seed=0),
                concurrency=concurrency,
                on_done=done,
                flags=flags,
                cuts=cuts,
            )

    try:
        answers, errors = asyncio.run(run())
    except ValueError as exc:
        raise fail(exc) from None
    write_submission(output, answers)
    answered = [c for c in loaded if c.id in answers]
    scored = answered and all(c.relevance is not None for c in answered)
    scores = score_answers(answered, answers, metrics=_metrics(metrics)) if scored else None
    if as_json:
        result = {
            "output": str(output),
            "answered": len(answers),
            "errors": errors,
            "flagged": flags,
            "cut": cuts,
            "scores": scores_json(scores) if scores else None,
        }
        out.print_json(json.dumps(result))
        if errors:
            raise typer.Exit(1)
        return
    out.print(f"wrote {len(answers)} answers to {output}; {len(errors)} case(s) failed")
    for case_id, error in errors.items():
        out.print(f"[red]failed[/] {case_id}: {escape(error)}", soft_wrap=True)
    for case_id, statements in flags.items():
        removed = "; ".join(f"statement {f['statement']}: {' '.join(f['removed'])}" for f in statements)
        out.print(
            f"[yellow]flagged[/] {case_id}: citation syntax in statement text, taken out (only the citation "
            f"field cites): {escape(removed)}",
            soft_wrap=True,
        )
    for case_id, cut in cuts.items():
        dropped = f"; dropped {len(cut['dropped'])} statement(s) past it" if cut["dropped"] else ""
        out.print(
            f"[yellow]cut[/] {case_id}: still {cut['words']} words after the re-asks; cut to its first "
            f"{cut['limit']} words, as the official scorer cuts, and kept{dropped}",
            soft_wrap=True,
        )
    if scores:
        print_scores(scores)
        if errors:
            out.print(f"[yellow]scores cover the {len(answered)} answered cases only[/]")
    if errors:  # as `bedside run` does: a case that failed is a failure, whatever was written
        raise typer.Exit(1)


@citeqa_app.command("submission")
def submission_command(
    run: Annotated[str, typer.Argument(help="A stored citeqa run (id or unique prefix).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the submission JSON.")],
    cell: Annotated[str | None, typer.Option(help="The cell to export, when the run has several.")] = None,
    epoch: Annotated[int, typer.Option(help="The epoch to export.")] = 0,
    store: Annotated[
        str, typer.Option("--store", help="Results store: a SQLite path or a SQLAlchemy URL.", envvar="BEDSIDE_STORE")
    ] = "runs/bedside.sqlite",
) -> None:
    """Write a stored run's answers in the official submission format, citations from their citation field.

    Samples stored as errors are listed and left out; the official scorer refuses a submission that misses
    cases, so the file is then incomplete.
    """
    from bedside.runs import Store
    from bedside.runs.registry import resolve_task
    from bedside.tasks.citeqa.submission import write_submission
    from bedside.tasks.citeqa.task import CiteQATask, run_submission

    opened = Store(store)
    try:
        found = opened.run(run)
        task = found["task"]
        if not isinstance(resolve_task(task), CiteQATask):
            raise ValueError(f"run {found['id']} is a {task!r} run, not a citeqa run")
        exported = run_submission(opened.results(found["id"]), cell=cell, epoch=epoch)
    except (LookupError, ValueError) as exc:
        raise fail(exc) from None
    finally:
        opened.close()
    write_submission(output, exported.answers)
    out.print(
        f"wrote {len(exported.answers)} answers of run {found['id']} (cell {exported.cell}, epoch {exported.epoch}) "
        f"to {output}",
        highlight=False,
        soft_wrap=True,
    )
    if exported.cut:
        out.print(
            f"{len(exported.cut)} answer(s) were cut to 75 words after their re-asks: {', '.join(exported.cut)}",
            highlight=False,
            soft_wrap=True,
        )
    for case_id, error in exported.errors:
        err.print(f"[yellow]left out[/] {case_id}: the sample is an error: {escape(error)}", soft_wrap=True)
    if exported.errors:
        err.print(
            f"[yellow]warning[/]: {len(exported.errors)} case(s) left out; the official scorer refuses a submission "
            "that misses cases (`bedside run --retry-errors` asks them again)",
            soft_wrap=True,
        )


@citeqa_app.command("train-classifier")
def train_command(
    cases: CasesOption,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to save the classifier (.npz).")],
    key: KeyOption = None,
    folds: Annotated[int, typer.Option(min=2, help="Cross-validation folds for the held-out report.")] = 5,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the held-out report and the saved path as JSON.")
    ] = False,
) -> None:
    """Train the evidence classifier on labelled cases; report held-out selection quality; save it."""
    from bedside.tasks.citeqa.classifier import EvidenceClassifier, cross_validate
    from bedside.tasks.citeqa.readers import read_cases

    try:
        loaded = read_cases(cases, key)
        report = cross_validate(loaded, folds=folds)
        path = EvidenceClassifier.fit(loaded).save(output)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    if as_json:
        out.print_json(json.dumps({**report, "cases": len(loaded), "saved": str(path)}))
        return
    out.print(
        f"held-out ({int(report['folds'])}-fold by case) selection of essential+supplementary sentences: "
        f"precision {report['precision']:.3f}, recall {report['recall']:.3f}, F1 {report['f1']:.3f}; "
        f"3-label macro F1 {report['label_macro_f1']:.3f}"
    )
    out.print(f"trained on {len(loaded)} cases; saved to {path}")
