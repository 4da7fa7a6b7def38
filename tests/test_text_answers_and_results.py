"""The reading's eighteenth round (issue 45): number words joined to each other or to their unit ("twenty-one
days", "a twenty-four-hour period"), a share of a group, "a single drop", a person's age said as a bare number, a
test that came back negative, what is or is not needed said in the passive, a scan with no abnormal findings,
same-day against routine care, "give up" as a stop; and, for the fidelity checker, a short answer that gives back
an amount the facts state. The sentences are bedside's own."""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import ContradictionRules, label_combined
from bedside.text.conflicts import ClinicalGuard
from bedside.text.quantities import normalise_quantities, without_ages


@pytest.fixture(scope="module")
def guard() -> ClinicalGuard:
    return ClinicalGuard()


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("thirty-one tablets", "31 tablets"),  # the units word of a compound number is no pronoun "one"
        ("twenty one tablets", "21 tablets"),
        ("one hundred and twenty-one mg", "121 mg"),
        ("in a twenty-four-hour period", "in a 1 day period"),  # a number word joined to its unit
        ("a six-week course", "a 6 weeks course"),
        ("Nine out of ten people pass it", "90 percent of people pass it"),  # a share of a group
        ("1 in 4 women", "25 percent of women"),
        ("pain about six out of ten", "pain about 6 out of 10"),  # a score names no group: left as said
        ("Put a single drop in each eye", "Put 1 drop in each eye"),
        ("the left one, ten days ago", "the left one, 10 days ago"),  # a pronoun stays a word
    ],
)
def test_number_words_read_whole(said: str, read: str) -> None:
    assert normalise_quantities(said) == read


def test_a_bare_age_is_an_age_not_a_count(guard: ClinicalGuard) -> None:
    signals = guard.signals("I am 55 and I was treated for hepatitis C in 2021.")
    assert "age 55 year" in signals.times
    assert "55" not in signals.numbers
    assert without_ages("I am 55 and I live alone.") == "I am age and I live alone."
    assert without_ages("I am 22 weeks pregnant.") == "I am 22 weeks pregnant."  # a span, not an age
    assert guard.read("I am 40.", "I am 45.").verdict == "conflict"  # two ages still differ


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        (  # a negative test says the test found none of what it looks for
            "Your strep test was negative, so antibiotics aren't needed this time.",
            "Your strep test didn't show strep, so you don't need antibiotics this time.",
        ),
        ("Your MRI of the brain was normal.", "The brain MRI came back without any abnormal findings."),
        (
            "Do not take more than three grams in a twenty-four-hour period.",
            "Do not take more than 3 g in a 24-hour period.",
        ),
        ("Nine out of ten people pass the stone on their own.", "About 90 percent of people pass the stone."),
    ],
)
def test_the_same_said_another_way_raises_no_conflict(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    assert not guard.read(reference, candidate).conflicts


@pytest.mark.parametrize(
    ("reference", "candidate", "kind"),
    [
        ("Your HIV test was negative.", "Your HIV test was positive.", "negation"),
        ("Antibiotics are not needed.", "You need antibiotics.", "negation"),
        (  # a passive recommendation is sought as "need" seeks
            "The flu vaccine is strongly recommended for you this fall.",
            "The flu vaccine is not needed for you this fall.",
            "negation",
        ),
        ("Your MRI was abnormal.", "The MRI showed no abnormal findings.", "opposite"),
        (
            "The mammogram showed no suspicious findings.",
            "The mammogram showed some suspicious findings.",
            "opposite",
        ),
        (
            "Do not take more than three grams of acetaminophen in a twenty-four-hour period.",
            "Do not take more than three grams of acetaminophen in a single dose.",
            "scope",
        ),
        (  # same-day care against a routine visit
            "If you get a fever after the biopsy, call us right away.",
            "If you get a fever after the biopsy, wait until your follow-up visit.",
            "opposite",
        ),
        (
            "If your peak flow drops below half your best, go to the emergency department.",
            "If your peak flow drops below half your best, book a routine appointment.",
            "opposite",
        ),
        ("Keep taking the sertraline every day.", "You can give up the sertraline now.", "action"),
        ("Take the metoprolol twice a day.", "Take the metoprolol just once, in the morning.", "time"),
    ],
)
def test_a_reversal_is_a_conflict(guard: ClinicalGuard, reference: str, candidate: str, kind: str) -> None:
    assert kind in {c.kind for c in guard.read(reference, candidate).conflicts}


def test_waiting_said_as_what_not_to_do_is_no_routine_care(guard: ClinicalGuard) -> None:
    reading = guard.read(
        "If the baby moves less, go to labor and delivery right away instead of waiting for your appointment.",
        "If the baby moves less, mention it at your next appointment.",
    )
    assert "opposite" in {c.kind for c in reading.conflicts}


@pytest.fixture(scope="module")
def rules() -> ContradictionRules:
    return ContradictionRules()


def test_the_fidelity_negation_reads_giving_up_and_not_long_ago(rules: ContradictionRules) -> None:
    assert rules.negated("I gave up driving about half a year ago.") == rules.negated("I stopped driving last year.")
    assert not rules.negated("I went eight months back, so not that long ago.")
    assert rules.negated("No, I don't smoke.")  # an answer's own "no" stays


def test_an_answer_that_gives_back_a_stated_amount_is_entailed() -> None:
    facts = ["I am 69 and I had a right knee replacement two weeks ago.", "I walk with a walker."]
    asked = ["When was the surgery?"]
    assert label_combined(["About two weeks ago now."], facts, asked)[0].label == "entailed"
    assert label_combined(["It's been three weeks, so like, twenty-one days."], facts, asked)[0].label != "entailed"
    # a word the facts never use is something new, whatever amount comes with it
    found = label_combined(["Two weeks ago, at the seaside."], facts, asked)[0].label
    assert found != "entailed"


def test_two_stated_ages_of_the_patient_are_compared_unasked() -> None:
    facts = ["I have had three attacks this month.", "I am 29 years old."]
    assert label_combined(["I'm 35."], facts)[0].label == "contradicted"
    assert label_combined(["I'm 29."], facts)[0].label == "entailed"
    # the patient's age is no count to meet another number ("57 vs 6" before this round)
    facts = ["I am 57 and I had a heart attack in March.", "I take aspirin once a day."]
    found = label_combined(["I have about 6 bad days a month."], facts, ["How is the chest pain?"])[0]
    assert found.label == "unsupported"
