"""Should the efficient path be trusted on this model? The spec's §4.5 validation of the folded call.

The efficient path computes fact mining (extract + match) and the MOVE/STAY decision inside one call that also
writes the candidates. Whether that changes the conversation is an empirical question per model, so it is
measured, not assumed:

**Replay.** Every exchange of a stored *reference-path* run is a recorded state: the patient message p, the facts
F and the memory H the sensemaker had, the stage and how many messages it had sent there. The reference's own
separate answers for that state are in the trace (extracted facts, which were new, the stage answer). Each state
is sent once more, through exactly the call the efficient path makes (:func:`.sensemaker.folded_answer`), and the
two are compared:

- *mining*, over states whose message is mined: the folded facts are aligned one-to-one with the separate
  extraction's (greedy, highest MiniLM cosine first, at or above ``ALIGN_COSINE``; two extractions of the same
  message mostly reword each other, which a sentence embedding aligns well, unlike the negation cases of spec
  §4.2, which are pairs from *different* messages). Reported: Cohen's κ of new-vs-present over aligned facts,
  recall of the separate pipeline's new facts (aligned and labelled new by the folded call), and the share of
  folded facts that no sentence of the message supports (best cosine below ``SUPPORT_COSINE``, the fidelity
  checker's embedding threshold: an approximation, stated as such);
- *decision*, over states the agent decided (not forced by the Providing Information rule or a cap): agreement
  and Cohen's κ of MOVE/STAY.

The bars are pre-registered (spec §4.5): mining κ ≥ 0.6 and recall ≥ 0.9; decision κ ≥ 0.6. A step that misses
its bar keeps the reference's call: ``fold_mining: false`` or ``fold_decision: false`` in the task's options.

**Full-run comparison.** When a run holds finished conversations on both paths, each arm's Table-1 stage lengths,
stagnation rate, facts per exchange and hard diagnosis correctness at Providing Information are given with 95%
bootstrap intervals, and whether the two arms' intervals overlap (the spec asks for ≥ 30 conversations per arm).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bedside.llm.errors import ModelError
from bedside.runs.store import ResultRow
from bedside.runs.task import SampleContext, Turn
from bedside.sim.fidelity import EMBEDDING_THRESHOLD
from bedside.stats.agreement import cohen_kappa
from bedside.stats.bootstrap import bootstrap_ci
from bedside.tasks.sensemaking.sensemaker import folded_answer
from bedside.tasks.sensemaking.stages import NO_FACT_MINING, PROVIDING, info
from bedside.text.sentences import split_sentences

ALIGN_COSINE = 0.6
SUPPORT_COSINE = EMBEDDING_THRESHOLD
MINING_KAPPA_BAR = 0.6
MINING_RECALL_BAR = 0.9
DECISION_KAPPA_BAR = 0.6
Similarity = Callable[[Sequence[str], Sequence[str]], list[list[float]]]


@dataclass(frozen=True)
class RecordedState:
    """One exchange of a reference-path conversation, as the sensemaker saw it before deciding."""

    sample_id: str
    exchange: int
    stage: str
    in_stage: int
    message: str
    facts: tuple[str, ...]
    said: tuple[str, ...]
    extracted: tuple[str, ...] | None
    """The separate extraction (None: the message was not mined)."""
    new_facts: tuple[str, ...] | None
    stage_answer: str | None
    """The separate stage call's MOVE/STAY when the agent decided (None: forced, or not asked)."""

    @property
    def forced(self) -> bool:
        return self.stage == PROVIDING or self.in_stage >= info(self.stage).cap


def recorded_states(rows: Sequence[ResultRow]) -> list[RecordedState]:
    """Every exchange of the finished reference-path samples, rebuilt from transcript and trace.

    The k-th trace entry is the decision taken on the k-th patient message (the patient opens); F before it is
    the new facts of the entries before; H is the case's vital facts and the sensemaker's earlier messages."""
    states = []
    for row in rows:
        output = row.output
        if row.status != "ok" or not output or output.get("extra", {}).get("path") != "reference":
            continue
        transcript = [Turn.model_validate(t) for t in output.get("transcript") or []]
        patient = [t.content for t in transcript if t.role == "patient"]
        clinician = [t for t in transcript if t.role == "clinician"]
        vitals = tuple(output["extra"].get("case", {}).get("vital_facts") or ())
        facts: list[str] = []
        for k, entry in enumerate(output.get("trace") or []):
            if k >= len(patient):
                break
            details = entry.get("decision") or {}
            stage = str(entry["stage_before"])
            decided = "stage_answer" in details and not details.get("stage_answer_ignored")
            states.append(
                RecordedState(
                    sample_id=row.sample_id,
                    exchange=k,
                    stage=stage,
                    in_stage=sum(t.stage == stage for t in clinician[:k]),
                    message=patient[k],
                    facts=tuple(facts),
                    said=vitals + tuple(t.content for t in clinician[:k]),
                    extracted=tuple(details["extracted"]) if "extracted" in details else None,
                    new_facts=tuple(details.get("new_facts") or ()) if "extracted" in details else None,
                    stage_answer=str(details["stage_answer"]) if decided else None,
                )
            )
            facts.extend(details.get("new_facts") or ())
    return states


