"""Write ``src/bedside/sim/data/fidelity_heldout.jsonl``: an independent held-out set for the fidelity checker.

Provenance: written for bedside on 2026-11-27 by a writer who had not seen the checker's rules (nor its code,
its labelled dev/test set beyond the first lines for the file format, nor its documentation), so the set measures
the checker on sentences its rules were never tuned against. All patients are invented; MTS-Dialog was read for
the style of recorded patient talk only and no text was copied from it.

Each row is one patient sentence judged against the facts its simulated patient was given:
``entailed`` (the facts say it, perhaps in other words or only in part), ``contradicted`` (it cannot be true if
the facts are), ``unsupported`` (a plausible new claim the facts neither state nor contradict: a sentence adding
anything beyond the facts is unsupported unless it contradicts one) and ``non_informative`` (greetings,
questions, thanks, hesitations). ``kind`` names how a sentence departs from its facts; ``style`` is ``dialogue``
for sentences written like recorded patient talk (fillers, hedges, run-ons), else ``plain``. Every row is in the
``heldout`` split.

Run: ``python tools/make_fidelity_heldout.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "bedside" / "sim" / "data" / "fidelity_heldout.jsonl"

E, C, U, N = "entailed", "contradicted", "unsupported", "non_informative"
D, P = "dialogue", "plain"

FACTS: dict[str, list[str]] = {
    "copd": [
        "I was admitted with a flare-up of my COPD after a chest infection.",
        "I go home on prednisolone 30 mg once a day for five days.",
        "I use my tiotropium inhaler once every morning.",
        "I use salbutamol two puffs when I am short of breath.",
        "I stopped smoking three years ago.",
        "I have a follow-up with the lung clinic on Tuesday the 9th of December.",
    ],
    "diabetes": [
        "I have type 2 diabetes.",
        "I was admitted because my sugar was very high and I was dehydrated.",
        "I take metformin 1000 mg twice a day with meals.",
        "I now inject 10 units of insulin glargine at bedtime.",
        "I check my sugar before breakfast and before dinner.",
        "My daughter helps me with my injections.",
    ],
    "appendectomy": [
        "I had keyhole surgery to take out my appendix on Monday.",
        "I take paracetamol 1 g four times a day for pain.",
        "I must not lift anything heavy for four weeks.",
        "My stitches come out at my GP practice in ten days.",
        "I have no allergies to medicines.",
    ],
    "pneumonia": [
        "I was treated for pneumonia in my right lung.",
        "I take amoxicillin 500 mg three times a day for seven more days.",
        "I still have a cough but the fever is gone.",
        "I live alone in a flat on the second floor.",
        "I should have a chest X-ray in six weeks.",
    ],
    "stroke": [
        "I had a stroke that left my left arm weak.",
        "I take clopidogrel 75 mg once a day.",
        "I take atorvastatin 80 mg at night.",
        "I must not drive for one month.",
        "A physiotherapist will visit me at home twice a week.",
    ],
    "hip_fracture": [
        "I fell at home and broke my right hip.",
        "I had a hip replacement operation on the 14th of November.",
        "I walk with a frame.",
        "I inject enoxaparin once a day for 28 days to prevent clots.",
        "My son is staying with me for the first two weeks.",
    ],
    "depression": [
        "I have been feeling low for about three months.",
        "I cannot sleep through the night and wake at about 4 am.",
        "I started sertraline 50 mg once a day in the morning.",
        "I have lost interest in gardening, which I used to love.",
        "I will see the mental health nurse every Thursday.",
    ],
    "asthma": [
        "I came in with an asthma attack after catching a cold.",
        "I use my brown preventer inhaler, beclometasone, two puffs twice a day.",
        "I use my blue reliever inhaler when I am wheezy.",
        "I finish a course of prednisolone 40 mg a day for five days.",
        "My asthma gets worse around cats.",
        "My peak flow at home should be above 400.",
    ],
    "kidney_stone": [
        "I was admitted with a kidney stone on my left side.",
        "The stone is 4 mm and should pass on its own.",
        "I take tamsulosin 400 micrograms once a day to help it pass.",
        "I should drink at least three litres of water a day.",
        "I take diclofenac for the pain, but no more than three times a day.",
        "I must come back if I get a fever.",
    ],
    "cellulitis": [
        "I have cellulitis in my right lower leg.",
        "I take flucloxacillin 500 mg four times a day on an empty stomach.",
        "I must keep my leg raised when I sit.",
        "The red area was marked with a pen so I can see if it spreads.",
        "I have had cellulitis once before, two years ago.",
    ],
    "atrial_fibrillation": [
        "I was found to have atrial fibrillation, an irregular heartbeat.",
        "I take apixaban 5 mg twice a day to thin my blood.",
        "I take bisoprolol 5 mg once a day to slow my heart.",
        "I must tell my dentist that I am on a blood thinner.",
        "I have an appointment with the heart rhythm clinic in March.",
    ],
    "pregnancy": [
        "I am 32 weeks pregnant with my second baby.",
        "I have gestational diabetes.",
        "I manage it with diet alone and check my sugar four times a day.",
        "I take aspirin 150 mg every night.",
        "My partner comes with me to the antenatal appointments.",
        "My next scan is on Friday.",
    ],
    "migraine": [
        "I get migraines about twice a month.",
        "My migraines start with flashing lights before the pain.",
        "I take sumatriptan 50 mg when a migraine starts.",
        "I started propranolol 40 mg twice a day to prevent them.",
        "My mother also had migraines.",
    ],
}

# (case, kind, style, label, sentence, what the clinician said just before or "")
ROWS: list[tuple[str, str, str, str, str, str]] = [
    # COPD
    ("copd", "paraphrase", P, E, "I was brought in because my COPD flared up after a chest infection.", ""),
    (
        "copd",
        "colloquial",
        D,
        E,
        "Um, the tiotropium one, once in the morning, and the salbutamol when I get puffed out.",
        "What inhalers do you use?",
    ),
    ("copd", "partial", D, E, "No, I gave up a few years back.", "Do you smoke?"),
    ("copd", "frequency", D, C, "Yeah so the tiotropium, I do that, uh, morning and night.", ""),
    ("copd", "dose", P, C, "I take prednisolone 20 mg once a day for five days.", ""),
    ("copd", "negation", D, C, "Oh I still smoke, just a few a day, you know.", ""),
    ("copd", "weekday", P, C, "My lung clinic appointment is on Thursday the 9th of December.", ""),
    ("copd", "duration", D, C, "And the steroid tablets, I think they said ten days, yeah.", ""),
    ("copd", "new_symptom", D, U, "I've been coughing up a lot of green stuff in the mornings, to be honest.", ""),
    ("copd", "new_treatment", P, U, "I have oxygen at home that I use at night.", ""),
    ("copd", "family_history", P, U, "My father had emphysema too.", ""),
    ("copd", "question", D, N, "Sorry, could you say that again?", ""),
    # diabetes
    ("diabetes", "paraphrase", D, E, "I came in because my blood sugar was really high and I was all dried out.", ""),
    (
        "diabetes",
        "colloquial",
        D,
        E,
        "Um, metformin, a thousand, twice a day when I eat.",
        "Which tablets do you take?",
    ),
    ("diabetes", "colloquial", D, E, "And the long-acting insulin, the glargine, ten units before bed.", ""),
    ("diabetes", "timing", D, C, "I do the insulin, um, first thing in the morning, right after I get up.", ""),
    ("diabetes", "dose", P, C, "I inject 20 units of glargine at bedtime.", ""),
    ("diabetes", "diagnosis", P, C, "I have type 1 diabetes.", ""),
    ("diabetes", "relative", D, C, "My son helps me with the injections, my daughter doesn't get involved.", ""),
    ("diabetes", "meal_timing", P, C, "I take the metformin on an empty stomach, well before I eat.", ""),
    ("diabetes", "new_drug", D, U, "I'm also on gliclazide, uh, one in the morning.", ""),
    ("diabetes", "new_symptom", D, U, "I've got a bit of numbness in my feet from the diabetes.", ""),
    ("diabetes", "habit", D, U, "I don't really drink, maybe a glass of wine at Christmas.", "Do you drink alcohol?"),
    ("diabetes", "thanks", D, N, "Okay, thank you, that's really helpful.", ""),
    # appendectomy
    ("appendectomy", "paraphrase", P, E, "They took my appendix out with keyhole surgery on Monday.", ""),
    (
        "appendectomy",
        "colloquial",
        D,
        E,
        "Just the paracetamol, a gram, four times a day, for the pain.",
        "What are you taking for pain?",
    ),
    ("appendectomy", "partial", D, E, "No, none that I know of.", "Any allergies to medicines?"),
    ("appendectomy", "negation", D, C, "I'm allergic to penicillin, it gives me a rash.", ""),
    ("appendectomy", "weekday", P, C, "I had the operation on Wednesday.", ""),
    ("appendectomy", "procedure", D, C, "They had to do, like, a big open cut, not the keyhole one.", ""),
    ("appendectomy", "duration", P, C, "I can't lift anything heavy for two weeks.", ""),
    ("appendectomy", "place", P, C, "My stitches come out at the hospital clinic, not at my GP.", ""),
    ("appendectomy", "new_symptom", D, U, "I've felt a bit sick since the operation, um, off and on.", ""),
    ("appendectomy", "social", D, U, "I work in a warehouse, so I'll need a note for my boss.", ""),
    ("appendectomy", "hesitation", D, N, "Um, let me think for a second.", ""),
    # pneumonia
    ("pneumonia", "paraphrase", P, E, "I had pneumonia on the right side.", ""),
    ("pneumonia", "colloquial", D, E, "The amoxicillin, yeah, three times a day, I've got another week of it.", ""),
    (
        "pneumonia",
        "paraphrase",
        D,
        E,
        "The fever's gone now, thank God, but I'm still coughing.",
        "How are you feeling?",
    ),
    ("pneumonia", "side", P, C, "The pneumonia was in my left lung.", ""),
    ("pneumonia", "dose", P, C, "I take amoxicillin 250 mg three times a day.", ""),
    ("pneumonia", "meaning", D, C, "Honestly the cough's completely gone now.", ""),
    ("pneumonia", "social", D, C, "I live with my wife, so there's always someone at home.", ""),
    ("pneumonia", "follow_up", P, C, "I need a chest X-ray in two weeks.", ""),
    ("pneumonia", "history", D, U, "I had pneumonia once before, when I was a kid.", ""),
    ("pneumonia", "new_symptom", P, U, "I get a sharp pain on the right side when I take a deep breath.", ""),
    ("pneumonia", "social", D, U, "There's no lift in my building, so the stairs are hard.", ""),
    ("pneumonia", "greeting", P, N, "Hello, nice to meet you.", ""),
    # stroke
    ("stroke", "paraphrase", P, E, "The stroke made my left arm weak.", ""),
    ("stroke", "colloquial", D, E, "Um, the clopidogrel, one a day, seventy-five.", ""),
    ("stroke", "paraphrase", D, E, "I'm not allowed to drive for a month, they said.", ""),
    ("stroke", "side", D, C, "Since the stroke it's, uh, my right arm that's gone weak.", ""),
    ("stroke", "drug", P, C, "Instead of clopidogrel they put me on aspirin 75 mg once a day.", ""),
    ("stroke", "timing", P, C, "I take the atorvastatin in the morning with breakfast.", ""),
    ("stroke", "dose", P, C, "I take atorvastatin 40 mg at night.", ""),
    ("stroke", "frequency", D, C, "The physio comes round to the house just the once a week.", ""),
    ("stroke", "duration", D, C, "And no driving for, what was it, six months.", ""),
    ("stroke", "history", P, U, "I also have high blood pressure and take amlodipine.", ""),
    ("stroke", "new_symptom", P, U, "My speech was a bit slurred when it happened.", ""),
    ("stroke", "story", D, U, "My wife noticed my face had dropped, so she called the ambulance.", ""),
    ("stroke", "question", D, N, "Sorry, what was the question?", ""),
    # hip fracture
    ("hip_fracture", "paraphrase", P, E, "I broke my right hip when I fell at home.", ""),
    ("hip_fracture", "colloquial", D, E, "I'm using the walking frame, the Zimmer thing, to get around.", ""),
    ("hip_fracture", "paraphrase", D, E, "My son's staying with me for the first couple of weeks.", ""),
    ("hip_fracture", "side", P, C, "It was my left hip that I broke.", ""),
    ("hip_fracture", "month", P, C, "I had the operation on the 14th of October.", ""),
    ("hip_fracture", "relative", D, C, "It's my daughter who's staying with me, not my son.", ""),
    ("hip_fracture", "frequency", D, C, "The injections, the blood thinner, I do those twice a day.", ""),
    ("hip_fracture", "duration", P, C, "I only need the injections for one week.", ""),
    ("hip_fracture", "meaning", D, C, "I'm walking fine on my own now, no frame or anything.", ""),
    ("hip_fracture", "history", P, U, "I have osteoporosis, they told me my bones are thin.", ""),
    ("hip_fracture", "story", D, U, "I think I tripped over the rug in the hallway, to be honest.", ""),
    ("hip_fracture", "new_symptom", P, U, "I've been a bit constipated since the operation.", ""),
    ("hip_fracture", "filler", D, N, "Right, okay.", ""),
    # depression
    ("depression", "paraphrase", D, E, "I've been feeling down for, um, about three months now.", ""),
    ("depression", "paraphrase", D, E, "I keep waking up at about four in the morning.", "How are you sleeping?"),
    ("depression", "paraphrase", D, E, "I just don't enjoy the garden anymore, and I used to love it.", ""),
    ("depression", "meaning", D, C, "I sleep fine, it's more that I feel tired in the day.", "How are you sleeping?"),
    ("depression", "timing", P, C, "I take the sertraline at night before bed.", ""),
    ("depression", "dose", P, C, "I take sertraline 100 mg a day.", ""),
    ("depression", "weekday", P, C, "I see the mental health nurse every Monday.", ""),
    (
        "depression",
        "duration",
        D,
        C,
        "It's really only been, like, the last couple of weeks.",
        "How long have you felt low?",
    ),
    ("depression", "meaning", D, C, "I'm still out in the garden every day, I love it.", ""),
    ("depression", "new_symptom", P, U, "I've had thoughts of not wanting to be here.", ""),
    ("depression", "new_symptom", D, U, "My appetite's gone too, I've lost a bit of weight.", ""),
    ("depression", "history", P, U, "I had depression before, after my first child was born.", ""),
    ("depression", "thanks", D, N, "Thanks for listening, honestly.", ""),
    # asthma
    ("asthma", "paraphrase", D, E, "I had a bad asthma attack after I caught a cold.", ""),
    ("asthma", "colloquial", P, E, "I use the brown inhaler, two puffs morning and evening.", ""),
    ("asthma", "paraphrase", D, E, "Cats set it off, yeah, it always gets worse around them.", ""),
    ("asthma", "drug", D, C, "My preventer's the blue one, the salbutamol.", ""),
    ("asthma", "dose", P, C, "I take prednisolone 20 mg a day.", ""),
    ("asthma", "meaning", D, C, "Animals don't bother my asthma at all.", ""),
    ("asthma", "number", P, C, "My peak flow should stay above 250.", ""),
    ("asthma", "frequency", D, C, "It's just the one puff of the brown inhaler, once a day.", ""),
    ("asthma", "history", P, U, "I was in intensive care with my asthma when I was a teenager.", ""),
    ("asthma", "habit", D, U, "I smoke, um, about ten a day.", "Do you smoke?"),
    ("asthma", "family_history", P, U, "My sister has asthma as well.", ""),
    ("asthma", "question", D, N, "Could you write that down for me?", ""),
    # kidney stone
    ("kidney_stone", "paraphrase", P, E, "It's a small stone, 4 mm, and it should come out by itself.", ""),
    ("kidney_stone", "paraphrase", D, E, "I've got to drink, like, three litres of water a day, at least.", ""),
    ("kidney_stone", "paraphrase", D, E, "If I get a temperature I come straight back, they said.", ""),
    ("kidney_stone", "side", D, C, "It's on the right, the pain's all down my right side.", ""),
    ("kidney_stone", "number", P, C, "The stone is 8 mm.", ""),
    ("kidney_stone", "dose", P, C, "I take tamsulosin 4 mg once a day.", ""),
    ("kidney_stone", "frequency", D, C, "I can take the diclofenac up to six times a day if I need it.", ""),
    ("kidney_stone", "instruction", P, C, "I've been told to cut back on fluids.", ""),
    ("kidney_stone", "history", P, U, "This is my third kidney stone.", ""),
    ("kidney_stone", "new_symptom", P, U, "There was some blood in my urine.", ""),
    ("kidney_stone", "habit", D, U, "I drink a lot of cola, maybe that's it.", ""),
    ("kidney_stone", "filler", D, N, "Okay, got it.", ""),
    # cellulitis
    ("cellulitis", "paraphrase", P, E, "It's cellulitis on my lower right leg.", ""),
    (
        "cellulitis",
        "colloquial",
        D,
        E,
        "The flucloxacillin, four times a day, and I've got to take it when my stomach's empty.",
        "",
    ),
    ("cellulitis", "paraphrase", P, E, "They drew round the red bit with a pen so I can tell if it spreads.", ""),
    ("cellulitis", "partial", D, E, "Yeah, once, a couple of years ago.", "Have you had this before?"),
    ("cellulitis", "side", P, C, "The infection is in my left leg.", ""),
    ("cellulitis", "timing", P, C, "I take the antibiotics with food.", ""),
    ("cellulitis", "frequency", P, C, "I take flucloxacillin 500 mg twice a day.", ""),
    ("cellulitis", "history", D, C, "I've never had anything like this before.", ""),
    ("cellulitis", "instruction", D, C, "I'm meant to keep walking on it and not put it up.", ""),
    ("cellulitis", "story", D, U, "I think it started from a scratch from my cat.", ""),
    ("cellulitis", "history", P, U, "I'm diabetic, so they were worried about it.", ""),
    ("cellulitis", "question", P, N, "Is that everything?", ""),
    # atrial fibrillation
    ("atrial_fibrillation", "paraphrase", P, E, "They said my heartbeat is irregular, it's atrial fibrillation.", ""),
    (
        "atrial_fibrillation",
        "colloquial",
        D,
        E,
        "The apixaban, the blood thinner, that's five milligrams twice a day.",
        "",
    ),
    ("atrial_fibrillation", "paraphrase", P, E, "I should let my dentist know I'm on a blood thinner.", ""),
    ("atrial_fibrillation", "dose", P, C, "I take apixaban 10 mg twice a day.", ""),
    ("atrial_fibrillation", "frequency", P, C, "I take apixaban once a day.", ""),
    ("atrial_fibrillation", "drug_class", P, C, "I take bisoprolol to thin my blood.", ""),
    ("atrial_fibrillation", "month", D, C, "My heart rhythm clinic appointment is in May, I think.", ""),
    ("atrial_fibrillation", "drug", P, C, "My blood thinner is warfarin.", ""),
    ("atrial_fibrillation", "meaning", D, C, "They said my heartbeat's totally regular, nothing to worry about.", ""),
    ("atrial_fibrillation", "new_symptom", P, U, "I get palpitations when I climb the stairs.", ""),
    ("atrial_fibrillation", "habit", D, U, "I drink about four cups of coffee a day, probably too many.", ""),
    ("atrial_fibrillation", "family_history", D, U, "My dad had a stroke from the same thing, I think.", ""),
    ("atrial_fibrillation", "greeting", P, N, "Good morning, doctor.", ""),
    # pregnancy
    ("pregnancy", "colloquial", D, E, "I'm thirty-two weeks along with my second.", ""),
    ("pregnancy", "paraphrase", D, E, "I've got gestational diabetes, so I'm just controlling it with what I eat.", ""),
    ("pregnancy", "paraphrase", P, E, "I check my sugar four times a day.", ""),
    ("pregnancy", "paraphrase", D, E, "My partner comes with me to the antenatal appointments, yeah.", ""),
    ("pregnancy", "number", P, C, "This is my first baby.", ""),
    ("pregnancy", "treatment", D, C, "I'm on insulin for the diabetes, um, twice a day.", ""),
    ("pregnancy", "timing", P, C, "I take the aspirin every morning.", ""),
    ("pregnancy", "dose", P, C, "I take aspirin 75 mg every night.", ""),
    ("pregnancy", "weekday", D, C, "My next scan's on Wednesday, I think.", ""),
    ("pregnancy", "number", P, C, "I'm 28 weeks pregnant.", ""),
    ("pregnancy", "new_symptom", P, U, "My blood pressure has been a bit high too.", ""),
    ("pregnancy", "history", P, U, "I had a caesarean with my first baby.", ""),
    ("pregnancy", "new_symptom", D, U, "I've been getting really swollen ankles this week.", ""),
    ("pregnancy", "filler", D, N, "Okay, that makes sense.", ""),
    # migraine
    ("migraine", "paraphrase", D, E, "I get migraines, um, a couple of times a month.", ""),
    ("migraine", "paraphrase", D, E, "Before the pain starts I see, like, flashing lights.", ""),
    ("migraine", "colloquial", D, E, "My mum had migraines too.", ""),
    ("migraine", "colloquial", D, E, "I take the sumatriptan, the fifty, as soon as one starts.", ""),
    ("migraine", "frequency", P, C, "I get migraines about twice a week.", ""),
    ("migraine", "frequency", P, C, "I take propranolol 40 mg once a day.", ""),
    ("migraine", "drug_role", D, C, "The propranolol's just for when a migraine comes on.", ""),
    ("migraine", "relative", P, C, "Nobody else in my family gets migraines.", ""),
    ("migraine", "meaning", D, C, "I don't get any warning before the headache, it just hits me.", ""),
    ("migraine", "trigger", D, U, "Red wine seems to set them off.", ""),
    ("migraine", "new_drug", P, U, "I also take the contraceptive pill.", ""),
    ("migraine", "new_symptom", D, U, "I get really sick with them, like, I have to lie down in the dark.", ""),
    ("migraine", "hesitation", D, N, "Um, what was I saying?", ""),
]


def rows() -> list[dict[str, object]]:
    """The set's rows, numbered per case in the order written."""
    counters: dict[str, int] = {}
    out: list[dict[str, object]] = []
    for case, kind, style, label, sentence, clinician in ROWS:
        counters[case] = counters.get(case, 0) + 1
        out.append(
            {
                "id": f"{case}-{counters[case]:02d}",
                "split": "heldout",
                "case": case,
                "kind": kind,
                "style": style,
                "facts": FACTS[case],
                "clinician_said": [clinician] if clinician else [],
                "sentences": [sentence],
                "labels": [label],
            }
        )
    return out


def main() -> None:
    with OUT.open("w", encoding="utf-8") as f:
        for row in rows():
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
