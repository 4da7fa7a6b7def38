"""Who a patient lives with and where, read from a case fact or a spoken answer (issue 45).

A simulated patient who says "I live with my son and his wife" against a fact "lives with his daughter", "I've got
my own apartment now" against "lives in a shelter", or "my daughter moved in with me, so I'm not alone" against
"lives alone" contradicts the case; the fidelity checker's other rules cannot see it, since the two name
different people rather than the same thing negated. Facts are often third-person notes ("Widowed and lives
alone"), answers first-person and elliptical ("My son and his wife." to "Who lives with you?").

The reading is deliberately partial: a household is read only from a sentence about living somewhere or with
someone (or an answer to a question about it), and two readings conflict only where they cannot both hold: alone
against someone, two sets of people with no one in common ("my husband" against "her husband and son" is a
partial answer, not a conflict), or two different kinds of place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LIVE = r"(?:live|lives|living|lived|stay|stays|staying|stayed)"
_ALONE = re.compile(
    rf"\b{_LIVE}\b(?:\s+[\w'-]+){{0,3}}?\s+(?:alone|on (?:my|his|her|their) own|by (?:my|him|her)self)\b",
    re.IGNORECASE,
)
_NOT_ALONE = re.compile(r"\bnot (?:alone|on (?:my|his|her) own|by (?:my|him|her)self)\b", re.IGNORECASE)
_WITH = re.compile(
    rf"\b{_LIVE}\s+(?:together\s+)?(?:(?:at home|in (?:an?|the|my|our|his|her) [\w-]+(?: [\w-]+)?)\s+)?with\s+"
    r"(?P<who>[^,.;:!?]+)",
    re.IGNORECASE,
)
"""Living with someone, the place said between ("lives in a bungalow with her husband")."""
_WITH_ME = re.compile(
    r"(?P<who>(?:\b(?:my|our|his|her)\s+)?[\w' ]{2,40}?)\s+(?:lives|live|is living|moved in|has moved in|stays)\s+"
    r"with (?:me|us|him|her)\b",
    re.IGNORECASE,
)
_TOGETHER = re.compile(rf"(?P<who>[\w' ]{{2,40}}?)\s+and (?:i|me)\s+{_LIVE}\s+together\b", re.IGNORECASE)
_JUST_ME = re.compile(
    r"^\W*(?:(?:well|oh|um|uh|no),?\s+)*(?:it'?s\s+)?(?:just|only) me\b(?!,?\s+(?:and|my|our)\b)", re.IGNORECASE
)
"""An answer that the patient lives alone: "It's just me." (not "just me and my daughter", nor "just me, my husband
and our little girl")."""
_ON_MY_OWN = re.compile(r"\b(?:alone|on (?:my|his|her) own|by (?:my|him|her)self)\b", re.IGNORECASE)
"""An answer to who is at home that says no one ("I'm on my own since my husband died")."""
_ANSWER_BREAK = re.compile(r"[,;]|\b(?:but|since|after|because|ever since)\b", re.IGNORECASE)
_NEXT_PERSON = re.compile(r"\s*(?:and\s+)?(?:my|our)\b", re.IGNORECASE)
_ASKED_WHO = re.compile(
    rf"\bwho\b[^?]*\b{_LIVE}\b|\bwho(?:'s| is) (?:at home|in the house)\b|\b{_LIVE}\b[^?]*\bwith anyone\b|"
    rf"\bwho do you {_LIVE}\b",
    re.IGNORECASE,
)
_ASKED_HOME = re.compile(
    rf"\b{_LIVE}\b|\bwhere\b|\bhousing\b|\bhome (?:situation|life|set-?up)\b|\bat home with\b", re.IGNORECASE
)
"""A question about where or how the patient lives, which a place alone answers ("My own flat."); not one that
only says "at home" ("What are your blood pressures at home?" is answered by "my home readings")."""
_KIN = {
    "husband": "partner", "wife": "partner", "spouse": "partner", "partner": "partner", "boyfriend": "partner",
    "girlfriend": "partner", "fiance": "partner", "fiancee": "partner",
    "mother": "mother", "mom": "mother", "mum": "mother", "mam": "mother", "father": "father", "dad": "father",
    "son": "son", "daughter": "daughter", "sister": "sister", "brother": "brother", "roommate": "roommate",
    "flatmate": "roommate", "housemate": "roommate", "cousin": "cousin", "friend": "friend", "aunt": "aunt",
    "uncle": "uncle", "grandson": "grandchild", "granddaughter": "grandchild", "niece": "niece", "nephew": "nephew",
    "grandmother": "grandparent", "grandfather": "grandparent", "grandma": "grandparent", "grandpa": "grandparent",
    "caregiver": "carer", "carer": "carer",
}  # fmt: skip
_GROUPS = {
    "parents": ("mother", "father"),
    "children": ("son", "daughter"),
    "kids": ("son", "daughter"),
    "sons": ("son",),
    "daughters": ("daughter",),
    "sisters": ("sister",),
    "brothers": ("brother",),
    "grandchildren": ("grandchild",),
    "grandkids": ("grandchild",),
    "roommates": ("roommate",),
    "flatmates": ("roommate",),
    "housemates": ("roommate",),
    "family": (),  # anyone: "lives with family" agrees with any relative
}
"""Words for several people: each stands for the people it may mean."""
_PLACES = (
    (re.compile(r"\b(?:homeless|shelter|on the streets?|sleeping rough)\b", re.IGNORECASE), "shelter"),
    (
        re.compile(
            r"\b(?:nursing|care|residential|group|rest) home\b|\bassisted[- ]living\b|\b(?:care|nursing) facility\b",
            re.IGNORECASE,
        ),
        "care home",
    ),
    (re.compile(r"\b(?:dorm|dormitory|halls of residence|student halls)\b", re.IGNORECASE), "dormitory"),
    (re.compile(rf"\b{_LIVE} (?:at home|in my own home)\b", re.IGNORECASE), "home"),
    (
        re.compile(
            r"\b(?:my|his|her|their|our) own (?:place|apartment|flat|house|home)\b|\b(?:my|our) (?:apartment|flat|"
            r"house|home)\b|\b(?:an?|the) (?:[\w-]+ )?(?:apartment|flat|house|bungalow|condo)\b",
            re.IGNORECASE,
        ),
        "home",
    ),
    (
        re.compile(r"\b(?:a room|staying|couch|sofa)\b[^.,;]{0,25}\b\w+'s (?:place|house|flat|apartment)\b", re.I),
        "host",
    ),
)
"""Kinds of place, each another way of living than the rest: a shelter, a care home, student halls, one's own
home, someone else's home."""
_WORD = re.compile(r"[a-z']+")
_OWNERS = frozenset({"my", "our", "his", "her", "their"})


@dataclass(frozen=True)
class Household:
    """Who a patient lives with (kin roles, "anyone" for an unnamed someone) or that they live alone, and the kind
    of place."""

    people: frozenset[str] = frozenset()
    alone: bool = False
    place: str | None = None


def _people(phrase: str, first_person: bool) -> set[str]:
    """The kin a phrase names as the patient's: in a patient's own words "my son and his wife" is the son and his
    wife (no kin of the patient's but the son), in a third-person note "his wife" is the patient's."""
    found: set[str] = set()
    owner = "my"
    refused = False  # "no other kids yet": the kids are not there
    for word in _WORD.findall(phrase.lower()):
        if word in ("no", "not", "without"):
            refused = True
        elif word in _OWNERS:
            owner = word
        elif (owner in ("my", "our") or not first_person) and not refused:
            if word in _KIN:
                found.add(_KIN[word])
            elif word in _GROUPS:
                found.update(_GROUPS[word] or ("anyone",))
    return found


def _answer_list(text: str) -> str:
    """An answer's people, to its first break: a "but" or a "since", or a comma that does not go on from a short item
    to another person ("Just me, but my son comes by on weekends" names no one; "me, my dad, and my little sister"
    names two; "I'm on my own now, my wife passed" and "just me since I lost my husband" name no one)."""
    start = 0
    for found in _ANSWER_BREAK.finditer(text):
        item = text[start : found.start()].split()
        if found.group() != "," or len(item) > 3 or not _NEXT_PERSON.match(text, found.end()):
            return text[: found.start()]
        start = found.end()
    return text


def household(text: str, asked: str = "") -> Household | None:
    """The household ``text`` states, or None where it says nothing of one. ``asked``: the question the text
    answers; an answer to "Who lives with you?" names the people without a verb ("My son and his wife.")."""
    first_person = bool(re.search(r"\b(?:i|i'm|i've|me|my)\b", text, re.IGNORECASE))
    people: set[str] = set()
    for pattern in (_WITH, _WITH_ME, _TOGETHER):
        for match in pattern.finditer(text):
            people |= _people(match.group("who"), first_person)
    answer = asked and _ASKED_WHO.search(asked) and not re.search(rf"\b{_LIVE}\b", text, re.IGNORECASE)
    if not people and answer:  # the answer runs to its first break: "Just me, but my son comes by on weekends"
        people = _people(_answer_list(text), first_person=True)
    alone = (
        bool(_ALONE.search(text)) or bool(answer and (_JUST_ME.search(text) or _ON_MY_OWN.search(_answer_list(text))))
    ) and not _NOT_ALONE.search(text)
    if _NOT_ALONE.search(text) and not people:
        people = {"anyone"}
    place = next((kind for pattern, kind in _PLACES if pattern.search(text)), None)
    if not (
        people or alone or (place and (re.search(rf"\b{_LIVE}\b", text, re.IGNORECASE) or _ASKED_HOME.search(asked)))
    ):
        return None
    return Household(frozenset(people), alone and not people, place)


def household_conflict(mine: Household, theirs: Household) -> str | None:
    """Why two households cannot both hold, or None: alone against someone, people with no one in common, or two
    kinds of place."""
    if (mine.alone and theirs.people) or (theirs.alone and mine.people):
        return f"{_show(theirs)} vs {_show(mine)}"
    people = mine.people and theirs.people and "anyone" not in mine.people | theirs.people
    if people and not mine.people & theirs.people:
        return f"{_show(theirs)} vs {_show(mine)}"
    if mine.place and theirs.place and mine.place != theirs.place:
        return f"{theirs.place} vs {mine.place}"
    return None


def _show(home: Household) -> str:
    if home.alone:
        return "alone"
    return "with " + ", ".join(sorted(home.people)) if home.people else home.place or "-"


__all__ = ["Household", "household", "household_conflict"]
