"""One rounding rule for every figure bedside prints: half up, after float noise is taken off.

The report and ``compare`` printed the same mean as 0.687 and 0.688 (issue 46): the two computed it in a
different order, one landed a hair under 0.6875 and one on it, and ``format`` rounds the binary value it gets
(half to even on exact ties). Here a value is first rounded to 9 decimals (far below any printed digit, far above
float noise), then rounded half up, so one number prints one way wherever it appears.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal


def rounded(value: float, places: int = 3) -> str:
    """``value`` with ``places`` decimals, half up (``rounded(0.6875) == "0.688"``, ``rounded(0.68749999999)`` too);
    signed values keep their sign, and ``-0.000`` prints as ``0.000``."""
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    exact = Decimal(repr(round(value, 9))).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    text = f"{exact:.{places}f}"
    return text[1:] if text.startswith("-") and not exact else text


def signed(value: float, places: int = 3) -> str:
    """:func:`rounded` with a sign always shown (a difference: ``+0.012``)."""
    text = rounded(value, places)
    return text if text.startswith("-") else f"+{text}"


__all__ = ["rounded", "signed"]
