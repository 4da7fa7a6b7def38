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

Run from the repository root: ``python tools/make_discharge_cases.py`` validates every case against
:class:`bedside.tasks.discharge.cases.DischargeCase` and rewrites
``src/bedside/tasks/discharge/data/synthetic_cases.jsonl`` (deterministically: same script, same bytes).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from bedside.tasks.discharge.cases import Category, DischargeCase, TimeSlot

OUT = Path(__file__).resolve().parents[1] / "src" / "bedside" / "tasks" / "discharge" / "data" / "synthetic_cases.jsonl"

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


# --- dc01: inferior STEMI with a stent ---------------------------------------------------------------------------

NOTE_DC01 = """\
Chief Complaint:
Chest pressure

History of Present Illness:
Mr. ___ is a 73-year-old man with hypertension and osteoporosis who woke at about 5 am with heavy pressure in the center of his chest spreading to his jaw, with sweating and nausea. His wife called EMS. The field ECG showed ST elevations in leads II, III and aVF. He chewed aspirin 325 mg and was brought directly to the cardiac catheterization lab as a STEMI alert.

Past Medical History:
Hypertension, on hydrochlorothiazide. Osteoporosis, on weekly alendronate. No known heart disease before this admission.

Social History:
Lives with his wife in a two-story house. Retired carpenter. Former smoker, about 30 pack-years, quit 15 years ago. One beer on weekends.

Pertinent Results:
Troponin T peaked at 4.2 ng/mL. LDL cholesterol 148 mg/dL. Hemoglobin A1c 5.6%. Creatinine 0.9 mg/dL and potassium 4.3 at discharge.
Cardiac catheterization - 100% occlusion of the right coronary artery, opened with one drug-eluting stent with normal flow afterwards; mild non-obstructive disease elsewhere.
Echocardiogram - left ventricular ejection fraction 45% with hypokinesis of the inferior wall; valves normal.

Brief Hospital Course:
# Inferior STEMI - treated with emergent PCI to the RCA through the right radial artery (wrist), one drug-eluting stent. Received a clopidogrel 600 mg loading dose and heparin during the procedure. Monitored for 24 hours in the cardiac ICU on telemetry without arrhythmia. Chest pain resolved after the stent. Started aspirin, clopidogrel, high-intensity atorvastatin and metoprolol. The right wrist access site stayed soft without bleeding or hematoma.
# Mildly reduced ejection fraction - started low-dose lisinopril.
# Hypertension - systolic pressure 105-118 on the new medicines, so hydrochlorothiazide was stopped.
He walked the halls with cardiac rehabilitation staff without symptoms and was discharged home on hospital day 3.

Discharge Medications:
1. Aspirin 81 mg PO daily
2. Clopidogrel 75 mg PO daily
3. Atorvastatin 80 mg PO nightly
4. Metoprolol succinate 25 mg PO daily
5. Lisinopril 2.5 mg PO daily
6. Nitroglycerin 0.4 mg SL q5min PRN chest pain, up to 3 doses
7. Alendronate 70 mg PO once weekly (unchanged)
Stopped - hydrochlorothiazide 25 mg daily

Discharge Diagnosis:
Primary - acute inferior ST-elevation myocardial infarction, status post drug-eluting stent to the right coronary artery
Secondary - ischemic cardiomyopathy with mildly reduced ejection fraction (45%); hypertension; hyperlipidemia; osteoporosis

Discharge Condition:
Mental status clear and coherent. Level of consciousness alert and interactive. Activity status ambulatory and independent.

Discharge Instructions:
Dear Mr. ___, you were admitted with a heart attack caused by a blocked artery, which was opened with a stent. Take aspirin and clopidogrel every day for at least 12 months; never stop either one unless your cardiologist tells you to, because the stent could clot. Do not lift more than 5 pounds with your right arm for 5 days, and do not drive for 1 week. If chest pain starts, stop, sit down and place one nitroglycerin under your tongue; if the pain is not better in 5 minutes, call 911. Follow a low-salt, low-fat heart-healthy diet. Call us for bleeding from the wrist that does not stop with 10 minutes of pressure, black stools, fainting, or new shortness of breath or leg swelling.

Followup Instructions:
Cardiology clinic in 1 to 2 weeks. Primary care in 1 week to check blood pressure, kidney function and potassium on lisinopril. The cardiac rehabilitation program will call to start sessions in 2 to 3 weeks.
"""

DC01 = case(
    "dc01",
    age=73,
    sex="male",
    source="synthetic; modelled on a Synthea inpatient stay (acute ST elevation myocardial infarction)",
    note=NOTE_DC01,
    tests=[
        ("Troponin T", "peaked at 4.2 ng/mL (heart muscle injury)"),
        ("LDL cholesterol", "148 mg/dL"),
        ("Hemoglobin A1c", "5.6% (no diabetes)"),
        (
            "Cardiac catheterization",
            "complete blockage of the right coronary artery, opened with one drug-eluting stent; mild disease elsewhere",
        ),
        ("Echocardiogram", "ejection fraction 45% with a weak inferior wall; valves normal"),
        ("Creatinine and potassium at discharge", "0.9 mg/dL and 4.3 (normal)"),
    ],
    treatments=[
        "Emergent PCI with one drug-eluting stent to the right coronary artery, through the right wrist (radial artery)",
        "Clopidogrel 600 mg loading dose and heparin during the procedure",
        "24 hours of monitoring in the cardiac ICU",
        "Started aspirin, clopidogrel, atorvastatin, metoprolol and lisinopril",
        "Walking with cardiac rehabilitation staff",
    ],
    primary=[
        "Acute inferior ST-elevation myocardial infarction, status post drug-eluting stent to the right coronary artery"
    ],
    secondary=[
        "Ischemic cardiomyopathy with mildly reduced ejection fraction (45%)",
        "Hypertension",
        "Hyperlipidemia",
        "Osteoporosis",
    ],
    medications=[
        med(
            "aspirin",
            "81 mg",
            "once a day",
            ["morning"],
            "protects the new stent and the heart from clots",
            "Do not stop unless your cardiologist says so.",
            "new",
        ),
        med(
            "clopidogrel",
            "75 mg",
            "once a day",
            ["morning"],
            "keeps the stent from clotting, together with aspirin",
            "Take every day for at least 12 months; never skip or stop it without asking your cardiologist.",
            "new",
        ),
        med(
            "atorvastatin",
            "80 mg",
            "once a day at bedtime",
            ["bedtime"],
            "lowers cholesterol and protects the arteries",
            "Report unexplained muscle pain.",
            "new",
        ),
        med(
            "metoprolol succinate",
            "25 mg",
            "once a day",
            ["morning"],
            "slows the heart rate and protects the heart muscle",
            "Do not stop it suddenly.",
            "new",
        ),
        med(
            "lisinopril",
            "2.5 mg",
            "once a day",
            ["morning"],
            "helps the weakened heart muscle recover and lowers blood pressure",
            "Kidney function and potassium are checked in 1 week.",
            "new",
        ),
        med(
            "nitroglycerin",
            "0.4 mg under the tongue",
            "every 5 minutes as needed for chest pain, up to 3 doses",
            ["as_needed"],
            "chest pain",
            "Sit down and place one tablet under the tongue; if the pain is not better after 5 minutes, call 911.",
            "new",
        ),
        med("alendronate", "70 mg", "once a week", ["morning"], "osteoporosis", "Unchanged from home.", "continued"),
    ],
    stopped=["hydrochlorothiazide 25 mg daily (blood pressure low-normal on the new heart medicines)"],
    follow_up=[
        ("Cardiology clinic", "in 1 to 2 weeks", "check on the heart after the heart attack and stent"),
        ("Primary care doctor", "in 1 week", "blood pressure, kidney function and potassium on lisinopril"),
        (
            "Cardiac rehabilitation program",
            "starting in 2 to 3 weeks; the program will call",
            "supervised exercise and heart-health teaching",
        ),
    ],
    return_precautions=[
        "Chest pain that is not better 5 minutes after one nitroglycerin: call 911",
        "Bleeding from the wrist that does not stop with 10 minutes of pressure",
        "Black stools",
        "Fainting",
        "New shortness of breath or leg swelling",
    ],
    activity=[
        "No lifting more than 5 pounds with the right arm for 5 days",
        "No driving for 1 week",
        "Walk daily and build up slowly; join cardiac rehabilitation",
    ],
    diet=["Low-salt, low-fat heart-healthy diet"],
    pending=[],
    questions=[
        (
            "diagnosis_in_stay",
            "Why were you admitted to the hospital?",
            "A heart attack caused by a blocked heart artery",
            "A heart rhythm problem that needed a pacemaker",
            "A two-story house",
        ),
        (
            "tests_treatments_in_stay",
            "What was done to open the blocked artery?",
            "A stent was placed through an artery in the right wrist",
            "Open-heart bypass surgery through the chest",
            "A retired carpenter",
        ),
        (
            "tests_treatments_in_stay",
            "What did the heart ultrasound (echocardiogram) show?",
            "The heart's pumping is mildly weakened, at 45%",
            "The heart's pumping is completely normal",
            "One beer on weekends",
        ),
        (
            "medication_in_stay",
            "Which of your home medicines was stopped during this stay?",
            "Hydrochlorothiazide, because your blood pressure ran low on the new heart medicines",
            "Alendronate, because it interferes with the stent",
            "Former smoker, 30 pack-years",
        ),
        (
            "diagnosis_at_discharge",
            "Besides the heart attack, which other heart problem is in your discharge diagnosis?",
            "Mildly weakened heart muscle (reduced ejection fraction)",
            "A leaking heart valve",
            "His wife",
        ),
        (
            "medication_after_discharge",
            "How long should you take aspirin and clopidogrel together?",
            "Every day for at least 12 months, never stopping unless your cardiologist says so",
            "Only until the wrist heals, about 5 days",
            "Once a week on weekends",
        ),
        (
            "medication_after_discharge",
            "When should you take atorvastatin 80 mg?",
            "Once a day at bedtime",
            "Twice a day, morning and evening",
            "In the cardiac catheterization lab",
        ),
        (
            "return_precautions",
            "What should you do if chest pain is not better 5 minutes after one nitroglycerin under the tongue?",
            "Call 911",
            "Wait for your cardiology visit",
            "Quit 15 years ago",
        ),
        ("care_after_discharge", "For how long should you not drive?", "1 week", "1 day", "30 pack-years"),
    ],
    reference=summary(
        medications=(
            "- Aspirin 81 mg, one tablet each morning (new): stops clots forming in your stent.\n"
            "- Clopidogrel 75 mg, one tablet each morning (new): works with aspirin to protect the stent; never skip it.\n"
            "- Atorvastatin 80 mg, one tablet at bedtime (new): lowers your cholesterol.\n"
            "- Metoprolol succinate 25 mg, one tablet each morning (new): eases the work of your heart.\n"
            "- Lisinopril 2.5 mg, one tablet each morning (new): helps your heart muscle heal.\n"
            "- Nitroglycerin 0.4 mg under the tongue, only if chest pain starts (new): up to 3 tablets, 5 minutes apart.\n"
            "- Alendronate 70 mg once a week (same as before): for your bones.\n"
            "- No longer take hydrochlorothiazide."
        ),
        primary="Heart attack from a fully blocked artery on the underside of the heart; a stent now holds it open",
        secondary="Heart pumping a little weaker than normal (45%); high blood pressure; high cholesterol; thin bones (osteoporosis)",
        condition=("Clear and thinking well", "Awake and alert", "Walking on your own"),
        instructions=(
            "You had a heart attack because one of the arteries feeding your heart was completely blocked. The team reached it "
            "through your right wrist and left a small mesh tube (a stent) to keep it open. Your heart is pumping a bit weaker "
            "than normal, and the new medicines will help it recover. The most important thing is to take aspirin and "
            "clopidogrel every single day for at least a year: stopping them early could let a clot close the stent. For the "
            "next 5 days keep your right arm from lifting anything over 5 pounds, and wait a week before driving. Eat less salt "
            "and fat. If chest pain comes back, sit and put one nitroglycerin under your tongue; if it has not eased after 5 "
            "minutes, call 911. Also get help if your wrist bleeds and pressure does not stop it, your stool turns black, you "
            "faint, or you get short of breath or your legs swell."
        ),
        followup=(
            "See your primary care doctor in about a week for a blood pressure check and blood tests of your kidneys and "
            "potassium. See the heart doctors (cardiology) in 1 to 2 weeks. The cardiac rehab team will phone you to begin "
            "exercise sessions in 2 to 3 weeks."
        ),
    ),
)

# --- dc02: coronary artery bypass surgery ------------------------------------------------------------------------

NOTE_DC02 = """\
Chief Complaint:
Exertional chest tightness; admitted for planned coronary artery bypass surgery

History of Present Illness:
Ms. ___ is a 60-year-old woman with hypertension, hyperlipidemia and knee osteoarthritis who developed chest tightness when climbing stairs over the past 2 months. An exercise stress test was abnormal, and coronary angiography showed severe three-vessel coronary artery disease. Cardiac surgery recommended bypass surgery and she was admitted for an elective CABG.

Past Medical History:
Hypertension. Hyperlipidemia. Osteoarthritis of both knees, taking naproxen most days. Obesity (BMI 31).

Social History:
Lives with her husband. Works part-time as a school cafeteria manager. Former smoker, quit 10 years ago. No alcohol.

Pertinent Results:
Pre-operative coronary angiography - severe stenoses of the left anterior descending, circumflex and right coronary arteries.
Echocardiogram - ejection fraction 55%, normal valves.
Hemoglobin 12.6 before surgery, 7.8 on post-operative day 1, 9.2 after transfusion.
Post-operative chest x-ray - small left pleural effusion, no pneumothorax.
Creatinine 0.8 and potassium 4.1 at discharge.

Brief Hospital Course:
She underwent CABG x3 (left internal mammary artery to LAD, saphenous vein grafts to the circumflex and RCA) through a median sternotomy, with cefazolin before incision. She was extubated the evening of surgery in the cardiac surgery ICU. On post-operative day 1 she received one unit of packed red blood cells for post-operative anemia. Chest tubes and pacing wires were removed on days 2 and 3. She was diuresed with IV furosemide and changed to oral furosemide with potassium. Pain was controlled with acetaminophen and oxycodone. Naproxen was stopped (kidney and bleeding risk after heart surgery), simvastatin was changed to high-intensity atorvastatin, and clopidogrel, held before surgery, was not restarted. She passed walking and stair-climbing tests with physical therapy and went home on post-operative day 5.

Discharge Medications:
1. Aspirin 81 mg PO daily
2. Metoprolol tartrate 25 mg PO BID
3. Atorvastatin 80 mg PO nightly
4. Furosemide 20 mg PO daily for 7 days
5. Potassium chloride 20 mEq PO daily for 7 days, with furosemide
6. Acetaminophen 1000 mg PO q8h
7. Oxycodone 5 mg PO q4h PRN severe pain
Stopped - naproxen, simvastatin, clopidogrel, metoprolol succinate

Discharge Diagnosis:
Primary - coronary artery disease, status post CABG x3
Secondary - post-operative anemia requiring transfusion; hypertension; hyperlipidemia; knee osteoarthritis

Discharge Condition:
Mental status clear and coherent. Level of consciousness alert and interactive. Activity status ambulatory and independent, steady gait.

Discharge Instructions:
Sternal precautions for 6 weeks - no lifting more than 10 pounds and no pushing or pulling with your arms. No driving for 4 weeks or while taking oxycodone. Shower daily and wash the incisions gently with mild soap and water; no baths, swimming, lotions or powders on the incisions. Hug a pillow when you cough and use the incentive spirometer 10 times an hour while awake. Weigh yourself every morning and call if you gain more than 2 pounds in a day or 5 pounds in a week. Follow a 2 gram sodium heart-healthy diet. Call the cardiac surgery office for fever over 101.5, redness or drainage from an incision, clicking or movement of the breastbone, chest pain or shortness of breath.

Followup Instructions:
Cardiac surgeon in 4 weeks for a wound check. Cardiologist in 2 weeks. Primary care in 1 week. Cardiac rehabilitation after the surgeon visit.
"""

