"""What a sentence says in the slots that word overlap cannot see: which way, before or after, with or without.

Two sentences that differ only in "above" and "below", "before" and "after", "with" and "without", "if" and
"unless", or "ice" and "heat" share every other word, and a similarity model scores them as the same sentence;
outside writers found these reversals passing EditJudge's guard by the dozen (issue 45). Each rule here reads one
slot of a sentence as ``(kind, key, value)``:

- **comparison**: a threshold's direction, ``("comparison", "70", "<")`` for "below 70", "under 70", "less
  than 70", "no more than 70", "at most 70", "70 or less", "limit it to 70"; ``">"`` for the reverse. The key
  is the number compared with (or ``""`` for a comparison with none: "higher than we would like"). A negation
  earlier in the clause turns "more than" round ("don't take more than 3 g" is "at most 3 g").
- **direction**: a change or an amount that goes ``up`` or ``down`` ("goes up", "rises", "bump it up", "more";
  "drops", "falls", "cut it back", "fewer").
- **sequence**: ``before``, ``after`` or ``within`` something, keyed by each content word of it ("before each
  meal", "after 72 hours", "before you stop"); ``with`` a meal ("with the first bite of every meal", "during
  meals"), which is neither before nor after it.
- **scope**: what an amount is counted over, when a sentence names one: ``day`` ("per day", "in a 24-hour
  period", "for the whole day") or ``dose`` ("per dose", "at any one time"), ``meal``, ``week``.
- **with**: ``with`` or ``without`` something ("without the crutches").
- **condition**: ``if`` or ``unless`` something ("only if you are dizzy", "unless you are dizzy"), and whether
  a condition's signs are joined by ``or`` (``either``) or ``and`` (``both``).
- **opposite**: one side of a pair of clinical opposites from ``data/opposites.toml`` (cold or heat, benign or
  malignant, still or no longer contagious...), each entry citing where the opposition comes from.
- **order**: which of two steps comes first, where a sentence says so ("check your sugar first, and then give the
  insulin", "call 911 after using the EpiPen", "wait for the result before starting"), keyed by each content word
  (stemmed) of either step, valued ``first`` or ``second``. A word in both steps says nothing.

Two sentences conflict in a slot when they fill the same kind and key with different values and neither also
holds the other's: a sentence that names both sides ("ice, not heat") cannot be aligned and does not conflict.
The phrases read are blanked in the text the rest of the guard reads, so the "no" of "no more than" or "no
longer" is not read again as a negation.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from bedside.text.assertion import word_stem

Slot = tuple[str, str, str]

_NUMBER = r"(?P<n>\d+(?:\.\d+)?)"
_LESS = (
    r"(?:no|not) (?:more|higher|greater|heavier|longer|older|bigger|larger) than|"
    r"(?<!no )(?<!not )(?:less|lower|fewer|lighter|shorter|younger|smaller) than|at most|up to|a maximum of|"
    r"maximum of|max of"
)
_MORE = (
    r"(?:no|not) (?:less|lower|fewer|lighter|shorter|younger|smaller) than|"
    r"(?<!no )(?<!not )(?:more|higher|greater|heavier|longer|older|bigger|larger) than|at least|a minimum of|"
    r"minimum of|exceeds?"
)
"""Each plain comparison is read only where no "no"/"not" comes right before it: "no fewer than 8" is a floor,
though "fewer than 8" inside it is a cap."""
_PLAIN_MORE = re.compile(r"(?:more|higher|greater|heavier|longer|older|bigger|larger) than|exceeds?|above|over")
_NEGATION_BEFORE = re.compile(
    r"\b(?:not|never|no|don't|doesn't|shouldn't|mustn't|can't|cannot|won't|avoid|avoiding)\b(?=[^,;:.]*$)"
)
"""A negation earlier in the clause turns a comparison round: "don't lift anything heavier than 10 pounds" is
"10 pounds or less", and so is "avoid lifting anything over 10 pounds"."""
_LESS_BARE = r"below|under|beneath"  # only before a number: "under 100", never "under the tongue"
_MORE_BARE = r"above|over"  # only before a number: "over 100", never "over the counter"
_GAP = r"(?:\s+(?!and\b|or\b|but\b)[a-z%°'-]+){0,3}?\s+"

_COMPARISONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"\b(?P<c>{_LESS})(?:{_GAP}{_NUMBER})?"), "<"),
    (re.compile(rf"\b(?P<c>{_MORE})(?:{_GAP}{_NUMBER})?"), ">"),
    (re.compile(rf"\b(?P<c>{_LESS_BARE})(?:\s+[a-z%°'-]+){{0,1}}?\s+{_NUMBER}"), "<"),
    (re.compile(rf"\b(?P<c>{_MORE_BARE})(?:\s+[a-z%°'-]+){{0,1}}?\s+{_NUMBER}"), ">"),
    (re.compile(rf"{_NUMBER}(?:\s+[a-z%°'-]+){{0,3}}?\s+(?P<c>or (?:less|lower|fewer|below|under|smaller))\b"), "<"),
    (re.compile(rf"{_NUMBER}(?:\s+[a-z%°'-]+){{0,3}}?\s+(?P<c>or (?:more|higher|greater|above|over|bigger))\b"), ">"),
    (re.compile(rf"\b(?P<c>limit)\b(?:\s+[a-z'-]+){{0,4}}?\s+to\s+{_NUMBER}"), "<"),
)
_UP = re.compile(
    r"\b(?:goes up|go up|going up|went up|gone up|rises?|rising|rose|climbs?|climbing|creeps? up|bump(?:ed|ing)?"
    r"(?: \w+)? up|gains?|gained|gaining|more|extra)\b"
)
_DOWN = re.compile(
    r"\b(?:goes down|go down|going down|went down|gone down|drops?|dropping|dropped|falls?|falling|fell|"
    r"cut(?:ting)?(?: \w+)? back|loses?|lost|losing|fewer|less)\b"
)
_PLAIN_NUMBER = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)(?![\d.]*\d)")
_SCOPE = re.compile(
    r"\b(?:(?:per|each|every|in a|for the whole|total for the|for each) "
    r"(?P<v>day|24-hour period|24 hour period|1 day period|dose|meal|week)|(?P<once>at any one time|at one time|in "
    r"one go))\b"
)
_SCOPE_VALUE = {"24-hour period": "day", "24 hour period": "day", "1 day period": "day"}
"""How a day is said ("1 day period" is "a 24-hour period" once bedside.text.quantities has read it); a scope said
without "per" (``once``: "at any one time") is a dose."""
_NEGATIVE_WORD = re.compile(r"\b(?:no|not|non|never)\b")
_FILLER = frozenset(
    [
        "the",
        "your",
        "a",
        "an",
        "each",
        "every",
        "any",
        "this",
        "that",
        "next",
        "his",
        "her",
        "their",
        "my",
        "our",
        "you",
        "you're",
        "are",
        "is",
        "be",
        "it",
        "its",
        "to",
        "some",
        "being",
        "get",
        "getting",
        "have",
        "having",
        "feel",
        "feeling",
    ]
)
_SEQUENCE = re.compile(
    r"\b(?:(?P<v>before|after|prior to|following|within|during)|(?P<w>with)(?: the first (?:bite|mouthful) of)?"
    r"(?= (?:each |every |your |a )?(?:meals?|snacks?|food|breakfast|lunch|dinner|supper)\b))\s+"
    r"(?P<rest>[a-z0-9' -]{0,60})"
)
"""Before, after or within something; and with (or during) a meal, which is neither before nor after it."""
_WITH = re.compile(r"\b(?P<v>with|without)\s+(?P<rest>[a-z0-9' -]{0,60})")
_CONDITION = re.compile(r"\b(?P<v>only if|unless|except (?:if|when)|if|when)\s+(?P<rest>[a-z0-9' -]{0,60})")
_SEQUENCE_VALUE = {"prior to": "before", "following": "after", "during": "with"}
_CONDITION_CLAUSE = re.compile(r"\b(?:if|when|whenever|unless)\b(?P<clause>[^,;:.]*)")
_JOIN = re.compile(r"\b(or|and)\b")
"""Two signs joined in a condition: "call 911 if you notice a droopy face or slurred speech" asks for either,
"... a droopy face and slurred speech" for both."""
_THEN = re.compile(r"(?:,|\band)\s+(?:only\s+)?then\b")
"""A second step: ", then" or "and then" ("until then", "by then" are a time, not a step)."""
_STEP_CLAUSE = re.compile(r"\b(?P<v>before|after)\s+(?=you\b|[a-z]+ing\b)")
"""A step said as a clause ("before using the EpiPen", "after you check"), not a time ("before meals")."""
_CLAUSE_END = re.compile(r"[,;:]|\b(?:because|since|so|but|while|unless|if|when|as)\b")
"""Where a "before"/"after" clause ends: its comma, or the next clause's conjunction ("before you are seen since it
can mask a fever")."""
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NOT_A_STEP_WORD = frozenset(
    [
        "first", "then", "only", "and", "or", "but", "so", "please", "also", "will", "can", "could", "should",
        "must", "need", "we", "us", "i", "me", "do", "don't", "not", "if", "how", "much", "many", "what", "right",
        "away", "now", "today", "usual", "wait", "for", "of", "on", "in", "at", "by", "with", "up", "let", "go",
        "come", "make", "sure", "start", "give", "take", "use", "until",
    ]
)  # fmt: skip
"""Words that name no step of their own (and the commonest verbs of any step: "take", "give", "use"): kept out of
the order keys, which are what each step is about."""


