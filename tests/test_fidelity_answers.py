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


def test_a_count_said_between_a_name_and_its_noun_is_compared() -> None:
    # the fidelity round after the exchange round (2026-11-29): "two Zeposia capsules", "just the one shot"
    facts = ["I take Zeposia, one capsule once a day.", "I keep two doses of adrenaline at home."]
    assert label("I take two Zeposia capsules a day.", facts, "How many do you take?") == "contradicted"
    assert label("I take one Zeposia capsule a day.", facts, "How many do you take?") == "entailed"
    assert label("I've only got just the one shot at home.", facts, "How many pens do you keep?") == "contradicted"
    said = "Just the one chest infection this year."
    assert label(said, ["I had three chest infections this year."], "Any infections?") == "contradicted"


def test_a_schedule_said_every_couple_of_weeks_or_in_the_mornings_is_read() -> None:
    facts = ["I have my blood checked at the clinic every six weeks.", "I inject 20 units of insulin at night."]
    assert label("Every couple of weeks, at the clinic.", facts, "How often is your blood checked?") == "contradicted"
    assert label("Twenty units, in the mornings.", facts, "When do you inject it?") == "contradicted"
    # a range of months is both its numbers
    periods = ["My periods come roughly every two to four months."]
    assert label("Every couple of months, sometimes four.", periods, "How often?") != "contradicted"


def test_a_part_of_the_day_about_another_thing_is_no_contradiction() -> None:
    facts = ["I get ankle swelling in the evenings.", "I take hydroxychloroquine 200 mg once a day."]
    said = "My knuckles have been stiff in the mornings."
    assert label(said, facts, "Anything else bothering you?") != "contradicted"


def test_a_side_or_a_weight_change_against_the_fact_is_contradicted() -> None:
    assert label("On the right arm.", ["My fistula is in my left forearm."], "Where is your fistula?") == "contradicted"
    facts = ["I have lost 5 kg since starting the injections.", "I live with my husband."]
    assert label("I've put on about five kilos since I started.", facts, "Has your weight changed?") == "contradicted"
    assert label("I've lost about five kilos since I started.", facts, "Has your weight changed?") == "entailed"