DC02 = case(
    "dc02",
    age=60,
    sex="female",
    source="synthetic; modelled on a Synthea inpatient stay (coronary artery bypass grafting for ischemic heart disease)",
    note=NOTE_DC02,
    tests=[
        (
            "Coronary angiography (before admission)",
            "severe narrowing of three heart arteries (LAD, circumflex, right coronary)",
        ),
        ("Echocardiogram", "ejection fraction 55%, normal valves"),
        ("Hemoglobin", "12.6 before surgery, 7.8 on day 1 after surgery, 9.2 after one transfusion"),
        ("Chest x-ray after surgery", "small left pleural effusion, no collapsed lung"),
        ("Creatinine and potassium at discharge", "0.8 and 4.1 (normal)"),
    ],
    treatments=[
        "Coronary artery bypass surgery, three grafts, through the breastbone",
        "Cefazolin before the incision",
        "One unit of packed red blood cells on post-operative day 1",
        "Chest tubes and pacing wires removed",
        "IV then oral furosemide for extra fluid",
        "Walking and stair-climbing tests with physical therapy",
    ],
    primary=["Coronary artery disease, status post coronary artery bypass grafting x3"],
    secondary=["Post-operative anemia requiring transfusion", "Hypertension", "Hyperlipidemia", "Knee osteoarthritis"],
    medications=[
        med("aspirin", "81 mg", "once a day", ["morning"], "keeps the new grafts open", "", "new"),
        med(
            "metoprolol tartrate",
            "25 mg",
            "twice a day",
            ["morning", "evening"],
            "controls heart rate and blood pressure after surgery",
            "Replaces metoprolol succinate.",
            "changed",
        ),
        med(
            "atorvastatin",
            "80 mg",
            "once a day at bedtime",
            ["bedtime"],
            "lowers cholesterol to protect the grafts",
            "Replaces simvastatin.",
            "new",
        ),
        med(
            "furosemide",
            "20 mg",
            "once a day for 7 days",
            ["morning"],
            "removes extra fluid after surgery",
            "Take in the morning.",
            "new",
        ),
        med(
            "potassium chloride",
            "20 mEq",
            "once a day for 7 days",
            ["morning"],
            "replaces potassium lost with furosemide",
            "Take with furosemide and food.",
            "new",
        ),
        med(
            "acetaminophen",
            "1000 mg",
            "every 8 hours",
            ["morning", "afternoon", "evening"],
            "incision pain",
            "No more than 3000 mg a day.",
            "new",
        ),
        med(
            "oxycodone",
            "5 mg",
            "every 4 hours as needed for severe pain",
            ["as_needed"],
            "severe incision pain",
            "No driving while taking it.",
            "new",
        ),
    ],
    stopped=[
        "naproxen (kidney and bleeding risk after heart surgery)",
        "simvastatin (changed to atorvastatin)",
        "clopidogrel (not restarted after surgery)",
        "metoprolol succinate (changed to metoprolol tartrate)",
    ],
    follow_up=[
        ("Cardiac surgeon", "in 4 weeks", "wound check"),
        ("Cardiologist", "in 2 weeks", "heart medicines and recovery"),
        ("Primary care doctor", "in 1 week", "general check after surgery"),
    ],
    return_precautions=[
        "Fever over 101.5",
        "Redness or drainage from an incision",
        "Clicking or movement of the breastbone",
        "Chest pain or shortness of breath",
        "Weight gain of more than 2 pounds in a day or 5 pounds in a week",
    ],
    activity=[
        "Sternal precautions for 6 weeks: no lifting more than 10 pounds, no pushing or pulling with the arms",
        "No driving for 4 weeks or while taking oxycodone",
        "Shower daily, wash incisions gently; no baths, swimming, lotions or powders",
        "Hug a pillow when coughing; incentive spirometer 10 times an hour while awake",
        "Weigh every morning",
        "Cardiac rehabilitation after the surgeon visit",
    ],
    diet=["2 gram sodium heart-healthy diet"],
    pending=[],
    questions=[
        (
            "diagnosis_in_stay",
            "What condition led to your heart surgery?",
            "Severe blockages in three heart arteries (coronary artery disease)",
            "A leaking heart valve",
            "A school cafeteria manager",
        ),
        (
            "tests_treatments_in_stay",
            "What operation did you have?",
            "Heart bypass surgery with three grafts",
            "A single stent placed through the wrist",
            "Her husband",
        ),
        (
            "tests_treatments_in_stay",
            "Why did you get a blood transfusion after surgery?",
            "Your blood count was low after the operation",
            "Your blood was too thick after the operation",
            "Former smoker, quit 10 years ago",
        ),
        (
            "medication_in_stay",
            "Which pain reliever that you took at home for your knees was stopped in the hospital?",
            "Naproxen",
            "Acetaminophen",
            "The incentive spirometer",
        ),
        (
            "diagnosis_at_discharge",
            "Which problem found after surgery is listed among your discharge diagnoses?",
            "Low blood count (anemia) that needed a transfusion",
            "A collapsed lung (pneumothorax)",
            "Works part-time",
        ),
        (
            "medication_after_discharge",
            "How long should you take furosemide, the water pill?",
            "Once a day for 7 days",
            "Twice a day for the rest of your life",
            "10 times an hour while awake",
        ),
        (
            "medication_after_discharge",
            "Why are you taking potassium chloride?",
            "To replace potassium lost while taking the water pill",
            "To thin your blood and protect the grafts",
            "To hug a pillow",
        ),
        (
            "care_after_discharge",
            "For how long should you avoid lifting more than 10 pounds?",
            "6 weeks",
            "6 days",
            "2 gram sodium",
        ),
        (
            "care_after_discharge",
            "What should you do every morning at home?",
            "Weigh yourself and call if you gain more than 2 pounds in a day or 5 in a week",
            "Weigh yourself once a month",
            "Pacing wires were removed",
        ),
        (
            "return_precautions",
            "Which of these should make you call the cardiac surgery office?",
            "Redness or drainage from an incision, or fever over 101.5",
            "Mild soreness around the incision that eases with acetaminophen",
            "A school cafeteria",
        ),
    ],
    reference=summary(
        medications=(
            "- Aspirin 81 mg, once each morning (new): helps keep your new bypass grafts open.\n"
            "- Metoprolol tartrate 25 mg, morning and evening (changed from your once-daily metoprolol): steadies your heart rate and blood pressure.\n"
            "- Atorvastatin 80 mg at bedtime (new, replaces simvastatin): lowers cholesterol.\n"
            "- Furosemide 20 mg each morning for one week only (new): a water pill to clear extra fluid.\n"
            "- Potassium chloride 20 mEq each morning for the same week (new): replaces potassium the water pill washes out.\n"
            "- Acetaminophen 1000 mg three times a day: your main pain reliever.\n"
            "- Oxycodone 5 mg only for severe pain, no closer than 4 hours apart: do not drive after taking it.\n"
            "- Stop taking naproxen, simvastatin, clopidogrel and your old metoprolol succinate."
        ),
        primary="Narrowed heart arteries (coronary artery disease), treated with bypass surgery using three grafts",
        secondary="Low blood count after surgery, treated with one blood transfusion; high blood pressure; high cholesterol; arthritis in the knees",
        condition=("Clear and thinking well", "Awake and alert", "Walking on your own, steady on your feet"),
        instructions=(
            "Three of the arteries that feed your heart were badly narrowed, so the surgeons built new routes around them "
            "(bypass grafts). Your breastbone needs about 6 weeks to knit together: during that time do not lift anything over "
            "10 pounds and do not push or pull with your arms. You may not drive for 4 weeks, and never after an oxycodone. "
            "Shower every day and clean the cuts softly with mild soap; skip baths, pools, creams and powders. When you cough, "
            "hold a pillow against your chest, and keep using the breathing exerciser (incentive spirometer) 10 times every "
            "hour you are awake. Step on the scale each morning: call if you put on more than 2 pounds overnight or 5 pounds "
            "in a week. Keep salt low (2 grams a day). Do not take naproxen any more. Call the heart surgery office if you have "
            "a fever above 101.5, a red or leaking cut, a clicking or shifting feeling in the breastbone, chest pain, or trouble "
            "breathing."
        ),
        followup=(
            "Primary care in about 1 week. Heart doctor (cardiologist) in 2 weeks. Heart surgeon in 4 weeks to look at your "
            "wounds. After the surgeon visit you will start cardiac rehab."
        ),
    ),
)

# --- dc03: perforated appendicitis, laparoscopic appendectomy ----------------------------------------------------

NOTE_DC03 = """\
Chief Complaint:
Abdominal pain

History of Present Illness:
Ms. ___ is a 21-year-old previously healthy woman with 3 days of abdominal pain that began around the belly button and moved to the right lower abdomen, with fever to 101.8, nausea, two episodes of vomiting and loss of appetite. In the ED she was tender in the right lower quadrant. CT of the abdomen and pelvis showed perforated appendicitis with a small amount of free fluid and no drainable abscess. Urine pregnancy test was negative.

Past Medical History:
None. No prior surgeries. No known drug allergies.

Social History:
College student, lives in a dormitory with a roommate. Works at a bookstore on weekends. Occasional alcohol, no tobacco or drugs.

Pertinent Results:
WBC 16.8 on admission, 8.9 at discharge.
Urine pregnancy test negative.
CT abdomen and pelvis - dilated, inflamed appendix with perforation and a small amount of free fluid; no drainable abscess.
Surgical pathology - acute appendicitis with perforation; no tumor.

Brief Hospital Course:
She was started on IV piperacillin-tazobactam in the ED and taken to the operating room the same night for a laparoscopic appendectomy. A perforated appendix was found and removed, and the pelvis was washed out. The three small incisions were closed with absorbable sutures and skin glue. She continued IV antibiotics for 3 days after surgery. Her fever resolved on post-operative day 1, her diet was advanced to regular on day 2, and she was passing gas and walking the halls. Pain was controlled with acetaminophen and ibuprofen, with a few doses of oxycodone. On the day of discharge she was changed to oral amoxicillin-clavulanate to complete 7 days of antibiotics in total.

Discharge Medications:
1. Amoxicillin-clavulanate 875-125 mg PO BID for 4 more days
2. Acetaminophen 1000 mg PO q8h for 5 days, then as needed
3. Ibuprofen 600 mg PO q6h PRN pain, with food
4. Oxycodone 5 mg PO q6h PRN severe pain (6 tablets)
5. Docusate sodium 100 mg PO BID while taking oxycodone

Discharge Diagnosis:
Primary - perforated acute appendicitis, status post laparoscopic appendectomy
Secondary - none

Discharge Condition:
Mental status clear and coherent. Level of consciousness alert and interactive. Activity status ambulatory and independent.

Discharge Instructions:
You were admitted with a burst (perforated) appendix, which was removed with keyhole surgery. Finish all of the amoxicillin-clavulanate even if you feel well. Take ibuprofen with food. Do not drive or drink alcohol while taking oxycodone. You may shower; let soapy water run over the incisions and pat them dry, and do not scrub the glue, which will peel off on its own. No baths or swimming for 2 weeks. No lifting more than 15 pounds for 2 weeks. Walk several times a day. You may return to classes when comfortable, usually in about 1 week. Eat a regular diet with small meals and plenty of fluids. Call the surgery clinic for fever over 101.5, worsening abdominal pain, vomiting that does not stop, redness or pus at an incision, or no bowel movement for 3 days.

Followup Instructions:
Acute care surgery clinic in 2 weeks. Primary care as needed.
"""

DC03 = case(
    "dc03",
    age=21,
    sex="female",
    source="synthetic; modelled on a Synthea inpatient stay (appendicitis, appendectomy)",
    note=NOTE_DC03,
    tests=[
        ("White blood cell count", "16.8 on admission, 8.9 at discharge"),
        ("Urine pregnancy test", "negative"),
        ("CT abdomen and pelvis", "inflamed appendix that had burst, small amount of free fluid, no abscess to drain"),
        ("Surgical pathology", "acute appendicitis with perforation; no tumor"),
    ],
    treatments=[
        "Laparoscopic appendectomy with washout of the pelvis",
        "IV piperacillin-tazobactam, then oral amoxicillin-clavulanate",
        "Pain control with acetaminophen, ibuprofen and a few doses of oxycodone",
    ],
    primary=["Perforated acute appendicitis, status post laparoscopic appendectomy"],
    secondary=[],
    medications=[
        med(
            "amoxicillin-clavulanate",
            "875-125 mg",
            "twice a day for 4 more days",
            ["morning", "evening"],
            "finishes treating the infection from the burst appendix",
            "Finish every dose even if you feel well; take with food.",
            "new",
        ),
        med(
            "acetaminophen",
            "1000 mg",
            "every 8 hours for 5 days, then as needed",
            ["morning", "afternoon", "evening"],
            "pain",
            "No more than 3000 mg a day.",
            "new",
        ),
        med("ibuprofen", "600 mg", "every 6 hours as needed", ["as_needed"], "pain", "Take with food.", "new"),
        med(
            "oxycodone",
            "5 mg",
            "every 6 hours as needed for severe pain",
            ["as_needed"],
            "severe pain",
            "6 tablets only; no driving or alcohol while taking it.",
            "new",
        ),
        med(
            "docusate sodium",
            "100 mg",
            "twice a day while taking oxycodone",
            ["morning", "evening"],
            "prevents constipation from oxycodone",
            "",
            "new",
        ),
    ],
    stopped=[],
    follow_up=[
        ("Acute care surgery clinic", "in 2 weeks", "check the incisions and recovery"),
        ("Primary care doctor", "as needed", "general care"),
    ],
    return_precautions=[
        "Fever over 101.5",
        "Worsening abdominal pain",
        "Vomiting that does not stop",
        "Redness or pus at an incision",
        "No bowel movement for 3 days",
    ],
    activity=[
        "Shower allowed; let soapy water run over the incisions, pat dry, do not scrub the glue",
        "No baths or swimming for 2 weeks",
        "No lifting more than 15 pounds for 2 weeks",
        "Walk several times a day; return to classes when comfortable, about 1 week",
        "No driving or alcohol while taking oxycodone",
    ],
    diet=["Regular diet, small meals, plenty of fluids"],
    pending=[],
    questions=[
        (
            "diagnosis_in_stay",
            "What caused your belly pain?",
            "An infected appendix that had burst",
            "An infected appendix that had not burst",
            "A bookstore on weekends",
        ),
        (
            "tests_treatments_in_stay",
            "Which test in the emergency department showed the problem?",
            "A CT scan of the abdomen and pelvis",
            "An ultrasound of the pelvis",
            "A roommate in a dormitory",
        ),
        (
            "tests_treatments_in_stay",
            "How was your appendix removed?",
            "Keyhole (laparoscopic) surgery through three small incisions",
            "One large open cut across the belly",
            "Loss of appetite",
        ),
        (
            "medication_in_stay",
            "How were your antibiotics given while you were in the hospital?",
            "Through the IV (piperacillin-tazobactam)",
            "As a single pill on the day you went home",
            "Occasional alcohol",
        ),
        (
            "diagnosis_at_discharge",
            "What is your diagnosis at discharge?",
            "A burst (perforated) appendix that was removed",
            "A kidney stone that passed on its own",
            "A college student",
        ),
        (
            "medication_after_discharge",
            "How long do you take amoxicillin-clavulanate at home?",
            "Twice a day for 4 more days, until it is finished",
            "Only until the fever goes away",
            "Works at a bookstore",
        ),
        (
            "medication_after_discharge",
            "How should you take ibuprofen?",
            "With food, up to every 6 hours when needed for pain",
            "On an empty stomach every 2 hours",
            "With a roommate",
        ),
        (
            "care_after_discharge",
            "When can you take a bath or go swimming?",
            "Not for 2 weeks; showers are fine",
            "Right away, starting today",
            "After the pregnancy test",
        ),
        (
            "return_precautions",
            "Which of these should make you call the surgery clinic?",
            "Fever over 101.5, worsening belly pain, or pus at an incision",
            "Mild soreness at the incisions that eases with acetaminophen",
            "No known drug allergies",
        ),
        (
            "care_after_discharge",
            "When is your follow-up visit?",
            "Surgery clinic in 2 weeks",
            "Surgery clinic in 6 months",
            "In the dormitory",
        ),
    ],
    reference=summary(
        medications=(
            "- Amoxicillin-clavulanate 875-125 mg, morning and evening for 4 more days (new): the rest of your antibiotic course; finish every pill.\n"
            "- Acetaminophen 1000 mg three times a day for 5 days, then only if you need it (new): for pain.\n"
            "- Ibuprofen 600 mg with food, no more often than every 6 hours, if needed (new): for pain.\n"
            "- Oxycodone 5 mg only for bad pain, up to every 6 hours (new, 6 tablets): no driving or alcohol with it.\n"
            "- Docusate 100 mg morning and evening while you use oxycodone (new): keeps stools soft."
        ),
        primary="Appendicitis where the appendix had burst; it was taken out with keyhole surgery",
        secondary="None",
        condition=("Clear and thinking well", "Awake and alert", "Walking on your own"),
        instructions=(
            "Your appendix was infected and had split open, so the surgeons removed it through three tiny cuts and cleaned out "
            "the infection. You are going home on antibiotic pills: keep taking them until they are gone, even once you feel "
            "better. Ibuprofen should go down with a snack or a meal. While using oxycodone, stay away from alcohol and do not "
            "drive. Showers are fine: let the soapy water rinse over the cuts, then pat them dry, and leave the glue alone until "
            "it flakes off. Hold off on tubs and swimming, and on lifting anything over 15 pounds, for 2 weeks. Get up and walk "
            "a few times every day; most people feel ready for class after about a week. Eat normally, in small portions, and "
            "drink plenty. Phone the surgery clinic if your temperature goes above 101.5, the belly pain gets worse, you keep "
            "throwing up, a cut turns red or leaks pus, or you go 3 days without a bowel movement."
        ),
        followup="Visit the acute care surgery clinic in 2 weeks. See your primary care doctor if anything else comes up.",
    ),
)

