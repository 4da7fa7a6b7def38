"""``bedside instruct``: the taxonomy, instruction files, instruction-record matching, and the analyses of
clinician labels (Table 3 and breakdowns, metrics against clinicians, LLM judges against clinicians)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.markup import escape

from bedside.cli.app import ApiKeyEnvOption
from bedside.console import column_map, data_table, err, fail, out, show_table
from bedside.private_files import write_private_text

instruct_app = typer.Typer(
    help="Clinician instructions over patient records (MedAlign): taxonomy, matching, evaluation from labels.",
    no_args_is_help=True,
)

InstructionsOption = Annotated[
    Path | None,
    typer.Option("--instructions", "-i", help="Instructions (.jsonl, sample .csv, gold .tsv) [default: synthetic]"),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
InstructionColumnOption = Annotated[
    list[str] | None,
    typer.Option(
        "--instruction-column",
        help="FIELD=COLUMN for a gold .tsv of instructions (instruction_id, person_id, annotator, response, "
        "question, filename); repeatable.",
    ),
]
QuotingOption = Annotated[
    str, typer.Option(help="Quoting of the release's .tsv files: csv (quoted fields) or none (quotes are text).")
]


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or value != value else f"{value:.{digits}f}"


def _print_table(title: str, columns: list[str], rows: list[list[str]], caption: str = "") -> None:
    show_table(data_table(title, columns, rows, caption))


def _quoting(quoting: str) -> Any:
    if quoting not in ("csv", "none"):
        raise ValueError(f"--quoting must be csv or none, not {quoting!r}")
    return quoting


def _instructions(path: Path | None, columns: list[str] | None = None, quoting: str = "csv") -> list[Any]:
    """Instructions from ``path`` (default: the synthetic set); ``columns`` (FIELD=COLUMN) map a gold .tsv."""
    from bedside.tasks.instruct.readers import read_instructions
    from bedside.tasks.instruct.task import SYNTHETIC_INSTRUCTIONS

    mapping = column_map(columns, "--instruction-column")
    if mapping and (path is None or path.suffix.lower() != ".tsv"):
        raise ValueError(
            "--instruction-column maps the columns of a gold .tsv file; the instructions given are not one"
        )
    return read_instructions(path or SYNTHETIC_INSTRUCTIONS, columns=mapping, quoting=_quoting(quoting))


@instruct_app.command("taxonomy")
def taxonomy_command(as_json: JsonOption = False) -> None:
    """The 6 categories and 20 subcategories with the paper's Gold / All counts (Tables 2 and S2)."""
    from bedside.tasks.instruct.taxonomy import taxonomy

    tax = taxonomy()
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(tax), indent=2))
        return
    _print_table(
        "Instruction categories (gold of 303 / all of 983)",
        ["category", "gold", "all"],
        [[c.name, str(c.gold), str(c.all)] for c in tax.categories],
    )
    _print_table(
        "Subcategories (gold of 303 / all of 1,314 collected)",
        ["subcategory", "category", "gold", "all"],
        [[s.name, s.category, str(s.gold), str(s.all)] for s in tax.subcategories],
    )


@instruct_app.command("cases")
def cases_command(
    instructions: InstructionsOption = None,
    instruction_column: InstructionColumnOption = None,
    quoting: QuotingOption = "csv",
    as_json: JsonOption = False,
) -> None:
    """Read and check an instruction file; counts by category, general vs specific, references, records."""
    from collections import Counter

    try:
        loaded = _instructions(instructions, instruction_column, quoting)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    counts = Counter(i.category or "(none)" for i in loaded)
    summary = {
        "instructions": len(loaded),
        "general": sum(i.general is True for i in loaded),
        "specific": sum(i.general is False for i in loaded),
        "with_reference": sum(bool(i.references) for i in loaded),
        "with_record": sum(bool(i.record or i.person_id) for i in loaded),
        "medalign_sourced": sum(i.medalign_sourced for i in loaded),
        "by_category": dict(sorted(counts.items())),
    }
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    _print_table("Instructions by category", ["category", "n"], [[k, str(v)] for k, v in sorted(counts.items())])
    out.print(
        ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in summary.items() if k != "by_category"), highlight=False
    )


