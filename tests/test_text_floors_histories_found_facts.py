"""The round of floors, histories and facts found elsewhere (issue 45, the twelfth round).

Each sentence here was written for this file, after the development sets' errors were read; none is copied from
a labelled set. Guard pairs are read by the clinical-safety guard, patient sentences by the fidelity checker's
combined rules, and every case fails on the rules before the round, save those of the one test that says they held
before.
"""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import label_combined
from bedside.text.quantities import normalise_quantities
from round_checks import fidelity_round_tests, guard_round_tests

REVERSED = [
    # a choice of "after" over "beforehand", against "before" over "afterwards"
    (
        "Wait until after the scan to eat, rather than eating beforehand.",
        "Eat before the scan, rather than waiting until afterwards.",
    ),
    # safe or dangerous (WordNet: dangerous/safe)
    (
        "Sharing a bed with your baby after you have been drinking is dangerous.",
        "Sharing a bed with your baby after you have been drinking is fine for most families.",
    ),
    # each of a pair, against one of it
    (
        "Put one drop of the antibiotic in each eye four times a day.",
        "Put one drop of the antibiotic in one eye four times a day.",
    ),
]

PARAPHRASES = [
    # half of a tablet of a strength is half the strength
    (
        "Take half of a 20 mg tablet of the propranolol at night.",
        "At night take 10 mg of propranolol, half of one 20 mg tablet.",
    ),
    # "N and older" is "N or above"
    (
        "The shingles vaccine is offered to everyone aged 65 and older.",
        "Everyone aged sixty-five or above can have the shingles vaccine.",
    ),
    # "in the first N months" is under N months
    (
        "A baby under 2 months with a temperature needs to be seen the same day.",
        "Any baby in the first two months of life with a temperature needs to be seen the same day.",
    ),
    # hours between doses are hours apart
    (
        "Leave at least 4 hours between doses of the paracetamol syrup.",
        "Doses of the paracetamol syrup should be no less than four hours apart.",
    ),
]


test_the_guard_rejects_what_the_round_taught_it, test_the_guard_keeps_paraphrases_the_round_taught_it = (
    guard_round_tests(REVERSED, PARAPHRASES)
)


def test_doses_in_a_day_and_hours_between_doses_are_rates() -> None:
    assert normalise_quantities("no more than 3 doses in a day") == "no more than three times a day"
    assert normalise_quantities("6 hours between doses") == "four times a day"
    assert normalise_quantities("half of a 10 mg tablet") == "5 mg"


CONTRADICTED = [
    # a floor against another floor
    (
        ["I live in a second-floor flat and the lift is often broken."],
        "Can you manage stairs at home?",
        "We're on the ground floor, thankfully.",
    ),
    # never smoked, against a smoker who quit
    (
        ["I smoked a pack a day until I gave up ten years ago."],
        "Do you smoke?",
        "No, I've never smoked.",
    ),
    # the first one ever, against one had before
    (
        ["I have had three concussions before from playing hockey."],
        "Have you had a head injury before?",
        "This is my first ever concussion.",
    ),
    # right-handed against left-handed
    (["I am left-handed."], "Which hand do you write with?", "I'm right-handed."),
    # one kind of dialysis against the other
    (
        ["I have haemodialysis at the unit three times a week."],
        "How do you do your dialysis?",
        "I'm on peritoneal dialysis.",
    ),
    # no medicines, against one taken
    (
        ["I take metformin 500 mg twice a day."],
        "Do you take any medicines?",
        "I'm not on any medication at all.",
    ),
    (
        ["I work as a bus driver.", "I have no other health problems and take no medicines."],
        "Do you take anything for your blood pressure?",
        "I take a blood pressure tablet every morning.",
    ),
    # every single night, against a few times a week
    (
        ["The cramps wake me about twice a week."],
        "How often do the cramps wake you?",
        "They wake me every single night.",
    ),
]

NOT_CONTRADICTED = [
    # the time the sentence gives is another near fact's: found there
    (
        [
            "I am 58 years old.",
            "I had a liver transplant nine months ago.",
            "I was on the transplant list for two years before the operation.",
            "I take tacrolimus 2 mg twice a day.",
        ],
        "When did you have the transplant?",
        "It was about nine months ago, give or take.",
    ),
    # a bound beside the number said
    (
        ["I have had migraines for twelve years."],
        "How long have you had migraines?",
        "For over a decade, twelve years or so.",
    ),
    # an hour on the clock is no count
    (
        ["I have dialysis three times a week."],
        "How do you get to dialysis?",
        "The ambulance picks me up at about seven in the morning.",
    ),
    # doses in a day are times a day
    (
        ["I take ibuprofen 400 mg when the pain is bad, no more than three times a day."],
        "How much ibuprofen do you take?",
        "Four hundred milligrams when it's bad, never more than three doses in a day.",
    ),
    # a medicine that does not agree with me is an allergy said another way
    (
        ["I am allergic to codeine."],
        "Any allergies?",
        "Codeine doesn't agree with me, I'm allergic.",
    ),
    # a fall off a bike is no stopping
    (
        ["I fell off my bike and broke my wrist a month ago."],
        "What happened?",
        "I came off my bike and broke my wrist about a month ago.",
    ),
]


test_the_checker_catches_what_the_round_taught_it, test_the_checker_no_longer_contradicts_what_agrees = (
    fidelity_round_tests(CONTRADICTED, NOT_CONTRADICTED)
)


NO_FALSE_ALARM = [
    # an hour said "this morning" is an hour, compared only with an hour
    (
        ["Blood sugar 14.2 last night; took insulin glargine 20 units at 7 AM today."],
        "Have you had your insulin?",
        "I did my twenty units of glargine around seven this morning.",
    ),
    # "not anymore," answers, and negates nothing after its comma
    (
        ["I gave up smoking fifteen years ago."],
        "Do you smoke?",
        "Not anymore, I gave up smoking fifteen years ago.",
    ),
    # no pills for one condition is no "no medicines"
    (
        ["I take amlodipine 5 mg every morning.", "My cholesterol is controlled with diet alone."],
        "How is your cholesterol treated?",
        "I just watch what I eat, no tablets for the cholesterol.",
    ),
    # the medicines rule reads the patient's own medicines, not a relative's
    (["I take no medicines."], "Any medicines?", "My husband takes a blood pressure tablet every morning."),
]


@pytest.mark.parametrize(("facts", "asked", "sentence"), NO_FALSE_ALARM)
def test_the_round_s_readings_keep_clear_of_what_agrees(facts: list[str], asked: str, sentence: str) -> None:
    """Not new, and kept: each of these held before the round, and each is what one of its readings could have
    broken (an hour "this morning" as a count, a "not anymore" or a "no tablets for X" as a "no", a relative's
    tablets as the patient's)."""
    (label,) = label_combined([sentence], facts, [asked])
    assert label.label != "contradicted", label
