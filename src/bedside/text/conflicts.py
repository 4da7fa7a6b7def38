"""Clinical conflicts between two sentences: what to do about a medicine, doses, negation, sides, times.

Shared rules (a text layer, no task): EditJudge's clinical-safety guard (:mod:`bedside.tasks.drafting.guard`)
refuses a match that conflicts with the clinician's sentence, and the simulator fidelity checker
(:mod:`bedside.sim.contradiction`) reads a patient sentence that conflicts with one of its facts as a
contradiction. Why rules: two sentences that differ in what to do about a medicine are not a match.

Embeddings and word overlap score "continue aspirin" and "stop aspirin" as near-identical, and EditJudge would
count the draft's sentence as content the clinician keeps: an error in the direction that matters most. The
guard reads signals from each side with rules (and the MeSH drug recogniser of the ``concepts`` extra) and
reports a conflict when the two sides disagree. Whole-sentence signals:

- **action**: start, stop, continue, increase, decrease, hold, and the plan verbs postpone, proceed and cancel
  (``take``/``use`` is compatible with start and continue; "don't take" is ``avoid``, compatible with stop and
  hold; postpone is compatible with hold, proceed with continue/start/take, cancel with stop/avoid/hold). A
  negated action is read as its consequence: "don't stop it" is continue, "don't increase" is continue, "not
  postpone" is proceed. Verb forms are inflected ("increasing", "stopped", "tapering"), and an instruction's
  polarity is read without an action verb: "no need to keep taking", "no longer needed", "no more" and "you're
  done with" are stop, as is "give up"; "be sure to finish", "complete the course", "until it's gone" and "keep
  doing" ("keep exercising") are continue. "As prescribed" is not a start, "increase the risk" not an
  increase, "lower back" not a decrease.
- **drug**: generic names (a brand resolves to its generic, so "Tylenol" equals "acetaminophen"), and drug
  classes from bedside's class list (``bedside/text/data/drug_classes.toml``: "statin", "blood thinner", "water
  pill"...): two different classes, or a named drug outside the class the other side names, conflict.
- **number**: numbers with their units (doses, readings, counts); a reference that gives a dose (mg, tablets,
  puffs, ...) against a candidate with no number at all is a conflict too (the draft is vaguer). A list marker
  at the start of a sentence or line ("3.", "4)") is not a number.
- **negation**: a word one side negates and the other affirms (NegEx, :mod:`bedside.text.assertion`: "no fever
  but a cough" against "a fever but no cough"), or one side negates something and the other nothing; read after
  the negations an action consumed ("don't stop", "no longer needed") and fixed phrases that carry no negative
  meaning ("don't hesitate to call"). A test that came back negative says the test showed none of what it looks
  for ("your strep test was negative" negates strep, as "the test did not show strep" does), and a passive
  recommendation seeks its subject ("the flu vaccine is strongly recommended" against "... is not needed"). A
  "no" put as an action ("avoid alcohol", "you will not need another one") and one put with a cue ("do not drink
  alcohol", "your next one is not due") are one "no" where they share a word or the action names none.
- **laterality**: left, right, both sides ("each eye" is both; only next to a body part, so "right away" is not
  a side).
- **time**: today, tonight, tomorrow, now, weekdays, durations ("2 weeks"), frequencies ("twice a day"; as many
  parts of the day as a frequency counts are that frequency: "in the morning and at bedtime" or "before your morning
  meal and your evening meal" is twice a day; "only on bad days" and "when I feel one coming on" are as needed, "as
  needed to get two soft stools" is not; a cap "in a day" or "in any 24-hour period" is per day), and food timing
  (with food / on an empty stomach, reported as a time conflict). "Don't take it on an empty stomach" is read as
  "take it with food".

Sets are not enough: "10 mg in the morning and 20 mg at night" has the same numbers as its reverse, and
"continue lisinopril, metformin and aspirin" shares its actions and drugs with "continue lisinopril and
metformin but consider stopping aspirin". So each sentence is also read as aligned **instructions**, one
(drug, action, dose, unit, time) tuple per drug or dose mention: a dose binds to the drug next to it in its
segment (a run between commas, "and", "or", "then") and to the nearest time there; a drug binds to the nearest
action in its clause (between ";", ":", "but", "while"...; "instead of X" and "rather than X" bind stop to X).
Two sentences conflict when the same drug is bound to disagreeing actions or times, when the doses for the
same drug and time differ or come in a different order, or when a dose change runs the other way ("from 20 to
24" vs "from 24 to 20").

Whole-sentence drugs, numbers, sides and times conflict only when both sides mention some and neither side's
set contains the other's (a draft that names one of the reference's two drugs is partial, not contradictory).
Actions conflict when both sides name actions and none is shared or compatible. A sentence without a signal
never conflicts on it: the guard judges contradictions, not vagueness (except the dose rule above); similarity
judges the rest.

The rules were written with bedside's labelled pairs (``data/guard_pairs.jsonl``: paraphrases and hard
negatives of each kind, written for bedside); they are a regression set, not an unbiased estimate of accuracy.
"""

from __future__ import annotations

import itertools
import re
import tomllib
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from bedside.text import assertion
from bedside.text.alignment import NEGATION_ALIGN, exchanged, read_change, recounted, shared_content, unreadable
from bedside.text.assertion import FUNCTION_WORDS, NOT_NEGATIVE, Polarity, polarity_flips
from bedside.text.quantities import AGE_AT, BARE_AGE, UnreadableText, normalise_quantities
from bedside.text.slots import Slot, complementary_mentions, read_slots, slot_conflicts
from bedside.text.times import counted_apart, in_days, same_time, times_conflict

CONFLICT_KINDS = ("action", "drug", "number", "negation", "laterality", "time")
"""The conflicts read from a sentence's signals (also the trained matcher's features); the slots of
:mod:`bedside.text.slots` add theirs under their own kinds (comparison, direction, sequence, count, with, condition,
joined, opposite)."""

_WORD = re.compile(r"[a-z0-9]+(?:[.'’/][a-z0-9]+)*")
_ARTICLE_AS_ONE = {"a": 1.0, "an": 1.0}
"""Number words reach the rules as digits (:mod:`bedside.text.quantities`); an article before a unit of time is
one of it ("in a week")."""
_DOSE_UNITS = {
    "mg": "mg", "milligram": "mg", "milligrams": "mg", "mcg": "mcg", "microgram": "mcg", "micrograms": "mcg",
    "g": "g", "gram": "g", "grams": "g", "ml": "ml", "milliliter": "ml", "milliliters": "ml", "cc": "ml",
    "unit": "unit", "units": "unit", "tablet": "tablet", "tablets": "tablet", "pill": "tablet", "pills": "tablet",
    "capsule": "tablet", "capsules": "tablet", "puff": "puff", "puffs": "puff", "drop": "drop", "drops": "drop",
    "patch": "patch", "patches": "patch", "dose": "dose", "doses": "dose", "mmol": "mmol",
}  # fmt: skip
_TIME_UNITS = {
    "minute": "minute", "minutes": "minute", "hour": "hour", "hours": "hour", "hr": "hour", "hrs": "hour",
    "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
    "year": "year", "years": "year", "second": "second", "seconds": "second", "sec": "second", "secs": "second",
}  # fmt: skip
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

# Food timing: (pattern, food label, time label the phrase also carries). Read before the time phrases.
_MEAL = r"(?:food|(?:each |every )?meals?|a meal|a snack|something to eat|(?:a glass of )?milk)"
_FOOD_PHRASES: tuple[tuple[str, str, str | None], ...] = (
    (r"\bbefore (?:your )?breakfast\b", "empty stomach", "morning"),
    (r"\bbefore (?:your )?(?:dinner|supper)\b", "empty stomach", "evening"),
    (r"\b(?:with|after) (?:your )?breakfast\b", "with food", "morning"),
    (r"\b(?:with|after) (?:your )?(?:dinner|supper|evening meal)\b", "with food", "evening"),
    (r"\bon an empty stomach\b|\bbefore (?:eating|you eat|meals|a meal|food|any food)\b", "empty stomach", None),
    (r"\bwithout (?:any )?(?:food|eating|a meal|meals)\b|\bbetween meals\b", "empty stomach", None),
    (rf"\b(?:away|apart|separately) from {_MEAL}", "empty stomach", None),
    (rf"\b(?:with|alongside|together with) (?:some |a little |a bit of |your )?(?:{_MEAL}|lunch)", "with food", None),
    (r"\bafter (?:eating|you eat|a meal|meals|food|lunch)\b|\bwhile (?:eating|you eat)\b", "with food", None),
    (r"\bon a full stomach\b", "with food", None),
)  # fmt: skip
_COMPILED_FOOD = tuple((re.compile(p), food, time) for p, food, time in _FOOD_PHRASES)
_FOOD_FLIP = {"with food": "empty stomach", "empty stomach": "with food"}

# Time phrases, most specific first; each match is blanked so its words are not read twice. A label "a+b" is two.
_TIME_PHRASES: tuple[tuple[str, str], ...] = (
    (r"\b(?:twice (?:a|per|each) day|twice daily|two times (?:a|per) day|bid|b\.i\.d\.?)\b", "2/day"),
    (r"\b(?:every|each) morning and (?:every |each )?(?:evening|night)\b", "2/day"),
    (r"\b(?:three times (?:a|per) day|three times daily|tid|t\.i\.d\.?)\b", "3/day"),
    (r"\b(?:four times (?:a|per) day|four times daily|qid|q\.i\.d\.?)\b", "4/day"),
    (r"\b(?:once (?:a|per|each) day|once daily|every (?:single )?day|each day|daily|qd)\b", "1/day"),
    # "just once in the morning", "once at night": the part of the day stays for the moment patterns below
    (r"\bonce(?=,? (?:in the (?:morning|evening|afternoon)|at (?:night|bedtime)|before bed)\b)", "1/day"),
    # not "if, a day after starting it", which says when
    (r"(?<!for )(?<!in )(?<!, )(?<!if )\b(?:a|per) day\b", "1/day"),
    (r"\b(?:just|only) (?:the )?once\b(?! (?:a|an|per|every|each|in|or)\b)", "1/day"),  # "just the once, at night"
    (r"\b(?:once (?:a|per) week|weekly|every (?:single )?week)\b", "1/week"),
    # not "twice monthly" or "3 times every year", which the rate reading reads
    (r"\b(?:once (?:a|per) month|(?<!twice )(?<!times )(?:monthly|every (?:single )?month|each month))\b", "1/month"),
    (r"\b(?:once (?:a|per) year|(?<!twice )(?<!times )(?:yearly|annually|every year|each year))\b", "1/year"),
    (
        r"\b(?:as needed(?! to (?:get|keep|have|make|achieve|reach|maintain|produce)\b)|when needed|if needed|prn|"
        r"(?:for )?(?:when|if|whenever) (?:you|i|he|she|they) (?:really )?(?:need|needs) (?:it|them|one)|"
        r"only on (?:the )?(?:bad|worse|difficult|tough|rough) days|"
        r"(?:when|whenever|if) (?:you|i|he|she|they) (?:feel|feels|get|gets) (?:it|one|an? [a-z]+) coming on)\b",
        "as needed",
    ),
    (r"\b(?:right away|straight ?away|immediately|at once|as soon as possible|asap|right now|without delay)\b", "now"),
    (r"\b(?:tonight|this evening|this night)\b", "tonight"),
    (r"\b(?:this morning|this afternoon|today|later today|by the end of the day|the same day)\b", "today"),
    (
        r"\b(?:at noon|at midday|(?:at|around|about|by) lunch(?:time)?|lunchtime|with lunch|mid-?afternoon|"
        r"in the afternoon)\b",
        "midday",
    ),
    # the waking part of the day, which takes in the morning and midday but not the night
    (r"\b(?:during the day(?:time)?|in the daytime|through the day(?:time)?|by day)\b|\bdaytime\b", "daytime"),
    (r"\b(?:tomorrow)\b", "tomorrow"),
    (r"\b(?:yesterday)\b", "yesterday"),
    (r"\b(?:this week)\b", "this week"),
    # "for the next week" is how long, as "for the next seven days" is; "next week" alone is when
    (r"\b(?:for|over) the (?:next|coming|following) (?:week|7 days)\b", "1 week"),
    (r"\b(?:for|over) the (?:next|coming|following) month\b", "1 month"),
    (r"\b(?:next week)\b", "next week"),
    (r"\b(?:next month)\b", "next month"),
    # "every morning" is once a day, in the morning: both labels (the moment alone would agree with "once a week"
    # or "twice a day")
    (r"\b(?:(?:every|each) (?:evening|night)|nightly)\b", "1/day+evening"),
    (r"\b(?:every|each) morning\b", "1/day+morning"),
    (r"\b(?:at bedtime|before (?:bed|bedtime)|at nights?|in the evenings?)\b", "evening"),
    # "after waking up", "when you get up", "on waking": the morning
    (
        r"\bin the mornings?\b|\b(?:after|on|when|once)(?: you)? (?:waking|wake|get|getting) up\b|\bon waking\b",
        "morning",
    ),
)
_COMPILED_TIMES = tuple((re.compile(p), label) for p, label in _TIME_PHRASES)
_CLOCK_TIME = re.compile(r"(?<![\w.:])(1[0-2]|[1-9])(?::[0-5]\d)? ?([ap])\.?m\b\.?")
"""A clock time with am or pm ("8 am", "9:30 pm"), read also as the part of the day it falls in, so that "at 8 am
and 8 pm" meets "in the morning and in the evening"; the number stays for the number rules."""


