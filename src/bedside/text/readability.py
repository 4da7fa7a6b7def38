"""Readability grades: SMOG (McLaughlin, 1969) and Flesch–Kincaid grade level (Kincaid et al., 1975).

Counting rules, stated because every readability number depends on them:

* sentences come from :func:`bedside.text.split_sentences` (clinical-aware, see its rules);
* words are runs of letters, with inner apostrophes or hyphens (``patient's``, ``follow-up``); numbers and
  symbols are not words;
* syllables are counted by :func:`count_syllables`: groups of adjacent vowels (``y`` counts as a vowel),
  less a silent final ``e`` (but not ``-le``, ``-ue``, ``-ee``), less the ``e`` of ``-ed``/``-es`` endings
  that add no sound, plus one for vowel pairs that are usually two syllables (``ia``, ``eo``, ``ua``, ``uo``,
  ``iu``, ``io`` except in ``-tion``/``-sion``/``-cion``, ``ie`` before ``t``, and a final ``ea`` after a
  consonant); at least one per word, and a hyphenated word counts its parts. Hyphenation dictionaries
  (textstat's counter) undercount drug and disease names (``lisinopril`` comes out as 2), which is where
  SMOG's polysyllable count matters most, so we do not use them; the rule is checked against a hand-labelled
  list of everyday and clinical words in the tests;
* a polysyllable has three or more syllables.

SMOG = 1.0430 × √(polysyllables × 30 / sentences) + 3.1291 — McLaughlin's regression form, normalised to
30 sentences so shorter texts can be graded; with fewer than 30 sentences the grade is an extrapolation
(``TextCounts.sentences`` says how many there were). FKGL = 0.39 × words/sentence + 11.8 × syllables/word − 15.59.
Text with no sentence or no word has no grade: :class:`ReadabilityError`, never a silent zero.

:func:`textstat_smog` is a cross-check, not a second definition: the same formula as the ``textstat`` package
computes it (extra ``readability``, pinned to 0.7.x because later releases fetch data at run time), with its own
sentence count and pyphen's hyphenation for syllables. Papers that report SMOG without naming a library most likely
used textstat, so comparing the two on the same texts says how far bedside's absolute grades can sit from a
paper's; differences between systems are what both should agree on.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from bedside.text.sentences import split_sentences

_WORD = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")


class ReadabilityError(ValueError):
    """The text has nothing to grade (no sentence or no word)."""


class ReadabilityUnavailableError(RuntimeError):
    """The optional textstat package is not installed."""


TEXTSTAT_HINT = "pip install 'bedside[readability]' (textstat 0.7.8; later releases download data at run time)"


@dataclass(frozen=True)
class TextCounts:
    sentences: int
    words: int
    syllables: int
    polysyllables: int


_VOWEL_GROUPS = re.compile(r"[aeiouy]+")
_TWO_SYLLABLE_PAIRS = re.compile(r"ia|eo|ua|uo|iu|(?<![tsc])io|ie(?=t)|(?<=[^aeiou])ea$")


@lru_cache(maxsize=65536)
def count_syllables(word: str) -> int:
    """Syllables of one word by the stated rule (see the module docstring)."""
    parts = [p for p in re.split(r"[-’']", word.lower()) if p]
    return sum(_syllables_of_part(p) for p in parts)


def _syllables_of_part(part: str) -> int:
    letters = re.sub(r"[^a-z]", "", part)
    if not letters:
        return 0
    count = len(_VOWEL_GROUPS.findall(letters))
    silent_ending = (
        (letters.endswith("e") and not letters.endswith(("le", "ee", "ie", "ye", "ue")))
        or (letters.endswith("ed") and not letters.endswith(("ted", "ded")))
        or (letters.endswith("es") and not re.search(r"(?:[sxz]|ch|sh|ce|ge)es$", letters))
    )
    if silent_ending and count > 1:
        count -= 1
    count += len(_TWO_SYLLABLE_PAIRS.findall(letters))
    return max(1, count)


def text_counts(text: str) -> TextCounts:
    sentences = split_sentences(text)
    words = _WORD.findall(text)
    syllables = [count_syllables(w) for w in words]
    return TextCounts(
        sentences=len(sentences),
        words=len(words),
        syllables=sum(syllables),
        polysyllables=sum(1 for s in syllables if s >= 3),
    )


def _checked(text: str) -> TextCounts:
    counts = text_counts(text)
    if counts.sentences == 0 or counts.words == 0:
        raise ReadabilityError("no readability grade for a text without sentences or words")
    return counts


def smog(text: str) -> float:
    counts = _checked(text)
    return 1.0430 * math.sqrt(counts.polysyllables * 30 / counts.sentences) + 3.1291


def fkgl(text: str) -> float:
    counts = _checked(text)
    return 0.39 * counts.words / counts.sentences + 11.8 * counts.syllables / counts.words - 15.59


def textstat_smog(text: str) -> float:
    """SMOG as textstat 0.7.x grades it, for cross-checking :func:`smog` (see the module docstring).

    textstat 0.7.8 does not refuse short texts (two sentences with no polysyllable grade 3.1291), so the same
    no-words rule as :func:`smog` applies first: an empty text has no grade in either. Earlier releases return 0
    below 3 sentences; that is read as no grade, never as a grade of 0.
    """
    try:
        import textstat
    except ImportError:
        raise ReadabilityUnavailableError(f"the textstat SMOG cross-check needs textstat: {TEXTSTAT_HINT}") from None
    _checked(text)
    grade = float(textstat.smog_index(text))
    if grade == 0.0:  # releases before 0.7.8 return 0 below 3 sentences: no grade, not a grade of 0
        raise ReadabilityError("textstat gives no SMOG grade for this text (fewer than 3 sentences)")
    return grade