@instruct_app.command("dedup")
def dedup_command(
    instructions: Annotated[Path, typer.Option("--instructions", "-i", help="Instructions to de-duplicate.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the kept instructions (JSONL).")],
    threshold: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Remove when ROUGE-L with a kept instruction exceeds this.")
    ] = 0.7,
    instruction_column: InstructionColumnOption = None,
    quoting: QuotingOption = "csv",
    as_json: JsonOption = False,
) -> None:
    """Remove near-duplicate instructions (ROUGE-L > 0.7 with one kept earlier in file order), as MedAlign did."""
    from bedside.tasks.instruct.dedup import deduplicate

    if output.exists():
        raise fail(ValueError(f"{output} exists; choose another --output (nothing is overwritten)"))
    try:
        loaded = _instructions(instructions, instruction_column, quoting)
        result = deduplicate(loaded, threshold=threshold)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    write_private_text(output, "".join(i.model_dump_json() + "\n" for i in result.kept))
    if as_json:
        typer.echo(json.dumps({"kept": len(result.kept), "removed": result.removed}, indent=2))
        return
    for removed, (kept, similarity) in result.removed.items():
        out.print(f"{escape(removed)} duplicates {escape(kept)} (ROUGE-L {similarity:.2f})", highlight=False)
    out.print(f"kept {len(result.kept)} of {len(loaded)} instructions in {output}", highlight=False)


@instruct_app.command("match")
def match_command(
    records: Annotated[Path, typer.Option("--records", "-r", help="Records: bedside JSONL or a folder of files.")],
    instructions: InstructionsOption = None,
    k: Annotated[int, typer.Option("-k", min=1, help="Candidates kept per instruction.")] = 5,
    labels: Annotated[
        Path | None, typer.Option(help="Relevance labels (.csv ehr-relevance-labels layout, or .jsonl).")
    ] = None,
    random_baseline: Annotated[bool, typer.Option("--random", help="Uniform random candidates instead.")] = False,
    seed: Annotated[int, typer.Option(help="Seed of the random baseline.")] = 0,
    view: Annotated[
        Literal["paper", "timeline"],
        typer.Option(help="Record text indexed: paper (raw XML where present) or timeline."),
    ] = "paper",
    instruction_column: InstructionColumnOption = None,
    quoting: QuotingOption = "csv",
    as_json: JsonOption = False,
) -> None:
    """Rank records per general instruction with Okapi BM25 (query: instruction + characteristics + context);
    with --labels, Success@K and MRR@K (unreviewed candidates listed as such)."""
    from bedside.tasks.instruct import matching
    from bedside.tasks.instruct.readers import read_relevance

    try:
        loaded = _instructions(instructions, instruction_column, quoting)
        documents = matching.record_documents(str(records), view=view)
        found = (
            matching.random_match(loaded, list(documents), k=k, seed=seed)
            if random_baseline
            else matching.bm25_match(loaded, documents, k=k)
        )
        if labels is not None:
            found = matching.label(found, read_relevance(labels))
        evaluation = matching.evaluate(found, ks=range(1, k + 1)) if labels is not None else None
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    if as_json:
        data: dict[str, Any] = {"method": "random" if random_baseline else "bm25-okapi", "k": k}
        data["matches"] = matching.matches_json(found)
        if evaluation is not None:
            data["evaluation"] = dataclasses.asdict(evaluation)
        typer.echo(json.dumps(data, indent=2))
        return
    for m in found:
        ranked = ", ".join(
            f"{c.person_id}" + (f" ({c.score:.2f})" if c.score is not None else "") + f" [{c.relevance}]"
            for c in m.candidates
        )
        out.print(f"[bold]{escape(m.instruction_id)}[/] {escape(ranked)}", highlight=False)
    if evaluation is not None:
        _print_table(
            f"Matching ({'random' if random_baseline else 'BM25 Okapi'}), n = {evaluation.n}",
            ["K", "Success@K", "MRR@K"],
            [[str(q), _fmt(evaluation.success[q], 4), _fmt(evaluation.mrr[q], 4)] for q in evaluation.success],
            caption=f"labelled pairs: {evaluation.labelled_pairs}, relevant share "
            f"{_fmt(evaluation.relevant_pair_share)}; unreviewed candidates: {evaluation.unreviewed}",
        )


def _or_demo(labels: Path | None) -> Path:
    """``labels``, or bedside's synthetic demo labels, said on stderr (a table of made-up rankings must not pass
    for a team's own)."""
    if labels is not None:
        return labels
    from bedside.tasks.instruct.task import SYNTHETIC_LABELS

    typer.echo(
        "note: no labels given: bedside's synthetic demo labels (scripted models, made-up clinician ranks); "
        "pass your reviewed labels file for real figures",
        err=True,
    )
    return SYNTHETIC_LABELS


