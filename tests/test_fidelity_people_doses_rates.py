"""The fidelity checker's round of 2026-11-30 (issue 45): another relative with the same history, a dose not
heard in a count of something else, a "no" an action took in, "nobody", and rates said the way patients say
them. The sentences are bedside's own."""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import ContradictionRules, label_combined


def label(sentence: str, facts: list[str], asked: str = "") -> str:
    (found,) = label_combined([sentence], facts, [asked] if asked else [])
    return found.label


FAMILY = [
    "I have had type 2 diabetes for eight years.",
    "My brother has schizophrenia.",
    "I walk the dog every evening.",
]


def test_another_relative_with_the_same_history_is_a_contradiction() -> None:
    (found,) = label_combined(["My sister has schizophrenia."], FAMILY, ["Any mental illness in the family?"])
    assert found.label == "contradicted"
    assert found.conflict is not None
    assert found.conflict.kind == "person"
    assert found.conflict.detail == "brother vs sister"
    # "mum" is "mother": the same person said two ways is no conflict
    assert label("My mum had a stroke at 70.", ["My mother had a stroke when she was 70."]) != "contradicted"


@pytest.mark.parametrize(
    "sentence",
    [
        "My sister has schizophrenia too.",  # one more relative, said to be one more
        "My sister has asthma.",  # another relative with another history: new, not contradicted
        "My brother and my sister both have schizophrenia.",  # names the relative the facts know
    ],
)
def test_one_more_relative_or_another_history_is_not_a_contradiction(sentence: str) -> None:
    assert label(sentence, FAMILY, "Any illness in the family?") != "contradicted"


def test_leaving_out_the_person_rule_leaves_the_sentence_new() -> None:
    rules = ContradictionRules().leaving_out(frozenset({"person"}))
    (found,) = label_combined(["My sister has schizophrenia."], FAMILY, [], rules=rules)
    assert found.label == "unsupported"


def test_a_dose_is_not_heard_in_a_count_of_something_else() -> None:
    facts = [
        "I take ramipril 10 mg every morning.",
        "I get up to pass urine about five times a night.",
        "I live with my husband.",
    ]
    asked = "What dose of ramipril are you on?"
    assert label("I take ramipril 5 mg every morning.", facts, asked) == "contradicted"
    assert label("Ten milligrams of ramipril, every morning.", facts, asked) == "entailed"


@pytest.mark.parametrize(
    ("sentence", "fact"),
    [
        ("No, I've never once thought about hurting myself.", "I have never tried to hurt myself."),
        ("Nobody at home smokes, no.", "No one in my household smokes."),
        ("There's no smoking in our house at all.", "Nobody in my house smokes."),
    ],
)
def test_the_same_no_said_with_an_action_or_nobody_is_no_flip(sentence: str, fact: str) -> None:
    assert label(sentence, [fact, "I work as a teacher."]) != "contradicted"


def test_a_no_an_action_took_in_still_counts_against_a_yes() -> None:
    facts = ["I have never tried to hurt myself.", "I work as a teacher."]
    assert label("I tried to hurt myself last spring.", facts, "Have you ever tried to hurt yourself?") == (
        "contradicted"
    )


@pytest.mark.parametrize(
    ("text", "rate"),
    [
        ("It happens a couple times a week.", "2/week"),
        ("Couple of times a week, mostly at night.", "2/week"),
        ("I check my sugar four times every day.", "4/day"),
        ("I check it 5 times a day.", "5/day"),
        ("Roughly three a month, give or take.", "3/month"),
    ],
)
def test_rates_said_the_way_patients_say_them(text: str, rate: str) -> None:
    assert rate in ContradictionRules().signals(text).times


def test_a_rate_said_differently_agrees_and_another_rate_conflicts() -> None:
    facts = ["I use my reliever inhaler about twice a week.", "I play football on Saturdays."]
    asked = "How often do you need the reliever?"
    assert label("A couple times a week, I guess.", facts, asked) == "entailed"
    assert label("Five times a day at the moment.", facts, asked) == "contradicted"
