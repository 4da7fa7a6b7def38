"""Calendar words a sentence names (months, weekdays), so rules can tell "in March" from "in June".

Number words and amounts are read by :mod:`bedside.text.quantities` (text2num and pint).
"""

from __future__ import annotations

import re

_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december",
)  # fmt: skip
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH_ABBREVIATIONS = {m[:3]: m for m in _MONTHS if m != "may"} | {"sept": "september"}
_CALENDAR = re.compile(
    rf"\b(?:{'|'.join([*_MONTHS, *_MONTH_ABBREVIATIONS])}|(?:{'|'.join(_WEEKDAYS)})s?)\b\.?", re.IGNORECASE
)
_DAY_RANGE = re.compile(
    rf"\b({'|'.join(_WEEKDAYS)})s? ?(?:to|through|thru|till|until|-|–) ?({'|'.join(_WEEKDAYS)})s?\b", re.I
)
"""Days said as a run ("Monday to Friday"): every day of it."""
_MONTH_NAMES = "|".join([*_MONTHS, *_MONTH_ABBREVIATIONS])
_MONTH_RANGE = re.compile(
    rf"\b({_MONTH_NAMES})\.? ?(?:to|through|thru|till|until|into|-|–) ?(?:(?:about|around|early|mid|late)[ -])?"
    rf"({_MONTH_NAMES})\b",
    re.IGNORECASE,
)
"""Months said as a run ("from April to July", "November through February"): every month of it, across the turn
of the year too."""
_WEEK_PARTS = {
    re.compile(r"\bweekdays\b|\bon week ?days\b", re.IGNORECASE): _WEEKDAYS[:5],
    re.compile(r"\b(?:at |on |over )?(?:the )?weekends?\b", re.IGNORECASE): _WEEKDAYS[5:],
}
"""Days said by the part of the week they fall in: weekdays are Monday to Friday, the weekend Saturday and Sunday."""


def calendar_terms(text: str) -> frozenset[str]:
    """The months and weekdays a text names, as ``month:march`` / ``weekday:monday``, so "in March" and "in
    June", or "on Tuesday" and "on Friday", compare as different dates; a run of days ("Monday to Friday") and a
    part of the week ("weekdays", "the weekend") name each of their days. "May" counts only capitalised and not
    at the start of a sentence (elsewhere it is the verb)."""
    found: set[str] = set()
    for match in _CALENDAR.finditer(text):
        word = match.group().rstrip(".").lower()
        if word == "may" and (match.group()[0] != "M" or not text[: match.start()].strip()):
            continue
        word = _MONTH_ABBREVIATIONS.get(word, word)
        if word.rstrip("s") in _WEEKDAYS:  # "on Saturdays" names Saturday
            word = word.rstrip("s")
        found.add(f"weekday:{word}" if word in _WEEKDAYS else f"month:{word}")
    for match in _DAY_RANGE.finditer(text):
        first, last = _WEEKDAYS.index(match.group(1).lower()), _WEEKDAYS.index(match.group(2).lower())
        if first < last:
            found.update(f"weekday:{day}" for day in _WEEKDAYS[first : last + 1])
    for match in _MONTH_RANGE.finditer(text):
        first, last = (_MONTHS.index(_MONTH_ABBREVIATIONS.get(m.lower(), m.lower())) for m in match.group(1, 2))
        span = range(first, last + 1) if first <= last else [*range(first, 12), *range(last + 1)]
        found.update(f"month:{_MONTHS[i]}" for i in span)
    for pattern, days in _WEEK_PARTS.items():
        if pattern.search(text):
            found.update(f"weekday:{day}" for day in days)
    return frozenset(found)
