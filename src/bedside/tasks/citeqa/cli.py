"""``bedside citeqa``: score a submission, answer cases with a system, train the evidence classifier."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bedside.console import err, fail, out
from bedside.tasks.citeqa.scoring import RELEVANCE_METRICS, CiteQAScores

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


def _metrics(value: str) -> tuple[str, ...]:
    if value.strip().lower() == "none":
        return ()
    return tuple(m.strip() for m in value.split(",") if m.strip())


def print_scores(scores: CiteQAScores, console: Console = out, *, notes: int = 20) -> None:
    """The factuality and relevance tables, as the task's leaderboard shows them (0–100)."""
    table = Table(title=f"Factuality ({len(scores.cases)} cases; lenient = {scores.lenient} definition)")
    for column in ("", "precision", "recall", "F1"):
        table.add_column(column, justify="right" if column else "left")
    for variation in ("strict", "lenient"):
        for kind in ("micro", "macro"):
            prf = scores.factuality[variation][kind]
            table.add_row(f"{variation} {kind}", *(f"{100 * v:.2f}" for v in (prf.precision, prf.recall, prf.f1)))
    console.print(table)
    if scores.relevance:
        relevance = Table(title="Relevance (answers cut to 75 words)")
        relevance.add_column("metric")
        relevance.add_column("score", justify="right")
        relevance.add_column("what it is")
        for name, value in scores.relevance.items():
            relevance.add_row(name, f"{value:.2f}", RELEVANCE_METRICS[name])
        console.print(relevance)
    overall_relevance = scores.overall_relevance
    overall = scores.overall
    console.print(f"overall factuality (strict micro F1)  {scores.overall_factuality:.2f}")
    console.print(
        "overall relevance (mean of metrics)   "
        + (f"{overall_relevance:.2f}" if overall_relevance is not None else "not computed")
    )
    console.print(
        "overall score                         " + (f"{overall:.2f}" if overall is not None else "not computed")
    )
    for note in scores.notes[:notes]:
        console.print(f"[dim]note: {escape(note)}[/]")
    if len(scores.notes) > notes:
        console.print(f"[dim]... and {len(scores.notes) - notes} more notes (--json lists them all)[/]")


@citeqa_app.command("score")
def score_command(
    submission: Annotated[Path, typer.Argument(help="Submission JSON: [{case_id, answer}], cited '|1,2|'.")],
    cases: CasesOption,
    key: KeyOption = None,
    metrics: MetricsOption = ALL_METRICS,
    lenient: LenientOption = "2025",
    as_json: Annotated[bool, typer.Option("--json", help="Print the leaderboard fields and notes as JSON.")] = False,
) -> None:
    """Score any submission, ours or another system's: factuality of the citations and relevance of the text."""
    from bedside.tasks.citeqa.readers import read_cases
    from bedside.tasks.citeqa.scoring import score_answers
    from bedside.tasks.citeqa.submission import read_submission

    if lenient not in ("2025", "2026"):
        raise fail(ValueError(f"--lenient must be 2025 or 2026, not {lenient!r}"))
    try:
        answers = read_submission(submission)
        scores = score_answers(read_cases(cases, key), answers, lenient=lenient, metrics=_metrics(metrics))  # type: ignore[arg-type]
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    if as_json:
        out.print_json(json.dumps({**scores.leaderboard(), "notes": scores.notes}))
    else:
        print_scores(scores)


@citeqa_app.command("answer")
def answer_command(
    cases: CasesOption,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the submission JSON.")],
    key: KeyOption = None,
    system: Annotated[str, typer.Option(help="one_stage, two_stage or classifier.")] = "two_stage",
    model: Annotated[str, typer.Option("--model", "-m", help="PROVIDER/MODEL[@BASE_URL]")] = "embedded/smollm2-135m",
    limit: Annotated[int | None, typer.Option(help="Answer only the first N cases.")] = None,
    classifier: Annotated[
        Path | None, typer.Option(help="A saved evidence classifier (.npz) for 'classifier'.")
    ] = None,
    max_tokens: Annotated[int, typer.Option(help="Most tokens per model answer.")] = 400,
    concurrency: Annotated[int, typer.Option(help="Cases answered at once.")] = 4,
    metrics: MetricsOption = ALL_METRICS,
    cache: Annotated[Path | None, typer.Option("--cache", help="SQLite response cache.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")] = False,
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

    async def run() -> tuple[dict[str, str], dict[str, str]]:
        cache_path = None if no_cache else cache or default_cache_path()
        async with get_model(model, cache=cache_path) as llm:
            return await answer_cases(
                loaded,
                system,
                llm,
                options=options,
                settings=GenerationSettings(max_tokens=max_tokens, seed=0),
                concurrency=concurrency,
                on_done=done,
            )

    try:
        answers, errors = asyncio.run(run())
    except ValueError as exc:
        raise fail(exc) from None
    write_submission(output, answers)
    out.print(f"wrote {len(answers)} answers to {output}; {len(errors)} case(s) failed")
    for case_id, error in errors.items():
        out.print(f"[red]failed[/] {case_id}: {escape(error)}", soft_wrap=True)
    answered = [c for c in loaded if c.id in answers]
    if answered and all(c.relevance is not None for c in answered):
        print_scores(score_answers(answered, answers, metrics=_metrics(metrics)))
        if errors:
            out.print(f"[yellow]scores cover the {len(answered)} answered cases only[/]")


@citeqa_app.command("train-classifier")
def train_command(
    cases: CasesOption,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to save the classifier (.npz).")],
    key: KeyOption = None,
    folds: Annotated[int, typer.Option(help="Cross-validation folds for the held-out report.")] = 5,
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
    out.print(
        f"held-out ({int(report['folds'])}-fold by case) selection of essential+supplementary sentences: "
        f"precision {report['precision']:.3f}, recall {report['recall']:.3f}, F1 {report['f1']:.3f}; "
        f"3-label macro F1 {report['label_macro_f1']:.3f}"
    )
    out.print(f"trained on {len(loaded)} cases; saved to {path}")
