"""The offline MiniLM sentence embedder (int8 ONNX, installed by `make`) and its cosine index."""

from __future__ import annotations

import numpy as np
import pytest

from bedside.retrieval.embeddings import DIMENSION, MODEL_NAME, EmbeddingIndex, cosine, default_embedder


def test_vectors_are_unit_length_and_independent_of_batching() -> None:
    embedder = default_embedder()
    texts = ["Chest pain on exertion.", "Please refill my levothyroxine.", "Short.", "A " * 400]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert together.shape == (4, DIMENSION)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.allclose(together, alone, atol=1e-4)  # padding does not leak into the mean
    assert embedder.embed([]).shape == (0, DIMENSION)
    assert MODEL_NAME == "all-MiniLM-L6-v2[onnx-int8]"


def test_similar_sentences_score_higher_than_unrelated_ones() -> None:
    close = cosine("My chest hurts when I climb the stairs.", "Exertional chest discomfort.")
    far = cosine("My chest hurts when I climb the stairs.", "Can you refill my thyroid medication?")
    assert close > far + 0.3


def test_index_returns_the_k_nearest_best_first() -> None:
    index = EmbeddingIndex(
        ["refill my levothyroxine", "chest pain on exertion", "itchy rash on my arm"], ids=["rx", "cp", "skin"]
    )
    hits = index.search("my chest hurts when I walk", k=2)
    assert [h.id for h in hits] == ["cp", hits[1].id]
    assert hits[0].score > hits[1].score
    assert len(index.search_many(["rash", "pills"], k=5)[0]) == 3
    assert index.search("anything", k=0) == []
    with pytest.raises(ValueError, match="2 ids for 3 documents"):
        EmbeddingIndex(["a", "b", "c"], ids=["x", "y"])
