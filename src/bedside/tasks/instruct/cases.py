"""An instruction case: a clinician's question about one patient's record, with references and labels.

Fields follow MedAlign's collection form (Appendix C) and release: the instruction, the parts of the record the
clinician would use, the clinical context, whether it applies to patients generally, the patient
characteristics it needs (the matching query is built from these), the submitter's specialty, the matched
record, and up to three clinician reference answers. Taxonomy labels are one primary subcategory (breakdowns use
it) plus optional extra ones; the category follows from the primary subcategory.

``answer_facts`` belongs to bedside's synthetic cases only: facts a correct answer must state (each a list of
acceptable spellings), so a system's answer is checkable without a clinician. ``source`` names where the case
came from (``bedside-synthetic``, ``medalign-sample``, ``medalign-v1.3``, ...); MedAlign-sourced cases carry the
release's terms of use (see :mod:`.endpoint`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator

from bedside.tasks.instruct.taxonomy import resolve_category, resolve_subcategory

RecordView = Literal["paper", "timeline"]
"""How a record is shown to a model: ``paper`` cuts the record's raw text at a token boundary keeping the most
recent tokens (the raw file for XML records; the rendered timeline otherwise), as MedAlign did; ``timeline``
re-renders the record with bedside and cuts between events (well-formed XML, different tokens)."""


class Reference(BaseModel):
    model_config = ConfigDict(extra="forbid")

    annotator: str = "Annotator_1"
    text: str = Field(min_length=1)


class Instruction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    category: str | None = None
    subcategory: str | None = None
    extra_subcategories: list[str] = Field(default_factory=list)
    general: StrictBool | None = None  # "applicable to patients generally" (only these were matched to records)
    ehr_parts: str = ""
    clinical_context: str = ""
    patient_characteristics: str = ""
    submitter_specialty: str | None = None
    person_id: str | None = None
    record: str | None = None  # path of the record file (relative paths are relative to the dataset file)
    references: list[Reference] = Field(default_factory=list)
    answer_facts: list[list[str]] = Field(default_factory=list)
    source: str = "bedside"

    @model_validator(mode="after")
    def _canonical_labels(self) -> Instruction:
        """Labels in the taxonomy's own spelling; the category follows the primary subcategory."""
        if self.subcategory is not None:
            sub = resolve_subcategory(self.subcategory)
            self.subcategory = sub.name
            if self.category is not None and resolve_category(self.category).name != sub.category:
                raise ValueError(
                    f"subcategory {sub.name!r} belongs to {sub.category!r}, not to category {self.category!r}"
                )
            self.category = sub.category
        elif self.category is not None:
            self.category = resolve_category(self.category).name
        self.extra_subcategories = [resolve_subcategory(s).name for s in self.extra_subcategories]
        if any(not alternatives or not all(a.strip() for a in alternatives) for alternatives in self.answer_facts):
            raise ValueError("every answer fact needs at least one non-empty spelling")
        return self

    @property
    def primary_reference(self) -> Reference | None:
        """The Annotator_1 answer when there is one (MedAlign's metrics used it), else the first."""
        return next((r for r in self.references if r.annotator == "Annotator_1"), None) or (
            self.references[0] if self.references else None
        )

    @property
    def medalign_sourced(self) -> bool:
        return self.source.lower().startswith("medalign")

    def matching_query(self) -> str:
        """Instruction + patient characteristics + clinical context, as MedAlign's BM25 query was built."""
        return " ".join(part for part in (self.question, self.patient_characteristics, self.clinical_context) if part)


def fact_found(answer: str, alternatives: list[str]) -> bool:
    text = " ".join(answer.lower().split())
    return any(" ".join(a.lower().split()) in text for a in alternatives)


def facts_recall(instruction: Instruction, answer: str) -> float | None:
    """Share of the instruction's answer facts the answer states (None when the case has no facts)."""
    if not instruction.answer_facts:
        return None
    return sum(fact_found(answer, f) for f in instruction.answer_facts) / len(instruction.answer_facts)
