"""The clinical-safety guard: two sentences that differ in what to do about a medicine are not a match.

Embeddings and word overlap score "continue aspirin" and "stop aspirin" as near-identical, and EditJudge would
count the draft's sentence as content the clinician keeps: an error in the direction that matters most. The
guard reads six signals from each side with rules (and the MeSH drug recogniser of the ``concepts`` extra) and
reports a conflict when the two sides disagree:

- **action**: start, stop, continue, increase, decrease, hold (``take``/``use`` is compatible with start and
  continue; "don't take" is ``avoid``, compatible with stop and hold). A negated action is read as its
  consequence: "don't stop it" is continue, "don't increase" is continue.
- **drug**: generic names (a brand resolves to its generic, so "Tylenol" equals "acetaminophen").
- **number**: numbers with their units (doses, readings, counts); a reference that gives a dose (mg, tablets,
  puffs, ...) against a candidate with no number at all is a conflict too (the draft is vaguer).
- **negation**: one side is negated and the other is not, after the negations an action consumed ("don't
  stop") and fixed phrases that carry no negative meaning ("don't hesitate to call", "not uncommon").
- **laterality**: left, right, both sides (only next to a body part, so "right away" is not a side).
- **time**: today, tonight, tomorrow, now, weekdays, durations ("2 weeks"), frequencies ("twice a day").

Drugs, numbers, sides and times conflict only when both sides mention some and neither side's set contains the
other's (a draft that names one of the reference's two drugs is partial, not contradictory). Actions conflict
when both sides name actions and none is shared or compatible. A sentence without a signal never conflicts on
it: the guard judges contradictions, not vagueness (except the dose rule above); similarity judges the rest.

The rules were written with bedside's labelled pairs (``data/guard_pairs.jsonl``: paraphrases and hard
negatives of each kind, written for bedside); they are a regression set, not an unbiased estimate of accuracy.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

CONFLICT_KINDS = ("action", "drug", "number", "negation", "laterality", "time")
GuardMode = Literal["reject", "flag", "off"]
GUARD_MODES: tuple[GuardMode, ...] = ("reject", "flag", "off")

_WORD = re.compile(r"[a-z0-9]+(?:[.'’/][a-z0-9]+)*")
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100,
    "half": 0.5, "a": 1, "an": 1,
}  # fmt: skip
_DOSE_UNITS = {
    "mg": "mg", "milligram": "mg", "milligrams": "mg", "mcg": "mcg", "microgram": "mcg", "micrograms": "mcg",
    "g": "g", "gram": "g", "grams": "g", "ml": "ml", "milliliter": "ml", "milliliters": "ml", "cc": "ml",
    "unit": "unit", "units": "unit", "tablet": "tablet", "tablets": "tablet", "pill": "tablet", "pills": "tablet",
    "capsule": "tablet", "capsules": "tablet", "puff": "puff", "puffs": "puff", "drop": "drop", "drops": "drop",
    "patch": "patch", "patches": "patch", "dose": "dose", "doses": "dose", "mmol": "mmol",
}  # fmt: skip
_OTHER_UNITS = {
    "percent": "%", "%": "%", "mmhg": "mmhg", "degrees": "degree", "degree": "degree", "f": "degree",
    "lb": "lb", "lbs": "lb", "pounds": "lb", "pound": "lb", "kg": "kg", "kilograms": "kg", "times": "times",
    "cycles": "cycle", "cycle": "cycle", "sessions": "session", "session": "session",
}  # fmt: skip
_TIME_UNITS = {
    "minute": "minute", "minutes": "minute", "hour": "hour", "hours": "hour", "hr": "hour", "hrs": "hour",
    "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
    "year": "year", "years": "year",
}  # fmt: skip
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

# Time phrases, most specific first; each match is blanked so its words are not read twice.
_TIME_PHRASES: tuple[tuple[str, str], ...] = (
    (r"\b(?:twice (?:a|per|each) day|twice daily|two times (?:a|per) day|bid|b\.i\.d\.?)\b", "2/day"),
    (r"\b(?:three times (?:a|per) day|three times daily|tid|t\.i\.d\.?)\b", "3/day"),
    (r"\b(?:four times (?:a|per) day|four times daily|qid|q\.i\.d\.?)\b", "4/day"),
    (r"\b(?:once (?:a|per|each) day|once daily|every day|each day|daily|qd)\b", "1/day"),
    (r"(?<!for )(?<!in )\b(?:a|per) day\b", "1/day"),
    (r"\b(?:once (?:a|per) week|weekly|every week)\b", "1/week"),
    (r"\b(?:as needed|when needed|if needed|when you need it|prn)\b", "as needed"),
    (r"\b(?:right away|immediately|at once|as soon as possible|asap|right now|without delay)\b", "now"),
    (r"\b(?:tonight|this evening|this night)\b", "tonight"),
    (r"\b(?:this morning|this afternoon|today|later today|by the end of the day|the same day)\b", "today"),
    (r"\b(?:tomorrow)\b", "tomorrow"),
    (r"\b(?:yesterday)\b", "yesterday"),
    (r"\b(?:this week)\b", "this week"),
    (r"\b(?:next week)\b", "next week"),
    (r"\b(?:next month)\b", "next month"),
    (r"\b(?:at bedtime|before bed|at night|nightly|in the evening|every evening|every night)\b", "evening"),
    (r"\b(?:in the morning|every morning|before breakfast|each morning)\b", "morning"),
    (r"\b(?:with (?:food|meals|a meal|breakfast)|after (?:eating|meals))\b", "with food"),
    (r"\b(?:on an empty stomach|before (?:eating|meals))\b", "empty stomach"),
)
_COMPILED_TIMES = tuple((re.compile(p), label) for p, label in _TIME_PHRASES)

# Medication actions. Each pattern is read after an optional negation just before it.
_ACTION_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"keep (?:taking|using|on)|continuing|continue|carry on with|stay on|remain on|stick with", "continue"),
    (r"discontinue|stop|quit|cease|come off|get off|no longer take|avoid", "stop"),
    (
        r"restarting|restart|resume|starting|start|begin|initiate|prescribing|prescribe|adding|add|trying|try"
        r"|switch you to|put you on",
        "start",
    ),
    (r"increase|raise|double|go up on|bump up|a higher dose", "increase"),
    (r"decrease|reduce|lower|cut back|cut down|taper|halve|a lower dose", "decrease"),
    (r"hold off on|hold|pause|skip|withhold", "hold"),
    (r"take|taking|use|using|apply", "take"),
)
_ACTION = re.compile(
    r"\b(?P<neg>(?:do not|don't|dont|please don't|never|not|no need to)\s+(?:\w+\s+)?)?"
    r"(?P<verb>" + "|".join(f"(?:{p})" for p, _ in _ACTION_PATTERNS) + r")(?:s|es|ed|d|ing|ping|ped)?\b"
    r"(?:\s+(?:taking|using|to take|to use)\b)?"  # "stop taking": the gerund belongs to the action
)
_NEGATED = {"stop": "continue", "hold": "continue", "increase": "continue", "decrease": "continue"}
_NEGATED.update({"take": "avoid", "continue": "stop", "start": "hold"})
_COMPATIBLE = {
    frozenset({"take", "continue"}),
    frozenset({"take", "start"}),
    frozenset({"avoid", "stop"}),
    frozenset({"avoid", "hold"}),
}

# Negation cues left after removing phrases whose negation is not a negative statement.
_NOT_NEGATIVE = re.compile(
    r"\b(?:do not|don't|dont|please do not|please don't) hesitate\b|\bnot (?:un\w+|only|sure)\b"
    r"|\bno later than\b|\bnot to worry\b|\bno matter\b|\bif not\b"
)
_NEGATION = re.compile(r"\b(?:no|not|never|none|nothing|neither|nor|cannot|can't|won't|isn't|aren't)\b|n't\b")

_BODY = (
    r"arm|arms|leg|legs|hand|hands|foot|feet|eye|eyes|ear|ears|knee|knees|hip|hips|shoulder|shoulders|breast|"
    r"breasts|side|sides|lung|lungs|kidney|kidneys|ankle|ankles|wrist|wrists|elbow|elbows|chest|flank|groin|neck|"
    r"jaw|thigh|thighs|calf|calves|toe|toes|finger|fingers|heel|heels|ovary|ovaries|testicle|buttock|abdomen|"
    r"lobe|ventricle|atrium|carotid|temple|cheek|nostril|armpit|axilla|rib|ribs|back|lower|upper|sided"
)
_SIDE = re.compile(
    rf"\b(?P<side>left|right|bilateral|both)[\s-]+(?:\w+[\s-]+)?(?:{_BODY})\b|\bon the (?P<side2>left|right)\b|"
    r"\b(?P<side3>bilaterally)\b"
)
_NUMBER = re.compile(r"(?<![\w/])(\d+(?:\.\d+)?(?:/\d+)?)(?:\s*(%|[a-z]+))?")
_PHONE = re.compile(r"\b\d{3}[-.\s]\d{3,4}(?:[-.\s]\d{4})?\b|\b911\b")


@dataclass(frozen=True)
class ClinicalSignals:
    """What one sentence says about medicines, numbers, sides and times, normalised for comparison."""

    actions: frozenset[str]
    drugs: frozenset[str]
    numbers: frozenset[str]
    doses: frozenset[str]
    negated: bool
    sides: frozenset[str]
    times: frozenset[str]


@dataclass(frozen=True)
class Conflict:
    kind: str  # one of CONFLICT_KINDS
    reference: str
    candidate: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.reference} vs {self.candidate}"


DrugFinder = Callable[[str], Sequence[str]]


def _mesh_drug_finder() -> DrugFinder | None:
    try:
        from drug_named_entity_recognition import find_drugs
    except ImportError:
        warnings.warn(
            "the clinical-safety guard cannot check drug names: install the MeSH recognisers "
            "(pip install 'bedside[concepts]'); actions, numbers, negation, sides and times are still checked",
            stacklevel=3,
        )
        return None

    def drugs(text: str) -> list[str]:
        tokens = re.findall(r"\w+(?:[-'’]\w+)*", text)
        found: Any = find_drugs(tokens, is_use_omop_api=False, use_pub_chem_api=False)
        return [str(data.get("name") or data.get("matching_string")).lower() for data, _, _ in found]

    return drugs


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return _NUMBER_WORDS.get(text)


def _fmt(value: float) -> str:
    return f"{value:g}"


class ClinicalGuard:
    """Reads :class:`ClinicalSignals` from sentences and finds the conflicts between two of them."""

    def __init__(self, drug_finder: DrugFinder | Literal["mesh"] | None = "mesh") -> None:
        self._drug_finder = _mesh_drug_finder() if drug_finder == "mesh" else drug_finder
        self.signals = lru_cache(maxsize=4096)(self._signals)

    @property
    def checks_drugs(self) -> bool:
        return self._drug_finder is not None

    def _signals(self, text: str) -> ClinicalSignals:
        lowered = text.lower().replace("’", "'")
        lowered = _PHONE.sub(" ", lowered)
        times: set[str] = set()
        for pattern, label in _COMPILED_TIMES:
            if pattern.search(lowered):
                times.add(label)
                lowered = pattern.sub(" ", lowered)
        times.update(day for day in _WEEKDAYS if re.search(rf"\b{day}s?\b", lowered))
        # Durations and intervals: "in 2 weeks", "every 6 hours", "a few days".
        words = _WORD.findall(lowered)
        for index, (amount, unit) in enumerate(itertools.pairwise(words)):
            every = "every " if index > 0 and words[index - 1] == "every" else ""
            if unit in _TIME_UNITS and (value := _number(amount)) is not None:
                times.add(f"{every}{_fmt(value)} {_TIME_UNITS[unit]}")
            elif unit in _TIME_UNITS and amount in ("few", "several", "couple"):
                times.add(f"few {_TIME_UNITS[unit]}")
        numbers: set[str] = set()
        doses: set[str] = set()
        for match in _NUMBER.finditer(lowered):
            digits, unit = match.group(1), match.group(2) or ""
            if unit in _TIME_UNITS:
                continue
            if unit in _DOSE_UNITS:
                doses.add(f"{digits} {_DOSE_UNITS[unit]}")
            numbers.add(digits)  # compared by value: "20 to 24 units" and "20 units to 24 units" agree
        for index, word in enumerate(words):  # "two tablets", "two senna tablets"
            amount = _NUMBER_WORDS.get(word) if word not in ("a", "an") else None
            dose_unit = next((w for w in words[index + 1 : index + 3] if w in _DOSE_UNITS), None)
            if amount is not None and dose_unit is not None:
                doses.add(f"{_fmt(amount)} {_DOSE_UNITS[dose_unit]}")
                numbers.add(_fmt(amount))
        actions: set[str] = set()
        consumed: list[tuple[int, int]] = []
        for match in _ACTION.finditer(lowered):
            verb = match.group("verb")
            action = next(label for pattern, label in _ACTION_PATTERNS if re.fullmatch(pattern, verb))
            if match.group("neg"):
                action = _NEGATED.get(action, action)
                consumed.append(match.span("neg"))
            actions.add(action)
        residual = lowered
        for start, end in sorted(consumed, reverse=True):
            residual = residual[:start] + " " * (end - start) + residual[end:]
        residual = _NOT_NEGATIVE.sub(" ", residual)
        sides = set()
        for match in _SIDE.finditer(lowered):
            side = match.group("side") or match.group("side2") or match.group("side3")
            sides.add("both" if side in ("both", "bilateral", "bilaterally") else side)
        drugs = frozenset(_drug_key(name) for name in self._drug_finder(text)) if self._drug_finder else frozenset()
        drugs = frozenset(d for d in drugs if d)
        return ClinicalSignals(
            actions=frozenset(actions),
            drugs=drugs,
            numbers=frozenset(numbers),
            doses=frozenset(doses),
            negated=bool(_NEGATION.search(residual)),
            sides=frozenset(sides),
            times=frozenset(times),
        )

    def conflicts(self, reference: str, candidate: str) -> list[Conflict]:
        """How ``candidate`` (draft content) contradicts ``reference`` (the clinician's sentence); [] if not."""
        ref, cand = self.signals(reference), self.signals(candidate)
        found = []
        if ref.actions and cand.actions and not _actions_agree(ref.actions, cand.actions):
            found.append(Conflict("action", _show(ref.actions), _show(cand.actions)))
        for kind, a, b in (("drug", ref.drugs, cand.drugs), ("laterality", ref.sides, cand.sides)):
            if _sets_conflict(a, b):
                found.append(Conflict(kind, _show(a), _show(b)))
        if _sets_conflict(ref.numbers, cand.numbers) or (ref.doses and not cand.numbers):
            found.append(Conflict("number", _show(ref.numbers), _show(cand.numbers)))
        if ref.negated != cand.negated:
            found.append(Conflict("negation", _polarity(ref.negated), _polarity(cand.negated)))
        if _sets_conflict(ref.times, cand.times):
            found.append(Conflict("time", _show(ref.times), _show(cand.times)))
        return found


_DRUG_CLASS = re.compile(r"inhibitors|agents|antagonists|blockers|agonists|drugs|compounds")


def _drug_key(name: str) -> str:
    """A drug's first word ("polyethylene glycol 3350" is "polyethylene"); "" for a class ("statins")."""
    if _DRUG_CLASS.search(name):
        return ""
    words = name.split()
    return words[0] if words else ""


def _actions_agree(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a & b) or any(frozenset({x, y}) in _COMPATIBLE for x in a for y in b)


def _sets_conflict(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a) and bool(b) and not (a <= b or b <= a)


def _show(values: frozenset[str]) -> str:
    return ", ".join(sorted(values)) or "none"


def _polarity(negated: bool) -> str:
    return "negated" if negated else "affirmative"


@dataclass(frozen=True)
class GuardPair:
    """One labelled pair: a clinician's sentence, a draft sentence, whether it is a match, and its kind."""

    id: str
    reference: str
    candidate: str
    match: bool
    kind: str  # "paraphrase" or one of CONFLICT_KINDS


def read_guard_pairs() -> list[GuardPair]:
    """bedside's labelled pairs (``data/guard_pairs.jsonl``): paraphrases and hard negatives of each kind."""
    import json
    from importlib import resources

    text = (resources.files("bedside.tasks.drafting") / "data" / "guard_pairs.jsonl").read_text(encoding="utf-8")
    return [GuardPair(**json.loads(line)) for line in text.splitlines() if line.strip()]


@lru_cache(maxsize=1)
def default_guard() -> ClinicalGuard:
    """One guard per process: the drug dictionary takes a couple of seconds to load."""
    return ClinicalGuard()


__all__ = [
    "CONFLICT_KINDS",
    "GUARD_MODES",
    "ClinicalGuard",
    "ClinicalSignals",
    "Conflict",
    "GuardMode",
    "GuardPair",
    "default_guard",
    "read_guard_pairs",
]