@dataclass(frozen=True)
class OppositePair:
    name: str
    a: tuple[str, ...]
    b: tuple[str, ...]
    source: str
    a_patterns: tuple[str, ...] = ()
    b_patterns: tuple[str, ...] = ()
    """Regular expressions for a side said in too many words to list ("at your next eye appointment", "at your
    next therapy session"), matched on the lower-cased sentence like the phrases."""


@lru_cache(maxsize=1)
def opposite_pairs() -> tuple[OppositePair, ...]:
    """The clinical opposites in ``data/opposites.toml``, each with its source."""
    text = (resources.files("bedside.text") / "data" / "opposites.toml").read_text(encoding="utf-8")
    return tuple(
        OppositePair(
            entry["name"],
            tuple(entry["a"]),
            tuple(entry["b"]),
            entry["source"],
            tuple(entry.get("a_patterns", ())),
            tuple(entry.get("b_patterns", ())),
        )
        for entry in tomllib.loads(text)["pair"]
    )


@lru_cache(maxsize=1)
def _opposite_patterns() -> tuple[tuple[re.Pattern[str], str, str], ...]:
    phrases = [
        (phrase, pair.name, side) for pair in opposite_pairs() for side in ("a", "b") for phrase in getattr(pair, side)
    ]
    phrases.sort(key=lambda found: -len(found[0]))
    patterns = [
        (re.compile(pattern), pair.name, side)
        for pair in opposite_pairs()
        for side in ("a", "b")
        for pattern in getattr(pair, f"{side}_patterns")
    ]
    return tuple((re.compile(rf"\b{re.escape(p)}\b"), name, side) for p, name, side in phrases) + tuple(patterns)


