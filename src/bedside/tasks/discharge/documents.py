"""After the conversation: the AHRQ-style checklist and the personalised discharge summary, from the doctor model.

Order as in the reference code: the checklist first, then the summary conditioned on the checklist and the
dialogue. Inputs as the paper states them (§2.3, "based on both the original note and the full interaction
history"); ``documents_from: dialogue`` gives the reference code's dialogue-only variant.

The checklist schema is bedside's by default, built from the AHRQ discharge guide so that it covers the six content
areas the paper says it organises: diagnosis, tests and treatments, warning signs, medicines (name, dose, reason,
how to take, time slots), activities and diet, appointments and pending tests. ``checklist_schema: reference``
asks for the reference code's own schema instead (:class:`ReferenceChecklist`: diagnosis, exercises, food, what
to avoid, and medicines keyed by free names in morning/afternoon/evening buckets; no warning signs, tests,
follow-up, bedtime or as-needed slots). Scored, it is converted to bedside's shape with each medicine merged
across its time buckets by drug name, so AHRQ ACC compares like with like and the areas that schema cannot hold
count as misses: which is what using it costs. The summary has the five discharge sections of
the paper's Fig. 21. Both are validated JSON; a malformed answer is sent back with the reason and re-asked (at
most ``max_repairs`` times), then the step fails with its cause (``StructuredOutputError``), never a default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bedside.llm.types import ChatMessage, GenerationSettings
from bedside.prompts import render_chat
from bedside.runs.task import SampleContext, Turn
from bedside.tasks.discharge.cases import DischargeCase, DischargeStructure, DischargeSummary, TimeSlot, drug_key

DocumentsFrom = Literal["note_and_dialogue", "dialogue"]
_TEXT = 400  # caps on free text keep a grammar-constrained small model from running out of tokens in a string


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChecklistMedicine(_Doc):
    name: str = Field(min_length=1, max_length=120)
    dose: str = Field(max_length=120)
    reason: str = Field(max_length=_TEXT)
    how_to_take: str = Field(max_length=_TEXT)
    times: list[TimeSlot] = Field(max_length=5)


class Appointment(_Doc):
    with_whom: str = Field(max_length=200)
    when: str = Field(max_length=200)
    reason: str = Field(max_length=_TEXT)


class Checklist(_Doc):
    """The patient's take-home checklist, in the AHRQ guide's areas."""

    diagnosis: str = Field(min_length=1, max_length=_TEXT)
    tests_and_treatments: list[str] = Field(max_length=20)
    warning_signs: list[str] = Field(max_length=20)
    medicines: list[ChecklistMedicine] = Field(max_length=30)
    activities: list[str] = Field(max_length=20)
    diet: list[str] = Field(max_length=20)
    appointments: list[Appointment] = Field(max_length=10)
    pending_tests: list[str] = Field(max_length=10)


ChecklistSchema = Literal["bedside", "reference"]


class ReferenceMedicine(_Doc):
    name: str = Field(alias="Name", min_length=1, max_length=120)
    dosage: str = Field(alias="Dosage", max_length=120)
    reason: str = Field(alias="Reason", max_length=_TEXT)
    how_to_take: str = Field(alias="How to take", max_length=_TEXT)


class ReferenceMedicines(_Doc):
    morning: dict[str, ReferenceMedicine] = Field(alias="Morning", max_length=15)
    afternoon: dict[str, ReferenceMedicine] = Field(alias="Afternoon", max_length=15)
    evening: dict[str, ReferenceMedicine] = Field(alias="Evening", max_length=15)


class ReferenceChecklist(_Doc):
    """The reference code's checklist schema, key names as it spells them ("Activites" included)."""

    diagnosis: str = Field(alias="Diagnosis", min_length=1, max_length=_TEXT)
    exercises: str = Field(alias="Exercises", max_length=_TEXT)
    food: str = Field(alias="Food", max_length=_TEXT)
    avoid: str = Field(alias="Activites or Food to Avoid", max_length=_TEXT)
    medicines: ReferenceMedicines = Field(alias="Medicines")

    def to_checklist(self) -> Checklist:
        """Bedside's shape for scoring: one medicine per drug name with every bucket it appears in."""
        merged: dict[str, ChecklistMedicine] = {}
        buckets: tuple[tuple[TimeSlot, dict[str, ReferenceMedicine]], ...] = (
            ("morning", self.medicines.morning),
            ("afternoon", self.medicines.afternoon),
            ("evening", self.medicines.evening),
        )
        for slot, medicines in buckets:
            for medicine in medicines.values():
                key = drug_key(medicine.name)
                found = merged.get(key)
                if found is None:
                    merged[key] = ChecklistMedicine(
                        name=medicine.name,
                        dose=medicine.dosage,
                        reason=medicine.reason,
                        how_to_take=medicine.how_to_take,
                        times=[slot],
                    )
                elif slot not in found.times:
                    merged[key] = found.model_copy(update={"times": [*found.times, slot]})
        return Checklist(
            diagnosis=self.diagnosis,
            tests_and_treatments=[],
            warning_signs=[],
            medicines=list(merged.values()),
            activities=[text for text in (self.exercises, f"Avoid: {self.avoid}" if self.avoid else "") if text],
            diet=[self.food] if self.food else [],
            appointments=[],
            pending_tests=[],
        )