def _labels(
    path: Path, evaluator: str, exclude_errors: bool, columns: list[str] | None = None, quoting: str = "csv"
) -> tuple[list[Any], list[Any]]:
    """(every label, the chosen evaluator's); ``columns`` (FIELD=COLUMN) map the release's reviewed .tsv."""
    from bedside.tasks.instruct.evaluation import without_provider_errors
    from bedside.tasks.instruct.labels import primary_labels
    from bedside.tasks.instruct.readers import read_labels_jsonl, read_release_reviewed

    mapping = column_map(columns)
    if path.suffix.lower() == ".jsonl":
        if mapping:
            raise ValueError("--column maps the columns of the release's reviewed .tsv; a .jsonl has bedside's fields")
        every = read_labels_jsonl(path)
    else:
        every = read_release_reviewed(path, columns=mapping, quoting=_quoting(quoting))
    chosen = primary_labels(every, evaluator)
    return every, (without_provider_errors(chosen) if exclude_errors else chosen)


LabelsArgument = Annotated[
    Path | None, typer.Argument(help="Clinician labels (.jsonl, or the release's reviewed .tsv) [default: synthetic]")
]
EvaluatorOption = Annotated[str, typer.Option(help="The evaluator whose labels enter the main tables.")]
ExcludeOption = Annotated[
    bool, typer.Option("--exclude-provider-errors", help="Only instructions where no response is an endpoint error.")
]
LabelColumnOption = Annotated[
    list[str] | None,
    typer.Option(
        "--column",
        help="FIELD=COLUMN for the release's reviewed .tsv (instruction_id, model, correct, response, rank, "
        "evaluator, used, specialty); repeatable.",
    ),
]


