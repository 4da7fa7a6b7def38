"""The combined fidelity checker reads a spoken answer after the question it answers (issue 45's third round)."""

from __future__ import annotations

from bedside.sim.contradiction import label_combined


def label(sentence: str, facts: list[str], asked: str) -> str:
    (found,) = label_combined([sentence], facts, [asked])
    return found.label


def test_an_answer_that_leaves_its_subject_to_the_question_is_entailed() -> None:
    facts = ["My last thyroid blood test was 6 weeks ago.", "I take levothyroxine 100 micrograms every morning."]
    assert label("About a month and a half ago, I think.", facts, "When was your last blood test?") == "entailed"
    assert label(
        "Twenty-two, I think, last time.", ["My last eGFR was 22.", "I live alone."], "What was your last eGFR?"
    ) == ("entailed")


def test_the_question_does_not_make_a_new_complaint_grounded() -> None:
    facts = ["I take metformin 500 mg twice a day.", "I live with my wife."]
    said = "Yes, a tight pain in my chest whenever I climb the stairs."
    assert label(said, facts, "Have you had any chest pain?") == "unsupported"


def test_a_contradicted_answer_is_still_contradicted() -> None:
    facts = ["My last thyroid blood test was 6 weeks ago.", "I take levothyroxine 100 micrograms every morning."]
    assert label("About six months ago, I think.", facts, "When was your last blood test?") == "contradicted"


def test_a_number_inside_a_range_a_fact_gives_is_heard() -> None:
    facts = ["My fasting blood sugar readings are usually between 5.8 and 6.4 mmol/L."]
    asked = "What are your morning readings like?"
    assert label("Um, the fasting ones are usually around six.", facts, asked) == "entailed"
    assert label("Um, the fasting ones are usually around nine.", facts, asked) == "contradicted"
