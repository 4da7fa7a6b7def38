"""Which words a negation reaches (bedside.text.assertion, NegEx by negspacy), and what the guard does with it."""

from __future__ import annotations

import pytest

from bedside.text.assertion import polarity_flips, read_polarity
from bedside.text.conflicts import ClinicalGuard


def test_negex_negates_the_words_after_its_cue_up_to_a_termination() -> None:
    reading = read_polarity("no fever but a bad cough")
    assert reading.negated == {"fever"}
    assert {"bad", "cough"} <= reading.affirmed
    # the clinical term set's cues, not only "no" and "not"
    assert "pain" in read_polarity("he denies chest pain").negated
    assert "cancer" in read_polarity("the biopsy was negative for cancer").negated
    assert "cancer" in read_polarity("cancer was ruled out").negated
    # bedside's added terminations: "so" ends the reach
    assert "school" in read_polarity("it is not contagious, so he can go back to school").affirmed


def test_a_cue_with_no_content_word_after_it_still_makes_the_sentence_negative() -> None:
    reading = read_polarity("no, i haven't")
    assert reading.negative
    assert not reading.negated
    assert not read_polarity("i take it every day").negative


def test_function_and_time_words_are_not_read_as_negated_but_clinical_stop_words_are() -> None:
    reading = read_polarity("don't put it up for two days")
    assert {"put", "up"} <= reading.negated
    assert not {"day", "days", "for", "two"} & (reading.negated | reading.affirmed)


def test_a_word_one_side_negates_and_the_other_affirms_is_a_flip() -> None:
    flips = polarity_flips(read_polarity("no fever but a bad cough"), read_polarity("a fever but no cough"))
    assert flips == {"fever", "cough"}
    assert not polarity_flips(read_polarity("avoid alcohol"), read_polarity("skip alcohol"))


def test_the_guard_rejects_a_swap_of_what_is_negated_in_two_negative_sentences() -> None:
    guard = ClinicalGuard(drug_finder=None)
    conflicts = guard.conflicts("No fever, but the cough is still there.", "Fever, but no cough any more.")
    assert [c.kind for c in conflicts] == ["negation"]
    assert "cough" in conflicts[0].reference
    assert "fever" in conflicts[0].reference
    swapped = guard.read(
        "Your sodium limit is 2,000 mg for the whole day, not for each meal.",
        "Your sodium limit is 2,000 mg for each meal, not for the whole day.",
    )
    assert swapped.verdict == "conflict"
    assert not guard.conflicts("He is still contagious.", "He is still contagious.")


def test_a_negation_reader_that_raises_makes_the_pair_uncertain(monkeypatch: pytest.MonkeyPatch) -> None:
    from bedside.text import assertion

    def broken(text: str) -> object:
        raise RuntimeError("spaCy is broken")

    monkeypatch.setattr(assertion, "read_polarity", broken)
    guard = ClinicalGuard(drug_finder=None)  # a fresh reading cache: the patched reader is really called
    reading = guard.read("No fever today.", "A fever today.")
    assert reading.verdict == "uncertain"
    assert reading.uncertain is not None
    assert "negation reader (negspacy) failed: RuntimeError: spaCy is broken" in reading.uncertain
    assert guard.signals("No fever today.").polarity.negated == frozenset()  # the lenient reading goes on


def test_inflections_meet_by_snowballs_stems() -> None:
    from bedside.text.assertion import word_stem

    assert word_stem("running") == word_stem("run") == word_stem("Runs")  # the old suffix cut gave "runn"
    assert word_stem("lifting") == word_stem("lift")
    assert word_stem("allergies") == word_stem("allergy")
    assert word_stem("wet") != word_stem("dry")


@pytest.mark.parametrize(
    ("refusing", "negating"),
    [
        (
            "Avoid heavy lifting for six weeks after the repair.",
            "Don't lift anything heavy for six weeks after the repair.",
        ),
        ("Avoid alcohol while you take metronidazole.", "No alcohol at all while you take metronidazole."),
    ],
)
def test_an_action_that_says_do_not_is_the_same_no_as_a_negation_cue(refusing: str, negating: str) -> None:
    guard = ClinicalGuard(drug_finder=None)
    for one, other in ((refusing, negating), (negating, refusing)):
        assert not guard.conflicts(one, other)
        assert guard.read(one, other).verdict != "conflict"


def test_a_refusing_action_does_not_cover_a_no_about_other_words() -> None:
    guard = ClinicalGuard(drug_finder=None)
    reading = guard.read(
        "Your chart lists penicillin as an allergy, so please avoid amoxicillin.",
        "Your chart no longer lists penicillin as an allergy, so amoxicillin is fine for you.",
    )
    assert reading.verdict == "conflict"


def test_a_negated_word_against_its_wordnet_antonym_is_two_flips_that_cancel() -> None:
    guard = ClinicalGuard(drug_finder=None)
    assert not guard.conflicts(
        "Keep the bandage completely dry for two days.", "Don't let the bandage get wet for two days."
    )
    # not where the affirming side negates something of its own: two sentences that swap what they refuse
    swapped = guard.read(
        "Keep the wound moist, not dry, under the dressing.", "Keep the wound dry, not wet, under the dressing."
    )
    assert swapped.verdict != "agree"
    # nor where the negating side has a second "no" of its own: that one is a flip (found in reading the change)
    second = guard.read("Do not let the dressing get wet and do not remove it.", "Keep the dressing dry and remove it.")
    # ...which, in sentences sharing this few of their content words (2 of 8), the guard flags rather than decides
    assert second.verdict == "uncertain"
    assert "share only 25% of their content words" in (second.uncertain or "")
    close = guard.read("Keep the dressing dry and do not remove it.", "Keep the dressing dry and remove it.")
    assert close.verdict == "conflict"
    # nor where nothing antonymous stands against the negated word
    assert (
        guard.read("Keep the bandage dry for two days.", "Don't let the bandage stay on for two days.").verdict
        == "conflict"
    )
