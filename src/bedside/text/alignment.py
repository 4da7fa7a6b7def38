"""Where the rules cannot decide: two sentences the guard finds no conflict in, but cannot vouch for either.

The conflict rules (:mod:`bedside.text.conflicts`, :mod:`bedside.text.slots`) know the kinds of difference they
were written for. Outside-written sets keep finding kinds they never saw (issue 45): "for the whole day, not for
each meal" against "for each meal, not for the whole day", "go to labor and delivery, not the emergency room"
against its reverse, "bed rest" where "light walking" was. Similarity scores these as the same sentence, so a
guard that finds no conflict is not evidence of a match. Rather than guess, the guard says **uncertain** where

- a sentence cannot be read at all (:func:`unreadable`): longer than :data:`MAX_CHARS` (no clinician sentence
  is), without a letter ("120/80 -> 140/90"), or not English (:func:`bedside.text.language.foreign_language`:
  the rules read English only);
- the two sentences are nearly the same words but differ in a few the rules have no reading for
  (:func:`read_change`): at most :data:`MAX_BLOCKS` changed places of at most :data:`MAX_BLOCK_WORDS` words a
  side, at least one of them a content word or a word that changes meaning ("only", "not", "before"...). A
  small, local change in an otherwise identical sentence is the shape of every reversal the rules missed;
  rewordings that differ throughout are left to the similarity model. Where such a change swaps a word for its
  WordNet antonym ("left" / "right", "slowly" / "quickly", "lowest" / "highest") or its opposite prefix
  ("hypertension" / "hypotension", "unpasteurized" / "pasteurized": :func:`prefix_opposed`), a noun for another
  kind of the same thing ("feet" / "hands": :func:`bedside.text.wordnet.siblings`), or a count written "one" for
  another number (:func:`recounted`), the guard reads a conflict instead; where it says the same thing otherwise
  (a WordNet synonym within each word's first two senses, another name of the same drug, one time said two
  ways), there is no gap;
- the two sentences hold the same content words in another order ("A, not B" against "B, not A") that is not
  an exchange (below);
- a library the reading relies on raises (:class:`UnreadableText`);
- the only conflict found is a negation, between sentences that share less than :data:`NEGATION_ALIGN` of their
  content words (:func:`shared_content`): the same "no" reworded reads as a flip word by word.

Two stretches of a sentence that trade places around words that stay put are an **exchange**
(:func:`exchanged`), read as a conflict: "call 911 rather than messaging us" against "message us rather than
calling 911", "switch from lisinopril to labetalol" against "from labetalol to lisinopril", "a mild cough is
normal, but coughing up blood needs attention" against the reverse. Only the frame between the two stretches
decides: the same relation words on both sides ("rather than", "to", "is normal, but") make the roles traded;
a frame that is only a coordinator ("A and B", "A or B", "A, but B", "A with B") or only punctuation keeps the
meaning, and a clause moved with its own frame word ("call us if it hurts" / "if it hurts, call us") leaves the
frames different, so neither is an exchange.

Uncertain is a third answer beside conflict and agreement: EditJudge keeps or rejects such a match by its
``uncertain`` option, or asks a configured verifier, and counts it either way
(:mod:`bedside.tasks.drafting.guard`). The differences shown are those after numbers are normalised
(:mod:`bedside.text.quantities`), so "48 hours" against "2 days" is no difference at all.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

from bedside.text.assertion import FUNCTION_WORDS, word_stem
from bedside.text.language import LanguageReaderFailed, foreign_language
from bedside.text.quantities import UnreadableText, normalise_quantities
from bedside.text.wordnet import lemmas_of, opposed, opposed_senses, siblings, synonymous, unrelated

MAX_CHARS = 2000
"""Longest sentence read; a longer "sentence" is a paste or a run-on the rules would read wrongly."""
MAX_BLOCKS = 2
MAX_BLOCK_WORDS = 3

_WORD = re.compile(r"[a-z0-9]+(?:[.'’/][a-z0-9]+)*")
_MEANING_WORDS = frozenset(
    re.findall(r"\w+", "not no never only unless without with before after more less most least all none both either")
)
"""Short words that are not content words but turn a sentence round when swapped or dropped."""
_COUNT_WORDS = {
    "one": "1",
    "once": "1",
    "twice": "2",
    "thrice": "3",
    "first": "1",
    "second": "2",
    "third": "3",
    "fourth": "4",
    "fifth": "5",
    "sixth": "6",
    "seventh": "7",
    "eighth": "8",
    "ninth": "9",
    "tenth": "10",
}
"""The counts the number rules leave words (:func:`recounted`): "one", kept for its pronoun use, how many times
("once", "twice") and which one ("first", "third")."""
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
_TIMES = frozenset(["time", "times"])
_NEGATIONS = frozenset(["not", "no", "never", "without", "don't", "doesn't", "didn't", "can't", "cannot", "won't"])


def unreadable(text: str) -> str | None:
    """Why the rules cannot read ``text`` at all, or None when they can."""
    if len(text) > MAX_CHARS:
        return f"longer than {MAX_CHARS} characters ({len(text)}): not one sentence"
    if not any(c.isalpha() for c in text):
        return "no words to read (only numbers or symbols)"
    try:
        language = foreign_language(text)
    except LanguageReaderFailed as exc:
        return f"the language reader failed: {exc}"
    if language is not None:
        return f"not English (py3langid reads {language!r}): the rules read English only"
    return None


def _words(text: str) -> list[str]:
    """``text``'s words as the alignment compares them; read once per text (read_change, exchanged and recounted
    each ask for both sentences of an uncaught pair, and the quantity reading is the costly part)."""
    return list(_read_words(text))


@lru_cache(maxsize=4096)
def _read_words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(normalise_quantities(text, strict=True).lower().replace("’", "'")))


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


_SOFT_WORDS = frozenset(
    re.findall(
        r"\w+",
        "a an the your you us we our my me i it its his her him their them they he she this that these those here "
        "there please any some",
    )
)
"""Words a frame may gain or lose without changing the relation it states ("rather than messaging us here")."""
_RELATION_WORDS = frozenset(
    re.findall(r"\w+", "rather than instead not no never only over versus vs before after then until unless into onto")
)
"""Words that state how two stretches relate: a frame that keeps one of them in place keeps the relation."""
_EDGE_WORDS = FUNCTION_WORDS | {"during", "throughout", "around"}
"""Words at a frame's edge that belong to the stretch beside it ("at night" / "during the day")."""
_SHARED_ENDS = 3
"""How many words shared at either end a stretch may take in (see :func:`exchanged`)."""
_SYMMETRIC_FRAMES = frozenset(
    re.findall(
        r"\w+",
        "and or nor plus with alongside along together as well both either neither but yet while whereas although "
        "though however also",
    )
)
"""Frames whose two sides may trade places without changing the meaning: coordinators, and "but" between two
clauses ("the cholesterol is fine, but the pressure is high" and its reverse). Not "and then": there the order
is the meaning."""


