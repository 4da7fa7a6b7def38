"""``bedside drafting``: EditJudge one pair or many, validate a matcher, evaluate the theme classifier."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bedside.cli.app import ApiKeyEnvOption
from bedside.console import Steps, column_map, err, fail, out, show_table
from bedside.inputs import read_text
from bedside.tasks.drafting.editjudge import EditJudgement, Matcher, edit_judge, summarise

if TYPE_CHECKING:
    from bedside.judges.verifier import MeaningVerifier, VerifyScope
    from bedside.tasks.drafting.guard import GuardEvaluation, GuardPair, GuardSet, MatchRates

drafting_app = typer.Typer(
    help="Portal reply drafting: EditJudge (content-level Edit-F1), matcher validation, theme classifier.",
    no_args_is_help=True,
)

MatcherOption = Annotated[
    str, typer.Option("--matcher", help="embedding (offline), lexical, trained (offline), or llm (needs -m).")
]
ModelOption = Annotated[
    str | None, typer.Option("--model", "-m", help="PROVIDER/MODEL[@BASE_URL] for the llm matcher.")
]
ThresholdOption = Annotated[
    float | None,
    typer.Option(
        min=0.0, max=1.0, help="Similarity threshold of the embedding/lexical matcher, 0-1 (default: calibrated)."
    ),
]
AnnotationsOption = Annotated[
    Path | None,
    typer.Option(help="JSONL match annotations (id, sentence, draft, gold span or null); default: bedside's."),
]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")]
GuardOption = Annotated[
    str,
    typer.Option(
        "--guard",
        help="Clinical-safety guard: reject (conflicting action/drug/dose/negation/side/time is NO MATCH), "
        "flag (keep the match, flagged) or off.",
    ),
]


_FILE_NAME = re.compile(r"^\S+\.(?:txt|md|text|json|jsonl|csv|tsv|html?)$", re.IGNORECASE)
"""A value with no space that ends like a file name ("reply.txt"): meant as a file, never as the text to judge."""


def _text(value: str) -> str:
    """A file's contents when ``value`` names an existing file, else ``value`` itself; a value that reads as a
    file name but names no file is an error (a mistyped "rpely.txt" was judged as the reply's text, Edit-F1 0)."""
    path = Path(value)
    try:
        if len(value) < 4096 and path.is_file():
            text = read_text(path)
            if not text.strip():
                raise ValueError(f"{value}: the file is empty (nothing to judge: precision or recall would be 0/0)")
            return text
        if len(value) < 4096 and path.is_dir():
            raise ValueError(f"{value}: a folder, not a file (give a file, or the text itself)")
    except OSError:
        pass
    if _FILE_NAME.match(value.strip()):
        raise ValueError(f"{value}: no such file (give an existing file, or the text itself)")
    return value


@asynccontextmanager
async def _matcher(
    kind: str,
    model: str | None,
    threshold: float | None,
    no_cache: bool,
    guard: str = "reject",
    template: str | None = None,
    api_key_env: str | None = None,
) -> AsyncIterator[Matcher]:
    from bedside.llm import GenerationSettings, default_cache_path, get_model
    from bedside.tasks.drafting.matcher_kinds import make_matcher

    if kind != "llm":
        yield make_matcher(kind, threshold=threshold, guard=guard)  # type: ignore[arg-type]
        return
    if not model:
        raise ValueError("--matcher llm needs a model: -m PROVIDER/MODEL")
    settings = GenerationSettings(max_tokens=200, temperature=0.0, seed=0)
    cache = None if no_cache else default_cache_path()
    async with get_model(model, role="judge", cache=cache, api_key_env=api_key_env) as llm:

        async def generate(chat: Any) -> Any:
            return await llm.generate(chat, settings)

        yield make_matcher("llm", generate, guard=guard, template=template)  # type: ignore[arg-type]


def print_judgement(judgement: EditJudgement, console: Console = out) -> None:
    table = Table(title=f"Reference sentences ({judgement.matcher} matcher)", show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("reference sentence")
    table.add_column("decision")
    table.add_column("matching draft content")
    for number, decision in enumerate(judgement.decisions, start=1):
        kind = "EM" if decision.matched else "EA"
        if decision.failure:
            kind += f" (matcher failed: {decision.failure})"
        elif decision.conflicts:
            kind += (" (flagged: " if decision.matched else " (guard: ") + "; ".join(decision.conflicts) + ")"
        elif decision.uncertain:
            kind += f" (guard uncertain: {decision.uncertain})"
        elif decision.flagged:
            kind += " (flagged: aligned)" if decision.matched else " (flagged: unreadable answer)"
        table.add_row(str(number), escape(decision.sentence), kind, escape(decision.span or "NO MATCH"))
    show_table(table, console)
    if judgement.remainder:
        console.print("[bold]Left in the draft (expected deletions):[/]")
        for sentence in judgement.remainder:
            console.print(f"  ED  {escape(sentence)}", highlight=False)
    c = judgement.counts
    if not judgement.judged:
        console.print(
            f"not judged: all {judgement.failures} matcher answers could not be used; precision, recall and "
            "Edit-F1 absent",
            highlight=False,
        )
        return
    console.print(
        f"EM {c.em}  EA {c.ea}  ED {c.ed}   precision {c.precision:.3f}  recall {c.recall:.3f}  Edit-F1 {c.f1:.3f}",
        highlight=False,
    )
    if judgement.failures:
        console.print(
            f"matcher failures: {judgement.failures} (answers that could not be used, counted as NO MATCH)",
            highlight=False,
        )
    kept = sum(1 for d in judgement.decisions if d.matched and d.conflicts)
    if kept:
        console.print(
            f"guard conflicts kept: {kept} of the {c.em} matches conflict with their reference sentence (--guard "
            "flag counts them as matches; --guard reject, the default, would not)",
            highlight=False,
        )


@drafting_app.command("editjudge")
def editjudge_command(
    reference: Annotated[str | None, typer.Option(help="The clinician's reply: a file or the text.")] = None,
    draft: Annotated[str | None, typer.Option(help="The draft: a file or the text.")] = None,
    pairs: Annotated[
        Path | None, typer.Option(help="JSONL of pairs (fields id, draft, reference) to score instead of one pair.")
    ] = None,
    matcher: MatcherOption = "embedding",
    model: ModelOption = None,
    threshold: ThresholdOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (one object per pair with --pairs).")] = False,
    no_cache: NoCacheOption = False,
    guard: GuardOption = "reject",
    api_key_env: ApiKeyEnvOption = None,
) -> None:
    """Content-level Edit-F1 (Algorithm 1): per-sentence decisions, EM/EA/ED, precision, recall, Edit-F1."""
    from bedside.tasks.drafting.cases import EditPair, read_pairs

    if pairs is None and (reference is None or draft is None):
        raise fail(ValueError("give --reference and --draft, or --pairs FILE.jsonl"))
    for option, given in (("--reference", reference), ("--draft", draft)):
        if pairs is None and given is not None and not given.strip():
            raise fail(ValueError(f"{option} is blank: give the text, or a file holding it"))  # as --pairs refuses
    try:
        items = (
            read_pairs(pairs)
            if pairs
            else [EditPair(id="pair", draft=_text(draft or ""), reference=_text(reference or ""))]
        )
    except (ValueError, OSError) as exc:
        raise fail(exc) from None

    async def run() -> list[EditJudgement]:
        async with _matcher(matcher, model, threshold, no_cache, guard, api_key_env=api_key_env) as chosen:
            return [await edit_judge(p.reference, p.draft, chosen) for p in items]

    try:
        judgements = asyncio.run(run())
    except ValueError as exc:
        raise fail(exc) from None
    if as_json:
        if pairs is None:
            out.print_json(json.dumps(judgements[0].to_dict()))
        else:
            for item, judgement in zip(items, judgements, strict=True):
                print(json.dumps({"id": item.id, **judgement.to_dict()}, ensure_ascii=False))
        return
    if pairs is None:
        print_judgement(judgements[0])
        return
    table = Table(title=f"{len(items)} pairs ({matcher} matcher)")
    for column in ("id", "EM", "EA", "ED", "precision", "recall", "Edit-F1", "matcher failed"):
        table.add_column(column, justify="left" if column == "id" else "right")
    for item, judgement in zip(items, judgements, strict=True):
        c = judgement.counts
        table.add_row(
            item.id,
            str(c.em),
            str(c.ea),
            str(c.ed),
            *((f"{c.precision:.3f}", f"{c.recall:.3f}", f"{c.f1:.3f}") if judgement.judged else ("-", "-", "-")),
            str(judgement.failures),
        )
    show_table(table)
    summary = summarise(judgements)
    if not summary.counts:
        out.print("micro and macro: absent (no pair had a usable matcher answer)", highlight=False)
        return
    unjudged = len(judgements) - len(summary.counts)
    if unjudged:
        out.print(f"{unjudged} pair(s) with no usable matcher answer left out of the averages", highlight=False)
    for name, averages in (("micro", summary.micro), ("macro", summary.macro)):
        out.print(
            f"{name}: precision {averages.precision:.3f}  recall {averages.recall:.3f}  Edit-F1 {averages.f1:.3f}",
            highlight=False,
        )


def _measure(value: float | None) -> str:
    return "absent" if value is None else f"{value:.3f}"


@drafting_app.command("calibrate")
def calibrate_command(
    annotations: AnnotationsOption = None,
    matchers: Annotated[
        list[str] | None,
        typer.Option(
            "--matcher", help="Offline matchers to compare (repeatable) [default: embedding, lexical, trained]."
        ),
    ] = None,
    models: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help="An LLM judge (repeatable): a base model for 0-shot/few-shot, or your fine-tuned judge's endpoint.",
        ),
    ] = None,
    templates: Annotated[
        list[str] | None,
        typer.Option(
            "--template",
            help="Judge prompt templates to try with each model (repeatable) [default: 0-shot and 5-shot].",
        ),
    ] = None,
    finetuned: Annotated[
        list[str] | None,
        typer.Option(
            "--finetuned",
            help="A fine-tuned LLM judge (repeatable), asked with the 0-shot template it was trained on (export-judge"
            "'s default), e.g. transformers/OUTPUT/merged after `bedside train sft --merge`.",
        ),
    ] = None,
    guard: GuardOption = "reject",
    uncertain: Annotated[
        str,
        typer.Option(help="A match the guard cannot vouch for: keep (marked uncertain) or reject, in every judge."),
    ] = "keep",
    no_cache: NoCacheOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    api_key_env: ApiKeyEnvOption = None,
) -> None:
    """The judge comparison: agreement, non-match agreement, match agreement, match overlap for every judge."""
    from bedside.llm import GenerationSettings, default_cache_path, get_model
    from bedside.tasks.drafting.guard import UNCERTAIN_POLICIES
    from bedside.tasks.drafting.matcher_kinds import compare_judges, make_matcher
    from bedside.tasks.drafting.matchers import FEWSHOT_TEMPLATE, MATCH_TEMPLATE
    from bedside.tasks.drafting.validation import read_annotations

    if uncertain not in UNCERTAIN_POLICIES:
        raise fail(ValueError(f"--uncertain {uncertain!r}: choose one of {', '.join(UNCERTAIN_POLICIES)}"))
    try:
        loaded = read_annotations(annotations)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    offline = matchers if matchers is not None else ([] if models or finetuned else ["embedding", "lexical", "trained"])
    chosen_templates = templates or [MATCH_TEMPLATE, FEWSHOT_TEMPLATE]
    settings = GenerationSettings(max_tokens=200, temperature=0.0, seed=0)
    legend: list[str] = []
    shots = {MATCH_TEMPLATE: "0-shot", FEWSHOT_TEMPLATE: "5-shot"}

    async def run() -> list[Any]:
        judges: list[tuple[str, Matcher]] = []
        for kind in offline:
            if kind == "llm":
                raise ValueError("give LLM judges with -m MODEL, not --matcher llm")
            judges.append((kind, make_matcher(kind, guard=guard, uncertain=uncertain)))  # type: ignore[arg-type]
        async with AsyncExitStack() as stack:
            # A base model is tried with every template; a fine-tuned judge only with the prompt it learned (the
            # paper's fine-tuned judge is asked 0-shot: a few-shot prompt is not what it was trained on).
            llm_judges = [(f"llm-{i}", name, chosen_templates) for i, name in enumerate(models or [], start=1)]
            llm_judges += [(f"ft-{i}", name, [MATCH_TEMPLATE]) for i, name in enumerate(finetuned or [], start=1)]
            for label, name, judge_templates in llm_judges:
                llm = await stack.enter_async_context(
                    get_model(
                        name, role="judge", cache=None if no_cache else default_cache_path(), api_key_env=api_key_env
                    )
                )

                async def generate(chat: Any, llm: Any = llm) -> Any:
                    return await llm.generate(chat, settings)

                legend.append(f"{label} = {name}")
                for template in judge_templates:
                    judge = make_matcher(
                        "llm",
                        generate,
                        guard=guard,  # type: ignore[arg-type]
                        template=template,
                        uncertain=uncertain,
                    )
                    judges.append((label, judge))
            err.print(f"judging {len(loaded)} annotations with {len(judges)} judges ...")
            return await compare_judges(judges, loaded)

    try:
        rows = asyncio.run(run())
    except ValueError as exc:
        raise fail(exc) from None
    if as_json:
        data = [
            {
                "judge": row.name,
                "kind": shots.get(row.kind, row.kind),
                **row.agreement.as_dict(),
                "failures": row.agreement.failures,
                "threshold": row.threshold,
                "held_out_agreement": None if row.held_out is None else row.held_out.agreement,
            }
            for row in rows
        ]
        typer.echo(json.dumps({"annotations": len(loaded), "guard": guard, "judges": data, "legend": legend}, indent=2))
        return
    table = Table(title=f"Judge comparison on {len(loaded)} annotations (guard: {guard})")
    columns = ("judge", "kind", "agree", "non-match", "match", "overlap", "failed", "threshold", "LODO agree")
    for column in columns:
        table.add_column(column, justify="left" if column in ("judge", "kind") else "right")
    for row in rows:
        measures = row.agreement.as_dict()
        table.add_row(
            escape(row.name),
            escape(shots.get(row.kind, Path(row.kind).stem if row.kind not in ("threshold", "trained") else row.kind)),
            *(_measure(measures[k]) for k in ("agreement", "non_match_agreement", "match_agreement", "match_overlap")),
            f"{row.agreement.failures}/{row.agreement.n}",
            "-" if row.threshold is None else f"{row.threshold:.4f}",
            "-" if row.held_out is None else _measure(row.held_out.agreement),
        )
    show_table(table)
    for line in legend:
        out.print(line, highlight=False)
    out.print(
        "failed: answers that could not be used (not in the draft, not a whole unit, empty), left out of every "
        "measure; a measure with no usable answer is 'absent'. "
        "agree: same match/NO MATCH decision as the annotation; non-match: share of annotated NO MATCHes called NO "
        "MATCH; match: share of annotated matches given the exact span; overlap: ... a span overlapping it; LODO "
        "agree: agreement when each draft's annotations are judged by a judge calibrated (or trained) on the other "
        "drafts' only (leave one draft out).",
        highlight=False,
    )
    for row in rows:
        if row.threshold is not None:
            out.print(
                f"best threshold for {row.name}: {row.threshold} "
                "(use --threshold, or options.threshold in a run config)",
                highlight=False,
            )