@instruct_app.command("evaluate")
def evaluate_command(
    labels: LabelsArgument = None,
    instructions: InstructionsOption = None,
    evaluator: EvaluatorOption = "Annotator_1",
    exclude_errors: ExcludeOption = False,
    records: Annotated[
        Path | None, typer.Option("--records", "-r", help="Records, for the length quartiles [default: demo cohort]")
    ] = None,
    tokenizer: Annotated[
        str, typer.Option(help="Tokenizer for record and response lengths (embedded, chars:N, tokenizer.json).")
    ] = "chars:4",
    column: LabelColumnOption = None,
    instruction_column: InstructionColumnOption = None,
    quoting: QuotingOption = "csv",
    as_json: JsonOption = False,
) -> None:
    """Table 3 (correct %, win rate with ties excluded, mean rank), correctness by category, subcategory and
    submitter specialty, point-biserial of correctness with rank (overall and by category), easy and hard
    instructions, correctness and rank by record-length quartile, response lengths."""
    from bedside.tasks.instruct import evaluation
    from bedside.tasks.instruct.ehr import RecordNotFoundError, load_ehr
    from bedside.tasks.instruct.task import DEMO_RECORDS
    from bedside.text.tokens import get_tokenizer

    try:
        _, chosen = _labels(_or_demo(labels), evaluator, exclude_errors, column, quoting)
        cases = {i.id: i for i in _instructions(instructions, instruction_column, quoting)}
        strangers = sorted({label.instruction_id for label in chosen} - set(cases))
        if strangers:  # a label for an instruction the file does not hold would count in no category
            shown = ", ".join(map(repr, strangers[:5])) + (
                f" and {len(strangers) - 5} more" if len(strangers) > 5 else ""
            )
            raise ValueError(f"labels for instruction(s) not in the instructions file: {shown}")
        cases = evaluation.with_label_specialties(cases, chosen)  # the release's gold file has no specialty
        table = evaluation.table3(chosen)
        by_category = evaluation.correctness_by(chosen, cases, lambda i: i.category, name="category")
        by_sub = evaluation.correctness_by(chosen, cases, lambda i: i.subcategory, name="subcategory")
        by_specialty = evaluation.correctness_by(
            chosen, cases, lambda i: i.submitter_specialty, name="submitter specialty"
        )
        correlation = evaluation.rank_correctness_correlation(chosen)
        correlation_by_category = evaluation.correlation_by(chosen, cases, lambda i: i.category)
        difficulty = evaluation.easy_and_hard(chosen)
        counter = get_tokenizer(tokenizer)
        lengths: dict[str, int] = {}
        for item in {x.instruction_id for x in chosen}:
            if item in cases:
                try:
                    ehr = load_ehr(cases[item], str(records or DEMO_RECORDS))
                except (RecordNotFoundError, ValueError):
                    continue
                lengths[item] = counter.count(ehr.text("paper"))
        quartiles = evaluation.by_length_quartile(chosen, lengths, tokenizer=counter.name) if lengths else None
        response_lengths = evaluation.response_lengths(chosen, cases, counter.count)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    if as_json:
        data = {
            "instructions": len({x.instruction_id for x in chosen}),
            "table3": [dataclasses.asdict(r) for r in table.rows],
            "head_to_head": {"models": table.matrix.systems, "wins": table.matrix.wins},
            "by_category": dataclasses.asdict(by_category),
            "by_subcategory": dataclasses.asdict(by_sub),
            "by_specialty": {
                g: (sum(v for v in r.values() if v is not None) / max(1, sum(v is not None for v in r.values())))
                for g, r in by_specialty.rates.items()
            },
            "point_biserial": dataclasses.asdict(correlation),
            "point_biserial_by_category": {g: dataclasses.asdict(c) for g, c in correlation_by_category.items()},
            "difficulty": dataclasses.asdict(difficulty),
            "length_quartiles": dataclasses.asdict(quartiles) if quartiles else None,
            "response_lengths": [dataclasses.asdict(r) for r in response_lengths],
        }
        typer.echo(json.dumps(data, indent=2))
        return
    n = len({x.instruction_id for x in chosen})
    _print_table(
        f"Table 3 shape: {n} instructions",
        ["model", "n", "correct %", "win rate", "mean rank"],
        [[r.model, str(r.n), _fmt(100 * r.correct, 1), _fmt(r.win_rate), _fmt(r.mean_rank, 2)] for r in table.rows],
        caption="win rate: share of non-tied pairwise comparisons won, averaged over the other models",
    )
    for breakdown in (by_category, by_sub, by_specialty):
        _print_table(
            f"Correct by {breakdown.key}",
            [breakdown.key, "n", *breakdown.models],
            [
                [g, str(breakdown.counts[g]), *(_fmt(breakdown.rates[g][m]) for m in breakdown.models)]
                for g in breakdown.groups
            ]
            + [["micro", "", *(_fmt(breakdown.micro[m]) for m in breakdown.models)]]
            + [["macro", "", *(_fmt(breakdown.macro[m]) for m in breakdown.models)]],
        )
    out.print(
        f"point-biserial (correct vs rank, per instruction): mean {_fmt(correlation.mean)} "
        f"[{_fmt(correlation.low)}, {_fmt(correlation.high)}], n = {correlation.n}, skipped {correlation.skipped} "
        "(all responses correct or all incorrect)",
        highlight=False,
    )
    _print_table(
        "Point-biserial (correct vs rank) by category",
        ["category", "mean", "95% CI", "n", "skipped"],
        [
            [g, _fmt(c.mean), f"[{_fmt(c.low)}, {_fmt(c.high)}]", str(c.n), str(c.skipped)]
            for g, c in correlation_by_category.items()
        ],
        caption="Per instruction across its responses, then the mean over the category's instructions (Table S9).",
    )
    out.print(
        f"correct for every model: {len(difficulty.all_correct)}; for none: {len(difficulty.none_correct)}; "
        f"mixed: {difficulty.mixed} of {difficulty.n}",
        highlight=False,
    )
    if quartiles is not None:
        edges = " / ".join(f"{e:,.0f}" for e in quartiles.edges)
        _print_table(
            f"Correct (mean rank) by record-length quartile, edges {edges} {quartiles.tokenizer} tokens",
            ["model", *(f"Q{q + 1} (n={n})" for q, n in enumerate(quartiles.counts))],
            [
                [
                    m,
                    *(
                        f"{_fmt(c)} ({_fmt(r, 2)})"
                        for c, r in zip(quartiles.correct[m], quartiles.mean_rank[m], strict=True)
                    ),
                ]
                for m in quartiles.correct
            ],
        )
    _print_table(
        f"Response length percentiles ({counter.name} tokens)",
        ["source", "n", "0", "25", "50", "75", "100"],
        [[r.source, str(r.n), *(f"{p:.0f}" for p in r.percentiles)] for r in response_lengths],
    )


