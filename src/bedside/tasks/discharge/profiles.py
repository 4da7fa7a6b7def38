"""Patient profiles: health literacy, education and emotional style (§2.1), and how runs combine them.

The paper's runs set exactly one dimension at a time and leave the other two unspecified (2 + 3 + 3 = 8
conditions; the reference code's ``--patient_bias``), and compare levels only within a dimension. bedside offers
that (``one_at_a_time``, the default), the full 2 × 3 × 3 grid (``grid``), no profile (``none``), or an explicit
list. The text each level adds to the patient's prompt is the template ``discharge/profile.j2``: the reference
code only *names* an emotional style, bedside describes how it shows (override the template to compare).

The doctor is never told the profile (the paper expects it to infer the patient's needs from the dialogue).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

DIMENSIONS: dict[str, tuple[str, ...]] = {
    "literacy": ("low", "high"),
    "education": ("less_than_high_school", "high_school", "bachelor"),
    "emotion": ("neutral", "anxious", "deflective"),
}
"""Levels in the paper's order: HL1/HL2, Edu1–Edu3, and the three emotional styles."""

PAPER_LABELS = {
    ("literacy", "low"): "HL1",
    ("literacy", "high"): "HL2",
    ("education", "less_than_high_school"): "Edu1",
    ("education", "high_school"): "Edu2",
    ("education", "bachelor"): "Edu3",
    ("emotion", "neutral"): "neutral",
    ("emotion", "anxious"): "anxious",
    ("emotion", "deflective"): "deflective",
}

SENSITIVITY_PAIRS: tuple[tuple[str, str, str], ...] = (
    ("literacy", "high", "low"),
    ("education", "high_school", "less_than_high_school"),
    ("education", "bachelor", "less_than_high_school"),
    ("education", "bachelor", "high_school"),
    ("emotion", "anxious", "deflective"),
    ("emotion", "neutral", "deflective"),
    ("emotion", "anxious", "neutral"),
)
"""The paper's comparisons (§5.1–5.3, Figs. 4–6) as (dimension, level, baseline level)."""

Profile = dict[str, str]


class ProfileError(ValueError):
    """A profile option names an unknown dimension or level."""


def profile_id(profile: Mapping[str, str]) -> str:
    return ",".join(f"{d}={profile[d]}" for d in DIMENSIONS if d in profile) or "none"


def check_profile(profile: Mapping[str, Any], where: str = "profile") -> Profile:
    out: Profile = {}
    for dimension, level in profile.items():
        if dimension not in DIMENSIONS:
            raise ProfileError(f"{where}: unknown dimension {dimension!r}; dimensions are {', '.join(DIMENSIONS)}")
        if level not in DIMENSIONS[dimension]:
            raise ProfileError(
                f"{where}: {dimension} has no level {level!r}; levels are {', '.join(DIMENSIONS[dimension])}"
            )
        out[dimension] = str(level)
    return out


def profiles(spec: str | Sequence[Mapping[str, Any]] = "one_at_a_time") -> list[Profile]:
    """The profile conditions of a run: ``one_at_a_time`` (8), ``grid`` (18), ``none`` (1, no profile), a single
    dimension's name (its levels), or an explicit list of ``{dimension: level}`` mappings."""
    if isinstance(spec, str):
        if spec == "one_at_a_time":
            return [{d: level} for d, levels in DIMENSIONS.items() for level in levels]
        if spec == "grid":
            return [dict(zip(DIMENSIONS, combo, strict=True)) for combo in itertools.product(*DIMENSIONS.values())]
        if spec == "none":
            return [{}]
        if spec in DIMENSIONS:
            return [{spec: level} for level in DIMENSIONS[spec]]
        raise ProfileError(
            f"profiles: {spec!r} is not one of one_at_a_time, grid, none, {', '.join(DIMENSIONS)} or a list"
        )
    return [check_profile(p, f"profiles[{i}]") for i, p in enumerate(spec)]


def strata(profile: Mapping[str, str]) -> dict[str, str]:
    """Report strata: every dimension, ``unspecified`` where the profile leaves it open."""
    return {d: profile.get(d, "unspecified") for d in DIMENSIONS} | {"profile": profile_id(profile)}