def reference_checklist(structure: DischargeStructure) -> Checklist:
    """The checklist a doctor who taught everything in the case could write: bedside's reference for AHRQ ACC
    (the paper's "ground truth checklist" is not described; bedside derives it from the case, per case)."""
    plan = structure.diagnoses_and_medications
    follow = structure.follow_up_and_return
    return Checklist(
        diagnosis="; ".join(plan.primary_diagnoses),
        tests_and_treatments=[f"{t.name}: {t.result}" for t in structure.tests_and_treatments.tests]
        + list(structure.tests_and_treatments.treatments),
        warning_signs=list(follow.return_precautions),
        medicines=[
            ChecklistMedicine(
                name=m.name, dose=m.dose, reason=m.reason, how_to_take=m.instructions or m.frequency, times=m.times
            )
            for m in plan.medications
        ],
        activities=list(follow.activity),
        diet=list(follow.diet),
        appointments=[Appointment(with_whom=f.with_whom, when=f.when, reason=f.reason) for f in follow.follow_up],
        pending_tests=list(follow.pending_results),
    )


def render_dialogue(transcript: Sequence[Turn]) -> str:
    """``Doctor:``/``Patient:`` lines, no stage labels, control tokens already stripped: what judges, documents
    and the exam see."""
    return "\n".join(f"{'Doctor' if turn.role == 'clinician' else 'Patient'}: {turn.content}" for turn in transcript)


DOCUMENT_MAX_TOKENS = 1500
"""Documents are long JSON: a run's ``max_tokens`` for the system role is usually set for conversation turns (the
reference code's 200), which would cut every checklist mid-string. The documents get this many unless the
``documents_max_tokens`` option says otherwise."""


def document_settings(context: SampleContext, max_tokens: int | None) -> GenerationSettings:
    base = context.settings.get("system") or GenerationSettings()
    return base.model_copy(update={"max_tokens": max_tokens or DOCUMENT_MAX_TOKENS})


def _document_prompt(
    template: str, case: DischargeCase, dialogue: str, documents_from: DocumentsFrom, **extra: object
) -> list[ChatMessage]:
    note = case.note if documents_from == "note_and_dialogue" else None
    return render_chat(template, note=note, dialogue=dialogue, **extra)


async def write_checklist(
    case: DischargeCase,
    transcript: Sequence[Turn],
    context: SampleContext,
    *,
    documents_from: DocumentsFrom = "note_and_dialogue",
    max_tokens: int | None = None,
    max_repairs: int = 2,
    schema: ChecklistSchema = "bedside",
) -> tuple[Checklist, ReferenceChecklist | None]:
    """The checklist in bedside's shape, and the answer as written when it was asked in the reference schema."""
    template = "discharge/checklist_reference.j2" if schema == "reference" else "discharge/checklist.j2"
    messages = _document_prompt(template, case, render_dialogue(transcript), documents_from)
    output_type: type[Checklist | ReferenceChecklist] = ReferenceChecklist if schema == "reference" else Checklist
    result = await context.generate_structured(
        "system", messages, output_type, settings=document_settings(context, max_tokens), max_repairs=max_repairs
    )
    if isinstance(result.value, ReferenceChecklist):
        return result.value.to_checklist(), result.value
    return result.value, None


async def write_summary(
    case: DischargeCase,
    transcript: Sequence[Turn],
    checklist: Checklist | None,
    context: SampleContext,
    *,
    documents_from: DocumentsFrom = "note_and_dialogue",
    max_tokens: int | None = None,
    max_repairs: int = 2,
) -> DischargeSummary:
    messages = _document_prompt(
        "discharge/summary.j2",
        case,
        render_dialogue(transcript),
        documents_from,
        checklist=checklist.model_dump_json(indent=1) if checklist else None,
    )
    result = await context.generate_structured(
        "system", messages, DischargeSummary, settings=document_settings(context, max_tokens), max_repairs=max_repairs
    )
    return result.value
