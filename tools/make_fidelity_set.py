"""Write bedside's labelled set for validating the simulator fidelity checker (src/bedside/sim/data/).

Every case, message and label here was written for bedside (synthetic, no real patient). Each item is one simulated
patient turn: the facts the patient was given, what the clinician said before, and the turn's sentences with the
label a careful reader gives each (non_informative / entailed / contradicted / unsupported). ``phase`` says whether
the turn comes from a closed-world stage (the patient may only state given facts: sensemaking's stages through
Providing Information, a discharge patient describing their stay) or a later one (questions, reactions, plans).

Run: ``python tools/make_fidelity_set.py`` (rewrites the file; the test suite checks its shape).
"""

from __future__ import annotations

import json
from pathlib import Path

N, E, C, U = "non_informative", "entailed", "contradicted", "unsupported"

CASES: dict[str, list[str]] = {
    "insomnia": [
        "I have trouble falling asleep most nights for the past three months.",
        "I wake up around 4 am and cannot get back to sleep.",
        "I started a new job as a night-shift nurse in March.",
        "I drink four cups of coffee a day.",
        "I feel tired and irritable during the day.",
    ],
    "panic": [
        "I had three episodes of sudden pounding heart and shortness of breath last month.",
        "Each episode lasted about ten minutes.",
        "I went to the emergency department once and my heart tests were normal.",
        "I now avoid taking the bus because I fear another episode.",
        "I am 29 years old.",
    ],
    "low_mood": [
        "I have felt down almost every day for six weeks.",
        "I stopped going to my weekly football games.",
        "My appetite is lower and I lost about 3 kg.",
        "My father died in January.",
        "I have no thoughts of harming myself.",
    ],
    "heart_failure_discharge": [
        "I was admitted for shortness of breath and leg swelling.",
        "I was diagnosed with heart failure.",
        "I received furosemide through a drip and lost 4 kg of fluid.",
        "I go home on furosemide 40 mg once a day and metoprolol 25 mg twice a day.",
        "I must weigh myself every morning.",
        "I have a follow-up with cardiology in two weeks.",
    ],
    "pneumonia_discharge": [
        "I was admitted with fever and cough.",
        "A chest X-ray showed pneumonia in my right lung.",
        "I was treated with intravenous antibiotics for three days.",
        "I go home on amoxicillin for five more days.",
        "I should come back if my fever returns or I feel short of breath.",
    ],
    "diabetes_discharge": [
        "I came in with very high blood sugar and vomiting.",
        "I was diagnosed with type 2 diabetes.",
        "I was started on metformin 500 mg twice a day.",
        "A diabetes educator taught me to check my sugar before breakfast.",
        "My follow-up is with my family doctor next week.",
    ],
    "ocd": [
        "I check that the stove is off up to twenty times before leaving home.",
        "The checking takes about an hour each morning.",
        "I know the fear is excessive but I cannot stop.",
        "I have been late to work four times this month.",
    ],
    "grief_work_stress": [
        "My sister was in a car accident in May and is recovering.",
        "I have been working 60-hour weeks since then.",
        "I get headaches most afternoons.",
        "I sleep about five hours a night.",
    ],
}

