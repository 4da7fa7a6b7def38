"""Write the instruct task's synthetic fixtures (bedside's own, no real patients, no MedAlign text):

- ``synthetic_instructions.jsonl``: 32 clinician-style instructions over the demo cohort's 12 records
  (``src/bedside/data/demo/cohort.jsonl``), each with the facts a correct answer must state and 1-3 reference
  answers written for bedside;
- ``synthetic_labels.jsonl``: four *synthetic* systems' responses to each instruction, with *scripted* clinician
  labels (correct = states every answer fact; ranks by correctness, then facts stated, then length, ties kept),
  and a second and third scripted evaluator on the first eight instructions (the inter-rater set). They exercise
  the evaluation code; they are not measurements of any model.

Run: python tools/make_instruct_fixtures.py
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "bedside" / "tasks" / "instruct" / "data"

# id, person, subcategory, general, question, characteristics, context, parts, specialty, facts, references
INSTRUCTIONS: list[tuple[str, str, str, bool, str, str, str, str, str, list[list[str]], list[str]]] = [
    (
        "syn-01",
        "demo-01",
        "medication information",
        True,
        "Which antihypertensive is the patient taking now, and why was it changed?",
        "adult with hypertension on blood pressure medication",
        "primary care follow-up",
        "medication list, progress notes",
        "Internal Medicine",
        [["lisinopril"], ["ankle swelling", "edema"]],
        [
            "Lisinopril 10 mg daily; amlodipine was stopped because of ankle swelling with BP still 148/92.",
            "Now on lisinopril 10 mg once daily, switched from amlodipine (ankle swelling, uncontrolled BP).",
        ],
    ),
    (
        "syn-02",
        "demo-01",
        "laboratory studies",
        True,
        "What was the most recent hemoglobin A1c?",
        "adult with type 2 diabetes",
        "diabetes review before a visit",
        "laboratory results, notes",
        "Internal Medicine",
        [["7.1"]],
        ["A1c 7.1% at the annual exam in November 2025."],
    ),
    (
        "syn-03",
        "demo-01",
        "determine plan of care",
        False,
        "When should the blood pressure be rechecked after the medication change?",
        "",
        "hypertension management",
        "notes",
        "Cardiology",
        [["4 weeks", "four weeks"]],
        ["Recheck BP in 4 weeks after starting lisinopril."],
    ),
    (
        "syn-04",
        "demo-02",
        "medical history",
        True,
        "Summarize this patient's asthma control over the last two visits.",
        "adult with asthma",
        "pulmonary follow-up",
        "notes, medications",
        "Internal Medicine",
        [["well controlled"], ["fluticasone"]],
        [
            "Night symptoms twice weekly in Sept 2024, fluticasone/salmeterol started; by Oct 2025 well controlled, peak flow 560 L/min."
        ],
    ),
    (
        "syn-05",
        "demo-02",
        "medical history",
        True,
        "Does the patient have any drug allergies?",
        "any adult patient",
        "before prescribing an antibiotic",
        "allergy list",
        "Internal Medicine",
        [["penicillin"], ["rash"]],
        ["Penicillin allergy (rash)."],
    ),
    (
        "syn-06",
        "demo-02",
        "vitals",
        True,
        "What was the most recent peak flow?",
        "patient with asthma",
        "asthma review",
        "notes",
        "Internal Medicine",
        [["560"]],
        ["560 L/min at the October 2025 visit."],
    ),
    (
        "syn-07",
        "demo-03",
        "medication information",
        True,
        "Is the patient on anticoagulation, and for what indication?",
        "older adult with atrial fibrillation",
        "pre-procedure review",
        "medications, problem list",
        "Cardiology",
        [["apixaban"], ["atrial fibrillation", "afib"]],
        ["Yes: apixaban 5 mg twice daily for atrial fibrillation."],
    ),
    (
        "syn-08",
        "demo-03",
        "laboratory studies",
        True,
        "What is the latest kidney function result?",
        "older adult with chronic kidney disease",
        "medication dosing",
        "laboratory results, notes",
        "Internal Medicine",
        [["creatinine 1.4", "1.4"]],
        ["Creatinine 1.4 in January 2026 (eGFR 52 in June 2025); CKD stage 3."],
    ),
    (
        "syn-09",
        "demo-03",
        "provide risk assessment",
        False,
        "Summarize the bleeding risk considerations for this patient.",
        "",
        "anticoagulation review",
        "notes, medications",
        "Cardiology",
        [["apixaban"], ["kidney", "ckd", "renal"]],
        ["On apixaban with CKD stage 3 (creatinine 1.4); bleeding precautions were discussed in January 2026."],
    ),
    (
        "syn-10",
        "demo-04",
        "laboratory studies",
        True,
        "What was the last TSH value, and is a new one pending?",
        "adult with hypothyroidism",
        "fatigue work-up",
        "laboratory results, notes",
        "Internal Medicine",
        [["2.1"], ["ordered", "pending"]],
        ["TSH 2.1 in August 2025; a new TSH was ordered in March 2026 for a month of fatigue."],
    ),
    (
        "syn-11",
        "demo-04",
        "medical history",
        True,
        "What mental health conditions are documented and how are they treated?",
        "adult patient",
        "behavioral health screening",
        "problem list, medications",
        "Internal Medicine",
        [["anxiety"], ["sertraline"]],
        ["Generalized anxiety disorder, improved on sertraline 50 mg daily."],
    ),
    (
        "syn-12",
        "demo-04",
        "medication information",
        True,
        "What dose of levothyroxine does the patient take?",
        "adult on thyroid replacement",
        "medication reconciliation",
        "medication list",
        "Internal Medicine",
        [["75 mcg", "75 mcg"]],
        ["Levothyroxine 75 mcg every morning."],
    ),
    (
        "syn-13",
        "demo-05",
        "provider referrals",
        True,
        "Has the patient been referred to any other service?",
        "any adult patient",
        "care coordination",
        "notes, referrals",
        "Primary Care",
        [["physical therapy"]],
        ["Yes, to physical therapy for low back pain after a lifting injury (January 2026)."],
    ),
    (
        "syn-14",
        "demo-05",
        "medical history",
        False,
        "Were any red flags noted for the back pain?",
        "",
        "acute back pain triage",
        "notes",
        "Neurology",
        [["no red flags"]],
        ["No red flags were noted; lifting injury, treated with NSAIDs and physical therapy."],
    ),
    (
        "syn-15",
        "demo-06",
        "medical history",
        True,
        "How many weeks pregnant was the patient at the last visit?",
        "pregnant patient",
        "prenatal care",
        "notes",
        "Primary Care",
        [["16 weeks"]],
        ["16 weeks at the March 2026 visit, with a normal exam."],
    ),
    (
        "syn-16",
        "demo-06",
        "medication information",
        True,
        "List the patient's current medications.",
        "any adult patient",
        "medication reconciliation",
        "medication list",
        "Internal Medicine",
        [["prenatal vitamin"]],
        ["Prenatal vitamin, one tablet daily."],
    ),
    (
        "syn-17",
        "demo-06",
        "medical history",
        True,
        "Is there a history of headache disorders?",
        "adult patient",
        "neurology consult",
        "problem list",
        "Neurology",
        [["migraine"]],
        ["Yes, migraine since 2014."],
    ),
    (
        "syn-18",
        "demo-07",
        "medical history",
        True,
        "Summarize the patient's cancer history and current treatment.",
        "patient with breast cancer",
        "oncology follow-up",
        "problem list, notes, medications",
        "Oncology",
        [["breast"], ["radiation"], ["anastrozole"]],
        [
            "Right breast cancer diagnosed October 2024; completed radiation; on anastrozole 1 mg daily since April 2025."
        ],
    ),
    (
        "syn-19",
        "demo-07",
        "medication information",
        False,
        "What side effects of anastrozole has the patient reported?",
        "",
        "oncology follow-up",
        "notes",
        "Oncology",
        [["joint"]],
        ["Mild joint aches (December 2025)."],
    ),
    (
        "syn-20",
        "demo-07",
        "medication information",
        True,
        "Which diuretic is the patient taking?",
        "adult with hypertension",
        "medication review",
        "medication list",
        "Cardiology",
        [["hydrochlorothiazide"]],
        ["Hydrochlorothiazide 25 mg once daily."],
    ),
    (
        "syn-21",
        "demo-08",
        "social history",
        True,
        "Describe the patient's alcohol use over time.",
        "adult patient",
        "social history review",
        "notes, problem list",
        "Internal Medicine",
        [["weekends"]],
        ["Mild alcohol use disorder in 2024, open to cutting down; by December 2025 drinking reduced to weekends."],
    ),
    (
        "syn-22",
        "demo-08",
        "medication information",
        True,
        "What is the patient taking for reflux?",
        "adult with GERD",
        "medication reconciliation",
        "medication list",
        "Internal Medicine",
        [["omeprazole"]],
        ["Omeprazole 20 mg before breakfast; reflux controlled."],
    ),
    (
        "syn-23",
        "demo-09",
        "vitals",
        True,
        "What was the patient's most recent documented weight?",
        "older adult with heart failure",
        "volume status check",
        "notes, vitals",
        "Cardiology",
        [["64 kg"]],
        ["64 kg in September 2025, euvolemic."],
    ),
    (
        "syn-24",
        "demo-09",
        "medical history",
        True,
        "Has this patient been hospitalized for heart failure?",
        "older adult",
        "cardiology review",
        "notes, problem list",
        "Cardiology",
        [["heart failure admission", "admitted", "hospitalized", "admission"]],
        ["Yes, a heart failure admission in November 2023, after which furosemide was started."],
    ),
    (
        "syn-25",
        "demo-09",
        "calculate numerical measures",
        False,
        "How old is the patient as of the last visit?",
        "",
        "geriatric assessment",
        "demographics",
        "Internal Medicine",
        [["77"]],
        ["77 years old (born 29 Feb 1948; last visit 15 Sept 2025)."],
    ),
    (
        "syn-26",
        "demo-10",
        "laboratory studies",
        True,
        "What was the patient's PHQ-9 score?",
        "adult with depression",
        "depression follow-up",
        "notes",
        "Internal Medicine",
        [["16"]],
        ["PHQ-9 of 16 in October 2025."],
    ),
    (
        "syn-27",
        "demo-10",
        "determine plan of care",
        False,
        "What treatment plan was started for depression?",
        "",
        "mental health follow-up",
        "notes, medications",
        "Internal Medicine",
        [["fluoxetine"], ["therapy"]],
        ["Fluoxetine 20 mg daily and a therapy referral."],
    ),
    (
        "syn-28",
        "demo-11",
        "medication information",
        True,
        "What antibiotic was prescribed and for how long?",
        "adult with a urinary infection",
        "acute visit follow-up",
        "medications, notes",
        "Primary Care",
        [["nitrofurantoin"], ["5 days", "five days"]],
        ["Nitrofurantoin 100 mg twice daily for 5 days (UTI, February 2026)."],
    ),
    (
        "syn-29",
        "demo-11",
        "demographics",
        True,
        "What is the patient's date of birth?",
        "any patient",
        "registration check",
        "demographics",
        "Internal Medicine",
        [["1982"]],
        ["7 July 1982."],
    ),
    (
        "syn-30",
        "demo-12",
        "laboratory studies",
        True,
        "What was the last FEV1 result?",
        "adult with COPD",
        "pulmonary review",
        "notes, pulmonary function tests",
        "Internal Medicine",
        [["58"]],
        ["FEV1 58% predicted in May 2025."],
    ),
    (
        "syn-31",
        "demo-12",
        "medical history",
        True,
        "Which vaccines are documented for this patient?",
        "older adult",
        "immunization review",
        "notes, immunizations",
        "Primary Care",
        [["pneumococcal"]],
        ["Pneumococcal vaccine in January 2026."],
    ),
    (
        "syn-32",
        "demo-12",
        "other",
        False,
        "Draft a one-line problem list for a handoff.",
        "",
        "handoff",
        "problem list",
        "Internal Medicine",
        [["copd", "chronic obstructive"], ["nicotine", "smok"]],
        ["COPD (FEV1 58% predicted) on tiotropium and albuterol; history of nicotine dependence."],
    ),
]

SYSTEMS = ("synthetic-a", "synthetic-b", "synthetic-c", "synthetic-d")


def _responses(facts: list[list[str]], reference: str, index: int) -> dict[str, tuple[str, bool]]:
    """Four scripted responses of decreasing quality; the last is an endpoint error on every seventh case."""
    partial = facts[0][0] if facts else ""
    return {
        "synthetic-a": (reference, False),
        "synthetic-b": (f"Per the record: {reference} No other relevant findings.", False)
        if index % 3
        else (f"The record mentions {partial}.", False),
        "synthetic-c": (
            f"The record mentions {partial}." if index % 2 else "I could not find this in the record.",
            False,
        ),
        "synthetic-d": ("Error: the request was blocked by the endpoint's content filter.", True)
        if index % 7 == 0
        else ("The patient should follow up with their doctor.", False),
    }


def _stated(text: str, facts: list[list[str]]) -> int:
    lower = " ".join(text.lower().split())
    return sum(any(a.lower() in lower for a in alternatives) for alternatives in facts)


def _ranks(scored: dict[str, tuple[bool, int, int]]) -> dict[str, int]:
    """Competition ranks by (correct, facts stated, shorter); equal keys tie."""
    keys = {s: (not c, -f, length // 40) for s, (c, f, length) in scored.items()}
    ordered = sorted(keys.values())
    return {s: ordered.index(k) + 1 for s, k in keys.items()}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    instructions, labels = [], []
    for index, (iid, person, sub, general, question, chars, ctx, parts, specialty, facts, refs) in enumerate(
        INSTRUCTIONS, start=1
    ):
        instructions.append(
            {
                "id": iid,
                "question": question,
                "subcategory": sub,
                "general": general,
                "ehr_parts": parts,
                "clinical_context": ctx,
                "patient_characteristics": chars,
                "submitter_specialty": specialty,
                "person_id": person,
                "references": [{"annotator": f"Annotator_{i}", "text": r} for i, r in enumerate(refs, start=1)],
                "answer_facts": facts,
                "source": "bedside-synthetic",
            }
        )
        responses = _responses(facts, refs[0], index)
        scored = {
            s: (_stated(t, facts) == len(facts) and not e, _stated(t, facts), len(t)) for s, (t, e) in responses.items()
        }
        evaluators = ["Annotator_1", "Annotator_2", "Annotator_3"] if index <= 8 else ["Annotator_1"]
        for number, evaluator in enumerate(evaluators):
            ranks = _ranks(scored)
            if number == 1:  # the second scripted reviewer ties the two lowest-ranked responses
                worst = sorted(ranks, key=lambda s: ranks[s])[-2:]
                tied = min(ranks[s] for s in worst)
                ranks.update({s: tied for s in worst})
            both_correct = scored["synthetic-a"][0] and scored["synthetic-b"][0]
            if number == 2 and index % 2 and both_correct:  # the third prefers the longer of two correct ones
                ranks["synthetic-a"], ranks["synthetic-b"] = 2, 1
            for system, (text, error) in responses.items():
                correct = scored[system][0]
                labels.append(
                    {
                        "instruction_id": iid,
                        "model": system,
                        "response": text,
                        "evaluator": evaluator,
                        "correct": correct,
                        "rank": ranks[system],
                        "criteria": {} if correct else {"C1": False, "C2": False, "C3": True},
                        "provider_error": error,
                    }
                )
    with (OUT / "synthetic_instructions.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(i, ensure_ascii=False) + "\n" for i in instructions)
    with (OUT / "synthetic_labels.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(label, ensure_ascii=False) + "\n" for label in labels)
    print(f"wrote {len(instructions)} instructions and {len(labels)} labels to {OUT}")


if __name__ == "__main__":
    main()