@drafting_app.command("guard-eval")
def guard_eval_command(
    pairs: Annotated[
        Path | None,
        typer.Option(
            help="JSONL labelled pairs (id, reference, candidate, match, kind, optional category); default: "
            "bedside's own set and every outside-written set (development and held-out), each reported apart."
        ),
    ] = None,
    matcher: Annotated[
        bool,
        typer.Option(
            "--matcher/--no-matcher", help="Also match each pair with the default embedding matcher behind the guard."
        ),
    ] = True,
    uncertain: Annotated[
        str,
        typer.Option(
            help="What the matcher does with a pair the guard cannot vouch for and no verifier decides: keep "
            "(marked uncertain) or reject."
        ),
    ] = "keep",
    verifier: Annotated[
        str | None,
        typer.Option(
            "--verifier",
            "-m",
            help="A model that decides the pairs the guard calls uncertain (same meaning or not): PROVIDER/MODEL"
            "[@BASE_URL], e.g. openai-compatible/NAME@http://127.0.0.1:8000/v1.",
        ),
    ] = None,
    verify_scope: Annotated[
        str,
        typer.Option(
            help="With --verifier: the pairs it decides, those the guard calls uncertain or all (every pair the "
            "guard's rules pass: one call per matched pair).",
        ),
    ] = "uncertain",
    api_key_env: ApiKeyEnvOption = None,
    no_cache: NoCacheOption = False,
    leave_one_kind_out: Annotated[
        bool,
        typer.Option(
            "--leave-one-kind-out",
            help="Also, per conflict kind the pairs are labelled with: the guard without that kind's rules on its "
            "hard negatives (rejected by the other rules, uncertain, passed silently).",
        ),
    ] = False,
    show_held_out_errors: Annotated[
        bool,
        typer.Option(
            "--show-held-out-errors",
            help="Also print the per-kind table and the missed and rejected pairs of the held-out sets (by default "
            "their totals only: a set whose errors are read becomes a development set).",
        ),
    ] = False,
    show_uncertain: Annotated[
        bool,
        typer.Option(
            "--show-uncertain",
            help="Also print the pairs the guard called uncertain and why (those a verifier would be asked), for "
            "every set whose errors are shown.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The clinical-safety guard on labelled pairs: hard negatives rejected, paraphrases kept and pairs it could
    not vouch for (uncertain), per group, with Wilson 95% intervals; and what the default matcher behind the
    guard matches. Each set on its own lines."""
    from bedside.judges.verifier import VERIFY_SCOPES
    from bedside.llm.errors import ModelError
    from bedside.tasks.drafting.guard import UNCERTAIN_POLICIES, builtin_guard_sets, guard_set_from

    if uncertain not in UNCERTAIN_POLICIES:
        raise fail(ValueError(f"--uncertain {uncertain!r}: choose one of {', '.join(UNCERTAIN_POLICIES)}"))
    if verify_scope not in VERIFY_SCOPES:
        raise fail(ValueError(f"--verify-scope {verify_scope!r}: choose one of {', '.join(VERIFY_SCOPES)}"))
    if verify_scope != "uncertain" and verifier is None:
        raise fail(
            ValueError(f"--verify-scope {verify_scope} says which pairs a verifier decides: name one (--verifier)")
        )
    try:
        sets = builtin_guard_sets() if pairs is None else [guard_set_from(pairs)]
    except ValueError as exc:
        raise fail(exc) from None
    try:
        measured, asked = asyncio.run(
            _guard_measures(
                sets, matcher, uncertain, verifier, no_cache, api_key_env, scope=verify_scope, quiet=as_json
            )
        )
    except ModelError as exc:
        raise fail(ValueError(f"the verifier failed: {exc}")) from None
    left_out = {}
    if leave_one_kind_out:
        from bedside.tasks.drafting.guard import leave_one_kind_out as leaving_out_kinds

        left_out = {
            labelled.name: leaving_out_kinds(labelled.pairs)
            for labelled, _, _ in measured
            if show_held_out_errors or not labelled.held_out
        }
    if as_json:
        data = []
        for labelled, result, rates in measured:
            entry = _guard_json(labelled, result, rates, totals_only=labelled.held_out and not show_held_out_errors)
            if labelled.name in left_out:
                entry["leave_one_kind_out"] = [
                    {**dataclasses.asdict(k), "silent": k.silent} for k in left_out[labelled.name]
                ]
            data.append(entry)
        verified = (
            None
            if asked is None
            else {"model": verifier, "scope": verify_scope, "asked": asked[0], "undecided": asked[1]}
        )
        typer.echo(json.dumps({"sets": data, "verifier": verified}, indent=2))
        return
    matcher_name = "default matcher behind the guard" + (" and the verifier" if verifier else "")
    for labelled, result, rates in measured:
        _print_guard_set(
            labelled,
            result,
            rates,
            totals_only=labelled.held_out and not show_held_out_errors,
            matcher=matcher_name,
            show_uncertain=show_uncertain,
        )
        if leave_one_kind_out and not left_out.get(labelled.name):
            from bedside.text.conflicts import CONFLICT_KINDS

            out.print(
                f"{labelled.name}: no hard negative's kind is one of the rules' kinds ({', '.join(CONFLICT_KINDS)}): "
                "nothing to leave out",
                highlight=False,
            )
        if left_out.get(labelled.name):
            table = Table(title=f"{labelled.name}: each kind's rules left out, on that kind's hard negatives")
            for column in ("kind left out", "hard negatives", "rejected by other rules", "uncertain", "silent"):
                table.add_column(column, justify="left" if column == "kind left out" else "right")
            for k in left_out[labelled.name]:
                table.add_row(k.kind, str(k.negatives), str(k.rejected), str(k.uncertain), str(k.silent))
            show_table(table)
    if asked is not None:
        err.print(
            f"verifier {verifier} (scope {verify_scope}): asked about {asked[0]} pair(s), {asked[1]} answered neither "
            "SAME nor DIFFERENT (left uncertain). Its decisions are in the matcher lines; the guard lines are the "
            "rules' alone.",
            highlight=False,
            soft_wrap=True,
        )


async def _guard_measures(
    sets: Sequence[GuardSet],
    matcher: bool,
    uncertain: str,
    verifier: str | None,
    no_cache: bool,
    api_key_env: str | None,
    *,
    scope: VerifyScope = "uncertain",
    quiet: bool = False,
) -> tuple[list[tuple[GuardSet, GuardEvaluation, MatchRates | None]], tuple[int, int] | None]:
    """Each set's guard evaluation, and what the default matcher (behind the guard, with the verifier if one is
    named) matches in it; and, with a verifier, how many pairs it was asked about and left undecided. Progress goes
    to stderr unless ``quiet``: the default sets take minutes."""
    from bedside.tasks.drafting.guard import evaluate_guard, match_rates
    from bedside.tasks.drafting.matchers import EmbeddingMatcher, GuardedMatcher

    async def measure(check: MeaningVerifier | None) -> list[tuple[GuardSet, GuardEvaluation, MatchRates | None]]:
        chosen = GuardedMatcher(EmbeddingMatcher(), uncertain=uncertain, verifier=check)  # type: ignore[arg-type]
        measured = []
        with Steps("guard-eval", len(sets), "sets measured", quiet=quiet) as steps:
            for labelled in sets:
                result = evaluate_guard(labelled.pairs)
                measured.append((labelled, result, await match_rates(labelled.pairs, chosen) if matcher else None))
                steps.advance(labelled.name)
        return measured

    if verifier is None:
        return await measure(None), None
    from bedside.judges.verifier import MeaningVerifier
    from bedside.llm import GenerationSettings, default_cache_path, get_model

    settings = GenerationSettings(max_tokens=8, temperature=0.0, seed=0)
    cache = None if no_cache else default_cache_path()
    async with get_model(verifier, role="judge", cache=cache, api_key_env=api_key_env) as llm:

        async def generate(chat: Any) -> Any:
            return await llm.generate(chat, settings)

        check = MeaningVerifier(generate, scope=scope)
        return await measure(check), (check.asked, check.undecided)


def _guard_json(
    labelled: GuardSet, result: GuardEvaluation, rates: MatchRates | None, *, totals_only: bool = False
) -> dict[str, object]:
    from bedside.stats.proportions import wilson_interval

    entry: dict[str, object] = {
        "name": labelled.name,
        "provenance": labelled.provenance,
        "pairs": len(labelled.pairs),
        "scores": [
            {
                "group": g.group,
                "hard_negatives": g.negatives,
                "rejected": g.rejected,
                "rejection": g.rejection,
                "rejection_ci95": wilson_interval(g.rejected, g.negatives),
                "negatives_uncertain": g.negatives_uncertain,
                "negatives_passed_silently": g.passed_silently,
                "paraphrases": g.paraphrases,
                "kept": g.kept,
                "paraphrase_recall": g.recall,
                "paraphrase_recall_ci95": wilson_interval(g.kept, g.paraphrases),
                "paraphrases_uncertain": g.paraphrases_uncertain,
            }
            for g in [result.total, *([] if totals_only else result.groups)]
        ],
        "errors_shown": not totals_only,
    }
    if not totals_only:
        entry["missed"] = [p.id for p in result.missed]
        entry["rejected_paraphrases"] = {p.id: [str(c) for c in conflicts] for p, conflicts in result.rejected}
        entry["uncertain"] = {p.id: why for p, why in result.uncertain}
    if rates is not None:
        entry["matcher"] = {
            "reversed": rates.reversed,
            "reversed_matched": rates.reversed_matched,
            "reversed_uncertain": rates.reversed_uncertain,
            "paraphrases": rates.paraphrases,
            "paraphrases_matched": rates.paraphrases_matched,
            "paraphrases_uncertain": rates.paraphrases_uncertain,
            "wrong": list(rates.matched_ids),
        }
    return entry


def _print_guard_set(
    labelled: GuardSet,
    result: GuardEvaluation,
    rates: MatchRates | None,
    *,
    totals_only: bool = False,
    matcher: str = "default matcher behind the guard",
    show_uncertain: bool = False,
) -> None:
    from bedside.stats.proportions import share_with_interval

    def share(part: int, whole: int) -> str:
        return f"{part}/{whole} ({part / whole:.2f})" if whole else "-"

    table = Table(title=f"clinical-safety guard, {labelled.name}: {len(labelled.pairs)} pairs ({labelled.provenance})")
    columns = (
        "group",
        "hard negatives rejected",
        "uncertain",
        "passed silently",
        "paraphrases kept",
        "of them uncertain",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "group" else "right")
    for g in [result.total, *([] if totals_only else result.groups)]:
        table.add_row(
            g.group,
            share(g.rejected, g.negatives),
            share(g.negatives_uncertain, g.negatives),
            share(g.passed_silently, g.negatives),  # the errors nobody is told about, per kind
            share(g.kept, g.paraphrases),
            share(g.paraphrases_uncertain, g.paraphrases),
        )
    show_table(table)
    total = result.total
    out.print(
        f"{labelled.name}: hard-negative rejection {share_with_interval(total.rejected, total.negatives)}; "
        f"uncertain {total.negatives_uncertain}, passed silently {total.passed_silently}; "
        f"paraphrase recall {share_with_interval(total.kept, total.paraphrases)} "
        f"({total.paraphrases_uncertain} of them uncertain)",
        highlight=False,
    )
    if rates is not None:
        out.print(
            f"{labelled.name}, {matcher}: reversed pairs matched "
            f"{share_with_interval(rates.reversed_matched, rates.reversed)} "
            f"({rates.reversed_uncertain} uncertain); paraphrases matched "
            f"{share_with_interval(rates.paraphrases_matched, rates.paraphrases)} "
            f"({rates.paraphrases_uncertain} uncertain)",
            highlight=False,
        )
    if totals_only:
        out.print(f"{labelled.name}: a held-out set, totals only (--show-held-out-errors prints its pairs)")
        return
    for pair in result.missed:
        out.print(f"missed ({pair.kind}) {pair.id}: {_pair_text(pair)}", highlight=False)
    for pair, conflicts in result.rejected:
        why = "; ".join(map(str, conflicts))
        out.print(f"rejected paraphrase {pair.id}: {_pair_text(pair)} ({_clipped(why)})", highlight=False)
    if show_uncertain:
        for pair, why in result.uncertain:
            label = "paraphrase" if pair.match else f"reversed, {pair.kind}"
            out.print(f"uncertain ({label}) {pair.id}: {_pair_text(pair)} ({_clipped(why)})", highlight=False)
    if rates is not None:  # the matcher's own errors, beyond the guard's listed above
        by_id = {pair.id: pair for pair in labelled.pairs}
        listed = {pair.id for pair in result.missed} | {pair.id for pair, _ in result.rejected}
        for pair in (by_id[i] for i in rates.matched_ids if i not in listed):
            what = "paraphrase not matched" if pair.match else f"reversed pair matched ({pair.kind})"
            out.print(
                f"{what} by the {matcher.removesuffix(' behind the guard')} {pair.id}: {_pair_text(pair)}",
                highlight=False,
            )


def _clipped(text: str, limit: int = 200) -> str:
    """A long sentence or reason cut for a listing line (a pair of 5,000 characters printed one line that long)."""
    return text if len(text) <= limit else f"{text[: limit - 3]}... ({len(text):,} characters)"


def _pair_text(pair: GuardPair) -> str:
    return f"{_clipped(pair.reference)!r} / {_clipped(pair.candidate)!r}"


@drafting_app.command("themes")
def themes_command(
    sentences: Annotated[
        Path | None, typer.Option(help="JSONL labelled sentences (text, theme); default: bedside's own set.")
    ] = None,
    heldout: Annotated[
        Path | None,
        typer.Option(help="JSONL labelled draft sentences kept out of training; default: bedside's 175."),
    ] = None,
    folds: Annotated[int, typer.Option(min=2, help="Cross-validation folds.")] = 5,
    save: Annotated[Path | None, typer.Option(help="Train on all sentences and save the classifier (.npz).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The offline theme classifier: k-fold F1 on its training set, per-theme precision/recall on held-out drafts."""
    from bedside.tasks.drafting.themes import (
        QUESTION_THEMES,
        THEME_KEYS,
        ThemeClassifier,
        cross_validate,
        per_theme_scores,
        question_precision,
        read_heldout_sentences,
        read_labelled_sentences,
    )

    try:
        loaded = read_labelled_sentences(sentences)
        held = read_heldout_sentences(heldout)
        evaluation = cross_validate(loaded, folds=folds)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    classifier = ThemeClassifier.fit(loaded)
    gold = [s.theme for s in held]
    texts = [s.text for s in held]
    results = {
        "bare model": per_theme_scores(gold, classifier.without_question_rule().predict(texts)),
        "with question rule": per_theme_scores(gold, classifier.predict(texts)),
    }
    if save is not None:
        saved = classifier.save(save)
    if as_json:
        data = {
            "cross_validation": {
                "folds": evaluation.folds,
                "sentences": evaluation.n,
                "per_theme_f1": evaluation.per_theme_f1,
                "macro_f1": evaluation.macro_f1,
                "accuracy": evaluation.accuracy,
            },
            "held_out": {
                name: {
                    "per_theme": {theme: vars(x) for theme, x in scores.items()},
                    "question_precision": question_precision(scores),
                }
                for name, scores in results.items()
            },
            "saved": str(saved) if save is not None else None,
        }
        typer.echo(json.dumps(data, indent=2, default=str))
        return
    table = Table(title=f"Theme classifier, {evaluation.folds}-fold held-out ({evaluation.n} sentences)")
    table.add_column("theme")
    table.add_column("F1", justify="right")
    for theme, f1 in evaluation.per_theme_f1.items():
        table.add_row(theme, f"{f1:.3f}")
    table.add_row("[bold]macro[/]", f"{evaluation.macro_f1:.3f}")
    table.add_row("accuracy", f"{evaluation.accuracy:.3f}")
    show_table(table)
    held_table = Table(title=f"Held-out draft sentences ({len(held)}): precision / recall (predicted, labelled)")
    held_table.add_column("theme")
    for name in results:
        held_table.add_column(name, justify="right")
    seen = results["with question rule"].keys() | results["bare model"].keys()
    for theme in [t for t in THEME_KEYS if t in seen]:
        cells = []
        for scores in results.values():
            x = scores.get(theme)
            cells.append("-" if x is None else f"{x.precision:.2f} / {x.recall:.2f} ({x.predicted}, {x.support})")
        held_table.add_row(theme, *cells)
    held_table.add_row(
        "[bold]question themes: precision[/]", *(f"{question_precision(scores):.3f}" for scores in results.values())
    )
    show_table(held_table)
    out.print(
        f"Question themes ({', '.join(QUESTION_THEMES)}) need a question: the rule keeps them off statements. "
        "Runs use the classifier with the rule.",
        highlight=False,
    )
    if save is not None:
        out.print(f"saved to {saved}")


CasesArgument = Annotated[
    str,
    typer.Option(
        "--cases",
        help="Cases with clinician replies: bedside JSONL, CSV/JSONL table, SyPPM (--cases-format syppm), or 'demo'.",
    ),
]
RecordsOption = Annotated[Path | None, typer.Option(help="Records to render missing chart summaries from.")]
CasesFormatOption = Annotated[
    str,
    typer.Option(
        "--cases-format",
        help="How to read --cases: auto (bedside JSONL, CSV/JSONL table or LiveQA XML, told by the file) or "
        "syppm (the seed paper's SyPPM release; map its columns with --column).",
    ),
]
ColumnOption = Annotated[
    list[str] | None,
    typer.Option(
        "--column",
        help="FIELD=COLUMN: read bedside's FIELD from the file's COLUMN (repeatable; for tables and --cases-format "
        "syppm, whose default column names are bedside's guess).",
    ),
]


@drafting_app.command("export-sft")
def export_sft_command(
    cases: CasesArgument,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the TRL chat JSONL.")],
    records: RecordsOption = None,
    cases_format: CasesFormatOption = "auto",
    column: ColumnOption = None,
) -> None:
    """SFT data: one chat per clinician reply (zero-shot prompt in, the reply as the assistant turn)."""
    from bedside.tasks.drafting.adaptation import sft_records, write_jsonl
    from bedside.tasks.drafting.readers import read_cases

    try:
        loaded = read_cases(cases, column_map(column), records, cases_format)
        chats = sft_records(loaded)
        if not chats:  # nothing written: an empty training file must not pass as an export
            raise ValueError(f"{cases}: no case has a clinician reply, so there is no chat to train on")
        count = write_jsonl(output, chats)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    out.print(f"wrote {count} chats to {output}", highlight=False)


@drafting_app.command("export-judge")
def export_judge_command(
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the TRL chat JSONL.")],
    annotations: AnnotationsOption = None,
    template: Annotated[
        str | None, typer.Option(help="The judge prompt to train with [default: drafting/editjudge_match.j2].")
    ] = None,
    exclude: Annotated[
        Path | None,
        typer.Option(help="Annotations to keep out (e.g. your evaluation set): drafts found there are skipped."),
    ] = None,
) -> None:
    """Judge SFT data: one chat per match annotation (the judge prompt in, the gold span or NO MATCH out)."""
    from bedside.tasks.drafting.adaptation import judge_sft_records, write_jsonl
    from bedside.tasks.drafting.validation import read_annotations

    try:
        loaded = read_annotations(annotations)
        held = {a.draft for a in read_annotations(exclude)} if exclude else set()
        kept = [a for a in loaded if a.draft not in held]
        count = write_jsonl(output, judge_sft_records(kept, template))
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    skipped = f" ({len(loaded) - len(kept)} left out: their drafts are in --exclude)" if held else ""
    out.print(f"wrote {count} judge chats to {output}{skipped}; train with: bedside train sft --data {output}")


@drafting_app.command("split-annotations")
def split_annotations_command(
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for train.jsonl and heldout.jsonl.")],
    annotations: AnnotationsOption = None,
    held_out: Annotated[float, typer.Option(help="Share of the drafts to hold out.")] = 0.2,
    seed: Annotated[int, typer.Option(help="Seed of the draft shuffle.")] = 0,
) -> None:
    """Split annotations by draft into train.jsonl (for export-judge) and heldout.jsonl (for calibrate)."""
    from bedside.tasks.drafting.adaptation import write_jsonl
    from bedside.tasks.drafting.validation import read_annotations, split_by_draft

    try:
        train, held = split_by_draft(read_annotations(annotations), held_out, seed)
        output.mkdir(parents=True, exist_ok=True)
        for name, part in (("train.jsonl", train), ("heldout.jsonl", held)):
            write_jsonl(output / name, (a.model_dump() for a in part))
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    drafts = len({a.draft for a in held})
    out.print(
        f"wrote {len(train)} annotations to {output / 'train.jsonl'} and {len(held)} ({drafts} drafts, seed {seed}) "
        f"to {output / 'heldout.jsonl'}",
        highlight=False,
    )


@drafting_app.command("tadpole")
def tadpole_command(
    cases: CasesArgument,
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for tuples.jsonl and dpo_*.jsonl.")],
    model: Annotated[str, typer.Option("--model", "-m", help="The model to adapt: drafts the base replies.")],
    agent_model: Annotated[
        str | None, typer.Option(help="The enhancement/corruption agents' model [default: --model].")
    ] = None,
    records: RecordsOption = None,
    limit: Annotated[int, typer.Option(min=0, help="Use the first N cases (0 = all).")] = 0,
    max_tokens: Annotated[int, typer.Option(min=1, help="Most tokens per reply.")] = 300,
    concurrency: Annotated[int, typer.Option(min=1, help="Cases worked on at once.")] = 4,
    no_cache: NoCacheOption = False,
    cases_format: CasesFormatOption = "auto",
    column: ColumnOption = None,
    api_key_env: ApiKeyEnvOption = None,
) -> None:
    """TADPOLE preference data: base drafts, per-theme enhanced and corrupted versions, four DPO pair sets."""
    from bedside.llm import GenerationSettings, default_cache_path, get_model
    from bedside.tasks.drafting.adaptation import make_tuples, write_tadpole
    from bedside.tasks.drafting.readers import read_cases

    try:
        loaded = read_cases(cases, column_map(column), records, cases_format)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    loaded = loaded[:limit] if limit > 0 else loaded
    settings = GenerationSettings(max_tokens=max_tokens, temperature=0.0, seed=0)
    cache = None if no_cache else default_cache_path()

    def done(case_id: str, kept: bool) -> None:
        reason = "an agent changed nothing, or both returned the same text"
        err.print(f"case {case_id}: " + ("tuple made" if kept else f"[yellow]dropped[/] ({reason})"))

    async def run() -> tuple[Any, int]:
        async with (
            get_model(model, cache=cache, api_key_env=api_key_env) as drafter,
            get_model(agent_model or model, role="judge", cache=cache, api_key_env=api_key_env) as agent,
        ):

            async def draft(chat: Any) -> str:
                return (await drafter.generate(chat, settings)).text

            async def edit(chat: Any) -> str:
                return (await agent.generate(chat, settings)).text

            return await make_tuples(loaded, draft, edit, concurrency=concurrency, on_done=done)

    try:
        tuples, dropped = asyncio.run(run())
    except ValueError as exc:
        raise fail(exc) from None
    written = write_tadpole(output, tuples)
    out.print(
        f"{len(tuples)} tuples ({dropped} dropped); wrote "
        + ", ".join(f"{name} {count}" for name, count in written.items())
        + f" records under {output}",
        highlight=False,
    )