def _day_part(hour: int, half: str) -> str | None:
    """The part of the day a clock hour falls in (morning 5-11 am, midday noon to 4 pm, evening 5-11 pm); none
    for midnight to 4 am, which patients place on either side."""
    if half == "a":
        return "morning" if 5 <= hour <= 11 else None
    return "midday" if hour == 12 or hour <= 4 else "evening"


_RATE = re.compile(
    r"\b(?:(\d+(?:\.\d+)?) times|(once|twice)|(?:a )?couple(?: of)? times) (?:(?:a|an|per|each|every) "
    r"(day|week|month|year)|(dai|week|month|year)ly)\b"
)
"""A rate ("twice a week", "3 times a month", "a couple times a week", "5 times a day", "4 times every day",
"twice weekly"): read as ``N/day``, ``N/week``..., never as the duration "1 week" its article would otherwise
make, nor "every day" or "weekly" as once. Number words are digits by then ("four times a day" is "4 times a
day"), and hyphens are spaces ("once-a-week")."""
_HYPHENED_RATE = re.compile(r"\b(?:once|twice|times)-(?:a|an|per)-(?:day|week|month|year)\b")
_ONE_UNIT = re.compile(r"\b(?:a single|one single|a) (?=(?:tablet|pill|capsule|puff|patch)\b)")
""""a tablet" and "a single pill" are one of it, as "one tablet" is (blanked to "1", offsets kept); not "a drop" or
"a dose", which say other things ("a drop in your blood pressure")."""
_COUNT_RATE = re.compile(
    r"\b(\d+(?:\.\d+)?(?! ?(?:percent|%))|(?<!no )one|a single|(?:a )?couple(?: of)?) "
    r"(?:(?!(?:and|or|to)\b)[a-z]+ ){0,3}?(?:a|per|each) (week|month|year)\b"
)
"""A count over a week or longer ("4 migraines a month", "one attack a week", "14 units of alcohol a week", "3 a
month", "a couple of pills a week"; not a share, "10 percent each month", nor the end of a range, "between 6
months and a year"): the rate ``N/month`` ("one" is left a word by the number reader, which keeps it for
pronouns)."""
_RATE_SPREAD = re.compile(
    r"\bevery (?P<a>\d+)(?: (?:day|week|month|year|hour)s?)? (?:or|to) (?P<b>\d+) "
    r"(?P<every>day|week|month|year|hour)s?\b|"
    r"\b(?P<x>\d+) (?:or|to) (?P<y>\d+) (?!(?:mg|mcg|g|ml|units?|tablets?|pills?|capsules?|puffs?|drops?|doses?|"
    r"sprays?|patch(?:es)?|teaspoons?|tablespoons?)\b)(?:[a-z]+ ){0,2}?(?:a|an|per|each) (?P<per>day|week|month|year)\b"
)
"""A rate given as a range ("every three or four days", "two or three bowel movements a day"): ``every 3-4 day`` and
``2-3/day``, which meet any rate within them (:func:`bedside.text.times.same_time`). Not a dose ("1 or 2 tablets a
day"), whose "a day" says how often the dose is taken."""
_FEW_TIMES = re.compile(
    r"\b(?:(?:a )?few|several) times (?:(?:a|an|per|each|every) (day|week|month|year)\b|(dai|week|month|year)ly\b)|"
    r"\bevery (?:few|several) (day|week|month|year)s\b"
)
"""A rate said vaguely ("a few times a week", "every few years"): ``few/week`` or ``every few year``, which meet the
rates of two to five times a week or once in two to five years (:func:`bedside.text.times.same_time`), never the
duration "1 week" its article would otherwise make."""
_EVERY_OTHER = re.compile(r"\bevery (?:other|second|2nd) (day|week|month|year)\b")
_SPOKEN_COUNT = {"once": 1.0, "twice": 2.0}

_IRREGULAR = {
    "take": ("take", "takes", "took", "taken", "taking"),
    "begin": ("begin", "begins", "began", "begun", "beginning"),
    "hold": ("hold", "holds", "held", "holding"),
    "get": ("get", "gets", "got", "getting"),
    "come": ("come", "comes", "came", "coming"),
    "keep": ("keep", "keeps", "kept", "keeping"),
    "stick": ("stick", "sticks", "stuck", "sticking"),
    "go": ("go", "goes", "went", "going"),
    "quit": ("quit", "quits", "quitting"),
    "give": ("give", "gives", "gave", "given", "giving"),
    "cut": ("cut", "cuts", "cutting"),
    "put": ("put", "puts", "putting"),
    "cancel": ("cancel", "cancels", "canceled", "cancelled", "canceling", "cancelling"),
}
_DOUBLED = {"stop", "skip", "drop", "step", "plan", "swap", "up", "scrap"}


def _inflect(verb: str) -> tuple[str, ...]:
    """A verb's forms: stop → stops, stopped, stopping; increase → increases, increased, increasing."""
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb in _DOUBLED:
        return (verb, verb + "s", verb + verb[-1] + "ed", verb + verb[-1] + "ing")
    if verb.endswith("e"):
        return (verb, verb + "s", verb + "d", verb[:-1] + "ing")
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return (verb, verb[:-1] + "ies", verb[:-1] + "ied", verb + "ing")
    plural = verb + "es" if verb.endswith(("s", "sh", "ch", "x", "z")) else verb + "s"
    return (verb, plural, verb + "ed", verb + "ing")


def _v(phrase: str) -> str:
    """``phrase`` as a regex whose first word (a verb) may take any of its forms."""
    verb, _, rest = phrase.partition(" ")
    forms = "(?:" + "|".join(sorted(_inflect(verb), key=len, reverse=True)) + ")"
    return forms + (" " + rest if rest else "")


_NOT_A_FALL = (
    r"(?! (?:my|the|a|his|her|their|your) (?:bike|bicycle|motorbike|motorcycle|scooter|horse|ladder|roof|wall"
    r"|skateboard|board|stairs?|steps?)\b)"
)
""""Came off my bike" is a fall, not stopping a medicine as "came off the steroids" is."""

