"""Amounts of time compared by what they come to, within a tenth: durations in days, rates per day.

Both checkers read times as labels (:mod:`bedside.text.conflicts`): a duration "3 week", a rate "2/week" or
"every 2 week", a moment "morning". Two sentences say the same amount of time in many ways: "for a week" and
"for 7 days", "every other week" and "twice a month", "every six months" and "twice a year", "a week and a half"
and "ten days", "two months" and "eight weeks". :func:`in_days` writes each amount as days ("21 day") or as a
rate per day ("0.1429/day"); :func:`times_conflict` then compares two sentences' labels with amounts that agree
within :data:`TOLERANCE`, since a month is 28 to 31 days and one person's "two months" is another's "eight
weeks". "A few days" is two to five days. A rate given as a range ("every 3-4 day", "2-3/day") meets any rate
inside it, a vague one ("few/week", "every few year") two to five of its unit, and the ``daytime`` the morning and
midday. Labels that are not amounts (moments, "as needed") compare as written.
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
_NUMBER = r"\d+(?:\.\d+)?"
_SPREAD = re.compile(rf"(every )?({_NUMBER})-({_NUMBER})( (?:{_UNIT})|/(?:{_UNIT}))")
"""A rate given as a range: "every 3-4 day" ("every three or four days"), "2-3/day" ("two or three a day")."""
_RANGE_PER_DAY = re.compile(r"(\d+(?:\.\d+)?(?:e-?\d+)?)-(\d+(?:\.\d+)?(?:e-?\d+)?)/day")


def in_days(times: frozenset[str]) -> frozenset[str]:
    """``times`` with durations in days and rates per day; other labels unchanged."""
    out: set[str] = set()
    for time in times:
        if time.startswith(("age ", "aged ")):  # a person's age, "age 3 month": in days, still marked an age
            prefix = time.split(" ", 1)[0]  # "aged": the age at an event ("when I was 19")
            out.update(f"{prefix} {label}" for label in in_days(frozenset([time.removeprefix(prefix + " ")])))
            continue
        if spread := _SPREAD.fullmatch(time):  # "every 3-4 day", "2-3/day": the range as rates a day
            ends = sorted(_times_a_day(f"{spread.group(1) or ''}{n}{spread.group(4)}") for n in spread.group(2, 3))
            out.add(f"{ends[0]:.4g}-{ends[1]:.4g}/day")
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


_VAGUE_RATE = re.compile(rf"few/({_UNIT})|every few ({_UNIT})")
""""A few times a week" (``few/week``) is two to five times a week, "every few years" once in two to five years."""
_WITHIN_DAYTIME = ({"daytime", "morning"}, {"daytime", "midday"})
""""During the day" takes in the morning and midday, not the evening or the night."""


def _times_a_day(label: str) -> float:
    """A rate label ("every 3 day", "2/week") as times a day."""
    match = _LABEL.fullmatch(label)
    if match is None or not (match.group(1) or match.group(4)):
        raise ValueError(f"not a rate: {label!r}")
    if match.group(4):
        return float(match.group(4)) / DAYS[match.group(5)]
    return 1 / (float(match.group(2)) * DAYS[match.group(3)])


def _rate_range(label: str) -> tuple[float, float] | None:
    """(lowest, highest) times a day of a rate, a range ("0.25-0.3333/day") or one amount ("0.2857/day")."""
    if match := _RANGE_PER_DAY.fullmatch(label):
        return float(match.group(1)), float(match.group(2))
    if (amount := _AMOUNT.fullmatch(label)) and amount.group(2) == "/day":
        return float(amount.group(1)), float(amount.group(1))
    return None


def same_time(a: str, b: str) -> bool:
    """Two labels (as :func:`in_days` writes them) that say the same time; an age meets the same amount said
    without "old" ("a baby under three months" / "under three months old")."""
    if a == b or {a, b} in _WITHIN_DAYTIME:
        return True
    if ("-" in a or "-" in b) and (one := _rate_range(a)) and (other := _rate_range(b)):
        # a range of rates ("every three or four days") meets a rate within it or a range it overlaps
        return one[0] * (1 - TOLERANCE) <= other[1] and other[0] * (1 - TOLERANCE) <= one[1]
    if a.startswith("age ") != b.startswith("age "):
        a, b = a.removeprefix("age "), b.removeprefix("age ")
    for few, said in ((a, b), (b, a)):
        if (vague := _VAGUE_RATE.fullmatch(few)) and (rate := _AMOUNT.fullmatch(said)) and rate.group(2) == "/day":
            per_day = float(rate.group(1))
            days = DAYS[vague.group(1) or vague.group(2)]
            low, high = (2 / days, 5 / days) if vague.group(1) else (1 / (5 * days), 1 / (2 * days))
            return low * (1 - TOLERANCE) <= per_day <= high * (1 + TOLERANCE)
        unit = few.removeprefix("few ")
        amount = _AMOUNT.fullmatch(said)
        if few.startswith("few ") and unit in DAYS and amount and amount.group(2) == " day":
            return 2 * DAYS[unit] <= float(amount.group(1)) <= 5 * DAYS[unit]
    first, second = _AMOUNT.fullmatch(a), _AMOUNT.fullmatch(b)
    if first is None or second is None or first.group(2) != second.group(2):
        return False
    x, y = float(first.group(1)), float(second.group(1))
    return abs(x - y) <= TOLERANCE * max(x, y)


_WHOLE_SPAN = re.compile(rf"(\d+) ({_UNIT})")


def counted_apart(a: frozenset[str], b: frozenset[str]) -> bool:
    """Spans both sides count in the same unit, in whole numbers none of which they share: "at 41 weeks" and "at
    37 weeks" are apart, though within a tenth of each other. Labels as read, before :func:`in_days`; the tenth is
    for one amount said in two units ("two months" / "eight weeks"), not for two counts of one unit."""

    def counts(labels: frozenset[str]) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for label in labels:
            if match := _WHOLE_SPAN.fullmatch(label):
                found.setdefault(match.group(2), set()).add(match.group(1))
        return found

    ours, theirs = counts(a), counts(b)
    return any(unit in theirs and not (numbers & theirs[unit]) for unit, numbers in ours.items())


def times_conflict(a: frozenset[str], b: frozenset[str]) -> bool:
    """Both sides give times and neither side's are all among the other's (amounts compared by
    :func:`same_time`)."""

    def within(x: frozenset[str], y: frozenset[str]) -> bool:
        return all(any(same_time(t, u) for u in y) for t in x)

    return bool(a) and bool(b) and not (within(a, b) or within(b, a))


__all__ = ["DAYS", "TOLERANCE", "counted_apart", "in_days", "same_time", "times_conflict"]
