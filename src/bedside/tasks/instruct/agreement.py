"""How well automated metrics (and LLM judges) rank responses the way clinicians do (MedAlign Section 6).

For each instruction, a metric scores every model's response against the clinician reference (the primary
annotator's, as the paper's code did); scores become ranks (higher score = better) and Kendall's τ-b is taken
against the clinician's ranking, oriented so that agreement is positive. "Avg. Corr." is the mean over
instructions with a seeded bootstrap 95% CI and its n; instructions where τ is undefined (a constant ranking) are
left out and counted. The inter-rater row is the same statistic between clinicians: per triple-reviewed
instruction, the mean τ over evaluator pairs, then the mean over instructions.

Model-based metrics (COMET, BLEURT, LENS, UniEval, BERTScore proper) run from local checkpoints through
:func:`learned_agreement`; one that cannot run here is reported as absent with its reason, never as zero.

Two metrics are compared with a paired bootstrap over the instructions both define (the sound test: the τ are on
the same items), and with the independent Fisher z the paper reports, labelled as such.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from bedside.records.timeline import timeline_blocks
from bedside.retrieval import OkapiBM25Index
from bedside.stats import (
    PairedDifference,
    TestResult,
    bootstrap_ci,
    fisher_z,
    head_to_head,
    kendall_tau,
    mean_kendall_tau,
    paired_bootstrap,
    ranks_from_scores,
)
from bedside.tasks.instruct.cases import Instruction
from bedside.tasks.instruct.ehr import EHR, load_ehr
from bedside.tasks.instruct.labels import ResponseLabel
from bedside.text.tokens import Tokenizer

Metric = Callable[[str, list[str]], float]


@dataclass(frozen=True)
class Agreement:
    name: str
    mean: float | None
    low: float | None
    high: float | None
    n: int
    undefined: int
    per_instruction: dict[str, float]
    # model -> win rate from this source's rankings, ties left out (Figure 2 right, Table S17); empty for the
    # inter-rater row, which ranks no model.
    win_rates: dict[str, float | None] = field(default_factory=dict)


def _summary(
    name: str,
    per_item: Mapping[str, float | None],
    *,
    seed: int,
    win_rates: dict[str, float | None] | None = None,
) -> Agreement:
    defined = {k: v for k, v in per_item.items() if v is not None}
    rates = dict(win_rates or {})
    if not defined:
        return Agreement(name, None, None, None, 0, len(per_item), {}, rates)
    interval = bootstrap_ci(list(defined.values()), seed=seed)
    return Agreement(
        name, interval.estimate, interval.low, interval.high, len(defined), len(per_item) - len(defined), defined, rates
    )


def clinician_scores(labels: Sequence[ResponseLabel]) -> dict[str, dict[str, float]]:
    """instruction -> model -> −rank, so that higher is better like a metric's score."""
    scores: dict[str, dict[str, float]] = defaultdict(dict)
    for label in labels:
        if label.rank is not None:
            scores[label.instruction_id][label.model] = -label.rank
    return dict(scores)


def metric_scores(
    labels: Sequence[ResponseLabel], instructions: Mapping[str, Instruction], metric: Metric
) -> dict[str, dict[str, float]]:
    """instruction -> model -> the metric's score of the response against the primary reference."""
    scores: dict[str, dict[str, float]] = defaultdict(dict)
    for label in labels:
        instruction = instructions.get(label.instruction_id)
        reference = instruction.primary_reference if instruction else None
        if reference is None:
            continue
        scores[label.instruction_id][label.model] = float(metric(label.response, [reference.text]))
    return dict(scores)


def versus_clinicians(
    name: str, scores: Mapping[str, Mapping[str, float]], labels: Sequence[ResponseLabel], *, seed: int = 0
) -> Agreement:
    result = mean_kendall_tau(scores, clinician_scores(labels))
    return _summary(name, result.per_item, seed=seed, win_rates=metric_win_rates(scores))


def inter_rater(labels: Sequence[ResponseLabel], *, seed: int = 0) -> Agreement:
    """Per instruction judged by two or more evaluators: mean τ-b over evaluator pairs; then the mean."""
    by_item: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for label in labels:
        if label.rank is not None:
            by_item[label.instruction_id][label.evaluator][label.model] = label.rank
    per_item: dict[str, float | None] = {}
    for item, evaluators in by_item.items():
        if len(evaluators) < 2:
            continue
        taus = []
        for a, b in combinations(sorted(evaluators), 2):
            shared = sorted(set(evaluators[a]) & set(evaluators[b]))
            if len(shared) < 2:
                continue
            tau = kendall_tau([evaluators[a][m] for m in shared], [evaluators[b][m] for m in shared]).statistic
            if tau == tau:  # NaN for a constant ranking
                taus.append(tau)
        per_item[item] = sum(taus) / len(taus) if taus else None
    return _summary("inter-rater", per_item, seed=seed)