_COURSE = (
    r"(?: (?:the|your|all|of|whole|full|entire|rest|remaining|this))* (?:course|prescription|pills|tablets|capsules"
    r"|antibiotics?|medicines?|medications?|treatment|pack|bottle|supply|round|doses|\d+ (?:days?|weeks?))\b"
)
"""What a course is finished in: "finish the course", "complete all the tablets", "finish the full 10 days"."""
_PRESCRIBED = r"(?<!as )(?<!your )(?<!the )(?<!my )(?<!her )(?<!his )(?<!their )(?<!other )prescribed"
# Medication and plan actions, in the order the alternation tries them. Each is read after an optional
# negation just before it; a pattern need not be a verb ("no more", "until it's gone").
_ACTION_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        "|".join(
            (
                _v("keep on") + r"(?: (?:taking|using))?",
                _v("keep") + r" (?:taking|using|giving|applying|(?!going\b)[a-z]{3,}ing\b)",
                _v("keep") + r" (?:your |the |it |them |this |that )?(?:[a-z-]+ ){0,3}(?:running|going)\b",
                _v("continue"),
                _v("carry on with"),
                _v("stay on"),
                _v("remain on"),
                _v("stick with"),
                r"stay the course",
                r"(?:be sure|make sure|make certain)(?: (?:that )?you| to)? (?:finish|complete)(?:s|es|ed|d|ing)?",
                _v("finish") + _COURSE,
                _v("complete") + _COURSE,
                r"until (?:it is|it's|they are|they're|the (?:bottle|pack|box|course) is) (?:all )?"
                r"(?:gone|finished|done|empty|used up|completed)",
            )
        ),
        "continue",
    ),
    (
        "|".join(
            (
                _v("discontinue"),
                _v("stop"),
                _v("quit"),
                _v("give up"),
                r"(?:give|gives|gave|given|giving) (?:it|them) up\b",
                _v("cease"),
                _v("come off") + _NOT_A_FALL,
                _v("get off"),
                _v("turn off"),
                _v("switch off"),
                _v("pack in"),
                r"pack(?:s|ed|ing)? (?:it|them) in\b",  # "I packed it in" (British: gave it up)
                r"no longer (?:" + _v("take") + "|" + _v("use") + "|" + _v("need") + ")",
                r"(?:is|are|'s|'re) no longer (?:needed|necessary|required)",
                r"(?:(?:is|are|'s|'re) not|isn't|aren't) (?:needed|necessary|required) (?:any ?more|any longer)\b",
                r"(?:do not|don't|does not|doesn't|won't|will not) (?:really )?" + _v("need") + r"(?! to)",
                r"no more(?! than)",
                r"(?:are|'re|be|is|'s) (?:all )?(?:done|finished) with",
                _v("avoid"),
                _v("skip") + r" [a-z]{3,}ing\b",  # "skip napping" is avoiding it ("skip a dose" holds it)
                _v("cut out"),  # "I've cut out wheat and eggs"
                _v("stay away from"),
                _v("keep away from"),
                _v("steer clear of"),
            )
        ),
        "stop",
    ),
    (
        "|".join(
            (
                _v("restart"),
                _v("resume"),
                _v("start"),
                _v("begin"),
                _v("initiate"),
                "prescribing|prescribes?|" + _PRESCRIBED,
                _v("add"),
                _v("try"),
                _v("switch") + r" (?:you |him |her |them )?(?:over )?to",
                _v("put") + r" (?:you|him|her|them) on",
            )
        ),
        "start",
    ),
    (
        "|".join(
            (
                _v("increase"),
                _v("raise"),
                _v("double"),
                r"(?:at|to) (?:double|twice|triple) (?:your|the)\b",
                _v("go up on"),
                _v("bump up"),
                _v("titrate up"),
                _v("up") + " (?:the|your) dose",
                "a higher dose",
            )
        ),
        "increase",
    ),
    (
        "|".join(
            (
                _v("decrease"),
                _v("reduce"),
                _v("lower"),
                _v("cut back"),
                _v("cut down"),
                _v("eat") + " less",  # "eat less fried food" is cutting back on it
                _v("drink") + " less",
                _v("taper"),
                _v("halve"),
                _v("wean"),
                _v("titrate down"),
                "a lower dose",
            )
        ),
        "decrease",
    ),
    (
        "|".join(
            (
                _v("hold off on"),
                _v("put") + r"(?: \w+){0,3} on hold",
                _v("take") + " a break from",
                _v("hold"),
                _v("pause"),
                _v("skip"),
                _v("withhold"),
            )
        ),
        "hold",
    ),
    (
        "|".join(
            (
                _v("postpone"),
                _v("delay"),
                _v("defer"),
                _v("put off"),
                _v("reschedule"),
                _v("push") + r"(?: (?!back\b)\w+){0,3} back",
            )
        ),
        "postpone",
    ),
    (
        "|".join(
            (
                _v("proceed") + r"(?! to\b)",
                _v("go ahead"),
                _v("move forward"),
                r"as (?:planned|scheduled)",
                "on schedule",
            )
        ),
        "proceed",
    ),
    ("|".join((_v("cancel"), _v("call off"), _v("scrap"))), "cancel"),
    ("|".join((_v("take"), _v("use"), _v("apply"))), "take"),
)
_COMPILED_ACTIONS = tuple((re.compile(pattern), label) for pattern, label in _ACTION_PATTERNS)
_NEGATION_PREFIX = (
    r"(?:do not|don't|dont|please don't|please do not|does not|doesn't|did not|didn't|will not|won't|should not"
    r"|shouldn't|(?:there is |there's )?no need to|(?:do not|don't|does not|doesn't) need to"
    r"|(?:do not|don't) have to|never|not)"
)
_ACTION = re.compile(
    rf"\b(?P<neg>{_NEGATION_PREFIX}\s+(?:(?!since\b)\w+\s+)??)?"  # "not since starting it" says when, not no
    r"(?P<verb>" + "|".join(f"(?:{p})" for p, _ in _ACTION_PATTERNS) + r")\b"
    r"(?:\s+(?:taking|using|to take|to use)\b)?"  # "stop taking": the gerund belongs to the action
)
_PERMISSION = re.compile(
    r"\b(?:(?:it is|it's|it is perfectly|it's perfectly) (?:fine|ok|okay|alright|all right|safe) (?:for you )?to|"
    r"you (?:are|'re) (?:free|allowed|welcome) to|you may|you can)\s+(?P<rest>[^,;:.]*)"
)
"""A permission and what it reaches, to the end of its clause."""
_BACKGROUND_BEFORE = re.compile(
    r"\b(?:while|whilst|when|as long as)(?: (?:you(?:'re| are)?|i(?:'m| am| was)?|he|she|we|they)(?:'s| is| was)?)?\s+$"
)
"""A verb in a clause of time says when, not what to do: "no alcohol while taking metronidazole" tells the patient
to take nothing new (its "taking" is no instruction to set against "alcohol must be avoided"), and "a seizure
when I stopped drinking" tells when the seizure came."""
_PASSED_OVER_BEFORE = re.compile(r"\b(?:rather than|instead of)(?: (?:trying|attempting) to)?\s+$")
"""An action a sentence chooses against ("leave it alone rather than trying to take it out"): not done."""
# Words after a verb that make it something other than a medication action: "increase the risk", "lower back",
# "the pain stops around the knee".
_NOT_AN_ACTION_AFTER = re.compile(
    r"\s+(?:the |your |a |an |his |her |their |this )?(?:risk|risks|chance|chances|likelihood|odds|back|legs?|"
    r"abdomen|belly|body|part|lip|jaw|extremit\w+|lobe|left|right)\b|\s+(?:around|near|just (?:above|below|short))\b|"
    r"\s+(?:me|us|him|her|them) (?:to|into|over|round|in)\b"  # "my neighbour takes me to appointments": a lift
    # "I have to stop for a breather": a pause on the way, not a medicine stopped
    r"|\s+(?:for (?:a |my )?(?:breather|breath|rest|minute|moment|second)|(?:and|to) (?:get|catch|take) (?:my |a |"
    r"your |his |her )?breath)\b"
)
_FELL_AWAY = re.compile(
    r"(?:com(?:e|es|ing)|came) off(?=\s*(?:[.,;:!?)]|$|(?:and|or|but|by itself|on its own|yet|when|before|after|"
    r"while|first)\b))"
)
"""A thing that comes off with nothing after it ("until the scab has fully come off", "if the dressing comes off
by itself") fell away; only "come off" something is stopping it ("came off the pill")."""
_HELD_IN_HAND = re.compile(
    r"\s+(?:(?:the|your|a|an|it|them|this|that|his|her)\s+)?(?:[a-z-]+\s+){0,2}"
    r"(?:near|against|in place|still|steady|steadily|firmly|tight|tightly|to (?:your|the) (?:ear|chest|skin))\b"
)
"""A hand's hold, not a dose held: "holding the tube near your skin", "hold it firmly in place"."""
_A_NOUN_BEFORE = re.compile(r"\b(?:truck|bus|rest|pit|request|full|train)\s+$")
"""Words that make a verb a noun: "truck stop meals", "the bus stop"."""
_KEPT_BEFORE = re.compile(r"\b(?:keep|keeps|keeping|kept|leave|leaving) (?:it|them|(?:your|the) [a-z]+) $")
_HELD_UP = frozenset(["raised", "elevated", "lifted", "propped"])
"""After :data:`_KEPT_BEFORE`, a state to hold, not a step: "keep it raised higher than your heart" is a position,
not a dose raised."""
# Bind stop to the drug right after them only: "take acetaminophen instead of ibuprofen".
_TEMPORARY = re.compile(
    r"\b(?:for now|for the time being|for the moment|temporarily|until (?:after|your|the|you)|for \d+ (?:day|week)s?"
    r"|\d+ (?:day|week)s? (?:before|ahead of|prior to))\b"
)
_LITOTES = re.compile(r"\b(?:not|never|isn't|aren't|wasn't|weren't) (?:at all )?ab(?P<plain>normal)\b", re.IGNORECASE)
""""Not abnormal" says "normal", which the negation and opposite rules would otherwise read as a "no" and as the
other side of the finding pair. Only where the plain word is one a rule reads: "not unusual" rewritten "usual"
would lose its "no" against "unusual" and leave two words no rule compares."""
_EVERY_SINGLE = re.compile(r"\b(?:every single|each and every)\b", re.IGNORECASE)
_TWICE_THE_DOSE = re.compile(
    r"\b(?:take |give |use )?(?:twice|two times|2 times) (?:your|the) (?P<what>(?:normal |usual |regular |daily )?"
    r"(?:[a-z-]+ )?)dose\b",
    re.IGNORECASE,
)
"""Twice the usual dose is a doubled dose: "take two times your normal hydrocortisone dose" says "double it"."""
_NO_NEED_TO_AVOID = re.compile(
    r"\b(?:there is |there's )?no need to (?:avoid|limit|restrict|stay away from|cut out)\b|"
    r"\b(?:you )?(?:do not|don't|does not|doesn't) (?:need|have) to (?:avoid|limit|restrict|stay away from|cut out)\b",
    re.IGNORECASE,
)
"""A restriction lifted is a permission: "there is no need to limit close contact" says "you can have close
contact", which the rules then set against "avoid close contact" (its "no" otherwise reaches the same words as the
avoidance, and the two would read as one "no")."""
_NEGATIVE_RESULT = re.compile(
    r"\b(?:(?:the|your|his|her|their|my|a) )?(?P<what>(?:[a-z0-9-]+ )?[a-z0-9-]+) "
    r"(?P<test>tests?|swabs?|screens?|screening|cultures?|panels?|pcr) (?:was|were|is|are|came back|comes? back|"
    r"(?:has|have) come back|returned) negative\b",
    re.IGNORECASE,
)
""""Your strep test was negative" says the test showed no strep, as "the strep test did not show strep" does: the
thing tested for is what the "no" is about (negative is otherwise the finding pair's other side of positive)."""
_CAP_IN_A_DAY = re.compile(
    r"\b(?P<cap>(?:more than|up to|a maximum of|maximum of|at most|exceed|a total of|the most|the maximum|less than|"
    r"fewer than|under)\b[^,;:.]{0,50}?) in (?:(?:a|one|1) (?:day|1 day period|24[- ]hour period)|24 hours)\b|"
    r"\bin any (?:one |single )?(?:day|1 day period|24[- ]hour period)\b",
    re.IGNORECASE,
)
""""No more than 3000 mg in a day" and "4 g or less in any 24-hour period" cap what is taken per day, as "3 g daily"
does, and "less than 30 mL in 24 hours" is a drain's output per day: a rate, not a span of one day (which is what
"in a day" says elsewhere: "you will feel better in a day")."""

_HOW_OFTEN = re.compile(r"\b(?:once|twice|three times|times)\b", re.IGNORECASE)
"""How often, in a cap on how often ("no more than twice in one day")."""


def _per_day(match: re.Match[str]) -> str:
    """A daily cap said as one: "up to 8 tablets in a day" is "up to 8 tablets per day". Not a cap on how often
    ("no more than twice in one day"), whose "twice" would read as a schedule of twice a day."""
    cap = match.group("cap") or ""
    if _HOW_OFTEN.search(cap):
        return match.group()
    return f"{cap} per day".lstrip()


_NOT_UNLESS = re.compile(
    r"\b(?:(?:there is |there's )?no need to|(?P<lead>you )?(?:(?:do not|don't) need to|need not|needn't)) "
    r"(?P<step>[^,;:.]{1,60}?) unless\b",
    re.IGNORECASE,
)
"""A step not needed unless something happens is the step needed only if it happens: "there is no need to come in
unless the swelling gets worse" is "come in only if the swelling gets worse" (two negatives, one condition). Not
"do not stop it unless we tell you", whose "stop" the action rules read with its "not"."""
_MEAL_PARTS = {
    r"\b(?:breakfast|morning meal)\b": "morning",
    r"\b(?:lunch|midday meal)\b": "midday",
    r"\b(?:dinner|supper|tea ?time|evening meal)\b": "evening",
}
"""Meals that name a part of the day: "before breakfast and before dinner every day" is twice a day."""
_EVERY_DAY = re.compile(r"^(?!.*\bonce (?:a|per|each) day\b|.*\bonce daily\b).*\b(?:every|each) day\b")
"""A sentence whose "once a day" comes from "every day" alone (a "twice" in "two sprays twice, once daily" counts
sprays)."""
_WITHIN_A_DAY = re.compile(r"every \d+(?:\.\d+)? (?:hour|minute)|(?!1/)\d+(?:\.\d+)?/day")
"""A rate above once a day, beside which "every day" is how long a schedule goes on, not how often."""
_BARE_COUNT = re.compile(r"\b(?:(twice)|(\d) times)\b(?!\s+(?:a|an|per|each|every|daily|weekly|more|as|over)\b)")
"""A count said apart from its period ("every day, twice"), read with the sentence's "every day"."""
_COUNTED_ONCE = re.compile(r"\bonce\b|\bor\b")
_CLAUSE_END = re.compile(r"[,;:.!?]")


def _clause_end(text: str, start: int) -> int:
    """Where the clause that runs on from ``start`` ends: its next punctuation, or the end of the text."""
    end = _CLAUSE_END.search(text, start)
    return end.start() if end else len(text)


