"""Discharge-specific measures: AHRQ checklist accuracy (``ahrq_acc[bedside]``) and drug coverage.

**AHRQ ACC.** The paper reports it (Table 1) without saying what the reference is or how accuracy is counted.
bedside's definition, per case:

- the reference is the checklist derived from the case (:func:`.documents.reference_checklist`): what a doctor
  who taught the whole plan would write;
- every reference item is one point: the diagnosis; each test or treatment; each warning sign; each activity
  or diet item; each appointment; each pending test; and, per reference medicine, four points (present, dose,
  times, reason);
- medicines are aligned by normalised generic name (lower case, letters only, matched on the first word, so
  "Metoprolol succinate ER" meets "metoprolol"); brand names are not resolved. A missing medicine loses all four
  of its points; its dose is right when the numbers in the two doses are the same (``25 mg`` = ``25mg``), its times
  when the sets of slots are equal;
- free-text items are judged: one judge call labels each as consistent or not with what the predicted
  checklist says in the matching area (an area the prediction leaves empty scores 0 without a call);
- accuracy = points / reference points. Extra predicted items do not count against it (they are listed).

**Drug coverage**: the share of the case's discharge medicines whose name the doctor said in the conversation
(matched on the first word of the generic name, case-insensitive). The paper motivates the uncapped medication
stage by "complete coverage of all prescribed drugs" but never checks it; bedside measures it rather than
enforcing it in the harness.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from bedside.prompts import render_chat
from bedside.runs.task import SampleContext, Turn
from bedside.tasks.discharge.cases import drug_key
from bedside.tasks.discharge.documents import Checklist, ChecklistMedicine

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def same_dose(a: str, b: str) -> bool:
    numbers_a = {float(n) for n in _NUMBER.findall(a)}
    return bool(numbers_a) and numbers_a == {float(n) for n in _NUMBER.findall(b)}


def drug_coverage(drugs: Sequence[str], transcript: Sequence[Turn]) -> float | None:
    """Share of ``drugs`` the clinician named; None when the case lists none."""
    keys = [drug_key(d) for d in drugs if drug_key(d)]
    if not keys:
        return None
    said = " ".join(t.content.lower() for t in transcript if t.role == "clinician")
    return sum(bool(re.search(rf"\b{re.escape(k)}\b", said)) for k in keys) / len(keys)


@dataclass
class ChecklistPoint:
    area: str
    reference: str
    predicted: str | None  # what the prediction says in that area (None: nothing)
    how: str  # exact | judged
    correct: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return vars(self).copy()


def _joined(items: Sequence[str]) -> str | None:
    return "; ".join(items) if items else None


def checklist_points(predicted: Checklist, reference: Checklist) -> tuple[list[ChecklistPoint], list[str]]:
    """Every reference point, exact ones decided, judged ones waiting for a label; and the extra medicines."""
    points = [ChecklistPoint("diagnosis", reference.diagnosis, predicted.diagnosis or None, "judged")]
    areas: list[tuple[str, list[str], list[str]]] = [
        ("tests_and_treatments", reference.tests_and_treatments, predicted.tests_and_treatments),
        ("warning_signs", reference.warning_signs, predicted.warning_signs),
        ("activities_and_diet", reference.activities + reference.diet, predicted.activities + predicted.diet),
        (
            "appointments",
            [_appointment(a) for a in reference.appointments],
            [_appointment(a) for a in predicted.appointments],
        ),
        ("pending_tests", reference.pending_tests, predicted.pending_tests),
    ]
    for area, wanted, got in areas:
        points.extend(ChecklistPoint(area, item, _joined(got), "judged") for item in wanted)
    by_key: dict[str, ChecklistMedicine] = {}
    for medicine in predicted.medicines:
        by_key.setdefault(drug_key(medicine.name), medicine)
    for medicine in reference.medicines:
        found = by_key.get(drug_key(medicine.name))
        name = medicine.name
        if found is None:
            points.extend(
                ChecklistPoint(f"medicine:{field}", f"{name}: {value}", None, "exact", False)
                for field, value in (
                    ("present", name),
                    ("dose", medicine.dose),
                    ("times", medicine.times),
                    ("reason", medicine.reason),
                )
            )
            continue
        points.append(ChecklistPoint("medicine:present", name, found.name, "exact", True))
        points.append(
            ChecklistPoint(
                "medicine:dose", f"{name}: {medicine.dose}", found.dose, "exact", same_dose(medicine.dose, found.dose)
            )
        )
        points.append(
            ChecklistPoint(
                "medicine:times",
                f"{name}: {', '.join(medicine.times)}",
                ", ".join(found.times),
                "exact",
                set(medicine.times) == set(found.times),
            )
        )
        points.append(
            ChecklistPoint("medicine:reason", f"{name} is for: {medicine.reason}", found.reason or None, "judged")
        )
    wanted_keys = {drug_key(m.name) for m in reference.medicines}
    extra = [m.name for m in predicted.medicines if drug_key(m.name) not in wanted_keys]
    return points, extra


def _appointment(a: Any) -> str:
    return f"{a.with_whom}, {a.when}, for {a.reason}"


class _Consistent(BaseModel):
    model_config = ConfigDict(extra="ignore")
    consistent: list[bool]


async def ahrq_accuracy(
    predicted: Checklist, reference: Checklist, context: SampleContext, *, max_repairs: int = 2
) -> dict[str, Any]:
    """AHRQ ACC with its points (as stored in a sample's output)."""
    points, extra = checklist_points(predicted, reference)
    for point in points:
        if point.how == "judged" and point.predicted is None:
            point.correct = False
    waiting = [p for p in points if p.correct is None]
    if waiting:
        answer_type = create_model(
            f"Consistent{len(waiting)}",
            __base__=_Consistent,
            consistent=(list[bool], Field(min_length=len(waiting), max_length=len(waiting))),
        )
        messages = render_chat("discharge/checklist_judge.j2", points=waiting)
        result = await context.generate_structured("judge", messages, answer_type, max_repairs=max_repairs)
        for point, verdict in zip(waiting, result.value.consistent, strict=True):
            point.correct = verdict
    correct = sum(bool(p.correct) for p in points)
    return {
        "accuracy": correct / len(points) if points else None,
        "correct": correct,
        "total": len(points),
        "points": [p.as_dict() for p in points],
        "extra_medicines": extra,
    }
