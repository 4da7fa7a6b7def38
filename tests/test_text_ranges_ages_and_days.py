"""The round of ranges, ages and parts of the day (issue 45, the fourteenth round).

Each sentence here was written for this file, after the development sets' errors were read; none is copied from
a labelled set. Guard pairs are read by the clinical-safety guard, patient sentences by the fidelity checker's
combined rules. Every case in the first four lists fails on the rules before the round; the lists of kept cases
held before it, and guard what its readings could have broken.
"""

from __future__ import annotations

import pytest

from bedside.tasks.drafting.guard import default_guard
from bedside.text.quantities import normalise_quantities, without_ages
from bedside.text.times import in_days, same_time, times_conflict
from round_checks import fidelity_round_tests, guard_round_tests

REVERSED = [
    # a scab that comes off falls away: the "do not" is the sentence's only "no"
    (
        "Do not apply ointment to the stitches until the scab has come off.",
        "Apply ointment to the stitches until the scab has come off.",
    ),
    # "every day" beside an interval says the schedule goes on, not once a day
    ("Use the eye drops once a day, every day.", "Use the eye drops every four hours, every day."),
    # a movement refused against the same movement allowed, both keeping another "no"
    (
        "After the operation avoid lifting your arm above your shoulder and do not drive.",
        "After the operation you may lift your arm above your shoulder but do not drive.",
    ),
    # the day against the night
    ("Wear the wrist splint every night while you sleep.", "Wear the wrist splint only during the day."),
]

PARAPHRASES = [
    # an output below an amount in 24 hours is a rate a day
    (
        "We will take the drain out once it puts out less than 50 mL in 24 hours.",
        "Once the drain puts out under fifty millilitres per day, we will take it out.",
    ),
    # every three or four days is about twice a week
    ("Change the patch every three or four days.", "Change the patch twice a week."),
    # what a sentence chooses against is not done
    (
        "Do not try to pull the tick off with your fingers.",
        "Leave the tick alone rather than trying to pull it off with your fingers.",
    ),
]


test_the_guard_rejects_what_the_round_taught_it, test_the_guard_keeps_paraphrases_the_round_taught_it = (
    guard_round_tests(REVERSED, PARAPHRASES)
)


CONTRADICTED = [
    # every other week against once a week
    (["I see my physiotherapist once a week."], "How often do you see the physio?", "I go every other week."),
    # which child, which pregnancy
    (
        ["My asthma started after my second child was born."],
        "When did the asthma start?",
        "It began after my third baby.",
    ),
    # cut out, against still drinking it
    (["I drink two cans of cola a day."], "How much fizzy drink do you have?", "I've cut out cola completely."),
    # the daytime against the night
    (["My cough is worse at night."], "When is the cough worst?", "It's worst during the daytime."),
]

NOT_CONTRADICTED = [
    # an amount given as a bound that the fact's amount falls in
    (
        ["I have lost 12 kg since the surgery."],
        "How much weight have you lost?",
        "Almost fifteen kilos since the operation.",
    ),
    # a year on the calendar is not a count of years
    (["I had my gallbladder out in 2018."], "Any operations?", "I had a hernia repaired about six years ago."),
    # three times the normal level is an amount, not an absence
    (
        ["My kidney numbers were three times the normal level."],
        "What did the tests show?",
        "They told me my kidney results were about triple what they should be.",
    ),
    # not knowing why is no "no" to the tears
    (
        ["I have been tearful most days."],
        "How's your mood?",
        "I've been tearful every day and I don't really know why.",
    ),
    # sober since is no drinking since
    (
        ["My last drink was in March and I have been sober since."],
        "Are you drinking?",
        "I haven't had a drop since March.",
    ),
    # a medicine for another thing
    (
        ["I have not tried any medicine for my migraines."],
        "Any other medicines?",
        "I also take ramipril for my blood pressure.",
    ),
    # a range of rates, and a vague one, that take in the fact's rate
    (["My bowels open every two or three days."], "How often do your bowels open?", "About three times a week."),
    (["I go to the gym three times a week."], "How much exercise do you do?", "A few times a week, usually three."),
    # "like normal" is how, not an absence; "not long to go" is how far along
    (["My baby has been feeding normally."], "How is she feeding?", "She's feeding like normal."),
    (["I am 36 weeks pregnant."], "How far along are you?", "Thirty-six weeks, so not long to go now."),
    # eating less is cutting down
    (
        ["I have cut down on takeaways since the heart attack."],
        "Any changes to your diet?",
        "I try to eat less takeaway food.",
    ),
]