_REPLACED = re.compile(r"\b(?:instead of|rather than|in place of|switch(?:ing)? (?:you )?from|chang(?:e|ing) from)\b")
_NEGATED = {"stop": "continue", "hold": "continue", "increase": "continue", "decrease": "continue"}
_NEGATED.update({"take": "avoid", "continue": "stop", "start": "hold"})
_NEGATED.update({"postpone": "proceed", "cancel": "proceed", "proceed": "hold"})
_NOT_DOING = frozenset({"avoid", "stop", "hold"})
"""Actions that say "do not" (their words are :attr:`ClinicalSignals.refused`)."""
_COMPATIBLE = {
    frozenset({"take", "continue"}),
    frozenset({"take", "start"}),
    frozenset({"avoid", "stop"}),
    frozenset({"avoid", "hold"}),
    frozenset({"postpone", "hold"}),
    frozenset({"proceed", "continue"}),
    frozenset({"proceed", "start"}),
    frozenset({"proceed", "take"}),
    frozenset({"cancel", "stop"}),
    frozenset({"cancel", "avoid"}),
    frozenset({"cancel", "hold"}),
}
_OPPOSED = {
    frozenset({"continue", "stop"}),
    frozenset({"continue", "hold"}),
    frozenset({"start", "stop"}),
    frozenset({"take", "avoid"}),
    frozenset({"proceed", "postpone"}),
    frozenset({"proceed", "cancel"}),
    frozenset({"increase", "decrease"}),
}
"""Actions that undo each other: a sentence that says one where the other says its opposite, whatever else both say
("apply the cream ... and keep going for two weeks" / "apply the cream ... and stop as soon as the rash clears")."""


def opposed_actions(a: frozenset[str], b: frozenset[str]) -> tuple[str, str] | None:
    """An action only one sentence says against its opposite, said only in the other; None if there is none or
    either sentence also says what the other does instead."""
    ours, theirs = a - b, b - a
    if any(frozenset({x, y}) in _COMPATIBLE for x in ours for y in theirs):
        return None
    return next(((x, y) for x in sorted(ours) for y in sorted(theirs) if frozenset({x, y}) in _OPPOSED), None)


# Negation cues left after removing phrases whose negation is not a negative statement. A warning sign put as an
# inability ("call 911 if you cannot breathe", "or you can't swallow") describes the same symptom as "trouble
# breathing": only in a condition (if, when, or) and only for a vital function, so "you cannot walk on it yet"
# against "you can walk on it now" is still a negation.
_VITAL = (
    r"(?P<verb>breathe|swallow|catch (?:your|his|her|their) breath|speak|talk|stay awake|"
    r"keep (?:\w+\s+){0,2}?down|urinate|pee|wake (?:up|him|her|them))\b"
)
_INABILITY = r"\b(?:if|when|or)\s+(?:\w+\s+){0,3}?(?:cannot|can't|can not|(?:are|is|am) unable to)\s+" + _VITAL
# Each side's can/cannot of a vital function, so the condition reversed ("if you can talk in full sentences"
# against "if you cannot talk ...") is still a negation conflict although neither side counts as negated.
_ABILITY = re.compile(r"\b(?P<mod>cannot|can't|can not|can|(?:are|is|am) (?:unable|able) to)\s+" + _VITAL)
_UNABLE = ("cannot", "can't", "can not", "unable")
_NOT_NEGATIVE = re.compile(
    r"\b(?:do not|don't|dont|please do not|please don't) hesitate\b|\bnot (?:un\w+|only|sure)\b"
    r"|\bno later than\b|\bnot to worry\b|\bno matter\b|\bif not\b|\bwithout fail\b|\bno doubt\b|" + _INABILITY
)

_BODY = (
    r"arm|arms|leg|legs|hand|hands|foot|feet|eye|eyes|ear|ears|knee|knees|hip|hips|shoulder|shoulders|breast|"
    r"breasts|side|sides|lung|lungs|kidney|kidneys|ankle|ankles|wrist|wrists|elbow|elbows|chest|flank|groin|neck|"
    r"jaw|thigh|thighs|calf|calves|toe|toes|finger|fingers|heel|heels|ovary|ovaries|testicle|buttock|abdomen|"
    r"lobe|ventricle|atrium|carotid|temple|cheek|nostril|armpit|axilla|rib|ribs|back|lower|upper|sided|forearm|"
    r"forearms|shin|shins|eyelid|eyelids|buttocks|collarbone|hand's|knee's"
)
_NOT_PARTS = frozenset({"side", "sides", "sided", "lower", "upper", "back"})
_BODY_WORDS = frozenset(_BODY.split("|"))
_BODY_PART = re.compile(rf"\b(?:{_BODY})\b")
_IRREGULAR_PARTS = {"feet": "foot", "calves": "calf", "ovaries": "ovary"}
_REGIONS = {
    "arm": "arm forearm hand wrist elbow finger shoulder",
    "leg": "leg calf thigh knee ankle foot toe heel shin hip buttock",
    "head": "eye ear jaw cheek temple nostril eyelid",
    "trunk": "chest breast collarbone rib armpit axilla flank groin abdomen neck",
}
_REGION_OF = {part: region for region, parts in _REGIONS.items() for part in parts.split()}
"""The region of the body each part lies in: a side of the leg is compared with a side of the calf ("my right leg"
against "my left calf"), never with a side of the eye; an organ is a region of its own."""


def body_parts(text: str) -> frozenset[str]:
    """The parts of the body a text names, each in the singular ("my right eye": eye; "both feet": foot); not the
    words that only place a side ("lower", "side") or often say something else ("came back")."""
    found = {m.group().removesuffix("'s") for m in _BODY_PART.finditer(text.lower())} - _NOT_PARTS
    return frozenset(
        _IRREGULAR_PARTS.get(word) or (word[:-1] if word.endswith("s") and word[:-1] in _BODY_WORDS else word)
        for word in found
    )


def body_regions(text: str) -> frozenset[str]:
    """The regions of the body (:data:`_REGIONS`: arm, leg, head, trunk, or an organ) the text's parts lie in."""
    return frozenset(_REGION_OF.get(part, part) for part in body_parts(text))


_SIDE = re.compile(
    rf"\b(?P<side>left|right|bilateral|both|each)[\s-]+(?:\w+[\s-]+)?(?:{_BODY})\b|\bon the (?P<side2>left|right)\b|"
    r"\b(?P<side3>bilaterally)\b|\b(?:lower|upper|bottom|top)[\s-](?P<side4>left|right)\b|"
    r"\b(?:my|his|her|your) (?P<side5>left|right) (?:one|side)\b"
)
"""A side of the body: "left knee", "on the right", "lower right" (a quadrant), "my left one" (an answer to "which
wrist?"; "the right one" may only mean the correct one)."""
_WHICH_SIDE = re.compile(rf"\bwhich (?:one|side|{_BODY})\b", re.IGNORECASE)
_SIDE_ANSWERED = re.compile(r"\b(?:the|my|his|her|that) (?P<side>left|right)(?: one| side)?\b", re.IGNORECASE)


def answered_sides(question: str, answer: str) -> frozenset[str]:
    """The side an answer gives to a question that asks which side ("Which eye was it?" "The left one."): there
    "the right one" names a side, not the correct one."""
    if not _WHICH_SIDE.search(question):
        return frozenset()
    return frozenset(m.group("side").lower() for m in _SIDE_ANSWERED.finditer(answer))


_NUMBER = re.compile(r"(?<![\w/])(\d+(?:\.\d+)?(?:/\d+)?)(?:\s*(%|[a-z]+))?")
_EMERGENCY_NUMBER = re.compile(r"\b(?:911|999|112)\b")
"""An emergency number is no quantity but a kind of care: read as the word "sos" (same length, offsets kept), which
the emergency side of ``data/opposites.toml`` names ("call 911" against "send us a message")."""
_PHONE = re.compile(r"\b\d{3}[-.\s]\d{3,4}(?:[-.\s]\d{4})?\b|\b911\b")
# A list marker opening the text or a line: "3. In the meantime", "(2) Call us", "Step 4: ...".
_LIST_MARKER = re.compile(r"(?m)^[ \t]*(?:\(?\d{1,2}[.)]|step \d{1,2}:?|#\d{1,2})[ \t]+(?=\S)")
_TRANSITION = re.compile(r"\bfrom (\d+(?:\.\d+)?)(?:\s*[a-z]+)? (?:up |down )?to (\d+(?:\.\d+)?)\b")
_TRANSITION_BACKWARDS = re.compile(r"\bto (\d+(?:\.\d+)?)(?:\s*[a-z]+)?(?:\s+[a-z]+){0,4}?\s+from (\d+(?:\.\d+)?)\b")
"""A change said new value first ("lowered to 25 mg twice a day from 50 mg"): the same change as "from 50 mg to
25 mg", so its doses in the other order are no swapped schedule."""
# Clauses bound an action's reach; segments (inside clauses) bound a dose's drug and time.
_CLAUSE_BREAK = re.compile(
    r"[;:!?]|\.(?=\s|$)|\b(?:but|however|although|though|whereas|while|unless|otherwise|because|since)\b"
)
_SEGMENT_BREAK = re.compile(r",|\b(?:and|or|then|followed by|plus)\b")
_NO_BREAK = re.compile(r"(?!)")  # with _same_part: only clause breaks part two mentions


class DrugMention(NamedTuple):
    """A drug named in a text: its name and where (character offsets into the text)."""

    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Instruction:
    """One aligned reading of a drug or dose mention: which drug, what to do, how much, when (None: not said)."""

    drug: str | None  # a generic key ("metoprolol") or a class ("class:statin")
    action: str | None
    dose: str | None  # the number as written ("25", "0.5")
    unit: str | None  # the dose unit ("mg", "tablet")
    time: str | None  # a time or food label ("morning", "with food")

    def __str__(self) -> str:
        parts = (self.drug, self.action, f"{self.dose} {self.unit}" if self.dose else None, self.time)
        return "(" + ", ".join(p or "-" for p in parts) + ")"


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
    food: frozenset[str] = frozenset()
    classes: frozenset[str] = frozenset()
    instructions: tuple[Instruction, ...] = ()
    transitions: frozenset[tuple[str, str]] = frozenset()
    abilities: frozenset[tuple[str, bool]] = frozenset()
    """(vital function, whether it is one the sentence says cannot be done): "can't swallow" is
    ``("swallow", True)``."""
    slots: frozenset[Slot] = frozenset()
    """Comparison, direction, sequence, with/without, condition and clinical opposites
    (:mod:`bedside.text.slots`)."""
    polarity: Polarity = NOT_NEGATIVE
    """Which content words the sentence negates and which it affirms (:mod:`bedside.text.assertion`), after the
    negations an action consumed ("don't stop") and the phrases that are not negative statements."""
    refused: frozenset[str] = frozenset()
    """Content words an action that says "do not" reaches ("avoid heavy lifting": heavy, lift), as a negation
    cue in its place would: the polarity reading leaves them affirmed, since the action slot reads the "no"."""
    permitted: frozenset[str] = frozenset()
    """Content words (stems) a permission reaches ("it is fine to have grapefruit juice": grapefruit, juice), to
    set against a "no" or a "do not" on the same words."""
    sought: frozenset[str] = frozenset()
    """Content words (stems) a verb of getting, having, taking in or needing reaches within four words ("get some
    direct sun", "also needs treatment"), to set against a "do not" on the same words; not "take" or "use", whose
    "do not" is often about how ("do not take it on an empty stomach" is "take it with food")."""
    opposites_by_no: frozenset[tuple[str, str]] = frozenset()
    """(pair, side) of each clinical opposite the sentence's one "no" reaches, read as the other side: "don't lie
    down" is the "upright" side of the position pair, "has not blocked" the "open" side (:attr:`slots` holds the
    side it says)."""
    time_words: frozenset[str] = frozenset()
    """The words the time reading read ``times`` from ("every", "other", "day" in "every other day"): where two
    sentences differ only in such words and read as the same times, they say one time two ways."""


