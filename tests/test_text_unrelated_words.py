"""The reading's seventeenth round (issue 45): a sentence kept but for one word, swapped for a word WordNet relates
in no way to it ("drops" / "cups", "clear liquids" / "full liquids"), is a conflict, not a difference the rules
cannot compare; alternate days are every 2 days; and, read for both checkers, a year said as two numbers, days
out of a month, a person's age, and "every morning" or "once at night" as once a day. The sentences are
bedside's own."""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import label_combined
from bedside.text.conflicts import ClinicalGuard
from bedside.text.quantities import normalise_quantities
from bedside.text.wordnet import opposed_senses, unrelated


@pytest.fixture(scope="module")
def guard() -> ClinicalGuard:
    return ClinicalGuard()


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("drops", "cups"),  # two measures of a liquid, not one
        ("moist", "dry"),  # moist is similar to wet, the antonym of dry: no link between the two
        ("approved", "submitted"),
        ("orange juice", "milk"),  # a two-word name WordNet lists
        ("week's", "month's"),  # a possessive read as its word
        ("mother", "aunt"),  # an aunt is "the sister of your father or mother": a qualifier, not the head word
    ],
)
def test_words_wordnet_relates_in_no_way_are_unrelated(ours: str, theirs: str) -> None:
    assert unrelated(ours, theirs)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("edema", "swelling"),  # the particular and the general: a hypernym step
        ("renal", "kidney"),  # a pertainym, across parts of speech
        ("reducing", "lower"),  # two verbs that are both ways to decrease (a shared direct hypernym)
        ("return", "go back"),  # one synset
        ("recheckx", "repeat"),  # a word WordNet does not know: no reading is no evidence
        ("quickly", "kidney"),  # no part of speech in common: not compared
        ("book", "arrange"),  # to book is to "arrange for and reserve": the head word of its definition
        ("temporary", "permanent"),  # opposites are related: the antonym rule reads them
    ],
)
def test_related_unknown_or_incomparable_words_are_not_unrelated(ours: str, theirs: str) -> None:
    assert not unrelated(ours, theirs)


def test_a_one_word_swap_for_an_unrelated_word_is_a_conflict(guard: ClinicalGuard) -> None:
    reading = guard.read(
        "The day before your colonoscopy, you may have clear liquids only.",
        "The day before your colonoscopy, you may have full liquids only.",
    )
    assert [(c.kind, c.reference) for c in reading.conflicts] == [("unrelated", "clear")]
    reading = guard.read(
        "Take your iron tablet with a glass of orange juice.", "Take your iron tablet with a glass of milk."
    )
    assert [(c.kind, c.reference) for c in reading.conflicts] == [("unrelated", "orange juice")]


def test_a_one_word_swap_for_a_related_word_is_no_conflict(guard: ClinicalGuard) -> None:
    # the general word for the particular one, and a pertainym: paraphrases, not reversals
    assert not guard.conflicts(
        "Your ankle edema should settle in a week.", "Your ankle swelling should settle in a week."
    )
    assert not guard.conflicts(
        "Your renal function is stable this month.", "Your kidney function is stable this month."
    )


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        # a quantifier is the number and scope rules' to read, not WordNet's
        ("Check your sugar before each meal.", "Check your sugar before every meal."),
        # a phrasal verb's particle: WordNet lists few phrasal verbs
        ("Our nurse will reach out tomorrow.", "Our nurse will call tomorrow."),
        # a change that also adds a negation may reverse the sentence twice: not read word by word
        ("Keep the dressing dry for two days.", "Do not let the dressing get wet for two days."),
    ],
)
def test_what_the_unrelated_reading_leaves_alone(guard: ClinicalGuard, ours: str, theirs: str) -> None:
    assert "unrelated" not in [c.kind for c in guard.conflicts(ours, theirs)]