# --- dc04: breast cancer, lumpectomy and sentinel node biopsy ----------------------------------------------------

NOTE_DC04 = """\
Chief Complaint:
Left breast cancer; admitted after planned lumpectomy

History of Present Illness:
Ms. ___ is a 53-year-old woman whose screening mammogram showed a 1.4 cm mass in the upper outer left breast. Core biopsy showed invasive ductal carcinoma, grade 2, estrogen and progesterone receptor positive, HER2 negative. She came in for a planned left lumpectomy with sentinel lymph node biopsy. She was kept overnight because of nausea and vomiting after anesthesia.

Past Medical History:
Osteoarthritis of the knees, taking naproxen. Hyperlipidemia on simvastatin. Iron deficiency anemia on ferrous sulfate. Left ankle fracture 4 years ago, healed.

Social History:
Married, two adult children. Works as a bank teller. Never smoker, rare alcohol. Walks her dog daily.

Pertinent Results:
Pre-operative hemoglobin 11.9.
Specimen radiograph in the operating room - biopsy clip and mass within the removed tissue.
Sentinel lymph nodes - two nodes removed; frozen section negative for cancer.
Final pathology of the lumpectomy margins and lymph nodes - pending at discharge.

Brief Hospital Course:
She underwent a wire-localized left lumpectomy with sentinel lymph node biopsy under general anesthesia. Blue dye and a radioactive tracer were used to find the lymph nodes. No drain was placed. After surgery she had nausea and vomiting, treated with IV ondansetron, and she was admitted overnight. By morning she was drinking and eating without nausea. Pain was controlled with acetaminophen and ibuprofen and one dose of oxycodone. Naproxen was held while she takes ibuprofen. She was walking independently and was discharged on post-operative day 1.

Discharge Medications:
1. Acetaminophen 1000 mg PO q8h PRN pain
2. Ibuprofen 600 mg PO q6h PRN pain, with food
3. Oxycodone 5 mg PO q6h PRN severe pain (5 tablets)
4. Ondansetron 4 mg ODT q8h PRN nausea
5. Simvastatin 10 mg PO nightly
6. Ferrous sulfate 325 mg PO daily
Held - naproxen while taking ibuprofen

Discharge Diagnosis:
Primary - left breast invasive ductal carcinoma, status post left lumpectomy and sentinel lymph node biopsy
Secondary - post-operative nausea and vomiting (resolved); hyperlipidemia; knee osteoarthritis; iron deficiency anemia

Discharge Condition:
Mental status clear and coherent. Level of consciousness alert and interactive. Activity status ambulatory and independent.

Discharge Instructions:
Wear the supportive surgical bra day and night for 1 week. Use ice packs for 20 minutes at a time for swelling. You may shower after 48 hours; the steri-strips will fall off on their own in 7 to 10 days. Your urine may look blue-green for 1 to 2 days from the dye; this is expected. Do gentle arm exercises, but no lifting more than 10 pounds with the left arm for 2 weeks. Do not take naproxen together with ibuprofen. No driving while taking oxycodone. Call for fever over 101, increasing swelling, firmness or redness in the breast or armpit, fluid leaking from the incision, new arm swelling, or vomiting that keeps you from drinking.

Followup Instructions:
Breast surgeon in 10 to 14 days to review the final pathology. Medical oncology in 3 weeks to discuss hormone-blocking treatment. Radiation oncology consultation in 3 to 4 weeks, once healed.
"""

DC04 = case(
    "dc04",
    age=53,
    sex="female",
    source="synthetic; modelled on a Synthea inpatient stay (malignant neoplasm of breast, excision of lesion)",
    note=NOTE_DC04,
    tests=[
        (
            "Core biopsy (before admission)",
            "invasive ductal carcinoma, grade 2, hormone receptor positive, HER2 negative",
        ),
        ("Specimen radiograph", "biopsy clip and mass inside the removed tissue"),
        ("Sentinel lymph nodes (frozen section)", "two nodes removed, no cancer seen"),
        ("Hemoglobin before surgery", "11.9"),
        ("Final pathology of margins and lymph nodes", "pending"),
    ],
    treatments=[
        "Wire-localized left lumpectomy with sentinel lymph node biopsy (blue dye and radioactive tracer), no drain",
        "IV ondansetron for nausea and vomiting after anesthesia; overnight stay",
        "Pain control with acetaminophen, ibuprofen and one dose of oxycodone",
    ],
    primary=["Left breast invasive ductal carcinoma, status post left lumpectomy and sentinel lymph node biopsy"],
    secondary=[
        "Post-operative nausea and vomiting (resolved)",
        "Hyperlipidemia",
        "Knee osteoarthritis",
        "Iron deficiency anemia",
    ],
    medications=[
        med(
            "acetaminophen",
            "1000 mg",
            "every 8 hours as needed",
            ["as_needed"],
            "pain",
            "No more than 3000 mg a day.",
            "new",
        ),
        med(
            "ibuprofen",
            "600 mg",
            "every 6 hours as needed",
            ["as_needed"],
            "pain",
            "Take with food; do not take with naproxen.",
            "new",
        ),
        med(
            "oxycodone",
            "5 mg",
            "every 6 hours as needed for severe pain",
            ["as_needed"],
            "severe pain",
            "5 tablets only; no driving while taking it.",
            "new",
        ),
        med(
            "ondansetron",
            "4 mg dissolving tablet",
            "every 8 hours as needed",
            ["as_needed"],
            "nausea",
            "Let it dissolve on the tongue.",
            "new",
        ),
        med("simvastatin", "10 mg", "once a day at bedtime", ["bedtime"], "high cholesterol", "", "continued"),
        med("ferrous sulfate", "325 mg", "once a day", ["morning"], "iron deficiency anemia", "", "continued"),
    ],
    stopped=["naproxen (held while taking ibuprofen)"],
    follow_up=[
        ("Breast surgeon", "in 10 to 14 days", "review the final pathology and check the incisions"),
        ("Medical oncology", "in 3 weeks", "discuss hormone-blocking treatment"),
        ("Radiation oncology", "in 3 to 4 weeks, once healed", "plan radiation to the breast"),
    ],
    return_precautions=[
        "Fever over 101",
        "Increasing swelling, firmness or redness in the breast or armpit",
        "Fluid leaking from the incision",
        "New arm swelling",
        "Vomiting that keeps you from drinking",
    ],
    activity=[
        "Supportive surgical bra day and night for 1 week",
        "Ice packs 20 minutes at a time",
        "Shower after 48 hours; steri-strips fall off on their own in 7 to 10 days",
        "Gentle arm exercises; no lifting more than 10 pounds with the left arm for 2 weeks",
        "No driving while taking oxycodone",
    ],
    diet=["Regular diet"],
    pending=["Final pathology of the lumpectomy margins and sentinel lymph nodes"],
    questions=[
        (
            "diagnosis_in_stay",
            "Why did you have surgery?",
            "A breast cancer found on a screening mammogram",
            "A harmless cyst found on ultrasound",
            "Walks her dog daily",
        ),
        (
            "tests_treatments_in_stay",
            "Which operation did you have?",
            "Removal of the lump from the left breast and a few lymph nodes from the armpit",
            "Removal of the whole right breast",
            "A bank teller",
        ),
        (
            "medication_in_stay",
            "Which medicine treated your nausea after surgery?",
            "Ondansetron",
            "Oxycodone",
            "Steri-strips",
        ),
        (
            "tests_treatments_in_stay",
            "Why may your urine look blue-green for a day or two?",
            "From the blue dye used to find the lymph nodes",
            "From an infection in your bladder",
            "From two adult children",
        ),
        (
            "diagnosis_at_discharge",
            "What is your main diagnosis at discharge?",
            "Left breast cancer, removed by lumpectomy",
            "Right breast cancer that has spread to the lungs",
            "Rare alcohol",
        ),
        (
            "medication_after_discharge",
            "Which pain reliever should you NOT take together with ibuprofen?",
            "Naproxen",
            "Acetaminophen",
            "Ice packs",
        ),
        (
            "care_after_discharge",
            "What will happen at the breast surgeon visit in 10 to 14 days?",
            "Review of the final pathology from the lump and lymph nodes",
            "Removal of a drain from your armpit",
            "Walks her dog",
        ),
        (
            "care_after_discharge",
            "What should you wear for the first week?",
            "A supportive surgical bra, day and night",
            "A tight elastic wrap around the left arm",
            "A bank teller",
        ),
        (
            "return_precautions",
            "Which of these is a reason to call your surgeon?",
            "Growing swelling, firmness or redness in the breast or armpit, or fever over 101",
            "Blue-green urine on the first day",
            "Two adult children",
        ),
    ],
    reference=summary(
        medications=(
            "- Acetaminophen 1000 mg up to every 8 hours if you hurt (new).\n"
            "- Ibuprofen 600 mg up to every 6 hours if you hurt, with food (new).\n"
            "- Oxycodone 5 mg only for strong pain, up to every 6 hours (new, 5 tablets): do not drive after a dose.\n"
            "- Ondansetron 4 mg melt-on-the-tongue tablet up to every 8 hours if you feel sick to your stomach (new).\n"
            "- Simvastatin 10 mg at bedtime (same as before): cholesterol.\n"
            "- Ferrous sulfate 325 mg each morning (same as before): iron.\n"
            "- Pause naproxen while you are using ibuprofen."
        ),
        primary="Cancer of the left breast (invasive ductal type); the lump and two lymph nodes from the armpit were removed",
        secondary="Sick stomach and vomiting after the anesthetic, now settled; high cholesterol; knee arthritis; low iron",
        condition=("Clear and thinking well", "Awake and alert", "Walking on your own"),
        instructions=(
            "The surgeons took out the cancer in your left breast along with two lymph nodes from under your arm. A quick check "
            "during surgery found no cancer in those nodes; the full lab report is still being finished. You stayed the night "
            "because the anesthetic upset your stomach, and that has passed. Keep the support bra on around the clock for the "
            "first week, and ice the area for 20 minutes at a time if it swells. Wait 2 days before showering; the thin tape "
            "strips will drop off by themselves. A blue-green tint to your pee for a day or two comes from the dye and is "
            "harmless. Move your arm gently, but keep loads in the left hand under 10 pounds for 2 weeks. Use ibuprofen instead "
            "of naproxen for now, never both. Do not drive after oxycodone. Call if you run a fever over 101, the breast or "
            "armpit gets more swollen, hard or red, the cut leaks, your arm swells, or you cannot keep fluids down."
        ),
        followup=(
            "See the breast surgeon about 10 to 14 days from now to go over the final lab results. Cancer doctor (medical "
            "oncology) in 3 weeks to talk about a hormone-blocking medicine. Radiation doctor in 3 to 4 weeks, after you have "
            "healed."
        ),
    ),
)

# --- dc05: sepsis from left pyelonephritis -----------------------------------------------------------------------

NOTE_DC05 = """\
Chief Complaint:
Fever, left flank pain and vomiting

History of Present Illness:
Ms. ___ is a 22-year-old woman with two prior bladder infections who had 3 days of burning with urination, then left flank pain, fever to 103, shaking chills and vomiting. In the ED her heart rate was 124, blood pressure 84/50 and lactate 3.6. Blood and urine cultures were drawn, she received 30 mL/kg of IV fluids and IV ceftriaxone, and her blood pressure improved without vasopressors. She was admitted to the step-down unit with sepsis.

Past Medical History:
Two prior bladder infections. Vitamin B12 deficiency on monthly injections. Takes a combined oral contraceptive pill.

Social History:
Graduate student in chemistry, works part-time as a barista. Lives with two roommates. No tobacco; drinks socially.

Pertinent Results:
Lactate 3.6 on arrival, 1.1 after fluids. WBC 19.2 on admission, 9.8 at discharge. Creatinine 1.4 on admission, 0.8 at discharge.
Urinalysis - many white blood cells, nitrite positive. Urine pregnancy test negative.
Urine culture - E. coli, sensitive to ceftriaxone and ciprofloxacin, resistant to ampicillin and trimethoprim-sulfamethoxazole.
Blood cultures on admission - E. coli in 1 of 2 sets. Repeat blood cultures on day 2 - no growth to date, final result pending.
Renal ultrasound - swollen left kidney; no stone, abscess or blockage.

Brief Hospital Course:
# Sepsis from left pyelonephritis with E. coli bacteremia - treated with IV fluids and IV ceftriaxone 2 g daily for 4 days. Fever resolved on day 3. Renal ultrasound showed no stone or abscess. Changed to oral ciprofloxacin to complete 14 days of antibiotics in total, given the bloodstream infection.
# Acute kidney injury - from dehydration and sepsis; creatinine returned to normal with fluids. NSAIDs avoided.
# Vomiting - resolved with ondansetron; eating normally by day 3.

Discharge Medications:
1. Ciprofloxacin 500 mg PO BID for 10 more days
2. Acetaminophen 650 mg PO q6h PRN fever or pain
3. Ondansetron 4 mg PO q8h PRN nausea
4. Drospirenone-ethinyl estradiol 3-0.02 mg PO daily (unchanged)
5. Cyanocobalamin 1000 mcg injection monthly (unchanged)
Avoid - ibuprofen and naproxen until kidney function is rechecked

Discharge Diagnosis:
Primary - sepsis due to left acute pyelonephritis with E. coli bacteremia
Secondary - acute kidney injury (resolved); vitamin B12 deficiency

Discharge Condition:
Mental status clear and coherent. Level of consciousness alert and interactive. Activity status ambulatory and independent.

Discharge Instructions:
You were very sick with a kidney infection that spread into your blood. Take ciprofloxacin twice a day until all 10 days are done. Take it 2 hours before or 6 hours after milk, yogurt, calcium, iron or antacids, which block it. Stop it and call if you get pain in a heel or ankle tendon. Avoid ibuprofen and naproxen until your kidney test is rechecked; acetaminophen is fine. Drink 8 glasses of water a day. Rest this week; you may return to classes and work after 48 hours without fever. Come back for fever over 101 after the first 2 days home, shaking chills, vomiting that keeps you from taking the antibiotic, worse flank pain, dizziness or fainting, or making much less urine.

Followup Instructions:
Primary care in 1 week for a blood test of kidney function and a urine check. We will call you with the final repeat blood culture result.
"""