_CLAUSE_MARKERS = frozenset(
    re.findall(r"\w+", "before after if unless when whenever until once because while since as")
)
"""Words that open a clause: a stretch that starts with one is a clause moved whole, which keeps its meaning."""


def _symmetric(frame: list[str]) -> bool:
    return all(w in _SYMMETRIC_FRAMES for w in frame)


def exchanged(reference: str, candidate: str) -> tuple[str, str] | None:
    """Two stretches of ``reference`` that trade places in ``candidate`` around the same frame (see the module
    docstring), shown as each sentence's ``X ... Y``; None where the two are not such an exchange. Raises
    :class:`UnreadableText` when a quantity library fails on either sentence."""
    ours, theirs = _words(reference), _words(candidate)
    our_content = [(i, word_stem(w)) for i, w in enumerate(ours) if w not in FUNCTION_WORDS]
    their_content = [(i, word_stem(w)) for i, w in enumerate(theirs) if w not in FUNCTION_WORDS]
    a, b = [stem for _, stem in our_content], [stem for _, stem in their_content]
    if a == b or Counter(a) != Counter(b):
        return None
    first_change = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    last_change = len(a) - next(i for i, (x, y) in enumerate(zip(reversed(a), reversed(b), strict=True)) if x != y)
    # the stretches may take in words the two sentences share at their ends ("amlodipine 5 mg and lisinopril 10
    # mg": "mg" is common to both ends, yet belongs to the second stretch): of every way to cut the two, the one
    # with the least between the stretches decides
    cuts = [
        (end - start - x - y, start, end, x, y)
        for start in range(max(0, first_change - _SHARED_ENDS), first_change + 1)
        for end in range(last_change, min(len(a), last_change + _SHARED_ENDS) + 1)
        for x in range(1, end - start)
        for y in range(1, end - start - x + 1)
        if _trades(a[start:end], b[start:end], x, y)
    ]
    if not cuts:
        return None
    _, start, end, x, y = min(cuts)
    # the frame: every word between the first stretch's last content word and the second's first
    our_frame = ours[our_content[start + x - 1][0] + 1 : our_content[end - y][0]]
    their_frame = theirs[their_content[start + y - 1][0] + 1 : their_content[end - x][0]]
    frame = _same_frame(our_frame, their_frame)
    if not frame or _symmetric(frame):
        return None
    if any(w[0] in _CLAUSE_MARKERS and w[0] != o[0] and w[0] in o for w, o in ((ours, theirs), (theirs, ours))):
        return None  # a clause that opens one sentence moved whole: "before you start the new one, finish this one"
    return (_stretch(ours, our_content, start, x, end, y), _stretch(theirs, their_content, start, y, end, x))


