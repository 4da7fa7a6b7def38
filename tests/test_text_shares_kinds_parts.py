"""The round of shares, kinds and parts of the day (issue 45).

Each sentence here was written for this file, after the development sets' errors were read; none is copied from
a labelled set. Guard pairs are read by the clinical-safety guard, patient sentences by the fidelity checker's
combined rules, and every case fails on the rules before the round, save the one test that says it held before.
"""

from __future__ import annotations

from bedside.sim.contradiction import label_combined
from bedside.tasks.drafting.guard import default_guard
from bedside.text.assertion import read_polarity
from bedside.text.quantities import normalise_quantities
from round_checks import fidelity_round_tests, guard_round_tests

REVERSED = [
    # what an amount is counted over: one dose, or the whole day's total
    (
        "Each dose of the liquid paracetamol is 7.5 mL, up to four times a day.",
        "The total daily amount of the liquid paracetamol is 7.5 mL, up to four times a day.",
    ),
    # how common an effect is (WordNet: common/uncommon, rare a satellite of uncommon)
    (
        "Feeling dizzy when you first stand up is common with this tablet and usually passes on its own.",
        "Feeling dizzy when you first stand up is rare with this tablet and usually needs a review.",
    ),
    (
        "Mild bruising around the drain site is uncommon and should be reported.",
        "Mild bruising around the drain site is very common and can be ignored.",
    ),
]

PARAPHRASES = [
    # a negation ends at a semicolon: the clause after it is said plainly
    (
        "A sudden loss of vision is an emergency, so phone the eye unit now rather than waiting for clinic.",
        "Do not wait for your clinic date; a sudden loss of vision is an emergency, so phone the eye unit now.",
    ),
    # a fraction said in words
    (
        "Draw up 0.25 mL of the liquid into the syringe.",
        "Draw up a quarter of a millilitre of the liquid into the syringe.",
    ),
    # a risk said as one in a hundred, or as a percentage
    (
        "The chance of a line infection is about 1 in 100 for each month the catheter stays in.",
        "Line infections happen in roughly 1 percent of patients for every month the catheter stays in.",
    ),
]


test_the_guard_rejects_what_the_round_taught_it, test_the_guard_keeps_paraphrases_the_round_taught_it = (
    guard_round_tests(REVERSED, PARAPHRASES)
)


def test_what_held_before_the_round_still_holds() -> None:
    """Not new, and kept: "not unusual" is no "uncommon" to the new pair, and a kind's number still meets another
    kind's ("type 2" against "type 1")."""
    assert (
        default_guard()
        .read(
            "It is not unusual to feel washed out for a few days after the infusion.",
            "Feeling washed out for a few days after the infusion is common.",
        )
        .verdict
        != "conflict"
    )
    (label,) = label_combined(
        ["It's type 2, diagnosed in my fifties."], ["I have type 1 diabetes."], ["What kind of diabetes do you have?"]
    )
    assert label.label == "contradicted", label


def test_a_semicolon_ends_a_negation() -> None:
    reading = read_polarity("please do not drive home tonight; a short walk is fine")
    assert "drive" in reading.negated
    assert "walk" not in reading.negated


def test_a_quarter_and_a_share_are_read_as_numbers() -> None:
    assert normalise_quantities("give a quarter of a tablet") == "give 0.25 tablet"
    assert normalise_quantities("a 1 in 1000 chance") == "a 0.1 percent chance"
    # a count in a span is no share, and a quarter of an hour stays fifteen minutes
    assert normalise_quantities("once in 10 days") == "once in 10 days"
    assert normalise_quantities("a quarter of an hour") == "15 minutes"
    # a score out of ten is read as the written score is, not as a share (its 6/10 fact was once contradicted)
    assert normalise_quantities("it sits around a six out of ten") == "it sits around a 6 out of 10"
    assert normalise_quantities("pain 6/10") == "pain 6 out of 10"


CONTRADICTED = [
    # the first one ever, against attacks the patient has had before
    (
        ["I have had three kidney stones in the last two years."],
        "Have you had a stone before?",
        "This is the first one I've ever had.",
    ),
    # still there, against gone
    (
        ["My temperature went away on Tuesday."],
        "Any fever now?",
        "I'm still running a temperature most evenings.",
    ),
]

NOT_CONTRADICTED = [
    # a kind's number is no amount: sugars in the three hundreds say nothing against type 2
    (
        ["I was told I have type 2 diabetes."],
        "How have your sugars been?",
        "They've been running high, like in the three hundreds, since the infection.",
    ),
    # "not even a week" says how long
    (
        ["I had my hip replaced by keyhole surgery six days ago."],
        "When was your operation?",
        "Six days ago, so not even a week yet.",
    ),
    # "move them fine" says how well
    (
        ["My toes are warm and I can move them."],
        "How are your toes?",
        "They're nice and warm and I can move them fine.",
    ),
    # "it's okay, but" concedes before a complaint
    (
        ["The iron tablets make me constipated."],
        "How are you getting on with the iron tablets?",
        "They're okay, but they're making me constipated.",
    ),
    # a part of the day is no day
    (
        ["I started the steroid tablets today."],
        "Are you sleeping okay?",
        "The steroids have me wide awake at four in the morning.",
    ),
    # a weekend's nights take in Friday
    (
        ["I have about three glasses of wine on Friday and Saturday nights."],
        "How much do you drink?",
        "Three or so glasses a night at the weekend.",
    ),
    # a class named alone is no drug: hydrocortisone cream may be the steroid
    (
        ["At the walk-in centre they gave me a steroid injection."],
        "Are you putting anything on the rash?",
        "I've been rubbing hydrocortisone cream on it.",
    ),
    # stopped, or given up for now: the same thing, from a patient
    (
        ["I stopped swimming because of my shoulder."],
        "Are you still swimming?",
        "I've given up swimming for now because of the shoulder.",
    ),
]


test_the_checker_catches_what_the_round_taught_it, test_the_checker_no_longer_contradicts_what_agrees = (
    fidelity_round_tests(CONTRADICTED, NOT_CONTRADICTED)
)
