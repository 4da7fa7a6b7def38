"""Lexical metrics equal the reference libraries' numbers, with references given per hypothesis."""

from __future__ import annotations

import pytest
from rouge_score.rouge_scorer import RougeScorer
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.chrf import CHRF

from bedside.metrics import (
    MetricUnavailableError,
    corpus_bleu,
    corpus_chrf,
    mean_rouge,
    meteor_unavailable,
    sentence_bleu,
    sentence_chrf,
    sentence_meteor,
    sentence_rouge,
)

HYPOTHESES = [
    "Please keep taking lisinopril 10 mg every morning and check your blood pressure at home.",
    "Your potassium was a little high, so we will repeat the test next week.",
    "Call us if the swelling in your leg gets worse or you feel short of breath.",
]
REFERENCES = [
    [
        "Continue lisinopril 10 mg daily and monitor your blood pressure at home.",
        "Keep taking lisinopril each morning; check your blood pressure.",
    ],
    ["Your potassium level was slightly elevated; we will recheck it next week."],
    [
        "If your leg swelling worsens or you become short of breath, call the clinic.",
        "Return if you are short of breath.",
        "Call us about worse swelling.",
    ],
]


def test_sentence_bleu_and_chrf_equal_sacrebleu() -> None:
    for hypothesis, references in zip(HYPOTHESES, REFERENCES, strict=True):
        assert (
            sentence_bleu(hypothesis, references)
            == BLEU(effective_order=True).sentence_score(hypothesis, references).score
        )
        assert sentence_chrf(hypothesis, references) == CHRF().sentence_score(hypothesis, references).score
        assert (
            sentence_chrf(hypothesis, references, word_order=2)
            == CHRF(word_order=2).sentence_score(hypothesis, references).score
        )


def test_corpus_scores_pool_statistics_with_a_varying_number_of_references() -> None:
    # sacrebleu takes one stream per reference position; bedside pads shorter reference lists with None.
    streams = [
        [REFERENCES[0][0], REFERENCES[1][0], REFERENCES[2][0]],
        [REFERENCES[0][1], None, REFERENCES[2][1]],
        [None, None, REFERENCES[2][2]],
    ]
    assert corpus_bleu(HYPOTHESES, REFERENCES) == BLEU().corpus_score(HYPOTHESES, streams).score  # type: ignore[arg-type]
    assert (
        corpus_chrf(HYPOTHESES, REFERENCES, word_order=2)
        == CHRF(word_order=2)
        .corpus_score(
            HYPOTHESES,
            streams,  # type: ignore[arg-type]
        )
        .score
    )
    # Pooling is not averaging.
    mean_sentence = sum(sentence_bleu(h, r) for h, r in zip(HYPOTHESES, REFERENCES, strict=True)) / 3
    assert corpus_bleu(HYPOTHESES, REFERENCES) != pytest.approx(mean_sentence)


def test_rouge_equals_rouge_score_on_one_sentence_per_line() -> None:
    scorer = RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=False)
    hypothesis = "Take your pills. Rest for two days. Call if the fever returns."
    reference = "Rest for two days. Take the pills twice daily. Call us if fever comes back."
    expected = scorer.score(
        "Rest for two days.\nTake the pills twice daily.\nCall us if fever comes back.",
        "Take your pills.\nRest for two days.\nCall if the fever returns.",
    )
    got = sentence_rouge(hypothesis, [reference])
    for name in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
        assert got[name] == expected[name].fmeasure
    # Lsum sees sentence boundaries, L does not: the two differ on reordered sentences.
    assert got["rougeLsum"] > got["rougeL"]


def test_rouge_takes_the_best_reference_and_means_over_a_set() -> None:
    best = sentence_rouge(HYPOTHESES[2], REFERENCES[2])
    each = [sentence_rouge(HYPOTHESES[2], [r]) for r in REFERENCES[2]]
    assert best["rouge1"] == max(e["rouge1"] for e in each)
    means = mean_rouge(HYPOTHESES, REFERENCES)
    singles = [sentence_rouge(h, r)["rougeL"] for h, r in zip(HYPOTHESES, REFERENCES, strict=True)]
    assert means["rougeL"] == pytest.approx(sum(singles) / 3)


def test_reference_shapes_are_checked() -> None:
    with pytest.raises(ValueError, match="2 hypotheses but 1 reference lists"):
        corpus_bleu(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match=r"references\[0\] must be a non-empty list"):
        sentence_bleu("a", "a")
    with pytest.raises(TypeError, match="not one string"):
        corpus_chrf("abc", [["abc"]])


def test_meteor_without_wordnet_is_unavailable_not_zero(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    reason = meteor_unavailable()
    assert reason is not None
    assert reason.startswith("METEOR unavailable:")
    assert "WordNet" in reason
    with pytest.raises(MetricUnavailableError, match="METEOR unavailable"):
        sentence_meteor("the cat", ["the cat"])


def test_meteor_equals_nltk_when_wordnet_is_present() -> None:
    reason = meteor_unavailable()
    if reason:
        pytest.skip(reason)
    from nltk.translate.meteor_score import meteor_score

    hypothesis, references = HYPOTHESES[0], REFERENCES[0]
    expected = meteor_score([r.lower().split() for r in references], hypothesis.lower().split())
    assert sentence_meteor(hypothesis, references) == expected
