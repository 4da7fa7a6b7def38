"""The offline MiniLM sentence embedder (int8 ONNX, installed by `make`) and its cosine index."""

from __future__ import annotations

import os

import numpy as np
import pytest

from bedside.retrieval.embeddings import (
    DIMENSION,
    MODEL_NAME,
    EmbeddingIndex,
    MiniLMEmbedder,
    cosine,
    scoring_threads,
)


def test_vectors_are_unit_length_and_independent_of_batching() -> None:
    embedder = MiniLMEmbedder(cache_size=0, batch_tokens=64)  # several calls, each padded differently
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


class _Counting(MiniLMEmbedder):
    """Counts the texts that reach the model."""

    def __init__(self, cache_size: int) -> None:
        super().__init__(cache_size=cache_size)
        self.embedded: list[str] = []

    def _embed_all(self, texts):  # type: ignore[no-untyped-def]
        self.embedded.extend(texts)
        return super()._embed_all(texts)


def test_each_text_reaches_the_model_once_and_comes_back_the_same() -> None:
    embedder = _Counting(cache_size=3)
    first = embedder.embed(["Take it with food.", "Call us today.", "Take it with food."])
    assert embedder.embedded == ["Take it with food.", "Call us today."]  # deduplicated within a call
    again = embedder.embed(["Call us today.", "Rest your knee."])
    assert embedder.embedded[2:] == ["Rest your knee."]  # kept from the first call
    assert np.array_equal(again[0], first[1])
    assert np.allclose(first[0], MiniLMEmbedder(cache_size=0).embed(["Take it with food."])[0], atol=1e-6)
    again[0][:] = 0  # a caller's array is its own: the kept vector is untouched
    assert np.array_equal(embedder.embed(["Call us today."])[0], first[1])
    embedder.embed(["One.", "Two."])  # 3 kept at most: the oldest ("Take it with food.") goes
    embedder.embed(["Take it with food."])
    assert embedder.embedded[-1] == "Take it with food."


def test_a_long_sentence_is_cut_at_the_models_length_not_refused() -> None:
    vector = MiniLMEmbedder(cache_size=0).embed(["pain " * 6000])  # 30,000 characters
    assert vector.shape == (1, DIMENSION)
    assert np.isclose(np.linalg.norm(vector[0]), 1.0, atol=1e-5)


def test_threads_are_the_process_share_of_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BEDSIDE_SCORING_THREADS", "3")
    assert scoring_threads() == 3
    assert MiniLMEmbedder(cache_size=0).threads == 3
    monkeypatch.delenv("BEDSIDE_SCORING_THREADS")
    assert scoring_threads() == len(os.sched_getaffinity(0))
    for bad in ("0", "many"):
        monkeypatch.setenv("BEDSIDE_SCORING_THREADS", bad)
        with pytest.raises(ValueError, match=f"BEDSIDE_SCORING_THREADS='{bad}': give a whole number"):
            scoring_threads()
