"""The reading's fourteenth round (issue 45): nouns swapped for another kind of the same thing (WordNet's
taxonomy), words turned round by an opposite prefix, a "no" compared only where the sentences share their
words, and a clause or a pronoun that moves without swapping steps. The sentences are bedside's own."""

from __future__ import annotations

import pytest

from bedside.text.alignment import NEGATION_ALIGN, prefix_opposed, read_change, shared_content
from bedside.text.conflicts import ClinicalGuard
from bedside.text.wordnet import siblings


@pytest.fixture(scope="module")
def guard() -> ClinicalGuard:
    return ClinicalGuard()


@pytest.mark.parametrize(
    ("ours", "theirs", "kind"),
    [
        ("feet", "hands", "extremity"),
        ("toes", "fingers", "digit"),
        ("lungs", "kidneys", "internal organ"),
        ("pediatrician", "dentist", "medical practitioner"),
        ("lunch", "breakfast", "meal"),
        ("hours", "days", "time period"),
    ],
)
def test_two_kinds_of_one_thing_are_siblings(ours: str, theirs: str, kind: str) -> None:
    assert siblings(ours, theirs) == kind


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("pills", "tablets"),  # one synset, in tablet's fourth sense
        ("physician", "doctor"),  # synonyms
        ("statin", "atorvastatin"),  # the class and a member of it
        ("swelling", "edema"),  # the general word and the particular
        ("drowsy", "sleepy"),  # not nouns
        ("fever", "xyzzy"),  # a word WordNet does not know
        ("thing", "stuff"),  # kin only through a kind too general to tell them apart
    ],
)
def test_synonyms_a_kind_and_its_member_and_unknown_words_are_not_siblings(ours: str, theirs: str) -> None:
    assert siblings(ours, theirs) is None


def test_a_noun_swapped_for_its_sibling_is_a_conflict_of_kin(guard: ClinicalGuard) -> None:
    reading = guard.read(*_pair("toes", "fingers"))
    assert [(c.kind, c.reference, c.candidate) for c in reading.conflicts] == [
        ("kin", "toes (digit)", "fingers (another digit)")
    ]
    # two kinds of one thing are words WordNet relates in no other way: without kin, the unrelated reading
    assert [c.kind for c in guard.leaving_out(frozenset({"kin"})).conflicts(*_pair("toes", "fingers"))] == ["unrelated"]
    assert guard.leaving_out(frozenset({"kin", "unrelated"})).read(*_pair("toes", "fingers")).verdict == "uncertain"
    assert guard.read(*_pair("toes", "toe")).verdict == "agree"


def _pair(ours: str, theirs: str) -> tuple[str, str]:
    sentence = "Look at your {} every evening for blisters or cuts."
    return sentence.format(ours), sentence.format(theirs)


def test_a_sibling_beside_a_number_or_a_negation_is_not_read_as_kin() -> None:
    # a quantity said in other units is the number rules' to read
    assert read_change("Wear the splint for 6 weeks.", "Wear the splint for 42 days.").kin == []
    # a change that adds a "no" may turn the sentence round twice
    change = read_change("Soak your toes in warm water.", "Do not soak your fingers in warm water.")
    assert change.kin == []


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("hyperglycemia", "hypoglycemia"),
        ("tachycardia", "bradycardia"),
        ("preoperative", "postoperative"),
        ("overactive", "underactive"),
        ("unsterile", "sterile"),
        ("nonsmoker", "smoker"),
    ],
)
def test_an_opposite_prefix_turns_a_word_round(ours: str, theirs: str) -> None:
    assert prefix_opposed(ours, theirs)
    assert prefix_opposed(theirs, ours)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [("union", "ion"), ("under", "der"), ("unless", "less"), ("uncle", "cle"), ("prediabetes", "diabetes")],
)
def test_a_word_that_only_starts_like_a_prefix_is_not_its_opposite(ours: str, theirs: str) -> None:
    assert not prefix_opposed(ours, theirs)


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("Signs of hypoglycemia include shaking and sweating.", "Signs of hyperglycemia include shaking and sweating."),
        ("Only use unscented soap on the graft.", "Only use scented soap on the graft."),
        (
            "The cough is non-infectious, so she can go to daycare.",
            "The cough is infectious, so she can go to daycare.",
        ),
    ],
)
def test_a_word_with_the_opposite_prefix_is_a_conflict(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    assert guard.read(reference, candidate).verdict == "conflict"


def test_shared_content_counts_content_word_stems() -> None:
    assert shared_content("Take the tablets daily.", "Take the tablet daily.") == 1.0
    assert shared_content("Rest your knee.", "Ice your ankle.") == 0.0
    assert shared_content("Stop the aspirin now.", "Stop the ibuprofen now.") == pytest.approx(2 / 4)


def test_a_no_said_otherwise_in_other_words_is_uncertain_not_a_conflict(guard: ClinicalGuard) -> None:
    """NegEx reads scope word by word: the same "no" said in other words reads as a flip. Where the sentences
    share fewer than a third of their content words the guard flags the pair rather than rejects it."""
    # ("came back clear of clots" was the example until "clear of" became a cue, in the round of clauses, counts
    # and kin: the two now agree)
    reference, candidate = "There is no sign of a blood clot in your calf.", "The calf scan found the veins open."
    assert shared_content(reference, candidate) < NEGATION_ALIGN
    reading = guard.read(reference, candidate)
    assert reading.verdict == "uncertain"
    assert "one sentence says no where the other does not" in (reading.uncertain or "")
    # the same "no" dropped from an otherwise identical sentence is still a conflict
    assert guard.read(reference, "There is a sign of a blood clot in your calf.").verdict == "conflict"


def test_a_clause_moved_whole_is_no_exchange_and_a_pronoun_is_no_step(guard: ClinicalGuard) -> None:
    reading = guard.read(
        "Before you open the new tube of cream, use up your old one.",
        "Use up your old tube of cream before you open the new one.",
    )
    assert "exchange" not in {c.kind for c in reading.conflicts}
    assert "order" not in {c.kind for c in reading.conflicts}
    # steps that trade places still do
    swapped = guard.read(
        "Use up your old tube of cream before you open the new one.",
        "Open the new tube of cream before you use up your old one.",
    )
    assert swapped.verdict == "conflict"
