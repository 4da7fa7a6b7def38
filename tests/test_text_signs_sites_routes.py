"""The round of signs, sites and routes (issue 45, 2026-12-01).

Each reading is pinned by sentences written here, in other words than the outside sets' pairs: a pair the guard
rejected or passed before the round is asserted the other way, and, beside it, a pair or a sentence that must keep its
old answer (the reading does not reach too far).
"""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import label_combined
from bedside.sim.household import household
from bedside.text.conflicts import default_guard
from bedside.text.wordnet import irregular_verb_bases


def verdict(reference: str, candidate: str) -> str:
    return default_guard().read(reference, candidate).verdict


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        # two words after a linking verb describe one sign: the "or" that follows asks for either of two signs
        (
            "Seek help at once if your leg becomes hot and swollen or you cough up blood.",
            "Seek help at once if your leg becomes hot and swollen and you cough up blood.",
        ),
        # leaning back is the other side of sitting up and leaning forward
        ("For a nosebleed, sit up and lean forward.", "For a nosebleed, lie back and tilt your head backward."),
        # what is left in is the other side of what is taken out
        ("Take the retainer out at night and clean it.", "Leave the retainer in at night and clean it."),
        # all the weight kept off a leg is the other side of as much weight as is comfortable
        (
            "Keep all the weight off your left leg for four weeks.",
            "Put as much weight as is comfortable on your left leg for four weeks.",
        ),
        # the two routes of birth
        (
            "Because your baby was born by caesarean section, avoid lifting anything heavy for six weeks.",
            "Because your baby was born by vaginal delivery, avoid lifting anything heavy for six weeks.",
        ),
        # what a combination does to a risk, where the rest of the two sentences is worded apart
        (
            "Taking these two together raises the risk of a fall, so get up slowly.",
            "Taking these two together lowers the risk of a fall, though you should still get up slowly.",
        ),
        # checked the same day is urgent care; at the next routine visit is not
        (
            "If you develop a fever on this medicine, get your blood count checked the same day.",
            "If you develop a fever on this medicine, get your blood count checked at your next routine visit.",
        ),
        # a medicine made for the skin is not the same swallowed
        (
            "Rub the antifungal cream into the rash twice a day.",
            "Swallow the antifungal tablets twice a day for the rash.",
        ),
    ],
)
def test_the_guard_rejects_what_the_round_reads(reference: str, candidate: str) -> None:
    assert verdict(reference, candidate) == "conflict"


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        # "as long as" before an amount is a cap, as "up to" is
        ("The swelling can last up to three weeks.", "The swelling can last as long as three weeks."),
        # "the limit of" an amount is the most, as "the maximum of" it is
        (
            "You are drinking 35 units a week, far above the recommended limit of 14 units.",
            "Your 35 units a week is far above the advised maximum of 14 units.",
        ),
        # "it does not matter whether" says either is fine: no negation of the sentence
        (
            "Take one tablet every morning, with or without food.",
            "Every morning take one tablet, and it does not matter whether you have eaten.",
        ),
        # "not needed anymore" stops a thing, as "no longer need" does
        (
            "The stitches have dissolved, so you no longer need a dressing.",
            "The stitches have dissolved, so a dressing is not needed anymore.",
        ),
        # over-reach: two words that describe one sign may come in either order
        (
            "Seek help at once if your leg becomes hot and swollen.",
            "Seek help at once if your leg becomes swollen and hot.",
        ),
        # over-reach: a thing kept in a place is not a thing left in the body
        (
            "Keep the insulin pen in the fridge until you open it.",
            "Store the insulin pen in the fridge until it is opened.",
        ),
        # over-reach: "as long as" before a condition caps nothing
        ("You may drive as long as you feel fully alert.", "You may drive if you feel fully alert."),
    ],
)
def test_the_guard_does_not_reject_what_the_round_reads_as_the_same(reference: str, candidate: str) -> None:
    # the alignment may still call a pair uncertain where the two differ only in words it cannot compare
    assert verdict(reference, candidate) != "conflict"


def label(sentence: str, facts: list[str], asked: str) -> str:
    return label_combined([sentence], facts, [asked])[0].label


