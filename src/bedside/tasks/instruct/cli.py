"""``bedside instruct``: the taxonomy, instruction files, instruction-record matching, and the analyses of
clinician labels (Table 3 and breakdowns, metrics against clinicians, LLM judges against clinicians)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from bedside.cli.app import ApiKeyEnvOption
from bedside.console import data_table, err, fail, out, show_table
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


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or value != value else f"{value:.{digits}f}"


def _print_table(title: str, columns: list[str], rows: list[list[str]], caption: str = "") -> None:
    show_table(data_table(title, columns, rows, caption))


def _instructions(path: Path | None) -> list[Any]:
    from bedside.tasks.instruct.readers import read_instructions
    from bedside.tasks.instruct.task import SYNTHETIC_INSTRUCTIONS

    return read_instructions(path or SYNTHETIC_INSTRUCTIONS)


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
def cases_command(instructions: InstructionsOption = None, as_json: JsonOption = False) -> None:
    """Read and check an instruction file; counts by category, general vs specific, references, records."""
    from collections import Counter

    try:
        loaded = _instructions(instructions)
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
    threshold: Annotated[float, typer.Option(help="Remove when ROUGE-L with a kept instruction exceeds this.")] = 0.7,
    as_json: JsonOption = False,
) -> None:
    """Remove near-duplicate instructions (ROUGE-L > 0.7 with one kept earlier in file order), as MedAlign did."""
    from bedside.tasks.instruct.dedup import deduplicate

    if output.exists():
        raise fail(ValueError(f"{output} exists; choose another --output (nothing is overwritten)"))
    try:
        loaded = _instructions(instructions)
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
    k: Annotated[int, typer.Option("-k", help="Candidates kept per instruction.")] = 5,
    labels: Annotated[
        Path | None, typer.Option(help="Relevance labels (.csv ehr-relevance-labels layout, or .jsonl).")
    ] = None,
    random_baseline: Annotated[bool, typer.Option("--random", help="Uniform random candidates instead.")] = False,
    seed: Annotated[int, typer.Option(help="Seed of the random baseline.")] = 0,
    view: Annotated[str, typer.Option(help="Record text indexed: paper (raw XML where present) or timeline.")] = (
        "paper"
    ),
    as_json: JsonOption = False,
) -> None:
    """Rank records per general instruction with Okapi BM25 (query: instruction + characteristics + context);
    with --labels, Success@K and MRR@K (unreviewed candidates listed as such)."""
    from bedside.tasks.instruct import matching
    from bedside.tasks.instruct.readers import read_relevance

    try:
        loaded = _instructions(instructions)
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


def _labels(path: Path, evaluator: str, exclude_errors: bool) -> tuple[list[Any], list[Any]]:
    from bedside.tasks.instruct.evaluation import without_provider_errors
    from bedside.tasks.instruct.labels import primary_labels
    from bedside.tasks.instruct.readers import read_labels_jsonl, read_release_reviewed

    every = read_labels_jsonl(path) if path.suffix.lower() == ".jsonl" else read_release_reviewed(path)
    chosen = primary_labels(every, evaluator)
    return every, (without_provider_errors(chosen) if exclude_errors else chosen)


LabelsArgument = Annotated[
    Path | None, typer.Argument(help="Clinician labels (.jsonl, or the release's reviewed .tsv) [default: synthetic]")
]
EvaluatorOption = Annotated[str, typer.Option(help="The evaluator whose labels enter the main tables.")]
ExcludeOption = Annotated[
    bool, typer.Option("--exclude-provider-errors", help="Only instructions where no response is an endpoint error.")
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
    as_json: JsonOption = False,
) -> None:
    """Table 3 (correct %, win rate with ties excluded, mean rank), correctness by category, subcategory and
    submitter specialty, point-biserial of correctness with rank, easy and hard instructions, correctness and
    rank by record-length quartile, response lengths."""
    from bedside.tasks.instruct import evaluation
    from bedside.tasks.instruct.ehr import RecordNotFoundError, load_ehr
    from bedside.tasks.instruct.task import DEMO_RECORDS, SYNTHETIC_LABELS
    from bedside.text.tokens import get_tokenizer

    try:
        _, chosen = _labels(labels or SYNTHETIC_LABELS, evaluator, exclude_errors)
        cases = {i.id: i for i in _instructions(instructions)}
        table = evaluation.table3(chosen)
        by_category = evaluation.correctness_by(chosen, cases, lambda i: i.category, name="category")
        by_sub = evaluation.correctness_by(chosen, cases, lambda i: i.subcategory, name="subcategory")
        by_specialty = evaluation.correctness_by(
            chosen, cases, lambda i: i.submitter_specialty, name="submitter specialty"
        )
        correlation = evaluation.rank_correctness_correlation(chosen)
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


@instruct_app.command("subgroups")
def subgroups_command(
    labels: LabelsArgument = None,
    instructions: InstructionsOption = None,
    records: Annotated[Path | None, typer.Option("--records", "-r", help="Records [default: the demo cohort].")] = None,
    attribute: Annotated[str, typer.Option(help="sex, race, ethnicity or age (at the record's last event).")] = "sex",
    evaluator: EvaluatorOption = "Annotator_1",
    as_json: JsonOption = False,
) -> None:
    """Correctness by patient subgroup: per model, pairwise χ² tests, Bonferroni-adjusted (Appendix E)."""
    from bedside.tasks.instruct import subgroups
    from bedside.tasks.instruct.ehr import load_ehr
    from bedside.tasks.instruct.task import DEMO_RECORDS, SYNTHETIC_LABELS

    if attribute not in subgroups.ATTRIBUTES:
        raise fail(ValueError(f"--attribute must be one of {', '.join(subgroups.ATTRIBUTES)}, not {attribute!r}"))
    try:
        _, chosen = _labels(labels or SYNTHETIC_LABELS, evaluator, False)
        cases = {i.id: i for i in _instructions(instructions)}
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
        list[str] | None, typer.Option("--metric", help="Metrics to rank responses with (repeatable).")
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
    as_json: JsonOption = False,
) -> None:
    """Table 4 shape: per metric, the mean per-instruction Kendall τ-b with the clinicians' ranking (bootstrap
    95% CI), the inter-rater row, and each metric's win rates beside the clinicians'."""
    from bedside.runs.scorers import GENERIC
    from bedside.runs.task import Output, Sample
    from bedside.tasks.instruct import agreement, evaluation
    from bedside.tasks.instruct.task import SYNTHETIC_LABELS

    names = metric or ["google_bleu", "rougeL", "chrf++", "bleu"]
    unknown = [m for m in names if m not in GENERIC]
    if unknown:
        raise fail(ValueError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(sorted(GENERIC))}"))
    try:
        every, chosen = _labels(labels or SYNTHETIC_LABELS, evaluator, exclude_errors)
        cases = {i.id: i for i in _instructions(instructions)}
        rows = []
        win_rates = {"clinicians": {r.model: r.win_rate for r in evaluation.table3(chosen).rows}}
        for name in names:
            scorer = GENERIC[name]

            def score(text: str, refs: list[str], scorer: Any = scorer) -> float:
                value = scorer(Sample(id="x", inputs={}, references=refs), Output(text=text))
                return float("nan") if value is None else float(value)

            scores = agreement.metric_scores(chosen, cases, score)
            rows.append(agreement.versus_clinicians(name, scores, chosen))
            win_rates[name] = agreement.metric_win_rates(scores)
        absent: list[str] = []
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
        rows.append(agreement.inter_rater(every))
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    if as_json:
        typer.echo(
            json.dumps(
                {"agreement": [dataclasses.asdict(r) for r in rows], "win_rates": win_rates, "absent": absent},
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
    )


@instruct_app.command("judge")
def judge_command(
    labels: LabelsArgument = None,
    instructions: InstructionsOption = None,
    records: Annotated[Path | None, typer.Option("--records", "-r", help="Records [default: the demo cohort].")] = None,
    model: Annotated[str, typer.Option("--model", "-m", help="PROVIDER/MODEL[@BASE_URL]")] = "embedded/smollm2-135m",
    tokenizer: Annotated[str, typer.Option(help="Tokenizer for cutting the record shown to the judge.")] = "embedded",
    record_tokens: Annotated[int, typer.Option(help="Most recent record tokens shown to the judge.")] = 1024,
    limit: Annotated[int, typer.Option(help="Judge the first N instructions (0 = all).")] = 0,
    max_tokens: Annotated[int, typer.Option(help="Most tokens per judge answer.")] = 400,
    evaluator: EvaluatorOption = "Annotator_1",
    cache: Annotated[Path | None, typer.Option("--cache", help="SQLite response cache.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")] = False,
    as_json: JsonOption = False,
    api_key_env: ApiKeyEnvOption = None,
) -> None:
    """An LLM judge's correctness (rubric medalign_correctness) and ranking of the labelled responses, validated
    against the clinicians: Cohen's κ and agreement on correctness, mean τ-b on ranks."""
    from bedside.llm import GenerationSettings, default_cache_path, get_model
    from bedside.tasks.instruct.judging import judge_labels, validate
    from bedside.tasks.instruct.task import DEMO_RECORDS, SYNTHETIC_LABELS
    from bedside.text.tokens import get_tokenizer

    try:
        _, chosen = _labels(labels or SYNTHETIC_LABELS, evaluator, False)
        cases = {i.id: i for i in _instructions(instructions)}
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
