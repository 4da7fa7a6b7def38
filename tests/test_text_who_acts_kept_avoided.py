"""The reading's sixteenth round (issue 45): who acts, doses kept apart or given at once, at all times or only at
some, opposites with no number (asleep or awake, included or excepted, a dose held or given, a missed dose
doubled, care at home against an emergency), a "no" moved from the verb to its object, what one sentence refuses
and the other seeks, spoken numbers and packs; and, for the fidelity checker, who the patient lives with, a side
named in answer to "which one?", an allergy said as what the patient cannot take, and numbers or spans said of
another subject. The sentences are bedside's own."""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import label_combined
from bedside.sim.household import Household, household, household_conflict
from bedside.text.assertion import polarity_flips, read_polarity
from bedside.text.conflicts import ClinicalGuard, answered_sides
from bedside.text.quantities import normalise_quantities


@pytest.fixture(scope="module")
def guard() -> ClinicalGuard:
    return ClinicalGuard()


def kinds(guard: ClinicalGuard, reference: str, candidate: str) -> list[str]:
    return [conflict.kind for conflict in guard.conflicts(reference, candidate)]


def test_who_makes_the_call_is_read_from_an_instruction_too(guard: ClinicalGuard) -> None:
    ours = "The clinic will phone you on Friday about your scan."
    assert "actor" in kinds(guard, ours, "Please phone the clinic on Friday about your scan.")
    assert "actor" in kinds(guard, ours, "Phone the clinic on Friday about your scan.")
    # an adverb first is no step of its own: the step is the verb after it
    assert "actor" not in kinds(guard, "Always lay your baby on her back.", "Your baby should always lie on her back.")


def test_a_no_moved_from_the_verb_to_its_object_is_the_same_no() -> None:
    on_verb = read_polarity("The scan did not show any sign of a clot.")
    on_object = read_polarity("The scan showed no evidence of a clot.")
    assert "show" in on_object.before_no
    assert polarity_flips(on_verb, on_object) == frozenset()
    # a "no" only on the verb, with nothing else negated in common, still flips
    assert polarity_flips(read_polarity("The scan did not show it."), read_polarity("The scan showed a clot.")) != set()


def test_giving_yourself_a_dose_is_taking_it(guard: ClinicalGuard) -> None:
    reading = guard.read("Take your insulin ten minutes before lunch.", "Give yourself the insulin before lunch.")
    assert "antonym" not in [c.kind for c in reading.conflicts]


def test_doses_kept_apart_against_doses_given_at_once(guard: ClinicalGuard) -> None:
    apart = "Leave ten minutes between the two inhalers."
    assert "spacing" in kinds(guard, apart, "You can use the two inhalers at the same time.")
    assert "spacing" in kinds(guard, "Do not use the two inhalers at the same time.", "Use them together.")
    assert "spacing" not in kinds(guard, apart, "Use the two inhalers at separate times.")
    # "together" of something else than the doses gives nothing at once
    assert "spacing" not in kinds(
        guard,
        "Leave an hour between the two tablets.",
        "Leave an hour between the tablets, because together they upset the stomach.",
    )


