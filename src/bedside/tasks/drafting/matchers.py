"""Content matchers for EditJudge: an LLM judge, an offline embedding matcher and a lexical baseline.

The LLM judge is the paper's: given one reference sentence and the whole draft it answers with the matching
draft content verbatim, or NO MATCH. Models paraphrase, so an answer that is not in the draft word for word is
aligned to the closest span of the draft (rapidfuzz partial alignment, snapped to word boundaries) and flagged;
an answer that aligns to nothing well (score below ``min_alignment``) counts as NO MATCH, still flagged.

The offline matchers compare the reference sentence with each draft sentence and match the most similar one
when its similarity reaches a threshold: MiniLM cosine for ``embedding`` (threshold chosen on the labelled
match annotations shipped with bedside, see :mod:`bedside.tasks.drafting.validation`), ROUGE-1 F (stemmed) for
``lexical``. They match whole draft sentences only, never part of one.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bedside.prompts import render_chat
from bedside.tasks.drafting.editjudge import Match, Matcher
from bedside.text.sentences import split_sentences

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from bedside.llm import ChatMessage, Completion
    from bedside.retrieval.embeddings import MiniLMEmbedder

MATCH_TEMPLATE = "drafting/editjudge_match.j2"
# Chosen on bedside's 59 labelled match annotations (data/match_annotations.jsonl) by maximising agreement
# (`bedside drafting calibrate`, which also chooses one on your own annotations). In-sample agreement at these
# thresholds: embedding 0.81 (match overlap 0.80), lexical 0.81 (match overlap 0.89).
EMBEDDING_THRESHOLD = 0.52
LEXICAL_THRESHOLD = 0.26
MATCHERS = ("embedding", "lexical", "llm")


class SentenceMatcher(ABC):
    """Matches the single most similar draft sentence when its similarity reaches ``threshold``."""

    name: str

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold

    @abstractmethod
    def similarities(self, sentence: str, candidates: Sequence[str]) -> list[float]: ...

    def best(self, sentence: str, draft: str) -> tuple[str | None, float]:
        """The draft sentence most similar to ``sentence`` and its similarity (None, 0.0 for an empty draft)."""
        candidates = [s.text for s in split_sentences(draft)]
        if not candidates:
            return None, 0.0
        scores = self.similarities(sentence, candidates)
        index = max(range(len(candidates)), key=scores.__getitem__)
        return candidates[index], scores[index]

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
        # A draft is matched against every sentence of its reference: embed its sentences once.
        self._recent: OrderedDict[tuple[str, ...], NDArray[np.float32]] = OrderedDict()

    def _embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        from bedside.retrieval.embeddings import default_embedder

        if self._embedder is None:
            self._embedder = default_embedder()
        return self._embedder.embed(texts)

    def similarities(self, sentence: str, candidates: Sequence[str]) -> list[float]:
        key = tuple(candidates)
        vectors = self._recent.get(key)
        if vectors is None:
            vectors = self._embed(candidates)
            self._recent[key] = vectors
            if len(self._recent) > 32:
                self._recent.popitem(last=False)
        query = self._embed([sentence])[0]
        return [float(v) for v in vectors @ query]


Generate = Callable[[list["ChatMessage"]], Awaitable["Completion"]]
_QUOTES = "\"'`“”‘’"
_NO_MATCH_ANSWER = re.compile(r"^\W*no[\s_-]*match\W*$", re.IGNORECASE)


class LLMMatcher:
    """The paper's content-level judge, as a prompt to any model (``generate`` sends one chat)."""

    name = "llm"

    def __init__(self, generate: Generate, *, template: str | Path = MATCH_TEMPLATE, min_alignment: float = 60.0):
        self._generate = generate
        self.template = template
        self.min_alignment = min_alignment

    async def match(self, sentence: str, draft: str) -> Match:
        completion = await self._generate(render_chat(self.template, sentence=sentence, draft=draft))
        return read_match_answer(completion.text, draft, min_alignment=self.min_alignment)


def read_match_answer(answer: str, draft: str, *, min_alignment: float = 60.0) -> Match:
    """A judge's answer as a :class:`Match`: NO MATCH, a verbatim span, or the closest draft span (flagged)."""
    text = answer.strip()
    if _NO_MATCH_ANSWER.match(text):
        return Match(None)
    unquoted = text.strip(_QUOTES).strip()
    for candidate in (text, unquoted):
        if candidate and candidate in draft:
            return Match(candidate, answer=None if candidate == text else text)
    if not unquoted:
        return Match(None, flagged=True, answer=text)
    span, score = align(unquoted, draft)
    if span is None or score < min_alignment:
        return Match(None, flagged=True, answer=text, score=score)
    return Match(span, flagged=True, answer=text, score=score)


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


def make_matcher(kind: str, generate: Generate | None = None, *, threshold: float | None = None) -> Matcher:
    """A matcher by name; ``llm`` needs ``generate`` (one chat in, one completion out)."""
    if kind == "embedding":
        return EmbeddingMatcher(EMBEDDING_THRESHOLD if threshold is None else threshold)
    if kind == "lexical":
        return LexicalMatcher(LEXICAL_THRESHOLD if threshold is None else threshold)
    if kind == "llm":
        if generate is None:
            raise ValueError("the llm matcher needs a model (a judge role in a run, or -m MODEL on the command line)")
        return LLMMatcher(generate)
    raise ValueError(f"unknown matcher {kind!r}; choose one of {', '.join(MATCHERS)}")


__all__ = [
    "EMBEDDING_THRESHOLD",
    "LEXICAL_THRESHOLD",
    "MATCHERS",
    "EmbeddingMatcher",
    "LLMMatcher",
    "LexicalMatcher",
    "SentenceMatcher",
    "align",
    "make_matcher",
    "read_match_answer",
]