@instruct_app.command("records")
def records_command(
    instructions: InstructionsOption = None,
    records: Annotated[Path | None, typer.Option("--records", "-r", help="Records [default: the demo cohort].")] = None,
    tokenizer: Annotated[
        str, typer.Option(help="Tokenizer for record lengths (embedded, chars:N, tokenizer.json).")
    ] = ("chars:4"),
    view: Annotated[
        Literal["paper", "timeline"],
        typer.Option(help="Record text measured: paper (raw XML where present) or timeline."),
    ] = "paper",
    instruction_column: InstructionColumnOption = None,
    quoting: QuotingOption = "csv",
    as_json: JsonOption = False,
) -> None:
    """Tables S4 and S5: demographics and lengths of the distinct records behind the instructions (each record
    once, however many instructions it serves)."""
    from bedside.tasks.instruct import cohort
    from bedside.tasks.instruct.task import DEMO_RECORDS
    from bedside.text.tokens import get_tokenizer

    if view not in ("paper", "timeline"):
        raise fail(ValueError(f"--view must be paper or timeline, not {view!r}"))
    try:
        loaded = _instructions(instructions, instruction_column, quoting)
        found, missing = cohort.distinct_records(loaded, str(records or DEMO_RECORDS))
        ehrs = list(found.values())
        if not ehrs:
            first = next(iter(missing.items()), None)
            raise ValueError(
                f"none of the {len(loaded)} instructions has a record to describe"
                + (f" (e.g. {first[0]}: {first[1]})" if first else "")
            )
        people = cohort.demographics_table(ehrs)
        stats = cohort.record_statistics(ehrs, get_tokenizer(tokenizer), view=view)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "demographics": dataclasses.asdict(people),
                    "statistics": dataclasses.asdict(stats),
                    "missing_records": missing,
                },
                indent=2,
            )
        )
        return
    _print_table(
        f"Demographics of {people.patients} patients (Table S4)",
        ["attribute", "value", "patients", "%"],
        [
            [attribute, value, str(n), _fmt(100 * n / people.patients, 1)]
            for attribute, counts in people.counts.items()
            for value, n in counts.items()
        ],
        caption="Age at the record's latest event.",
    )
    _print_table(
        f"Record statistics (Table S5): {stats.records} records, {stats.tokenizer} tokens of the {stats.view} view",
        ["statistic", "value"],
        [
            *([f"≤ {t:,} tokens", f"{n} ({_fmt(100 * n / stats.records, 2)}%)"] for t, n in stats.within.items()),
            ["median [IQR]", f"{stats.median:,.0f} [{stats.iqr:,.0f}]"],
            ["range", f"{stats.minimum:,}–{stats.maximum:,}"],
            ["total tokens", f"{stats.total_tokens:,}"],
            ["total characters", f"{stats.total_characters:,}"],
            [
                "median per record: codes / visits / notes / measurements",
                f"{stats.median_codes:g} / {stats.median_visits:g} / {stats.median_notes:g} / "
                f"{stats.median_measurements:g}",
            ],
        ],
        caption=(f"Records not found: {len(missing)} ({', '.join(sorted(missing)[:5])})" if missing else ""),
    )