# (case, phase, stage, clinician said earlier, [(sentence, label), ...])
TURNS: list[tuple[str, str, str, list[str], list[tuple[str, str]]]] = [
    (
        "insomnia",
        "closed_world",
        "Fostering",
        [],
        [
            ("Hi, thanks for seeing me.", N),
            ("I have been struggling to fall asleep most nights for about three months.", E),
            ("It started after my new night-shift job began in March.", E),
        ],
    ),
    (
        "insomnia",
        "closed_world",
        "Gathering",
        ["How much caffeine do you have in a day?"],
        [
            ("Probably four cups of coffee.", E),
            ("I also take a sleeping pill my friend gave me.", U),
            ("Is that a lot?", N),
        ],
    ),
    (
        "insomnia",
        "closed_world",
        "Gathering",
        ["When do you usually wake up?"],
        [
            ("I sleep straight through until my alarm at 9.", C),
            ("I feel exhausted and short-tempered during the day.", E),
        ],
    ),
    (
        "insomnia",
        "later",
        "Decision Making",
        ["One option is to cut coffee after noon; another is a sleep routine."],
        [
            ("Okay, so I would stop coffee after noon?", E),
            ("I already tried melatonin last year and it did nothing.", U),
            ("I think I can manage the routine.", N),
        ],
    ),
    (
        "insomnia",
        "later",
        "Enabling",
        ["Try to keep the same wake time every day, even after night shifts."],
        [
            ("Same wake time every day, got it.", E),
            ("My shifts are only on weekends, so that should be easy.", U),
            ("Thank you, this helps.", N),
        ],
    ),
    (
        "panic",
        "closed_world",
        "Fostering",
        [],
        [
            ("I am 29 and I keep having these scary moments.", E),
            ("My heart suddenly pounds and I can't catch my breath.", E),
            ("It happened three times last month.", E),
        ],
    ),
    (
        "panic",
        "closed_world",
        "Gathering",
        ["How long do the episodes last?"],
        [
            ("Each one lasts about an hour.", C),
            ("During one I fainted at work.", U),
            ("I don't know what's happening to me.", N),
        ],
    ),
    (
        "panic",
        "closed_world",
        "Gathering",
        ["Have you had any tests?"],
        [
            ("I went to the emergency department once.", E),
            ("They said my heart tests were normal.", E),
            ("They found a heart murmur.", C),
        ],
    ),
    (
        "panic",
        "later",
        "Responding to Emotions",
        ["It makes sense that the bus feels frightening now."],
        [
            ("Yes, I have stopped taking the bus.", E),
            ("I have also stopped driving completely.", U),
            ("It's good to hear someone say that.", N),
        ],
    ),
    (
        "panic",
        "later",
        "Decision Making",
        ["Breathing exercises and a referral to therapy could both help."],
        [
            ("Would therapy mean weekly visits?", N),
            ("I'd prefer breathing exercises first.", N),
            ("My insurance does not cover therapy.", U),
        ],
    ),
    (
        "low_mood",
        "closed_world",
        "Fostering",
        [],
        [
            ("I've felt down nearly every day for about six weeks.", E),
            ("Since my dad passed in January things feel empty.", E),
            ("Sorry, this is hard to talk about.", N),
        ],
    ),
    (
        "low_mood",
        "closed_world",
        "Gathering",
        ["Have your eating habits changed?"],
        [
            ("I'm not very hungry anymore.", E),
            ("I've lost around 3 kg.", E),
            ("I've actually gained weight.", C),
        ],
    ),
    (
        "low_mood",
        "closed_world",
        "Gathering",
        ["Are there things you have stopped doing?"],
        [
            ("I quit my Tuesday football games.", E),
            ("I also stopped seeing my friends on weekends.", U),
            ("I just don't have the energy.", U),
        ],
    ),
    (
        "low_mood",
        "closed_world",
        "Gathering",
        ["Have you had any thoughts of hurting yourself?"],
        [
            ("No, nothing like that.", E),
            ("Sometimes I think everyone would be better off without me.", C),
        ],
    ),
    (
        "low_mood",
        "later",
        "Enabling",
        ["Try to do one small thing you used to enjoy this week."],
        [
            ("One small thing a week, I can try that.", E),
            ("Maybe I'll go watch a football game.", N),
            ("My doctor already put me on sertraline.", U),
        ],
    ),
    (
        "heart_failure_discharge",
        "closed_world",
        "history",
        [],
        [
            ("I came in because I couldn't breathe well and my legs were swollen.", E),
            ("They told me I have heart failure.", E),
            ("I also had a small heart attack while I was here.", U),
        ],
    ),
    (
        "heart_failure_discharge",
        "closed_world",
        "treatment",
        ["What did we do for you in the hospital?"],
        [
            ("You gave me a water pill through a drip.", E),
            ("I lost about 4 kg of fluid.", E),
            ("I had a stent put in.", U),
        ],
    ),
    (
        "heart_failure_discharge",
        "later",
        "teach_back",
        ["Tell me how you'll take your medicines at home."],
        [
            ("Furosemide 40 mg once a day.", E),
            ("Metoprolol 25 mg, twice a day.", E),
            ("And furosemide again at night.", C),
            ("Did I get that right?", N),
        ],
    ),
    (
        "heart_failure_discharge",
        "later",
        "teach_back",
        ["What will you do each morning?"],
        [
            ("Weigh myself every morning.", E),
            ("If I gain more than 2 kg in two days I call the clinic.", E),
            ("I'll also check my blood pressure with my new cuff.", U),
        ],
    ),
    (
        "heart_failure_discharge",
        "later",
        "follow_up",
        ["Your follow-up is with cardiology."],
        [
            ("Cardiology in two weeks, right?", E),
            ("My appointment is tomorrow.", C),
            ("Thanks for explaining.", N),
        ],
    ),
    (
        "pneumonia_discharge",
        "closed_world",
        "history",
        [],
        [
            ("I had a fever and a bad cough.", E),
            ("The X-ray showed pneumonia in my right lung.", E),
            ("It was in both lungs.", C),
        ],
    ),
    (
        "pneumonia_discharge",
        "closed_world",
        "treatment",
        ["How were you treated?"],
        [
            ("Antibiotics through the IV for three days.", E),
            ("I also needed oxygen the whole time.", U),
            ("I'm glad it's working.", N),
        ],
    ),
    (
        "pneumonia_discharge",
        "later",
        "teach_back",
        ["How long will you take the amoxicillin?"],
        [
            ("Five more days.", E),
            ("I can stop once I feel better.", C),
            ("Should I take it with food?", N),
        ],
    ),
    (
        "pneumonia_discharge",
        "later",
        "return_precautions",
        ["When should you come back?"],
        [
            ("If the fever comes back.", E),
            ("Or if I get short of breath.", E),
            ("Or if I get a rash from the pills.", U),
        ],
    ),
    (
        "diabetes_discharge",
        "closed_world",
        "history",
        [],
        [
            ("My sugar was very high and I kept throwing up.", E),
            ("They found out I have type 2 diabetes.", E),
            ("My mother has diabetes too.", U),
        ],
    ),
    (
        "diabetes_discharge",
        "closed_world",
        "treatment",
        ["Which medicine did we start?"],
        [
            ("Metformin 500 mg.", E),
            ("Twice a day.", E),
            ("Insulin at night.", C),
        ],
    ),
    (
        "diabetes_discharge",
        "later",
        "teach_back",
        ["When will you check your sugar?"],
        [
            ("Before breakfast, like the educator showed me.", E),
            ("And after every meal.", U),
            ("It's a lot to remember.", N),
        ],
    ),
    (
        "diabetes_discharge",
        "later",
        "follow_up",
        ["Who will you see next?"],
        [
            ("My family doctor next week.", E),
            ("The endocrinologist already called me.", U),
            ("Okay.", N),
        ],
    ),
    (
        "ocd",
        "closed_world",
        "Fostering",
        [],
        [
            ("I keep checking the stove before I leave.", E),
            ("Sometimes twenty times.", E),
            ("It's embarrassing.", N),
        ],
    ),
    (
        "ocd",
        "closed_world",
        "Gathering",
        ["How much time does it take?"],
        [
            ("About an hour every morning.", E),
            ("Only a few minutes, really.", C),
            ("I've been late to work four times this month.", E),
        ],
    ),
    (
        "ocd",
        "closed_world",
        "Gathering",
        ["Do you think the fear makes sense?"],
        [
            ("I know it's excessive.", E),
            ("But I truly believe the house will burn down.", C),
            ("I also wash my hands for hours.", U),
        ],
    ),
    (
        "ocd",
        "later",
        "Decision Making",
        ["Exposure and response prevention is a structured therapy for this."],
        [
            ("So I'd practise leaving without checking?", N),
            ("That sounds hard but I want to try.", N),
            ("My cousin did that therapy and it worked.", U),
        ],
    ),
    (
        "grief_work_stress",
        "closed_world",
        "Fostering",
        [],
        [
            ("My sister was in a car accident in May.", E),
            ("She's recovering now.", E),
            ("She is still in intensive care.", C),
        ],
    ),
    (
        "grief_work_stress",
        "closed_world",
        "Gathering",
        ["How have you been sleeping?"],
        [
            ("Around five hours a night.", E),
            ("I get headaches most afternoons.", E),
            ("I've been drinking more wine to relax.", U),
        ],
    ),
    (
        "grief_work_stress",
        "closed_world",
        "Gathering",
        ["How many hours are you working?"],
        [
            ("About sixty hours a week since May.", E),
            ("I work part-time.", C),
            ("I don't see a way to cut back.", N),
        ],
    ),
    (
        "grief_work_stress",
        "later",
        "Enabling",
        ["Could you protect one evening a week for rest?"],
        [
            ("One evening a week, maybe Sunday.", E),
            ("My manager already agreed to reduce my hours.", U),
            ("Thanks for asking about me.", N),
        ],
    ),
    (
        "insomnia",
        "later",
        "Exit",
        ["We covered caffeine, a regular wake time and a wind-down routine."],
        [
            ("Caffeine, wake time and a routine.", E),
            ("I'll see you again in a month.", U),
            ("Have a good day.", N),
        ],
    ),
    (
        "panic",
        "later",
        "Exit",
        ["Remember the breathing exercise: in for four, out for six."],
        [
            ("In for four and out for six.", E),
            ("Out for four and in for six, right?", C),
            ("Bye for now.", N),
        ],
    ),
]


def main() -> None:
    out = Path(__file__).resolve().parents[1] / "src" / "bedside" / "sim" / "data" / "fidelity_labelled.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for number, (case, phase, stage, clinician_said, sentences) in enumerate(TURNS, start=1):
        lines.append(
            json.dumps(
                {
                    "id": f"t{number:03d}",
                    "case": case,
                    "phase": phase,
                    "stage": stage,
                    "facts": CASES[case],
                    "clinician_said": clinician_said,
                    "sentences": [text for text, _ in sentences],
                    "labels": [label for _, label in sentences],
                },
                ensure_ascii=False,
            )
        )
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    total = sum(len(t[4]) for t in TURNS)
    print(f"wrote {len(TURNS)} turns, {total} sentences to {out}")


if __name__ == "__main__":
    main()