def _same_frame(ours: list[str], theirs: list[str]) -> list[str] | None:
    """The relation two frames both state, or None where they differ. Equal less soft words; or else equal less
    the function words at their edges too, where what is left holds a relation word (a preposition belongs to the
    stretch beside it: "rather than on your side" against "rather than flat"). A verb moved by the passive voice
    ("the nurse will change your dressing" / "your dressing will be changed by the nurse") leaves only the verb
    in both frames: no relation word, not an exchange."""
    kept, other = _without(ours, _SOFT_WORDS), _without(theirs, _SOFT_WORDS)
    if kept == other:
        return [word_stem(w) for w in kept]
    core, other_core = _trimmed(kept), _trimmed(other)
    if core and core == other_core and any(w in _RELATION_WORDS for w in core):
        return [word_stem(w) for w in core]
    return None


def _without(words: list[str], dropped: frozenset[str]) -> list[str]:
    return [w for w in words if w not in dropped]


def _trimmed(words: list[str]) -> list[str]:
    start, end = 0, len(words)
    while start < end and words[start] in _EDGE_WORDS:
        start += 1
    while end > start and words[end - 1] in _EDGE_WORDS:
        end -= 1
    return words[start:end]


def _trades(a: list[str], b: list[str], x: int, y: int) -> bool:
    """Whether ``a`` is X + M + Y and ``b`` is Y + M + X, X the first ``x`` words and Y the last ``y``."""
    n = len(a)
    first, last = a[:x], a[n - y :]
    return first != last and b[:y] == last and b[n - x :] == first and a[x : n - y] == b[y : n - x]


def _stretch(words: list[str], content: list[tuple[int, str]], start: int, x: int, end: int, y: int) -> str:
    """``words`` of the first stretch and of the second, the frame between them shortened to "..."."""
    first = " ".join(words[content[start][0] : content[start + x - 1][0] + 1])
    second = " ".join(words[content[end - y][0] : content[end - 1][0] + 1])
    return f"{first} ... {second}"


class Change(NamedTuple):
    """What a small, local change between two sentences is, as :func:`read_change` reads it."""

    opposites: list[tuple[str, str]]
    """Words swapped for their WordNet antonym: ("left", "right")."""
    kin: list[tuple[str, str, str]]
    """One noun swapped for another kind of the same thing: ("feet", "hands", "extremity")."""
    replaced: list[tuple[str, str]]
    """Words swapped for words WordNet relates in no way: ("drops", "cups")."""
    gap: str | None
    """Why the pair cannot be vouched for, or None."""


