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


def test_an_answer_about_the_drug_asked_about_is_read_against_that_drug() -> None:
    # issue 45's fifth round: "40 mg" is heard in the propranolol fact, but the answer is about carbimazole
    facts = ["I take carbimazole 20 mg once a day.", "I also take propranolol 40 mg when my heart is racing."]
    asked = "What dose of carbimazole are you on?"
    assert label("Forty milligrams, once a day.", facts, asked) == "contradicted"
    assert label("Twenty milligrams, once a day.", facts, asked) == "entailed"


def test_a_short_span_does_not_contradict_a_part_of_the_day() -> None:
    facts = ["I take levetiracetam 500 mg twice a day.", "My joint pain is worst in the evening."]
    asked = "Has anything else happened?"
    assert label("My hands get stiff for about an hour after I wake up.", facts, asked) == "unsupported"
    # two spans of one kind still disagree
    assert label("My joint pain has been worst in the morning.", facts, asked) == "contradicted"


def test_a_schedule_said_just_the_once_is_read_as_once_a_day() -> None:
    facts = ["I take apixaban 5 mg twice a day.", "I live with my wife."]
    asked = "How do you take the apixaban?"
    assert label("Five milligrams, just the once, at breakfast.", facts, asked) == "contradicted"
    assert label("Every morning, without fail.", ["I check my sugar every morning."], "How often?") != "contradicted"


def test_living_alone_against_living_with_someone_is_contradicted() -> None:
    facts = ["I am 79 and had a fall last month.", "I live with my son and his wife.", "I take amlodipine 5 mg."]
    assert label("I'm on my own, I live alone these days.", facts, "Who do you live with?") == "contradicted"
    assert label("I live with my son, yeah.", facts, "Who do you live with?") == "entailed"
    alone = ["I am 79 and had a fall last month.", "I live alone in a bungalow.", "I take amlodipine 5 mg."]
    assert label("My daughter and I live together in her house.", alone, "Who is at home?") != "entailed"
    assert label("I live with my daughter.", alone, "Who is at home?") == "contradicted"


def test_another_persons_no_is_not_said_against_the_patients_own_facts() -> None:
    """ConText's experiencer: "my brother had a stroke" says nothing against "I have never had a stroke"."""
    facts = ["I have high blood pressure.", "I have never had a stroke.", "I take ramipril 5 mg once a day."]
    assert label("My older brother had a stroke at sixty.", facts, "Any family history?") == "unsupported"
    assert label("I had a small stroke two years ago.", facts, "Any strokes?") == "contradicted"
