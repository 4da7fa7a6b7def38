"""Content matchers for EditJudge: an LLM judge, an offline embedding matcher and a lexical baseline.

The LLM judge is the paper's: given one reference sentence and the whole draft it answers with the matching
draft content verbatim, or NO MATCH. Models paraphrase, so an answer that is not in the draft word for word is
aligned to the closest span of the draft (rapidfuzz partial alignment, snapped to word boundaries) and flagged.

Being a substring of the draft is not enough for a span to count: a judge talked into it (a patient's message
copied into the draft can carry instructions) could answer the whole draft, which makes every reference
sentence an expected match and leaves nothing to delete (Edit-F1 1), or a single letter. A span, verbatim or
aligned, counts only when

- it is one *unit* of the draft: a whole sentence (:func:`bedside.text.sentences.split_sentences`) or a run of
  whole clauses inside one sentence. Clauses are the pieces of a sentence cut after ``;``, ``:`` or ``,``, at a
  spaced dash, and before a coordinating conjunction (and, but, or, nor, so, yet), which the clause may keep or
  drop; surrounding punctuation and spaces may be left off. The prompt asks for "the smallest part of the draft
  that carries the meaning (usually one sentence)", and the offline matchers match one sentence at most, so a
  span over two sentences is not an answer to the task either; and
- it is big enough to carry some of what the reference sentence says: its distinct content words (words
  outside a short stop list) number at least ``min_content_share`` (default 0.25) of the sentence's. This is a
  size ratio, not word overlap, because the judge exists to find paraphrases: 6 of the 144 human-marked matches
  shipped with bedside share no content word with their sentence (every one has a ratio of at least 0.71). The
  default is a floor against degenerate answers, not a second judge: whether a draft clause that says half of
  a compound sentence matches it is the judge's call (the demo's "Please keep taking it for now." for a
  sentence that goes on to a phone call and a switch of medicine has 3 content words of 11, 0.27), while a
  one-word greeting or fragment is refused for any sentence of five or more content words.

Any other answer is the matcher failing: flagged, with the reason in :attr:`Match.failure`, and NO MATCH for
the counts (the sentence is an expected addition), never a match. So is an answer that aligns to nothing well
(score below ``min_alignment``). Failures are counted per draft (``matcher_failures`` in the stored judgement).

The offline matchers compare the reference sentence with each draft sentence and match the most similar one
when its similarity reaches a threshold: MiniLM cosine for ``embedding`` (threshold chosen on the labelled
match annotations shipped with bedside, see :mod:`bedside.tasks.drafting.validation`), ROUGE-1 F (stemmed) for
``lexical``. They match whole draft sentences only, never part of one.

Every matcher runs behind the clinical-safety guard (:mod:`bedside.tasks.drafting.guard`) unless told not to:
with ``guard="reject"`` (the default) a candidate that contradicts the reference sentence in medication action,
drug, dose or number, negation, laterality or time frame is not a match (an offline matcher then tries its next
most similar draft sentence above the threshold; the LLM judge's answer becomes NO MATCH); with ``"flag"`` the
match stands, flagged, with the conflicts listed; ``"off"`` is the bare matcher. Where the guard's rules cannot
vouch for a candidate (*uncertain*: a small local change they have no reading for, the same words in another
order, a sentence they cannot read) a configured verifier decides, or the ``uncertain`` option (``keep``, the
default, or ``reject``); such decisions carry the reason and are counted (see :class:`GuardedMatcher`).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bedside.prompts import render_chat
from bedside.tasks.drafting.editjudge import STOP_WORDS, Match, Matcher, content_words
from bedside.tasks.drafting.guard import UNCERTAIN_POLICIES, ClinicalGuard, GuardMode, UncertainPolicy, default_guard
from bedside.text.sentences import split_sentences

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from bedside.judges.verifier import MeaningVerifier
    from bedside.llm import ChatMessage, Completion
    from bedside.retrieval.embeddings import MiniLMEmbedder

MATCH_TEMPLATE = "drafting/editjudge_match.j2"  # 0-shot
FEWSHOT_TEMPLATE = "drafting/editjudge_match_fewshot.j2"  # 5-shot, the examples written for bedside
# Chosen behind the guard on bedside's 309 labelled match annotations by maximising agreement (`bedside drafting
# calibrate`, which also chooses them on your own annotations): embedding 0.6045 (agreement 0.91, leave one
# draft out 0.91), lexical 0.3267 (0.91; 0.89). On the first 59 annotations alone, without the guard, they were
# 0.52 and 0.26: the threshold moves with the data, which is why the trained matcher exists.
EMBEDDING_THRESHOLD = 0.60
LEXICAL_THRESHOLD = 0.33


class SentenceMatcher(ABC):
    """Matches the single most similar draft sentence when its similarity reaches ``threshold``."""

    name: str

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold

    @abstractmethod
    def similarities(self, sentence: str, candidates: Sequence[str]) -> list[float]: ...

    def ranked(self, sentence: str, draft: str) -> list[tuple[str, float]]:
        """The draft's sentences with their similarity to ``sentence``, most similar first (stable on ties)."""
        candidates = [s.text for s in split_sentences(draft)]
        if not candidates:
            return []
        scores = self.similarities(sentence, candidates)
        order = sorted(range(len(candidates)), key=lambda i: -scores[i])
        return [(candidates[i], scores[i]) for i in order]

    def best(self, sentence: str, draft: str) -> tuple[str | None, float]:
        """The draft sentence most similar to ``sentence`` and its similarity (None, 0.0 for an empty draft)."""
        ranked = self.ranked(sentence, draft)
        return ranked[0] if ranked else (None, 0.0)

    async def match(self, sentence: str, draft: str) -> Match:
        span, score = self.best(sentence, draft)
        return Match(span if span is not None and score >= self.threshold else None, score=score)