def read_change(
    reference: str, candidate: str, said_otherwise: Callable[[list[str], list[str]], bool] | None = None
) -> Change:
    """For a pair the rules found no conflict in, each sentence read once: the words the small, local change
    swaps for their WordNet antonym (:mod:`bedside.text.wordnet`; "the left knee" / "the right knee"), the
    nouns it swaps for another kind of one thing (:func:`bedside.text.wordnet.siblings`; "check your feet" /
    "check your hands"), and why the pair cannot be vouched for (see the module docstring), or None. A change
    that also adds or drops a negation anywhere ("do not get up quickly" for "get up slowly") may reverse the
    sentence twice: neither is read in it. A changed stretch that swaps words for their WordNet synonyms
    ("dermatologist" / "skin doctor"), or that ``said_otherwise`` (the caller's readers) finds to say the same
    thing otherwise (another name of the same drug, one time said two ways), is no gap. Raises
    :class:`UnreadableText` when a quantity library fails on either sentence."""
    ours, theirs = _words(reference), _words(candidate)
    blocks = _changed_blocks(ours, theirs) or []
    return Change(
        _antonyms(blocks),
        _kin(blocks, said_otherwise),
        _replaced(blocks, said_otherwise),
        _gap(ours, theirs, blocks, said_otherwise),
    )


NEGATION_ALIGN = 1 / 3
"""Least share of content words two sentences must have in common for a "no" in one and none in the other (or
a "no" over different words) to be read as a conflict; below it the guard says uncertain. Chosen on the
development sets, where it turns 23 paraphrases the negation rule rejected into uncertain and no hard negative
(``bedside drafting guard-eval --no-matcher --show-uncertain | grep "says no where"``)."""


def shared_content(reference: str, candidate: str) -> float:
    """The share of content-word stems the two sentences have in common (Jaccard; function words and the
    stems' endings aside), after numbers are normalised.

    NegEx reads a negation's scope word by word, so the same "no" said in another order or with other words
    ("no fracture in your wrist" / "your wrist bone is not broken", "there's no need to fast" / "you can eat
    normally") reads as a flip. Such a flip means something only where the two sentences say the rest alike:
    every clinically reversed pair the outside writers gave keeps most of its words."""
    ours = {word_stem(w) for w in _words(reference) if w not in FUNCTION_WORDS}
    theirs = {word_stem(w) for w in _words(candidate) if w not in FUNCTION_WORDS}
    return len(ours & theirs) / len(ours | theirs) if ours | theirs else 1.0


def recounted(reference: str, candidate: str) -> tuple[str, str] | None:
    """A small, local change that gives another count in words the number rules leave alone: "one", which they
    keep as a word for its pronoun use ("take 2 tablets" / "take one tablet", "2 forms" / "one form"), how many
    times ("vomits more than once" / "more than 5 times") or which one ("after that first tablet" / "after your
    3rd tablet"), shown as each side's changed words; None otherwise. Raises :class:`UnreadableText` when a
    quantity library fails."""
    for a, b in _changed_blocks(_words(reference), _words(candidate)) or []:
        counts = [[n for w in side if (n := _count(w))] for side in (a, b)]
        rest = [
            [word_stem(w) for w in side if not _count(w) and w not in FUNCTION_WORDS and w not in _TIMES]
            for side in (a, b)
        ]
        worded = any(w in _COUNT_WORDS or _ORDINAL.fullmatch(w) for w in a + b)
        if worded and all(len(c) == 1 for c in counts) and counts[0] != counts[1] and rest[0] == rest[1]:
            return " ".join(a), " ".join(b)
    return None


def _count(word: str) -> str | None:
    """The count a word gives: a number ("5", "2.5"), a count word (:data:`_COUNT_WORDS`) or an ordinal ("3rd")."""
    if ordinal := _ORDINAL.fullmatch(word):
        return ordinal.group(1)
    value = _COUNT_WORDS.get(word, word)
    return value if value.replace(".", "", 1).isdigit() else None