@dataclass(frozen=True)
class Conflict:
    kind: str  # one of CONFLICT_KINDS
    reference: str
    candidate: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.reference} vs {self.candidate}"


@dataclass(frozen=True)
class PairReading:
    """What the guard reads in a pair: the conflicts found, or, where it found none, why the rules cannot vouch
    for the pair (``uncertain``; None when the two agree as far as the rules can read)."""

    conflicts: tuple[Conflict, ...]
    uncertain: str | None = None

    @property
    def verdict(self) -> Literal["conflict", "uncertain", "agree"]:
        if self.conflicts:
            return "conflict"
        return "uncertain" if self.uncertain else "agree"


DrugFinder = Callable[[str], Sequence[DrugMention | str]]
"""Finds the drugs in a text: mentions with offsets, or bare names (then found in the text by their spelling)."""


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

    def drugs(text: str) -> list[DrugMention]:
        tokens = list(re.finditer(r"\w+(?:[-'’]\w+)*", text))
        found: Any = find_drugs([t.group() for t in tokens], is_use_omop_api=False, use_pub_chem_api=False)
        mentions = []
        for data, first, last in found:
            name = str(data.get("name") or data.get("matching_string")).lower()
            start, end = tokens[first].start(), tokens[max(first, last - 1)].end()
            if _plain_word(text[start:end], name) or _dosage_form(data.get("mesh_tree") or ()):
                continue
            mentions.append(DrugMention(name, start, end))
        return mentions

    return drugs


def _dosage_form(trees: Sequence[str]) -> bool:
    """A MeSH heading that is a form a medicine comes in, not a substance: "eye drops" (Ophthalmic Solutions) and
    "nasal spray" (Nasal Sprays) sit under Dosage Forms (D26.255) or Solutions (D26.776) and nowhere but the
    preparations (D26), pharmacologic actions (D27) and mixtures (D20); "my eye drops" names no drug against
    "latanoprost"."""
    return any(t.startswith(("D26.255", "D26.776")) for t in trees) and all(
        t.startswith(("D26", "D27", "D20")) for t in trees
    )


def _plain_word(said: str, name: str) -> bool:
    """A lower-case word MeSH lists as another name of a substance but English uses as no noun: "it sits around a
    six" is no mention of SITS (4-acetamido-4'-isothiocyanatostilbene-2,2'-disulfonic acid). WordNet decides which
    words are plain English and of which part of speech; a word it reads as a noun ("iron", "lead") stays a
    mention, as does a name written in capitals or the substance's own name."""
    from bedside.text.wordnet import lemmas_of

    if not said.islower() or " " in said or said == name:
        return False
    parts = {pos for pos, _ in lemmas_of(said)}
    return bool(parts) and "n" not in parts


@dataclass(frozen=True)
class DrugClass:
    """A class of drugs as bedside's class list names it (``bedside/text/data/drug_classes.toml``)."""

    key: str
    names: tuple[str, ...]
    members: frozenset[str]


@lru_cache(maxsize=1)
def drug_classes() -> tuple[DrugClass, ...]:
    """bedside's drug classes: how a class is named and which generic drugs belong to it."""
    from importlib import resources

    path = resources.files("bedside.text") / "data" / "drug_classes.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return tuple(
        DrugClass(key, tuple(entry["names"]), frozenset(entry["members"])) for key, entry in data["classes"].items()
    )


@lru_cache(maxsize=1)
def _class_pattern() -> re.Pattern[str]:
    names = sorted({name for c in drug_classes() for name in c.names}, key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(n).replace(r"\ ", r"[\s-]+") for n in names) + r")(?:e?s)?\b")


@lru_cache(maxsize=1)
def _class_by_name() -> dict[str, str]:
    return {re.sub(r"[\s-]+", " ", name): c.key for c in drug_classes() for name in c.names}


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return _ARTICLE_AS_ONE.get(text)


def _fmt(value: float) -> str:
    return f"{value:g}"


@dataclass(frozen=True)
class _Mention:
    """A signal found at a place in the text (internal: for binding drugs, doses, actions and times)."""

    label: str
    start: int
    end: int
    forward_only: bool = False  # "instead of": binds only to the drug right after it
    from_take: bool = False  # "don't take": flips a food instruction in its segment
    dose: str | None = None
    unit: str | None = None


def _one_time_two_ways(ref: ClinicalSignals, cand: ClinicalSignals, changed: list[str]) -> bool:
    """Whether the changed words are all words the time reading read, and both sentences read as the same times
    ("once a day" / "once daily", "every other day" / "every 48 hours", "6 weeks" / "1.5 months")."""
    if not ref.times or not cand.times:
        return False
    ours, theirs = in_days(with_frequency(ref.times)), in_days(with_frequency(cand.times))
    if not all(any(same_time(a, b) for b in theirs) for a in ours) or not all(
        any(same_time(b, a) for a in ours) for b in theirs
    ):
        return False
    read = ref.time_words | cand.time_words
    return all(word in read or word in FUNCTION_WORDS for word in changed)