class LexicalMatcher(SentenceMatcher):
    name = "lexical"

    def __init__(self, threshold: float = LEXICAL_THRESHOLD) -> None:
        super().__init__(threshold)
        from rouge_score import rouge_scorer

        self._scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)

    def similarities(self, sentence: str, candidates: Sequence[str]) -> list[float]:
        return [self._scorer.score(sentence, c)["rouge1"].fmeasure for c in candidates]


class EmbeddingMatcher(SentenceMatcher):
    name = "embedding"

    def __init__(self, threshold: float = EMBEDDING_THRESHOLD, embedder: MiniLMEmbedder | None = None) -> None:
        super().__init__(threshold)
        self._embedder = embedder
        # The embedder keeps every text's vector, so a draft matched against each sentence of its reference is
        # embedded once, and so is a reference seen again with another model's draft.

    def _embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        from bedside.retrieval.embeddings import default_embedder

        if self._embedder is None:
            self._embedder = default_embedder()
        return self._embedder.embed(texts)

    def similarities(self, sentence: str, candidates: Sequence[str]) -> list[float]:
        vectors = self._embed([sentence, *candidates])
        return [float(v) for v in vectors[1:] @ vectors[0]]


Generate = Callable[[list["ChatMessage"]], Awaitable["Completion"]]
_QUOTES = "\"'`“”‘’"
_NO_MATCH_ANSWER = re.compile(r"^\W*no[\s_-]*match\W*$", re.IGNORECASE)

MIN_CONTENT_SHARE = 0.25
CONJUNCTIONS = ("and", "but", "or", "nor", "so", "yet")
_CONJUNCTION = "(?:" + "|".join(CONJUNCTIONS) + r")\b"
_CLAUSE_CUT = re.compile(rf"[;:,]\s+|\s+[-–—]+\s+|\s+(?={_CONJUNCTION})", re.IGNORECASE)
_LEADING_GAP = re.compile(rf"[\W_]*(?:{_CONJUNCTION}[\W_]*)?", re.IGNORECASE)
_TRAILING_GAP = re.compile(r"[\W_]*")


def content_share(span: str, sentence: str) -> float:
    """The span's distinct content words as a share of the sentence's, at most 1 (1 when the sentence has none)."""
    wanted = len(content_words(sentence))
    return min(1.0, len(content_words(span)) / wanted) if wanted else 1.0


def _unit_bounds(sentence: str) -> list[int]:
    bounds = {0, len(sentence)}
    for cut in _CLAUSE_CUT.finditer(sentence):
        bounds.update((cut.start(), cut.end()))
    return sorted(bounds)


def is_unit(span: str, draft: str) -> bool:
    """Whether some occurrence of ``span`` in ``draft`` is a whole sentence or whole clauses of one sentence."""
    span = span.strip()
    if not span:
        return False
    sentences = split_sentences(draft)
    start = draft.find(span)
    while start != -1:
        end = start + len(span)
        for sentence in sentences:
            if sentence.start <= start and end <= sentence.end:
                a, b = start - sentence.start, end - sentence.start
                bounds = _unit_bounds(sentence.text)
                if any(x <= a and _LEADING_GAP.fullmatch(sentence.text[x:a]) for x in bounds) and any(
                    x >= b and _TRAILING_GAP.fullmatch(sentence.text[b:x]) for x in bounds
                ):
                    return True
        start = draft.find(span, start + 1)
    return False


def span_failure(span: str, sentence: str, draft: str, min_content_share: float = MIN_CONTENT_SHARE) -> str | None:
    """Why ``span`` cannot count as the draft's match for ``sentence``, or None when it can (module docstring)."""
    if not is_unit(span, draft):
        return "not a whole sentence or clause of the draft"
    share = content_share(span, sentence)
    if share < min_content_share:
        return f"too little of the sentence's content (share {share:.2f} < {min_content_share:.2f})"
    return None


