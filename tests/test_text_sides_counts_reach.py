"""The round of sides that exhaust a choice, counts said in words, and a "no"'s reach (issue 45, 2026-11-30).

Each reading is pinned by sentences written here, in other words than the outside sets' pairs: a pair the guard
rejected or passed before the round is asserted the other way, and, beside it, a pair that must keep its old answer
(the reading does not reach too far).
"""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import label_combined
from bedside.text.conflicts import default_guard


def verdict(reference: str, candidate: str) -> str:
    return default_guard().read(reference, candidate).verdict


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        # a "no" on one side of a complementary pair says the other side
        ("Stand up slowly after the injection.", "Don't stand up suddenly after the injection."),
        ("The stent is open and working well.", "The stent is working well and has not blocked."),
        ("Keep the eye shield on at night for a week.", "Do not remove the eye shield at night for a week."),
        # a cap said after its amount
        ("Drink no more than 2000 millilitres of fluid a day.", "Keep your fluids to two litres a day at most."),
        # "is up to" after a count or a level says where it has risen to
        ("Your platelet count has risen to 150.", "Your platelet count is up to 150."),
        # "up to once every N hours" caps how often, as "every N hours as needed" does, and the two give one
        # instruction whichever time each puts nearer the drug
        (
            "Use two puffs of the inhaler every 6 hours as needed for cough.",
            "Use two puffs of the inhaler as needed for cough, up to once every six hours.",
        ),
        (
            "Take paracetamol 1 g up to four times a day if you need it for pain.",
            "For pain take 1 g of paracetamol as needed, no more than four times a day.",
        ),
        # "for the next week" is how long, as "for the next seven days" is
        (
            "Weigh yourself twice a day for the next week.",
            "Weigh yourself morning and evening for the next seven days.",
        ),
        # "the extra fluid" is the surplus, not more of it
        (
            "The puffiness should ease as the water pill clears the extra fluid.",
            "As the diuretic clears the excess fluid, the puffiness should go down.",
        ),
        # who a choice is done for is not the choice
        (
            "Give the baby small feeds every two hours rather than large feeds.",
            "Rather than letting the baby take large feeds, give small feeds every two hours.",
        ),
        # a list's last item that is a clause of its own ends the "no" before it
        (
            "If she is struggling to breathe, cannot finish a sentence, or has grey lips, call 999.",
            "Call 999 if she has grey lips, cannot finish a sentence, or is struggling to breathe.",
        ),
        # "keep it raised" is a position, not a dose raised
        (
            "Put ice on the knee every two hours, and keep it raised higher than your heart.",
            "Every two hours apply ice to the knee and elevate it above heart level.",
        ),
    ],
)
def test_paraphrases_the_round_reads_as_one_thing(reference: str, candidate: str) -> None:
    """Each pair was a conflict before the round."""
    assert verdict(reference, candidate) != "conflict"
    assert verdict(candidate, reference) != "conflict"


def test_someone_staying_is_not_being_left_alone() -> None:
    # uncertain before the round: the "no" reaches "alone", a word the negation reader keeps no stem of
    assert verdict("A responsible adult should stay with you tonight.", "Tonight you should not be left alone.") == (
        "agree"
    )


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        (
            "Wear the boot at all times for six weeks, even in bed.",
            "You can take the boot off in bed during the six weeks.",
        ),
        (
            "Sit up and lean forward while you pinch your nose.",
            "Lie down and tilt your head back while you pinch your nose.",
        ),
        (
            "Avoid live vaccines, like the nasal flu spray, during treatment.",
            "Avoid inactivated vaccines, like the flu injection, during treatment.",
        ),
        (
            "Bites like this often get infected, so take the full course now.",
            "Bites like this rarely get infected, so start the course only if it gets red.",
        ),
        ("Build back up to running gradually over two weeks.", "Build back up to running all at once over two weeks."),
        (
            "Call us if your stools turn black while you take iron.",
            "Call us if your stools turn pale while you take iron.",
        ),
        ("All of the lymph nodes they removed were clear.", "Most of the lymph nodes they removed were clear."),
        ("Your heparin is injected under the skin once a day.", "Your heparin is taken as a tablet once a day."),
        ("This scan does not completely rule out a clot in your lung.", "This scan rules out a clot in your lung."),
        ("Call us if you faint more than once.", "Call us if you faint more than three times."),
        ("Check your sugar after that first injection.", "Check your sugar after your fourth injection."),
        (
            "If the wound bleeds through the dressing, call 911.",
            "If the wound bleeds through the dressing, call your family doctor's office.",
        ),
    ],
)
def test_reversals_the_round_reads(reference: str, candidate: str) -> None:
    """Each pair agreed or was uncertain before the round."""
    assert verdict(reference, candidate) == "conflict"


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("Keep the brace on at night.", "Take the brace off at night."),
        ("Lie flat for an hour after the procedure.", "Sit up for an hour after the procedure."),
        (
            "Come in if the redness spreads, even if you feel well.",
            "Come in if the redness spreads and you feel unwell.",
        ),
        ("We will see you back in the clinic in six months.", "We are discharging you from the clinic today."),
        ("Take up to 4 tablets a day.", "Take 4 tablets a day."),
    ],
)
def test_reversals_read_before_stay_reversals(reference: str, candidate: str) -> None:
    """Over-reach: the round's readings leave these conflicts (a single swapped word, a plain cap) as they were."""
    assert verdict(reference, candidate) == "conflict"


