"""Write bedside's synthetic discharge cases: 12 hospital stays for the discharge-education simulation.

Everything here is invented for bedside: each note, its structure, the exam and the reference summary were written
for this file. The clinical situations (condition, age, sex, medicines) are modelled on stays in the Synthea
synthetic FHIR bundles, but no text, identifier or name is taken from them, and no real record is used. The
patients are unnamed ("Mr. ___", "Ms. ___", as in de-identified notes).

Each note is a MIMIC-IV-style discharge note with eleven sections (Chief Complaint ... Followup Instructions, with
"Discharge Condition" before the instructions); the history part of the structure is read from the note's own
sections, so the two cannot disagree. The exams follow the DischargeSim annotation guideline (Fig. 2): three
options per question, the answer, a close but wrong distractor, and an irrelevant option made of words that appear
in the note.

The cases' text lives in ``tools/data/discharge_cases.yaml`` (one entry per case: demographics, the note, the
structure's lists, the exam as [category, question, answer, distractor, irrelevant], the reference summary); this
script builds each into the case format, reading the note's sections for its history part.

Run from the repository root: ``python tools/make_discharge_cases.py`` validates every case against
:class:`bedside.tasks.discharge.cases.DischargeCase` and rewrites
``src/bedside/tasks/discharge/data/synthetic_cases.jsonl`` (deterministically: same script, same bytes).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import yaml

from bedside.tasks.discharge.cases import Category, DischargeCase, TimeSlot

OUT = Path(__file__).resolve().parents[1] / "src" / "bedside" / "tasks" / "discharge" / "data" / "synthetic_cases.jsonl"
DATA = Path(__file__).resolve().parent / "data" / "discharge_cases.yaml"
"""The cases' text as written (notes, structure, exams, reference summaries): data, read by this script."""

Json = dict[str, Any]

HEADINGS = (
    "Chief Complaint",
    "History of Present Illness",
    "Past Medical History",
    "Social History",
    "Pertinent Results",
    "Brief Hospital Course",
    "Discharge Medications",
    "Discharge Diagnosis",
    "Discharge Condition",
    "Discharge Instructions",
    "Followup Instructions",
)
_HEADING = re.compile(r"(?m)^([A-Z][A-Za-z ]+):[ \t]*$")


def sections(note: str) -> dict[str, str]:
    """The note's sections by heading; the headings must be exactly :data:`HEADINGS`, in order, one per line."""
    found = list(_HEADING.finditer(note))
    names = tuple(match.group(1) for match in found)
    if names != HEADINGS:
        raise ValueError(f"note headings {names} are not {HEADINGS}")
    ends = [match.start() for match in found[1:]] + [len(note)]
    return {match.group(1): note[match.end() : end].strip() for match, end in zip(found, ends, strict=True)}


def med(
    name: str,
    dose: str,
    frequency: str,
    times: list[TimeSlot],
    reason: str,
    instructions: str = "",
    status: Literal["new", "changed", "continued"] = "continued",
) -> Json:
    return {
        "name": name,
        "dose": dose,
        "frequency": frequency,
        "times": times,
        "reason": reason,
        "instructions": instructions,
        "status": status,
    }


def summary(
    *,
    medications: str,
    primary: str,
    secondary: str,
    condition: tuple[str, str, str],
    instructions: str,
    followup: str,
) -> Json:
    mental, consciousness, activity = condition
    return {
        "discharge_medications": medications,
        "discharge_diagnosis": {"primary": primary, "secondary": secondary},
        "discharge_condition": {
            "mental_status": mental,
            "level_of_consciousness": consciousness,
            "activity_status": activity,
        },
        "discharge_instructions": instructions,
        "followup_instructions": followup,
    }


def case(
    case_id: str,
    *,
    age: int,
    sex: str,
    source: str,
    note: str,
    tests: list[tuple[str, str]],
    treatments: list[str],
    primary: list[str],
    secondary: list[str],
    medications: list[Json],
    stopped: list[str],
    follow_up: list[tuple[str, str, str]],
    return_precautions: list[str],
    activity: list[str],
    diet: list[str],
    pending: list[str],
    questions: list[tuple[Category, str, str, str, str]],
    reference: Json,
) -> Json:
    """One case as plain data; the questions are (category, question, answer, distractor, irrelevant)."""
    parts = sections(note)
    return {
        "id": case_id,
        "demographics": {"age": age, "sex": sex},
        "note": note,
        "structure": {
            "history_and_course": {
                "chief_complaint": parts["Chief Complaint"],
                "history_of_present_illness": parts["History of Present Illness"],
                "past_medical_history": parts["Past Medical History"],
                "social_history": parts["Social History"],
                "hospital_course": parts["Brief Hospital Course"],
            },
            "tests_and_treatments": {
                "tests": [{"name": name, "result": result} for name, result in tests],
                "treatments": treatments,
            },
            "diagnoses_and_medications": {
                "primary_diagnoses": primary,
                "secondary_diagnoses": secondary,
                "medications": medications,
                "stopped_medications": stopped,
            },
            "follow_up_and_return": {
                "follow_up": [{"with_whom": who, "when": when, "reason": why} for who, when, why in follow_up],
                "return_precautions": return_precautions,
                "activity": activity,
                "diet": diet,
                "pending_results": pending,
            },
        },
        "questions": [
            {
                "id": f"q{number}",
                "question": question,
                "answer": answer,
                "distractor": distractor,
                "irrelevant": irrelevant,
                "category": category,
            }
            for number, (category, question, answer, distractor, irrelevant) in enumerate(questions, start=1)
        ],
        "reference_summary": reference,
        "source": source,
    }


def read_cases(path: Path = DATA) -> list[Json]:
    """The cases of the data file, built into plain case data: tuples where :func:`case` wants them."""
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]
    built = []
    for entry in entries:
        fields = dict(entry)
        case_id = fields.pop("id")
        fields["tests"] = [tuple(t) for t in fields["tests"]]
        fields["follow_up"] = [tuple(f) for f in fields["follow_up"]]
        fields["questions"] = [tuple(q) for q in fields["questions"]]
        fields["medications"] = [med(**m) for m in fields["medications"]]
        reference = dict(fields["reference"])
        reference["condition"] = tuple(reference["condition"])
        fields["reference"] = summary(**reference)
        built.append(case(case_id, **fields))
    return built


def main() -> None:
    lines = []
    for raw in read_cases():
        validated = DischargeCase.model_validate(raw)
        lines.append(json.dumps(validated.model_dump(mode="json"), ensure_ascii=False))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} cases to {OUT}")


if __name__ == "__main__":
    main()