class LLMMatcher:
    """The paper's content-level judge, as a prompt to any model (``generate`` sends one chat).

    ``min_content_share``: how much of the reference sentence's content a span must be able to carry (see the
    module docstring for the measure and the default).
    """

    name = "llm"

    def __init__(
        self,
        generate: Generate,
        *,
        template: str | Path = MATCH_TEMPLATE,
        min_alignment: float = 60.0,
        min_content_share: float = MIN_CONTENT_SHARE,
    ):
        self._generate = generate
        self.template = template
        self.min_alignment = min_alignment
        self.min_content_share = min_content_share

    async def match(self, sentence: str, draft: str) -> Match:
        completion = await self._generate(render_chat(self.template, sentence=sentence, draft=draft))
        return read_match_answer(
            completion.text,
            draft,
            sentence=sentence,
            min_alignment=self.min_alignment,
            min_content_share=self.min_content_share,
        )


def read_match_answer(
    answer: str,
    draft: str,
    *,
    sentence: str | None = None,
    min_alignment: float = 60.0,
    min_content_share: float = MIN_CONTENT_SHARE,
) -> Match:
    """A judge's answer as a :class:`Match`: NO MATCH, a verbatim span, the closest draft span (flagged), or a
    failure (flagged, no span). Without ``sentence`` the content-share rule cannot apply; the unit rule does."""
    text = answer.strip()
    if _NO_MATCH_ANSWER.match(text):
        return Match(None)
    unquoted = text.strip(_QUOTES).strip()
    for candidate in (text, unquoted):
        if candidate and candidate in draft:
            found = Match(candidate, answer=None if candidate == text else text)
            return _checked(found, candidate, sentence, draft, min_content_share)
    if not unquoted:
        return Match(None, flagged=True, answer=text, failure="empty answer")
    span, score = align(unquoted, draft)
    if span is None or score < min_alignment:
        return Match(None, flagged=True, answer=text, score=score, failure="answer not found in the draft")
    return _checked(Match(span, flagged=True, answer=text, score=score), span, sentence, draft, min_content_share)


def _checked(found: Match, span: str, sentence: str | None, draft: str, min_content_share: float) -> Match:
    """``found`` (whose span is ``span``) if it may count as a match; else a flagged failure with no span."""
    if sentence is None:
        failure = None if is_unit(span, draft) else "not a whole sentence or clause of the draft"
    else:
        failure = span_failure(span, sentence, draft, min_content_share)
    if failure is None:
        return found
    return Match(None, flagged=True, answer=found.answer or span, score=found.score, failure=failure)


def align(text: str, draft: str) -> tuple[str | None, float]:
    """The span of ``draft`` closest to ``text`` (snapped out to whole words) and rapidfuzz's 0–100 score."""
    from rapidfuzz import fuzz

    if not draft.strip():
        return None, 0.0
    alignment = fuzz.partial_ratio_alignment(text, draft)
    if alignment is None:
        return None, 0.0
    start, end = alignment.dest_start, alignment.dest_end
    while start > 0 and not draft[start - 1].isspace():
        start -= 1
    while end < len(draft) and not draft[end].isspace():
        end += 1
    span = draft[start:end].strip()
    return (span or None), alignment.score