DC05 = case(
    "dc05",
    age=22,
    sex="female",
    source="synthetic; modelled on a Synthea hospital stay (sepsis)",
    note=NOTE_DC05,
    tests=[
        ("Lactate", "3.6 on arrival, 1.1 after fluids"),
        ("White blood cell count", "19.2 on admission, 9.8 at discharge"),
        ("Creatinine", "1.4 on admission, 0.8 at discharge (kidney injury recovered)"),
        ("Urinalysis", "many white blood cells, nitrite positive"),
        ("Urine culture", "E. coli, treatable with ceftriaxone and ciprofloxacin"),
        ("Blood cultures", "E. coli in 1 of 2 sets on admission; repeat cultures no growth so far"),
        ("Renal ultrasound", "swollen left kidney; no stone, abscess or blockage"),
        ("Urine pregnancy test", "negative"),
    ],
    treatments=[
        "IV fluids (30 mL/kg) for low blood pressure",
        "IV ceftriaxone 2 g daily for 4 days, then oral ciprofloxacin",
        "Ondansetron for vomiting",
        "Monitoring in the step-down unit",
    ],
    primary=["Sepsis due to left acute pyelonephritis with E. coli bacteremia"],
    secondary=["Acute kidney injury (resolved)", "Vitamin B12 deficiency"],
    medications=[
        med(
            "ciprofloxacin",
            "500 mg",
            "twice a day for 10 more days",
            ["morning", "evening"],
            "kidney and blood infection",
            "Take 2 hours before or 6 hours after milk, yogurt, calcium, iron or antacids; stop and call for heel or ankle tendon pain.",
            "new",
        ),
        med(
            "acetaminophen",
            "650 mg",
            "every 6 hours as needed",
            ["as_needed"],
            "fever or pain",
            "Use instead of ibuprofen or naproxen.",
            "new",
        ),
        med("ondansetron", "4 mg", "every 8 hours as needed", ["as_needed"], "nausea", "", "new"),
        med("drospirenone-ethinyl estradiol", "3-0.02 mg", "once a day", ["morning"], "birth control", "", "continued"),
        med(
            "cyanocobalamin",
            "1000 mcg injection",
            "once a month",
            ["morning"],
            "vitamin B12 deficiency",
            "",
            "continued",
        ),
    ],
    stopped=["ibuprofen and naproxen: avoid until kidney function is rechecked"],
    follow_up=[
        ("Primary care doctor", "in 1 week", "blood test of kidney function and a urine check"),
        ("Hospital team (phone call)", "when the result is final", "final repeat blood culture result"),
    ],
    return_precautions=[
        "Fever over 101 after the first 2 days home, or shaking chills",
        "Vomiting that keeps you from taking the antibiotic",
        "Worse flank pain",
        "Dizziness or fainting",
        "Making much less urine",
    ],
    activity=["Rest this week; return to classes and work after 48 hours without fever"],
    diet=["Drink 8 glasses of water a day"],
    pending=["Repeat blood cultures from day 2 (no growth to date)"],
    questions=[
        (
            "diagnosis_in_stay",
            "What infection made you so sick?",
            "A kidney infection that spread into the blood",
            "A simple bladder infection only",
            "A part-time barista",
        ),
        (
            "tests_treatments_in_stay",
            "What did the kidney ultrasound show?",
            "A swollen left kidney with no stone or abscess",
            "A large stone blocking the left kidney",
            "Two roommates",
        ),
        (
            "medication_in_stay",
            "How was the infection treated in the hospital?",
            "IV fluids and the IV antibiotic ceftriaxone",
            "Antibiotic pills only, from the first day",
            "Graduate student in chemistry",
        ),
        (
            "diagnosis_at_discharge",
            "Which other problem happened during your stay and has now recovered?",
            "Your kidney function dropped from dehydration and infection, then returned to normal",
            "A blood clot in the lung",
            "Drinks socially",
        ),
        (
            "medication_after_discharge",
            "How long should you take ciprofloxacin?",
            "Twice a day for 10 more days, to finish 14 days in total",
            "Until the fever goes away, then stop",
            "With two roommates",
        ),
        (
            "medication_after_discharge",
            "How should you time ciprofloxacin around milk, yogurt or antacids?",
            "Take it 2 hours before or 6 hours after them",
            "Take it together with them to protect your stomach",
            "Works part-time as a barista",
        ),
        (
            "medication_after_discharge",
            "Which pain medicines should you avoid until your kidney test is rechecked?",
            "Ibuprofen and naproxen",
            "Acetaminophen",
            "Shaking chills",
        ),
        (
            "return_precautions",
            "Which of these means you should come back to the hospital?",
            "Fever with shaking chills after the first 2 days, or vomiting so you cannot keep the antibiotic down",
            "Feeling a little tired for a few days",
            "A graduate student",
        ),
        (
            "care_after_discharge",
            "Why will you see your primary care doctor in 1 week?",
            "For a blood test of kidney function and a urine check",
            "To repeat the kidney ultrasound",
            "To work as a barista",
        ),
    ],
    reference=summary(
        medications=(
            "- Ciprofloxacin 500 mg, morning and evening for 10 more days (new): the antibiotic; keep it at least 2 hours before or 6 hours after dairy, calcium, iron or antacids.\n"
            "- Acetaminophen 650 mg up to every 6 hours if you have fever or pain (new).\n"
            "- Ondansetron 4 mg up to every 8 hours if you feel queasy (new).\n"
            "- Your birth control pill (drospirenone-ethinyl estradiol), once daily as before.\n"
            "- Your monthly vitamin B12 shot, as before.\n"
            "- Skip ibuprofen and naproxen until your kidney blood test is repeated."
        ),
        primary="Sepsis (a body-wide reaction to infection) from a left kidney infection, with E. coli bacteria in the blood",
        secondary="Short-term kidney strain from dehydration, now back to normal; low vitamin B12",
        condition=("Clear and thinking well", "Awake and alert", "Walking on your own"),
        instructions=(
            "Germs from a bladder infection climbed up to your left kidney and got into your bloodstream, which made your "
            "blood pressure fall. Fluids and antibiotics through the IV turned things around, and your kidneys have recovered. "
            "Because the germs reached your blood, you need two full weeks of antibiotics, so keep taking ciprofloxacin for the "
            "remaining 10 days. Dairy, calcium, iron and antacids stop it from working: leave 2 hours before or 6 hours after "
            "them. If the back of your heel or ankle starts to hurt, stop it and phone us. Acetaminophen is safe for aches; "
            "ibuprofen and naproxen are not, for now. Aim for 8 glasses of water daily and take it easy this week; go back to "
            "class or work once you have gone 2 days with no fever. Return if fever above 101 or shaking chills come back "
            "after your first 2 days at home, you cannot keep the pills down, the side pain gets worse, you feel faint, or you "
            "are passing much less urine."
        ),
        followup=(
            "See your primary care doctor in 1 week for a kidney blood test and a urine test. The hospital will phone you when "
            "the last blood culture is final."
        ),
    ),
)

# --- dc06: COPD (emphysema) exacerbation -------------------------------------------------------------------------

NOTE_DC06 = """\
Chief Complaint:
Shortness of breath and wheezing

History of Present Illness:
Ms. ___ is a 36-year-old woman with emphysema diagnosed at age 31, a former smoker, who had 5 days of worsening shortness of breath, wheezing and cough with more yellow-green sputum after a cold caught from her daughter. She was using albuterol every 2 hours. In the ED her oxygen saturation was 86% on room air. She received nebulized albuterol-ipratropium, IV methylprednisolone and oxygen by nasal cannula at 2 liters. Her father died of emphysema at age 58.

Past Medical History:
Emphysema (COPD) on fluticasone-salmeterol and albuterol; no prior hospital stays and no home oxygen. Miscarriage in the first trimester 6 years ago.

Social History:
Lives with her husband and 4-year-old daughter. Works as a hairdresser. Quit smoking 5 years ago after 15 pack-years. No alcohol.

Pertinent Results:
Chest x-ray - hyperinflated lungs, no pneumonia.
Respiratory viral panel - positive for rhinovirus.
Venous blood gas on arrival - pH 7.36, pCO2 48.
WBC 11.2.
Walking oxygen saturation on day 3 - 93% on room air.
Alpha-1 antitrypsin level and genotype - pending.

Brief Hospital Course:
# COPD exacerbation triggered by rhinovirus - treated with scheduled albuterol-ipratropium nebulizers, IV methylprednisolone for 2 days then prednisone 40 mg daily, and azithromycin for increased purulent sputum. Oxygen was weaned to room air by day 3, and she kept a saturation of 93% while walking. Inhaler technique was reviewed and tiotropium was added to her daily inhalers.
# Early-onset emphysema - given her age and her father's history, alpha-1 antitrypsin testing was sent.
She received the influenza vaccine and was referred to pulmonary rehabilitation.

Discharge Medications:
1. Prednisone 40 mg PO daily with breakfast for 3 more days
2. Azithromycin 250 mg PO daily for 2 more days
3. Fluticasone-salmeterol 250-50 mcg one inhalation BID (unchanged)
4. Tiotropium 2.5 mcg two inhalations once daily (new)
5. Albuterol 90 mcg MDI 2 puffs q4h PRN wheeze or shortness of breath, with spacer

Discharge Diagnosis:
Primary - acute exacerbation of COPD (emphysema) triggered by rhinovirus infection
Secondary - acute hypoxemia (resolved); early-onset emphysema, alpha-1 antitrypsin testing pending

Discharge Condition:
Mental status clear and coherent. Level of consciousness alert and interactive. Activity status ambulatory and independent.

Discharge Instructions:
Take prednisone with breakfast; it can raise appetite, disturb sleep or change mood. Rinse your mouth with water and spit after fluticasone-salmeterol. Use the spacer with albuterol. Avoid smoke and strong sprays; at the salon work with good ventilation and a mask. Walk every day at a comfortable pace. Return for shortness of breath at rest or not relieved by albuterol, needing albuterol more often than every 4 hours, blue lips or fingertips, confusion or unusual sleepiness, fever over 101, or coughing up blood.

Followup Instructions:
Primary care within 1 week. Pulmonology in 4 weeks to review the alpha-1 antitrypsin results and repeat breathing tests. Pulmonary rehabilitation will call to schedule.
"""

DC06 = case(
    "dc06",
    age=36,
    sex="female",
    source="synthetic; modelled on a Synthea patient's record (pulmonary emphysema, inhaler therapy)",
    note=NOTE_DC06,
    tests=[
        ("Chest x-ray", "overinflated lungs, no pneumonia"),
        ("Respiratory viral panel", "rhinovirus (common cold virus)"),
        ("Venous blood gas", "pH 7.36, pCO2 48"),
        ("White blood cell count", "11.2"),
        ("Walking oxygen saturation on day 3", "93% on room air"),
        ("Alpha-1 antitrypsin level and genotype", "pending"),
    ],
    treatments=[
        "Scheduled albuterol-ipratropium nebulizers",
        "IV methylprednisolone for 2 days, then prednisone",
        "Azithromycin for purulent sputum",
        "Oxygen by nasal cannula, weaned to room air by day 3",
        "Inhaler teaching; tiotropium added",
        "Influenza vaccine; referral to pulmonary rehabilitation",
    ],
    primary=["Acute exacerbation of COPD (emphysema) triggered by rhinovirus infection"],
    secondary=["Acute hypoxemia (resolved)", "Early-onset emphysema, alpha-1 antitrypsin testing pending"],
    medications=[
        med(
            "prednisone",
            "40 mg",
            "once a day with breakfast for 3 more days",
            ["morning"],
            "calms the airway inflammation of the flare",
            "May raise appetite, disturb sleep or change mood.",
            "new",
        ),
        med(
            "azithromycin",
            "250 mg",
            "once a day for 2 more days",
            ["morning"],
            "treats the chest infection (discolored sputum)",
            "",
            "new",
        ),
        med(
            "fluticasone-salmeterol",
            "250-50 mcg, one inhalation",
            "twice a day",
            ["morning", "evening"],
            "daily controller for COPD",
            "Rinse your mouth with water and spit after each use.",
            "continued",
        ),
        med(
            "tiotropium",
            "2.5 mcg, two inhalations",
            "once a day",
            ["morning"],
            "daily long-acting airway opener for COPD",
            "",
            "new",
        ),
        med(
            "albuterol",
            "90 mcg, 2 puffs",
            "every 4 hours as needed",
            ["as_needed"],
            "wheezing or shortness of breath",
            "Use with the spacer; needing it more often than every 4 hours is a reason to return.",
            "continued",
        ),
    ],
    stopped=[],
    follow_up=[
        ("Primary care doctor", "within 1 week", "check breathing after the flare"),
        ("Pulmonology", "in 4 weeks", "review alpha-1 antitrypsin results and repeat breathing tests"),
        ("Pulmonary rehabilitation", "they will call to schedule", "exercise and breathing training"),
    ],
    return_precautions=[
        "Shortness of breath at rest or not relieved by albuterol",
        "Needing albuterol more often than every 4 hours",
        "Blue lips or fingertips",
        "Confusion or unusual sleepiness",
        "Fever over 101 or coughing up blood",
    ],
    activity=[
        "Walk every day at a comfortable pace",
        "Avoid smoke and strong sprays; work with good ventilation and a mask",
        "Pulmonary rehabilitation",
    ],
    diet=["Regular diet"],
    pending=["Alpha-1 antitrypsin level and genotype"],
    questions=[
        (
            "diagnosis_in_stay",
            "What brought on this flare of your lung disease?",
            "A common cold virus (rhinovirus)",
            "Pneumonia seen on the chest x-ray",
            "A hairdresser",
        ),
        (
            "tests_treatments_in_stay",
            "What did the chest x-ray show?",
            "Overinflated lungs from emphysema, but no pneumonia",
            "Pneumonia in the right lung",
            "A 4-year-old daughter",
        ),
        (
            "medication_in_stay",
            "Which treatments helped your breathing in the hospital?",
            "Nebulizer breathing treatments, steroids, an antibiotic and oxygen",
            "A breathing tube and a ventilator",
            "The salon",
        ),
        (
            "tests_treatments_in_stay",
            "Which blood test result is still pending?",
            "Alpha-1 antitrypsin level and genotype",
            "The respiratory viral panel",
            "15 pack-years",
        ),
        (
            "diagnosis_at_discharge",
            "What is your diagnosis at discharge?",
            "A flare-up (exacerbation) of COPD/emphysema",
            "An asthma attack from allergies",
            "Her husband",
        ),
        (
            "medication_after_discharge",
            "How much longer do you take prednisone, and when?",
            "3 more days, 40 mg with breakfast",
            "3 more weeks, 40 mg at bedtime",
            "Quit smoking 5 years ago",
        ),
        (
            "medication_after_discharge",
            "Which new inhaler was added to your daily medicines?",
            "Tiotropium, two inhalations once a day",
            "Tiotropium, only when wheezing",
            "Rhinovirus",
        ),
        (
            "medication_after_discharge",
            "What should you do after using fluticasone-salmeterol?",
            "Rinse your mouth with water and spit",
            "Use it again right away with the spacer",
            "Works as a hairdresser",
        ),
        (
            "return_precautions",
            "Which of these is a reason to return to the emergency department?",
            "Shortness of breath at rest that albuterol does not relieve, or blue lips",
            "A little cough with sputum that is getting better",
            "Her father",
        ),
        (
            "care_after_discharge",
            "Who will review your alpha-1 antitrypsin results with you?",
            "The lung specialists (pulmonology) in 4 weeks",
            "The emergency department tomorrow",
            "Her daughter",
        ),
    ],
    reference=summary(
        medications=(
            "- Prednisone 40 mg with breakfast for 3 more days (new): a steroid to settle the swollen airways; it may make you hungry, restless at night or moody.\n"
            "- Azithromycin 250 mg once a day for 2 more days (new): antibiotic for the chest infection.\n"
            "- Fluticasone-salmeterol 250-50, one breath in the morning and one at night (same as before): rinse and spit afterwards.\n"
            "- Tiotropium 2.5 mcg, two breaths once a day (new): keeps your airways open all day.\n"
            "- Albuterol, 2 puffs through the spacer when you are wheezy or short of breath, no more than every 4 hours."
        ),
        primary="A flare-up of your emphysema (COPD), set off by a cold virus",
        secondary="Low oxygen during the flare, now normal on room air; emphysema at a young age, with a blood test for alpha-1 antitrypsin still to come back",
        condition=("Clear and thinking well", "Awake and alert", "Walking on your own"),
        instructions=(
            "A cold virus inflamed your already-damaged airways, so your oxygen dropped. Breathing treatments, steroids, an "
            "antibiotic and a few days of oxygen brought you back to normal air, and you can walk without oxygen. We added a "
            "new once-a-day inhaler, tiotropium, to your twice-daily fluticasone-salmeterol, which you still use; rinse your "
            "mouth after that one. Finish the prednisone and azithromycin. Because emphysema this early is unusual and ran in "
            "your father, we sent a blood test for alpha-1 antitrypsin; the lung doctors will explain the result. Stay away "
            "from smoke and strong sprays, and at the salon keep air moving and wear a mask. Walk each day at an easy pace. "
            "Come back if you are breathless sitting still or albuterol does not help, you need albuterol more than every 4 "
            "hours, your lips or fingers turn blue, you feel confused or very drowsy, you get a fever over 101, or you cough "
            "up blood."
        ),
        followup=(
            "See your primary care doctor within a week. Lung clinic (pulmonology) in 4 weeks for the alpha-1 results and new "
            "breathing tests. Pulmonary rehab will phone you with a start date."
        ),
    ),
)

