"""`bedside sim`: checks of the simulation engine shared by the multi-turn tasks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from bedside.cli.app import ApiKeyEnvOption, CacheOption, JsonOption, ModelOption, NoCacheOption, _cache_path, app
from bedside.console import Steps, err, fail, out, show_table

sim_app = typer.Typer(
    help="The simulation engine: validate the simulated patient's fidelity checker.", no_args_is_help=True
)
app.add_typer(sim_app, name="sim")


@sim_app.command("fidelity-agreement")
def fidelity_agreement(
    model: ModelOption = "embedded/smollm2-135m",
    labels: Annotated[
        Path | None, typer.Option(help="Labelled patient turns (JSONL) [default: bedside's 113 sentences].")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Turns judged at once.")] = 4,
    checker: Annotated[
        str,
        typer.Option(
            help="llm (the judge model) | embedding (MiniLM cosine) | combined (rules + MiniLM; no model call)."
        ),
    ] = "llm",
    threshold: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="The embedding checker's cosine for entailed.")
    ] = 0.6,
    prefilter: Annotated[
        float | None,
        typer.Option(help="With the llm checker: label sentences at or above this cosine entailed without asking."),
    ] = None,
    api_key_env: ApiKeyEnvOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
    as_json: JsonOption = False,
) -> None:
    """The fidelity checker on MODEL against hand labels: accuracy, Cohen's κ, per label, by phase, flagged."""
    from bedside.llm import ModelError, get_model
    from bedside.sim.validation import read_fidelity_items, validate_fidelity

    try:
        items = read_fidelity_items(labels)
    except ValueError as exc:
        raise fail(exc) from None

    async def run() -> object:
        async with get_model(model, role="judge", cache=_cache_path(cache, no_cache), api_key_env=api_key_env) as judge:
            return await validate_fidelity(
                items,
                judge,
                concurrency=concurrency,
                checker=checker,  # type: ignore[arg-type]
                threshold=threshold,
                prefilter=prefilter,
            )

    if not as_json:
        who = model if checker == "llm" or prefilter is not None else f"the {checker} checker (no model call)"
        err.print(f"labelling {sum(len(i.sentences) for i in items)} sentences in {len(items)} turns with {who} ...")
    try:
        result = asyncio.run(run())
    except (ModelError, ValueError) as exc:
        raise fail(exc) from None
    data = result.as_dict()  # type: ignore[attr-defined]
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    table = Table(title=f"Fidelity checker against hand labels ({data['model']})")
    for column in ("slice", "sentences", "accuracy", "Cohen's κ"):
        table.add_column(column, justify="left" if column == "slice" else "right")
    rows = [("all four labels", data["overall"])]
    rows += [(f"phase {phase}", figures) for phase, figures in data["by_phase"].items()]
    rows.append(("flagged vs not", data["flagged"]))
    for name, figures in rows:
        kappa = "-" if figures["kappa"] is None else f"{figures['kappa']:.3f}"
        table.add_row(name, str(figures["n"]), f"{figures['accuracy']:.3f}", kappa)
    show_table(table)
    labels_table = Table(title="Per label")
    for column in ("label", "support", "predicted", "precision", "recall"):
        labels_table.add_column(column, justify="left" if column == "label" else "right")
    for label, figures in data["per_label"].items():
        labels_table.add_row(
            label,
            str(figures["support"]),
            str(figures["predicted"]),
            *("-" if figures[k] is None else f"{figures[k]:.3f}" for k in ("precision", "recall")),
        )
    show_table(labels_table)
    if data["flagged_recall"] is not None:
        out.print(f"flagged recall: {data['flagged_recall']:.3f} of invented or contradicting sentences caught")
    for item, cause in data["failed"].items():
        err.print(f"[yellow]{item}[/]: no valid labels ({cause}); left out")