@dataclass
class Replayed:
    state: RecordedState
    facts: list[tuple[str, str]] | None  # the folded call's (fact, new|present); None when not mined
    stage: str | None  # its MOVE/STAY; None when the move was forced


@dataclass
class ReplayValidation:
    model: str
    states: int
    mining: dict[str, Any]
    decision: dict[str, Any]
    failed: dict[str, str] = field(default_factory=dict)

    @property
    def keep_reference(self) -> list[str]:
        """The task options that keep the reference's call for each step that missed its bar (or was not
        measured)."""
        keep = []
        if not self.mining.get("passes"):
            keep.append("fold_mining: false")
        if not self.decision.get("passes"):
            keep.append("fold_decision: false")
        return keep

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "states": self.states,
            "mining": self.mining,
            "decision": self.decision,
            "keep_reference": self.keep_reference,
            "failed": self.failed,
        }


def embedding_similarity(a: Sequence[str], b: Sequence[str]) -> list[list[float]]:
    """Cosine of every text in ``a`` with every text in ``b`` (MiniLM)."""
    from bedside.retrieval.embeddings import default_embedder

    if not a or not b:
        return [[0.0] * len(b) for _ in a]
    embedder = default_embedder()
    matrix = embedder.embed(list(a)) @ embedder.embed(list(b)).T
    return [[float(x) for x in row] for row in matrix]


def align(
    left: Sequence[str], right: Sequence[str], similarity: Similarity, threshold: float = ALIGN_COSINE
) -> list[tuple[int, int]]:
    """One-to-one pairs (i, j), highest similarity first, each at or above ``threshold``."""
    scores = similarity(left, right)
    candidates = sorted(
        ((scores[i][j], i, j) for i in range(len(left)) for j in range(len(right)) if scores[i][j] >= threshold),
        reverse=True,
    )
    used_left: set[int] = set()
    used_right: set[int] = set()
    pairs = []
    for _, i, j in candidates:
        if i not in used_left and j not in used_right:
            used_left.add(i)
            used_right.add(j)
            pairs.append((i, j))
    return sorted(pairs)


async def replay(
    states: Sequence[RecordedState],
    context_for: Callable[[RecordedState], SampleContext],
    *,
    concurrency: int = 4,
    on_done: Callable[[RecordedState, str | None], None] | None = None,
) -> tuple[list[Replayed], dict[str, str]]:
    """Each state through the efficient path's folded call; a state whose answer stays invalid is a failure
    with its cause, left out of every figure. ``on_done(state, error)`` follows each state (progress)."""
    gate = asyncio.Semaphore(concurrency)
    done: dict[int, Replayed] = {}
    failed: dict[str, str] = {}

    async def one(index: int, state: RecordedState) -> None:
        mine = state.stage not in NO_FACT_MINING
        async with gate:
            try:
                value = await folded_answer(
                    context_for(state),
                    stage=state.stage,
                    message=state.message,
                    facts=state.facts,
                    said=state.said,
                    mine=mine,
                    move=True if state.forced else None,
                )
            except ModelError as exc:
                failed[f"{state.sample_id}#{state.exchange}"] = cause = f"{type(exc).__name__}: {exc}"
                if on_done:
                    on_done(state, cause)
                return
        facts = [(f.fact.strip(), f.status) for f in value.new_facts] if mine else None
        done[index] = Replayed(state, facts, None if state.forced else value.stage)
        if on_done:
            on_done(state, None)

    await asyncio.gather(*(one(i, s) for i, s in enumerate(states)))
    return [done[i] for i in sorted(done)], failed


def _kappa(gold: Sequence[str], guess: Sequence[str]) -> float | None:
    return cohen_kappa(gold, guess) if gold and len(set(gold) | set(guess)) > 1 else None