class ClinicalGuard:
    """Reads :class:`ClinicalSignals` from sentences and finds the conflicts between two of them."""

    def __init__(
        self, drug_finder: DrugFinder | Literal["mesh"] | None = "mesh", *, without: frozenset[str] = frozenset()
    ) -> None:
        self._drug_finder = _mesh_drug_finder() if drug_finder == "mesh" else drug_finder
        self.without = without
        """Conflict kinds this guard does not report: its rules for them taken away, to measure how the rest
        (and *uncertain*) do on a kind they were not written for (``guard-eval --leave-one-kind-out``)."""
        self._read = lru_cache(maxsize=4096)(self._signals)

    def signals(self, text: str) -> ClinicalSignals:
        """What ``text`` says, as far as the rules can read it: a library that fails leaves its part unread (the
        quantities as written, no drugs). To know whether that happened, ask :meth:`unreadable`; :meth:`read`
        says it for a pair."""
        try:
            return self._read(text, True)
        except UnreadableText:
            return self._read(text, False)

    def unreadable(self, text: str) -> str | None:
        """Why the rules cannot read ``text`` (too long, no words, not English, a library that failed), or None."""
        if why := unreadable(text):
            return why
        try:
            self._read(text, True)
        except UnreadableText as exc:
            return str(exc)
        return None

    def leaving_out(self, kinds: frozenset[str]) -> ClinicalGuard:
        """The same guard (the same drug recogniser) without the rules for ``kinds``."""
        return ClinicalGuard(self._drug_finder, without=kinds)

    @property
    def checks_drugs(self) -> bool:
        return self._drug_finder is not None

    def _names_one_drug(self, ours: list[str], theirs: list[str]) -> bool:
        """Whether two changed stretches name the same drug (a brand and its generic: "Lasix" / "furosemide"), as
        the drug recogniser reads them; a class and one of its drugs are not the same."""
        if self._drug_finder is None:
            return False
        one, other = (
            {m.label for m in self._drug_mentions(text, text.lower(), True)}
            for text in (" ".join(ours), " ".join(theirs))
        )
        return bool(one) and one == other

    def _drug_mentions(self, text: str, lowered: str, strict: bool) -> list[_Mention]:
        mentions: list[_Mention] = []
        classes = _class_pattern()
        for match in classes.finditer(lowered):
            key = _class_by_name()[re.sub(r"[\s-]+", " ", match.group(1))]
            mentions.append(_Mention(f"class:{key}", match.start(), match.end()))
        if self._drug_finder is None:
            return mentions
        try:
            recognised = self._drug_finder(text)
        except Exception as exc:  # a recogniser that fails leaves the drugs unread: the pair is uncertain
            if not strict:
                return mentions
            raise UnreadableText(f"the drug recogniser failed: {type(exc).__name__}: {exc}") from exc
        for found in recognised:
            if isinstance(found, str):
                at = lowered.find(found.lower())
                name, start, end = found, max(at, 0), max(at, 0) + len(found) if at >= 0 else 0
                positioned = at >= 0
            else:
                name, start, end = found
                positioned = True
            key = _drug_key(name.lower())
            if not key or any(m.start <= start < m.end for m in mentions if m.label.startswith("class:")):
                continue  # a class name the MeSH recogniser also knows ("antibiotic") is read as a class
            mentions.append(_Mention(key, start if positioned else -1, end if positioned else -1))
        return sorted(mentions, key=lambda m: m.start)

    def _signals(self, text: str, strict: bool) -> ClinicalSignals:
        # "3,000 mg" and "3 g", "every 12 hours" and "twice a day" read alike; with ``strict`` a library failure
        # is UnreadableText (the pair is uncertain), without it that step is left undone
        text = normalise_quantities(text, strict=strict)
        text = _LITOTES.sub(lambda m: m.group("plain"), text)  # "not abnormal" says "normal"
        text = _EVERY_SINGLE.sub("every", text)  # "every single night" is every night
        text = _NO_NEED_TO_AVOID.sub("you can have", text)
        text = _TWICE_THE_DOSE.sub(lambda m: f"double your {m.group('what')}dose", text)
        text = _NEGATIVE_RESULT.sub(lambda m: f"the {m.group('test')} showed no {m.group('what')}", text)
        text = _NOT_UNLESS.sub(lambda m: f"{m.group('lead') or ''}{m.group('step')} only if", text)
        text = _CAP_IN_A_DAY.sub(_per_day, text)
        # Offsets stay those of ``lowered`` throughout: phrases already read are blanked, never cut out.
        lowered = _LIST_MARKER.sub(lambda m: " " * len(m.group()), text.lower().replace("’", "'"))
        lowered = _PHONE.sub(lambda m: " " * len(m.group()), _EMERGENCY_NUMBER.sub("sos", lowered))
        drug_mentions = self._drug_mentions(text, lowered, strict)

        def blank(pattern: re.Pattern[str], source: str) -> str:
            return pattern.sub(lambda m: " " * len(m.group()), source)

        # Slots first, before the time phrases blank "per day": "no more than", "no longer" are then not read
        # again as negations.
        slots, lowered = read_slots(lowered)
        before_times = lowered
        times: set[str] = set()
        time_mentions: list[_Mention] = []
        food_mentions: list[_Mention] = []
        for pattern, food, time in _COMPILED_FOOD:
            for match in pattern.finditer(lowered):
                food_mentions.append(_Mention(food, match.start(), match.end()))
                if time:
                    time_mentions.append(_Mention(time, match.start(), match.end()))
            lowered = blank(pattern, lowered)
        lowered = _HYPHENED_RATE.sub(lambda m: m.group().replace("-", " "), lowered)
        for match in _RATE_SPREAD.finditer(lowered):
            low, high, every = match.group("a"), match.group("b"), match.group("every")
            label = f"every {low}-{high} {every}" if every else f"{match.group('x')}-{match.group('y')}/{match['per']}"
            time_mentions.append(_Mention(label, match.start(), match.end()))
        lowered = blank(_RATE_SPREAD, lowered)
        for match in _RATE.finditer(lowered):
            count = float(match.group(1)) if match.group(1) else _SPOKEN_COUNT.get(match.group(2) or "", 2.0)
            per = match.group(3) or ("day" if match.group(4) == "dai" else match.group(4))
            time_mentions.append(_Mention(f"{_fmt(count)}/{per}", match.start(), match.end()))
        lowered = blank(_RATE, lowered)
        for match in _COUNT_RATE.finditer(lowered):
            word = match.group(1)
            counted = "1" if word in ("one", "a single") else "2" if word.endswith(("couple", "couple of")) else word
            time_mentions.append(_Mention(f"{counted}/{match.group(2)}", match.start(), match.end()))
        lowered = blank(_COUNT_RATE, lowered)
        for match in _FEW_TIMES.finditer(lowered):
            per = match.group(1) or {"dai": "day"}.get(match.group(2), match.group(2))
            label = f"few/{per}" if per else f"every few {match.group(3)}"
            time_mentions.append(_Mention(label, match.start(), match.end()))
        lowered = blank(_FEW_TIMES, lowered)
        for match in _EVERY_OTHER.finditer(lowered):
            time_mentions.append(_Mention(f"every 2 {match.group(1)}", match.start(), match.end()))
        lowered = blank(_EVERY_OTHER, lowered)
        for pattern, label in _COMPILED_TIMES:
            for match in pattern.finditer(lowered):
                time_mentions.extend(_Mention(part, match.start(), match.end()) for part in label.split("+"))
            lowered = blank(pattern, lowered)
        for match in _CLOCK_TIME.finditer(lowered):
            if part := _day_part(int(match.group(1)), match.group(2)):
                time_mentions.append(_Mention(part, match.start(), match.end()))
        for day in _WEEKDAYS:
            time_mentions.extend(_Mention(day, m.start(), m.end()) for m in re.finditer(rf"\b{day}s?\b", lowered))
        # "straight away rather than waiting until tomorrow": the time set aside is not the one said
        set_aside = [(m.end(), _clause_end(lowered, m.end())) for m in _REPLACED.finditer(lowered)]
        times.update(m.label for m in time_mentions if not any(a <= m.start < b for a, b in set_aside))
        parts = times & _DAY_PARTS | {part for meal, part in _MEAL_PARTS.items() if re.search(meal, lowered)}
        if "1/day" in times and _EVERY_DAY.search(before_times) and (bare := _BARE_COUNT.search(lowered)):
            # "every day, test it twice, once before breakfast and once before dinner": twice a day
            count = _SPOKEN_COUNT.get(bare.group(1)) or float(bare.group(2))
            times = (times - {"1/day"}) | {f"{_fmt(count)}/day"}
            time_mentions = [
                _Mention(f"{_fmt(count)}/day", m.start, m.end) if m.label == "1/day" else m for m in time_mentions
            ]
        elif "1/day" in times and len(parts) >= 2 and not _COUNTED_ONCE.search(lowered):
            # "at 8 am and 8 pm every day": "every day" says the schedule recurs, the parts say how often (not
            # where a "once" counts, or an "or" makes the parts a choice: "once a day, morning or evening")
            times = (times - {"1/day"}) | {f"{len(parts)}/day"}
            time_mentions = [
                _Mention(f"{len(parts)}/day", m.start, m.end) if m.label == "1/day" else m for m in time_mentions
            ]
        # Durations and intervals: "in 2 weeks", "every 6 hours", "a few days".
        # "every couple of weeks" is every two weeks ("every 4 weeks" is not); "a couple of weeks ago" stays vague
        time_words = {w for m in time_mentions for w in _WORD.findall(before_times[m.start : m.end])}
        words = _WORD.findall(lowered.replace("every couple of ", "every 2 "))
        for index, (amount, unit) in enumerate(itertools.pairwise(words)):
            every = "every " if index > 0 and words[index - 1] == "every" else ""
            if unit in _TIME_UNITS and (value := _number(amount)) is not None:
                if words[index + 2 : index + 3] == ["old"] or words[index + 2 : index + 4] == ["of", "age"]:
                    # an age ("58 years old", "a 6-month-old", "40 years of age") is no span of time: marked an
                    # age, which meets only another age or the same amount said without "old" (text/times.py)
                    times.add(f"age {_fmt(value)} {_TIME_UNITS[unit]}")
                    time_words.update((amount, unit))
                    continue
                times.add(f"{every}{_fmt(value)} {_TIME_UNITS[unit]}")
                time_words.update((amount, unit, every.strip()) if every else (amount, unit))
            elif unit in _TIME_UNITS and amount in ("few", "several", "couple"):
                times.add(f"few {_TIME_UNITS[unit]}")
                time_words.update((amount, unit))
        if "1/day" in times and _EVERY_DAY.search(before_times) and any(_WITHIN_A_DAY.fullmatch(t) for t in times):
            # "every two hours, every day": "every day" says the schedule goes on daily, the interval how often
            times.discard("1/day")
        numbers: set[str] = set()
        doses: set[str] = set()
        dose_mentions: list[_Mention] = []
        lowered = _ONE_UNIT.sub(lambda m: "1".ljust(len(m.group())), lowered)
        ages = {m.start(1) for m in BARE_AGE.finditer(lowered)}
        ages_at = {m.start(group) for m in AGE_AT.finditer(lowered) for group in (1, 2) if m.group(group)}
        for match in _NUMBER.finditer(lowered):
            digits, unit = match.group(1), match.group(2) or ""
            if unit in _TIME_UNITS:
                continue
            if match.start(1) in ages:  # "I am 55 and ...": an age, as "55 years old" is
                times.add(f"age {_fmt(float(digits))} year")
                continue
            if match.start(1) in ages_at:  # "diagnosed when I was 19": the age at an event, met by another such
                times.add(f"aged {_fmt(float(digits))} year")
                continue
            if unit in _DOSE_UNITS:
                doses.add(f"{digits} {_DOSE_UNITS[unit]}")
                written = _fmt(float(digits)) if "/" not in digits else digits
                dose_mentions.append(_Mention("dose", *match.span(), dose=written, unit=_DOSE_UNITS[unit]))
            numbers.add(digits)  # compared by value: "20 to 24 units" and "20 units to 24 units" agree
        dose_mentions.sort(key=lambda m: m.start)
        transitions = {(_fmt(float(a)), _fmt(float(b))) for a, b in _TRANSITION.findall(lowered)}
        transitions |= {(_fmt(float(a)), _fmt(float(b))) for b, a in _TRANSITION_BACKWARDS.findall(lowered)}
        actions: set[str] = set()
        action_mentions: list[_Mention] = []
        consumed: list[tuple[int, int, bool]] = []  # (start, end, whether the action says "do not")
        for match in _ACTION.finditer(lowered):
            verb = match.group("verb")
            if (
                _NOT_AN_ACTION_AFTER.match(lowered, match.end("verb"))
                or _FELL_AWAY.match(lowered, match.start("verb"))
                or (
                    not match.group("neg")
                    and _BACKGROUND_BEFORE.search(lowered, max(0, match.start() - 24), match.start())
                )
                or (verb in _HELD_UP and _KEPT_BEFORE.search(lowered, max(0, match.start() - 30), match.start()))
                or _A_NOUN_BEFORE.search(lowered, max(0, match.start() - 12), match.start())
                or _PASSED_OVER_BEFORE.search(lowered, max(0, match.start() - 30), match.start())
                or (verb.startswith("hold") and _HELD_IN_HAND.match(lowered, match.end("verb")))
            ):
                continue
            action = next(label for pattern, label in _COMPILED_ACTIONS if pattern.fullmatch(verb))
            from_take = False
            if match.group("neg"):
                from_take = action == "take"
                action = _NEGATED.get(action, action)
            consumed.append((*match.span(), action in _NOT_DOING))
            actions.add(action)
            action_mentions.append(_Mention(action, *match.span(), from_take=from_take))
        if "stop" in actions and _TEMPORARY.search(lowered):  # "stop it for now" is "hold it"
            actions = (actions - {"stop"}) | {"hold"}
            action_mentions = [
                _Mention("hold", m.start, m.end, from_take=m.from_take) if m.label == "stop" else m
                for m in action_mentions
            ]
        action_mentions.extend(_Mention("stop", *m.span(), forward_only=True) for m in _REPLACED.finditer(lowered))
        action_mentions.sort(key=lambda m: m.start)
        residual = lowered
        refusing = residual
        for start, end, says_not in sorted(consumed, reverse=True):
            residual = residual[:start] + " " * (end - start) + residual[end:]
            refusing = (
                refusing[:start] + ("not".ljust(end - start) if says_not else " " * (end - start)) + refusing[end:]
            )
        residual = _NOT_NEGATIVE.sub(" ", residual)
        try:
            polarity = assertion.read_polarity(residual)
            refused = (
                assertion.read_polarity(_NOT_NEGATIVE.sub(" ", refusing)).negated - polarity.negated
                if any(says_not for *_, says_not in consumed)
                else frozenset()
            )
        except Exception as exc:  # the negation reader failed: the pair is uncertain, or (lenient) no negation read
            if strict:
                raise UnreadableText(f"the negation reader (negspacy) failed: {type(exc).__name__}: {exc}") from exc
            polarity, refused = NOT_NEGATIVE, frozenset()
        # "Don't take it on an empty stomach" says "take it with food".
        for mention in list(action_mentions):
            if not mention.from_take:
                continue
            flipped = [f for f in food_mentions if _same_part(_SEGMENT_BREAK, lowered, mention, f)]
            if flipped:
                food_mentions = [
                    _Mention(_FOOD_FLIP[f.label], f.start, f.end) if f in flipped else f for f in food_mentions
                ]
                action_mentions[action_mentions.index(mention)] = _Mention("take", mention.start, mention.end)
                actions = {m.label for m in action_mentions if not m.forward_only}
        slots, opposites_by_no = _opposites_negated(slots, lowered, polarity, refused)
        sides = set()
        for match in _SIDE.finditer(lowered):
            side = next(side for side in match.groups() if side)
            sides.add("both" if side in ("both", "each", "bilateral", "bilaterally") else side)
        drugs = frozenset(m.label for m in drug_mentions if not m.label.startswith("class:"))
        classes = frozenset(m.label for m in drug_mentions if m.label.startswith("class:"))
        instructions = _instructions(lowered, drug_mentions, dose_mentions, action_mentions, time_mentions)
        return ClinicalSignals(
            actions=frozenset(actions),
            drugs=drugs,
            numbers=frozenset(numbers),
            doses=frozenset(doses),
            negated=polarity.negative,
            sides=frozenset(sides),
            times=frozenset(times),
            food=frozenset(m.label for m in food_mentions),
            classes=classes,
            instructions=instructions,
            transitions=frozenset(transitions),
            abilities=frozenset(
                (m.group("verb").split()[0], any(word in m.group("mod") for word in _UNABLE))
                for m in _ABILITY.finditer(lowered)
            ),
            slots=slots,
            polarity=polarity,
            refused=refused,
            opposites_by_no=opposites_by_no,
            permitted=frozenset(
                assertion.word_stem(word)
                for match in _PERMISSION.finditer(residual)
                for word in _WORD.findall(match.group("rest"))
            )
            & (polarity.affirmed - polarity.negated),
            sought=frozenset(
                assertion.word_stem(word)
                for pattern in (_SEEKING, _SOUGHT_PASSIVE)
                for match in pattern.finditer(lowered)
                if pattern is _SEEKING or not _NO_WORD.search(lowered, max(0, match.start() - 12), match.end())
                for word in _WORD.findall(match.group("rest"))
            )
            & (polarity.affirmed - polarity.negated),
            time_words=frozenset(time_words),
        )

    def read(self, reference: str, candidate: str) -> PairReading:
        """The guard's three-way answer for a pair: its conflicts, or why it cannot vouch for the pair
        (:mod:`bedside.text.alignment`), or neither (the two agree as far as the rules can read)."""
        for side, text in (("the clinician's sentence", reference), ("the candidate", candidate)):
            if why := unreadable(text):
                return PairReading((), f"{side} cannot be read: {why}")
        try:
            found = [c for c in self._conflicts(reference, candidate) if c.kind not in self.without]
            if found and {c.kind for c in found} == {"negation"}:
                shared = shared_content(reference, candidate)
                if shared < NEGATION_ALIGN:
                    return PairReading(
                        (),
                        f"one sentence says no where the other does not ({found[0].reference} / "
                        f"{found[0].candidate}), but they share only {shared:.0%} of their content words: too "
                        "few to tell a reversal from the same no said otherwise",
                    )
            if found:
                return PairReading(tuple(found), None)
            ref, cand = self._read(reference, True), self._read(candidate, True)

            def said_otherwise(ours: list[str], theirs: list[str]) -> bool:
                return _one_time_two_ways(ref, cand, ours + theirs) or self._names_one_drug(ours, theirs)

            change = read_change(reference, candidate, said_otherwise)
            if change.opposites and "antonym" not in self.without:
                return PairReading(tuple(Conflict("antonym", *pair) for pair in change.opposites), None)
            if change.kin and "kin" not in self.without:
                return PairReading(
                    tuple(Conflict("kin", f"{a} ({kind})", f"{b} (another {kind})") for a, b, kind in change.kin),
                    None,
                )
            if change.replaced and "unrelated" not in self.without:
                return PairReading(
                    tuple(Conflict("unrelated", a, f"{b} (unrelated in WordNet)") for a, b in change.replaced), None
                )
            if "number" not in self.without and (counts := recounted(reference, candidate)):
                return PairReading((Conflict("number", *counts),), None)
            if "exchange" not in self.without and (traded := exchanged(reference, candidate)):
                return PairReading((Conflict("exchange", *traded),), None)
            return PairReading((), change.gap)
        except UnreadableText as exc:
            return PairReading((), str(exc))

    def conflicts(self, reference: str, candidate: str) -> list[Conflict]:
        """How ``candidate`` (draft content) contradicts ``reference`` (the clinician's sentence); [] where the
        rules find none or cannot read the pair (:meth:`read` tells those apart: use it to decide a match)."""
        return list(self.read(reference, candidate).conflicts)

    def _conflicts(self, reference: str, candidate: str) -> list[Conflict]:
        ref, cand = self._read(reference, True), self._read(candidate, True)
        found = []
        if ref.actions and cand.actions and not actions_agree(ref.actions, cand.actions):
            found.append(Conflict("action", _show(ref.actions), _show(cand.actions)))
        elif bound := _bound_conflict(ref.instructions, cand.instructions, "action"):
            found.append(Conflict("action", *bound))
        elif (opposed := opposed_actions(ref.actions, cand.actions)) and (
            shared_content(reference, candidate) >= NEGATION_ALIGN  # as a "no" is, only on sentences that align
        ):
            found.append(Conflict("action", *opposed))
        if _sets_conflict(ref.drugs, cand.drugs):
            found.append(Conflict("drug", _show(ref.drugs), _show(cand.drugs)))
        elif (ref.classes or cand.classes) and _class_conflict(ref.drugs | ref.classes, cand.drugs | cand.classes):
            found.append(Conflict("drug", _show(ref.drugs | ref.classes), _show(cand.drugs | cand.classes)))
        if _sets_conflict(ref.sides, cand.sides):
            found.append(Conflict("laterality", _show(ref.sides), _show(cand.sides)))
        if _sets_conflict(ref.numbers, cand.numbers) or (ref.doses and not cand.numbers):
            found.append(Conflict("number", _show(ref.numbers), _show(cand.numbers)))
        elif aligned := _dose_conflict(
            ref.instructions, cand.instructions, ordered=not ref.transitions or ref.transitions != cand.transitions
        ):
            found.append(Conflict("number", *aligned))
        elif any((b, a) in cand.transitions and (a, b) not in cand.transitions for a, b in ref.transitions):
            found.append(Conflict("number", _show_pairs(ref.transitions), _show_pairs(cand.transitions)))
        if negation := _negation_conflict(ref, cand):
            found.append(negation)
        elif reversed_ability := next(
            ((verb, unable) for verb, unable in ref.abilities if (verb, not unable) in cand.abilities), None
        ):
            verb, unable = reversed_ability
            found.append(Conflict("negation", f"{_polarity(unable)} ({verb})", f"{_polarity(not unable)} ({verb})"))
        if times_conflict(in_days(with_frequency(ref.times)), in_days(with_frequency(cand.times))) or counted_apart(
            ref.times, cand.times
        ):
            found.append(Conflict("time", _show(ref.times), _show(cand.times)))
        elif _sets_conflict(ref.food, cand.food):
            found.append(Conflict("time", _show(ref.food), _show(cand.food)))
        elif (
            not _counted_parts(ref.times, cand.times)
            and not _one_capped_prn(ref.times, cand.times)
            and (bound := _bound_conflict(ref.instructions, cand.instructions, "time"))
        ):
            found.append(Conflict("time", *bound))
        found.extend(Conflict(*slot) for slot in slot_conflicts(ref.slots, cand.slots))
        return found


