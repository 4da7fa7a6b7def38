"""Amounts of time compared by what they come to, within a tenth: durations in days, rates per day.

Both checkers read times as labels (:mod:`bedside.text.conflicts`): a duration "3 week", a rate "2/week" or
"every 2 week", a moment "morning". Two sentences say the same amount of time in many ways: "for a week" and
"for 7 days", "every other week" and "twice a month", "every six months" and "twice a year", "a week and a half"
and "ten days", "two months" and "eight weeks". :func:`in_days` writes each amount as days ("21 day") or as a
rate per day ("0.1429/day"); :func:`times_conflict` then compares two sentences' labels with amounts that agree
within :data:`TOLERANCE`, since a month is 28 to 31 days and one person's "two months" is another's "eight
weeks". "A few days" is two to five days. Labels that are not amounts (moments, "as needed") compare as written.
"""

from __future__ import annotations

import re

DAYS = {"second": 1 / 86400, "minute": 1 / 1440, "hour": 1 / 24, "day": 1, "week": 7, "month": 30, "year": 365}
"""Days in each unit of time the readers name (a month as 30 days: amounts agree within a tenth anyway)."""
TOLERANCE = 0.1
"""Two amounts of time within a tenth of the larger agree."""

_UNIT = "|".join(DAYS)
_LABEL = re.compile(rf"(every )?(\d+(?:\.\d+)?) ({_UNIT})|(\d+(?:\.\d+)?)/({_UNIT})")
_AMOUNT = re.compile(r"(\d+(?:\.\d+)?(?:e-?\d+)?)( day|/day)")


def in_days(times: frozenset[str]) -> frozenset[str]:
    """``times`` with durations in days and rates per day; other labels unchanged."""
    out: set[str] = set()
    for time in times:
        if time.startswith("age "):  # a person's age, "age 3 month": its amount in days, still marked an age
            out.update(f"age {label}" for label in in_days(frozenset([time.removeprefix("age ")])))
            continue
        match = _LABEL.fullmatch(time)
        if match is None:
            out.add(time)
        elif match.group(4):
            out.add(f"{float(match.group(4)) / DAYS[match.group(5)]:.4g}/day")
        elif match.group(1):
            every = float(match.group(2)) * DAYS[match.group(3)]
            out.add(f"{1 / every:.4g}/day" if every else time)
        else:
            out.add(f"{float(match.group(2)) * DAYS[match.group(3)]:.4g} day")
    return frozenset(out)


def same_time(a: str, b: str) -> bool:
    """Two labels (as :func:`in_days` writes them) that say the same time; an age meets the same amount said
    without "old" ("a baby under three months" / "under three months old")."""
    if a == b:
        return True
    if a.startswith("age ") != b.startswith("age "):
        a, b = a.removeprefix("age "), b.removeprefix("age ")
    for few, said in ((a, b), (b, a)):
        unit = few.removeprefix("few ")
        amount = _AMOUNT.fullmatch(said)
        if few.startswith("few ") and unit in DAYS and amount and amount.group(2) == " day":
            return 2 * DAYS[unit] <= float(amount.group(1)) <= 5 * DAYS[unit]
    first, second = _AMOUNT.fullmatch(a), _AMOUNT.fullmatch(b)
    if first is None or second is None or first.group(2) != second.group(2):
        return False
    x, y = float(first.group(1)), float(second.group(1))
    return abs(x - y) <= TOLERANCE * max(x, y)


def times_conflict(a: frozenset[str], b: frozenset[str]) -> bool:
    """Both sides give times and neither side's are all among the other's (amounts compared by
    :func:`same_time`)."""

    def within(x: frozenset[str], y: frozenset[str]) -> bool:
        return all(any(same_time(t, u) for u in y) for t in x)

    return bool(a) and bool(b) and not (within(a, b) or within(b, a))


__all__ = ["DAYS", "TOLERANCE", "in_days", "same_time", "times_conflict"]
