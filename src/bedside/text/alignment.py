"""Where the rules cannot decide: two sentences the guard finds no conflict in, but cannot vouch for either.

The conflict rules (:mod:`bedside.text.conflicts`, :mod:`bedside.text.slots`) know the kinds of difference they
were written for. Outside-written sets keep finding kinds they never saw (issue 45): "for the whole day, not for
each meal" against "for each meal, not for the whole day", "go to labor and delivery, not the emergency room"
against its reverse, "bed rest" where "light walking" was. Similarity scores these as the same sentence, so a
guard that finds no conflict is not evidence of a match. Rather than guess, the guard says **uncertain** where

- a sentence cannot be read at all (:func:`unreadable`): longer than :data:`MAX_CHARS` (no clinician sentence
  is), without a letter ("120/80 -> 140/90"), or not English (the rules read English only);
- the two sentences are nearly the same words but differ in a few the rules have no reading for
  (:func:`read_change`): at most :data:`MAX_BLOCKS` changed places of at most :data:`MAX_BLOCK_WORDS` words a
  side, at least one of them a content word or a word that changes meaning ("only", "not", "before"...). A
  small, local change in an otherwise identical sentence is the shape of every reversal the rules missed;
  rewordings that differ throughout are left to the similarity model. Where such a change swaps a word for its
  WordNet antonym ("left" / "right", "slowly" / "quickly"), the guard reads a conflict instead;
- the two sentences hold the same content words in another order ("A, not B" against "B, not A");
- a library the reading relies on raises (:class:`UnreadableText`).

Uncertain is a third answer beside conflict and agreement: EditJudge keeps or rejects such a match by its
``uncertain`` option, or asks a configured verifier, and counts it either way
(:mod:`bedside.tasks.drafting.guard`). The differences shown are those after numbers are normalised
(:mod:`bedside.text.quantities`), so "48 hours" against "2 days" is no difference at all.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter

from bedside.text.assertion import FUNCTION_WORDS, word_stem
from bedside.text.quantities import UnreadableText, normalise_quantities
from bedside.text.wordnet import opposed

MAX_CHARS = 2000
"""Longest sentence read; a longer "sentence" is a paste or a run-on the rules would read wrongly."""
MAX_BLOCKS = 2
MAX_BLOCK_WORDS = 3

_WORD = re.compile(r"[a-z0-9]+(?:[.'’/][a-z0-9]+)*")
_LETTERS = re.compile(r"[^\W\d_]+")
_MEANING_WORDS = frozenset(
    re.findall(r"\w+", "not no never only unless without with before after more less most least all none both either")
)
"""Short words that are not content words but turn a sentence round when swapped or dropped."""
_NEGATIONS = frozenset(["not", "no", "never", "without", "don't", "doesn't", "didn't", "can't", "cannot", "won't"])
_ENGLISH_MIN_WORDS = 8
"""Sentences this long must hold at least one English function word to be read as English."""


def unreadable(text: str) -> str | None:
    """Why the rules cannot read ``text`` at all, or None when they can."""
    if len(text) > MAX_CHARS:
        return f"longer than {MAX_CHARS} characters ({len(text)}): not one sentence"
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "no words to read (only numbers or symbols)"
    if sum(c.isascii() for c in letters) < 0.6 * len(letters):
        return "not English: the rules read English only"
    words = _LETTERS.findall(text.lower())
    if len(words) >= _ENGLISH_MIN_WORDS and not any(w in FUNCTION_WORDS for w in words):
        return "not English: the rules read English only"
    return None


def _words(text: str) -> list[str]:
    return _WORD.findall(normalise_quantities(text, strict=True).lower().replace("’", "'"))


def _changed_blocks(ours: list[str], theirs: list[str]) -> list[tuple[list[str], list[str]]] | None:
    """The places two word lists differ, if they have the shape of a small, local change (at most
    :data:`MAX_BLOCKS` places of at most :data:`MAX_BLOCK_WORDS` words a side); else None."""
    changes = [op for op in difflib.SequenceMatcher(a=ours, b=theirs, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not changes or len(changes) > MAX_BLOCKS:
        return None
    blocks = [(ours[a_start:a_end], theirs[b_start:b_end]) for _, a_start, a_end, b_start, b_end in changes]
    if any(len(a) > MAX_BLOCK_WORDS or len(b) > MAX_BLOCK_WORDS for a, b in blocks):
        return None
    return blocks


def read_change(reference: str, candidate: str) -> tuple[list[tuple[str, str]], str | None]:
    """For a pair the rules found no conflict in, each sentence read once: the words the small, local change
    swaps for their WordNet antonym (:mod:`bedside.text.wordnet`; "the left knee" / "the right knee"), and why
    the pair cannot be vouched for (see the module docstring), or None. A change that also adds or drops a
    negation anywhere ("do not get up quickly" for "get up slowly") may reverse the sentence twice: no antonym is
    read in it. Raises :class:`UnreadableText` when a quantity library fails on either sentence."""
    ours, theirs = _words(reference), _words(candidate)
    blocks = _changed_blocks(ours, theirs) or []
    return _antonyms(blocks), _gap(ours, theirs, blocks)


def _antonyms(blocks: list[tuple[list[str], list[str]]]) -> list[tuple[str, str]]:
    if any(w in _NEGATIONS for a, b in blocks for w in a + b):
        return []
    return [pair for a, b in blocks if (pair := opposed(a, b))]


def _gap(ours: list[str], theirs: list[str], blocks: list[tuple[list[str], list[str]]]) -> str | None:
    shown: list[str] = []
    for a, b in blocks:
        if {word_stem(w) for w in a} == {word_stem(w) for w in b}:
            continue  # "takes" for "take"
        if all(w in FUNCTION_WORDS and w not in _MEANING_WORDS for w in a + b):
            continue  # "the" for "your"
        shown.append(f'"{" ".join(a) or "-"}" / "{" ".join(b) or "-"}"')
    if shown:
        return f"the sentences differ only in {', '.join(shown)}, which the rules cannot compare"
    content = [word_stem(w) for w in ours if w not in FUNCTION_WORDS]
    other = [word_stem(w) for w in theirs if w not in FUNCTION_WORDS]
    if content != other and Counter(content) == Counter(other):
        return "the same words in another order, which the rules cannot compare"
    return None


__all__ = [
    "MAX_BLOCKS",
    "MAX_BLOCK_WORDS",
    "MAX_CHARS",
    "UnreadableText",
    "read_change",
    "unreadable",
]