def mining_agreement(replayed: Sequence[Replayed], similarity: Similarity) -> dict[str, Any]:
    """Folded vs separate mining over the states whose message was mined by both."""
    gold: list[str] = []
    guess: list[str] = []
    separate_new = recalled = folded_total = unsupported = unaligned_folded = unaligned_separate = states = 0
    for item in replayed:
        state = item.state
        if item.facts is None or state.extracted is None:
            continue
        states += 1
        separate = list(state.extracted)
        new = set(state.new_facts or ())
        folded = [fact for fact, _ in item.facts]
        pairs = align(folded, separate, similarity)
        for i, j in pairs:
            gold.append("new" if separate[j] in new else "present")
            guess.append(item.facts[i][1])
        separate_new += len(new)
        recalled += sum(1 for i, j in pairs if separate[j] in new and item.facts[i][1] == "new")
        unaligned_folded += len(folded) - len(pairs)
        unaligned_separate += len(separate) - len(pairs)
        folded_total += len(folded)
        if folded:
            sentences = [s.text for s in split_sentences(state.message)] or [state.message]
            support = similarity(folded, sentences)
            unsupported += sum(max(row) < SUPPORT_COSINE for row in support)
    kappa = _kappa(gold, guess)
    recall = recalled / separate_new if separate_new else None
    return {
        "states": states,
        "aligned_facts": len(gold),
        "agreement": sum(g == p for g, p in zip(gold, guess, strict=True)) / len(gold) if gold else None,
        "kappa": kappa,
        "separate_new_facts": separate_new,
        "recall_of_new": recall,
        "folded_facts": folded_total,
        "unsupported_share": unsupported / folded_total if folded_total else None,
        "unaligned_folded": unaligned_folded,
        "unaligned_separate": unaligned_separate,
        "bar": f"kappa >= {MINING_KAPPA_BAR} and recall >= {MINING_RECALL_BAR}",
        "passes": kappa is not None
        and recall is not None
        and kappa >= MINING_KAPPA_BAR
        and recall >= MINING_RECALL_BAR,
    }


def decision_agreement(replayed: Sequence[Replayed]) -> dict[str, Any]:
    """Folded vs separate MOVE/STAY over the states the agent decided in both."""
    pairs = [(r.state.stage_answer, r.stage) for r in replayed if r.state.stage_answer and r.stage]
    gold = [str(g) for g, _ in pairs]
    guess = [str(p) for _, p in pairs]
    kappa = _kappa(gold, guess)
    return {
        "states": len(pairs),
        "agreement": sum(g == p for g, p in pairs) / len(pairs) if pairs else None,
        "kappa": kappa,
        "separate_move_share": gold.count("MOVE") / len(gold) if gold else None,
        "folded_move_share": guess.count("MOVE") / len(guess) if guess else None,
        "bar": f"kappa >= {DECISION_KAPPA_BAR}",
        "passes": kappa is not None and kappa >= DECISION_KAPPA_BAR,
    }


async def validate_replay(
    rows: Sequence[ResultRow],
    context_for: Callable[[RecordedState], SampleContext],
    *,
    model: str,
    limit: int | None = None,
    concurrency: int = 4,
    similarity: Similarity = embedding_similarity,
    on_done: Callable[[RecordedState, str | None], None] | None = None,
) -> ReplayValidation:
    """Replay a reference-path run's recorded states through the folded call and compare (module docs)."""
    states = recorded_states(rows)
    if not states:
        raise ValueError("the run has no finished reference-path conversation to replay (task option path: reference)")
    states = states[:limit] if limit else states
    replayed, failed = await replay(states, context_for, concurrency=concurrency, on_done=on_done)
    return ReplayValidation(
        model=model,
        states=len(states),
        mining=mining_agreement(replayed, similarity),
        decision=decision_agreement(replayed),
        failed=failed,
    )


def _interval(values: Sequence[float]) -> dict[str, Any] | None:
    if not values:
        return None
    ci = bootstrap_ci(values)
    return {"n": len(values), "mean": ci.estimate, "low": ci.low, "high": ci.high}


def compare_paths(rows: Sequence[ResultRow]) -> dict[str, Any]:
    """Per path, the full-run measures with 95% bootstrap intervals, and whether the arms' intervals overlap."""
    arms: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        if row.status != "ok" or not row.output:
            continue
        extra = row.output.get("extra") or {}
        path = extra.get("path")
        if path not in ("reference", "efficient"):
            continue
        arm = arms.setdefault(str(path), {})
        for stage, count in (extra.get("messages_per_stage") or {}).items():
            arm.setdefault(f"messages in {stage}", []).append(float(count))
        arm.setdefault("stagnation end", []).append(float(extra.get("termination") == "stagnation_end"))
        exchanges = max(int(extra.get("sensemaker_messages") or 0), 1)
        arm.setdefault("facts per exchange", []).append(len(extra.get("sensemaker_facts") or ()) / exchanges)
        hard = (extra.get("judgements") or {}).get("hard")
        if hard and hard.get("scores", {}).get("correct") is not None:
            arm.setdefault("diagnosis correct (hard)", []).append(float(hard["scores"]["correct"]))
    measures = sorted({m for arm in arms.values() for m in arm})
    table = {}
    for measure in measures:
        ref = _interval(arms.get("reference", {}).get(measure, []))
        eff = _interval(arms.get("efficient", {}).get(measure, []))
        overlap = None if ref is None or eff is None else ref["low"] <= eff["high"] and eff["low"] <= ref["high"]
        table[measure] = {"reference": ref, "efficient": eff, "overlap": overlap}
    conversations = {path: len(arm.get("stagnation end", [])) for path, arm in arms.items()}
    return {"conversations": conversations, "measures": table}