def test_leaving_the_unrelated_kind_out_leaves_the_pair_uncertain() -> None:
    without = ClinicalGuard(without=frozenset({"unrelated"}))
    reading = without.read(
        "A few drops of blood in your urine are normal for a day.",
        "A few cups of blood in your urine are normal for a day.",
    )
    assert reading.verdict == "uncertain"
    assert '"drops" / "cups"' in (reading.uncertain or "")


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("Apply the cream every other night.", "Apply the cream every 2 nights."),
        ("Take it every second day.", "Take it every 2 days."),
        ("Take the vitamin D on alternate days.", "Take the vitamin D every 2 days."),
        ("Alternate days are fine for the cream.", "Alternate days are fine for the cream."),  # no "on": a subject
    ],
)
def test_alternate_days_are_every_two_days(said: str, read: str) -> None:
    assert normalise_quantities(said, strict=True) == read


def test_alternate_days_meet_every_other_day_and_differ_from_every_day(guard: ClinicalGuard) -> None:
    assert guard.read("Take the vitamin D on alternate days.", "Take the vitamin D every other day.").verdict == "agree"
    assert [c.kind for c in guard.conflicts("Take it every other week.", "Take it every week.")] == ["time"]


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("I had the stroke in twenty nineteen.", "I had the stroke in 2019."),
        ("Back in nineteen eighty-five.", "Back in 1985."),
        ("Since twenty oh nine.", "Since 2009."),
        ("I had twenty twenty vision then.", "I had 20 20 vision then."),  # an eye chart's 20/20, not a year
        ("Six days out of the month, give or take.", "6 days a month, give or take."),
    ],
)
def test_years_said_as_two_numbers_and_days_out_of_a_month(said: str, read: str) -> None:
    assert normalise_quantities(said, strict=True) == read


def test_an_age_is_no_span_of_time(guard: ClinicalGuard) -> None:
    times = guard.signals("I am 58 years old and had my knee replaced twelve days ago.").times
    assert times == frozenset({"age 58 year", "12 day"})
    # the same age said without "old" still meets it
    assert not [
        c.kind
        for c in guard.conflicts(
            "In a baby under three months, a fever means she must be seen.",
            "If your baby is under three months old, a fever means she must be seen.",
        )
        if c.kind == "time"
    ]


def test_a_patients_age_does_not_contradict_how_long_ago_something_was() -> None:
    facts = ["I am 58 years old and had my right knee replaced twelve days ago.", "I take apixaban twice a day."]
    # two spans said ("under a week", "five days"): the fact's only span is among them once the age is no span
    said = ["I am 41 years old and had my gallbladder out five days ago."]
    (label,) = label_combined(["Under a week ago, five days I think."], said, ["When was your operation?"])
    assert label.label != "contradicted"
    (label,) = label_combined(["They replaced my right knee a year ago."], facts, ["When was the surgery?"])
    assert label.label == "contradicted"


def test_every_morning_and_once_at_night_are_once_a_day(guard: ClinicalGuard) -> None:
    assert guard.signals("Take it every morning.").times == frozenset({"1/day", "morning"})
    assert guard.signals("I take it, um, just once in the morning.").times == frozenset({"1/day", "morning"})
    assert guard.signals("Take it once at night.").times == frozenset({"1/day", "evening"})
    assert guard.signals("Take it once in a while.").times == frozenset()
    # "every morning" and a part of the day more: twice a day
    assert "2/day" in guard.signals("Take it every morning and at night.").times
    assert [c.kind for c in guard.conflicts("Take 70 mg once a week.", "Take 70 mg every morning.")] == ["time"]
    facts = ["I use tiotropium one inhalation every morning.", "I still smoke about half a pack a day."]
    (label,) = label_combined(["Twice a day, morning and night."], facts, ["How often do you use the tiotropium?"])
    assert label.label == "contradicted"


def test_a_synonym_of_an_antonym_is_an_antonym(guard: ClinicalGuard) -> None:
    # "temporary" shares its synset with "impermanent", whose WordNet antonym is "permanent"
    assert opposed_senses("temporary", "permanent")
    assert not opposed_senses("temporary", "brief")
    reading = guard.read("The numbness is usually temporary.", "The numbness is usually permanent.")
    assert [(c.kind, c.reference, c.candidate) for c in reading.conflicts] == [("antonym", "temporary", "permanent")]