test_the_checker_catches_what_the_round_taught_it, test_the_checker_no_longer_contradicts_what_agrees = (
    fidelity_round_tests(CONTRADICTED, NOT_CONTRADICTED)
)


KEPT_PARAPHRASES = [
    # several times a day, said two ways: read as a vague rate, it must be read so in both
    (
        "Put a cold pack on the ankle for 15 minutes, several times a day.",
        "Several times daily, hold a cold pack on the ankle for fifteen minutes.",
    ),
]

KEPT_CONTRADICTED = [
    # the age at an event against another age at it: no longer counts, still compared
    (
        ["I had my first seizure when I was 15."],
        "How old were you at the first seizure?",
        "I was about twenty, I think, when it happened.",
    ),
    (
        ["My father had a stroke at age 50."],
        "Any strokes in the family?",
        "My dad had a stroke, he was about seventy I think.",
    ),
]

KEPT_AGREEING = [
    # "sober" is a "no" to drinking, but an amount of time in answer has nothing to say no to
    (["I have been sober for four years."], "How long have you been sober?", "Coming up to four years now."),
]


@pytest.mark.parametrize(("reference", "candidate"), KEPT_PARAPHRASES)
def test_the_round_s_vague_rates_keep_what_they_could_have_lost(reference: str, candidate: str) -> None:
    """Not new, and kept: each held before the round, and is what one of its readings could have broken."""
    assert default_guard().read(reference, candidate).verdict != "conflict"


# not new, and kept: each held before the round, and is what one of its readings could have broken
test_the_round_s_ages_keep_what_they_could_have_lost, test_the_round_s_readings_keep_clear_of_what_agrees = (
    fidelity_round_tests(KEPT_CONTRADICTED, KEPT_AGREEING)
)


@pytest.mark.parametrize(
    ("said", "fact", "agree"),
    [
        ({"every 3-4 day"}, {"2/week"}, True),  # 0.25-0.33 a day takes in 0.29
        ({"2-3/day"}, {"3/day"}, True),
        ({"2-3/day"}, {"1/day"}, False),
        ({"few/week"}, {"3/week"}, True),
        ({"few/week"}, {"1/day"}, False),
        ({"every few year"}, {"every 3 year"}, True),
        ({"every few year"}, {"1/year"}, False),
        ({"daytime"}, {"morning"}, True),
        ({"daytime"}, {"evening"}, False),
    ],
)
def test_ranges_vague_rates_and_the_daytime_meet_what_they_take_in(said: set[str], fact: set[str], agree: bool) -> None:
    assert times_conflict(in_days(frozenset(said)), in_days(frozenset(fact))) is not agree


def test_a_range_of_rates_is_written_in_rates_a_day() -> None:
    assert in_days(frozenset({"every 3-4 day"})) == {"0.25-0.3333/day"}
    assert same_time("0.25-0.3333/day", "0.3/day")
    assert not same_time("0.25-0.3333/day", "1 day")


def test_ages_at_an_event_are_left_out_of_counts() -> None:
    for said in ("diagnosed when I was 19.", "a heart attack at age 50.", "I was, like, 13 when they told me."):
        assert not any(ch.isdigit() for ch in without_ages(normalise_quantities(said))), said
    assert "20" in without_ages("I take 20 mg when I was told to.")