# --- dc07: asthma exacerbation with steroid-induced hyperglycemia ------------------------------------------------

NOTE_DC07 = """\
Chief Complaint:
Wheezing and chest tightness

History of Present Illness:
Mr. ___ is a 46-year-old man with asthma since his teens and type 2 diabetes diagnosed 6 months ago, on metformin, who had 3 days of wheezing, chest tightness and cough after a cold. He had stopped his budesonide nebulizer months ago and was using albuterol every 2 hours. In the ED his peak flow was 210 L/min (about 40% of predicted) and oxygen saturation 91%. He received continuous albuterol, ipratropium, IV methylprednisolone and one dose of IV magnesium sulfate, with partial improvement, and was admitted to medicine.

Past Medical History:
Asthma. Type 2 diabetes and metabolic syndrome. Iron deficiency anemia on ferrous sulfate. Right clavicle fracture 10 years ago.

Social History:
Lives alone in an apartment with his cat. Works as a forklift operator in a dusty warehouse. Quit smoking 8 years ago. No alcohol.

Pertinent Results:
Peak flow 210 L/min on arrival, 420 L/min (about 80% of predicted) at discharge.
Chest x-ray - no pneumonia.
Influenza and COVID-19 tests - negative.
Blood glucose up to 342 mg/dL on steroids. Hemoglobin A1c 7.9%.
Hemoglobin 12.1.

Brief Hospital Course:
# Asthma exacerbation - triggered by a viral infection and by stopping his controller medicine. Treated with albuterol-ipratropium nebulizers and methylprednisolone 60 mg IV every 12 hours, changed to prednisone 40 mg daily on day 2. Started budesonide-formoterol as a daily controller, and inhaler technique with a spacer was taught. He was given a written asthma action plan and a peak flow meter.
# Steroid-induced hyperglycemia and type 2 diabetes - glucose rose to the 300s on steroids and was treated with insulin lispro correction doses and bedtime insulin glargine in the hospital. No insulin is needed at home. With an A1c of 7.9%, metformin was increased. He was taught to use a glucose meter.

Discharge Medications:
1. Prednisone 40 mg PO daily with breakfast for 3 more days
2. Budesonide-formoterol 160-4.5 mcg 2 puffs BID (new)
3. Albuterol 90 mcg MDI 2 puffs q4h PRN wheeze, with spacer
4. Metformin ER 1000 mg PO with dinner (increased from 500 mg)
5. Ferrous sulfate 325 mg PO daily (unchanged)
Stopped - budesonide nebulizer solution (replaced by budesonide-formoterol)

Discharge Diagnosis:
Primary - acute asthma exacerbation triggered by a viral respiratory infection
Secondary - steroid-induced hyperglycemia; type 2 diabetes, A1c 7.9%; iron deficiency anemia

Discharge Condition:
Mental status clear and coherent. Level of consciousness alert and interactive. Activity status ambulatory and independent.

Discharge Instructions:
Use budesonide-formoterol every day, even when you feel well, and rinse your mouth afterwards. Check your blood sugar before breakfast and before dinner while on prednisone and for 2 days after. Keep the cat out of your bedroom, and wear a mask at the warehouse. Follow a diabetic diet and avoid sugary drinks. Return to work after 3 days if breathing allows. Go to the emergency department if you need albuterol more often than every 4 hours, your peak flow is below 210, you cannot speak in full sentences, your lips turn blue, or your blood sugar is over 300 twice in a row or you feel very thirsty or confused.

Followup Instructions:
Primary care in 1 week to review asthma and blood sugars. Asthma clinic in 4 to 6 weeks for breathing tests. Diabetes education class; the clinic will call.
"""

DC07 = case(
    "dc07",
    age=46,
    sex="male",
    source="synthetic; modelled on a Synthea emergency admission for asthma (with type 2 diabetes)",
    note=NOTE_DC07,
    tests=[
        ("Peak flow", "210 L/min (about 40% of predicted) on arrival, 420 L/min (about 80%) at discharge"),
        ("Chest x-ray", "no pneumonia"),
        ("Influenza and COVID-19 tests", "negative"),
        ("Blood glucose", "up to 342 mg/dL on steroids"),
        ("Hemoglobin A1c", "7.9%"),
        ("Hemoglobin", "12.1"),
    ],
    treatments=[
        "Continuous albuterol, ipratropium and one dose of IV magnesium sulfate in the ED",
        "Albuterol-ipratropium nebulizers",
        "IV methylprednisolone, then prednisone",
        "Insulin lispro correction doses and bedtime insulin glargine for steroid-induced high blood sugar",
        "Budesonide-formoterol started; spacer teaching, asthma action plan and peak flow meter",
        "Glucose meter teaching",
    ],
    primary=["Acute asthma exacerbation triggered by a viral respiratory infection"],
    secondary=["Steroid-induced hyperglycemia", "Type 2 diabetes, A1c 7.9%", "Iron deficiency anemia"],
    medications=[
        med(
            "prednisone",
            "40 mg",
            "once a day with breakfast for 3 more days",
            ["morning"],
            "calms airway inflammation",
            "Raises blood sugar: check sugars while taking it.",
            "new",
        ),
        med(
            "budesonide-formoterol",
            "160-4.5 mcg, 2 puffs",
            "twice a day",
            ["morning", "evening"],
            "daily asthma controller",
            "Use every day even when well; rinse your mouth afterwards.",
            "new",
        ),
        med(
            "albuterol",
            "90 mcg, 2 puffs",
            "every 4 hours as needed",
            ["as_needed"],
            "wheezing",
            "Use with the spacer; needing it more often than every 4 hours means go to the emergency department.",
            "continued",
        ),
        med(
            "metformin ER",
            "1000 mg",
            "once a day with dinner",
            ["evening"],
            "type 2 diabetes",
            "Increased from 500 mg.",
            "changed",
        ),
        med("ferrous sulfate", "325 mg", "once a day", ["morning"], "iron deficiency anemia", "", "continued"),
    ],
    stopped=["budesonide nebulizer solution (replaced by budesonide-formoterol)"],
    follow_up=[
        ("Primary care doctor", "in 1 week", "review asthma and blood sugars"),
        ("Asthma clinic", "in 4 to 6 weeks", "breathing tests"),
        ("Diabetes education class", "the clinic will call", "learn to manage diabetes"),
    ],
    return_precautions=[
        "Needing albuterol more often than every 4 hours",
        "Peak flow below 210",
        "Cannot speak in full sentences or lips turn blue",
        "Blood sugar over 300 twice in a row",
        "Feeling very thirsty or confused",
    ],
    activity=[
        "Return to work after 3 days if breathing allows",
        "Keep the cat out of the bedroom",
        "Wear a mask at the warehouse",
    ],
    diet=["Diabetic diet; avoid sugary drinks"],
    pending=[],
    questions=[
        (
            "diagnosis_in_stay",
            "Why were you admitted to the hospital?",
            "A severe asthma attack set off by a cold virus",
            "A flare of COPD from smoking",
            "A forklift operator",
        ),
        (
            "medication_in_stay",
            "Why did you need insulin in the hospital?",
            "The steroid medicine pushed your blood sugar up",
            "Your blood sugar was too low",
            "Lives alone with his cat",
        ),
        (
            "tests_treatments_in_stay",
            "How did your peak flow change during the stay?",
            "It improved from about 40% to about 80% of predicted",
            "It fell from about 80% to about 40% of predicted",
            "A dusty warehouse",
        ),
        (
            "diagnosis_at_discharge",
            "What did your A1c show about your diabetes?",
            "It is 7.9%, so your diabetes needs better control",
            "It is normal, so you no longer have diabetes",
            "Right clavicle fracture",
        ),
        (
            "medication_after_discharge",
            "How should you use budesonide-formoterol?",
            "2 puffs twice a day, every day, even when you feel well",
            "2 puffs once a week",
            "With a forklift",
        ),
        (
            "medication_after_discharge",
            "What change was made to metformin?",
            "The dose went up to 1000 mg once a day with dinner",
            "It was stopped because of the steroids",
            "A peak flow meter",
        ),
        (
            "care_after_discharge",
            "When should you check your blood sugar while on prednisone?",
            "Before breakfast and before dinner",
            "Once a month",
            "In an apartment",
        ),
        (
            "return_precautions",
            "When should you go to the emergency department?",
            "If you need albuterol more often than every 4 hours or cannot speak in full sentences",
            "If you need albuterol once for a mild wheeze",
            "Quit smoking 8 years ago",
        ),
        (
            "care_after_discharge",
            "What should you do about your cat?",
            "Keep the cat out of your bedroom",
            "Let the cat sleep in your bed",
            "Ferrous sulfate 325 mg",
        ),
    ],
    reference=summary(
        medications=(
            "- Prednisone 40 mg with breakfast for 3 more days (new): steroid for the airways; it raises blood sugar.\n"
            "- Budesonide-formoterol 160-4.5, 2 puffs morning and night (new): your everyday controller inhaler, even on good days; rinse your mouth after.\n"
            "- Albuterol, 2 puffs with the spacer when wheezy, no closer than every 4 hours: your rescue inhaler.\n"
            "- Metformin ER 1000 mg with dinner (higher dose than the 500 mg you took before): diabetes.\n"
            "- Ferrous sulfate 325 mg each morning (same as before): iron.\n"
            "- The budesonide nebulizer is no longer needed."
        ),
        primary="A serious asthma attack brought on by a cold virus",
        secondary="High blood sugar caused by the steroid medicine; type 2 diabetes that is above target (A1c 7.9%); low iron",
        condition=("Clear and thinking well", "Awake and alert", "Walking on your own"),
        instructions=(
            "A cold, plus going months without your preventer medicine, let your airways tighten badly. Breathing treatments "
            "and steroids opened them up, and your peak flow doubled. To stop this happening again, use the new "
            "budesonide-formoterol inhaler morning and night every day, not only when you feel bad. The steroids drove your "
            "sugar into the 300s, which needed insulin in hospital but not at home; your A1c also shows your diabetes needs "
            "tighter control, so metformin is now 1000 mg. Test your sugar before breakfast and dinner until 2 days after the "
            "last prednisone. Keep your cat out of the bedroom, wear a mask in the warehouse, and cut out sugary drinks. You "
            "can go back to work in 3 days if your breathing is good. Get emergency care if albuterol is needed sooner than 4 "
            "hours apart, your peak flow drops under 210, you cannot finish a sentence, your lips look blue, your sugar reads over "
            "300 twice running, or you feel very thirsty or muddled."
        ),
        followup=(
            "In a week, see your primary care doctor to look over your breathing and your sugar readings. The asthma clinic "
            "will test your lungs in about 4 to 6 weeks. Expect a phone call about a diabetes class."
        ),
    ),
)

# --- dc08: opioid overdose, buprenorphine started ----------------------------------------------------------------

NOTE_DC08 = """\
Chief Complaint:
Unresponsive after opioid use

History of Present Illness:
Mr. ___ is a 40-year-old man with opioid use disorder and prior detoxification admissions who was found unresponsive by his brother after using what he believed was heroin. His brother gave two doses of naloxone nasal spray, and EMS gave more naloxone for a respiratory rate of 6. In the ED he woke up but became sleepy again with slow breathing, so a naloxone infusion was started and he was admitted to the ICU.

Past Medical History:
Opioid use disorder, with several prior detox stays. Chronic migraine. Wrist fracture 3 years ago.

Social History:
Lives with his brother. Works on and off in construction. Smokes half a pack of cigarettes daily. Uses opioids by smoking and occasionally injecting. No alcohol for 2 years.

Pertinent Results:
Urine drug screen - positive for fentanyl and opiates. Blood alcohol - undetectable.
CK 1450 on admission, 380 at discharge. Creatinine normal.
Chest x-ray - no pneumonia.
ECG - normal, QTc 420.
HIV antibody - negative. Hepatitis C antibody - positive; hepatitis C RNA pending.

Brief Hospital Course:
# Opioid overdose with respiratory depression - naloxone infusion in the ICU for 14 hours, then weaned off; breathing stayed normal and he moved to the medical floor.
# Opioid use disorder - the addiction medicine team met with him and he chose to start treatment. Buprenorphine-naloxone was started once he was in moderate withdrawal and increased to 16-4 mg daily without side effects. He and his brother were taught overdose response and given a naloxone kit.
# Mild rhabdomyolysis from lying on the floor - treated with IV fluids; CK improved.
# Positive hepatitis C antibody - RNA sent; follow up with primary care.
# Tobacco use - nicotine patch started.

Discharge Medications:
1. Buprenorphine-naloxone 8-2 mg film, 2 films SL once daily (7-day supply)
2. Naloxone 4 mg nasal spray, 1 spray in a nostril for suspected overdose, may repeat in 2 to 3 minutes
3. Nicotine patch 14 mg daily
4. Sumatriptan 50 mg PO at migraine onset, may repeat once after 2 hours (unchanged)

Discharge Diagnosis:
Primary - opioid (fentanyl) overdose with respiratory depression; opioid use disorder, started on buprenorphine-naloxone
Secondary - mild rhabdomyolysis (resolved); positive hepatitis C antibody; tobacco use; chronic migraine

Discharge Condition:
Mental status clear and coherent. Level of consciousness alert and interactive. Activity status ambulatory and independent.

Discharge Instructions:
Place the buprenorphine-naloxone films under your tongue and let them dissolve completely; do not chew or swallow them, and do not eat or drink until they are gone. Do not mix buprenorphine with alcohol, benzodiazepines or other opioids, because together they can stop your breathing. Never use alone, and keep the naloxone where your brother can find it. If you are very sleepy, hard to wake or breathing slowly, someone should give naloxone and call 911. Also return for chest pain, fever or a red, painful skin area at an injection site, or severe withdrawal.

Followup Instructions:
Addiction medicine bridge clinic in 3 days, before the 7-day prescription runs out. Primary care in 2 weeks for the hepatitis C RNA result and treatment referral.
"""

