"""Writes bedside's synthetic psychiatric vignettes (src/bedside/tasks/sensemaking/data/synthetic_vignettes.jsonl).

Written for bedside: invented people, no real records, no text from MedQA or MediQ. Each case gives the vignette,
its atomic patient facts, vital facts (kept apart, as the method does), a diagnosis label and the case's intent and
goal, so the demo needs no preparation calls; tests cover the preparation path on vignette-only cases.
Run: python tools/make_sensemaking_cases.py
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src/bedside/tasks/sensemaking/data/synthetic_vignettes.jsonl"

CASES = [
    (
        "mdd-01",
        "major depressive disorder",
        "interpreting_medical_information",
        "functioning",
        [
            "The person is a 34-year-old accountant.",
            "The person has felt low most days for the past six weeks.",
            "The person no longer enjoys playing the guitar.",
            "The person wakes at 4 a.m. and cannot fall back asleep.",
            "The person has lost about 5 kg without trying.",
            "The person finds it hard to concentrate at work.",
            "The person feels worthless and guilty about small mistakes.",
            "The person has no thoughts of self-harm.",
        ],
        ["The person's pulse is 72/min."],
    ),
    (
        "gad-02",
        "generalized anxiety disorder",
        "lifestyle_and_health_literacy",
        "comfort",
        [
            "The person is a 41-year-old teacher.",
            "The person has worried about many everyday things for over a year.",
            "The person finds the worry hard to control.",
            "The person feels restless and on edge most days.",
            "The person has tense shoulders and frequent headaches.",
            "The person sleeps poorly because of racing thoughts.",
            "The person drinks four cups of coffee a day.",
        ],
        ["The person's blood pressure is 128/82 mm Hg.", "The person's pulse is 88/min."],
    ),
    (
        "panic-03",
        "panic disorder",
        "interpreting_medical_information",
        "functioning",
        [
            "The person is a 27-year-old software developer.",
            "The person has had sudden attacks of pounding heart, shaking and shortness of breath.",
            "Each attack peaks within ten minutes.",
            "The person fears having another attack.",
            "The person now avoids taking the underground train.",
            "A cardiology check last month found nothing wrong with the heart.",
            "The person does not use drugs.",
        ],
        ["The person's pulse is 96/min."],
    ),
    (
        "ptsd-04",
        "post-traumatic stress disorder",
        "personalizing_healthcare_journey",
        "comfort",
        [
            "The person is a 45-year-old bus driver.",
            "The person was in a serious road collision four months ago.",
            "The person has nightmares about the collision several times a week.",
            "The person avoids driving past the place where it happened.",
            "The person startles at loud noises.",
            "The person feels detached from family.",
            "The person has been drinking more alcohol to sleep.",
        ],
        [],
    ),
    (
        "bipolar-05",
        "bipolar I disorder",
        "interpreting_medical_information",
        "functioning",
        [
            "The person is a 23-year-old art student.",
            "For the last week the person has slept two to three hours a night.",
            "The person feels full of energy despite little sleep.",
            "The person has spent most of their savings on equipment.",
            "Friends say the person talks very fast.",
            "The person had a long period of depression last year.",
            "The person believes they are about to become famous.",
        ],
        ["The person's temperature is 36.8 °C."],
    ),
    (
        "ocd-06",
        "obsessive-compulsive disorder",
        "lifestyle_and_health_literacy",
        "functioning",
        [
            "The person is a 30-year-old nurse.",
            "The person has repeated unwanted thoughts about contamination.",
            "The person washes their hands dozens of times a day.",
            "The skin on the person's hands is cracked.",
            "The person checks the door lock many times before leaving home.",
            "The rituals take more than two hours each day.",
            "The person knows the fears are excessive.",
        ],
        [],
    ),
    (
        "insomnia-07",
        "insomnia disorder",
        "lifestyle_and_health_literacy",
        "comfort",
        [
            "The person is a 52-year-old shop owner.",
            "The person has had trouble falling asleep for five months.",
            "It takes the person more than an hour to fall asleep most nights.",
            "The person feels tired and irritable during the day.",
            "The person uses a phone in bed until late.",
            "The person naps in the afternoon.",
            "The person's mood is otherwise fine.",
        ],
        ["The person's blood pressure is 134/86 mm Hg."],
    ),
    (
        "adjustment-08",
        "adjustment disorder with depressed mood",
        "personalizing_healthcare_journey",
        "comfort",
        [
            "The person is a 38-year-old engineer.",
            "The person lost their job two months ago.",
            "Since then the person has felt sad and tearful.",
            "The person has pulled away from friends.",
            "The person still sleeps and eats normally.",
            "The person has started applying for new jobs.",
            "The person had no mental-health problems before.",
        ],
        [],
    ),
    (
        "aud-09",
        "alcohol use disorder",
        "interpreting_medical_information",
        "longevity",
        [
            "The person is a 49-year-old sales manager.",
            "The person drinks most of a bottle of wine every evening.",
            "The person has tried to cut down several times without success.",
            "The person feels shaky in the morning until they drink.",
            "The person's partner is upset about the drinking.",
            "The person missed two work meetings after drinking.",
            "A recent blood test showed raised liver enzymes.",
        ],
        ["The person's pulse is 98/min.", "The person's blood pressure is 146/92 mm Hg."],
    ),
    (
        "anorexia-10",
        "anorexia nervosa",
        "personalizing_healthcare_journey",
        "longevity",
        [
            "The person is a 19-year-old university student.",
            "The person eats very little and skips most meals.",
            "The person has lost a lot of weight over the past year.",
            "The person is afraid of gaining weight.",
            "The person sees themself as too big although others say they are thin.",
            "The person's periods stopped four months ago.",
            "The person exercises for two hours every day.",
        ],
        ["The person's pulse is 48/min.", "The person's temperature is 35.9 °C."],
    ),
    (
        "adhd-11",
        "attention-deficit/hyperactivity disorder",
        "lifestyle_and_health_literacy",
        "functioning",
        [
            "The person is a 29-year-old graphic designer.",
            "The person has always found it hard to keep attention on tasks.",
            "The person often loses keys and documents.",
            "The person interrupts others in conversation.",
            "Teachers said the person could not sit still as a child.",
            "The person misses deadlines despite working late.",
            "The person's sister has the same kind of difficulties.",
        ],
        [],
    ),
    (
        "pdd-12",
        "persistent depressive disorder",
        "personalizing_healthcare_journey",
        "functioning",
        [
            "The person is a 56-year-old librarian.",
            "The person has felt mildly low on most days for about three years.",
            "The person has low energy.",
            "The person has little confidence in themself.",
            "The person's appetite is smaller than it used to be.",
            "The person has never been without the low mood for more than a month in that time.",
            "The person still goes to work every day.",
        ],
        [],
    ),
]


def vignette(facts: list[str], vitals: list[str]) -> str:
    return " ".join([*facts, *vitals])


def main() -> None:
    with OUT.open("w", encoding="utf-8") as handle:
        for case_id, label, intent, goal, facts, vitals in CASES:
            record = {
                "id": case_id,
                "vignette": vignette(facts, vitals),
                "facts": facts,
                "vital_facts": vitals,
                "diagnosis": {"label": label, "provenance": "given", "reviewed": True, "note": "written for bedside"},
                "intent": intent,
                "goal": goal,
                "source": "bedside-synthetic",
            }
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {len(CASES)} cases to {OUT}")


if __name__ == "__main__":
    main()
