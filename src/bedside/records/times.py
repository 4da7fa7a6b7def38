"""Reading the time formats record sources use onto one clock: timezone-aware, in UTC.

This is bedside's one time model for records, cases and command-line times (see :mod:`bedside.records.model`):
a time that states an offset (``Z``, ``+02:00``) is converted to UTC; a time that states none is *taken to be*
UTC, so its wall-clock digits are kept as written. Every reader goes through :func:`utc`, which is why a time
from a FHIR bundle, a MedAlign file, a bedside JSONL record and a ``--at`` option can always be compared.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime

from bedside.inputs import checked_time

_PARTIAL_DATE = re.compile(r"^(\d{4})(?:-(\d{2}))?$")

EARLIEST = datetime.min.replace(tzinfo=UTC)
"""The earliest time on bedside's clock: where an undated item sorts."""

MEDALIGN_FORMATS = ("%m/%d/%Y %I:%M %p", "%m/%d/%Y %H:%M", "%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %H:%M:%S", "%m/%d/%Y")


def utc(value: datetime) -> datetime:
    """``value`` on bedside's clock: converted to UTC when it carries an offset, marked UTC when it carries none.

    Converting past year 1 or 9999 raises ``OverflowError``; readers turn that into an error naming the field.
    """
    return value.astimezone(UTC) if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _in_range(parse: Callable[[str], datetime]) -> Callable[[str], datetime]:
    """``parse`` whose every failure is a ``ValueError`` (an :class:`~bedside.inputs.InputError`): a shift to UTC
    past year 1 or 9999 raised ``OverflowError``, and years outside the accepted range overflowed later, in chart
    arithmetic, far from the file (issue 21)."""

    def wrapped(value: str) -> datetime:
        return checked_time(parse, value)

    wrapped.__doc__ = parse.__doc__
    wrapped.__name__ = parse.__name__
    return wrapped


@_in_range
def parse_fhir_time(value: str) -> datetime:
    """A FHIR ``date``, ``dateTime`` or ``instant``; partial dates (``2019``, ``2019-07``) start their period."""
    text = value.strip()
    partial = _PARTIAL_DATE.match(text)
    if partial:
        return datetime(int(partial[1]), int(partial[2] or 1), 1, tzinfo=UTC)
    return utc(datetime.fromisoformat(text))


def parse_fhir_date(value: str) -> date:
    return parse_fhir_time(value).date()


@_in_range
def parse_medalign_time(value: str) -> datetime:
    """MedAlign writes both ``10/08/2018 20:00`` and ``10/08/2018 08:00 PM`` (and ``9:00 PM``) in one file."""
    text = " ".join(value.split()).upper()
    for pattern in MEDALIGN_FORMATS:
        try:
            return utc(datetime.strptime(text, pattern))
        except ValueError:
            continue
    try:
        return utc(datetime.fromisoformat(value.strip()))
    except ValueError:
        raise ValueError(
            f"{value!r} is not a time (expected e.g. '10/08/2018 20:00' or '10/08/2018 08:00 PM')"
        ) from None


@_in_range
def parse_user_time(value: str) -> datetime:
    """A time given on the command line or in a config: ISO 8601, date or date-time, with or without offset
    (none: UTC)."""
    try:
        return utc(datetime.fromisoformat(value.strip()))
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO 8601 date or time (e.g. 2024-03-01 or 2024-03-01T09:30)") from None
