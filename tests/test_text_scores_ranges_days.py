"""The reading's nineteenth round (issue 45): seconds as a unit of time, a written score read as said, a range of a
mass per volume kept whole, an acronym kept from the number-word reader, a plain English word kept from the drug
recogniser, meals named by the part of the day, "keep doing" as continue, "only on bad days" as needed, "each eye"
as both, "higher than normal" as abnormal; and, for the fidelity checker, runs and parts of the week, two guesses
of a number, and a cap against the same number said plainly. The sentences are bedside's own."""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import label_combined
from bedside.text.conflicts import ClinicalGuard
from bedside.text.numbers import calendar_terms
from bedside.text.quantities import normalise_quantities


@pytest.fixture(scope="module")
def guard() -> ClinicalGuard:
    return ClinicalGuard()


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("sixty seconds apart", "every 1 minute"),  # seconds are time, converted like minutes
        ("wait 90 seconds", "wait 90 seconds"),
        ("Pain score usually 6/10", "Pain score usually 6 out of 10"),  # a written score, as it is said
        ("130/80", "130/80"),  # a reading is no score
        ("on 2/10/2024", "on 2/10/2024"),  # nor a date
        ("readings 180-220 mg/dL", "readings 180-220 mg/dl"),  # a mass per volume keeps its range whole
        ("I use a TENS machine", "I use a TENS machine"),  # an acronym is no number word
        ("Take a single antibiotic pill", "Take 1 antibiotic pill"),
    ],
)
def test_amounts_read_one_way(said: str, read: str) -> None:
    assert normalise_quantities(said) == read


def test_a_plain_english_word_is_no_drug(guard: ClinicalGuard) -> None:
    # MeSH lists "SITS" as a name of a chemical; "it sits around a six" names none
    assert not guard.signals("Usually it sits around a six out of ten.").drugs
    assert guard.signals("I take aspirin every morning.").drugs


@pytest.mark.parametrize(
    ("reference", "candidate", "kind"),
    [
        ("Wait five minutes between the two eye drops.", "Wait five seconds between the two eye drops.", "time"),
        (
            "Stop exercising and rest if you feel chest pain.",
            "Keep exercising through it if you feel chest pain.",
            "action",
        ),
        ("Keep taking the sertraline every day.", "Take the sertraline only on bad days.", "time"),
        ("Put one drop in your right eye only, once a day.", "Put one drop in each eye, once a day.", "laterality"),
    ],
)
def test_a_reversal_is_a_conflict(guard: ClinicalGuard, reference: str, candidate: str, kind: str) -> None:
    assert kind in {c.kind for c in guard.read(reference, candidate).conflicts}


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        (
            "Check your blood sugar before breakfast and before supper each day.",
            "Each day, test your glucose before your morning meal and before your evening meal.",
        ),
        ("Your potassium is 5.8, which is higher than normal.", "Your potassium came back elevated at 5.8."),
        (
            "Take two puffs through the spacer, one minute apart.",
            "Take 2 puffs through the spacer, sixty seconds apart.",
        ),
        ("Take one tablet every 12 hours.", "Take a single antibiotic pill twice a day."),
    ],
)
def test_the_same_said_another_way_raises_no_conflict(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    assert not guard.read(reference, candidate).conflicts


def test_days_of_the_week_said_as_a_run_or_a_part_of_the_week() -> None:
    weekdays = {f"weekday:{d}" for d in ("monday", "tuesday", "wednesday", "thursday", "friday")}
    assert calendar_terms("3 mg Monday to Friday") == weekdays
    assert calendar_terms("on weekdays") == weekdays
    assert calendar_terms("4.5 mg on Saturdays and Sundays") == {"weekday:saturday", "weekday:sunday"}
    assert calendar_terms("at the weekend") == {"weekday:saturday", "weekday:sunday"}


def test_the_fidelity_checker_reads_weeks_guesses_and_caps() -> None:
    facts = ["Warfarin 3 mg Monday to Friday and 4.5 mg on Saturdays and Sundays", "Atrial fibrillation"]
    asked = ["What dose of warfarin are you taking?"]
    said = "Three milligrams on weekdays and then four and a half on Saturday and Sunday."
    assert label_combined([said], facts, asked)[0].label == "entailed"
    facts = ["Takes 11 regular medicines", "Lives in a care home"]
    asked = ["How many tablets do you take?"]
    assert label_combined(["They give me a fair few tablets, ten or eleven."], facts, asked)[0].label == "entailed"
    assert label_combined(["They give me six or seven tablets."], facts, asked)[0].label == "contradicted"
    # a guess is heard only where the other number counts the same thing
    facts = ["My back pain started three weeks ago.", "I smoke one pack a day."]
    found = label_combined(["Eh, maybe three or four cigarettes a day."], facts, ["Do you smoke?"])[0]
    assert found.label == "contradicted"
    # a cap ("up to 39.2") and the same number said plainly ("the highest was 39.2") agree
    facts = ["Fever up to 39.2 C for 2 days", "Drinking less than usual"]
    found = label_combined(["The highest I saw was 39.2."], facts, ["How high has the temperature been?"])[0]
    assert found.label != "contradicted"
