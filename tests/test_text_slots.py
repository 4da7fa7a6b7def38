"""The slots similarity cannot see (bedside.text.slots), through the clinical-safety guard: reversals conflict under
their slot's kind, paraphrases do not, and a sentence that names both sides is never aligned."""

from __future__ import annotations

import time

import pytest

from bedside.text.conflicts import ClinicalGuard
from bedside.text.slots import opposite_pairs, read_slots

GUARD = ClinicalGuard(drug_finder=None)


def kinds(reference: str, candidate: str) -> set[str]:
    return {c.kind for c in GUARD.conflicts(reference, candidate)}


@pytest.mark.parametrize(
    ("reference", "candidate", "kind"),
    [
        ("If your sugar is below 70, skip the insulin.", "If your sugar is above 70, skip the insulin.", "comparison"),
        ("Children older than 6 months can have it.", "Children younger than 6 months can have it.", "comparison"),
        ("Take no more than 8 tablets a day.", "Take 8 tablets a day.", "comparison"),
        ("Call us if your weight goes up by 2 kg.", "Call us if your weight goes down by 2 kg.", "direction"),
        ("Check your sugar one hour after each meal.", "Check your sugar one hour before each meal.", "sequence"),
        ("It works best within 72 hours.", "It works best after 72 hours.", "sequence"),
        ("Walk with the crutches for two weeks.", "Walk without the crutches for two weeks.", "with"),
        ("Take it unless you are dizzy.", "Take it only if you are dizzy.", "condition"),
        ("Put ice on the ankle for 20 minutes.", "Put heat on the ankle for 20 minutes.", "opposite"),
        ("The biopsy shows the lump is benign.", "The biopsy shows the lump is malignant.", "opposite"),
        ("He is no longer contagious.", "He is still contagious.", "opposite"),
        ("The most you can take is 3,000 mg per day.", "The most you can take is 3,000 mg per dose.", "scope"),
        ("Drink no fewer than eight glasses a day.", "Drink fewer than eight glasses a day.", "comparison"),
        # issue 45's fifth round
        ("Phone us if the wound is red or warm.", "Phone us if the wound is red and warm.", "joined"),
        (
            "The mole was removed under a local anaesthetic.",
            "The mole was removed under a general anaesthetic.",
            "opposite",
        ),
        ("Your pain has been starting earlier each day.", "Your pain has been starting later each day.", "opposite"),
        # 2026-11-29: urgency, route, certainty and the order of two steps
        (
            "If your lips swell, call 911 right away.",
            "If your lips swell, bring it up at your next clinic visit.",
            "opposite",
        ),
        ("If the cut keeps bleeding, go straight to the ER.", "If the cut keeps bleeding, wait and see.", "opposite"),
        ("Let the tablet dissolve under your tongue.", "Swallow the tablet with a glass of water.", "opposite"),
        ("Put one suppository into your back passage at night.", "Take one suppository by mouth at night.", "opposite"),
        ("The MRI confirmed a torn ligament.", "The MRI could not rule out a torn ligament.", "opposite"),
        (
            "A little swelling after the injection is expected.",
            "A little swelling after the injection is a warning sign.",
            "opposite",
        ),
        (
            "Wash your hands first, then change the dressing.",
            "Change the dressing first, then wash your hands.",
            "order",
        ),
        ("Eat something before you inject the insulin.", "Inject the insulin before you eat anything.", "order"),
        # a scope said without "per", food timing with a meal, a reference range, a response to treatment
        ("Take no more than 4 g in a 24-hour period.", "Take no more than 4 g at any one time.", "scope"),
        (
            "Take the enzyme with the first bite of each meal.",
            "Take the enzyme half an hour before each meal.",
            "sequence",
        ),
        ("Your potassium is within the normal range.", "Your potassium is below the normal range.", "opposite"),
        ("The scan shows the cyst has shrunk.", "The scan shows the cyst has stayed the same.", "opposite"),
        (
            "Drink plenty of fluids while the stone passes.",
            "Cut right back on fluids while the stone passes.",
            "opposite",
        ),
        # the exchange round (2026-11-29): who does a step, what it leaves out, required or allowed, and slot
        # words read later in a sentence
        ("The practice nurse will remove your stitches on Monday.", "You can remove your stitches on Monday.", "actor"),
        ("Have your wife give the injection.", "Give yourself the injection.", "actor"),
        ("Your partner needs the tablets too.", "Only you need the tablets.", "actor"),
        ("Restart all your tablets except the metformin.", "Restart only the metformin.", "exception"),
        ("You must wear the brace when you walk.", "You can wear the brace when you walk if you like.", "modality"),
        ("You need to see a doctor today.", "You may want to see a doctor today.", "modality"),
        (
            "Keep away from swimming pools until the cast is off.",
            "Keep away from swimming pools starting when the cast is off.",
            "sequence",
        ),
        (
            "The morning-after pill works within 3 days of sex.",  # "morning-after" is no "after"
            "The morning-after pill works after 3 days of sex.",
            "sequence",
        ),
        ("Bathe as long as the wound is dry.", "Bathe unless the wound is dry.", "condition"),
        ("No more than 4 g in a whole day.", "No more than 4 g in a single dose.", "scope"),
        ("Stay upright for half an hour after the tablet.", "Lie down for half an hour after the tablet.", "opposite"),
        ("The biopsy showed a harmless wart.", "The biopsy showed a squamous cell carcinoma.", "opposite"),
        ("The rash has cleared since Monday.", "The rash has got worse since Monday.", "opposite"),
        ("Your scan has been postponed by a week.", "Your scan has been brought forward by a week.", "opposite"),
        ("A sunken soft spot means she needs fluids.", "A bulging soft spot means she needs fluids.", "opposite"),
        ("You may bear full weight on the left foot.", "You may bear partial weight on the left foot.", "opposite"),
        ("The echo shows normal pumping of the heart.", "The echo shows weak pumping of the heart.", "opposite"),
        ("The surface antigen test is positive.", "The surface antibody test is positive.", "opposite"),
        (
            "Start the antibiotics if your phlegm turns yellow.",
            "Start the antibiotics if your phlegm stays clear.",
            "opposite",
        ),
        ("Spray the naloxone into one nostril.", "Spray the naloxone into her mouth.", "opposite"),
        ("Most children grow out of it.", "Few children grow out of it.", "opposite"),
    ],
)
def test_a_reversal_conflicts_in_its_slot(reference: str, candidate: str, kind: str) -> None:
    assert kind in kinds(reference, candidate)
    assert kind in kinds(candidate, reference)


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("Do not take more than 3,000 mg of acetaminophen a day.", "Take at most 3 g of acetaminophen a day."),
        ("You shouldn't lift anything heavier than 10 pounds.", "Keep all your lifting to 10 pounds or less."),
        ("Wait 48 hours before showering.", "Wait two days before showering."),
        ("Take it every 12 hours.", "Take it twice a day."),
        ("Your blood pressure was 130 over 80.", "Your blood pressure was 130/80."),
        ("Hold the aspirin for now.", "Stop the aspirin for the time being."),
        ("He is no longer contagious.", "He is not contagious anymore."),
        ("Drink no fewer than eight glasses of water a day.", "Drink at least eight glasses of water a day."),
        ("Use it twice a day.", "Use it once in the morning and once in the evening."),
        ("Give it three times a day.", "Give it in the morning, at lunchtime and at bedtime."),
        # issue 45's fifth round
        ("Avoid carrying anything heavier than 5 kg.", "Do not carry more than 5 kg."),
        ("Use the inhaler at 7 am and 7 pm every day.", "Use the inhaler twice daily, morning and evening."),
        ("Give the tablets 12 hours apart.", "Give the tablets twice a day."),
        ("Your ECG is normal.", "Your ECG is not abnormal."),
        ("Stop the rivaroxaban three days ahead of the biopsy.", "Stop the rivaroxaban 3 days before the biopsy."),
        ("Take the levothyroxine at 6 am.", "Take the levothyroxine once a day, in the morning."),
        # 2026-11-29: urgency, route, certainty and the order of two steps
        ("Call 911 right away if you faint.", "If you faint, call an ambulance immediately."),
        ("The scan showed a small kidney stone.", "The scan confirmed a small kidney stone."),
        ("Wash your hands first, then change the dressing.", "Change the dressing after you wash your hands."),
        (
            "Before taking the next dose, call us if you have a rash.",
            "Call us if you have a rash before you take the next dose.",
        ),
        ("Leave the drain in until then.", "Keep the drain in place until then."),
        ("Take it with breakfast.", "Take it with your breakfast."),
        # the exchange round (2026-11-29)
        ("We will book the scan for you.", "We will arrange the scan for you."),
        ("The nurse will call you on Friday.", "You will get a call from the nurse on Friday."),
        ("You need to keep the dressing dry.", "You must keep the dressing dry."),
        ("The dose goes up to 5 ml next week.", "Next week the dose increases to 5 ml."),
        ("Your A1c is 7.1%, just above your target of 7%.", "At 7.1%, your A1c is a touch over the 7% goal."),
        ("It came down from eight point one.", "It came down from 8.1."),
        ("The mole was benign.", "The mole was not cancerous."),
        ("Take it every morning and evening.", "Take it twice a day."),
        ("Most people feel better within a few days.", "The majority of people feel better within a few days."),
        # negation stops at "before", "after", "while" and "during"; "with no fever" is without one
        (
            "Do not have any food after 10 pm before your scan.",
            "Fast from 10 pm on the night before your scan, with nothing at all to eat.",
        ),
        (
            "Do not lift anything heavy while your wound heals.",
            "Avoid heavy lifting until the wound has healed, with no exceptions.",
        ),
        ("Go back to school after 24 hours without a fever.", "Go back to school after 24 hours with no fever."),
    ],
)
def test_a_paraphrase_does_not(reference: str, candidate: str) -> None:
    assert GUARD.conflicts(reference, candidate) == []