def _negation_conflict(ref: ClinicalSignals, cand: ClinicalSignals) -> Conflict | None:
    """A word one sentence negates and the other affirms (:func:`bedside.text.assertion.polarity_flips`): "no
    fever but a cough" against "a fever but no cough", both negative sentences. Or else one sentence negates
    something and the other nothing, in words the other does not use ("the spots have not shrunk" against "the
    spots are smaller"), unless the other negates a word with "without" ("fever-free" against "without a
    fever"). A word one side negates with a cue and the other refuses with an action that says "do not" ("don't
    lift anything heavy" against "avoid heavy lifting": :attr:`ClinicalSignals.refused`) is the same "no" put two
    ways, not a conflict."""
    if _opposite_negated(ref, cand) or _opposite_negated(cand, ref):
        return None
    same_no = (ref.polarity.negated & (cand.refused | _passed_over(cand))) | (
        cand.polarity.negated & (ref.refused | _passed_over(ref))
    )
    if flips := polarity_flips(ref.polarity, cand.polarity) - same_no:
        shown = ", ".join(sorted(ref.polarity.word(stem) for stem in flips))
        says_no = bool(flips & ref.polarity.negated)  # which side says no to the flipped words, not to the sentence
        return Conflict("negation", f"{_polarity(says_no)} ({shown})", f"{_polarity(not says_no)} ({shown})")
    one_sided = (ref.negated and not cand.polarity.negated and not _no_by_action(cand)) or (
        cand.negated and not ref.polarity.negated and not _no_by_action(ref)
    )
    refused_alike = any(
        side.polarity.negated & (other.refused | _passed_over(other)) for side, other in ((ref, cand), (cand, ref))
    )
    if (
        ref.negated != cand.negated
        and one_sided
        and not refused_alike
        and not ref.polarity.negated & cand.polarity.negated
    ):
        return Conflict("negation", _polarity(ref.negated), _polarity(cand.negated))
    return _refused_and_allowed(ref, cand) or _refused_and_done(ref, cand)


def _no_by_action(signals: ClinicalSignals) -> bool:
    """A sentence whose "no" is an action's that names nothing ("you will not need another one": stop, with no
    word refused): it says no as much as "your next one is not due" does."""
    return bool(signals.actions & _NOT_DOING) and not signals.refused


def _refused_and_allowed(ref: ClinicalSignals, cand: ClinicalSignals) -> Conflict | None:
    """A word one sentence says no to ("avoid grapefruit juice") and the other allows ("it is fine to have
    grapefruit juice"), the second with no "no" of its own, or none the first does not say too ("avoid bending past
    ninety degrees and do not cross your legs" against "you may bend past ninety degrees but do not cross your
    legs"): the polarity reading sees two affirmed words."""
    for one, other, flipped in ((ref, cand, False), (cand, ref, True)):
        if other.refused or not other.polarity.negated <= one.polarity.negated:
            continue
        if shared := (one.polarity.negated | one.refused) & other.permitted:
            shown = ", ".join(sorted(one.polarity.word(stem) for stem in shared))
            sides = (f"refused ({shown})", f"allowed ({shown})")
            return Conflict("negation", *(sides[::-1] if flipped else sides))
    return None


_SEEKING = re.compile(
    r"\b(?:get|gets|getting|got|have|has|having|enjoy|enjoys|enjoying|drink|drinks|drinking|eat|eats|eating|need|"
    r"needs)\s+(?P<rest>(?:[a-z'-]+\s+){0,3}[a-z'-]+)"
)

_SOUGHT_PASSIVE = re.compile(
    r"\b(?P<rest>(?:[a-z'-]+\s+){0,2}[a-z'-]+) (?:is|are|was|were|'s|'re) (?:(?:strongly|highly|still|really) )?"
    r"(?:recommended|needed|required|advised|necessary)\b"
)
"""The thing a passive sentence asks for ("the flu vaccine is strongly recommended"), sought as "need" seeks it;
not where a "no" comes with it, in the phrase or the few words before it ("no further treatment is needed",
"there is no test needed")."""
_NO_WORD = re.compile(r"\b(?:no|not|none|nothing|never)\b")


def _refused_and_done(ref: ClinicalSignals, cand: ClinicalSignals) -> Conflict | None:
    """A word one sentence refuses with an action that says "do not" ("avoid direct sun", "does not need
    treatment") and the other seeks, with no "no" or refusal anywhere in it ("get some direct sun", "also needs
    treatment"): the polarity reading sees no "no" in the refusing sentence, whose cue the action took. Only a
    word the other sentence gets, has, takes in or needs (:attr:`ClinicalSignals.sought`): "stay out of direct
    sun" refuses it too."""
    for one, other, flipped in ((ref, cand, False), (cand, ref, True)):
        if other.polarity.negated or other.refused or other.negated or other.actions & _NOT_DOING:
            continue
        if sought := one.refused & other.sought:
            shown = ", ".join(sorted(one.polarity.word(stem) for stem in sought))
            sides = (f"refused ({shown})", f"sought ({shown})")
            return Conflict("negation", *(sides[::-1] if flipped else sides))
    return None


def _passed_over(signals: ClinicalSignals) -> frozenset[str]:
    """What a sentence chooses something over ("instead of the tablets"): the same "no" as ", not the tablets"."""
    return frozenset(key for kind, key, value in signals.slots if kind == "preference" and value == "passed over")


_OTHER_SIDE = {"a": "b", "b": "a"}
_CHOSEN_OVER = re.compile(r"\b(?:instead of|rather than)\b")
_NO_JUST_BEFORE = re.compile(r"(?:\bnot|\bnever|n't|\bcannot)(?: [a-z]+){0,2} $")
"""A "no" at most two words before a side ("shouldn't be alone", "not be left alone"): it reaches a word the
negation reader keeps no stem of, as "alone"."""


def _opposites_negated(
    slots: frozenset[Slot], lowered: str, polarity: Polarity, refused: frozenset[str]
) -> tuple[frozenset[Slot], frozenset[tuple[str, str]]]:
    """The sentence's slots with each side of a complementary pair its single "no" reaches turned to the other
    side, and those sides: "do not lie down for half an hour" says what "stay upright for 30 minutes" says, and
    "do not take the brace off" what "keep the brace on" says. With two "no"s, a choice of one thing over another
    ("instead of", whose reach the refusal reading draws wide), or an opposite named both ways, nothing turns."""
    if polarity.cues + bool(refused) != 1 or _CHOSEN_OVER.search(lowered):
        return slots, frozenset()
    said_no = polarity.negated | refused
    turned = {
        (name, side)
        for name, side, match in complementary_mentions(lowered)
        if {assertion.word_stem(word) for word in _WORD.findall(match.group())} & said_no
        or _NO_JUST_BEFORE.search(lowered, max(0, match.start() - 24), match.start())
    }
    named = {(key, value) for kind, key, value in slots if kind == "opposite"}
    turned = {(name, side) for name, side in turned if (name, _OTHER_SIDE[side]) not in named}
    if not turned:
        return slots, frozenset()
    other = frozenset((name, _OTHER_SIDE[side]) for name, side in turned)
    kept = frozenset(slot for slot in slots if slot[0] != "opposite" or (slot[1], slot[2]) not in turned)
    return kept | {("opposite", name, side) for name, side in other}, other