@dataclass(frozen=True)
class MetricComparison:
    a: str
    b: str
    paired: PairedDifference  # mean τ(b) − τ(a) over instructions both define
    fisher: TestResult | None  # the paper's independent test, for comparison only


def default_comparison(rows: Sequence[Agreement]) -> list[tuple[str, str]]:
    """The paper's comparison (Appendix K: COMET vs BERTScore, its two best metrics): the two metric rows with the
    highest mean τ, second best as A and best as B; none when fewer than two metrics have a defined τ."""
    ranked = sorted(
        (r for r in rows if r.mean is not None and r.name != "inter-rater"), key=lambda r: r.mean or 0.0, reverse=True
    )
    return [(ranked[1].name, ranked[0].name)] if len(ranked) >= 2 else []


def compare(a: Agreement, b: Agreement, *, seed: int = 0) -> MetricComparison:
    shared = sorted(set(a.per_instruction) & set(b.per_instruction))
    if not shared:
        raise ValueError(f"{a.name} and {b.name} share no instruction with a defined τ")
    paired = paired_bootstrap([a.per_instruction[i] for i in shared], [b.per_instruction[i] for i in shared], seed=seed)
    fisher = None
    if a.mean is not None and b.mean is not None and a.n > 3 and b.n > 3 and abs(a.mean) < 1 and abs(b.mean) < 1:
        fisher = fisher_z(b.mean, b.n, a.mean, a.n)
    return MetricComparison(a.name, b.name, paired, fisher)


def metric_win_rates(
    scores: Mapping[str, Mapping[str, float]], models: Sequence[str] | None = None
) -> dict[str, float | None]:
    """Win rates from a metric's rankings (ties excluded), for comparing with the clinicians' (Table S17)."""
    ranks = {item: ranks_from_scores(values) for item, values in scores.items()}
    matrix = head_to_head(ranks, models, ties="exclude")
    return {model: matrix.win_rate(model) for model in matrix.systems}


SOURCE_TOKENS = 400


def source_snippets(ehr: EHR, question: str, tokenizer: Tokenizer, *, tokens: int = SOURCE_TOKENS) -> str:
    """The source for source-augmented metrics (COMET, UniEval; LENS's complex input): the record's events that
    best match the instruction by Okapi BM25 (lower-cased), best first, until ``tokens`` tokens (bedside's choice:
    the paper says BM25Okapi snippets of the patient's own record with the instruction as query, not their unit or
    size; 400 tokens fit a 512-token encoder beside the output); when few events match, the most recent others
    fill the rest. The choice is in the metric's name: ``src=bm25-events-400`` (``complex=`` for LENS)."""
    blocks = [b.body for b in timeline_blocks(ehr.record)]
    if not blocks:
        return ""
    index = OkapiBM25Index(blocks, tokenize=lambda text: re.findall(r"\w+", text.lower()))
    matched = [hit.index for hit in index.search(question, k=len(blocks))]
    seen = set(matched)
    kept: list[str] = []
    used = 0
    for position in matched + [i for i in reversed(range(len(blocks))) if i not in seen]:  # then the most recent
        cost = tokenizer.count(blocks[position])
        if used + cost > tokens:
            continue
        kept.append(blocks[position])
        used += cost
    return "\n".join(kept)


BatchMetric = Callable[[list[str], list[str], list[str]], Mapping[str, Sequence[float]]]
"""(responses, references, sources) -> row name -> one score per response, for metrics that score in batches
(model-based ones). Sources are the BM25 snippets for source-augmented metrics and empty strings otherwise."""

SOURCE_NAME = f"bm25-events-{SOURCE_TOKENS}"
SOURCE_AUGMENTED = frozenset({"comet", "lens", "unieval"})
LEARNED = ("comet", "bleurt", "lens", "unieval", "bertscore")


