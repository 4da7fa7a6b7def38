"""EditJudge, content level: how much of a clinician's reply a draft already says, and how much it says extra.

Algorithm 1 of the seed paper, exactly:

1. split the clinician's (reference) reply into sentences;
2. for each reference sentence, a matcher returns the content of the *whole* draft that says the same thing, or
   NO MATCH: a match is an expected match (EM), NO MATCH an expected addition (EA);
3. remove every matched span from the draft; the sentences left are expected deletions (ED).

Precision = EM / (EM + ED) (how much of the draft survives editing), recall = EM / (EM + EA) (how much of the
reference the draft already covers), Edit-F1 their harmonic mean. A ratio whose denominator is 0 is 0.

Choices where the paper is silent, each tested:

- Every reference sentence is matched against the full draft, so two reference sentences may match the same
  draft span; both count as EM and the span is removed once.
- A span claims one occurrence in the draft: the first one not already claimed by an earlier match, or, when
  every occurrence is claimed, the first. A draft that repeats a sentence keeps the repeat as ED unless a second
  reference sentence matches it too.
- Removed spans are cut out and the cut acts as a sentence break, so what is left of a partly matched draft
  sentence counts as one ED sentence of its own; a leftover without a letter or digit (a lone "." or ",") is not
  a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bedside.text.sentences import split_sentences

_HAS_CONTENT = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class Match:
    """A matcher's answer for one reference sentence: the draft span it matched, or None for NO MATCH.

    ``flagged`` marks a span the matcher did not give verbatim (an LLM paraphrasing the draft): it was aligned to
    the closest span of the draft, and a reviewer should look at it. ``answer`` is what the matcher said, when
    that differs from ``span``; ``score`` is the matcher's similarity, where it has one. ``conflicts`` lists what
    the clinical-safety guard found between the sentence and the span (see :mod:`bedside.tasks.drafting.guard`):
    the reason a candidate was rejected, or why a kept match is flagged. ``failure`` says why the matcher's
    answer could not be used at all (a judge answering a fragment, the whole draft, or text not in the draft):
    such an answer is flagged and has no span, so it counts as NO MATCH, and it is counted as a failure.
    """

    span: str | None
    flagged: bool = False
    answer: str | None = None
    score: float | None = None
    conflicts: tuple[str, ...] = ()
    failure: str | None = None
    uncertain: str | None = None
    """Why the guard could not vouch for this decision (it was kept or refused by the ``uncertain`` option, with
    no verifier to decide): counted apart from matches and conflicts."""


class Matcher(Protocol):
    """Finds the content of ``draft`` that says what ``sentence`` says (the paper's content-level judge)."""

    name: str

    async def match(self, sentence: str, draft: str) -> Match: ...


@dataclass(frozen=True)
class EditCounts:
    em: int = 0
    ea: int = 0
    ed: int = 0

    def __add__(self, other: EditCounts) -> EditCounts:
        return EditCounts(self.em + other.em, self.ea + other.ea, self.ed + other.ed)

    @property
    def precision(self) -> float:
        return _ratio(self.em, self.em + self.ed)

    @property
    def recall(self) -> float:
        return _ratio(self.em, self.em + self.ea)

    @property
    def f1(self) -> float:
        return harmonic_mean(self.precision, self.recall)


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def harmonic_mean(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


@dataclass(frozen=True)
class SentenceDecision:
    """One reference sentence and what the matcher found for it; ``start``/``end`` locate the span in the draft."""

    sentence: str
    span: str | None
    start: int | None = None
    end: int | None = None
    flagged: bool = False
    answer: str | None = None
    score: float | None = None
    conflicts: tuple[str, ...] = ()
    failure: str | None = None
    uncertain: str | None = None

    @property
    def matched(self) -> bool:
        return self.span is not None


@dataclass(frozen=True)
class EditJudgement:
    """Algorithm 1's result for one (reference, draft) pair, with every decision kept for review."""

    reference: str
    draft: str
    matcher: str
    decisions: tuple[SentenceDecision, ...]
    remainder: tuple[str, ...]  # draft sentences left after removing the matches: the expected deletions

    @property
    def counts(self) -> EditCounts:
        em = sum(d.matched for d in self.decisions)
        return EditCounts(em=em, ea=len(self.decisions) - em, ed=len(self.remainder))

    @property
    def failures(self) -> int:
        """Reference sentences whose matcher answer could not be used (counted as NO MATCH)."""
        return sum(d.failure is not None for d in self.decisions)

    @property
    def uncertain(self) -> int:
        """Reference sentences whose decision the guard could not vouch for (kept or refused by policy)."""
        return sum(d.uncertain is not None for d in self.decisions)

    @property
    def judged(self) -> bool:
        """Whether any matcher answer could be used; if none could, the counts say nothing about the draft (every
        sentence NO MATCH by failure), so its Edit-F1 is absent, never 0.0."""
        return not self.decisions or self.failures < len(self.decisions)

    def to_dict(self) -> dict[str, Any]:
        counts = self.counts
        return {
            "matcher": self.matcher,
            "em": counts.em,
            "ea": counts.ea,
            "ed": counts.ed,
            # absent (None) when no matcher answer could be used: all NO MATCH by failure would read as 0.0
            "precision": counts.precision if self.judged else None,
            "recall": counts.recall if self.judged else None,
            "f1": counts.f1 if self.judged else None,
            "matcher_failures": self.failures,
            "guard_uncertain": self.uncertain,
            "decisions": [{**vars(d), "conflicts": list(d.conflicts)} for d in self.decisions],
            "remainder": list(self.remainder),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], reference: str = "", draft: str = "") -> EditJudgement:
        return cls(
            reference,
            draft,
            data["matcher"],
            tuple(SentenceDecision(**{**d, "conflicts": tuple(d.get("conflicts", ()))}) for d in data["decisions"]),
            tuple(data["remainder"]),
        )


def reference_sentences(reference: str) -> list[str]:
    return [s.text for s in split_sentences(reference)]


def locate(span: str, draft: str, claimed: Iterable[tuple[int, int]] = ()) -> tuple[int, int] | None:
    """Where ``span`` sits in ``draft``: the first occurrence not in ``claimed``, else the first; None if absent."""
    taken = set(claimed)
    first = None
    start = draft.find(span)
    while start != -1:
        interval = (start, start + len(span))
        if first is None:
            first = interval
        if interval not in taken:
            return interval
        start = draft.find(span, start + 1)
    return first


def remainder_sentences(draft: str, removed: Iterable[tuple[int, int]]) -> list[str]:
    """The draft's sentences once the ``removed`` character intervals are cut out (each cut breaks a sentence)."""
    keep = [True] * len(draft)
    for start, end in removed:
        for i in range(start, end):
            keep[i] = False
    pieces, current = [], []
    for char, kept in zip(draft, keep, strict=True):
        if kept:
            current.append(char)
        elif current:
            pieces.append("".join(current))
            current = []
    pieces.append("".join(current))
    return [s.text for piece in pieces for s in split_sentences(piece) if _HAS_CONTENT.search(s.text)]


_CONTENT_WORD = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset(
    re.findall(
        r"\w+",
        "a an the and or but if of to in on at for with by from your you we i it is are be will can may this that "
        "please our my me us as so do does have has any",
    )
)


def content_words(text: str) -> set[str]:
    """Lower-cased words outside :data:`STOP_WORDS`: what a sentence says rather than how it is put."""
    return {w for w in _CONTENT_WORD.findall(text.lower()) if w not in STOP_WORDS}


async def edit_judge(reference: str, draft: str, matcher: Matcher) -> EditJudgement:
    """Algorithm 1 for one pair. Reference sentences are matched one after another, in order."""
    decisions = []
    claimed: list[tuple[int, int]] = []
    for sentence in reference_sentences(reference):
        found = await matcher.match(sentence, draft)
        interval = locate(found.span, draft, claimed) if found.span else None
        if found.span is not None and interval is None:
            raise ValueError(f"matcher {matcher.name!r} returned a span that is not in the draft: {found.span!r}")
        if interval is not None:
            claimed.append(interval)
        start, end = interval or (None, None)
        decisions.append(
            SentenceDecision(
                sentence,
                found.span,
                start,
                end,
                flagged=found.flagged,
                answer=found.answer,
                score=found.score,
                conflicts=found.conflicts,
                failure=found.failure,
                uncertain=found.uncertain,
            )
        )
    decisions = _refuse_shared_spans(decisions)
    claimed = [(d.start, d.end) for d in decisions if d.start is not None and d.end is not None]
    return EditJudgement(reference, draft, matcher.name, tuple(decisions), tuple(remainder_sentences(draft, claimed)))


def _refuse_shared_spans(decisions: list[SentenceDecision]) -> list[SentenceDecision]:
    """One draft span matched to several reference sentences counts only for those it shares a content word
    with; for the others it is a counted matcher failure that says why (issue 45: a judge that answers any whole
    draft sentence gave one span to three reference sentences with no word in common, Edit-F1 0.75 where every
    offline matcher gives 0)."""
    holders: dict[tuple[int | None, int | None], int] = {}
    for decision in decisions:
        if decision.span is not None:
            holders[decision.start, decision.end] = holders.get((decision.start, decision.end), 0) + 1
    out = []
    for decision in decisions:
        shared = holders.get((decision.start, decision.end), 0) if decision.span is not None else 0
        if shared >= 2 and not content_words(decision.sentence) & content_words(decision.span or ""):
            decision = SentenceDecision(
                decision.sentence,
                None,
                flagged=True,
                answer=decision.answer or decision.span,
                score=decision.score,
                conflicts=decision.conflicts,
                uncertain=decision.uncertain,
                failure=f"one draft span matched to {shared} reference sentences, and it shares no content word "
                "with this one",
            )
        out.append(decision)
    return out


@dataclass(frozen=True)
class Averages:
    precision: float
    recall: float
    f1: float


@dataclass
class EditSummary:
    """Micro (counts pooled over pairs) and macro (per-pair scores averaged) Edit-F1 over a set of pairs."""

    counts: list[EditCounts] = field(default_factory=list)

    @property
    def micro(self) -> Averages:
        pooled = sum(self.counts, EditCounts())
        return Averages(pooled.precision, pooled.recall, pooled.f1)

    @property
    def macro(self) -> Averages:
        n = len(self.counts)
        if not n:
            return Averages(0.0, 0.0, 0.0)
        return Averages(
            sum(c.precision for c in self.counts) / n,
            sum(c.recall for c in self.counts) / n,
            sum(c.f1 for c in self.counts) / n,
        )


def summarise(judgements: Sequence[EditJudgement | EditCounts]) -> EditSummary:
    """Micro and macro averages over the judged pairs (a pair none of whose matcher answers could be used is
    left out: see :attr:`EditJudgement.judged`)."""
    judged = [j for j in judgements if not isinstance(j, EditJudgement) or j.judged]
    return EditSummary([j.counts if isinstance(j, EditJudgement) else j for j in judged])
