"""Numbers written as words, rewritten as digits, so rules that compare quantities see "forty" as 40.

Patients say "the forty", "five hundred twice a day", "thirty-nine degrees", "a hundred fifty over ninety-five";
records write 40 mg, 500 mg, 39, 150/95. Rules that read numbers (:mod:`bedside.text.conflicts`) only see
digits, so a spoken number would read as no number at all, or as a different one. "One" is rewritten only
before a unit or a count noun's usual companions ("one tablet", "one a day"), never as a pronoun ("the blue one").
"""

from __future__ import annotations

import re

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_WORD = "|".join([*_TENS, *_UNITS, "hundred", "thousand"])
_RUN = re.compile(rf"\b(?:a |one )?(?:{_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_WORD}))*\b", re.IGNORECASE)
_ONE_BEFORE = re.compile(
    r"\s+(?:a|per|each|mg|milligrams?|tablets?|pills?|capsules?|puffs?|doses?|units?|times?|days?|weeks?|months?"
    r"|years?|hours?|minutes?|kg|kilos?|glass(?:es)?|cups?|drinks?|bottles?|litres?|liters?)\b",
    re.IGNORECASE,
)


_TIMES = re.compile(r"\s+times\b", re.IGNORECASE)


def _value(words: list[str]) -> int | None:
    total, current = 0, 0
    for before, word in zip(["", *words], words, strict=False):
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = (current or 1) * 100
        elif word == "thousand":
            total += (current or 1) * 1000
            current = 0
        elif word == "and" and before in ("hundred", "thousand"):
            continue
        else:
            return None
    return total + current


def spell_numbers(text: str, *, frequencies: bool = False) -> str:
    """``text`` with each run of number words ("five hundred", "thirty-nine") replaced by its digits; "four
    times" stays in words (the guard reads frequencies in words) unless ``frequencies``."""

    def replace(match: re.Match[str]) -> str:
        words = [w for w in re.split(r"[\s-]+", match.group().lower()) if w]
        if words[0] == "a" and (len(words) < 2 or words[1] not in ("hundred", "thousand")):
            return match.group()  # "a" alone is an article, not a number
        if words == ["one"] and not _ONE_BEFORE.match(text, match.end()):
            return match.group()
        if words[0] == "a":
            words = words[1:]
        if not frequencies and _TIMES.match(text, match.end()):
            return match.group()  # "four times a day": the frequency phrases are read in words
        value = _value(words)
        return match.group() if value is None else str(value)

    return _RUN.sub(replace, text)


_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december",
)  # fmt: skip
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH_ABBREVIATIONS = {m[:3]: m for m in _MONTHS if m != "may"} | {"sept": "september"}
_CALENDAR = re.compile(rf"\b(?:{'|'.join([*_MONTHS, *_WEEKDAYS, *_MONTH_ABBREVIATIONS])})\b\.?", re.IGNORECASE)


def calendar_terms(text: str) -> frozenset[str]:
    """The months and weekdays a text names, as ``month:march`` / ``weekday:monday``, so "in March" and "in
    June", or "on Tuesday" and "on Friday", compare as different dates. "May" counts only capitalised and not
    at the start of a sentence (elsewhere it is the verb)."""
    found: set[str] = set()
    for match in _CALENDAR.finditer(text):
        word = match.group().rstrip(".").lower()
        if word == "may" and (match.group()[0] != "M" or not text[: match.start()].strip()):
            continue
        word = _MONTH_ABBREVIATIONS.get(word, word)
        found.add(f"weekday:{word}" if word in _WEEKDAYS else f"month:{word}")
    return frozenset(found)