@instruct_app.command("power")
def power_command(
    sd: Annotated[float, typer.Option("--sd", help="Standard error of the score difference (the paper's σ_d).")],
    alpha: Annotated[float, typer.Option(help="Two-sided significance level.")] = 0.05,
    power: Annotated[float, typer.Option(help="Probability of detecting the difference.")] = 0.8,
    df: Annotated[
        int | None, typer.Option(help="Degrees of freedom for Student's t quantiles [default: normal quantiles].")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Appendix K's power analysis: the minimum detectable difference between two models' scores,
    (q(1 − α/2) + q(power)) × σ_d. The paper's 0.052 from σ_d 0.014 is reproduced with --df 4 (normal: 0.039)."""
    from bedside.stats import minimum_detectable_difference

    try:
        mdd = minimum_detectable_difference(sd, alpha=alpha, power=power, df=df)
    except ValueError as exc:
        raise fail(exc) from None
    quantiles = "normal" if df is None else f"t, {df} df"
    if as_json:
        typer.echo(json.dumps({"sd": sd, "alpha": alpha, "power": power, "df": df, "minimum_detectable": mdd}))
        return
    out.print(
        f"minimum detectable difference {mdd:.4f} (σ_d {sd:g}, α {alpha:g}, power {power:g}, {quantiles} quantiles)",
        highlight=False,
    )


@instruct_app.command("subgroups")
def subgroups_command(
    labels: LabelsArgument = None,
    instructions: InstructionsOption = None,
    records: Annotated[Path | None, typer.Option("--records", "-r", help="Records [default: the demo cohort].")] = None,
    attribute: Annotated[str, typer.Option(help="sex, race, ethnicity or age (at the record's last event).")] = "sex",
    evaluator: EvaluatorOption = "Annotator_1",
    column: LabelColumnOption = None,
    instruction_column: InstructionColumnOption = None,
    quoting: QuotingOption = "csv",
    as_json: JsonOption = False,
) -> None:
    """Correctness by patient subgroup: per model, pairwise χ² tests, Bonferroni-adjusted (Appendix E)."""
    from bedside.tasks.instruct import subgroups
    from bedside.tasks.instruct.ehr import load_ehr
    from bedside.tasks.instruct.task import DEMO_RECORDS

    if attribute not in subgroups.ATTRIBUTES:
        raise fail(ValueError(f"--attribute must be one of {', '.join(subgroups.ATTRIBUTES)}, not {attribute!r}"))
    try:
        _, chosen = _labels(_or_demo(labels), evaluator, False, column, quoting)
        cases = {i.id: i for i in _instructions(instructions, instruction_column, quoting)}
        groups = {
            item: subgroups.demographics(load_ehr(cases[item], str(records or DEMO_RECORDS)))[attribute]
            for item in {x.instruction_id for x in chosen}
            if item in cases
        }
        tests = subgroups.audit(chosen, groups)
    except (ValueError, LookupError, OSError) as exc:
        raise fail(exc) from None
    if as_json:
        typer.echo(json.dumps({"tests": [dataclasses.asdict(t) for t in tests], "note": subgroups.DEPENDENCE_NOTE}))
        return
    _print_table(
        f"Correct by {attribute}: pairwise χ², Bonferroni within each model",
        ["model", "a vs b", "n", "correct", "χ²", "p", "p (Bonferroni)", "family"],
        [
            [
                t.model,
                f"{t.a} vs {t.b}",
                f"{t.n_a}/{t.n_b}",
                f"{_fmt(t.correct_a)}/{_fmt(t.correct_b)}",
                _fmt(t.chi2, 2),
                _fmt(t.p_value),
                _fmt(t.p_bonferroni),
                str(t.family),
            ]
            for t in tests
        ],
        caption=subgroups.DEPENDENCE_NOTE,
    )


@instruct_app.command("agreement")
def agreement_command(
    labels: LabelsArgument = None,
    instructions: InstructionsOption = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            help="Metrics to rank responses with (repeatable) [default: meteor, google_bleu, rougeL, chrf++, bleu].",
        ),
    ] = None,
    evaluator: EvaluatorOption = "Annotator_1",
    exclude_errors: ExcludeOption = False,
    comet: Annotated[
        Path | None, typer.Option(help="A local COMET checkpoint (needs the comet extra); absent without one.")
    ] = None,
    bleurt: Annotated[
        Path | None, typer.Option(help="A local BLEURT checkpoint folder (bleurt extra); absent without one.")
    ] = None,
    lens: Annotated[
        Path | None,
        typer.Option(help="A local LENS .ckpt (lens extra); its complex input is the BM25 source. Absent without."),
    ] = None,
    unieval: Annotated[
        Path | None,
        typer.Option(help="A local UniEval T5 folder (unieval extra): 4 dimensions and overall; absent without."),
    ] = None,
    bertscore_model: Annotated[
        Path | None,
        typer.Option(help="A local model folder for BERTScore proper (bertscore extra); absent without one."),
    ] = None,
    bertscore_layer: Annotated[
        int, typer.Option(help="BERTScore's layer (bert-score's default for roberta-large is 17).")
    ] = 17,
    records: Annotated[
        Path | None,
        typer.Option("--records", "-r", help="Records, for the BM25 source of COMET/LENS/UniEval [default: demo]"),
    ] = None,
    compare: Annotated[
        list[str] | None,
        typer.Option(
            "--compare",
            help="A:B: compare two metric rows' τ (paired bootstrap over instructions, and the paper's Fisher z); "
            "repeatable [default: the two best metrics, as the paper compared COMET with BERTScore].",
        ),
    ] = None,
    column: LabelColumnOption = None,
    instruction_column: InstructionColumnOption = None,
    quoting: QuotingOption = "csv",
    as_json: JsonOption = False,
) -> None:
    """Table 4 shape: per metric, the mean per-instruction Kendall τ-b with the clinicians' ranking (bootstrap
    95% CI), the inter-rater row, each metric's win rates beside the clinicians' (learned metrics too, absent
    with the reason without a checkpoint), and metric comparisons."""
    from bedside.metrics import MetricUnavailableError
    from bedside.runs.scorers import GENERIC, unavailable
    from bedside.runs.task import Output, Sample
    from bedside.tasks.instruct import agreement, evaluation

    names = metric or ["meteor", "google_bleu", "rougeL", "chrf++", "bleu"]
    unknown = [m for m in names if m not in GENERIC]
    if unknown:
        raise fail(ValueError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(sorted(GENERIC))}"))
    try:
        every, chosen = _labels(_or_demo(labels), evaluator, exclude_errors, column, quoting)
        cases = {i.id: i for i in _instructions(instructions, instruction_column, quoting)}
        rows = []
        win_rates = {"clinicians": {r.model: r.win_rate for r in evaluation.table3(chosen).rows}}
        absent: list[str] = []
        for name in names:
            scorer = GENERIC[name]
            if reason := unavailable(name):
                absent.append(f"{name}: {reason}")  # absent, never zero: METEOR without WordNet, say
                continue

            def score(text: str, refs: list[str], scorer: Any = scorer) -> float:
                value = scorer(Sample(id="x", inputs={}, references=refs), Output(text=text))
                return float("nan") if value is None else float(value)

            try:
                scores = agreement.metric_scores(chosen, cases, score)
            except MetricUnavailableError as exc:
                absent.append(f"{name}: {exc}")
                continue
            rows.append(agreement.versus_clinicians(name, scores, chosen))
        learned = {"comet": comet, "bleurt": bleurt, "lens": lens, "unieval": unieval, "bertscore": bertscore_model}
        if any(learned.values()):
            from bedside.tasks.instruct.task import DEMO_RECORDS
            from bedside.text.tokens import get_tokenizer

            snippets: dict[str, str] = {}  # built once, shared by the source-augmented metrics
            for kind, checkpoint in learned.items():
                if checkpoint is None:
                    continue
                found = agreement.learned_agreement(
                    kind,
                    checkpoint,
                    chosen,
                    cases,
                    records=str(records or DEMO_RECORDS),
                    tokenizer=get_tokenizer("chars:4"),
                    snippets=snippets,
                    layer=bertscore_layer,
                )
                if isinstance(found, str):
                    absent.append(found)
                else:
                    rows.extend(found)
        win_rates.update({r.name: r.win_rates for r in rows})
        rows.append(agreement.inter_rater(every))
        comparisons = _comparisons(rows, compare)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "agreement": [dataclasses.asdict(r) for r in rows],
                    "win_rates": win_rates,
                    "comparisons": [dataclasses.asdict(c) for c in comparisons],
                    "absent": absent,
                },
                indent=2,
            )
        )
        return
    _print_table(
        "Metrics vs clinicians: mean per-instruction Kendall τ-b",
        ["metric", "τ", "95% CI", "n", "undefined"],
        [[r.name, _fmt(r.mean, 2), f"{_fmt(r.low, 2)}-{_fmt(r.high, 2)}", str(r.n), str(r.undefined)] for r in rows],
        caption="CI: seeded percentile bootstrap over instructions; undefined: a constant ranking (left out)"
        + (f". Absent (not zero): {'; '.join(absent)}" if absent else ""),
    )
    models = sorted(win_rates["clinicians"])
    _print_table(
        "Win rates by ranking source (ties excluded)",
        ["source", *models],
        [[source, *(_fmt(rates.get(m)) for m in models)] for source, rates in win_rates.items()],
        caption=f"Absent (not zero): {'; '.join(absent)}" if absent else "",
    )
    if comparisons:
        _print_table(
            "Metric comparisons: τ(B) − τ(A)",
            ["A", "B", "n", "B − A", "95% CI", "p (paired bootstrap)", "Fisher z", "p (Fisher z)"],
            [
                [
                    c.a,
                    c.b,
                    str(c.paired.n),
                    f"{c.paired.difference:+.3f}",
                    f"[{c.paired.low:+.3f}, {c.paired.high:+.3f}]",
                    f"{c.paired.p_value:.3g}",
                    _fmt(c.fisher.statistic, 2) if c.fisher else "-",
                    f"{c.fisher.p_value:.3g}" if c.fisher else "-",
                ]
                for c in comparisons
            ],
            caption="Paired bootstrap over the instructions both metrics define (the sound test: the τ are on the "
            "same items). Fisher z treats the two mean τ as independent correlations, as the paper's Appendix K "
            "did; shown for comparison only, and only with more than 3 instructions per metric.",
        )


