"""How far to trust the simulator fidelity checker: its labels against a set labelled by hand.

The set (``data/fidelity_labelled.jsonl``, written for bedside by ``tools/make_fidelity_set.py``) holds simulated
patient turns from both multi-turn tasks: the facts the patient was given, what the clinician said before, and
each sentence's label. ``phase`` separates closed-world stages (the patient may only state given facts) from
later ones (questions, reactions, plans), because the checker's errors differ there: later stages invite
plausible additions that are easy to miss.

Reported: accuracy and Cohen's κ over the four labels, per label precision/recall, the confusion matrix, the same
by phase, and the decision that matters in a report, *flagged* (contradicted or unsupported) against not
flagged, as κ and the recall of flagged sentences. Each checker call is one judge call per turn, exactly as in a
run (:func:`~bedside.sim.fidelity.check_fidelity`), so what is measured is what runs.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bedside.inputs import InputError
from bedside.jsonlines import json_objects
from bedside.llm import GenerationSettings, Model
from bedside.llm.errors import ModelError
from bedside.llm.types import Role
from bedside.runs.task import SampleContext, Turn
from bedside.sim.contradiction import JUDGED_LABELS, LABELS, ContradictionRules, Label, label_combined
from bedside.sim.fidelity import EMBEDDING_THRESHOLD, FIDELITY_TEMPLATE, Checker, check_fidelity
from bedside.sim.knowledge import Knowledge
from bedside.stats.agreement import cohen_kappa
from bedside.stats.proportions import wilson_interval
from bedside.text.sentences import split_sentences

LABELLED_SET = Path(__file__).parent / "data" / "fidelity_labelled.jsonl"
FLAGGED = frozenset({"contradicted", "unsupported"})


@dataclass(frozen=True)
class FidelityItem:
    """One patient turn with its sentences' labels."""

    id: str
    phase: str
    stage: str
    facts: tuple[str, ...]
    clinician_said: tuple[str, ...]
    sentences: tuple[str, ...]
    labels: tuple[Label, ...]
    split: str = ""
    """``dev`` or ``test`` in a set with halves (rules are tuned on dev only); "" where the set has none."""
    kind: str = ""
    """How a sentence departs from its facts ("dose", "side", "new_drug", ...) or "paraphrase"; free text."""
    style: str = ""
    """``dialogue`` for sentences written in the style of recorded patient talk, else ``plain``/""."""


def read_fidelity_items(path: Path | None = None) -> list[FidelityItem]:
    """The labelled turns; every problem names the file, line and field. The sentences must be exactly what
    bedside's splitter makes of the turn, since the checker labels the splitter's sentences."""
    path = path or LABELLED_SET
    items = []
    lines: dict[str, int] = {}
    for number, data in json_objects(path):
        where = f"{path}:{number}"
        try:
            sentences = _texts(data["sentences"], where, "sentences")
            labels = tuple(data["labels"])
            item = FidelityItem(
                id=str(data["id"]),
                phase=str(data.get("phase") or "unspecified"),
                stage=str(data.get("stage") or ""),
                facts=_texts(data["facts"], where, "facts"),
                clinician_said=_texts(data.get("clinician_said") or [], where, "clinician_said", blank=True),
                sentences=sentences,
                labels=labels,
                split=str(data.get("split") or ""),
                kind=str(data.get("kind") or ""),
                style=str(data.get("style") or ""),
            )
        except KeyError as exc:
            raise InputError(f"{where}: missing field {exc}; each line needs id, facts, sentences and labels") from None
        except TypeError as exc:
            raise InputError(f"{where}: needs id, facts, sentences and labels ({exc})") from None
        if not item.facts:
            raise InputError(f"{where}: facts: empty; a patient's profile needs at least one fact to check against")
        if item.id in lines:
            raise InputError(f"{where}: id {item.id!r} is also on line {lines[item.id]}")
        lines[item.id] = number
        unknown = [label for label in labels if label not in JUDGED_LABELS]
        if unknown:
            raise InputError(f"{where}: labels: unknown {unknown}; expected {', '.join(JUDGED_LABELS)}")
        if len(labels) != len(sentences):
            raise InputError(f"{where}: {len(sentences)} sentences but {len(labels)} labels")
        split = tuple(s.text for s in split_sentences(" ".join(sentences)))
        if split != sentences:
            shown = [s if len(s) <= 80 else s[:77] + "..." for s in split[:3]]
            more = f" and {len(split) - 3} more" if len(split) > 3 else ""
            raise InputError(
                f"{where}: sentences: the file gives {len(sentences)}, bedside's splitter reads the turn as "
                f"{len(split)}: {shown}{more}; give one sentence per entry, as the splitter reads them"
            )
        items.append(item)
    if not items:
        raise InputError(f"{path}: no labelled turns")
    return items