_PHRASE_END = frozenset(
    [
        "and",
        "or",
        "but",
        "so",
        "then",
        "until",
        "for",
        "since",
        "because",
        "while",
        "as",
        "than",
        "to",
        "of",
        "in",
        "on",
        "at",
        "by",
    ]
)


def _keys(rest: str) -> list[str]:
    """The content words of what a slot word governs (up to three, to the next conjunction or preposition),
    singular and without "-ing": "your next doses" gives "dose", "stopping it" "stop", "a 10-pound lifting
    restriction" "10-pound", "lift", "restriction"."""
    keys: list[str] = []
    for word in rest.split():
        word = word.strip("'-")
        if word in _PHRASE_END or len(keys) == 3:
            break
        if not word or word in _FILLER:
            continue
        if word.endswith("ing") and len(word) > 5:
            word = word[:-3]
            if len(word) > 2 and word[-1] == word[-2]:
                word = word[:-1]  # "stopping" -> "stop"
        elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
        keys.append(word)
    return keys


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def read_slots(lowered: str) -> tuple[frozenset[Slot], str]:
    """The slots ``lowered`` (a lower-cased sentence) fills, and the sentence with the phrases that said them
    blanked (same length, so offsets hold)."""
    slots: set[Slot] = set()
    for pattern, name, side in _opposite_patterns():
        for match in pattern.finditer(lowered):
            slots.add(("opposite", name, side))
            if _NEGATIVE_WORD.search(match.group()):  # "no longer contagious": not a negation of the sentence
                lowered = _blank(lowered, *match.span())
    compared: set[str] = set()
    for pattern, value in _COMPARISONS:
        for match in pattern.finditer(lowered):
            compared.add(match.group("n") or "")
            said = value
            negation = _NEGATION_BEFORE.search(lowered, 0, match.start("c"))
            if negation and _PLAIN_MORE.fullmatch(match.group("c")):
                said = "<"
                lowered = _blank(lowered, *negation.span())
            slots.add(("comparison", match.group("n") or "", said))
            lowered = _blank(lowered, *match.span("c"))
    # A number said plainly is "=": against the same number as a cap or a floor ("8 a day" and "no more than 8
    # a day") the two differ in what they allow.
    slots.update(("comparison", n, "=") for n in set(_PLAIN_NUMBER.findall(lowered)) - compared)
    scopes = {
        "dose" if m.group("once") else _SCOPE_VALUE.get(m.group("v"), m.group("v")) for m in _SCOPE.finditer(lowered)
    }
    if len(scopes) == 1:
        slots.add(("scope", "", scopes.pop()))
    for pattern, value in ((_UP, "up"), (_DOWN, "down")):
        if pattern.search(lowered):
            slots.add(("direction", "", value))
    slots.update(_order(lowered))
    for clause in _CONDITION_CLAUSE.finditer(lowered):
        for join in _JOIN.finditer(clause.group("clause")):
            slots.add(("joined", "condition", "either" if join.group(1) == "or" else "both"))
    for pattern, kind in ((_SEQUENCE, "sequence"), (_WITH, "with"), (_CONDITION, "condition")):
        for match in pattern.finditer(lowered):
            value = match.group("v") or match.groupdict().get("w") or ""
            if kind == "sequence":
                value = _SEQUENCE_VALUE.get(value, value)
            elif kind == "condition":
                value = "unless" if value.startswith(("unless", "except")) else "if"
            slots.update((kind, key, value) for key in _keys(match.group("rest")))
    return frozenset(slots), lowered


