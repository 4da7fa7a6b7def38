"""One rounding rule wherever a figure is printed (issue 46: the report said 0.687 and compare 0.688)."""

from __future__ import annotations

from bedside.stats.rounding import rounded, signed


def test_half_up_after_float_noise_is_taken_off() -> None:
    assert rounded(0.6875) == "0.688"
    assert rounded(0.68749999999) == "0.688"  # the same mean computed in another order
    assert rounded(0.6865) == "0.687"  # format() gives 0.686 here (the binary value is a hair below)
    assert rounded(0.68744) == "0.687"
    assert rounded(-0.0001) == "0.000"
    assert signed(0.0123) == "+0.012"
    assert signed(-0.0126) == "-0.013"
    assert rounded(2.5, 0) == "3"
    assert rounded(float("nan")) == "nan"