DC08 = case(
    "dc08",
    age=40,
    sex="male",
    source="synthetic; modelled on Synthea overdose and detoxification stays (dependent drug abuse, overdose)",
    note=NOTE_DC08,
    tests=[
        ("Urine drug screen", "positive for fentanyl and opiates"),
        ("Blood alcohol", "undetectable"),
        ("CK (muscle enzyme)", "1450 on admission, 380 at discharge"),
        ("Chest x-ray", "no pneumonia"),
        ("ECG", "normal, QTc 420"),
        ("HIV antibody", "negative"),
        ("Hepatitis C antibody", "positive; RNA pending"),
    ],
    treatments=[
        "Naloxone infusion in the ICU for 14 hours",
        "Addiction medicine consultation; buprenorphine-naloxone started and increased to 16-4 mg daily",
        "IV fluids for mild rhabdomyolysis",
        "Overdose response teaching and a naloxone kit for him and his brother",
        "Nicotine patch",
    ],
    primary=[
        "Opioid (fentanyl) overdose with respiratory depression",
        "Opioid use disorder, started on buprenorphine-naloxone",
    ],
    secondary=["Mild rhabdomyolysis (resolved)", "Positive hepatitis C antibody", "Tobacco use", "Chronic migraine"],
    medications=[
        med(
            "buprenorphine-naloxone",
            "8-2 mg film, 2 films (16-4 mg)",
            "once a day",
            ["morning"],
            "treats opioid use disorder and prevents withdrawal and cravings",
            "Under the tongue, let dissolve completely; do not chew or swallow; no food or drink until gone. Never combine with alcohol, benzodiazepines or other opioids. 7-day supply.",
            "new",
        ),
        med(
            "naloxone nasal spray",
            "4 mg, 1 spray in a nostril",
            "once for suspected overdose; may repeat in 2 to 3 minutes",
            ["as_needed"],
            "reverses an opioid overdose",
            "Someone else gives it if you are very sleepy, hard to wake or breathing slowly, then calls 911.",
            "new",
        ),
        med(
            "nicotine patch",
            "14 mg",
            "once a day",
            ["morning"],
            "helps with quitting smoking",
            "Put a new patch on a different skin spot each day.",
            "new",
        ),
        med(
            "sumatriptan",
            "50 mg",
            "at migraine onset; may repeat once after 2 hours",
            ["as_needed"],
            "migraine",
            "",
            "continued",
        ),
    ],
    stopped=[],
    follow_up=[
        (
            "Addiction medicine bridge clinic",
            "in 3 days, before the 7-day prescription runs out",
            "continue buprenorphine treatment",
        ),
        ("Primary care doctor", "in 2 weeks", "hepatitis C RNA result and treatment referral"),
    ],
    return_precautions=[
        "Very sleepy, hard to wake or breathing slowly: someone gives naloxone and calls 911",
        "Chest pain",
        "Fever or a red, painful skin area at an injection site",
        "Severe withdrawal",
    ],
    activity=["Never use alone", "Keep the naloxone where your brother can find it"],
    diet=["Regular diet"],
    pending=["Hepatitis C RNA"],
    questions=[
        (
            "diagnosis_in_stay",
            "Why were you admitted to the ICU?",
            "An opioid overdose that slowed your breathing and needed a naloxone drip",
            "An alcohol overdose",
            "Works on and off in construction",
        ),
        (
            "tests_treatments_in_stay",
            "Which drug did the urine drug screen find?",
            "Fentanyl",
            "Alcohol",
            "His brother",
        ),
        (
            "medication_in_stay",
            "Which treatment for opioid use disorder was started in the hospital?",
            "Buprenorphine-naloxone",
            "A naloxone drip to take at home",
            "Chronic migraine",
        ),
        (
            "diagnosis_at_discharge",
            "Which blood test was positive and needs follow-up?",
            "Hepatitis C antibody",
            "HIV antibody",
            "Construction",
        ),
        (
            "medication_after_discharge",
            "How do you take buprenorphine-naloxone?",
            "Two films under the tongue once a day, letting them dissolve without chewing or swallowing",
            "Swallow two films with water twice a day",
            "Half a pack of cigarettes daily",
        ),
        (
            "medication_after_discharge",
            "What is the naloxone nasal spray for?",
            "For someone to give you if you overdose, and then call 911",
            "For your migraine headaches",
            "For construction",
        ),
        (
            "medication_after_discharge",
            "What must you NOT combine with buprenorphine?",
            "Alcohol, benzodiazepines or other opioids",
            "Water after the film has dissolved",
            "A wrist fracture",
        ),
        (
            "return_precautions",
            "When should someone give you naloxone and call 911?",
            "If you are very sleepy, hard to wake, or breathing slowly",
            "If you have a mild headache",
            "No alcohol for 2 years",
        ),
        (
            "care_after_discharge",
            "When is your addiction medicine clinic visit?",
            "In 3 days, before the 7-day prescription runs out",
            "In 3 months",
            "In the ICU for 14 hours",
        ),
    ],
    reference=summary(
        medications=(
            "- Buprenorphine-naloxone 8-2 mg films: 2 films under your tongue once a day (new, 7 days' worth). Let them melt fully; no chewing, swallowing, food or drink until they are gone. Never take with alcohol, benzodiazepines or other opioids.\n"
            "- Naloxone 4 mg nose spray (new): for someone else to spray in your nose if you overdose; a second spray after 2 to 3 minutes if needed, and call 911.\n"
            "- Nicotine patch 14 mg, one new patch daily (new): to help you stop smoking.\n"
            "- Sumatriptan 50 mg when a migraine starts, one repeat after 2 hours if needed (same as before)."
        ),
        primary="Overdose from fentanyl that slowed your breathing; opioid addiction (opioid use disorder), now treated with buprenorphine-naloxone",
        secondary="Mild muscle damage from lying on the floor, now healed; a positive screening test for hepatitis C; smoking; migraines",
        condition=("Clear and thinking well", "Awake and alert", "Walking on your own"),
        instructions=(
            "The drug you used contained fentanyl, which slowed your breathing so much that you needed a naloxone drip in "
            "intensive care for 14 hours. Your brother's quick use of naloxone helped save your life. You chose to start "
            "buprenorphine-naloxone, which eases cravings and withdrawal; take it every day as taught, melting the films under "
            "your tongue. Mixing it with alcohol, benzodiazepines or other opioids can make you stop breathing. If you do use, "
            "never be alone, and keep the naloxone spray somewhere your brother knows. Anyone who finds you very drowsy, hard to "
            "rouse or barely breathing should spray naloxone and call 911. Come back for chest pain, fever, a hot red sore spot "
            "where you injected, or withdrawal you cannot manage. Your hepatitis C screen was positive, so a second test will "
            "show whether the virus is active; it is treatable."
        ),
        followup=(
            "Go to the addiction medicine bridge clinic in 3 days, before your week of buprenorphine runs out. See primary care "
            "in 2 weeks for the hepatitis C result and a referral for treatment."
        ),
    ),
)

# --- dc09: mandibular condyle fracture, closed reduction with maxillomandibular fixation -------------------------

NOTE_DC09 = """\
Chief Complaint:
Jaw pain and teeth not fitting together after a bicycle fall

History of Present Illness:
Mr. ___ is a 36-year-old man who fell from his bicycle and struck his chin on the pavement. He was wearing a helmet and did not lose consciousness. He had left jaw pain in front of the ear, could not bring his teeth together normally, and had a 2 cm chin laceration. CT showed a minimally displaced fracture of the left mandibular condyle. The chin laceration was closed in the ED with 5 sutures and he was admitted to oral and maxillofacial surgery.

Past Medical History:
Osteoarthritis of the hands. No prior surgeries.

Social History:
Lives with his partner. Works as a delivery driver. Never smoker. Drinks 2 to 3 beers on weekends. Cycles to work.

Pertinent Results:
CT maxillofacial - minimally displaced fracture of the left mandibular condylar neck; no other facial fractures; teeth intact.
CT head - no bleeding or skull fracture.
Post-operative panoramic x-ray - good alignment with arch bars in place.
Tetanus immunization up to date.

Brief Hospital Course:
He was taken to the operating room for closed reduction and maxillomandibular fixation - arch bars were wired to the upper and lower teeth and elastic bands hold the jaw closed in the correct bite. He received IV dexamethasone for swelling and IV ondansetron for nausea, because vomiting with the jaw banded shut is dangerous. Scissors were kept at the bedside to cut the bands in an emergency. He was observed overnight for his airway without problems. Pain was controlled with liquid acetaminophen and ibuprofen and a few doses of liquid oxycodone. Nutrition met with him about a full liquid diet, which he tolerated well.

Discharge Medications:
1. Acetaminophen 160 mg/5 mL liquid, 20 mL (640 mg) q6h
2. Ibuprofen 100 mg/5 mL liquid, 20 mL (400 mg) q6h PRN pain, after a liquid meal
3. Oxycodone 5 mg/5 mL liquid, 5 mL (5 mg) q6h PRN severe pain
4. Ondansetron 4 mg ODT q8h PRN nausea
5. Chlorhexidine 0.12% oral rinse, 15 mL swish for 30 seconds and spit, BID

Discharge Diagnosis:
Primary - left mandibular condyle fracture, status post closed reduction and maxillomandibular fixation
Secondary - chin laceration, repaired; hand osteoarthritis

Discharge Condition:
Mental status clear and coherent. Level of consciousness alert and interactive. Activity status ambulatory and independent.

Discharge Instructions:
Carry your scissors at all times. If you vomit or cannot breathe, cut the elastic bands and call 911 or come to the emergency department. Take ondansetron at the first sign of nausea. Follow a full liquid diet for about 6 weeks, no chewing; blend foods and drink protein shakes, about 6 small meals a day. Brush the outside of your teeth with a soft toothbrush after every meal and use the chlorhexidine rinse twice a day. Sleep with your head raised. No alcohol, which can cause vomiting, and no driving while taking oxycodone. No cycling or contact sports for 6 weeks. Return for trouble breathing, vomiting, bleeding from the mouth that does not stop, fever, increasing swelling or pus, or if the bands break or your bite shifts.

Followup Instructions:
Oral and maxillofacial surgery clinic in 1 week to check the bands and bite and to remove the chin sutures. The arch bars will be removed in about 6 weeks.
"""

DC09 = case(
    "dc09",
    age=36,
    sex="male",
    source="synthetic; modelled on a Synthea emergency stay (fracture of mandible, closed reduction)",
    note=NOTE_DC09,
    tests=[
        (
            "CT maxillofacial",
            "minimally displaced fracture of the left jaw joint (condylar neck); teeth intact; no other facial fractures",
        ),
        ("CT head", "no bleeding or skull fracture"),
        ("Panoramic x-ray after surgery", "good alignment with arch bars in place"),
        ("Tetanus status", "up to date"),
    ],
    treatments=[
        "Chin laceration closed with 5 sutures in the ED",
        "Closed reduction with maxillomandibular fixation: arch bars and elastic bands",
        "IV dexamethasone for swelling; IV ondansetron for nausea",
        "Overnight airway observation with scissors at the bedside",
        "Full liquid diet teaching by nutrition",
    ],
    primary=["Left mandibular condyle fracture, status post closed reduction and maxillomandibular fixation"],
    secondary=["Chin laceration, repaired", "Hand osteoarthritis"],
    medications=[
        med(
            "acetaminophen liquid",
            "640 mg (20 mL of 160 mg/5 mL)",
            "every 6 hours",
            ["morning", "afternoon", "evening", "bedtime"],
            "jaw pain",
            "",
            "new",
        ),
        med(
            "ibuprofen liquid",
            "400 mg (20 mL of 100 mg/5 mL)",
            "every 6 hours as needed",
            ["as_needed"],
            "jaw pain and swelling",
            "Take after a liquid meal.",
            "new",
        ),
        med(
            "oxycodone liquid",
            "5 mg (5 mL of 5 mg/5 mL)",
            "every 6 hours as needed for severe pain",
            ["as_needed"],
            "severe pain",
            "No driving or alcohol while taking it.",
            "new",
        ),
        med(
            "ondansetron",
            "4 mg dissolving tablet",
            "every 8 hours as needed",
            ["as_needed"],
            "nausea; vomiting is dangerous with the jaw banded shut",
            "Take at the first sign of nausea.",
            "new",
        ),
        med(
            "chlorhexidine 0.12% oral rinse",
            "15 mL",
            "twice a day",
            ["morning", "evening"],
            "keeps the mouth clean around the arch bars",
            "Swish for 30 seconds and spit; do not swallow.",
            "new",
        ),
    ],
    stopped=[],
    follow_up=[
        ("Oral and maxillofacial surgery clinic", "in 1 week", "check the bands and bite; remove the chin sutures"),
        ("Oral and maxillofacial surgery", "in about 6 weeks", "remove the arch bars"),
    ],
    return_precautions=[
        "Trouble breathing or vomiting: cut the bands and call 911 or come to the emergency department",
        "Bleeding from the mouth that does not stop",
        "Fever, increasing swelling or pus",
        "Bands break or the bite shifts",
    ],
    activity=[
        "Carry scissors at all times",
        "Soft toothbrush on the outside of the teeth after every meal; chlorhexidine rinse twice a day",
        "Sleep with the head raised",
        "No cycling or contact sports for 6 weeks",
        "No driving while taking oxycodone; no alcohol",
    ],
    diet=[
        "Full liquid diet for about 6 weeks, no chewing: blended foods and protein shakes, about 6 small meals a day"
    ],
    pending=[],
    questions=[
        (
            "diagnosis_in_stay",
            "What injury did you have?",
            "A broken jaw near the left jaw joint from a bicycle fall",
            "A broken cheekbone on the right side",
            "A delivery driver",
        ),
        (
            "tests_treatments_in_stay",
            "How was your jaw fixed?",
            "Bars wired to the teeth with elastic bands holding the jaw closed, without cutting the skin",
            "Metal plates put in through a cut in the skin",
            "2 to 3 beers on weekends",
        ),
        (
            "medication_in_stay",
            "Why were you given ondansetron in the hospital?",
            "To prevent vomiting, which is dangerous with the jaw banded shut",
            "To treat jaw pain",
            "Cycles to work",
        ),
        (
            "diagnosis_at_discharge",
            "Besides the jaw fracture, what other injury was treated?",
            "A chin cut closed with 5 sutures",
            "Bleeding inside the head",
            "His partner",
        ),
        (
            "care_after_discharge",
            "What must you carry with you at all times?",
            "Scissors to cut the elastic bands in an emergency",
            "A spare set of elastic bands to add at night",
            "A helmet and pavement",
        ),
        (
            "care_after_discharge",
            "What diet should you follow, and for how long?",
            "A full liquid diet with no chewing, for about 6 weeks",
            "Soft foods you chew gently, starting tomorrow",
            "Osteoarthritis of the hands",
        ),
        (
            "medication_after_discharge",
            "How much acetaminophen liquid do you take, and how often?",
            "20 mL every 6 hours",
            "20 mL every hour",
            "A delivery",
        ),
        (
            "medication_after_discharge",
            "How do you use the chlorhexidine rinse?",
            "Swish 15 mL for 30 seconds and spit, twice a day",
            "Swallow 15 mL twice a day",
            "Never smoker",
        ),
        (
            "return_precautions",
            "If you start vomiting or cannot breathe, what should you do?",
            "Cut the elastic bands and call 911 or come to the emergency department",
            "Lie flat and wait for it to pass",
            "Struck his chin on the pavement",
        ),
        (
            "care_after_discharge",
            "When will the arch bars be removed?",
            "In about 6 weeks",
            "At the clinic visit in 1 week",
            "In the pavement",
        ),
    ],
    reference=summary(
        medications=(
            "- Acetaminophen liquid (160 mg per 5 mL): 20 mL every 6 hours (new), for pain.\n"
            "- Ibuprofen liquid (100 mg per 5 mL): 20 mL up to every 6 hours if needed, after a liquid meal (new).\n"
            "- Oxycodone liquid (5 mg per 5 mL): 5 mL up to every 6 hours only for bad pain (new); no driving or alcohol with it.\n"
            "- Ondansetron 4 mg melt-away tablet up to every 8 hours as soon as you feel sick (new).\n"
            "- Chlorhexidine 0.12% mouth rinse: swish 15 mL for 30 seconds, then spit, morning and night (new)."
        ),
        primary="Broken lower jaw at the left jaw joint, set without an incision by wiring bars to your teeth and banding your jaw shut",
        secondary="Cut on the chin, stitched; arthritis in the hands",
        condition=("Clear and thinking well", "Awake and alert", "Walking on your own"),
        instructions=(
            "Your fall cracked the lower jaw just below the left joint. The surgeons lined your teeth up into their normal bite "
            "and are holding them there with bars on your teeth and rubber bands, so the bone can heal over about 6 weeks. "
            "Because you cannot open your mouth, throwing up or choking is the big danger: keep your scissors on you everywhere, "
            "and if you vomit or cannot get air, snip the bands and call 911 or get to the emergency room. Take the anti-sickness "
            "tablet the moment you feel queasy, and skip alcohol. Everything you eat must be liquid, so blend meals and use "
            "protein drinks, about six small ones a day. Clean the front of your teeth with a soft brush after each meal and "
            "use the mouth rinse twice daily. Prop your head up in bed. No bike riding or contact sports for 6 weeks, and no "
            "driving after oxycodone. Come back for breathing trouble, vomiting, mouth bleeding that will not stop, fever, "
            "growing swelling or pus, or snapped bands or a bite that feels off."
        ),
        followup=(
            "Go back to the jaw surgery team (oral and maxillofacial surgery) a week from now: they will check your bite and "
            "bands and take out the chin stitches. The bars come off in about 6 weeks."
        ),
    ),
)