@sim_app.command("fidelity-eval")
def fidelity_eval(
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="The llm checker's judge, PROVIDER/MODEL[@BASE_URL]; without it the llm checker is left out.",
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            "--set",
            help="Labelled patient sentences (JSONL, optional split dev/test) [default: bedside's own set and the "
            "outside-written held-out sets, each reported apart].",
        ),
    ] = None,
    checkers: Annotated[
        str, typer.Option(help="Comma-separated checkers to measure: embedding, combined, llm.")
    ] = "embedding,combined,llm",
    concurrency: Annotated[int, typer.Option(min=1, help="Turns the llm checker judges at once.")] = 4,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="The combined checker asks the --model judge about the sentences its rules leave uncertain.",
        ),
    ] = False,
    kinds_left_out: Annotated[
        bool,
        typer.Option(
            "--leave-one-kind-out",
            help="Also: each conflict kind's rules taken away from the combined checker, on the contradictions "
            "that kind catches (caught by the other rules, uncertain, missed).",
        ),
    ] = False,
    show_errors: Annotated[
        bool,
        typer.Option(
            "--show-errors",
            help="Also list each sentence of your --set a checker labelled otherwise than you did (id, your label, "
            "the checker's, the sentence).",
        ),
    ] = False,
    api_key_env: ApiKeyEnvOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
    as_json: JsonOption = False,
) -> None:
    """Per-label precision and recall of each fidelity checker on a labelled set, on its dev and test halves and
    on all of it (the combined checker's thresholds were chosen on bedside's dev half only); by default on
    bedside's own set and on each outside-written set apart, with Wilson 95% intervals for the figures that count."""
    from bedside.llm import ModelError, get_model
    from bedside.sim.fidelity import CHECKERS
    from bedside.sim.validation import (
        BUILTIN_SENTENCE_SETS,
        SentenceSet,
        evaluate_checkers,
        read_fidelity_items,
        shipped_outside_set,
    )
    from bedside.stats.proportions import share_with_interval

    chosen = [c.strip() for c in checkers.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in CHECKERS]
    if unknown or not chosen:
        raise fail(ValueError(f"--checkers: unknown {unknown or chosen}; choose from {', '.join(CHECKERS)}"))
    if verify and ("combined" not in chosen or model is None):
        raise fail(
            ValueError(
                "--verify asks a judge about the combined checker's uncertain sentences: give "
                "--model PROVIDER/MODEL and include combined in --checkers"
            )
        )
    if "llm" in chosen and model is None:
        if chosen == ["llm"]:  # nothing would be measured: not a success
            raise fail(ValueError("--checkers llm needs a judge: give --model PROVIDER/MODEL"))
        err.print("no --model: the llm checker is left out")
        chosen.remove("llm")
    if show_errors and labels is None:
        raise fail(
            ValueError(
                "--show-errors lists your own set's mislabelled sentences: give --set (bedside's outside-written "
                "sets stay unread)"
            )
        )
    sets = BUILTIN_SENTENCE_SETS if labels is None else (SentenceSet(str(labels), "your labelled sentences", labels),)
    try:
        loaded = [(labelled, read_fidelity_items(labelled.path)) for labelled in sets]
    except ValueError as exc:
        raise fail(exc) from None
    sealed = shipped_outside_set(labels) if show_errors and labels is not None else None
    if sealed is not None:
        err.print(f"{labels} is a copy of bedside's {sealed.name!r}, whose sentences stay unread: no errors listed")
        show_errors = False

    async def each_set(judge: Any) -> list[list[Any]]:
        found = []
        with Steps("fidelity-eval", len(loaded), "sets measured", quiet=as_json) as steps:  # minutes, by default
            for labelled, items in loaded:
                found.append(
                    await evaluate_checkers(items, chosen, judge, concurrency=concurrency, verify=verify)  # type: ignore[arg-type]
                )
                steps.advance(labelled.name)
        return found

    async def run() -> list[list[Any]]:
        if "llm" not in chosen and not verify:
            return await each_set(None)
        assert model is not None
        async with get_model(model, role="judge", cache=_cache_path(cache, no_cache), api_key_env=api_key_env) as judge:
            return await each_set(judge)

    try:
        results = asyncio.run(run())
    except (ModelError, ValueError) as exc:
        raise fail(exc) from None
    measured: list[dict[str, Any]] = [
        {
            "name": labelled.name,
            "provenance": labelled.provenance,
            "set": str(labelled.path),
            "checkers": [
                {**result.as_dict(), **({"errors": _mislabelled(items, result.labels)} if show_errors else {})}
                for result in found
            ],
        }
        for (labelled, items), found in zip(loaded, results, strict=True)
    ]
    if kinds_left_out:
        from bedside.sim.validation import leave_one_kind_out

        for entry, (_, items) in zip(measured, loaded, strict=True):
            entry["leave_one_kind_out"] = [{**vars(k), "missed": k.missed} for k in leave_one_kind_out(items)]
    if as_json:
        typer.echo(json.dumps({"sets": measured}, indent=2))
        return
    for entry in measured:
        if "leave_one_kind_out" in entry:
            _kinds_left_out_table(entry)
        for result in entry["checkers"]:
            _fidelity_table(entry, result)
            figures = result["splits"]["all"]["per_label"]
            contradicted, unsupported = figures["contradicted"], figures["unsupported"]
            for wrong in result.get("errors", []):
                sentence = wrong["sentence"] if len(wrong["sentence"]) <= 200 else wrong["sentence"][:197] + "..."
                out.print(
                    f"{result['checker']} labelled {wrong['id']} #{wrong['index']} {wrong['predicted']} (yours: "
                    f"{wrong['gold']}): {sentence!r}",
                    highlight=False,
                )
            out.print(
                f"{entry['name']}, {result['checker']}: contradicted precision "
                f"{share_with_interval(contradicted['hits'], contradicted['predicted'])}, recall "
                f"{share_with_interval(contradicted['hits'], contradicted['support'])}; unsupported precision "
                f"{share_with_interval(unsupported['hits'], unsupported['predicted'])}; uncertain "
                f"{figures['uncertain']['predicted']} of {sum(row['support'] for row in figures.values())}",
                highlight=False,
            )


