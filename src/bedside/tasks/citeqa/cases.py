"""A case: the patient's question, the clinician's rewrite, the numbered note sentences and their key."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Relevance = Literal["essential", "supplementary", "not-relevant"]
RELEVANCE_LABELS: tuple[Relevance, ...] = ("essential", "supplementary", "not-relevant")


class NoteSentence(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    text: str
    paragraph_id: str | None = None


_CITATION = re.compile(r"\|([\d,\s]+)\|")
"""A citation as the submission format writes it: ``|1,3|`` after a statement."""


class Phrase(BaseModel):
    """A span of the narrative a clinician marked as the patient's actual question."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    start: int = Field(ge=0, description="character offset of the phrase in the narrative")
    text: str


class Case(BaseModel):
    """One question with its evidence.

    ``sentences`` may be empty when a file carries only the questions (the public ArchEHR-QA dev XML holds the
    note sentences behind PhysioNet credentials); such a case can be scored for factuality from its key but not
    answered, and not scored for relevance. ``relevance`` is the key: a label for every sentence, when known.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    narrative: str
    phrases: list[Phrase] = Field(default_factory=list)
    clinician_question: str
    sentences: list[NoteSentence] = Field(default_factory=list)
    relevance: dict[str, Relevance] | None = None
    reference_answer: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Case:
        ids = [s.id for s in self.sentences]
        if len(set(ids)) != len(ids):
            raise ValueError(f"case {self.id}: sentence ids repeat")
        # A phrase is scored and shown by its offset; one that does not match the narrative would quietly mark
        # the wrong words, so it is an error naming the phrase.
        for phrase in self.phrases:
            found = self.narrative[phrase.start : phrase.start + len(phrase.text)]
            if found != phrase.text:
                raise ValueError(
                    f"case {self.id}: phrase {phrase.id} says {_short(phrase.text)} at character {phrase.start}, "
                    f"but the narrative has {_short(found)} there"
                )
        if self.relevance is not None and self.sentences:
            unknown = sorted(set(self.relevance) - set(ids), key=id_order)
            if unknown:
                raise ValueError(f"case {self.id}: the key labels sentences the case does not have: {unknown}")
            unlabelled = [i for i in ids if i not in self.relevance]
            if unlabelled:  # the key is a label for every sentence: a gap would score as "not relevant"
                raise ValueError(f"case {self.id}: the key labels no relevance for sentence(s) {unlabelled}")
        if not self.id.strip():  # a blank clinician question is allowed: the released test cases have none
            raise ValueError("a case id must not be blank")
        blank = [s.id for s in self.sentences if not s.text.strip()]
        if blank:
            raise ValueError(f"case {self.id}: sentence(s) {blank} have no text")
        if self.reference_answer and self.sentences:
            cited = {c.strip() for group in _CITATION.findall(self.reference_answer) for c in group.split(",")}
            missing = sorted(cited - set(ids) - {""}, key=id_order)
            if missing:
                raise ValueError(f"case {self.id}: the reference answer cites sentence(s) the case lacks: {missing}")
        return self

    @property
    def sentence_ids(self) -> list[str]:
        return [s.id for s in self.sentences]

    def text_of(self, sentence_id: str) -> str:
        for sentence in self.sentences:
            if sentence.id == sentence_id:
                return sentence.text
        raise KeyError(f"case {self.id} has no sentence {sentence_id!r}")

    def labelled(self, *labels: Relevance) -> list[str]:
        """Ids of the sentences the key gives one of ``labels``, in note order."""
        if self.relevance is None:
            raise ValueError(f"case {self.id} has no key (sentence relevance labels)")
        return sorted((i for i, label in self.relevance.items() if label in labels), key=id_order)

    @property
    def patient_question(self) -> str:
        """The marked question phrases, or the whole narrative when none are marked."""
        return " ".join(p.text for p in self.phrases) or self.narrative


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def id_order(sentence_id: str) -> tuple[int, str]:
    """Numeric ids sort as numbers ("2" before "10"); anything else after them, alphabetically."""
    return (int(sentence_id), "") if sentence_id.isdigit() else (1 << 30, sentence_id)