# --- dc10: hip fracture after a fall, hemiarthroplasty -----------------------------------------------------------

NOTE_DC10 = """\
Chief Complaint:
Right hip pain after a fall

History of Present Illness:
Ms. ___ is a 77-year-old woman with mild Alzheimer's dementia, osteoporosis, coronary artery disease with a stent on clopidogrel, and hypertension, who tripped on a rug at night walking to the bathroom. She could not stand, and her right leg was shortened and turned outward. X-ray showed a displaced right femoral neck fracture.

Past Medical History:
Alzheimer's disease, mild, on galantamine. Osteoporosis; took alendronate for several years, stopped 5 years ago. Coronary artery disease with a stent 6 years ago, on clopidogrel. Hypertension on lisinopril. Wears dentures.

Social History:
Widowed retired librarian. Lives with her daughter in a one-floor home. Walked without an aid before the fall. No alcohol.

Pertinent Results:
Right hip x-ray - displaced femoral neck fracture. Post-operative x-ray - hemiarthroplasty in good position.
CT head - no bleeding.
Hemoglobin 11.4 on admission, 8.1 after surgery, 9.3 after transfusion.
Vitamin D 16 ng/mL (low). Calcium and creatinine normal.

Brief Hospital Course:
# Right femoral neck fracture - right hip hemiarthroplasty (partial hip replacement) on hospital day 2; clopidogrel was continued because of her stent. Weight bearing as tolerated with posterior hip precautions. She walked 50 feet with a rolling walker with physical therapy. Enoxaparin started to prevent blood clots.
# Acute blood loss anemia - one unit of packed red blood cells on post-operative day 1.
# Post-operative delirium - confused at night on days 1 and 2; managed without sedatives (glasses, daylight, sleep routine, daughter at the bedside); back to her baseline by discharge.
# Hypertension - blood pressure 100s/60s after surgery, so lisinopril was held.
# Osteoporosis with vitamin D deficiency - vitamin D started; bone-strengthening treatment to be discussed at follow-up.
Discharged home with her daughter, with home physical therapy and nursing.

Discharge Medications:
1. Enoxaparin 40 mg subcutaneous injection daily for 28 days
2. Acetaminophen 1000 mg PO q8h
3. Oxycodone 2.5 mg PO q6h PRN severe pain
4. Senna 8.6 mg PO at bedtime
5. Cholecalciferol (vitamin D3) 2000 units PO daily
6. Galantamine 4 mg PO BID with meals (unchanged)
7. Clopidogrel 75 mg PO daily (unchanged)
Held - lisinopril 10 mg daily

Discharge Diagnosis:
Primary - displaced right femoral neck fracture after a fall, status post right hip hemiarthroplasty
Secondary - post-operative delirium (resolved); acute blood loss anemia; osteoporosis with vitamin D deficiency; Alzheimer's dementia; coronary artery disease; hypertension

Discharge Condition:
Mental status confused at times, at her baseline per her daughter. Level of consciousness alert and interactive. Activity status out of bed with a walker and assistance.

Discharge Instructions:
Hip precautions for 6 weeks - do not bend the hip past 90 degrees, do not cross your legs, and do not turn the right leg inward; use a raised toilet seat and sleep with a pillow between your knees. Put as much weight on the leg as is comfortable, always with the walker. Keep the dressing dry; the home nurse will remove the staples 14 days after surgery. Remove loose rugs, use night lights and install bathroom grab bars. Return or call for calf pain or swelling, chest pain or shortness of breath, redness, drainage or fever, sudden severe hip pain or the leg looking shorter or turned, new confusion or sleepiness, or black stools or bleeding.

Followup Instructions:
Orthopedic surgery in 2 weeks with an x-ray. Primary care in 1 week to check blood pressure, decide about restarting lisinopril and recheck the blood count. Bone health visit in 6 weeks to discuss osteoporosis treatment.
"""

DC10 = case(
    "dc10",
    age=77,
    sex="female",
    source="synthetic; modelled on a Synthea patient's record (osteoporosis, Alzheimer's disease, ischemic heart disease)",
    note=NOTE_DC10,
    tests=[
        ("Right hip x-ray", "displaced femoral neck fracture"),
        ("Post-operative hip x-ray", "partial hip replacement in good position"),
        ("CT head", "no bleeding"),
        ("Hemoglobin", "11.4 on admission, 8.1 after surgery, 9.3 after transfusion"),
        ("Vitamin D", "16 ng/mL (low)"),
    ],
    treatments=[
        "Right hip hemiarthroplasty (partial hip replacement)",
        "One unit of packed red blood cells",
        "Enoxaparin to prevent blood clots",
        "Physical therapy: walking 50 feet with a rolling walker",
        "Non-drug management of night-time delirium",
        "Vitamin D started; lisinopril held for low blood pressure",
    ],
    primary=["Displaced right femoral neck fracture after a fall, status post right hip hemiarthroplasty"],
    secondary=[
        "Post-operative delirium (resolved)",
        "Acute blood loss anemia",
        "Osteoporosis with vitamin D deficiency",
        "Alzheimer's dementia",
        "Coronary artery disease",
        "Hypertension",
    ],
    medications=[
        med(
            "enoxaparin",
            "40 mg injection under the skin",
            "once a day for 28 days",
            ["evening"],
            "prevents blood clots after hip surgery",
            "Her daughter was taught to give the injection.",
            "new",
        ),
        med(
            "acetaminophen",
            "1000 mg",
            "every 8 hours",
            ["morning", "afternoon", "evening"],
            "hip pain",
            "No more than 3000 mg a day.",
            "new",
        ),
        med(
            "oxycodone",
            "2.5 mg",
            "every 6 hours as needed for severe pain",
            ["as_needed"],
            "severe hip pain",
            "Can add to confusion; use the lowest amount.",
            "new",
        ),
        med("senna", "8.6 mg", "once a day at bedtime", ["bedtime"], "prevents constipation", "", "new"),
        med(
            "cholecalciferol (vitamin D3)",
            "2000 units",
            "once a day",
            ["morning"],
            "low vitamin D and osteoporosis",
            "",
            "new",
        ),
        med(
            "galantamine",
            "4 mg",
            "twice a day with meals",
            ["morning", "evening"],
            "Alzheimer's disease",
            "",
            "continued",
        ),
        med("clopidogrel", "75 mg", "once a day", ["morning"], "protects her heart stent", "", "continued"),
    ],
    stopped=["lisinopril 10 mg daily (held for low blood pressure after surgery; primary care decides on restarting)"],
    follow_up=[
        ("Orthopedic surgery", "in 2 weeks", "wound check and hip x-ray"),
        ("Primary care doctor", "in 1 week", "blood pressure, whether to restart lisinopril, blood count"),
        ("Bone health visit", "in 6 weeks", "discuss osteoporosis treatment"),
    ],
    return_precautions=[
        "Calf pain or swelling",
        "Chest pain or shortness of breath",
        "Redness, drainage or fever",
        "Sudden severe hip pain or the leg looking shorter or turned",
        "New confusion or sleepiness, black stools or bleeding",
    ],
    activity=[
        "Hip precautions for 6 weeks: no bending the hip past 90 degrees, no crossing the legs, no turning the right leg inward",
        "Raised toilet seat; pillow between the knees in bed",
        "Weight bearing as comfortable, always with the walker",
        "Keep the dressing dry; home nurse removes staples 14 days after surgery",
        "Remove loose rugs, use night lights, install bathroom grab bars",
        "Home physical therapy and nursing",
    ],
    diet=["Regular diet"],
    pending=[],
    questions=[
        (
            "diagnosis_in_stay",
            "What injury brought you to the hospital?",
            "A broken right hip after tripping on a rug",
            "A broken left wrist after tripping on a rug",
            "A retired librarian",
        ),
        (
            "tests_treatments_in_stay",
            "What operation was done?",
            "A partial replacement of the right hip",
            "Screws to hold the bone without replacing any of the hip",
            "Dentures",
        ),
        (
            "medication_in_stay",
            "Which of your home medicines was paused in the hospital?",
            "Lisinopril, because your blood pressure was low after surgery",
            "Clopidogrel, because of bleeding during surgery",
            "A raised toilet seat",
        ),
        (
            "diagnosis_in_stay",
            "What caused your confusion at night after surgery?",
            "Delirium, a short-lived confusion after surgery that has cleared",
            "A stroke",
            "Night lights",
        ),
        (
            "diagnosis_at_discharge",
            "Which bone problem makes fractures more likely for you?",
            "Osteoporosis with low vitamin D",
            "A bone infection",
            "A one-floor home",
        ),
        (
            "medication_after_discharge",
            "What is enoxaparin for, and how long do you take it?",
            "To prevent blood clots: one injection under the skin daily for 28 days",
            "To prevent infection: one pill daily for 7 days",
            "Bathroom grab bars",
        ),
        (
            "care_after_discharge",
            "Which movements must you avoid for 6 weeks?",
            "Crossing your legs or bending your hip past 90 degrees",
            "Putting any weight at all on the right leg",
            "Her daughter",
        ),
        (
            "return_precautions",
            "Which of these is a reason to call or return?",
            "Pain or swelling in the calf, or sudden shortness of breath",
            "Feeling tired after physical therapy",
            "Widowed",
        ),
        (
            "care_after_discharge",
            "Who will remove your staples, and when?",
            "The home nurse, 14 days after surgery",
            "You, at home after 3 days",
            "Galantamine with meals",
        ),
    ],
    reference=summary(
        medications=(
            "- Enoxaparin 40 mg shot under the skin each evening for 28 days (new): prevents blood clots; your daughter knows how to give it.\n"
            "- Acetaminophen 1000 mg three times a day (new): your regular pain medicine.\n"
            "- Oxycodone 2.5 mg only for very bad pain, at least 6 hours apart (new): it can make confusion worse.\n"
            "- Senna 8.6 mg at bedtime (new): to keep your bowels moving.\n"
            "- Vitamin D3 (cholecalciferol) 2000 units each morning (new): for your bones.\n"
            "- Galantamine 4 mg with breakfast and supper (same as before): for memory.\n"
            "- Clopidogrel 75 mg each morning (same as before): protects your heart stent.\n"
            "- Do not take lisinopril for now; your primary care doctor will say when to restart it."
        ),
        primary="Broken right hip (at the neck of the thigh bone) from a fall, repaired with a partial hip replacement",
        secondary="Night-time confusion after surgery, now gone; low blood count, treated with one transfusion; thin bones with low vitamin D; Alzheimer's disease; heart artery disease; high blood pressure",
        condition=(
            "Sometimes muddled, which your daughter says is usual for you",
            "Awake and alert",
            "Up and about with a walker and a helper",
        ),
        instructions=(
            "You broke the top of your right thigh bone when you tripped, and the surgeons replaced the broken ball of the hip "
            "joint. For the next 6 weeks protect the new hip: keep your knees apart and never cross your legs, do not lean "
            "forward so far that your hip bends past a right angle, and do not point your right foot inward. A higher toilet "
            "seat and a pillow between your knees in bed help with this. You may stand on the leg as much as feels okay, but "
            "always use the walker. Keep the bandage dry; a nurse will take out the staples at home two weeks after surgery. "
            "Make the house safer by taking up loose rugs, adding night lights and putting grab bars in the bathroom. Call or "
            "come in if a calf hurts or swells, you have chest pain or trouble breathing, the wound gets red, leaks or you get "
            "a fever, the hip suddenly hurts a lot or the leg looks shorter or twisted, you become newly confused or very "
            "sleepy, or you see black stools or bleeding."
        ),
        followup=(
            "See your primary care doctor a week from now for a blood pressure and blood count check and a decision on "
            "lisinopril. The bone surgeons (orthopedics) will see you at 2 weeks and take an x-ray. About 6 weeks out, a bone "
            "health appointment will plan treatment for osteoporosis."
        ),
    ),
)

# --- dc11: cesarean delivery after induction of labor ------------------------------------------------------------

NOTE_DC11 = """\
Chief Complaint:
Induction of labor at 41 weeks

History of Present Illness:
Ms. ___ is a 31-year-old woman in her first pregnancy, admitted at 41 weeks for induction of labor for post-dates pregnancy. The pregnancy was uncomplicated; group B strep negative, blood type O positive, rubella immune. Labor was induced with misoprostol and then oxytocin. She reached 6 cm but labor stopped progressing for 4 hours despite adequate contractions, so she had a primary low transverse cesarean section under epidural anesthesia. A healthy baby girl was delivered weighing 3.6 kg, Apgars 8 and 9. Estimated blood loss was 900 mL.

Past Medical History:
Recurrent bladder infections. No chronic illnesses. No prior surgeries.

Social History:
Lives with her husband. Elementary school teacher. No tobacco, alcohol or drugs during pregnancy. Plans to breastfeed.

Pertinent Results:
Hemoglobin 12.2 before delivery, 9.0 on post-operative day 1.
Blood pressures normal throughout (110s-120s/70s).
Group B strep negative. Blood type O positive, antibody screen negative. Rubella immune.

Brief Hospital Course:
She received IV cefazolin before the incision. The skin was closed with absorbable stitches under the skin and steri-strips. The urinary catheter was removed on post-operative day 1 and she urinated without difficulty. She walked the halls, tolerated a regular diet and passed gas. Pain was controlled with scheduled ibuprofen and acetaminophen and two doses of oxycodone. Her hemoglobin fell to 9.0 from blood loss and she was started on iron. The lactation consultant helped with breastfeeding, which is going well. Mother and baby were discharged home together on post-operative day 3.

Discharge Medications:
1. Ibuprofen 600 mg PO q6h with food
2. Acetaminophen 650 mg PO q6h
3. Oxycodone 5 mg PO q4h PRN severe pain (10 tablets)
4. Docusate sodium 100 mg PO BID
5. Ferrous sulfate 325 mg PO daily
6. Prenatal vitamin 1 tablet PO daily (unchanged)

Discharge Diagnosis:
Primary - primary low transverse cesarean delivery for arrest of labor after induction at 41 weeks
Secondary - acute blood loss anemia; postpartum, breastfeeding

Discharge Condition:
Mental status clear and coherent. Level of consciousness alert and interactive. Activity status ambulatory and independent.

Discharge Instructions:
Nothing in the vagina for 6 weeks - no tampons, douching or sex. Do not lift anything heavier than your baby for 6 weeks. No driving for 2 weeks or while taking oxycodone. You may shower; pat the incision dry, and the steri-strips will fall off in 7 to 10 days. No baths or swimming for 2 weeks. These medicines are safe while breastfeeding, but if you take oxycodone, watch the baby for unusual sleepiness or trouble feeding. Take iron with orange juice, not with the prenatal vitamin or milk. Call for bleeding that soaks more than one pad an hour for 2 hours or clots larger than an egg, fever of 100.4 or more, redness, drainage or opening of the incision, severe headache or vision changes, calf pain or swelling, chest pain or shortness of breath, a hot red painful area of the breast, or thoughts of harming yourself or the baby.

Followup Instructions:
Obstetrics clinic in 1 to 2 weeks for an incision and blood pressure check. Postpartum visit at 6 weeks. Baby's pediatrician visit in 2 days.
"""

