"""A discharge case: the note, its structure (what the doctor sees), the patient's masked view, the exam and the
references the documents are scored against.

The structure follows the paper's four groups (§2.2): history and clinical course; in-hospital tests and
treatments; discharge diagnoses and the medication plan; follow-up and return-to-hospital instructions.

What each agent sees is decided here and nowhere else:

- the doctor: the whole structure and the note (the template ``discharge/doctor.j2``), or the reference code's
  cut note (:meth:`DischargeCase.cut_note`) under the ``reference`` schedule;
- the patient: :meth:`DischargeCase.patient_view`, fixed per case and the same for every profile (the paper masks
  "partially" without saying what; bedside follows the reference code: demographics, history, symptoms and the
  diagnosis name, nothing about medicines, tests, instructions or follow-up);
- the exam-taker: the dialogue or the summary only, never the case (see :mod:`.exam`).
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

TimeSlot = Literal["morning", "afternoon", "evening", "bedtime", "as_needed"]
"""When a medicine is taken: the AHRQ guide's day slots plus bedtime and as-needed (the reference code has only
morning/afternoon/evening, so a twice-daily drug appears twice there and a PRN drug has no slot)."""

Category = Literal[
    "diagnosis_in_stay",
    "tests_treatments_in_stay",
    "medication_in_stay",
    "diagnosis_at_discharge",
    "care_after_discharge",
    "medication_after_discharge",
    "return_precautions",
]
"""Exam question categories: the six of the paper's annotation guideline (Fig. 2), plus ``return_precautions``,
bedside's, because the guideline has none for the return-to-hospital stage the conversation teaches."""

CATEGORIES: tuple[Category, ...] = get_args(Category)

_DRUG_WORD = re.compile(r"[a-z]+")


def drug_key(name: str) -> str:
    """A medicine's name reduced to what aligns it with another's: the first word, lower case, letters only.

    "Metoprolol succinate ER" and "metoprolol" share the key ``metoprolol``; brand names are not resolved. It lives
    with the case data because the documents (merging the reference checklist's time buckets) and the scoring
    (aligning predicted and reference medicines, drug coverage) must align names the same way.
    """
    words = _DRUG_WORD.findall(name.lower())
    return words[0] if words else ""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Medication(_Frozen):
    name: str = Field(min_length=1, description="generic name")
    dose: str = Field(min_length=1, description="amount per dose, e.g. '25 mg'")
    frequency: str = Field(min_length=1, description="e.g. 'twice a day', 'every 6 hours as needed'")
    times: list[TimeSlot] = Field(min_length=1)
    reason: str = Field(min_length=1)
    instructions: str = ""
    status: Literal["new", "changed", "continued"] = "continued"


class TestResult(_Frozen):
    name: str = Field(min_length=1)
    result: str = Field(min_length=1)


class FollowUp(_Frozen):
    with_whom: str = Field(min_length=1)
    when: str = Field(min_length=1)
    reason: str = Field(min_length=1)


class HistoryAndCourse(_Frozen):
    chief_complaint: str = Field(min_length=1)
    history_of_present_illness: str = Field(min_length=1)
    past_medical_history: str = ""
    social_history: str = ""
    hospital_course: str = ""


class TestsAndTreatments(_Frozen):
    tests: list[TestResult] = Field(default_factory=list)
    treatments: list[str] = Field(default_factory=list, description="procedures and in-hospital therapy")


class DiagnosesAndMedications(_Frozen):
    primary_diagnoses: list[str] = Field(min_length=1)
    secondary_diagnoses: list[str] = Field(default_factory=list)
    medications: list[Medication] = Field(default_factory=list, description="the discharge medication plan")
    stopped_medications: list[str] = Field(default_factory=list)


class FollowUpAndReturn(_Frozen):
    follow_up: list[FollowUp] = Field(default_factory=list)
    return_precautions: list[str] = Field(default_factory=list, description="signs that should bring the patient back")
    activity: list[str] = Field(default_factory=list, description="post-discharge treatment: activity, wound care")
    diet: list[str] = Field(default_factory=list)
    pending_results: list[str] = Field(default_factory=list)


class DischargeStructure(_Frozen):
    """The note in the paper's four groups: the doctor's full view."""

    history_and_course: HistoryAndCourse
    tests_and_treatments: TestsAndTreatments
    diagnoses_and_medications: DiagnosesAndMedications
    follow_up_and_return: FollowUpAndReturn


SEXES = ("female", "male", "other", "unknown")
"""What ``demographics.sex`` may say (or nothing): the patient agent is told it ("Age 67, female"), so a typo
would reach the simulation as the patient's sex. "F" and "M", as MIMIC writes them, are read as female and male."""