def _texts(value: Any, where: str, name: str, *, blank: bool = False) -> tuple[str, ...]:
    """A field that must be a list of texts: a bare string would be read a character at a time (a "facts" of
    "Pneumonia." made nine facts, each one letter)."""
    if not isinstance(value, list) or not all(isinstance(text, str) for text in value):
        raise InputError(f"{where}: {name}: a list of strings, got {type(value).__name__} {str(value)[:60]!r}")
    if not blank and any(not text.strip() for text in value):
        raise InputError(f"{where}: {name}: an empty text in the list")
    return tuple(value)


@dataclass
class Agreement:
    n: int
    accuracy: float
    kappa: float | None

    @classmethod
    def of(cls, gold: Sequence[str], predicted: Sequence[str]) -> Agreement:
        accuracy = sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold)
        kappa = cohen_kappa(gold, predicted) if len(set(gold) | set(predicted)) > 1 else None
        return cls(len(gold), accuracy, kappa)


@dataclass
class FidelityValidation:
    model: str
    overall: Agreement
    by_phase: dict[str, Agreement]
    flagged: Agreement
    flagged_recall: float | None
    """Share of the sentences labelled contradicted or unsupported that the checker flagged (either label)."""
    per_label: dict[str, dict[str, float | int | None]]
    confusion: dict[str, dict[str, int]]
    """gold label -> predicted label -> count."""
    failed: dict[str, str] = field(default_factory=dict)
    """Turns the checker gave no valid answer for (item id -> cause); left out of every figure."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "overall": vars(self.overall),
            "by_phase": {phase: vars(a) for phase, a in self.by_phase.items()},
            "flagged": vars(self.flagged),
            "flagged_recall": self.flagged_recall,
            "per_label": self.per_label,
            "confusion": self.confusion,
            "failed": self.failed,
        }


async def predict_fidelity(
    items: Sequence[FidelityItem],
    judge: Model | None,
    *,
    settings: GenerationSettings | None = None,
    template: str | Path = FIDELITY_TEMPLATE,
    concurrency: int = 4,
    checker: Checker = "llm",
    threshold: float = EMBEDDING_THRESHOLD,
    prefilter: float | None = None,
    verify: bool = False,
) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """Each item's labels from the checker, exactly as a run labels a patient turn (item id -> labels), and the
    items the checker gave no valid answer for (item id -> cause). ``judge`` may be None for the checkers that
    call no model (embedding, combined without ``verify``)."""
    if judge is None and (checker == "llm" or prefilter is not None or verify):
        raise ValueError(f"the {checker} checker needs a judge model" + (" to verify with" if verify else ""))
    settings = settings or GenerationSettings(temperature=0.0, seed=0, max_tokens=256)
    gate = asyncio.Semaphore(concurrency)
    predicted: dict[str, tuple[str, ...]] = {}
    failed: dict[str, str] = {}
    models: dict[Role, Model] = {"judge": judge} if judge is not None else {}

    async def one(item: FidelityItem) -> None:
        transcript = [Turn(role="clinician", content=c) for c in item.clinician_said]
        transcript.append(Turn(role="patient", content=" ".join(item.sentences), stage=item.stage))
        context = SampleContext(models, {"judge": settings}, epoch="0", seed=0)
        async with gate:
            try:
                report = await check_fidelity(
                    transcript,
                    Knowledge(item.facts),
                    context,
                    template=template,
                    checker=checker,
                    threshold=threshold,
                    prefilter=prefilter,
                    verify=verify,
                )
            except ModelError as exc:
                failed[item.id] = f"{type(exc).__name__}: {exc}"
                return
        predicted[item.id] = tuple(s.label for s in report.sentences)

    await asyncio.gather(*(one(item) for item in items))
    return predicted, failed


def checker_name(checker: Checker, judge: Model | None, prefilter: float | None = None, verify: bool = False) -> str:
    if checker == "embedding":
        return "embedding (all-MiniLM-L6-v2)"
    if checker == "combined":
        verifier = f", uncertain sentences asked of {judge.name if judge is not None else 'the judge'}"
        return "combined (conflict rules + MiniLM" + (verifier if verify else "") + ")"
    name = judge.name if judge is not None else "llm"
    return name + (f" with an embedding pre-filter at {prefilter:g}" if prefilter is not None else "")


async def validate_fidelity(
    items: Sequence[FidelityItem],
    judge: Model | None,
    *,
    settings: GenerationSettings | None = None,
    template: str | Path = FIDELITY_TEMPLATE,
    concurrency: int = 4,
    checker: Checker = "llm",
    threshold: float = EMBEDDING_THRESHOLD,
    prefilter: float | None = None,
) -> FidelityValidation:
    """Label every item with the checker (on ``judge`` unless it calls no model) and compare with the hand
    labels."""
    predicted, failed = await predict_fidelity(
        items,
        judge,
        settings=settings,
        template=template,
        concurrency=concurrency,
        checker=checker,
        threshold=threshold,
        prefilter=prefilter,
    )
    return compare(items, predicted, model=checker_name(checker, judge, prefilter), failed=failed)


def compare(
    items: Sequence[FidelityItem],
    predicted: dict[str, tuple[str, ...]],
    *,
    model: str = "",
    failed: dict[str, str] | None = None,
) -> FidelityValidation:
    """The figures for the items that have a prediction."""
    pairs = [
        (item, g, p)
        for item in items
        if item.id in predicted
        for g, p in zip(item.labels, predicted[item.id], strict=True)
    ]
    if not pairs:
        raise ValueError("the checker labelled no turn; see the failures")
    gold = [g for _, g, _ in pairs]
    guess = [p for _, _, p in pairs]
    phases = sorted({item.phase for item, _, _ in pairs})
    by_phase = {
        phase: Agreement.of([g for i, g, _ in pairs if i.phase == phase], [p for i, _, p in pairs if i.phase == phase])
        for phase in phases
    }
    gold_flag = [g in FLAGGED for g in gold]
    guess_flag = [p in FLAGGED for p in guess]
    flagged_gold = sum(gold_flag)
    confusion: dict[str, dict[str, int]] = {g: dict.fromkeys(LABELS, 0) for g in LABELS}
    for g, p in zip(gold, guess, strict=True):
        confusion[g][p] += 1
    counts_gold, counts_guess = Counter(gold), Counter(guess)
    per_label: dict[str, dict[str, float | int | None]] = {}
    for label in LABELS:
        hits = confusion[label][label]
        abstention = label not in JUDGED_LABELS  # "uncertain" is never a hand label: no precision to have
        per_label[label] = {
            "support": counts_gold[label],
            "predicted": counts_guess[label],
            "hits": hits,
            "precision": hits / counts_guess[label] if counts_guess[label] and not abstention else None,
            "recall": hits / counts_gold[label] if counts_gold[label] else None,
        }
        for measure, n in (("precision", counts_guess[label]), ("recall", counts_gold[label])):
            interval = wilson_interval(hits, n)  # the Wilson 95% interval the text output prints
            per_label[label][f"{measure}_ci_low"] = None if interval is None else interval[0]
            per_label[label][f"{measure}_ci_high"] = None if interval is None else interval[1]
    return FidelityValidation(
        model=model,
        overall=Agreement.of(gold, guess),
        by_phase=by_phase,
        flagged=Agreement.of([str(f) for f in gold_flag], [str(f) for f in guess_flag]),
        flagged_recall=(sum(g and p for g, p in zip(gold_flag, guess_flag, strict=True)) / flagged_gold)
        if flagged_gold
        else None,
        per_label=per_label,
        confusion=confusion,
        failed=dict(failed or {}),
    )


SENTENCE_SET = Path(__file__).parent / "data" / "fidelity_sentences.jsonl"
"""bedside's sentence-level set for ``bedside sim fidelity-eval``: 288 sentences with dev and test halves."""


