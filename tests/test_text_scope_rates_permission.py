"""The reading's fifteenth round (issue 45): a "no" whose reach trails into a place, "not yet", a cap said as
"within", rates said "twice weekly", one tablet said "a tablet", a change said new dose first, a clause of time
that names a drug, a "no" against a permission, the sides of a quadrant, and what patients say of weight, worse
and better, and numbers ("point four", "one-sixty"). The sentences are bedside's own."""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import label_combined
from bedside.text.assertion import polarity_flips, read_polarity
from bedside.text.conflicts import ClinicalGuard
from bedside.text.quantities import normalise_quantities


@pytest.fixture(scope="module")
def guard() -> ClinicalGuard:
    return ClinicalGuard()


def verdict(guard: ClinicalGuard, reference: str, candidate: str) -> str:
    return guard.read(reference, candidate).verdict


def kinds(guard: ClinicalGuard, reference: str, candidate: str) -> list[str]:
    return [conflict.kind for conflict in guard.conflicts(reference, candidate)]


def test_a_no_that_trails_into_a_place_is_not_a_flip_of_the_place() -> None:
    plain = read_polarity("The ultrasound of your gallbladder showed no stones.")
    trailing = read_polarity("There were no stones in the gallbladder on your ultrasound.")
    assert "gallbladd" in trailing.negated  # NegEx's reach runs on to the end of the clause
    assert polarity_flips(plain, trailing) == frozenset()
    # joined by "or", the second word is negated in its own right: a real flip
    allowed = read_polarity("Do not lift anything heavy, but you can climb stairs.")
    refused = read_polarity("Do not lift anything heavy or climb stairs.")
    assert polarity_flips(allowed, refused) == {"climb", "stair"}


def test_not_yet_negates_what_follows_once() -> None:
    polarity = read_polarity("The fracture has not yet healed.")
    assert "heal" in polarity.negated
    assert polarity.cues == 1  # "not yet" holds "not": one "no"
    assert "hurt" not in read_polarity("It is not broken, yet it hurts.").negated  # ", yet" still ends the reach
    assert read_polarity("He was sitting in his chair doing nothing.").negated == frozenset()


def test_within_a_span_is_a_cap(guard: ClinicalGuard) -> None:
    within = "Give the second dose within 12 hours of the first."
    assert verdict(guard, within, "Give the second dose less than 12 hours after the first.") != "conflict"
    assert "comparison" in kinds(guard, within, "Give the second dose more than 12 hours after the first.")


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("The nurse will visit you twice weekly.", "The nurse will visit you two times a week."),
        ("Take the vitamin D weekly.", "Take the vitamin D once-a-week."),
        ("Take one capsule every morning.", "Take a capsule every morning."),
        ("Take one tablet with breakfast.", "Take a single tablet with breakfast."),
        ("We lowered your lisinopril from 20 mg to 10 mg.", "Your lisinopril was lowered to 10 mg from 20 mg."),
        (
            "Do not eat grapefruit while taking simvastatin.",
            "Grapefruit must be avoided for as long as you are on simvastatin.",
        ),
    ],
)
def test_the_same_instruction_said_two_ways_agrees(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    assert verdict(guard, reference, candidate) != "conflict"


@pytest.mark.parametrize(
    ("reference", "candidate", "kind"),
    [
        ("The nurse will visit you twice weekly.", "The nurse will visit you once a week.", "time"),
        ("Take a capsule every morning.", "Take two capsules every morning.", "number"),
        (
            "We lowered your lisinopril from 20 mg to 10 mg.",
            "Your lisinopril was lowered to 20 mg from 10 mg.",
            "number",
        ),
        (
            "Stop the aspirin while taking the antibiotic.",
            "Keep taking the aspirin while taking the antibiotic.",
            "action",
        ),
        (
            "Avoid ibuprofen after your kidney surgery.",
            "It is fine to take ibuprofen after your kidney surgery.",
            "negation",
        ),
        (
            "The pain is in the lower left part of your belly.",
            "The pain is in the lower right part of your belly.",
            "laterality",
        ),
    ],
)
def test_a_reversed_instruction_is_a_conflict(guard: ClinicalGuard, reference: str, candidate: str, kind: str) -> None:
    assert kind in kinds(guard, reference, candidate)


def test_the_permission_reaches_only_its_own_clause(guard: ClinicalGuard) -> None:
    reference = "Do not take ibuprofen, but you can take acetaminophen."
    assert verdict(guard, reference, "Avoid ibuprofen; you may take acetaminophen.") != "conflict"


def test_a_result_that_came_back_high_is_not_normal(guard: ClinicalGuard) -> None:
    assert "opposite" in kinds(guard, "Your sodium came back normal.", "Your sodium came back a bit low.")
    # "normal" inside a reference range is that range's reading, not a finding of its own
    assert (
        verdict(guard, "Your sodium came back a bit low.", "Your sodium was just below the normal range.") != "conflict"
    )


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("Point five milligrams.", "0.5 mg."),
        ("It was about one-sixty over ninety.", "It was about 160/90."),
        ("I check it three times every day.", "I check it three times a day."),
    ],
)
def test_numbers_as_patients_say_them(text: str, read: str) -> None:
    assert normalise_quantities(text) == read
    assert normalise_quantities("At this point four of us were there.") == "At this point 4 of us were there."