def _mislabelled(items: Sequence[Any], labels: dict[str, tuple[str, ...]]) -> list[dict[str, Any]]:
    """Each sentence the checker labelled otherwise than its hand label (items it gave no answer for are left out:
    fidelity-eval reports them apart)."""
    return [
        {"id": item.id, "index": k + 1, "sentence": sentence, "gold": gold, "predicted": guess}
        for item in items
        if item.id in labels
        for k, (sentence, gold, guess) in enumerate(zip(item.sentences, item.labels, labels[item.id], strict=True))
        if gold != guess
    ]


def _kinds_left_out_table(entry: dict[str, Any]) -> None:
    table = Table(title=f"Combined checker, one conflict kind left out, on {entry['name']}")
    for column in ("kind left out", "contradictions it catches", "caught by other rules", "uncertain", "missed"):
        table.add_column(column, justify="left" if column == "kind left out" else "right")
    for row in entry["leave_one_kind_out"]:
        table.add_row(row["kind"], *(str(row[k]) for k in ("caught", "still_caught", "uncertain", "missed")))
    out.print(table)


def _fidelity_table(entry: dict[str, Any], result: dict[str, Any]) -> None:
    table = Table(title=f"Fidelity checker {result['name']} on {entry['name']}")
    for column in ("split", "label", "support", "predicted", "precision", "recall"):
        table.add_column(column, justify="left" if column in ("split", "label") else "right")
    for split, figures in result["splits"].items():
        for label, row in figures["per_label"].items():
            table.add_row(
                split,
                label,
                str(row["support"]),
                str(row["predicted"]),
                *("-" if row[k] is None else f"{row[k]:.3f}" for k in ("precision", "recall")),
            )
        for item, cause in figures["failed"].items():
            err.print(f"[yellow]{item}[/]: no valid labels from {result['checker']} ({cause}); left out")
    show_table(table)