def test_a_no_on_a_contrary_says_nothing_of_the_other_side() -> None:
    # hot and cold are contraries: "no hot baths" is not "cold baths", so nothing turns, and the two agree
    assert verdict("Avoid hot baths while the rash heals.", "No hot baths while the rash heals.") != "conflict"
    # a "no" on a contrary still flips the word it negates
    assert verdict("Put heat on the sore muscle.", "Do not put heat on the sore muscle.") == "conflict"


def label(sentence: str, facts: list[str], said: tuple[str, ...] = ()) -> str:
    return label_combined([sentence], facts, said)[0].label


def test_how_a_patient_says_how_they_are_is_no_negation() -> None:
    # both were contradicted before the round: "not great" and "can't ... without" read as a "no"
    facts = ["I have arthritis in both knees.", "I take naproxen twice a day."]
    assert label("Not great, my knees ache most mornings.", facts) != "contradicted"
    cpap = ["I am 60 years old.", "I have sleep apnoea and use a CPAP machine every night."]
    said = ("Are you using your CPAP?",)
    assert label("I wear the mask every night, can't sleep without it now.", cpap, said) != "contradicted"


def test_times_the_round_reads() -> None:
    assert label("I take the omeprazole around lunchtime.", ["I take omeprazole 20 mg every morning."]) == (
        "contradicted"
    )
    assert label("They do a colonoscopy on me every year.", ["I have a colonoscopy every three years."]) == (
        "contradicted"
    )


def test_a_rate_found_in_its_own_fact_says_nothing_against_a_nearer_one() -> None:
    facts = [
        "I use a beclometasone inhaler, two puffs twice a day.",
        "I use my salbutamol inhaler about twice a week, mostly before football.",
    ]
    said = ("How often do you need your inhaler?",)
    # contradicted before the round, by the daily inhaler's fact, which shares no word with the sentence
    assert label("Maybe two times a week, right before football practice.", facts, said) != "contradicted"
    # a rate that its own fact does not give still conflicts with it
    assert label("Maybe two times a day, right before football practice.", facts[1:], said) == "contradicted"


def test_a_lift_is_not_a_medicine_taken() -> None:
    facts = ["I gave up driving last year."]
    assert label("My son takes me to the clinic now.", facts) != "contradicted"


def test_still_working_against_retired() -> None:
    facts = ["I am a retired bus driver.", "I take amlodipine 5 mg every morning."]
    assert label("I'm still driving for the bus company, three days a week.", facts) == "contradicted"
    assert label("Yes, I'm retired now, so my days are my own.", facts) != "contradicted"
    back = ["I haven't been back to work since the operation."]
    assert label("I've gone back part-time at the office.", back) == "contradicted"


def test_kin_counted_and_named() -> None:
    assert label("My niece does my ironing.", ["My nephew does my ironing for me."]) == "contradicted"
    assert label("I've got two grandkids.", ["I have three grandchildren."]) == "contradicted"
    assert label("I've got three grandkids.", ["I have three grandchildren."]) != "contradicted"


def test_every_single_day_is_daily() -> None:
    facts = ["A carer visits me three times a week."]
    assert label("The carer comes every single day.", facts) == "contradicted"