def label(sentence: str, facts: list[str], asked: str) -> str:
    (found,) = label_combined([sentence], facts, [asked])
    return found.label


KNEE = [
    "I am 66 years old.",
    "My left knee has been swelling for two years and has gotten worse.",
    "I have put on about twelve pounds since the spring.",
    "I get short of breath climbing one flight of stairs.",
    "The pain runs down my right arm to the elbow.",
    "I take amlodipine 5 mg every morning.",
]


@pytest.mark.parametrize(
    ("sentence", "asked"),
    [
        ("It's been getting better and better, honestly.", "How has the knee been?"),
        ("I've lost, I'd say, twelve pounds since spring.", "Has your weight changed?"),
        ("My right one, it's always been that one.", "Which knee is it?"),
    ],
)
def test_what_a_patient_says_against_the_facts_is_contradicted(sentence: str, asked: str) -> None:
    assert label(sentence, KNEE, asked) == "contradicted"


@pytest.mark.parametrize(
    ("sentence", "asked"),
    [
        ("Even one flight of stairs and I'm out of breath.", "How far can you go?"),
        ("Down the right arm, it stops around the elbow.", "Does the pain go anywhere?"),
        ("The amlodipine, five milligrams, every single morning.", "What dose are you on?"),
    ],
)
def test_what_a_patient_says_as_the_facts_do_is_not_contradicted(sentence: str, asked: str) -> None:
    assert label(sentence, KNEE, asked) != "contradicted"


# The second round of the same day: what a sentence chooses over another, the subject of a negated passive, and
# findings, sizes and counts as patients and clinicians say them.


def test_what_one_sentence_chooses_the_other_passes_over(guard: ClinicalGuard) -> None:
    chosen = "If the wound bleeds through, press on it with a towel instead of taking the dressing off."
    swapped = "If the wound bleeds through, take the dressing off instead of pressing on it with a towel."
    assert "preference" in kinds(guard, chosen, swapped)
    fronted = "Rather than taking the dressing off, press on it with a towel if the wound bleeds through."
    assert verdict(guard, chosen, fronted) != "conflict"
    assert verdict(guard, "Give her the liquid instead of the tablets.", "Give her the liquid, not the tablets.") != (
        "conflict"
    )


def test_the_subject_of_a_negated_passive_is_negated() -> None:
    polarity = read_polarity("Ibuprofen should not be taken with this blood thinner.")
    assert {"ibuprofen", "taken"} <= polarity.negated
    assert "long" not in read_polarity("As long as the cut stays closed, you may shower.").affirmed


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("Do not give ibuprofen to your baby.", "Ibuprofen should never be given to your baby."),
        ("Crush half a tablet into some applesauce.", "Crush one half of a tablet into some applesauce."),
        ("Your thyroid test is not normal.", "Your thyroid test is abnormal."),
    ],
)
def test_more_of_the_same_said_two_ways(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    assert verdict(guard, reference, candidate) != "conflict"


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("The scan shows the lymph node has shrunk.", "The scan shows the lymph node has grown."),
        ("Your digoxin level is in the therapeutic range.", "Your digoxin level is too high."),
    ],
)
def test_a_finding_turned_round_is_an_opposite(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    assert "opposite" in kinds(guard, reference, candidate)


def test_counts_and_days_as_patients_say_them(guard: ClinicalGuard) -> None:
    assert "2/week" in guard.signals("I forget a couple of tablets a week.").times
    assert normalise_quantities("I take one five milligram pill.") == "I take a 5 mg pill."
    assert normalise_quantities("It started the day before yesterday.") == "It started 2 days ago."