def _opposite_negated(negating: ClinicalSignals, affirming: ClinicalSignals) -> bool:
    """Whether one sentence, with a single "no", negates a word whose WordNet antonym the other, negating nothing,
    affirms: "don't let the bandage get wet" says "keep the bandage dry", two flips that cancel. A second "no"
    ("... and do not remove it" against "... and remove it") is a flip of its own."""
    from bedside.text.wordnet import antonym_table

    if affirming.polarity.negated or affirming.refused or affirming.negated:
        return False
    if negating.polarity.cues + bool(negating.refused) != 1:
        return False
    said = {(key, value) for kind, key, value in affirming.slots if kind == "opposite"}
    if negating.opposites_by_no & said:  # "has not blocked" against "is open"
        return True
    table = antonym_table()
    plain = affirming.polarity.affirmed
    return any(table.get(word, frozenset()) & plain for word in negating.polarity.negated | negating.refused)


def _same_part(breaks: re.Pattern[str], text: str, a: _Mention, b: _Mention) -> bool:
    """Whether nothing in ``breaks`` (or a clause break) lies between the two mentions."""
    if a.start < 0 or b.start < 0:
        return False
    left, right = (a, b) if a.start <= b.start else (b, a)
    between = text[left.end : right.start]
    return not (breaks.search(between) or _CLAUSE_BREAK.search(between))


def _nearest(target: _Mention, options: Iterable[_Mention]) -> _Mention | None:
    """The option closest to ``target`` (by the gap between them), the one before it on a tie."""
    best: tuple[int, int] | None = None
    chosen = None
    for option in options:
        if option.end <= target.start:
            rank = (target.start - option.end, 0)
        elif option.start >= target.end:
            rank = (option.start - target.end, 1)
        else:
            rank = (0, 0)
        if best is None or rank < best:
            best, chosen = rank, option
    return chosen


def _instructions(
    text: str,
    drugs: list[_Mention],
    doses: list[_Mention],
    actions: list[_Mention],
    times: list[_Mention],
) -> tuple[Instruction, ...]:
    """One :class:`Instruction` per dose and per drug without a dose, in the order of the text."""
    placed = [d for d in drugs if d.start >= 0]

    def action_for(drug: _Mention) -> str | None:
        replaced = [
            a for a in actions if a.forward_only and a.end <= drug.start and _same_part(_NO_BREAK, text, a, drug)
        ]
        if replaced and not any(replaced[-1].end <= d.start < drug.start for d in placed):
            return replaced[-1].label
        clause = [a for a in actions if not a.forward_only and _same_part(_NO_BREAK, text, a, drug)]
        chosen = _nearest(drug, clause)
        return chosen.label if chosen else None

    def time_for(mention: _Mention) -> str | None:
        chosen = _nearest(mention, [t for t in times if _same_part(_SEGMENT_BREAK, text, t, mention)])
        return chosen.label if chosen else None

    found: list[tuple[int, Instruction]] = []
    dosed: set[_Mention] = set()
    for dose in doses:
        drug = _nearest(dose, [d for d in placed if _same_part(_SEGMENT_BREAK, text, d, dose)])
        if drug is None:
            in_clause = {d.label for d in placed if _same_part(_NO_BREAK, text, d, dose)}
            drug = next((d for d in placed if in_clause == {d.label}), None)
        if drug is not None:
            dosed.add(drug)
        action = action_for(drug) if drug else None
        if action is None and drug is None:
            chosen = _nearest(dose, [a for a in actions if not a.forward_only and _same_part(_NO_BREAK, text, a, dose)])
            action = chosen.label if chosen else None
        found.append(
            (dose.start, Instruction(drug.label if drug else None, action, dose.dose, dose.unit, time_for(dose)))
        )
    for drug in placed:
        if drug not in dosed:
            found.append((drug.start, Instruction(drug.label, action_for(drug), None, None, time_for(drug))))
    return tuple(instruction for _, instruction in sorted(found, key=lambda item: item[0]))


_DRUG_CLASS = re.compile(r"inhibitors|agents|antagonists|blockers|agonists|drugs|compounds")


def _drug_key(name: str) -> str:
    """A drug's first word ("polyethylene glycol 3350" is "polyethylene"); "" for a class ("statins")."""
    if _DRUG_CLASS.search(name):
        return ""
    words = name.split()
    return words[0] if words else ""


def actions_agree(a: Iterable[str], b: Iterable[str]) -> bool:
    """Whether two sets of actions share one or hold a compatible pair (take and continue, cancel and stop...)."""
    a, b = set(a), set(b)
    return bool(a & b) or any(frozenset({x, y}) in _COMPATIBLE for x in a for y in b)


_DAY_PARTS = frozenset({"morning", "midday", "evening"})


def with_frequency(times: frozenset[str]) -> frozenset[str]:
    """``times`` with the frequency its parts of the day count ("in the morning and in the evening" is 2/day),
    where it names no frequency itself (both checkers: "one in the morning and one at night" is twice a day)."""
    parts = times & _DAY_PARTS
    if len(parts) < 2 or any(t.endswith("/day") for t in times):
        return times
    return times | {f"{len(parts)}/day"}


def _counted_parts(ref: frozenset[str], cand: frozenset[str]) -> bool:
    """One side gives a frequency a day and the other the same number of parts of the day: the same schedule."""
    return any(
        f"{len(b & _DAY_PARTS)}/day" in a and not any(t.endswith("/day") for t in b)
        for a, b in ((ref, cand), (cand, ref))
    )


def _one_capped_prn(ref: frozenset[str], cand: frozenset[str]) -> bool:
    """Both sides give "as needed" and the same one frequency: one instruction, a dose taken when needed as often as
    the frequency allows ("every 6 hours as needed" / "as needed, up to once every six hours"), whatever word each
    side puts nearer the drug."""
    return ref == cand and "as needed" in ref and len(ref) == 2


def _sets_conflict(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a) and bool(b) and not (a <= b or b <= a)


def _same_drug(a: str, b: str) -> bool:
    """Whether two drug keys can name the same medicine: equal, a class and its member, or overlapping classes.

    A drug in no listed class is never told apart from a class (its class is unknown)."""
    if a == b:
        return True
    members = {c.key: c.members for c in drug_classes()}
    known = set().union(*members.values())
    a_class, b_class = a.startswith("class:"), b.startswith("class:")
    if a_class and b_class:
        return bool(members[a[6:]] & members[b[6:]])
    if a_class or b_class:
        group, drug = (members[a[6:]], b) if a_class else (members[b[6:]], a)
        return drug in group or drug not in known
    return False


def _class_conflict(a: frozenset[str], b: frozenset[str]) -> bool:
    """Neither side's drugs and classes are all covered by some drug or class of the other side."""

    def covered(xs: frozenset[str], ys: frozenset[str]) -> bool:
        return all(any(_same_drug(x, y) for y in ys) for x in xs)

    return bool(a) and bool(b) and not (covered(a, b) or covered(b, a))


def _bound_conflict(
    ref: tuple[Instruction, ...], cand: tuple[Instruction, ...], field: Literal["action", "time"]
) -> tuple[str, str] | None:
    """The first drug both sides name whose bound actions (or times) disagree, shown as (reference, candidate)."""
    for drug in dict.fromkeys(i.drug for i in ref if i.drug):
        mine = {getattr(i, field) for i in ref if i.drug == drug} - {None}
        theirs = {getattr(i, field) for i in cand if i.drug and _same_drug(drug, i.drug)} - {None}
        if not mine or not theirs:
            continue
        disagree = not actions_agree(mine, theirs) if field == "action" else _times_disagree(mine, theirs)
        if disagree:
            return f"{drug}: {_show(frozenset(mine))}", f"{drug}: {_show(frozenset(theirs))}"
    return None


def _times_disagree(mine: set[str], theirs: set[str]) -> bool:
    """Times bound to one drug that differ, except a count a day against parts of the day: "in the morning" and
    "once a day" say different things, not opposite ones ("as needed" against either still differs)."""
    if mine <= theirs or theirs <= mine:
        return False
    counts = {t for t in mine | theirs if t.endswith("/day")}
    parts = {t for t in mine | theirs if t in _DAY_PARTS}
    if counts and parts and counts | parts == mine | theirs:
        mine_counts, their_counts = mine & counts, theirs & counts
        mine_parts, their_parts = mine & parts, theirs & parts
        return bool(
            (mine_counts and their_counts and mine_counts != their_counts)
            or (mine_parts and their_parts and not (mine_parts <= their_parts or their_parts <= mine_parts))
        )
    return True


def _dose_conflict(
    ref: tuple[Instruction, ...], cand: tuple[Instruction, ...], *, ordered: bool = True
) -> tuple[str, str] | None:
    """Doses aligned by drug and time that differ, or (``ordered``) the same doses in another order (a swapped
    schedule); not ordered where both sentences say the same change from one dose to another, each its own way.

    A reference dose is compared with the candidate's doses that have the same time (and the same drug when
    both name one); a dose with no time, with the candidate's untimed doses of the same drug; doses with neither
    drug nor time, with each other, in order."""

    def aligned(r: Instruction, c: Instruction) -> bool:
        if r.time or c.time:
            return r.time == c.time and (not (r.drug and c.drug) or _same_drug(r.drug, c.drug))
        if r.drug or c.drug:
            return bool(r.drug and c.drug and _same_drug(r.drug, c.drug))
        return True

    ref_doses = [i for i in ref if i.dose]
    cand_doses = [i for i in cand if i.dose]
    for r in ref_doses:
        group_ref = [x for x in ref_doses if aligned(x, r) and aligned(r, x)]
        group_cand = [c for c in cand_doses if aligned(r, c)]
        if not group_cand:
            continue
        mine = [(x.dose, x.unit) for x in group_ref]
        theirs = [(c.dose, c.unit) for c in group_cand]
        swapped = ordered and len(mine) > 1 and sorted(mine) == sorted(theirs) and mine != theirs
        if swapped or not (set(mine) <= set(theirs) or set(theirs) <= set(mine)):
            return ", ".join(map(str, group_ref)), ", ".join(map(str, group_cand))
    return None


def _show(values: frozenset[str]) -> str:
    return ", ".join(sorted(values)) or "none"


def _show_pairs(values: frozenset[tuple[str, str]]) -> str:
    return ", ".join(f"{a} to {b}" for a, b in sorted(values)) or "none"


def _polarity(negated: bool) -> str:
    return "negated" if negated else "affirmative"


@lru_cache(maxsize=1)
def default_guard() -> ClinicalGuard:
    """One guard per process: the drug dictionary takes a couple of seconds to load."""
    return ClinicalGuard()


__all__ = [
    "CONFLICT_KINDS",
    "ClinicalGuard",
    "ClinicalSignals",
    "Conflict",
    "DrugClass",
    "DrugFinder",
    "DrugMention",
    "Instruction",
    "PairReading",
    "actions_agree",
    "answered_sides",
    "body_parts",
    "body_regions",
    "default_guard",
    "drug_classes",
    "with_frequency",
]
