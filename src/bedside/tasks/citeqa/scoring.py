"""ArchEHR-QA scoring: factuality of the citations and relevance of the answer text.

Factuality (as the official 2025 scorer computes it). For each case, the cited ids C (the union over the
answer's sentences) are compared with the key's gold ids G: strict G = essential sentences; lenient G =
essential + supplementary. tp = |C ∩ G|, fp = |C − G|, fn = |G − C|; precision = tp/(tp+fp), recall =
tp/(tp+fn), F1 their harmonic mean, each 0 where its denominator is 0. Macro = the mean of the per-case values;
micro = the same formulas on tp/fp/fn pooled over cases. Overall factuality = strict micro F1.

Citations of ids the case does not have are errors: they can never be correct (no key labels them), so they
stay in C as false positives, exactly as the official scorer counts them, and every one is also reported
(:attr:`CaseScore.invalid`, :attr:`CiteQAScores.invalid_citations`, a note per case), so that a submission that
cites ids outside its cases is visible as such rather than only as lower precision. A case's ids are its note
sentences' ids, or, for a case read without its note text (the public dev XML), the ids its key labels (the key
labels every sentence).

The 2026 lenient variant (``lenient="2026"``, from the 2026 task's evidence scorer): supplementary sentences
are neither rewarded nor penalised: they are removed from C, and what remains is scored against the essential
sentences only; a case (or pool) with nothing cited and nothing essential scores 1, one side empty scores 0.

Relevance: the answer (its sentences joined, cut to its first 75 words: split at any whitespace by default,
at plain spaces only with ``parse="official"`` as the official scorer splits; the cut applies to relevance
only, never to the citations) against the reference the official scorer builds: the patient
narrative, a blank line, the clinician's question, a blank line, then the essential sentences one per line (in
note order; the official scorer takes them from a set, so its order is arbitrary). SARI instead uses
source = narrative + clinician question and reference = the essential sentences. Each metric is computed per
case on a 0–100 scale and averaged over cases; overall relevance = the mean of the metrics; the overall score =
the mean of overall factuality and overall relevance. An empty answer scores 0 on every relevance metric.

The official relevance metrics are BLEU, ROUGE-Lsum, SARI, BERTScore, AlignScore and MEDCON. bedside computes
the first three exactly as defined there and substitutes, under their own names, what runs offline:
``semantic`` (cosine of all-MiniLM-L6-v2 sentence vectors) for the two model-based scores, and ``concepts``
(F1 of MeSH disease and drug concepts, 0 when either side has none, as MEDCON does) for MEDCON's UMLS
concepts. Their numbers are not comparable with leaderboard numbers for those metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from bedside.tasks.citeqa.cases import Case, id_order
from bedside.tasks.citeqa.submission import (
    WORD_LIMIT,
    ParsedAnswer,
    ParseMode,
    official_words,
    parse_answer,
)

LenientVariant = Literal["2025", "2026"]

RELEVANCE_METRICS: dict[str, str] = {
    "bleu": "BLEU (sacrebleu, 13a tokens, no smoothing), as the official scorer",
    "rougeLsum": "ROUGE-Lsum F-measure (rouge-score, no stemming), as the official scorer",
    "sari": "SARI (source: narrative + clinician question; reference: essential sentences), as the official scorer",
    "semantic": "cosine of all-MiniLM-L6-v2 sentence vectors x 100: stands in for BERTScore and AlignScore",
    "concepts": "F1 of MeSH disease/drug concepts x 100: stands in for MEDCON (UMLS concepts via QuickUMLS)",
}

STAND_INS: dict[str, str] = {
    "semantic": "BERTScore and AlignScore",
    "concepts": "MEDCON",
}
"""Relevance metrics that substitute offline for official ones (metric → what it stands in for). Wherever one
enters a figure (a mean, the overall score) the figure is marked: it is not comparable with leaderboard numbers."""


@dataclass(frozen=True)
class Counts:
    tp: int
    fp: int
    fn: int


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float


def prf_2025(counts: Counts) -> PRF:
    precision = counts.tp / (counts.tp + counts.fp) if counts.tp + counts.fp else 0.0
    recall = counts.tp / (counts.tp + counts.fn) if counts.tp + counts.fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PRF(precision, recall, f1)


def prf_2026(counts: Counts) -> PRF:
    cited, gold = counts.tp + counts.fp, counts.tp + counts.fn
    if cited == 0 and gold == 0:
        return PRF(1.0, 1.0, 1.0)
    if cited == 0 or gold == 0:
        return PRF(0.0, 0.0, 0.0)
    return prf_2025(counts)


def counts(cited: set[str], gold: set[str]) -> Counts:
    return Counts(len(cited & gold), len(cited - gold), len(gold - cited))


def factuality_counts(case: Case, cited: set[str], lenient: LenientVariant = "2025") -> dict[str, Counts]:
    """tp/fp/fn for ``strict`` and ``lenient`` gold sets of one case."""
    essential = set(case.labelled("essential"))
    supplementary = set(case.labelled("supplementary"))
    lenient_counts = (
        counts(cited, essential | supplementary) if lenient == "2025" else counts(cited - supplementary, essential)
    )
    return {"strict": counts(cited, essential), "lenient": lenient_counts}


def question_text(case: Case) -> str:
    return f"{case.narrative}\n\n{case.clinician_question}"


def essential_text(case: Case) -> str:
    return "\n".join(case.text_of(i) for i in case.labelled("essential"))


def relevance_reference(case: Case) -> str:
    return f"{question_text(case)}\n\n{essential_text(case)}"


def limit_words(text: str, limit: int = WORD_LIMIT) -> str:
    """The first ``limit`` words, split at any whitespace (the default parse's cut)."""
    words = text.split()
    return " ".join(words[:limit]) if len(words) > limit else text


def limit_words_official(text: str, limit: int = WORD_LIMIT) -> str:
    """The first ``limit`` words as the official scorer cuts them: split at plain spaces only."""
    words = official_words(text)
    return " ".join(words[:limit]) if len(words) > limit else text


def relevance_scores(
    case: Case, answer_text: str, metrics: Sequence[str] = tuple(RELEVANCE_METRICS)
) -> dict[str, float]:
    """Each relevance metric (0–100) of one answer text (already cut to the word limit)."""
    unknown = [m for m in metrics if m not in RELEVANCE_METRICS]
    if unknown:
        raise ValueError(f"unknown relevance metric(s) {unknown}; known: {', '.join(RELEVANCE_METRICS)}")
    if not answer_text.strip():
        return dict.fromkeys(metrics, 0.0)
    reference = relevance_reference(case)
    return {name: _METRICS[name](case, answer_text, reference) for name in metrics}


def _bleu(case: Case, answer: str, reference: str) -> float:
    from bedside.metrics import sentence_bleu

    return sentence_bleu(answer, [reference], smooth="none")


def _rouge(case: Case, answer: str, reference: str) -> float:
    from bedside.metrics import sentence_rouge

    return 100 * sentence_rouge(answer, [reference], resplit=False)["rougeLsum"]


def _sari(case: Case, answer: str, reference: str) -> float:
    from bedside.metrics import sentence_sari

    return sentence_sari(question_text(case), answer, [essential_text(case)])


def _semantic(case: Case, answer: str, reference: str) -> float:
    from bedside.metrics import semantic_similarity

    return 100 * semantic_similarity([answer], [reference])[0]


def _concepts(case: Case, answer: str, reference: str) -> float:
    from bedside.metrics import MeshExtractor, concept_f1

    f1 = concept_f1(answer, reference, MeshExtractor()).f1
    return 100 * f1 if f1 is not None else 0.0


_METRICS: dict[str, Callable[[Case, str, str], float]] = {
    "bleu": _bleu,
    "rougeLsum": _rouge,
    "sari": _sari,
    "semantic": _semantic,
    "concepts": _concepts,
}


@dataclass(frozen=True)
class CaseScore:
    case_id: str
    answer: ParsedAnswer
    counts: dict[str, Counts]
    prf: dict[str, PRF]
    relevance: dict[str, float]
    truncated: bool
    invalid: tuple[str, ...] = ()  # cited ids the case does not have: errors, counted as false positives
    relevance_text: str = ""  # the answer text the relevance metrics saw (after the word limit)


@dataclass
class CiteQAScores:
    cases: list[CaseScore]
    lenient: LenientVariant
    factuality: dict[str, dict[str, PRF]]  # strict|lenient → micro|macro → P/R/F1 (0–1)
    relevance: dict[str, float]  # metric → mean over cases (0–100); empty when not computed
    notes: list[str] = field(default_factory=list)
    parse: ParseMode = "default"

    @property
    def invalid_citations(self) -> dict[str, tuple[str, ...]]:
        """Case id → the ids it cites that the case does not have, for the cases that cite any."""
        return {r.case_id: r.invalid for r in self.cases if r.invalid}

    @property
    def overall_factuality(self) -> float:
        return 100 * self.factuality["strict"]["micro"].f1

    @property
    def overall_relevance(self) -> float | None:
        return sum(self.relevance.values()) / len(self.relevance) if self.relevance else None

    @property
    def stand_ins(self) -> list[str]:
        """The stand-in metrics (:data:`STAND_INS`) that overall relevance and the overall score average in."""
        return [name for name in self.relevance if name in STAND_INS]

    @property
    def overall(self) -> float | None:
        relevance = self.overall_relevance
        return None if relevance is None else (self.overall_factuality + relevance) / 2

    def leaderboard(self) -> dict[str, float | None]:
        """The official leaderboard's fields (0–100), substitute metrics under their own names."""
        board: dict[str, float | None] = {}
        for variation, kinds in self.factuality.items():
            for kind, prf in kinds.items():
                board[f"{variation}_{kind}_precision"] = 100 * prf.precision
                board[f"{variation}_{kind}_recall"] = 100 * prf.recall
                board[f"{variation}_{kind}_f1"] = 100 * prf.f1
        board["overall_factuality_score"] = self.overall_factuality
        board.update(self.relevance)
        board["overall_relevance_score"] = self.overall_relevance
        board["overall_score"] = self.overall
        return board


def case_ids(case: Case) -> set[str] | None:
    """The ids a citation of ``case`` may name; None when neither note sentences nor a key say."""
    if case.sentences:
        return set(case.sentence_ids)
    return set(case.relevance) if case.relevance else None


def score_answers(
    cases: Sequence[Case],
    answers: Mapping[str, str | ParsedAnswer],
    *,
    lenient: LenientVariant = "2025",
    metrics: Sequence[str] | None = tuple(RELEVANCE_METRICS),
    word_limit: int = WORD_LIMIT,
    parse: ParseMode = "default",
) -> CiteQAScores:
    """Score submitted answers (case id → answer text, or an answer already parsed) against the cases' keys.

    A :class:`ParsedAnswer` is how a system's structured answer comes in: its citations are the citation field
    the system produced, never anything read out of the statements' text.

    Every case must be answered and every answer must belong to a case (as the official scorer requires).
    ``metrics=None`` or ``()`` skips relevance; so does a case without note sentences, with a note saying so.

    ``parse`` says how answer texts are read and cut to the word limit (see :mod:`.submission`). With
    ``"official"`` an answer without any citation is an error, as the official scorer refuses the submission
    then; an answer with citations but no text, on which it crashes, scores as an empty answer (relevance 0)
    with a note. A :class:`ParsedAnswer` is cut at any whitespace whatever ``parse`` says: a system's
    statements have their whitespace normalised to single spaces, so both cuts agree on them.
    """
    by_id = {c.id: c for c in cases}
    missing, extra = sorted(set(by_id) - set(answers)), sorted(set(answers) - set(by_id))
    if missing or extra:
        parts = [f"no answer for case(s) {missing}"] if missing else []
        parts += [f"answers for case(s) not in the cases file {extra}"] if extra else []
        raise ValueError("; ".join(parts))
    unkeyed = [c.id for c in cases if c.relevance is None]
    if unkeyed:
        raise ValueError(f"case(s) {unkeyed} have no key; pass the key file")
    notes: list[str] = []
    metrics = list(metrics or [])
    textless = [c.id for c in cases if not c.sentences]
    if metrics and textless:
        notes.append(f"relevance not scored: case(s) {textless} have no note sentences in the cases file")
        metrics = []
    rows = []
    for case in cases:
        answer = answers[case.id]
        parsed = parse_answer(answer, parse, word_limit=word_limit) if isinstance(answer, str) else answer
        cited = parsed.citations
        if parse == "official" and isinstance(answer, str) and not cited:
            raise ValueError(
                f"case {case.id}: the answer cites nothing, and the official scorer refuses a submission with such "
                "an answer (--parse default scores it 0)"
            )
        known = case_ids(case)
        unknown = sorted(cited - known, key=id_order) if known is not None else []
        if unknown:
            notes.append(
                f"case {case.id}: error: cites ids the case does not have {unknown} "
                "(counted as false positives, never as correct)"
            )
        notes.extend(f"case {case.id}: {note}" for note in parsed.notes)
        case_counts = factuality_counts(case, cited, lenient)
        rule = prf_2025 if lenient == "2025" else prf_2026
        prf = {"strict": prf_2025(case_counts["strict"]), "lenient": rule(case_counts["lenient"])}
        cut = limit_words_official if parse == "official" and isinstance(answer, str) else limit_words
        text = cut(parsed.text, word_limit)
        rows.append(
            CaseScore(
                case.id,
                parsed,
                case_counts,
                prf,
                relevance_scores(case, text, metrics) if metrics else {},
                truncated=text != parsed.text,
                invalid=tuple(unknown),
                relevance_text=text,
            )
        )
    factuality: dict[str, dict[str, PRF]] = {}
    for variation in ("strict", "lenient"):
        rule = prf_2026 if variation == "lenient" and lenient == "2026" else prf_2025
        pooled = Counts(*(sum(getattr(r.counts[variation], f) for r in rows) for f in ("tp", "fp", "fn")))
        n = len(rows)
        macro = PRF(
            sum(r.prf[variation].precision for r in rows) / n if n else 0.0,
            sum(r.prf[variation].recall for r in rows) / n if n else 0.0,
            sum(r.prf[variation].f1 for r in rows) / n if n else 0.0,
        )
        factuality[variation] = {"micro": rule(pooled), "macro": macro}
    relevance = {m: sum(r.relevance[m] for r in rows) / len(rows) for m in metrics} if rows and metrics else {}
    return CiteQAScores(rows, lenient, factuality, relevance, notes, parse)
