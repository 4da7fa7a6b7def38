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