class GuardedMatcher:
    """Any matcher behind the clinical-safety guard (``mode`` reject or flag; see the module docstring).

    Where the guard cannot vouch for a candidate (its reading says *uncertain*, :mod:`bedside.text.alignment`)
    a ``verifier`` decides if one is given (with its scope ``all``, every pair the rules pass too); otherwise
    ``uncertain`` does: ``keep`` lets the matcher's decision
    stand and ``reject`` refuses the candidate like a conflict. Either way the decision carries the reason
    (:attr:`Match.uncertain`) and is counted (``guard_uncertain``), apart from ``flagged`` (which keeps its
    meaning: an LLM answer aligned to the draft, or a conflict kept in flag mode).

    The name stays the inner matcher's in the default configuration (reject, keep, no verifier: what tables
    show as ``embedding``); any other is named for it (``embedding[guard=flag]``, ``embedding[uncertain=reject]``,
    ``embedding[verified]``) so different configurations are never pooled in one table row.
    """

    def __init__(
        self,
        inner: Matcher,
        guard: ClinicalGuard | None = None,
        mode: GuardMode = "reject",
        *,
        uncertain: UncertainPolicy = "keep",
        verifier: MeaningVerifier | None = None,
    ) -> None:
        if mode not in ("reject", "flag"):
            raise ValueError(f"guard mode {mode!r}: choose reject or flag (or use the bare matcher for off)")
        if uncertain not in UNCERTAIN_POLICIES:
            raise ValueError(f"uncertain {uncertain!r}: choose one of {', '.join(UNCERTAIN_POLICIES)}")
        self.inner = inner
        self.guard = guard or default_guard()
        self.mode = mode
        self.uncertain = uncertain
        self.verifier = verifier
        tags = [f"guard={mode}"] * (mode != "reject") + [f"uncertain={uncertain}"] * (uncertain != "keep")
        if verifier is not None:
            tags.append("verified" if verifier.scope == "uncertain" else f"verified={verifier.scope}")
        self.name = inner.name + (f"[{','.join(tags)}]" if tags else "")

    async def _judge(self, sentence: str, span: str) -> tuple[tuple[str, ...], str | None]:
        """The conflicts between ``sentence`` and ``span`` (a verifier's "different" is one), and why the pair is
        still uncertain (None once the rules or the verifier decided). A rule's conflict is never sent to the
        verifier; a pair the rules pass is, where its scope is ``all``."""
        reading = self.guard.read(sentence, span)
        if reading.conflicts:
            return tuple(str(c) for c in reading.conflicts), None
        if self.verifier is None or (reading.uncertain is None and self.verifier.scope == "uncertain"):
            return (), reading.uncertain
        verdict = await self.verifier.verify(sentence, span)
        why = reading.uncertain or "the guard's rules found no conflict"
        if verdict.same is None:
            return (), f"{why}; the verifier gave no verdict ({verdict.answer[:80]!r})"
        return (() if verdict.same else (f"verifier: different meaning ({why})",)), None

    async def match(self, sentence: str, draft: str) -> Match:
        if isinstance(self.inner, SentenceMatcher):
            return await self._match_sentences(self.inner, sentence, draft)
        found = await self.inner.match(sentence, draft)
        if found.span is None:
            return found
        conflicts, uncertain = await self._judge(sentence, found.span)
        refused = bool(conflicts) or (uncertain is not None and self.uncertain == "reject")
        if not conflicts and uncertain is None:
            return found
        if self.mode == "flag" or not refused:  # flagged for a conflict; an uncertain one is marked, and counted
            return replace(found, flagged=found.flagged or bool(conflicts), conflicts=conflicts, uncertain=uncertain)
        answer = found.answer or found.span
        return Match(
            None, flagged=found.flagged, answer=answer, score=found.score, conflicts=conflicts, uncertain=uncertain
        )

    @property
    def threshold(self) -> float:
        if not isinstance(self.inner, SentenceMatcher):
            raise TypeError(f"the {self.inner.name} matcher has no similarity threshold")
        return self.inner.threshold

    def best(self, sentence: str, draft: str) -> tuple[str | None, float]:
        """The most similar draft sentence that passes the guard (reject mode; an uncertain one passes unless
        ``uncertain`` is reject: no verifier is asked here), for calibrating the threshold."""
        if not isinstance(self.inner, SentenceMatcher):
            raise TypeError(f"the {self.inner.name} matcher has no similarity threshold")
        ranked = self.inner.ranked(sentence, draft)
        for span, score in ranked:
            reading = self.guard.read(sentence, span)
            refused = bool(reading.conflicts) or (reading.uncertain is not None and self.uncertain == "reject")
            if self.mode == "flag" or not refused:
                return span, score
        return None, (ranked[0][1] if ranked else 0.0)

    async def _match_sentences(self, inner: SentenceMatcher, sentence: str, draft: str) -> Match:
        ranked = inner.ranked(sentence, draft)
        if not ranked:
            return Match(None, score=0.0)
        rejected: tuple[str, ...] = ()
        doubt: str | None = None
        for span, score in ranked:
            if score < inner.threshold:
                break
            conflicts, uncertain = await self._judge(sentence, span)
            if not conflicts and uncertain is None:
                return Match(span, score=score)
            refused = bool(conflicts) or self.uncertain == "reject"
            if self.mode == "flag" or not refused:
                return Match(span, flagged=bool(conflicts), score=score, conflicts=conflicts, uncertain=uncertain)
            rejected = rejected or tuple(f"{c} (in: {span})" for c in conflicts)
            doubt = doubt or (f"{uncertain} (in: {span})" if uncertain else None)
        return Match(None, score=ranked[0][1], conflicts=rejected, uncertain=doubt)


__all__ = [
    "EMBEDDING_THRESHOLD",
    "FEWSHOT_TEMPLATE",
    "LEXICAL_THRESHOLD",
    "MIN_CONTENT_SHARE",
    "STOP_WORDS",
    "EmbeddingMatcher",
    "GuardedMatcher",
    "LLMMatcher",
    "LexicalMatcher",
    "SentenceMatcher",
    "align",
    "content_share",
    "content_words",
    "is_unit",
    "read_match_answer",
    "span_failure",
]