def _comparisons(rows: list[Any], wanted: list[str] | None) -> list[Any]:
    """``--compare A:B`` pairs (default: the two best metrics) through :func:`.agreement.compare`."""
    from bedside.tasks.instruct import agreement

    by_name = {r.name: r for r in rows}
    pairs = []
    for value in wanted or []:
        a, sep, b = value.partition(":")
        if not sep or not a or not b:
            raise ValueError(f"--compare {value!r}: expected METRIC_A:METRIC_B")
        missing = [m for m in (a, b) if m not in by_name]
        if missing:
            raise ValueError(f"--compare {value!r}: no row named {', '.join(missing)}; rows: {', '.join(by_name)}")
        pairs.append((a, b))
    if wanted is None:
        pairs = agreement.default_comparison(rows)
    return [agreement.compare(by_name[a], by_name[b]) for a, b in pairs]


@instruct_app.command("judge")
def judge_command(
    labels: LabelsArgument = None,
    instructions: InstructionsOption = None,
    records: Annotated[Path | None, typer.Option("--records", "-r", help="Records [default: the demo cohort].")] = None,
    model: Annotated[str, typer.Option("--model", "-m", help="PROVIDER/MODEL[@BASE_URL]")] = "embedded/smollm2-135m",
    tokenizer: Annotated[str, typer.Option(help="Tokenizer for cutting the record shown to the judge.")] = "embedded",
    record_tokens: Annotated[int, typer.Option(help="Most recent record tokens shown to the judge.")] = 1024,
    limit: Annotated[int, typer.Option(min=0, help="Judge the first N instructions (0 = all).")] = 0,
    max_tokens: Annotated[int, typer.Option(min=1, help="Most tokens per judge answer.")] = 400,
    evaluator: EvaluatorOption = "Annotator_1",
    cache: Annotated[Path | None, typer.Option("--cache", help="SQLite response cache.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")] = False,
    column: LabelColumnOption = None,
    instruction_column: InstructionColumnOption = None,
    quoting: QuotingOption = "csv",
    as_json: JsonOption = False,
    api_key_env: ApiKeyEnvOption = None,
) -> None:
    """An LLM judge's correctness (rubric medalign_correctness) and ranking of the labelled responses, validated
    against the clinicians: Cohen's κ and agreement on correctness, mean τ-b on ranks."""
    from bedside.llm import GenerationSettings, default_cache_path, get_model
    from bedside.tasks.instruct.judging import judge_labels, validate
    from bedside.tasks.instruct.task import DEMO_RECORDS
    from bedside.text.tokens import get_tokenizer

    try:
        _, chosen = _labels(_or_demo(labels), evaluator, False, column, quoting)
        cases = {i.id: i for i in _instructions(instructions, instruction_column, quoting)}
        counter = get_tokenizer(tokenizer)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    wanted = sorted({x.instruction_id for x in chosen})
    if limit > 0:
        wanted = wanted[:limit]

    async def run() -> tuple[list[Any], dict[str, str]]:
        cache_path = None if no_cache else cache or default_cache_path()
        async with get_model(model, role="judge", cache=cache_path, api_key_env=api_key_env) as llm:
            return await judge_labels(
                llm,
                [x for x in chosen if x.instruction_id in wanted],
                cases,
                records=str(records or DEMO_RECORDS),
                tokenizer=counter,
                record_tokens=record_tokens,
                settings=GenerationSettings(max_tokens=max_tokens, temperature=0.0),
                on_done=lambda item, error: err.print(f"{item}: {'judged' if error is None else error}"),
            )

    try:
        judged, failures = asyncio.run(run())
        result = validate(judged, chosen) if judged else None
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    if as_json:
        typer.echo(
            json.dumps({"validation": dataclasses.asdict(result) if result else None, "failures": failures}, indent=2)
        )
        return
    if result is None:
        raise fail(ValueError(f"the judge gave no usable answer on {len(wanted)} instruction(s)"))
    ranking = result.ranking
    out.print(
        f"LLM judge vs clinicians on {result.n} responses: correctness κ {_fmt(result.kappa, 2)}, agreement "
        f"{_fmt(result.agreement, 2)}; ranks τ-b {_fmt(ranking.mean if ranking else None, 2)} "
        f"(n = {ranking.n if ranking else 0}); {len(failures)} instruction(s) failed",
        highlight=False,
    )