OPPOSED_PREFIXES = (
    ("hyper", "hypo"),
    ("tachy", "brady"),
    ("pre", "post"),
    ("over", "under"),
    ("inpatient", "outpatient"),
    ("intra", "extra"),
    ("un", ""),
    ("non", ""),
)
"""Prefixes that turn one word into its opposite: the paired prefixes of medical terminology (above / below
normal, fast / slow, before / after, inside / outside: MedlinePlus, "Understanding Medical Words", U.S. National
Library of Medicine) and English's productive negating prefixes. "hypertension" / "hypotension",
"tachycardia" / "bradycardia", "prediabetes" / "diabetes" is not one of them (a stage, not an opposite) but
"preoperative" / "postoperative" is, "unpasteurized" / "pasteurized", "non-contagious" / "contagious"."""
_PREFIX_REST = 4
"""The least a word keeps after its prefix ("hyper" + "tension"): "under" is not "un" + "der"."""


def prefix_opposed(ours: str, theirs: str) -> bool:
    """Whether one word is the other with an opposite prefix (:data:`OPPOSED_PREFIXES`); for a negating prefix
    the rest must be a word WordNet knows ("unpasteurized" is "un" + "pasteurized"; "union" is no "un" + "ion")."""
    return any(
        a.startswith(one)
        and len(a) - len(one) >= _PREFIX_REST
        and b == other + a[len(one) :]
        and a not in _MEANING_WORDS
        and bool(other or lemmas_of(b))
        for one, other in OPPOSED_PREFIXES
        for a, b in ((ours, theirs), (theirs, ours))
    )


_REFLEXIVE = frozenset({"yourself", "himself", "herself", "themselves", "myself", "yourselves", "ourselves"})


def _antonyms(blocks: list[tuple[list[str], list[str]]]) -> list[tuple[str, str]]:
    if any(w in _NEGATIONS for a, b in blocks for w in a + b):
        return []
    found = []
    for a, b in blocks:
        if _REFLEXIVE & {*a, *b}:
            continue  # "give yourself the insulin" is "take your insulin": giving to oneself is taking
        pair = opposed(a, b) or next(((x, y) for x in a for y in b if prefix_opposed(x, y)), None)
        ours, theirs = [w for w in a if w not in FUNCTION_WORDS], [w for w in b if w not in FUNCTION_WORDS]
        if pair is None and len(ours) == len(theirs) == 1 and opposed_senses(ours[0], theirs[0]):
            pair = (ours[0], theirs[0])  # "temporary" / "permanent": a synonym of one's antonym
        if pair is None and (a, b) in ((["non"], []), ([], ["non"])):
            pair = (_shown(a), _shown(b))  # "non-contagious" / "contagious": the hyphen splits the word
        if pair is not None:
            found.append(pair)
    return found


def _content_of(
    blocks: list[tuple[list[str], list[str]]],
) -> list[tuple[list[str], list[str], list[str], list[str]]]:
    """Each changed stretch (ours, theirs) with its content words; none where the change adds or drops a negation
    or a word that turns a sentence round (a change that may reverse the sentence twice is not read word by word)."""
    if any(w in _NEGATIONS or w in _MEANING_WORDS for a, b in blocks for w in a + b):
        return []
    return [
        (a, b, [w for w in a if w not in FUNCTION_WORDS], [w for w in b if w not in FUNCTION_WORDS]) for a, b in blocks
    ]


def _kin(
    blocks: list[tuple[list[str], list[str]]], said_otherwise: Callable[[list[str], list[str]], bool] | None
) -> list[tuple[str, str, str]]:
    """Changed stretches that each hold one content word, a noun WordNet files as another kind of the same thing
    as the other side's ("thyroid" / "kidney": organ). Not where a stretch holds a number (a quantity said in
    other units is the number rules' to read: "6 weeks" / "1.5 months"), nor where the change adds or drops a
    negation or a word that turns a sentence round."""
    found = []
    for a, b, ours, theirs in _content_of(blocks):
        if len(ours) != 1 or len(theirs) != 1 or any(any(c.isdigit() for c in w) for w in ours + theirs):
            continue
        if said_otherwise is not None and said_otherwise(a, b):
            continue
        if kind := siblings(ours[0], theirs[0]):
            found.append((ours[0], theirs[0], kind))
    return found


