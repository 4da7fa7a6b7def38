"""The round of bounds, homes and sessions (issue 45, the thirteenth round).

Each sentence here was written for this file, after the development sets' errors were read; none is copied from
a labelled set. Guard pairs are read by the clinical-safety guard, patient sentences by the fidelity checker's
combined rules, and every case fails on the rules before the round.
"""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import label_combined
from bedside.text.conflicts import body_parts
from bedside.text.quantities import normalise_quantities
from round_checks import fidelity_round_tests, guard_round_tests

REVERSED = [
    # "fails to" is a "no"
    (
        "Ring the ward if the swelling fails to go down within two days.",
        "Ring the ward if the swelling goes down within two days.",
    ),
    # on waking is the morning, against bedtime
    ("Take the sertraline at bedtime.", "Take the sertraline after waking up."),
    ("Take the mirtazapine shortly before bedtime.", "Take the mirtazapine shortly after you wake up."),
    # "even if" holds whatever the condition, "only if" only when it holds
    (
        "Book a review if the cough lasts a month, even if you feel fine in yourself.",
        "Book a review if the cough lasts a month, but only if you feel poorly in yourself too.",
    ),
]

PARAPHRASES = [
    # "a minimum of" is "at least", and a capital L is litres
    ("Drink at least 1.5 litres of water a day.", "Drink a minimum of 1.5 L of water every day."),
    # each fortnight is every two weeks
    ("We will reduce the dose every two weeks.", "We will reduce the dose each fortnight."),
    # "no sooner than" is a floor, not a "no"
    (
        "Have the blood test at least 6 hours after your last lithium dose.",
        "Have the blood test no sooner than six hours after your last lithium dose.",
    ),
    # keeping away is avoiding
    (
        "Please avoid crowds while your white cell count is low.",
        "While your white cell count is low, try to keep away from crowded places.",
    ),
    # times over the course of each day are times a day
    ("Use the gel three times daily.", "Use the gel three times over the course of each day."),
    # a share of a dose each month is no count a month
    ("Lower the morphine by 10 percent each month.", "Each month, lower the morphine by one tenth."),
    # "if, a day after", says when, not how often
    (
        "Call us if the rash has not faded within 24 hours of starting the cream.",
        "Call us if, a day after starting the cream, the rash has not faded.",
    ),
    # "failed to help" says what "have not helped" says
    (
        "Only use the spray if the tablets have not helped.",
        "Only use the spray if the tablets have failed to help.",
    ),
]


test_the_guard_rejects_what_the_round_taught_it, test_the_guard_keeps_paraphrases_the_round_taught_it = (
    guard_round_tests(REVERSED, PARAPHRASES)
)


def test_rough_numbers_litres_spans_and_sessions_read_as_amounts() -> None:
    assert normalise_quantities("eight-ish a month") == "about 8 a month"
    assert normalise_quantities("2 L a day") == "2000 ml a day"
    assert normalise_quantities("each 3 weeks") == "every 3 weeks"
    assert normalise_quantities("four sessions a week") == "4 times a week"


def test_body_parts_are_named_in_the_singular_and_side_words_are_none() -> None:
    assert body_parts("Both feet and my left toes") == {"foot", "toe"}
    assert body_parts("It came back on the lower side") == frozenset()


CONTRADICTED = [
    # living somewhere with someone, the place said between
    (["I live in a terraced house with my wife."], "Who is at home with you?", "I live on my own these days."),
    # one in the morning and one in the evening is twice a day
    (
        ["I take amlodipine 5 mg once a day."],
        "How do you take the amlodipine?",
        "One in the morning and one in the evening.",
    ),
    # passed out, against no loss of consciousness
    (
        [
            "I fell off a ladder at work two days ago.",
            "I did not lose consciousness.",
            "I have had a headache since the fall.",
        ],
        "Were you knocked out?",
        "I blacked out for a few seconds, my workmate said.",
    ),
    # the first flare since the diagnosis, against an earlier flare
    (
        ["I had a bad flare of my Crohn's eighteen months ago."],
        "Have you had flares before?",
        "This is my first flare since I was diagnosed.",
    ),
    # the main joints, against other main joints
    (
        ["I have had rheumatoid arthritis for five years.", "My fingers and wrists are the joints worst affected."],
        "Which joints bother you most?",
        "It's mostly my hips and knees.",
    ),
    # a test done and found normal, against "never had one"
    (
        ["I had a bone density scan last spring and it was normal.", "I take alendronate once a week."],
        "Have you had a bone density scan?",
        "No, nobody has ever done a bone scan on me.",
    ),
    # one kind of contraceptive pill against the other
    (["I take the combined pill."], "What contraception do you use?", "I'm on the progestogen-only pill."),
]

NOT_CONTRADICTED = [
    # a time said as a bound that the fact's time falls in
    (["I started the antibiotics ten days ago."], "When did you start them?", "Just over a week ago."),
    (["I came home from hospital five days ago."], "When did you get home?", "Almost a week ago now."),
    # sides of different parts of the body
    (["I had my left hip replaced last year."], "Any other problems?", "My right shoulder has been stiff lately."),
    # someone lost is no one at home
    (
        ["I have lived alone since my wife died three years ago."],
        "Who's at home with you?",
        "It's only me in the house since I lost my wife.",
    ),
    # warming up after the cold is no heat
    (["My toes turn white in the cold."], "What happens next?", "They go red and sore as they warm up."),
    # sessions a week are times a week
    (["I have dialysis three times a week."], "How often is dialysis?", "Three sessions every week."),
]


test_the_checker_catches_what_the_round_taught_it, test_the_checker_no_longer_contradicts_what_agrees = (
    fidelity_round_tests(CONTRADICTED, NOT_CONTRADICTED)
)


KEPT = [
    # sides of one region of the body still disagree
    (["I had a blood clot in my left calf last week."], "Where is the clot?", "It's in my right leg."),
    # on my own, against living with family
    (["I live with my son and his family."], "Who's at home with you?", "I'm on my own since my wife died."),
]

AGREEING = [
    # a result given in answer is no "no" to the fact's result
    (
        ["My hepatitis B test was negative before I started the injections."],
        "Were you tested?",
        "Yes, and it was negative.",
    ),
]


@pytest.mark.parametrize(("facts", "asked", "sentence"), KEPT)
def test_the_round_s_readings_keep_what_they_could_have_lost(facts: list[str], asked: str, sentence: str) -> None:
    """Not new, and kept: each held before the round, and each is what one of its readings could have broken (a
    side compared only within one region of the body; an answer cut at its "since")."""
    (label,) = label_combined([sentence], facts, [asked])
    assert label.label == "contradicted", label


@pytest.mark.parametrize(("facts", "asked", "sentence"), AGREEING)
def test_the_round_s_readings_keep_clear_of_what_agrees(facts: list[str], asked: str, sentence: str) -> None:
    """Not new, and kept: a result clause is left out only after a test done, so an answer that is its result
    keeps its "negative"."""
    (label,) = label_combined([sentence], facts, [asked])
    assert label.label != "contradicted", label


def test_half_past_is_a_time_not_a_share() -> None:
    assert "50 percent" not in normalise_quantities("Please get there by half past one.")
    assert normalise_quantities("cut it by half") == "cut it by 50 percent"