@dataclass(frozen=True)
class SentenceSet:
    """A labelled sentence set and where its sentences come from."""

    name: str
    provenance: str
    path: Path

    @property
    def held_out(self) -> bool:
        """Its errors are unread: an outside-written set measured and frozen, not yet spent as a development set
        (its provenance says which, as the guard's set names do)."""
        return "frozen" in self.provenance and "development set" not in self.provenance


BUILTIN_SENTENCE_SETS = (
    SentenceSet(
        "bedside's own",
        "written for bedside; the combined checker's rules were tuned on its dev half, its test half read after",
        SENTENCE_SET,
    ),
    SentenceSet(
        "outside-written 2026-11-27",
        "written by a writer who never read the rules; measured once after the rules froze",
        SENTENCE_SET.with_name("fidelity_heldout.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-28",
        "written by a writer who never read the rules; measured once before any rule change, then frozen; its "
        "errors were read in issue 45's third round: a development set since",
        SENTENCE_SET.with_name("fidelity_heldout_2.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-28b",
        "written by another writer who never read the rules; measured once after issue 45's first round, then "
        "frozen; a development set since its errors were read (third round)",
        SENTENCE_SET.with_name("fidelity_heldout_3.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29",
        "written by a fourth writer who never read the rules; measured once after negation came to be read by "
        "NegEx, then frozen; a development set since its errors were read (third round)",
        SENTENCE_SET.with_name("fidelity_heldout_4.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29b",
        "written by a fifth writer who never read the rules nor any other set; measured once after the shared "
        "reading's second round, totals only, frozen; a development set since its errors were read (fifth round)",
        SENTENCE_SET.with_name("fidelity_heldout_5.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29c",
        "written by a sixth writer who never read the rules nor any other set; measured once after the third "
        "round (answers read after their question, times in days), beside the code before it, totals only, frozen; "
        "its errors were read on 2026-11-30 for the fidelity round of relatives, doses and rates: a development set",
        SENTENCE_SET.with_name("fidelity_heldout_6.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29d",
        "written by a seventh writer who never read the rules nor any other set; measured once with the third "
        "round's rules (f23034f), before any later change, totals only, frozen; its errors were read on 2026-11-30 "
        "for the fidelity round of relatives, doses and rates: a development set",
        SENTENCE_SET.with_name("fidelity_heldout_7.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29e",
        "written by an eighth writer who never read the rules nor any other set; measured once with the fourth "
        "round's rules (0bc086a), before any later change, totals only, frozen; its errors were read on 2026-11-30 "
        "for the round of sides, weight, worse and better and spoken numbers: a development set",
        SENTENCE_SET.with_name("fidelity_heldout_8.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29f",
        "written by a ninth writer who never read the rules nor any other set; measured once with the fifth "
        "round's rules beside the fourth round's, totals only, frozen; its errors were read on 2026-11-30 for the "
        "same round: a development set",
        SENTENCE_SET.with_name("fidelity_heldout_9.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29g",
        "written by a tenth writer who never read the rules nor any other set; measured once with the fifth "
        "round's rules (12172f4), before any later change, totals only, frozen; its errors were read on 2026-11-30 "
        "for the round of choices, passives and findings: a development set",
        SENTENCE_SET.with_name("fidelity_heldout_10.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29h",
        "written by an eleventh writer who never read the rules nor any other set; measured once with the rules "
        "after WordNet's antonyms (834b7b0; the fidelity checker's reading unchanged since the fifth round), before "
        "any later change, totals only, frozen; its errors were read on 2026-11-30 for the round of who acts, what "
        "is kept and what is avoided: a development set",
        SENTENCE_SET.with_name("fidelity_heldout_11.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29i",
        "written by a twelfth writer who never read the rules nor any other set; measured once with the rules of "
        "d18a18b, before any later change, totals only, frozen; its errors were read on 2026-11-30 for the same "
        "round: a development set",
        SENTENCE_SET.with_name("fidelity_heldout_12.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29j",
        "written by a thirteenth writer who never read the rules nor any other set; measured once with the rules of "
        "cfcf7cd, before any later change, totals only, frozen; its errors were read on 2026-11-30 for the round "
        "of unrelated words, ages, spoken years and once a day: a development set",
        SENTENCE_SET.with_name("fidelity_heldout_13.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29k",
        "written by a fourteenth writer who never read the rules nor any other set; measured once with the rules "
        "of 4193931, before any later change, totals only, frozen; its errors were read on 2026-11-30 for the same "
        "round: a development set",
        SENTENCE_SET.with_name("fidelity_heldout_14.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29l",
        "written by a fifteenth writer who never read the rules nor any other set; measured once with the rules "
        "of 6ea5ee4, before any later change, and after later rounds, totals only; its errors were read on "
        "2026-11-30 in the round of answers and results: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_15.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29m",
        "written by a sixteenth writer who never read the rules nor any other set; measured once with the rules "
        "of 182aa8e, before any later change, and after later rounds, totals only; its errors were read on "
        "2026-11-30 in the round of answers and results: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_16.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29n",
        "written by a seventeenth writer who never read the rules nor any other set; kept sealed through the "
        "exchange round and measured once with its rules (e340556), before any later change, and after later "
        "rounds, totals only; its errors were read on 2026-11-30 in the round of scores, ranges and days: a "
        "development set now",
        SENTENCE_SET.with_name("fidelity_heldout_17.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-29o",
        "written by an eighteenth writer who never read the rules nor any other set; measured once with the rules "
        "of 0ca9e27, before any later change, and after later rounds, totals only; its errors were read on "
        "2026-11-30 in the round of scores, ranges and days: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_18.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30",
        "written by a nineteenth writer who never read the rules nor any other set; measured once with the rules "
        "of fa1419f, before any later change, and after later rounds, totals only; its errors were read on "
        "2026-11-30 in the round of clauses, counts and kin: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_19.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30b",
        "written by a twentieth writer who never read the rules nor any other set; measured once with the rules "
        "of the synonym round (which leaves the fidelity checker as it was), and after later rounds, totals only; "
        "its errors were read on 2026-11-30 in the round of clauses, counts and kin: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_20.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30c",
        "written by a twenty-first writer who never read the rules nor any other set; measured once with the "
        "rules of the synonym round, and after later rounds, totals only; its errors were read on 2026-11-30 in "
        "the round of sides, counts and reach: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_21.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30d",
        "written by a twenty-second writer who never read the rules nor any other set; measured once with the "
        "rules of ee73d86, before any later change, and after later rounds, totals only; its errors were read on "
        "2026-12-01 in the round of signs, sites and routes: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_22.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30e",
        "written by a twenty-third writer who never read the rules nor any other set; measured once with the "
        "rules of 889e3b8, before any later change, and after later rounds, totals only; its errors were read on "
        "2026-12-01 in the round of signs, sites and routes: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_23.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30f",
        "written by a twenty-fourth writer who never read the rules nor any other set (primary care, children, "
        "pregnancy and older adults); measured with the rules of 1e34877 and after later rounds, totals only; its "
        "errors were read on 2026-12-01 in the round of lifted restrictions, asked rates and held things: a "
        "development set now",
        SENTENCE_SET.with_name("fidelity_heldout_24.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30g",
        "written by a twenty-fifth writer who never read the rules nor any other set (specialist follow-up); "
        "measured with the rules of 1e34877 and after later rounds, totals only; its errors were read on "
        "2026-12-01 in the round of lifted restrictions, asked rates and held things: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_25.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30h",
        "written by a twenty-sixth writer who never read the rules nor any other set (emergency and urgent care, "
        "patients on a follow-up call); measured with the rules of df9335e and after later rounds, totals only; its "
        "errors were read on 2026-12-01 in the round of shares, kinds and parts of the day: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_26.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30i",
        "written by a twenty-seventh writer who never read the rules nor any other set (mental health, pain, skin, "
        "after surgery); measured with the rules of df9335e and after later rounds, totals only; its errors were "
        "read on 2026-12-01 in the round of shares, kinds and parts of the day: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_27.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30j",
        "written by a twenty-eighth writer who never read the rules nor any other set (kidney disease, dialysis, "
        "transplant and urinary problems); measured with the rules of 561eb61 and after later rounds, totals only "
        "(contradicted precision 0.851, recall 0.727, unsupported precision 0.841 at a065328); its errors were read "
        "on 2026-12-02 in the round of floors, histories and facts found elsewhere: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_28.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30k",
        "written by a twenty-ninth writer who never read the rules nor any other set (sports and work injuries, "
        "back and joint pain, physiotherapy); measured with the rules of 561eb61 and after later rounds, totals "
        "only (0.878, 0.655, 0.741 at a065328); its errors were read on 2026-12-02 in the same round: a development "
        "set now",
        SENTENCE_SET.with_name("fidelity_heldout_29.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30l",
        "written by a thirtieth writer who never read the rules nor any other set (rheumatology and skin); "
        "measured with the rules of 5f4f2d0 and after later rounds, totals only (contradicted precision 0.907, "
        "recall 0.709, unsupported precision 0.776 at 46cf53f); its errors were read on 2026-12-02 in the "
        "thirteenth round: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_30.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30m",
        "written by a thirty-first writer who never read the rules nor any other set (neurology, rehabilitation, "
        "travel and occupational health); measured with the rules of 5f4f2d0 and after later rounds, totals "
        "only (0.851, 0.727, 0.642 at 46cf53f); its errors were read on 2026-12-02 in the same round: a "
        "development set now",
        SENTENCE_SET.with_name("fidelity_heldout_31.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30n",
        "written by a thirty-second writer who never read the rules nor any other set (pregnancy, fertility, "
        "contraception, menopause; urology, kidney stones and the prostate); measured with the rules of 80fe826 "
        "and after later rounds, totals only (contradicted precision 0.727, recall 0.727, unsupported precision "
        "0.622 at 011bc7f); its errors were read on 2026-12-02 in the fourteenth round: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_32.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30o",
        "written by a thirty-third writer who never read the rules nor any other set (reflux, bowel disease and "
        "colonoscopy preparation, liver disease, nutrition and weight, recovery from alcohol or opioid use); "
        "measured with the rules of 80fe826 and after later rounds, totals only (0.750, 0.818, 0.884 at 011bc7f); "
        "its errors were read on 2026-12-02 in the same round: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_33.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30p",
        "written by a thirty-fourth writer who never read the rules nor any other set (heart failure, blood "
        "pressure, atrial fibrillation, cholesterol, angina, leg circulation); measured with the rules of 38bee85 and "
        "after later rounds, totals only (contradicted precision 0.689, recall 0.564, unsupported precision 0.638 at "
        "4c04c9a); its errors were read on 2026-12-02 in the fifteenth round: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_34.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30q",
        "written by a thirty-fifth writer who never read the rules nor any other set (asthma, COPD and home oxygen, "
        "allergies and adrenaline pens, sleep apnoea, stopping smoking); measured with the rules of 38bee85 and after "
        "later rounds, totals only (0.830, 0.709, 0.588 at 4c04c9a); its errors were read on 2026-12-02 in the same "
        "round: a development set now",
        SENTENCE_SET.with_name("fidelity_heldout_35.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30r",
        "written by a thirty-sixth writer who never read the rules nor any other set (stroke, seizures, migraine, "
        "Parkinson's disease, multiple sclerosis, depression, anxiety, sleep and memory); measured once with the "
        "rules of 5bca2e6, before any later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_36.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30s",
        "written by a thirty-seventh writer who never read the rules nor any other set (diabetes and hormones, "
        "kidney disease and dialysis, older adults with many medicines, falls and caregivers); measured once with "
        "the rules of 5bca2e6, before any later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_37.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30t",
        "written by a thirty-eighth writer who never read the rules nor any other set (cancer care: chemotherapy, "
        "radiotherapy, surgery and survivorship; palliative and end-of-life care); measured once with the rules of "
        "74afd4b, before any later change, totals only, frozen; its sentences were printed once while it was "
        "converted, so its errors were read at once, in the round of sides, counts and reach: a development set "
        "now",
        SENTENCE_SET.with_name("fidelity_heldout_38.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30u",
        "written by a thirty-ninth writer who never read the rules nor any other set (asthma, COPD, sleep apnoea, "
        "recovery from pneumonia; eczema, psoriasis, food and drug allergies, adrenaline pens); measured once with "
        "the rules of 74afd4b, before any later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_39.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30v",
        "written on 2026-12-01 by a fortieth writer who never read the rules nor any other set (parents speaking "
        "for their child: fevers and ear infections, asthma, eczema, feeding and growth, constipation, ADHD "
        "medicines, seizures, type 1 diabetes, vaccines, sleep and behaviour); measured once with the rules of "
        "3668f43, before any later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_40.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30w",
        "written on 2026-12-01 by a forty-first writer who never read the rules nor any other set (recovery after "
        "surgery and hospital stays: hernia, gallbladder, appendix, bowel surgery and stomas, weight-loss surgery, "
        "joint replacement, spinal surgery, heart bypass); measured once with the rules of 3668f43, before any "
        "later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_41.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30x",
        "written on 2026-12-01 by a forty-second writer who never read the rules nor any other set (infections and "
        "sexual health: urinary infections, pneumonia, cellulitis, shingles, Lyme disease, travel, HIV and PrEP, "
        "hepatitis, sexually transmitted infections, contraception, antibiotic courses); measured once with the "
        "rules of 438dc1c, before any later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_42.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30y",
        "written on 2026-12-01 by a forty-third writer who never read the rules nor any other set (eyes, ears, "
        "nose, throat and teeth: glaucoma, cataract and retina surgery, hearing aids, vertigo, sinuses, tonsil and "
        "thyroid surgery, dental extractions and implants); measured once with the rules of 438dc1c, before any "
        "later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_43.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-11-30z",
        "written on 2026-12-01 by a forty-fourth writer who never read the rules nor any other set (bones, joints "
        "and muscles: osteoarthritis and joint injections, rheumatoid arthritis, gout, lupus, osteoporosis and "
        "fractures, back and neck pain, sports injuries, physiotherapy, painkillers); measured once with the rules "
        "of ecdcb4c, before any later change, and after the round of lifted restrictions, asked rates and held "
        "things, totals only, frozen; its sentences were printed once on 2026-12-01 in a review of the change "
        "after those measurements, so it counts as read: a development set from the next round",
        SENTENCE_SET.with_name("fidelity_heldout_44.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-12-01",
        "written on 2026-12-01 by a forty-fifth writer who never read the rules nor any other set (adult mental "
        "health and substance use: depression, anxiety and panic, bipolar disorder and lithium, ADHD, eating "
        "disorders, alcohol and drugs, stopping smoking, methadone and buprenorphine, sleep, support at home and at "
        "work); measured once with the rules of ecdcb4c, before any later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_45.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-12-01b",
        "written on 2026-12-01 by a forty-sixth writer who never read the rules nor any other set (follow-up calls "
        "after an emergency department visit: chest pain, a fall with a head injury, asthma attacks, allergic "
        "reactions, stitched cuts, a wrist in a cast, kidney stones, migraine, food poisoning, a child's fever); "
        "measured once with the rules of b376ea5, before any later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_46.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-12-01c",
        "written on 2026-12-01 by a forty-seventh writer who never read the rules nor any other set (blood and "
        "immune conditions: anaemia, sickle cell disease, haemophilia, clots and blood thinners, lymphoma and "
        "leukaemia follow-up, low platelets, transfusions, HIV care, immunoglobulin infusions, life without a "
        "spleen); measured once with the rules of b376ea5, before any later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_47.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-12-01d",
        "written on 2026-12-01 by a forty-eighth writer who never read the rules nor any other set (sleep: "
        "insomnia, sleep apnoea and CPAP, restless legs, shift work, sleeping tablets, snoring, daytime sleepiness, "
        "waking at night to pass urine); measured once with the rules of f086308, before any later change, totals "
        "only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_48.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-12-01e",
        "written on 2026-12-01 by a forty-ninth writer who never read the rules nor any other set (travel and "
        "occupational health: travel vaccines, malaria tablets, altitude, jet lag, injuries at work, back pain from "
        "lifting, noise, chemical exposure, fitness-to-work notes, night shifts); measured once with the rules of "
        "f086308, before any later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_49.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-12-01f",
        "written on 2026-12-01 by a fiftieth writer who never read the rules nor any other set (rehabilitation: "
        "after a stroke, a joint replacement, a heart attack, a spinal injury or an amputation, lung rehabilitation, "
        "therapy at home, going back to driving and work); measured once with the rules of a065328, before any "
        "later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_50.jsonl"),
    ),
    SentenceSet(
        "outside-written 2026-12-01g",
        "written on 2026-12-01 by a fifty-first writer who never read the rules nor any other set (older adults "
        "and their carers: memory problems, falls, many medicines, hearing and sight, continence, frailty, a carer "
        "speaking for a parent, home help and care homes); measured once with the rules of a065328, before any "
        "later change, totals only, frozen",
        SENTENCE_SET.with_name("fidelity_heldout_51.jsonl"),
    ),
)
"""The sets ``bedside sim fidelity-eval`` measures by default, each reported apart (issue 45)."""


def shipped_outside_set(path: Path) -> SentenceSet | None:
    """The shipped held-out set whose file ``path`` is a copy of (the same bytes, wherever it lies), or None: its
    sentences stay unread, so ``fidelity-eval --show-errors`` lists none of them. A development set's errors are
    read already and are listed, as ``guard-eval`` lists a development set's."""
    data = Path(path).read_bytes()
    return next((s for s in BUILTIN_SENTENCE_SETS if s.held_out and Path(s.path).read_bytes() == data), None)


@dataclass(frozen=True)
class KindLeftOut:
    """The combined checker without one kind of conflict rule, on the contradictions that kind's rules catch
    (issue 45): how many the other rules still catch, how many become uncertain, and how many pass. A checker
    whose kinds only catch what they were written for will miss almost all of them; that is the figure to expect
    for a kind of contradiction no rule was written for."""

    kind: str
    caught: int
    """Hand-labelled contradictions the whole checker labels contradicted by this kind of conflict."""
    still_caught: int
    uncertain: int

    @property
    def missed(self) -> int:
        return self.caught - self.still_caught - self.uncertain


def leave_one_kind_out(items: Sequence[FidelityItem]) -> list[KindLeftOut]:
    """For each conflict kind the whole combined checker finds among ``items``' true contradictions, the same
    sentences relabelled by the checker without that kind's rules."""
    rules = ContradictionRules()
    by_kind: dict[str, list[tuple[FidelityItem, int]]] = {}
    for item in items:
        found = label_combined(item.sentences, item.facts, item.clinician_said, rules=rules)
        for index, (gold, label) in enumerate(zip(item.labels, found, strict=True)):
            if gold == "contradicted" and label.conflict is not None:
                by_kind.setdefault(label.conflict.kind, []).append((item, index))
    results = []
    for kind in sorted(by_kind):
        blind = rules.leaving_out(frozenset({kind}))
        labels = [
            label_combined(item.sentences, item.facts, item.clinician_said, rules=blind)[index].label
            for item, index in by_kind[kind]
        ]
        results.append(KindLeftOut(kind, len(labels), labels.count("contradicted"), labels.count("uncertain")))
    return results


@dataclass
class CheckerEvaluation:
    """One checker's per-label figures on each half of a labelled set (``dev``, ``test``) and on all of it."""

    checker: Checker
    name: str
    by_split: dict[str, FidelityValidation]
    labels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The checker's label for each sentence, by item id (items it gave no valid answer for are absent)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "checker": self.checker,
            "name": self.name,
            "splits": {split: result.as_dict() for split, result in self.by_split.items()},
        }


def splits_of(items: Sequence[FidelityItem]) -> dict[str, list[FidelityItem]]:
    """The set's halves in order (dev, test, then any other named split), and ``all``."""
    named = sorted({item.split for item in items if item.split}, key=lambda s: (s != "dev", s != "test", s))
    out = {split: [item for item in items if item.split == split] for split in named}
    out["all"] = list(items)
    return out


async def evaluate_checkers(
    items: Sequence[FidelityItem],
    checkers: Sequence[Checker],
    judge: Model | None = None,
    *,
    settings: GenerationSettings | None = None,
    concurrency: int = 4,
    verify: bool = False,
) -> list[CheckerEvaluation]:
    """Each checker's labels on every item, compared with the hand labels per split: what ``bedside sim
    fidelity-eval`` prints. The llm checker needs ``judge``; so does the combined one with ``verify`` (its
    uncertain sentences asked of the judge); the others call no model."""
    results = []
    for checker in checkers:
        checked = verify and checker == "combined"
        predicted, failed = await predict_fidelity(
            items, judge, settings=settings, concurrency=concurrency, checker=checker, verify=checked
        )
        name = checker_name(checker, judge, verify=checked)
        by_split = {}
        for split, chosen in splits_of(items).items():
            ids = {item.id for item in chosen}
            by_split[split] = compare(
                chosen,
                {k: v for k, v in predicted.items() if k in ids},
                model=name,
                failed={k: v for k, v in failed.items() if k in ids},
            )
        results.append(CheckerEvaluation(checker, name, by_split, {k: tuple(v) for k, v in predicted.items()}))
    return results
