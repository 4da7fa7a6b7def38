"""The reading's twentieth round (issue 45): "avoid" and "do not" as one "no" though their words differ, "clear of"
as a negation, a comma that opens a clause as the end of a negation's reach, "in the next four weeks" as a cap, a
rise "past" a number, "the most ... is eight" as a cap, a temperature with a capital F, "before and after" one
thing, the count of tablets before a strength, a routine visit with a word inside it; and, for the fidelity
checker, a bare number a fact writes with its unit, two guesses joined by a comma, kin said two ways, hedges around
a restated amount, a dosage form that is no drug, and "not using anything". The sentences are bedside's own."""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import ContradictionRules, label_combined, new_details
from bedside.text.assertion import read_polarity
from bedside.text.conflicts import ClinicalGuard
from bedside.text.quantities import normalise_quantities


@pytest.fixture(scope="module")
def guard() -> ClinicalGuard:
    return ClinicalGuard()


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        # "avoid X" and "do not VERB X" are one "no", though "do not" also names the verb
        (
            "Avoid heavy lifting for four weeks after the operation.",
            "For four weeks after surgery, do not lift heavy things.",
        ),
        (
            "Take it at night, and avoid alcohol while you are on it.",
            "Do not drink alcohol while on it, and take it at night.",
        ),
        ("Your scan showed no sign of a fracture.", "On the scan, the bone was clear of a fracture."),
        # a comma that opens a clause ends the reach of "no longer"
        (
            "You can go back to swimming once you can lift your arm without pain.",
            "Once lifting the arm no longer hurts, you can start swimming again.",
        ),
        ("Do not drive for a week after the procedure.", "You cannot drive for seven days following the procedure."),
        ("Book the eye test within the next three weeks.", "Please have the eye test sometime in the next 3 weeks."),
        (
            "Call us if your temperature goes above 102 degrees Fahrenheit.",
            "Call us if your temperature rises past 102°F.",
        ),
        (
            "Call if the baby is feverish at 38 degrees Celsius or more.",
            "Call if the baby is feverish at 100.4 F or more.",
        ),
        (
            "Do not take more than 6 tablets in 24 hours.",
            "The most you should take in a 24-hour period is six tablets.",
        ),
        (
            "Clean your hands before and after changing the dressing.",
            "Clean your hands both before you change the dressing and after you change it.",
        ),
        # a cap "in a day" or "in any 24-hour period" is a daily cap
        (
            "Do not take more than 2000 milligrams of metformin in a day.",
            "Your daily metformin must not exceed 2 grams.",
        ),
        (
            "Keep your ibuprofen to 1200 mg or less in any 24-hour period.",
            "Take no more than 1200 mg of ibuprofen daily.",
        ),
        ("The pneumonia vaccine is repeated every ten years.", "The pneumonia vaccine is repeated once a decade."),
        ("You will not need another one for five years.", "Your next one is not due for five years."),
        # "as needed to get" adjusts a dose; it is no "as needed" schedule
        (
            "Adjust the docusate so you have one soft stool each day.",
            "Change the docusate dose as needed to get one soft stool daily.",
        ),
    ],
)
def test_the_same_said_another_way_raises_no_conflict(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    assert guard.read(reference, candidate).verdict != "conflict"


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        # each was uncertain before its reading: now the rules vouch for the pair
        ("Your scan showed no sign of a fracture.", "On the scan, the bone was clear of a fracture."),
        (
            "You can go back to swimming once you can lift your arm without pain.",
            "Once lifting the arm no longer hurts, you can start swimming again.",
        ),
        ("The pneumonia vaccine is repeated every ten years.", "The pneumonia vaccine is repeated once a decade."),
        (
            "Avoid heavy lifting for four weeks after the operation.",
            "For four weeks after surgery, do not lift heavy things.",
        ),
    ],
)
def test_a_reading_that_vouches_for_a_pair(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    assert guard.read(reference, candidate).verdict == "agree"


@pytest.mark.parametrize(
    ("reference", "candidate", "kind"),
    [
        ("Take one 250 mg capsule twice a day.", "Take two 250 mg capsules twice a day.", "count"),
        ("Take a 500 mg tablet with breakfast.", "Take 3 500 mg tablets with breakfast.", "count"),
        (
            "Sudden loss of vision in one eye needs the emergency department today.",
            "Sudden loss of vision in one eye can wait for your next routine eye appointment.",
            "opposite",
        ),
        ("Do not lift anything heavy for six weeks.", "You may lift heavy things after six weeks.", "negation"),
        (
            "Take the bisoprolol each morning, but skip today's dose if your pulse is under 50.",
            "Take the bisoprolol each morning, and take an extra dose if your pulse is under 50.",
            "opposite",
        ),
        # a cap on how often stays a cap: "no more than twice in one day" is no schedule of twice a day
        (
            "Use the spray only for an attack, and no more than twice in one day.",
            "Use the spray twice every day, whether or not you have an attack.",
            "time",
        ),
        ("You still have no fever, so stay home.", "You still have a fever, so stay home.", "negation"),
    ],
)
def test_a_reversal_is_a_conflict(guard: ClinicalGuard, reference: str, candidate: str, kind: str) -> None:
    assert kind in {c.kind for c in guard.read(reference, candidate).conflicts}


def test_a_comma_ends_a_negation_only_where_a_clause_begins() -> None:
    clause = read_polarity("once it no longer hurts, you can run again")
    assert "run" not in clause.negated
    listed = read_polarity("no fever, chills or cough")  # a list's next item keeps the negation
    assert {"chill", "cough"} <= listed.negated
    assert not read_polarity("i'm not gonna lie, i drink every night").negative


def test_a_temperature_with_a_capital_f_is_fahrenheit() -> None:
    assert normalise_quantities("a temperature of 100.4 F") == normalise_quantities("a temperature of 38 °C")
    assert normalise_quantities("vitamin F") == "vitamin F"  # a letter alone is no scale


def test_a_dosage_form_is_no_drug(guard: ClinicalGuard) -> None:
    assert not guard.signals("I use my eye drops every night.").drugs
    assert not guard.signals("I use a nasal spray.").drugs
    assert guard.signals("I use fluticasone nasal spray.").drugs == {"fluticasone"}


def test_the_fidelity_checker_hears_numbers_kin_and_hedges() -> None:
    facts = ["My usual weight is 165 pounds.", "I have heart failure."]
    said = "Usually around one sixty-five in the morning."  # the fact's number, its unit left out
    assert label_combined([said], facts, ["What do you usually weigh?"])[0].label != "contradicted"
    assert new_details(said, facts, ContradictionRules()) is None  # no number of its own
    facts = ["My periods stopped when I was 49.", "I take calcium every day."]
    said = "Around forty-eight, forty-nine maybe."  # two guesses, one of them the fact's
    assert label_combined([said], facts, ["When did your periods stop?"])[0].label == "entailed"
    # "mom" is the fact's "mother"; a grandmother is someone new
    facts = ["My mother has type 1 diabetes.", "I am 19."]
    assert new_details("My mom has type 1 diabetes.", facts, ContradictionRules()) is None
    assert new_details("My gran has it too.", facts, ContradictionRules()) == "person grandmother"
    facts = ["I am 30 weeks pregnant.", "This is my first baby."]
    said = "I'm about seven months along, thirty weeks I think."  # the amount back, hedged
    assert label_combined([said], facts, ["How far along are you?"])[0].label == "entailed"


def test_a_dosage_form_in_the_question_is_no_drug_swap() -> None:
    facts = ["I use latanoprost, one drop in each eye every night.", "I have glaucoma in both eyes."]
    found = label_combined(["One drop in each eye before bed."], facts, ["How do you use your eye drops?"])[0]
    assert found.label != "contradicted"


def test_not_using_anything_is_a_no() -> None:
    facts = ["I use condoms for contraception.", "I have lupus."]
    asked = ["Are you using any contraception?"]
    assert label_combined(["I'm not using anything at the moment."], facts, asked)[0].label == "contradicted"