DC11 = case(
    "dc11",
    age=31,
    sex="female",
    source="synthetic; modelled on a Synthea obstetric admission (induction of labor)",
    note=NOTE_DC11,
    tests=[
        ("Hemoglobin", "12.2 before delivery, 9.0 on post-operative day 1"),
        ("Blood pressure", "normal throughout (110s-120s/70s)"),
        ("Group B strep", "negative"),
        ("Blood type and antibody screen", "O positive, antibody screen negative"),
        ("Rubella immunity", "immune"),
    ],
    treatments=[
        "Induction of labor with misoprostol, then oxytocin",
        "Primary low transverse cesarean section under epidural anesthesia",
        "IV cefazolin before the incision",
        "Urinary catheter removed on post-operative day 1",
        "Iron started for blood loss anemia",
        "Lactation consultant support for breastfeeding",
    ],
    primary=["Primary low transverse cesarean delivery for arrest of labor after induction at 41 weeks"],
    secondary=["Acute blood loss anemia", "Postpartum, breastfeeding"],
    medications=[
        med(
            "ibuprofen",
            "600 mg",
            "every 6 hours",
            ["morning", "afternoon", "evening", "bedtime"],
            "incision pain",
            "Take with food.",
            "new",
        ),
        med(
            "acetaminophen",
            "650 mg",
            "every 6 hours",
            ["morning", "afternoon", "evening", "bedtime"],
            "incision pain",
            "",
            "new",
        ),
        med(
            "oxycodone",
            "5 mg",
            "every 4 hours as needed for severe pain",
            ["as_needed"],
            "severe pain",
            "10 tablets; no driving; watch the baby for unusual sleepiness or trouble feeding.",
            "new",
        ),
        med(
            "docusate sodium",
            "100 mg",
            "twice a day",
            ["morning", "evening"],
            "softens stools after surgery",
            "",
            "new",
        ),
        med(
            "ferrous sulfate",
            "325 mg",
            "once a day",
            ["morning"],
            "anemia from blood loss at delivery",
            "Take with orange juice, not with the prenatal vitamin or milk.",
            "new",
        ),
        med(
            "prenatal vitamin", "1 tablet", "once a day", ["evening"], "nutrition while breastfeeding", "", "continued"
        ),
    ],
    stopped=[],
    follow_up=[
        ("Obstetrics clinic", "in 1 to 2 weeks", "incision and blood pressure check"),
        ("Obstetrics clinic", "at 6 weeks", "postpartum visit"),
        ("Baby's pediatrician", "in 2 days", "newborn check"),
    ],
    return_precautions=[
        "Bleeding that soaks more than one pad an hour for 2 hours, or clots larger than an egg",
        "Fever of 100.4 or more; redness, drainage or opening of the incision",
        "Severe headache or vision changes",
        "Calf pain or swelling, chest pain or shortness of breath",
        "A hot red painful area of the breast, or thoughts of harming yourself or the baby",
    ],
    activity=[
        "Nothing in the vagina for 6 weeks: no tampons, douching or sex",
        "Lift nothing heavier than the baby for 6 weeks",
        "No driving for 2 weeks or while taking oxycodone",
        "Shower and pat the incision dry; steri-strips fall off in 7 to 10 days; no baths or swimming for 2 weeks",
    ],
    diet=["Regular diet; take iron with orange juice, apart from the prenatal vitamin and milk"],
    pending=[],
    questions=[
        (
            "diagnosis_in_stay",
            "Why did you need a cesarean section?",
            "Labor stopped progressing at 6 cm despite good contractions",
            "The baby was lying bottom-first (breech)",
            "An elementary school teacher",
        ),
        (
            "medication_in_stay",
            "Which medicines were used to start your labor?",
            "Misoprostol, then oxytocin",
            "Oxytocin pills taken at home",
            "Rubella immune",
        ),
        (
            "tests_treatments_in_stay",
            "What did your blood count show after the surgery?",
            "It dropped from blood loss (hemoglobin 9.0), so iron was started",
            "It rose, so iron was not needed",
            "Blood type O positive",
        ),
        (
            "diagnosis_at_discharge",
            "What is the iron treating?",
            "Anemia from blood loss during the delivery",
            "High blood pressure after pregnancy",
            "Her husband",
        ),
        (
            "medication_after_discharge",
            "How should you take ibuprofen?",
            "600 mg every 6 hours, with food",
            "600 mg every hour, on an empty stomach",
            "Steri-strips",
        ),
        (
            "medication_after_discharge",
            "What should you watch for in the baby if you take oxycodone while breastfeeding?",
            "Unusual sleepiness or trouble feeding",
            "Faster growth than expected",
            "Apgars 8 and 9",
        ),
        (
            "care_after_discharge",
            "How heavy can the things you lift be for the next 6 weeks?",
            "Nothing heavier than your baby",
            "Up to 50 pounds if you feel well",
            "Orange juice",
        ),
        (
            "return_precautions",
            "Which bleeding should make you call right away?",
            "Soaking more than one pad an hour for 2 hours, or clots larger than an egg",
            "Light bleeding that slowly turns brown over a few weeks",
            "Recurrent bladder infections",
        ),
        (
            "care_after_discharge",
            "When is your incision and blood pressure check?",
            "At the obstetrics clinic in 1 to 2 weeks",
            "At the obstetrics clinic in 6 months",
            "A lactation consultant",
        ),
    ],
    reference=summary(
        medications=(
            "- Ibuprofen 600 mg every 6 hours with food (new): for pain and swelling.\n"
            "- Acetaminophen 650 mg every 6 hours (new): for pain; you can stagger it with the ibuprofen.\n"
            "- Oxycodone 5 mg only for strong pain, no closer than 4 hours apart (new, 10 tablets): no driving; if you use it, check that the baby is not overly sleepy and is feeding well.\n"
            "- Docusate 100 mg morning and evening (new): keeps stools soft.\n"
            "- Ferrous sulfate 325 mg each morning with orange juice (new): rebuilds your blood; keep it apart from milk and the prenatal vitamin.\n"
            "- Prenatal vitamin once a day (same as before)."
        ),
        primary="Baby delivered by C-section because labor stalled at 6 cm after being induced at 41 weeks",
        secondary="Low blood count from blood lost at the birth; recovering after birth and breastfeeding",
        condition=("Clear and thinking well", "Awake and alert", "Walking on your own"),
        instructions=(
            "Congratulations on your daughter. Your labor was started because you were past your due date, but your cervix "
            "stopped opening at 6 cm, so she was born by C-section. You lost more blood than usual, which left your blood count "
            "low, so take the iron every day. Your pain medicines are fine to use while you breastfeed. For 6 weeks, put "
            "nothing inside the vagina (no tampons or sex) and do not carry anything heavier than your baby. Wait 2 weeks to "
            "drive, and never drive after oxycodone. Shower normally and gently dry the cut; the small tape strips will come "
            "off on their own, and tubs or pools must wait 2 weeks. Call straight away if you soak through a pad every hour, two "
            "hours running, or pass clots bigger than an egg, have a temperature of 100.4 or higher, the cut gets red, leaks or "
            "opens, you get a bad headache or blurry vision, a calf becomes sore or swollen, you have chest pain or trouble "
            "breathing, part of a breast becomes hot, red and painful, or you have thoughts of hurting yourself or the baby."
        ),
        followup=(
            "Your obstetrics team will see you within 1 to 2 weeks for a wound and blood pressure check, then again at 6 weeks "
            "for the full postpartum visit. Your baby sees the pediatrician in 2 days."
        ),
    ),
)

# --- dc12: cellulitis of the foot after a laceration -------------------------------------------------------------

NOTE_DC12 = """\
Chief Complaint:
Red, swollen, painful right foot

History of Present Illness:
Mr. ___ is a 22-year-old healthy man who cut the sole of his right foot on broken glass at the beach 4 days ago. He washed it at home and did not seek care. Over the past 2 days he developed spreading redness, warmth and swelling over the top of the foot and ankle, pain when walking, fever to 101.2, and a red streak up the shin. In the ED the WBC was 14.1, the edge of the redness was marked with a pen, and a tetanus booster (Tdap) was given because his last one was more than 10 years ago. He was admitted for IV antibiotics.

Past Medical History:
Seasonal allergies. Wrist sprain 2 years ago. No diabetes.

Social History:
Works as a line cook, standing for long shifts. Lives with two friends. Vapes nicotine. Drinks on weekends.

Pertinent Results:
WBC 14.1 on admission, 8.7 at discharge. CRP 88 on admission, 31 at discharge.
Right foot x-ray - no retained glass, no gas in the soft tissue, no bone involvement.
Bedside ultrasound - no abscess.
Blood cultures - no growth, final.
Wound swab - Streptococcus pyogenes (group A strep), sensitive to cefazolin and cephalexin.
Hemoglobin A1c 5.2%.

Brief Hospital Course:
# Non-purulent cellulitis of the right foot with lymphangitis, after a glass laceration - treated with IV cefazolin 2 g every 8 hours for 48 hours and leg elevation. The redness pulled back well inside the pen marks by day 2, the red streak faded and the fever resolved. Ultrasound showed no abscess, and the x-ray showed no glass. The wound was cleaned and dressed daily. Changed to oral cephalexin to complete 7 days of antibiotics in total.

Discharge Medications:
1. Cephalexin 500 mg PO QID for 5 more days
2. Ibuprofen 400 mg PO q6h PRN pain, with food
3. Acetaminophen 650 mg PO q6h PRN pain or fever
4. Cetirizine 10 mg PO daily (unchanged)

Discharge Diagnosis:
Primary - cellulitis of the right foot with lymphangitis, group A strep, after a glass laceration of the sole
Secondary - seasonal allergies

Discharge Condition:
Mental status clear and coherent. Level of consciousness alert and interactive. Activity status ambulatory and independent.

Discharge Instructions:
Take all of the cephalexin, four times a day, even once the foot looks better. Keep the foot raised above the level of your heart when sitting or lying down for the next few days. Wash the cut once a day with soap and water, pat it dry and cover it with a clean dry bandage. Wear closed shoes. No swimming pools, ocean or hot tubs until the cut has healed. You may return to work in 3 days, with breaks to sit and raise the foot. Return for redness spreading past the pen line, a new red streak, fever over 101, pus or a swelling filling with fluid, worsening pain or being unable to walk on the foot, or vomiting that keeps you from taking the antibiotic.

Followup Instructions:
Primary care or urgent care in 2 to 3 days to check the redness and the wound.
"""

DC12 = case(
    "dc12",
    age=22,
    sex="male",
    source="synthetic; modelled on a Synthea emergency visit (laceration of foot, tetanus immunization)",
    note=NOTE_DC12,
    tests=[
        ("White blood cell count", "14.1 on admission, 8.7 at discharge"),
        ("CRP", "88 on admission, 31 at discharge"),
        ("Right foot x-ray", "no glass, no gas, no bone involvement"),
        ("Bedside ultrasound", "no abscess"),
        ("Blood cultures", "no growth, final"),
        ("Wound swab", "group A strep (Streptococcus pyogenes), sensitive to cefazolin and cephalexin"),
        ("Hemoglobin A1c", "5.2% (no diabetes)"),
    ],
    treatments=[
        "Tetanus booster (Tdap) in the ED",
        "IV cefazolin 2 g every 8 hours for 48 hours, then oral cephalexin",
        "Leg elevation",
        "Daily wound cleaning and dressing",
    ],
    primary=["Cellulitis of the right foot with lymphangitis (group A strep), after a glass laceration of the sole"],
    secondary=["Seasonal allergies"],
    medications=[
        med(
            "cephalexin",
            "500 mg",
            "four times a day for 5 more days",
            ["morning", "afternoon", "evening", "bedtime"],
            "finishes treating the foot infection",
            "Take every dose even once the foot looks better.",
            "new",
        ),
        med(
            "ibuprofen",
            "400 mg",
            "every 6 hours as needed",
            ["as_needed"],
            "pain and swelling",
            "Take with food.",
            "new",
        ),
        med("acetaminophen", "650 mg", "every 6 hours as needed", ["as_needed"], "pain or fever", "", "new"),
        med("cetirizine", "10 mg", "once a day", ["morning"], "seasonal allergies", "", "continued"),
    ],
    stopped=[],
    follow_up=[("Primary care or urgent care", "in 2 to 3 days", "check the redness and the wound")],
    return_precautions=[
        "Redness spreading past the pen line or a new red streak",
        "Fever over 101",
        "Pus or a swelling filling with fluid",
        "Worsening pain or unable to walk on the foot",
        "Vomiting that keeps you from taking the antibiotic",
    ],
    activity=[
        "Keep the foot raised above heart level when sitting or lying for the next few days",
        "Wash the cut daily with soap and water, pat dry, clean dry bandage",
        "Wear closed shoes",
        "No swimming pools, ocean or hot tubs until the cut heals",
        "Return to work in 3 days with breaks to sit and raise the foot",
    ],
    diet=["Regular diet"],
    pending=[],
    questions=[
        (
            "diagnosis_in_stay",
            "What infection did you have?",
            "A skin infection (cellulitis) of the right foot that started from a glass cut",
            "A bone infection in the right foot",
            "A line cook",
        ),
        (
            "tests_treatments_in_stay",
            "What did the foot x-ray show?",
            "No glass left in the foot, no gas and no bone involvement",
            "A piece of glass still in the foot",
            "Seasonal allergies",
        ),
        (
            "medication_in_stay",
            "Which antibiotic did you get through the IV?",
            "Cefazolin",
            "Cetirizine",
            "Broken glass at the beach",
        ),
        (
            "tests_treatments_in_stay",
            "Which vaccine did you get in the emergency department?",
            "A tetanus booster (Tdap)",
            "No vaccine, because yours was up to date",
            "Two friends",
        ),
        (
            "diagnosis_at_discharge",
            "Which germ caused your infection?",
            "Group A strep",
            "A virus that antibiotics do not treat",
            "Vapes nicotine",
        ),
        (
            "medication_after_discharge",
            "How do you take cephalexin?",
            "500 mg four times a day for 5 more days, even once the foot looks better",
            "500 mg once a day, stopping when the redness fades",
            "Drinks on weekends",
        ),
        (
            "care_after_discharge",
            "What should you do with your foot for the next few days?",
            "Keep it raised above the level of your heart when sitting or lying down",
            "Soak it in a hot tub twice a day",
            "A wrist sprain",
        ),
        (
            "return_precautions",
            "When should you come back?",
            "If the redness spreads past the pen line or fever over 101 returns",
            "If the redness keeps fading inside the pen line",
            "Standing for long shifts",
        ),
        (
            "care_after_discharge",
            "Where should you avoid going until the cut heals?",
            "Swimming pools, the ocean and hot tubs",
            "Anywhere outside the house, including work",
            "The sole of his right foot",
        ),
    ],
    reference=summary(
        medications=(
            "- Cephalexin 500 mg four times a day for 5 more days (new): the antibiotic; take every dose even when the foot looks fine.\n"
            "- Ibuprofen 400 mg with food up to every 6 hours if it hurts (new).\n"
            "- Acetaminophen 650 mg up to every 6 hours for pain or fever (new).\n"
            "- Cetirizine 10 mg each morning (same as before): allergies."
        ),
        primary="Skin infection (cellulitis) of the right foot spreading up the leg, caused by strep germs that got in through a glass cut",
        secondary="Seasonal allergies",
        condition=("Clear and thinking well", "Awake and alert", "Walking on your own"),
        instructions=(
            "Bacteria (group A strep) entered through the cut on the bottom of your foot and spread under the skin, with a red "
            "line creeping up your shin. Two days of IV antibiotics pushed the redness back, and the x-ray and ultrasound found "
            "no glass and no pocket of pus. You also got a tetanus shot. Finish all of the cephalexin pills, four a day, even "
            "after the foot looks normal. For the next few days prop the foot up higher than your heart whenever you sit or lie "
            "down. Clean the cut daily with soap and water, dry it gently and put on a fresh bandage, and wear shoes that cover "
            "your toes. Stay out of pools, the sea and hot tubs until the skin has closed. You can go back to the kitchen in 3 "
            "days if you can take breaks to rest the foot up. Come back if the redness moves beyond the pen mark, a new red "
            "streak appears, your fever goes over 101, pus or a fluid bump forms, the pain gets worse or you cannot walk on it, "
            "or vomiting stops you taking the pills."
        ),
        followup="Have your primary care doctor or an urgent care clinic look at the foot in 2 to 3 days.",
    ),
)

CASES = [DC01, DC02, DC03, DC04, DC05, DC06, DC07, DC08, DC09, DC10, DC11, DC12]


def main() -> None:
    lines = []
    for raw in CASES:
        validated = DischargeCase.model_validate(raw)
        lines.append(json.dumps(validated.model_dump(mode="json"), ensure_ascii=False))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} cases to {OUT}")


if __name__ == "__main__":
    main()
