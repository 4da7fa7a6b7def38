"""The round of lifted restrictions, asked rates and held things (issue 45).

Each sentence here was written for this file, after the development sets' errors were read; none is copied from
a labelled set. Guard pairs are read by the clinical-safety guard, patient sentences by the fidelity checker's
combined rules, and every case fails on the rules before the round.
"""

from __future__ import annotations

from bedside.sim.contradiction import ContradictionRules, _content
from round_checks import fidelity_round_tests, guard_round_tests

REVERSED = [
    # a triage disposition: an emergency number or same-day call against office hours or the next working day
    (
        "If the swelling spreads up your arm, call 999 now.",
        "If the swelling spreads up your arm, phone our office during business hours.",
    ),
    (
        "If the wound starts oozing pus, call us the same day.",
        "If the wound starts oozing pus, mention it at your next visit.",
    ),
    (
        "If the pump alarms and will not reset, ring the ward on the same day.",
        "If the pump alarms and will not reset, ring the ward the next working day.",
    ),
    # medicines kept apart or taken together
    (
        "Take the iron tablet two hours apart from your thyroid pill.",
        "Take the iron tablet at the same time as your thyroid pill.",
    ),
    # an emergency medicine carried, or left at home
    ("Keep your glucagon kit with you wherever you go.", "Leave your glucagon kit at home when you go out."),
    # up and walking, or bed rest
    (
        "Get up and walk around the ward a few times a day to protect your lungs.",
        "Stay in bed as much as possible to protect your lungs.",
    ),
    # stored in the fridge, or frozen
    ("Store the unopened pens in the fridge.", "Store the unopened pens in the freezer."),
    # a restriction lifted is a permission
    (
        "Avoid sharing cups and towels with your family for a week.",
        "There is no need to limit sharing cups and towels with your family.",
    ),
    # a hand's hold is no dose held: "without holding" flips it
    (
        "Flush the line daily, holding the catheter near your skin so it does not tug.",
        "Flush the line daily, without holding the catheter near your skin.",
    ),
    # kept running, or stopped
    ("Keep the feed pump running overnight even if you feel full.", "Stop the feed pump overnight if you feel full."),
]

PARAPHRASES = [
    ("Do not lift anything heavy for two weeks.", "Heavy lifting is off limits for fourteen days."),
    (
        "Your potassium of 4.1 is inside your range of 3.5 to 5.",
        "Your potassium of 4.1 sits within your range of 3.5 to 5.0.",
    ),
    ("Never switch off your oxygen while you sleep.", "Keep your oxygen going while you sleep."),
    (
        "Go to the emergency department if a nosebleed does not stop within 20 minutes.",
        "Go to the emergency department if a nosebleed lasts longer than 20 minutes.",
    ),
    (
        "Raw eggs and soft cheeses are not safe for you during pregnancy.",
        "During pregnancy you should not eat soft cheeses or raw eggs.",
    ),
    (
        "When you have a fever, take two times your usual steroid dose.",
        "When you have a fever, double your usual steroid dose.",
    ),
]


test_the_guard_rejects_what_the_round_taught_it, test_the_guard_keeps_paraphrases_the_round_taught_it = (
    guard_round_tests(REVERSED, PARAPHRASES)
)


CONTRADICTED = [
    # full-time against part-time (a WordNet antonym pair)
    (["I work part-time at a garden centre."], "Are you working?", "Yes, I'm full-time at the garden centre now."),
    # a question of when "your medicine" is taken asks of the one drug a fact names
    (["I take sertraline every morning."], "When do you take your medicine?", "Always last thing at night."),
    # "a fine tremor" is a slight one, not its absence
    (["I have a fine tremor in both hands."], "Any shaking?", "No, my hands have never shaken at all."),
    # a normal result told after the test is no "no" to having had it
    (["I had a mammogram last year that was normal."], "Have you ever had a mammogram?", "No, never."),
    # a fact about the whole family speaks of the grandmother
    (
        ["Nobody in my family has had a stroke."],
        "Any strokes in the family?",
        "My grandmother had a stroke in her sixties.",
    ),
    # housemates are people the patient lives with
    (["I live with two housemates."], "Who do you live with?", "I live on my own."),
]

NOT_CONTRADICTED = [
    # "not long after" says soon after
    (
        ["I fainted once soon after starting amlodipine."],
        "Any fainting?",
        "Just the once, not long after I started the new pill.",
    ),
    # "not loads" says how much
    (["My sleep is a little better than last month."], "How is your sleep?", "A bit better, not loads, but better."),
    # three doses a day is three times a day
    (["I take prednisolone three times a day."], "How do you take the prednisolone?", "Three doses a day, with food."),
    # "truck stop" is a place, not a medicine stopped
    (
        ["I work long shifts as a delivery driver."],
        "What do you eat on shift?",
        "Mostly pies from the truck stop, honestly.",
    ),
    # two cancers of two organs are two histories, not one told of another person
    (
        ["My sister had ovarian cancer at 45."],
        "Any other cancer in the family?",
        "My grandfather had lung cancer in his eighties.",
    ),
    # a bare number repeats the kilograms the fact says in words
    (["I have lost about six kilograms since March."], "Has your weight changed?", "I've lost a fair bit, around six."),
    # "not since starting" says when, not no
    (
        ["I had nosebleeds before, but not since starting the spray."],
        "Any nosebleeds lately?",
        "Not since I started using the spray.",
    ),
    # an action needs a subject in common
    (
        ["I stopped taking aspirin in the spring because my doctor told me to."],
        "How are you getting around at home since the fall?",
        "I've started using a walking stick, mostly when I'm in the garden.",
    ),
]


test_the_checker_catches_what_the_round_taught_it, test_the_checker_no_longer_contradicts_what_agrees = (
    fidelity_round_tests(CONTRADICTED, NOT_CONTRADICTED)
)


def test_a_rate_the_nearest_fact_gives_ends_the_search() -> None:
    """The blue inhaler's twice a week is the answer's fact: the brown inhaler's twice a day, further down, is not
    set against it (the similarities are fixed here, as the embedder would rank the two facts)."""
    facts = [
        "I use my blue inhaler about twice a week, mostly before a match.",
        "I am meant to use my brown inhaler every morning and night, but I usually skip the night puff.",
    ]
    rules = ContradictionRules()
    asked = "How often are you using your blue inhaler?"
    assert rules.find("Like twice a week, usually before a match.", facts, [0.73, 0.61], asked) is None


def test_an_answer_to_how_often_meets_the_one_fact_with_a_rate_below_the_alignment() -> None:
    facts = ["I have had four injections so far.", "I have my injection every three months."]
    found = ContradictionRules().find(
        "It's twice a year, every six months.", facts, [0.6, 0.5], "How often is the injection?"
    )
    assert found is not None
    assert (found.kind, found.fact) == ("time", facts[1])
    # two facts with a rate: which one the answer is about is not known, so neither is set against it
    facts.append("I have a blood test every month.")
    assert (
        ContradictionRules().find("It's twice a year.", facts, [0.6, 0.5, 0.5], "How often is the injection?") is None
    )


def test_a_verb_in_ing_meets_its_other_forms() -> None:
    assert _content("I've been driving to work") & _content("I have not driven since")
