"""Who the simulated patient is: Big Five with one trait high, a literacy level, and the case's intent and goal.

The definitions are data (``data/persona.yaml``, bedside's wording of the paper's Tables 3-6). A persona
*instance* is (case, dominant trait, literacy): the paper runs the full 5 × 2 cross for every case. Intent and
goal belong to the case, not the persona; they reach the patient as pseudo-facts (their definition sentence put
first in the fact list), the intent while it answers stages 1-3 and the goal from Decision Making on, as the
reference code does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

PERSONA_DATA = Path(__file__).parent / "data" / "persona.yaml"
TRAITS = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
LITERACY = ("basic", "advanced")


@lru_cache(maxsize=1)
def definitions() -> Mapping[str, Any]:
    with PERSONA_DATA.open(encoding="utf-8") as handle:
        data: Mapping[str, Any] = yaml.safe_load(handle)
    return data


def intents() -> Mapping[str, Mapping[str, str]]:
    return definitions()["intents"]  # type: ignore[no-any-return]


def goals() -> Mapping[str, Mapping[str, str]]:
    return definitions()["goals"]  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Persona:
    """One trait HIGH, the other four LOW, and a literacy level."""

    trait: str
    literacy: str

    def __post_init__(self) -> None:
        if self.trait not in TRAITS:
            raise ValueError(f"unknown trait {self.trait!r}; choose from {', '.join(TRAITS)}")
        if self.literacy not in LITERACY:
            raise ValueError(f"unknown literacy {self.literacy!r}; choose from {', '.join(LITERACY)}")

    @property
    def id(self) -> str:
        return f"{self.trait}-{self.literacy}"

    def levels(self) -> dict[str, str]:
        """The HIGH/LOW vector every patient prompt receives."""
        return {trait: "HIGH" if trait == self.trait else "LOW" for trait in TRAITS}

    def traits_text(self) -> list[dict[str, str]]:
        data = definitions()["traits"]
        return [
            {"title": data[t]["title"], "level": level, "high": data[t]["high"], "low": data[t]["low"]}
            for t, level in self.levels().items()
        ]

    def literacy_bullets(self) -> list[str]:
        return list(definitions()["literacy"][self.literacy]["bullets"])

    def strata(self) -> dict[str, str]:
        return {"trait": self.trait, "literacy": self.literacy}

    @classmethod
    def parse(cls, text: str) -> Persona:
        trait, _, literacy = text.partition("-")
        return cls(trait.strip().lower(), literacy.strip().lower())


def persona_cross() -> list[Persona]:
    """The paper's full cross: every trait high, at every literacy level (10 per case)."""
    return [Persona(trait, literacy) for trait in TRAITS for literacy in LITERACY]


def select_personas(option: str | Sequence[str] | None) -> list[Persona]:
    """``all`` (default, the cross) or a list of ``trait-literacy`` ids, e.g. ``[neuroticism-basic]``."""
    if option is None or option == "all":
        return persona_cross()
    names = [option] if isinstance(option, str) else list(option)
    return [Persona.parse(name) for name in names]
