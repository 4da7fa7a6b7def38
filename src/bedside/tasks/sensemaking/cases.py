"""A sensemaking case: the patient's atomic facts, the vital facts, a diagnosis label and the case's intent/goal.

A case may arrive as a vignette (facts are then decomposed by the ``helper`` role, see :mod:`.prepare`) or with
its facts given (MediQ, bedside JSONL). Vital facts (temperature, blood pressure, pulse, respiratory rate) are
kept apart: as in the reference, they seed the *sensemaker's* memory and the patient never states them.

The diagnosis label carries its provenance: ``given`` (from the data) or ``derived`` (read off the vignette by an
LLM, which the paper does too without publishing how); a derived label is marked unreviewed until a person says
otherwise, and reports count how many scores rest on unreviewed labels.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bedside.tasks.sensemaking.personas import goals, intents


class Diagnosis(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1)
    provenance: Literal["given", "derived"] = "given"
    reviewed: bool = True
    note: str = ""


class SensemakingCase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    vignette: str | None = None
    facts: list[str] | None = None  # the patient's facts, vitals excluded
    vital_facts: list[str] | None = None  # None: not split yet
    diagnosis: Diagnosis | None = None
    intent: str | None = None
    goal: str | None = None
    source: str = "bedside"

    @model_validator(mode="after")
    def _has_material(self) -> SensemakingCase:
        if not self.vignette and not self.facts:
            raise ValueError("a case needs a vignette or a list of facts")
        return self

    @field_validator("facts")
    @classmethod
    def _facts_not_empty(cls, facts: list[str] | None) -> list[str] | None:
        if facts is not None and any(not f.strip() for f in facts):
            raise ValueError("a fact must not be empty")
        return facts

    @field_validator("intent")
    @classmethod
    def _known_intent(cls, value: str | None) -> str | None:
        if value is not None and value not in intents():
            raise ValueError(f"unknown intent {value!r}; choose from {', '.join(intents())}")
        return value

    @field_validator("goal")
    @classmethod
    def _known_goal(cls, value: str | None) -> str | None:
        if value is not None and value not in goals():
            raise ValueError(f"unknown goal {value!r}; choose from {', '.join(goals())}")
        return value


# A vital fact states one of the four vital signs the paper's decomposition separates, with a value.
_VITAL = re.compile(
    r"\b(temperature|temp\b|°\s*[CF]\b|fever of \d|blood pressure|\bBP\b|mm\s*Hg|pulse|heart rate|\bbpm\b|"
    r"beats per minute|respirat\w* rate|respirations|breaths per minute|/min\b)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d")


def is_vital_fact(fact: str) -> bool:
    """The rule behind ``vitals: rules``: a fact naming temperature, blood pressure, pulse or respiratory rate
    with a number. A fact that mixes a vital sign with something else stays with the patient (losing a symptom
    is worse than the patient mentioning a pulse)."""
    if not (_VITAL.search(fact) and _NUMBER.search(fact)):
        return False
    others = re.sub(r"[^a-z]+", " ", _VITAL.sub(" ", fact.lower())).split()
    vital_words = {
        "his",
        "her",
        "their",
        "the",
        "patient",
        "is",
        "was",
        "of",
        "and",
        "a",
        "at",
        "rate",
        "pressure",
        "blood",
        "heart",
        "mm",
        "hg",
        "c",
        "f",
        "min",
        "per",
        "minute",
        "beats",
        "breaths",
        "s",
        "he",
        "she",
        "has",
        "vital",
        "signs",
        "show",
        "shows",
        "include",
        "are",
        "within",
        "normal",
        "limits",
        "on",
        "examination",
        "admission",
        "presentation",
        "temperature",
        "pulse",
        "respirations",
    }
    return all(word in vital_words for word in others)


def split_vitals(facts: list[str]) -> tuple[list[str], list[str]]:
    """(patient facts, vital facts) by :func:`is_vital_fact`."""
    patient = [f for f in facts if not is_vital_fact(f)]
    vitals = [f for f in facts if is_vital_fact(f)]
    return patient, vitals