_QUANTIFIERS = frozenset(re.findall(r"\w+", "each every all any some most many much few several other another"))
"""Words that say how many or which: the number and scope rules' to read, not WordNet's ("each" / "every")."""
_MODALS = frozenset(re.findall(r"\w+", "must should shall ought need needs have has had got"))
"""Words that say how binding a step is ("you need to" / "you must"): WordNet reads "must" as grape juice."""
_PARTICLES = frozenset(re.findall(r"\w+", "up out off down away back over through along around"))
"""A phrasal verb's particle: WordNet lists few phrasal verbs ("reach out" to call), so a stretch holding one is
not read word by word."""


def _replaced(
    blocks: list[tuple[list[str], list[str]]], said_otherwise: Callable[[list[str], list[str]], bool] | None
) -> list[tuple[str, str]]:
    """Changed stretches that each hold one content word (or a two-word name WordNet lists: "orange juice"), the
    two words WordNet relates in no way (:func:`bedside.text.wordnet.unrelated`: "drops" / "cups", "clear" /
    "full", "approved" / "submitted"). Not where the change adds or drops a negation or a word that turns a
    sentence round, nor where a stretch holds a number, a quantifier or a particle: every stretch that holds
    content words must be such a pair, or none is read. Nor where a stretch holds a modal ("need" / "must")."""
    found = []
    for a, b, ours, theirs in _content_of(blocks):
        if not ours and not theirs:
            continue
        words = ours + theirs
        if (
            not ours
            or not theirs
            or len(ours) > 2
            or len(theirs) > 2
            or any(any(c.isdigit() for c in w) or w in _QUANTIFIERS | _PARTICLES | _MODALS for w in words)
            or (said_otherwise is not None and said_otherwise(a, b))
        ):
            return []
        one, other = " ".join(ours), " ".join(theirs)
        if any(len(side) == 2 and not lemmas_of(phrase) for side, phrase in ((ours, one), (theirs, other))):
            return []
        if not unrelated(one, other):
            return []
        found.append((one, other))
    return found


def _shown(words: list[str]) -> str:
    """A changed stretch as a reason shows it: quoted, or "nothing" where that side has no words there."""
    return f'"{" ".join(words)}"' if words else "nothing"


def _same_sense(ours: list[str], theirs: list[str]) -> bool:
    """Whether two changed stretches name one WordNet synset, their function words aside ("a fracture of" / "a
    break in"); never where either holds a word that turns a sentence round ("not", "only", "before"...)."""
    if any(w in _MEANING_WORDS or w in _NEGATIONS for w in ours + theirs):
        return False
    return synonymous([w for w in ours if w not in FUNCTION_WORDS], [w for w in theirs if w not in FUNCTION_WORDS])


def _gap(
    ours: list[str],
    theirs: list[str],
    blocks: list[tuple[list[str], list[str]]],
    said_otherwise: Callable[[list[str], list[str]], bool] | None = None,
) -> str | None:
    shown: list[str] = []
    for a, b in blocks:
        if {word_stem(w) for w in a} == {word_stem(w) for w in b}:
            continue  # "takes" for "take"
        if all(w in FUNCTION_WORDS and w not in _MEANING_WORDS for w in a + b):
            continue  # "the" for "your"
        if _same_sense(a, b) or (said_otherwise is not None and a and b and said_otherwise(a, b)):
            continue  # "skin doctor" for "dermatologist", "Lasix" for "furosemide"
        shown.append(f"{_shown(a)} / {_shown(b)}")
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
    "NEGATION_ALIGN",
    "OPPOSED_PREFIXES",
    "Change",
    "UnreadableText",
    "exchanged",
    "prefix_opposed",
    "read_change",
    "recounted",
    "shared_content",
    "unreadable",
]