def test_a_sentence_naming_both_sides_is_not_aligned() -> None:
    assert "opposite" not in kinds("Use ice, not heat.", "Use heat.")  # the reference names both: no alignment
    # (the "no" each of these says is the negation rule's to read, not the opposites')
    urgent = ("Call 911 now rather than mentioning it at your next visit.", "Don't wait for your next visit: call 911.")
    assert "opposite" not in kinds(*urgent)
    assert "opposite" not in kinds(
        "Put the tablet under your tongue; do not swallow it.", "Let it melt under your tongue."
    )


def test_the_opposites_cite_their_source() -> None:
    pairs = opposite_pairs()
    assert len(pairs) >= 8
    assert all(pair.source and not set(pair.a) & set(pair.b) for pair in pairs)
    assert all((pair.a or pair.a_patterns) and (pair.b or pair.b_patterns) for pair in pairs)  # two sides each


def test_bad_sentences_give_no_slot_and_no_error() -> None:
    for text in ("", "!!! ### ???", "1 2 3 4 5 6 7 8 9", "Nehmen Sie zwei Tabletten vor dem Essen."):
        slots, rest = read_slots(text.lower())
        assert len(rest) == len(text)
        assert all(kind != "opposite" for kind, _, _ in slots)
    long = "Take it before meals and rest with your leg up if you can. " * 500  # 30,000 characters
    started = time.process_time()
    assert GUARD.conflicts(long, long) == []
    assert time.process_time() - started < 60  # a hang guard, not a speed test


def test_parts_of_the_day_count_as_a_frequency_only_when_the_counts_match() -> None:
    assert "time" in kinds("Use it twice a day.", "Use it in the morning.")
    assert "time" in kinds("Use it in the morning and at bedtime.", "Use it three times a day.")
    # a clock time is a part of the day; "every day" with two of them is twice a day, "once" counts
    assert "time" in kinds("Use it at 8 am and 8 pm every day.", "Use it once a day.")
    assert "time" in kinds("Take it at 9 am.", "Take it at 9 pm.")
    assert "time" not in kinds("Take it once a day, morning or evening.", "Take it once a day.")
    assert "time" in kinds("Take the prednisolone as needed.", "Take the prednisolone in the morning.")