class Demographics(_Frozen):
    age: int | None = Field(default=None, ge=0, le=120)
    sex: str = ""

    @field_validator("sex", mode="before")
    @classmethod
    def _known_sex(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        said = value.strip().lower()
        said = {"f": "female", "m": "male"}.get(said, said)
        if said and said not in SEXES:
            raise ValueError(f"{value!r} is not one of {', '.join(SEXES)} (or leave it empty)")
        return said


class Question(_Frozen):
    """A three-option question (Fig. 2): the answer, a close but wrong distractor, and an irrelevant option made
    of words that do appear in the note."""

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    distractor: str = Field(min_length=1)
    irrelevant: str = Field(min_length=1)
    category: Category

    @model_validator(mode="after")
    def _distinct(self) -> Question:
        options = [_norm(self.answer), _norm(self.distractor), _norm(self.irrelevant)]
        if len(set(options)) != 3:
            raise ValueError(f"question {self.id}: the three options must differ")
        return self


class DischargeDiagnosis(_Frozen):
    primary: str
    secondary: str = ""


class DischargeCondition(_Frozen):
    mental_status: str = ""
    level_of_consciousness: str = ""
    activity_status: str = ""


class DischargeSummary(_Frozen):
    """The five discharge sections of a MIMIC-style note (the paper's Fig. 21 shape)."""

    discharge_medications: str = Field(min_length=1)
    discharge_diagnosis: DischargeDiagnosis
    discharge_condition: DischargeCondition
    discharge_instructions: str = Field(min_length=1)
    followup_instructions: str = Field(min_length=1)

    def render(self) -> str:
        """Plain text for the metrics and judges: section headings, then their text."""
        diagnosis = self.discharge_diagnosis
        condition = self.discharge_condition
        parts = [
            ("Discharge Medications", self.discharge_medications),
            ("Discharge Diagnosis", f"Primary: {diagnosis.primary}\nSecondary: {diagnosis.secondary or 'none'}"),
            (
                "Discharge Condition",
                f"Mental status: {condition.mental_status}\nLevel of consciousness: "
                f"{condition.level_of_consciousness}\nActivity status: {condition.activity_status}",
            ),
            ("Discharge Instructions", self.discharge_instructions),
            ("Followup Instructions", self.followup_instructions),
        ]
        return "\n\n".join(f"{heading}:\n{text.strip()}" for heading, text in parts)


class PatientView(_Frozen):
    """What the simulated patient knows about its own stay (its memory): the masked copy of the case."""

    demographics: Demographics
    chief_complaint: str
    history: str
    past_medical_history: str
    social_history: str
    diagnosis: str

    def facts(self) -> tuple[str, ...]:
        """The view as statements, for the fidelity checker's idea of what the patient may say."""
        age = self.demographics.age
        candidates = (
            f"Age {age}, {self.demographics.sex}" if age else "",
            f"Came in because: {self.chief_complaint}",
            f"What happened: {self.history}",
            f"Earlier health problems: {self.past_medical_history}" if self.past_medical_history else "",
            f"Life at home: {self.social_history}" if self.social_history else "",
            f"Was told the diagnosis is: {self.diagnosis}",
        )
        return tuple(fact for fact in candidates if fact)


class DischargeCase(_Frozen):
    id: str = Field(min_length=1)
    demographics: Demographics = Demographics()
    note: str = Field(min_length=1, description="the discharge note as written")
    structure: DischargeStructure | None = None  # None until the note is parsed (see :mod:`.parse`)
    questions: list[Question] = Field(default_factory=list)
    reference_summary: DischargeSummary | None = None
    source: str = ""

    @model_validator(mode="after")
    def _unique_questions(self) -> DischargeCase:
        ids = [q.id for q in self.questions]
        if len(set(ids)) != len(ids):
            raise ValueError(f"case {self.id}: question ids repeat")
        return self

    def parsed(self) -> DischargeStructure:
        if self.structure is None:
            raise ValueError(f"case {self.id}: the note has not been parsed into its structure yet")
        return self.structure

    def patient_view(self) -> PatientView:
        structure = self.parsed()
        history = structure.history_and_course
        return PatientView(
            demographics=self.demographics,
            chief_complaint=history.chief_complaint,
            history=history.history_of_present_illness,
            past_medical_history=history.past_medical_history,
            social_history=history.social_history,
            diagnosis="; ".join(structure.diagnoses_and_medications.primary_diagnoses),
        )

    def cut_note(self) -> str:
        """The note up to its "Discharge Condition" section, as the reference code shows the doctor (it hides the
        condition at discharge, the instructions and the follow-up)."""
        found = _DISCHARGE_CONDITION.search(self.note)
        return self.note[: found.start()].rstrip() if found else self.note

    @property
    def drug_names(self) -> list[str]:
        return [m.name for m in self.parsed().diagnoses_and_medications.medications]


_DISCHARGE_CONDITION = re.compile(r"(?im)^\s*discharge condition\s*:")
_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.strip().lower())
