"""The round of routes, opposed steps and counted spans (issue 45, the fifteenth round).

Each sentence here was written for this file, after the development sets' errors were read; none is copied from
a labelled set. Guard pairs are read by the clinical-safety guard, patient sentences by the fidelity checker's
combined rules. Every case in the first four lists fails on the rules before the round; the lists of kept cases
held before it, and guard what its readings could have broken.
"""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import label_combined
from bedside.text.conflicts import opposed_actions
from bedside.text.numbers import calendar_terms
from bedside.text.quantities import normalise_quantities
from bedside.text.times import counted_apart
from round_checks import fidelity_round_tests, guard_round_tests

REVERSED = [
    # a pessary goes into the vagina, not down the throat
    (
        "Put one clotrimazole pessary into the vagina at night for three nights.",
        "Swallow one clotrimazole pessary at night for three nights.",
    ),
    # into a muscle against into a vein
    (
        "The ceftriaxone will be given as an injection into the thigh muscle.",
        "The ceftriaxone will be given as an injection into a vein.",
    ),
    # two counts of one unit, within a tenth of each other
    ("We will check the scan again at 20 weeks.", "We will check the scan again at 22 weeks."),
    # a cap on the temperature against a floor
    (
        "Store the milk in the fridge for up to three days at 4 degrees or colder.",
        "Store the milk in the fridge for up to three days, as long as it is kept at 4 degrees or warmer.",
    ),
    # one step kept going against the same step stopped, whatever else both say
    (
        "Use the steroid spray twice a day and keep using it for a month after the symptoms settle.",
        "Use the steroid spray twice a day and stop once the symptoms settle.",
    ),
    # a time chosen against the one set aside
    (
        "If the wound bleeds through the dressing, phone us straight away rather than waiting until tomorrow.",
        "If the wound bleeds through the dressing, wait until tomorrow to see if it stops before you phone us.",
    ),
]

PARAPHRASES = [
    # "thrice daily" is three times a day
    (
        "Take two paracetamol tablets three times a day for four days.",
        "For four days, take two paracetamol tablets thrice daily.",
    ),
    # "between six months and a year" is a span, not six times a year
    (
        "The booster is due six to twelve months after the first dose.",
        "Have the booster between six months and a year after the first dose.",
    ),
]


test_the_guard_rejects_what_the_round_taught_it, test_the_guard_keeps_paraphrases_the_round_taught_it = (
    guard_round_tests(REVERSED, PARAPHRASES)
)


NOT_CONTRADICTED = [
    # a couple of hundred yards is two hundred
    (
        ["I can walk about 200 yards before my calf cramps."],
        "How far can you walk?",
        "A couple of hundred yards and then the cramp starts.",
    ),
    # a month inside a run of months
    (
        ["My eczema flares every winter from November to February."],
        "When is it worst?",
        "It's always bad in January.",
    ),
]

# the round's fidelity readings take false contradictions away; it taught the checker no new contradiction
test_the_checker_no_longer_contradicts_what_agrees = fidelity_round_tests([], NOT_CONTRADICTED)[1]

ENTAILED = [
    # four decades is forty years
    (
        ["I drank 10 units a week for 40 years before I stopped."],
        "How much did you drink?",
        "About ten units a week, for four decades.",
    ),
    # a one in four chance is twenty-five percent
    (
        ["My GP said my ten-year risk of a heart attack is 25 percent."],
        "What did the GP say?",
        "He said I have a one in four chance of a heart attack in the next ten years.",
    ),
]


@pytest.mark.parametrize(("facts", "asked", "sentence"), ENTAILED)
def test_amounts_said_in_other_words_are_heard_as_the_facts_amounts(
    facts: list[str], asked: str, sentence: str
) -> None:
    """Not only no contradiction: the amount said otherwise is the fact's, so nothing in the sentence is new."""
    (label,) = label_combined([sentence], facts, [asked])
    assert label.label == "entailed", label


KEPT_PARAPHRASES = [
    # a range of days against the same span in weeks: the tenth still holds between two units
    ("Rest the ankle for two weeks.", "Rest the ankle for fourteen days."),
    # an opposed step said on sentences that share too few words stays as uncertain as a "no" there
    (
        "Please do not stop your sertraline suddenly, even if you start to feel better.",
        "Keep taking sertraline when your mood lifts, and only come off it slowly with us.",
    ),
    # a count over a week is still a rate when its unit comes before "each week"
    ("Swim for 30 minutes on at least four days each week.", "Swim for half an hour on at least four days per week."),
]

KEPT_CONTRADICTED = [
    # a time of year said as a single month still meets another month
    (["I get hay fever in June."], "When is your hay fever?", "It's always in September."),
]


# not new, and kept: each held before the round, and is what one of its readings could have broken
test_the_round_s_readings_keep_what_they_could_have_lost = guard_round_tests([], KEPT_PARAPHRASES)[1]
test_the_round_s_months_keep_what_they_could_have_lost = fidelity_round_tests(KEPT_CONTRADICTED, [])[0]


@pytest.mark.parametrize(
    ("ours", "theirs", "apart"),
    [
        ({"41 week"}, {"37 week"}, True),  # within a tenth, but two counts of one unit
        ({"41 week"}, {"41 week", "2 day"}, False),
        ({"2 month"}, {"8 week"}, False),  # one amount in two units: the tenth decides, not this
        ({"10 day"}, {"10.5 day"}, False),  # "a week and a half" is no whole count
        ({"every 2 week"}, {"every 3 week"}, False),  # rates are the rate readers'
    ],
)
def test_counts_of_one_unit_are_apart_only_when_they_share_none(ours: set[str], theirs: set[str], apart: bool) -> None:
    assert counted_apart(frozenset(ours), frozenset(theirs)) is apart


@pytest.mark.parametrize(
    ("ours", "theirs", "expected"),
    [
        ({"take", "continue"}, {"take", "stop"}, ("continue", "stop")),
        ({"proceed"}, {"postpone"}, ("proceed", "postpone")),
        ({"take", "continue"}, {"take"}, None),  # nothing said against the step
        ({"continue", "stop"}, {"stop", "take"}, None),  # both say stop: what is left is no opposition
        ({"avoid"}, {"cancel", "take"}, None),  # "cancel" is the same "no" as "avoid"
    ],
)
def test_opposed_actions_are_one_step_against_its_undoing(
    ours: set[str], theirs: set[str], expected: tuple[str, str] | None
) -> None:
    assert opposed_actions(frozenset(ours), frozenset(theirs)) == expected


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("a couple of hundred metres", "200 metres"),
        ("for two decades", "for 20 years"),
        ("a one in four chance", "a 25 percent chance"),
        ("take it thrice daily", "take it three times a day"),
    ],
)
def test_spoken_amounts_are_read_as_numbers(said: str, read: str) -> None:
    assert normalise_quantities(said) == read


def test_a_run_of_months_names_each_month_of_it_across_the_new_year() -> None:
    assert calendar_terms("from about October to January") == {
        "month:october",
        "month:november",
        "month:december",
        "month:january",
    }
    assert calendar_terms("in March and in June") == {"month:march", "month:june"}
