"""Sentence cosine and BERTScore-style greedy matching on the offline MiniLM model."""

from __future__ import annotations

import numpy as np
import pytest

from bedside.metrics import minilm_bertscore, semantic_similarity
from bedside.metrics.lexical import MetricUnavailableError
from bedside.metrics.semantic import COSINE_NAME, MINILM_BERTSCORE_NAME, BertScorer, _greedy
from bedside.retrieval.embeddings import default_embedder


def test_names_carry_the_model() -> None:
    assert COSINE_NAME == "cosine[all-MiniLM-L6-v2[onnx-int8]]"
    assert MINILM_BERTSCORE_NAME == "bertscore[all-MiniLM-L6-v2[onnx-int8]]"


def test_cosine_orders_paraphrase_above_unrelated_text() -> None:
    reference = "Take your blood pressure medicine every morning."
    close, far = semantic_similarity(
        ["Take the blood pressure pill each morning.", "The parking garage closes at nine."], [reference, reference]
    )
    assert close > 0.7
    assert far < 0.3
    assert semantic_similarity([reference], [reference])[0] == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        semantic_similarity(["a", "b"], ["a"])


def test_token_vectors_leave_out_cls_and_sep() -> None:
    embedder = default_embedder()
    vectors = embedder.token_vectors(["Rest.", "Take lisinopril daily.", ""])
    encoded = embedder._tokenizer.encode("Take lisinopril daily.")
    assert vectors[1].shape == (len(encoded.ids) - 2, 384)
    assert vectors[2].shape == (0, 384)
    assert np.allclose(np.linalg.norm(vectors[1], axis=1), 1.0, atol=1e-5)


def test_bertscore_matches_tokens_greedily() -> None:
    same = minilm_bertscore("Take lisinopril daily.", ["Take lisinopril daily."])
    assert same.precision == pytest.approx(1.0, abs=1e-5)
    assert same.f1 == pytest.approx(1.0, abs=1e-5)
    # A hypothesis that is part of the reference: its own tokens all find close matches (high precision),
    # while much of the reference finds none (lower recall).
    part = minilm_bertscore(
        "Take lisinopril daily.", ["Take lisinopril daily, drink water, and walk for thirty minutes after dinner."]
    )
    assert part.precision > part.recall
    # With several references, the best F1 is kept.
    references = ["The cafeteria opens at noon.", "Take lisinopril daily."]
    assert minilm_bertscore("Take lisinopril daily.", references).f1 == pytest.approx(same.f1)


def test_greedy_matching_by_hand() -> None:
    hypothesis = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    reference = np.array([[1.0, 0.0]], dtype=np.float32)
    score = _greedy(hypothesis, reference)
    # precision: token 1 matches at 1, token 2 at 0 -> 0.5; recall: the one reference token matches at 1.
    assert (score.precision, score.recall) == (0.5, 1.0)
    assert score.f1 == pytest.approx(2 / 3)
    assert _greedy(hypothesis, reference[:0]).f1 == 0.0


def test_bert_score_package_needs_a_local_model(tmp_path: object) -> None:
    with pytest.raises(MetricUnavailableError, match="does not exist"):
        BertScorer("/nonexistent/model", num_layers=9)