@pytest.mark.parametrize(
    ("sentence", "facts", "asked"),
    [
        # "every single week" is a rate, as "every single day" is
        ("They check it every single week.", ["My INR is checked once a month."], "How often is your INR checked?"),
        # "just the one" said after a verb is still a count
        ("I only have the one EpiPen on me.", ["I carry two EpiPens everywhere."], "How many EpiPens do you have?"),
        # the other route of birth
        ("I had him by C-section.", ["My son was born by vaginal delivery last month."], "How was the birth?"),
        # another organ for one person's cancer
        ("My dad had lung cancer in his sixties.", ["My father had bowel cancer at 64."], "Any cancer in the family?"),
        # a unit before "dose" is the dose's unit: "the fifty milligram dose" is 50 mg
        (
            "It's the fifty milligram dose, every morning.",
            ["I take citalopram 20 mg every morning.", "I live with my partner."],
            "What dose are you on?",
        ),
        # "at home" in a question about readings asks nothing of the household
        (
            "My home readings have been about one-fifty over ninety.",
            ["My home blood pressure readings are around 130/80.", "I live with my partner."],
            "What are your blood pressures at home?",
        ),
        # opposite patient states (sim/data/meanings.toml)
        ("We've moved her onto formula now.", ["My daughter is exclusively breastfed."], "How are you feeding her?"),
        ("I eat loads of salty snacks.", ["I follow a low-salt diet.", "I have heart failure."], "How is your diet?"),
        ("I take metformin for my diabetes.", ["My diabetes is controlled with diet alone."], "How is it treated?"),
        ("My husband helps me with the shopping.", ["I am widowed and live on my own."], "Who helps you at home?"),
        # a request is answered as a question is: "Tell me about your job." lends the answer its subject
        (
            "I commute into the city every day.",
            ["I work from home as an accountant.", "I have two children."],
            "Tell me about your job.",
        ),
    ],
)
def test_the_fidelity_checker_finds_what_the_round_reads(sentence: str, facts: list[str], asked: str) -> None:
    assert label(sentence, facts, asked) == "contradicted"


@pytest.mark.parametrize(
    ("sentence", "facts", "asked"),
    [
        # "not much" says how much, not no
        (
            "Maybe a couple of times a week, not much.",
            ["I use my reliever inhaler about twice a week."],
            "How often do you need the reliever?",
        ),
        # a "no" before one side of an opposite state says the other
        (
            "No tablets or injections for my sugar, I just watch what I eat.",
            ["My diabetes is controlled with diet alone.", "I have high blood pressure."],
            "How do you treat your diabetes?",
        ),
        # a request states nothing to contradict, and "haven't let up" says the headaches go on
        (
            "They started about two days ago and haven't really let up.",
            ["Headaches for the past 2 days.", "I am 30 weeks pregnant."],
            "Tell me about the headaches.",
        ),
        # one organ said two ways
        ("My dad had colon cancer.", ["My father had bowel cancer at 64."], "Any cancer in the family?"),
        # a list of the people at home goes on past its commas
        ("It's just me, my wife and our two boys.", ["I live with my wife and our two sons."], "Who lives with you?"),
        # ... but not past a clause about someone who is gone
        (
            "I'm on my own now, my husband died last year.",
            ["I live alone since my husband died."],
            "Who lives with you?",
        ),
    ],
)
def test_the_fidelity_checker_does_not_overreach(sentence: str, facts: list[str], asked: str) -> None:
    assert label(sentence, facts, asked) != "contradicted"


def test_an_answer_lists_the_people_at_home_past_its_commas() -> None:
    listed = household("It's me, my dad, and my little sister.", "Who lives with you?")
    assert listed is not None
    assert listed.people == {"father", "sister"}
    assert not listed.alone
    alone = household("Just me, but my son comes by on weekends.", "Who lives with you?")
    assert alone is not None
    assert alone.alone
    assert not alone.people


def test_an_irregular_verb_meets_its_base() -> None:
    # "No, I haven't fallen at all" is said of the fall a fact tells as "I fell in the bathroom": the two share a
    # subject word only through the verb's base
    assert "fall" in irregular_verb_bases("fell")
    assert "fall" in irregular_verb_bases("Fallen")
    assert irregular_verb_bases("falls") == ()
    assert irregular_verb_bases("knee") == ()