def _order(lowered: str) -> set[Slot]:
    """``("order", stem, "first"|"second")`` for each content word of two steps a sentence puts in order: around
    one ", then" / "and then", or one "before"/"after" clause (to its comma or the next clause: "before taking the
    pills, phone us" puts the call first). A sentence with more than one such marker is not read (which step is
    which would be a guess)."""
    thens, clauses = list(_THEN.finditer(lowered)), list(_STEP_CLAUSE.finditer(lowered))
    if len(thens) + len(clauses) != 1:
        return set()
    if thens:
        first, second = lowered[: thens[0].start()], lowered[thens[0].end() :]
    else:  # the clause runs to its comma; the rest of the sentence is the other step, wherever it stands
        marker = clauses[0]
        end = _CLAUSE_END.search(lowered, marker.end())
        stop = end.start() if end else len(lowered)
        clause, rest = lowered[marker.end() : stop], lowered[: marker.start()] + " " + lowered[stop:]
        first, second = (clause, rest) if marker.group("v") == "after" else (rest, clause)
    steps = []
    for part in (first, second):
        words = {word_stem(w) for w in _WORD.findall(part) if w not in _NOT_A_STEP_WORD and w not in _FILLER}
        steps.append(words)
    shared = steps[0] & steps[1]
    return {
        ("order", w, value) for words, value in zip(steps, ("first", "second"), strict=True) for w in words - shared
    }


def slot_conflicts(reference: frozenset[Slot], candidate: frozenset[Slot]) -> list[tuple[str, str, str]]:
    """``(kind, reference's value, candidate's value)`` for each slot the two sentences fill differently, where
    neither sentence also fills it the other's way."""
    found = []
    reordered: dict[str, list[str]] = {"first": [], "second": []}
    for kind, key, value in sorted(reference):
        theirs = {v for k, s, v in candidate if (k, s) == (kind, key)}
        mine = {v for k, s, v in reference if (k, s) == (kind, key)}
        if theirs and not theirs & mine and len(mine) == 1:
            if kind == "order":  # one conflict for the steps swapped, not one per word of them
                reordered[value].append(key)
                continue
            shown = f"{key} " if key else ""
            found.append((kind, f"{value} {shown}".strip(), f"{'/'.join(sorted(theirs))} {shown}".strip()))
    if reordered["first"] or reordered["second"]:
        steps = " / ".join(" ".join(words) for words in reordered.values() if words)
        found.append(("order", f"{steps} in this order", "the other way round"))
    return found


__all__ = ["OppositePair", "Slot", "opposite_pairs", "read_slots", "slot_conflicts"]
