"""Whether a sentence is English, for checkers whose rules read English only (issue 45).

A short sentence in another language written in the Latin alphabet ("Tome dos pastillas al día.") used to be read
as English: the rules found no number, drug or negation they knew, and a guard comparing it with an English
reference had nothing to object to. Two readings decide, because each alone is wrong on short clinical English:

- **py3langid** (a maintained fork of langid.py: a naive Bayes model over byte n-grams for 97 languages, shipped
  in the wheel, nothing fetched) names the language. Alone it calls "Take amlodipine 10 mg and lisinopril 5 mg
  once a day." Tagalog and "Any fevers?" Malagasy: drug names and two-word questions give it little to go on.
- **An English lexicon**: WordNet 3.0's lemmas (its ``index.*`` files, read from the same folder as its antonyms,
  :func:`bedside.text.wordnet.lemmas_of`), a word's inflections found by WordNet's own morphy rules and exception
  lists, plus spaCy's English stop words for the closed classes WordNet leaves out. Alone it accepts "Tome la
  medicina.": "tome" and "la" are English words too.

A sentence is not English when py3langid names another language with probability at least
:data:`LANGUAGE_PROBABILITY` **and** fewer than :data:`ENGLISH_SHARE` of its words are English words. Measured
when chosen (``bench/language_check.py``): none of the 4,662 distinct English sentences and facts of bedside's
own and the development sets is called foreign, and 59 of 70 short sentences in other languages are (the rest are
two- or three-word phrases made of words English shares, "Muy bien.", "No, nunca.", which the rules' other checks
leave to similarity).

The lexicon is read first and py3langid only asked about a sentence with many words the lexicon does not know
(1 of those 4,662), so a run of plain English seldom loads its model (about a second).
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

from bedside.text.wordnet import WordNetMissing, lemmas_of

LANGUAGE_PROBABILITY = 0.3
"""py3langid's normalised probability for a language other than English at or above which it is believed."""
ENGLISH_SHARE = 2 / 3
"""The share of a sentence's words that must be English words for it to be English whatever py3langid says."""

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_lock = threading.Lock()


class LanguageReaderFailed(RuntimeError):
    """py3langid or WordNet's word lists could not be read (a broken install)."""


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    """spaCy's English stop words: the closed classes (pronouns, determiners, prepositions) WordNet leaves out.
    spaCy is loaded anyway by the negation reading (:mod:`bedside.text.assertion`)."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(word.lower() for word in STOP_WORDS)


@lru_cache(maxsize=65536)
def is_english_word(word: str) -> bool:
    """Whether ``word`` (lower case) is an English word: a WordNet lemma or an inflection of one by WordNet's
    morphy rules and irregular forms (:func:`bedside.text.wordnet.lemmas_of`), or a spaCy English stop word."""
    word = word.replace("’", "'")
    if "'" in word:  # "you've", "doctor's": the word before the clitic
        word = word.split("'", 1)[0]
    if word in _stop_words():
        return True
    try:
        return bool(lemmas_of(word))
    except WordNetMissing as exc:
        raise LanguageReaderFailed(str(exc)) from None


def english_share(text: str) -> float:
    """The share of ``text``'s words (letters only; one-letter words other than "a" and "i" left out) that are
    English words; 1.0 for a text without words."""
    words = [w for w in _WORD.findall(text.lower()) if len(w) > 1 or w in {"a", "i"}]
    if not words:
        return 1.0
    return sum(is_english_word(w) for w in words) / len(words)


@lru_cache(maxsize=1)
def _identifier() -> Any:
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    except Exception as exc:  # any failure of the library's own loading is a broken install
        raise LanguageReaderFailed(f"py3langid's model cannot be loaded: {type(exc).__name__}: {exc}") from None


def language_of(text: str) -> tuple[str, float]:
    """py3langid's language (ISO 639-1) for ``text`` and its normalised probability."""
    with _lock:  # the identifier keeps no state between calls, but its numpy scratch is not promised thread-safe
        language, probability = _identifier().classify(text)
    return str(language), float(probability)


@lru_cache(maxsize=4096)
def foreign_language(text: str) -> str | None:
    """The language ``text`` is written in when it is not English (an ISO 639-1 code), else None."""
    if english_share(text) >= ENGLISH_SHARE:
        return None
    language, probability = language_of(text)
    if language != "en" and probability >= LANGUAGE_PROBABILITY:
        return language
    return None


__all__ = [
    "ENGLISH_SHARE",
    "LANGUAGE_PROBABILITY",
    "LanguageReaderFailed",
    "english_share",
    "foreign_language",
    "is_english_word",
    "language_of",
]
