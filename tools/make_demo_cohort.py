"""Write bedside's synthetic demo cohort: 12 adult patients (bedside JSONL) and their portal messages.

Everything here is invented for bedside; no real or external record is used. Run from the repository root:
``python tools/make_demo_cohort.py`` rewrites ``src/bedside/data/demo/cohort.jsonl`` and
``src/bedside/data/demo/portal_messages.jsonl`` (deterministically: same script, same bytes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from bedside.records import (
    Allergy,
    Code,
    Condition,
    Encounter,
    Measurement,
    Medication,
    Note,
    Patient,
    Record,
    write_records_jsonl,
)

OUT = Path(__file__).resolve().parents[1] / "src" / "bedside" / "data" / "demo"


@dataclass
class Spec:
    id: str
    born: date
    gender: str
    race: str
    ethnicity: str
    problems: list[tuple[str, str, str, date, date | None]]  # (system, code, text, onset, abatement)
    medications: list[tuple[str, str, date, date | None, str]]  # (rxnorm, text, start, end, dose)
    visits: list[tuple[date, str, str]]  # (date, type, note)
    messages: list[tuple[datetime, str, str]]  # (sent, message, clinician reply)
    allergies: list[str] = field(default_factory=list)


SPECS = [
    Spec(
        "demo-01",
        date(1967, 4, 12),
        "female",
        "White",
        "Not Hispanic or Latino",
        [
            ("ICD10CM", "I10", "Essential hypertension", date(2019, 3, 2), None),
            ("ICD10CM", "E11.9", "Type 2 diabetes mellitus without complications", date(2021, 6, 15), None),
            ("ICD10CM", "E78.5", "Hyperlipidemia", date(2021, 6, 15), None),
        ],
        [
            ("197361", "amlodipine 5 MG Oral Tablet", date(2019, 3, 2), date(2026, 2, 28), "5 mg once daily"),
            ("314076", "lisinopril 10 MG Oral Tablet", date(2026, 2, 28), None, "10 mg once daily"),
            ("860975", "metformin 500 MG Oral Tablet", date(2021, 6, 15), None, "500 mg twice daily"),
            ("617312", "atorvastatin 20 MG Oral Tablet", date(2021, 6, 15), None, "20 mg nightly"),
        ],
        [
            (date(2025, 11, 3), "Annual physical", "Annual exam. BP 138/86. A1c 7.1%. Continue current regimen."),
            (
                date(2026, 2, 28),
                "Hypertension follow-up",
                "BP 148/92 on amlodipine with ankle swelling. Switched to lisinopril 10 mg daily. Recheck BP in 4 weeks.",
            ),
        ],
        [
            (
                datetime(2026, 3, 14, 8, 12),
                "Since I started the new blood pressure pill two weeks ago I have a dry cough that keeps me up at night. Is this from the medicine? Should I stop it? Home readings are about 132/84.",
                "I'm sorry the cough is keeping you up. A dry cough is a known side effect of lisinopril. Please keep taking it for now and we will call you today to discuss switching to a similar medicine without this effect. If you have swelling of the lips or tongue or trouble breathing, call 911.",
            ),
            (
                datetime(2026, 4, 2, 17, 40),
                "My sugar was 212 this morning after a birthday dinner. Do I need to do anything?",
                "One high reading after a big meal is not unusual. Keep checking your fasting sugar for the next week and send us the numbers. If readings stay over 250 or you feel very thirsty or confused, please call the clinic.",
            ),
        ],
    ),
    Spec(
        "demo-02",
        date(1990, 9, 30),
        "male",
        "Black or African American",
        "Not Hispanic or Latino",
        [
            ("ICD10CM", "J45.40", "Moderate persistent asthma", date(2012, 5, 1), None),
            ("ICD10CM", "J30.2", "Seasonal allergic rhinitis", date(2015, 4, 10), None),
        ],
        [
            ("745679", "albuterol 90 MCG/ACTUAT inhaler", date(2012, 5, 1), None, "2 puffs every 4 hours as needed"),
            ("896188", "fluticasone/salmeterol 250/50 inhaler", date(2024, 9, 12), None, "1 puff twice daily"),
        ],
        [
            (
                date(2024, 9, 12),
                "Asthma visit",
                "Night symptoms twice weekly. Started fluticasone/salmeterol. Reviewed inhaler technique.",
            ),
            (date(2025, 10, 1), "Asthma follow-up", "Well controlled. Peak flow 560 L/min. Flu vaccine given."),
        ],
        [
            (
                datetime(2026, 4, 20, 7, 5),
                "Pollen is bad this week and I've used my rescue inhaler four times since yesterday. Should I be worried?",
                "Using your rescue inhaler that often means your asthma is flaring. Keep taking your daily inhaler, take your allergy medicine, and let's see you in clinic this week. If the rescue inhaler does not help or you are short of breath at rest, go to the emergency department.",
            )
        ],
        ["penicillin"],
    ),
    Spec(
        "demo-03",
        date(1952, 1, 18),
        "male",
        "White",
        "Hispanic or Latino",
        [
            ("ICD10CM", "I48.91", "Atrial fibrillation", date(2020, 8, 3), None),
            ("ICD10CM", "N18.3", "Chronic kidney disease stage 3", date(2022, 2, 14), None),
        ],
        [
            ("1364435", "apixaban 5 MG Oral Tablet", date(2020, 8, 3), None, "5 mg twice daily"),
            ("866924", "metoprolol succinate 50 MG 24HR tablet", date(2020, 8, 3), None, "50 mg once daily"),
        ],
        [
            (date(2025, 6, 5), "Cardiology follow-up", "Rate controlled AF. eGFR 52. Continue apixaban."),
            (date(2026, 1, 9), "Primary care visit", "Stable. Creatinine 1.4. Discussed bleeding precautions."),
        ],
        [
            (
                datetime(2026, 2, 3, 10, 30),
                "I'm having a tooth pulled next week. The dentist asked if I should stop my blood thinner.",
                "Thanks for checking first. Please don't stop apixaban on your own. We will contact your dentist to plan this; often it is held for one or two days before the procedure. We'll call you with exact instructions.",
            ),
            (
                datetime(2026, 3, 22, 19, 15),
                "I noticed some blood in my urine today. No pain.",
                "Because you take a blood thinner, we want to check this soon. Please come in tomorrow for a urine test. If the bleeding becomes heavy, you pass clots, or feel dizzy, go to the emergency department.",
            ),
        ],
    ),
    Spec(
        "demo-04",
        date(1985, 12, 2),
        "female",
        "Asian",
        "Not Hispanic or Latino",
        [
            ("ICD10CM", "E03.9", "Hypothyroidism", date(2018, 7, 19), None),
            ("ICD10CM", "F41.1", "Generalized anxiety disorder", date(2023, 3, 8), None),
        ],
        [
            ("966224", "levothyroxine 75 MCG Oral Tablet", date(2018, 7, 19), None, "75 mcg every morning"),
            ("312938", "sertraline 50 MG Oral Tablet", date(2023, 3, 8), None, "50 mg once daily"),
        ],
        [
            (date(2025, 8, 14), "Annual physical", "TSH 2.1. Anxiety improved on sertraline."),
            (date(2026, 3, 30), "Follow-up", "Fatigue for one month. TSH ordered."),
        ],
        [
            (
                datetime(2026, 4, 6, 12, 0),
                "Did my thyroid test come back? I'm still really tired.",
                "Your TSH came back at 6.8, a bit high, which can cause tiredness. We'll increase levothyroxine to 88 mcg daily and recheck the blood test in 6 weeks. Let us know if you have a racing heart or trouble sleeping.",
            )
        ],
    ),
    Spec(
        "demo-05",
        date(1978, 6, 25),
        "male",
        "White",
        "Not Hispanic or Latino",
        [
            ("ICD10CM", "M54.50", "Low back pain", date(2026, 1, 20), None),
            ("ICD10CM", "E66.9", "Obesity", date(2019, 2, 1), None),
        ],
        [
            (
                "310965",
                "ibuprofen 400 MG Oral Tablet",
                date(2026, 1, 20),
                date(2026, 2, 20),
                "400 mg every 8 hours as needed",
            )
        ],
        [(date(2026, 1, 20), "Acute visit", "Lifting injury. No red flags. NSAIDs and physical therapy referral.")],
        [
            (
                datetime(2026, 3, 2, 9, 45),
                "My back still hurts after 6 weeks of PT. Can I get an MRI?",
                "I'm sorry it's still bothering you. Since it has lasted over six weeks, let's see you in clinic to re-examine your back and decide together whether imaging is needed. If you have numbness in the groin, leg weakness, or trouble controlling your bladder, go to the emergency department.",
            )
        ],
    ),
    Spec(
        "demo-06",
        date(1995, 3, 8),
        "female",
        "White",
        "Hispanic or Latino",
        [
            ("ICD10CM", "Z34.90", "Supervision of normal pregnancy", date(2026, 1, 5), None),
            ("ICD10CM", "G43.909", "Migraine", date(2014, 9, 1), None),
        ],
        [("1000126", "prenatal vitamin Oral Tablet", date(2026, 1, 5), None, "1 tablet daily")],
        [
            (date(2026, 1, 5), "Prenatal intake", "First prenatal visit at 8 weeks. Labs drawn."),
            (date(2026, 3, 2), "Prenatal visit", "16 weeks. Normal exam."),
        ],
        [
            (
                datetime(2026, 3, 18, 21, 5),
                "I have a bad migraine. What can I take while pregnant?",
                "Acetaminophen is the usual first choice in pregnancy; please avoid ibuprofen. Rest in a dark room and drink fluids. If this headache is the worst of your life, or comes with vision changes, swelling or high blood pressure, please call labor and delivery or go to the emergency department.",
            )
        ],
    ),
    Spec(
        "demo-07",
        date(1960, 11, 11),
        "female",
        "Black or African American",
        "Not Hispanic or Latino",
        [
            ("ICD10CM", "C50.911", "Malignant neoplasm of right breast", date(2024, 10, 2), None),
            ("ICD10CM", "I10", "Essential hypertension", date(2015, 5, 5), None),
        ],
        [
            ("199224", "anastrozole 1 MG Oral Tablet", date(2025, 4, 1), None, "1 mg once daily"),
            ("310798", "hydrochlorothiazide 25 MG Oral Tablet", date(2015, 5, 5), None, "25 mg once daily"),
        ],
        [
            (date(2025, 4, 1), "Oncology visit", "Completed radiation. Start anastrozole."),
            (date(2025, 12, 10), "Oncology follow-up", "Tolerating anastrozole. Joint aches mild."),
        ],
        [
            (
                datetime(2026, 2, 14, 14, 20),
                "My joints ache more in the mornings since the new pill. Is that normal?",
                "Joint aches are a common side effect of anastrozole. Gentle exercise and acetaminophen often help. We'll talk about other options at your next visit, and please tell us if the pain stops you from daily activities.",
            )
        ],
    ),
    Spec(
        "demo-08",
        date(1972, 8, 19),
        "male",
        "Asian",
        "Not Hispanic or Latino",
        [
            ("ICD10CM", "K21.9", "Gastro-esophageal reflux disease", date(2021, 4, 4), None),
            ("ICD10CM", "F10.10", "Alcohol use disorder, mild", date(2024, 6, 6), None),
        ],
        [("198051", "omeprazole 20 MG capsule", date(2021, 4, 4), None, "20 mg before breakfast")],
        [
            (date(2024, 6, 6), "Primary care visit", "Discussed alcohol use. Open to cutting down."),
            (date(2025, 12, 1), "Primary care visit", "Reflux controlled. Drinking reduced to weekends."),
        ],
        [
            (
                datetime(2026, 1, 28, 8, 0),
                "I want to stop drinking completely. Is it safe to just stop?",
                "Thank you for reaching out; that is a great goal. Stopping suddenly can be risky if you drink daily, so let's make a plan together at a visit this week. If you get shaky, sweaty, confused or see things after stopping, go to the emergency department.",
            )
        ],
    ),
    Spec(
        "demo-09",
        date(1948, 2, 29),
        "female",
        "White",
        "Not Hispanic or Latino",
        [
            ("ICD10CM", "M81.0", "Osteoporosis", date(2019, 9, 9), None),
            ("ICD10CM", "I50.32", "Chronic diastolic heart failure", date(2023, 11, 20), None),
        ],
        [
            ("904420", "alendronate 70 MG Oral Tablet", date(2019, 9, 9), date(2024, 9, 9), "70 mg weekly"),
            ("202991", "furosemide 20 MG Oral Tablet", date(2023, 11, 20), None, "20 mg once daily"),
        ],
        [
            (date(2023, 11, 20), "Hospital discharge follow-up", "Heart failure admission. Started furosemide."),
            (date(2025, 9, 15), "Cardiology visit", "Euvolemic. Weight 64 kg."),
        ],
        [
            (
                datetime(2026, 3, 5, 7, 50),
                "My weight went up 3 pounds since yesterday and my ankles are puffy.",
                "Thank you for watching your weight. A gain of 3 pounds in a day can mean fluid building up. Please take an extra furosemide 20 mg today and we will call you this morning. If you feel short of breath lying down or at rest, call 911.",
            )
        ],
    ),
    Spec(
        "demo-10",
        date(2000, 5, 14),
        "male",
        "White",
        "Not Hispanic or Latino",
        [("ICD10CM", "F32.1", "Major depressive disorder, single episode, moderate", date(2025, 10, 3), None)],
        [("310385", "fluoxetine 20 MG capsule", date(2025, 10, 3), None, "20 mg once daily")],
        [(date(2025, 10, 3), "Mental health visit", "PHQ-9 16. Started fluoxetine. Therapy referral.")],
        [
            (
                datetime(2025, 11, 1, 23, 30),
                "The medicine isn't working and I feel worse some nights.",
                "Thank you for telling us. It can take 4 to 6 weeks for this medicine to help, and we want to check on you sooner. We'll call you tomorrow morning. If you have thoughts of hurting yourself, call or text 988 or go to the emergency department now.",
            )
        ],
    ),
    Spec(
        "demo-11",
        date(1982, 7, 7),
        "female",
        "American Indian or Alaska Native",
        "Not Hispanic or Latino",
        [
            ("ICD10CM", "N39.0", "Urinary tract infection", date(2026, 2, 10), date(2026, 2, 20)),
            ("ICD10CM", "E28.2", "Polycystic ovarian syndrome", date(2010, 3, 3), None),
        ],
        [("1665005", "nitrofurantoin 100 MG capsule", date(2026, 2, 10), date(2026, 2, 15), "100 mg twice daily")],
        [(date(2026, 2, 10), "Acute visit", "Dysuria. Urine positive. Nitrofurantoin 5 days.")],
        [
            (
                datetime(2026, 3, 1, 16, 10),
                "The burning is back two weeks after finishing the antibiotic.",
                "I'm sorry the symptoms came back. Please drop off a urine sample today so we can check which antibiotic will work. If you get fever, back pain or vomiting, please go to urgent care.",
            )
        ],
    ),
    Spec(
        "demo-12",
        date(1958, 10, 3),
        "male",
        "White",
        "Not Hispanic or Latino",
        [
            ("ICD10CM", "J44.9", "Chronic obstructive pulmonary disease", date(2017, 1, 12), None),
            ("ICD10CM", "Z87.891", "History of nicotine dependence", date(2017, 1, 12), None),
        ],
        [
            ("1547660", "tiotropium 2.5 MCG/ACTUAT inhaler", date(2017, 1, 12), None, "2 puffs once daily"),
            ("745679", "albuterol 90 MCG/ACTUAT inhaler", date(2017, 1, 12), None, "2 puffs every 4 hours as needed"),
        ],
        [
            (date(2025, 5, 20), "Pulmonary visit", "FEV1 58% predicted. Stable."),
            (date(2026, 1, 15), "Primary care visit", "Pneumococcal vaccine given."),
        ],
        [
            (
                datetime(2026, 2, 25, 11, 25),
                "I've been coughing up green phlegm for 3 days and I'm more short of breath.",
                "That sounds like a COPD flare. Let's see you today or tomorrow so we can listen to your lungs and start treatment. Keep using your inhalers. If your lips turn blue or you can't speak in full sentences, call 911.",
            )
        ],
    ),
]


def record_for(spec: Spec) -> Record:
    encounters, notes, measurements = [], [], []
    for index, (day, kind, text) in enumerate(spec.visits, start=1):
        start = datetime.combine(day, datetime.min.time()) + timedelta(hours=9)
        managed = [  # a visit addresses the problems active on its day
            Code(system=system, code=code, display=text)
            for system, code, text, onset, abated in spec.problems
            if onset <= day and (abated is None or abated > day)
        ]
        encounters.append(
            Encounter(
                id=f"{spec.id}-e{index}",
                text=kind,
                kind="AMB",
                start=start,
                end=start + timedelta(minutes=30),
                reasons=managed,
            )
        )
        notes.append(
            Note(
                id=f"{spec.id}-n{index}",
                type="progress note",
                time=start + timedelta(minutes=25),
                text=text,
                encounter_id=f"{spec.id}-e{index}",
            )
        )
        measurements.append(
            Measurement(
                id=f"{spec.id}-m{index}",
                codes=[Code(system="LOINC", code="8867-4", display="Heart rate")],
                text="Heart rate",
                value=float(64 + 3 * index),
                unit="/min",
                time=start,
                encounter_id=f"{spec.id}-e{index}",
            )
        )

    def nearest_encounter(day: date) -> str | None:
        for encounter in encounters:
            if encounter.start is not None and encounter.start.date() == day:
                return encounter.id
        return None

    conditions = [
        Condition(
            id=f"{spec.id}-c{i}",
            codes=[Code(system=system, code=code, display=text)],
            text=text,
            onset=datetime.combine(onset, datetime.min.time()) + timedelta(hours=9),
            abatement=datetime.combine(abated, datetime.min.time()) if abated else None,
            status="resolved" if abated else "active",
            encounter_id=nearest_encounter(onset),
        )
        for i, (system, code, text, onset, abated) in enumerate(spec.problems, start=1)
    ]
    medications = [
        Medication(
            id=f"{spec.id}-d{i}",
            codes=[Code(system="RxNorm", code=rxnorm, display=text)],
            text=text,
            start=datetime.combine(start, datetime.min.time()) + timedelta(hours=9),
            end=datetime.combine(end, datetime.min.time()) if end else None,
            dose=dose,
            status="stopped" if end else "active",
            setting="outpatient",
            encounter_id=nearest_encounter(start),
        )
        for i, (rxnorm, text, start, end, dose) in enumerate(spec.medications, start=1)
    ]
    allergies = [
        Allergy(id=f"{spec.id}-a{i}", text=name, recorded=encounters[0].start, reactions=["rash"])
        for i, name in enumerate(spec.allergies, start=1)
    ]
    return Record(
        patient=Patient(id=spec.id, birth_date=spec.born, gender=spec.gender, race=spec.race, ethnicity=spec.ethnicity),
        encounters=encounters,
        conditions=conditions,
        medications=medications,
        measurements=measurements,
        allergies=allergies,
        notes=notes,
        source="bedside synthetic demo cohort",
    )


# A second clinician's independent replies to some messages (a nurse practitioner with a different style:
# more follow-up questions, fewer explanations), so the demo has inter-clinician measures and two clinicians to
# adapt to. The first clinician answered every message.
FIRST_CLINICIAN = "dr-a"
SECOND_CLINICIAN = "np-b"
SECOND_REPLIES = {
    "demo-01-msg1": "Sorry you are not sleeping. How often does the cough wake you up? That cough can come from lisinopril, so I will ask Dr. A about switching you to losartan and call you back tomorrow. Go to the ER if your lips or tongue swell.",
    "demo-01-msg2": "Thanks for checking your sugar. Did you take your metformin that day? Please send us your morning readings for the next week. Call us if you get readings over 250.",
    "demo-02-msg1": "Sorry the pollen is so bad. Are you waking at night with cough or wheeze? Keep using your daily inhaler every day. We have an opening Thursday at 9; reply here to take it. If the rescue inhaler does not help, go to the ER.",
    "demo-03-msg1": "Thanks for asking before the extraction. Do not stop apixaban yet. Which day is the procedure? I will send your dentist's request to Dr. A and we will call you with the plan.",
    "demo-04-msg1": "Sorry you are still tired. Your TSH was 6.8, which is a little high. Are you taking levothyroxine on an empty stomach? Dr. A will send a new dose to your pharmacy, and we will recheck the blood test in six weeks.",
    "demo-06-msg1": "I'm sorry you have a migraine. Have you had any vision changes or swelling of your face or hands? You can take acetaminophen, but please avoid ibuprofen. If the headache is severe or you see spots, call labor and delivery right away.",
    "demo-09-msg1": "Thank you for weighing yourself every day. Are you more short of breath or needing extra pillows at night? Please take an extra dose of furosemide today and send us your weight tomorrow. If you are short of breath at rest, call 911.",
    "demo-12-msg1": "Sorry you are feeling worse. Do you have a fever? How many times a day are you using the rescue inhaler? We will see you tomorrow morning. If your lips turn blue or you cannot speak in full sentences, call 911.",
}


def main() -> None:
    write_records_jsonl([record_for(spec) for spec in SPECS], OUT / "cohort.jsonl")
    with (OUT / "portal_messages.jsonl").open("w", encoding="utf-8") as handle:
        for spec in SPECS:
            for index, (sent, message, reply) in enumerate(spec.messages, start=1):
                message_id = f"{spec.id}-msg{index}"
                references = [{"clinician_id": FIRST_CLINICIAN, "text": reply}]
                if message_id in SECOND_REPLIES:
                    references.append({"clinician_id": SECOND_CLINICIAN, "text": SECOND_REPLIES[message_id]})
                row = {
                    "id": message_id,
                    "patient_id": spec.id,
                    "sent_at": sent.isoformat(),
                    "message": message,
                    "references": references,
                }
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