def batch_agreement(
    labels: Sequence[ResponseLabel],
    instructions: Mapping[str, Instruction],
    metric: BatchMetric,
    *,
    records: str | None = None,
    tokenizer: Tokenizer | None = None,
    snippets: dict[str, str] | None = None,
    seed: int = 0,
) -> list[Agreement]:
    """One row per name the metric returns: its scores of every labelled response against the primary reference
    (and, given a ``tokenizer``, the instruction's :func:`source_snippets` from ``records``), then τ-b against the
    clinicians as :func:`versus_clinicians`. Responses to instructions without a reference are not scored.

    ``snippets`` (instruction id → source) is filled as sources are built and read before building one: pass the
    same dict to every source-augmented metric of a table, since each source reads and indexes a whole record."""
    usable = [
        x for x in labels if x.instruction_id in instructions and instructions[x.instruction_id].primary_reference
    ]
    sources = dict.fromkeys({x.instruction_id for x in usable}, "")
    if tokenizer is not None:
        built = {} if snippets is None else snippets
        for item in sources:
            if item not in built:
                case = instructions[item]
                built[item] = source_snippets(load_ehr(case, records), case.question, tokenizer)
            sources[item] = built[item]
    found = metric(
        [x.response for x in usable],
        [instructions[x.instruction_id].primary_reference.text for x in usable],  # type: ignore[union-attr]
        [sources[x.instruction_id] for x in usable],
    )
    rows = []
    for name, values in found.items():
        scores: dict[str, dict[str, float]] = defaultdict(dict)
        for label, value in zip(usable, values, strict=True):
            scores[label.instruction_id][label.model] = float(value)
        rows.append(versus_clinicians(name, dict(scores), labels, seed=seed))
    return rows


def learned_name(kind: str, checkpoint: str | Path, *, layer: int = 17) -> str:
    """A learned metric's row name: the checkpoint, and for source-augmented metrics what stood for the source.
    LENS has no source input but a "complex" one (the text that was simplified); bedside gives it the same BM25
    snippets and names it ``complex=``, so the row says the paper's source-free LENS was not what ran."""
    from bedside.metrics.learned import metric_name

    if kind == "bertscore":
        return f"bertscore[{Path(checkpoint).name}/L{layer}]"
    name = metric_name(kind, checkpoint)
    if kind == "lens":
        return f"{name}[complex={SOURCE_NAME}]"
    return f"{name}[src={SOURCE_NAME}]" if kind in SOURCE_AUGMENTED else name


def _learned_metric(kind: str, checkpoint: str, name: str, layer: int) -> BatchMetric:
    from bedside.metrics import learned

    if kind == "comet":
        return lambda out, ref, src: {name: learned.comet_scores(out, ref, src, checkpoint)}
    if kind == "lens":
        return lambda out, ref, src: {name: learned.lens_scores(out, src, ref, checkpoint)}
    if kind == "bleurt":
        return lambda out, ref, src: {name: learned.bleurt_scores(out, ref, checkpoint)}
    if kind == "bertscore":
        from bedside.metrics.semantic import BertScorer

        def bertscore(out: list[str], ref: list[str], src: list[str]) -> dict[str, list[float]]:
            return {name: [x.f1 for x in BertScorer(checkpoint, num_layers=layer).score(out, [[r] for r in ref])]}

        return bertscore
    from bedside.metrics.unieval import DIMENSIONS, UniEval

    def unieval(out: list[str], ref: list[str], src: list[str]) -> dict[str, list[float]]:
        rows = UniEval(checkpoint).score(out, src, ref)
        return {f"{name}:{key}": [row[key] for row in rows] for key in (*DIMENSIONS, "overall")}

    return unieval


def learned_agreement(
    kind: str,
    checkpoint: str | Path,
    labels: Sequence[ResponseLabel],
    instructions: Mapping[str, Instruction],
    *,
    records: str | None,
    tokenizer: Tokenizer,
    snippets: dict[str, str] | None = None,
    layer: int = 17,
    seed: int = 0,
) -> list[Agreement] | str:
    """A learned metric (one of :data:`LEARNED`, from a local checkpoint) against the clinicians: its rows (UniEval
    has one per dimension and overall), or ``"<name>: <reason>"`` when it cannot run here (absent, never zero).
    Source-augmented ones get :func:`source_snippets` (``snippets`` as :func:`batch_agreement`); ``layer`` is
    BERTScore's."""
    from bedside.metrics.learned import learned_unavailable
    from bedside.metrics.lexical import MetricUnavailableError

    if kind not in LEARNED:
        raise ValueError(f"unknown learned metric {kind!r}; known: {', '.join(LEARNED)}")
    name = learned_name(kind, checkpoint, layer=layer)
    reason = learned_unavailable(kind, checkpoint)
    if reason:
        return f"{name}: {reason}"
    try:
        return batch_agreement(
            labels,
            instructions,
            _learned_metric(kind, str(checkpoint), name, layer),
            records=records,
            tokenizer=tokenizer if kind in SOURCE_AUGMENTED else None,
            snippets=snippets,
            seed=seed,
        )
    except MetricUnavailableError as exc:
        return f"{name}: {exc}"
    except (OSError, ValueError, RuntimeError) as exc:  # a checkpoint folder that exists but does not load
        return f"{name}: could not run the checkpoint: {type(exc).__name__}: {exc}"
