"""SARI against the published test vector and hand-checkable cases."""

from __future__ import annotations

import pytest

from bedside.metrics import corpus_sari, sentence_sari
from bedside.metrics.sari import normalise

SOURCE = "About 95 species are currently accepted."
PREDICTION = "About 95 you now get in."
REFERENCES = [
    "About 95 species are currently known.",
    "About 95 species are now accepted.",
    "95 species are now accepted.",
]


def test_the_published_vector() -> None:
    assert corpus_sari([SOURCE], [PREDICTION], [REFERENCES]) == 26.953601953601954
    assert sentence_sari(SOURCE, PREDICTION, REFERENCES) == 26.953601953601954


def test_copying_a_source_that_needs_no_change_scores_100() -> None:
    # Everything kept is kept by the reference; nothing deleted or added: empty sets count as 1.
    assert sentence_sari("Rest at home.", "Rest at home.", ["Rest at home."]) == 100.0


def test_adding_only_wrong_words_costs_the_add_component() -> None:
    # Keep is perfect, nothing is deleted, but every added n-gram is wrong and the reference added none:
    # add precision 0, add recall 1 (nothing to add) -> add F1 0, so SARI = (1 + 1 + 0) / 3.
    score = sentence_sari("rest at home", "rest at home today", ["rest at home"])
    assert score == pytest.approx(100 * 2 / 3)


def test_text_is_lowercased_and_13a_tokenised() -> None:
    assert normalise("Take 2 Tablets, twice daily.") == ["take", "2", "tablets", ",", "twice", "daily", "."]
    assert sentence_sari("Rest AT home.", "rest at HOME .", ["REST at home."]) == 100.0


def test_corpus_sari_is_the_mean_and_checks_lengths() -> None:
    other = ("Drink water.", "Drink more water.", ["Drink plenty of water."])
    both = corpus_sari([SOURCE, other[0]], [PREDICTION, other[1]], [REFERENCES, other[2]])
    assert both == pytest.approx((sentence_sari(SOURCE, PREDICTION, REFERENCES) + sentence_sari(*other)) / 2)
    with pytest.raises(ValueError, match="1 sources, 2 outputs"):
        corpus_sari([SOURCE], [PREDICTION, PREDICTION], [REFERENCES])
    with pytest.raises(ValueError, match="non-empty list"):
        sentence_sari(SOURCE, PREDICTION, [])