def test_at_all_times_against_only_at_some(guard: ClinicalGuard) -> None:
    always = "Wear the knee brace at all times, including in bed, for two weeks."
    assert "coverage" in kinds(guard, always, "Wear the knee brace only at night for two weeks.")
    assert "coverage" not in kinds(guard, always, "Wear the knee brace around the clock for two weeks.")


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("Wear the mouth guard while you sleep.", "Wear the mouth guard while awake."),
        (
            "All the family should have the vaccine except your newborn.",
            "All the family should have the vaccine, including your newborn.",
        ),
        (
            "Your platelets are low, so we will hold tomorrow's infusion.",
            "Your platelets are low, so we will give tomorrow's infusion.",
        ),
        (
            "If you forget a tablet, skip it and carry on as normal.",
            "If you forget a tablet, take two tablets together the next morning.",
        ),
        ("If the bleeding does not stop, call 911.", "If the bleeding does not stop, send us a message."),
        ("If your leg swells up, go to the emergency room.", "If your leg swells up, rest it and walk it off at home."),
        ("The echo shows your heart pumping normally.", "The echo shows your heart pumping weakly."),
    ],
)
def test_opposites_with_no_number(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    assert "opposite" in kinds(guard, reference, candidate)


def test_finishing_a_course_of_days_against_stopping_early(guard: ClinicalGuard) -> None:
    finish = "Finish all 14 days of the antibiotic even if the cough clears sooner."
    assert "action" in kinds(guard, finish, "You can stop the antibiotic once the cough clears.")


def test_what_one_refuses_and_the_other_seeks(guard: ClinicalGuard) -> None:
    assert "negation" in kinds(guard, "Avoid the sauna for a week.", "Get into the sauna for a week.")
    assert "negation" in kinds(guard, "Your son also needs the vaccine.", "Your son does not need the vaccine.")
    # refused both ways, said otherwise: no conflict
    assert "negation" not in kinds(guard, "Avoid strong sun on the scar.", "Stay out of strong sun with the scar.")


def test_not_needed_unless_is_needed_only_if(guard: ClinicalGuard) -> None:
    ours = "There is no need to phone us unless the fever comes back."
    assert "negation" not in kinds(guard, ours, "You only need to phone us if the fever comes back.")


def test_nothing_concerning_is_a_normal_finding(guard: ClinicalGuard) -> None:
    assert guard.read("Your chest x-ray was normal.", "Nothing concerning showed up on your chest x-ray.").verdict != (
        "conflict"
    )
    # "nothing to worry about" keeps its "no", weighed against a warning
    assert read_polarity("The bruising is nothing to worry about.").negative


def test_two_meals_and_a_count_said_apart_make_twice_a_day(guard: ClinicalGuard) -> None:
    ours = "Check your sugar before breakfast and before dinner every day."
    assert "time" not in kinds(guard, ours, "Every day, check your sugar twice, once before each of those meals.")
    assert "time" in kinds(guard, ours, "Check your sugar once a day.")
    # a "twice" that counts sprays, with "once daily" said, is no rate
    assert "time" not in kinds(
        guard, "Use two sprays in each nostril once a day.", "Spray twice into each nostril once daily."
    )


@pytest.mark.parametrize(
    ("spoken", "written"),
    [
        ("It got to a hundred and one last night.", "It got to 101 last night."),
        ("I take seven fifty twice a day.", "I take 750 twice a day."),
        ("The three twenty-five one.", "The 325 one."),
        ("About half a pack a day.", "About 10 cigarettes a day."),
        ("A full pack a day.", "20 cigarettes a day."),
        ("Only the last year or so.", "Only 1 year."),
        ("It should settle over the next week or two.", "It should settle over 1 week to 2 weeks."),
    ],
)
def test_spoken_numbers_and_packs(spoken: str, written: str) -> None:
    assert normalise_quantities(spoken) == written


@pytest.mark.parametrize(
    ("kept", "read"),
    [
        ("We will see you at seven thirty.", "We will see you at 7 30."),  # a clock time, not 730
        ("Forty pack-years.", "40 pack-years."),  # pack-years, not cigarettes
        ("The left one, a hundred days ago.", "The left one, a 100 days ago."),  # the pronoun "one" is no 1
    ],
)
def test_what_is_no_spoken_hundred_or_pack(kept: str, read: str) -> None:
    assert normalise_quantities(kept) == read


def test_who_the_patient_lives_with() -> None:
    with_son = household("I live with my son and his wife.")
    assert with_son == Household(frozenset({"son"}))  # the son's wife is no kin of the patient's
    assert household_conflict(with_son, household("Lives with his daughter.") or Household()) is not None
    assert household("My son and his wife.", asked="Who lives with you?") == with_son
    alone = household("It's just me, but my son visits on Sundays.", asked="Who is at home with you?")
    assert alone is not None
    assert alone.alone
    assert (
        household_conflict(
            household("I live with my mum.") or Household(), household("Lives with parents.") or Household()
        )
        is None
    )
    assert (
        household_conflict(
            household("I've got my own flat now.", asked="Where are you living?") or Household(),
            household("Lives in a homeless shelter.") or Household(),
        )
        == "shelter vs home"
    )
    assert household("I had a fall at my house.") is None  # no word of living there


def test_the_fidelity_checker_reads_households_sides_and_allergies() -> None:
    facts = [
        "Widowed and lives alone.",
        "Right knee replacement two years ago.",
        "Allergic to penicillin, causes hives.",
    ]
    (together,) = label_combined(["My partner and I live together."], facts, ["Who do you live with?"])
    assert together.label == "contradicted"
    assert together.conflict is not None
    assert together.conflict.kind == "household"
    (side,) = label_combined(["The left one, a couple of years ago."], facts, ["Which knee was replaced?"])
    assert side.label == "contradicted"
    (allergy,) = label_combined(["Penicillin, I can't take it."], facts, ["Any allergies?"])
    assert allergy.label != "contradicted"
    (closed,) = label_combined(["Just penicillin, nothing else."], facts, ["Are you allergic to anything?"])
    assert closed.label != "contradicted"


def test_a_span_said_of_another_subject_is_no_contradiction() -> None:
    facts = ["Numbness in both feet for about six months.", "Takes metformin 500 mg twice daily."]
    (other,) = label_combined(["My eyes have been itchy for a few weeks."], facts, ["Anything else bothering you?"])
    assert other.label != "contradicted"
    (same,) = label_combined(["About three weeks."], facts, ["How long have your feet been numb?"])
    assert same.label == "contradicted"


def test_a_side_is_answered_only_to_a_question_of_sides() -> None:
    assert answered_sides("Which hip was it?", "The right one.") == {"right"}
    assert answered_sides("Is this the right inhaler?", "Yes, the right one.") == frozenset()
