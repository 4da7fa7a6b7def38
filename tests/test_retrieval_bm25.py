from __future__ import annotations

import math

import pytest

from bedside.retrieval import BM25Index, mrr_at_k, success_at_k

DOCS = [
    "Dry cough after starting lisinopril",
    "Metformin dose for type 2 diabetes",
    "Diabetes diet and exercise plan",
    "Asthma inhaler technique",
]


def lucene_bm25(query: list[str], docs: list[list[str]], index: int, k1: float = 1.5, b: float = 0.75) -> float:
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    doc = docs[index]
    score = 0.0
    for term in set(query):
        df = sum(term in d for d in docs)
        tf = doc.count(term)
        if tf:
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            score += idf * tf / (tf + k1 * (1 - b + b * len(doc) / avgdl))
    return score


def test_scores_match_the_lucene_formula_by_hand() -> None:
    index = BM25Index(DOCS, ids=["a", "b", "c", "d"])
    hits = index.search("diabetes diet", k=4)
    # Tokens after lower-casing and English stop-word removal ("for" and "and" are stop words; "2" is too short):
    tokenized = [
        ["dry", "cough", "after", "starting", "lisinopril"],
        ["metformin", "dose", "type", "diabetes"],
        ["diabetes", "diet", "exercise", "plan"],
        ["asthma", "inhaler", "technique"],
    ]
    assert [h.id for h in hits] == ["c", "b"]  # documents without a query term are not returned
    for hit in hits:
        expected = lucene_bm25(["diabetes", "diet"], tokenized, hit.index)
        assert hit.score == pytest.approx(expected, rel=1e-5)


def test_queries_without_matching_terms_return_nothing() -> None:
    index = BM25Index(DOCS)
    assert index.search("the and of") == []
    assert index.search("zebra") == []
    assert [[h.id for h in hits] for hits in index.search_many(["inhaler", "cough lisinopril"], k=2)] == [["3"], ["0"]]


def test_index_refuses_a_single_string_and_bad_ids() -> None:
    with pytest.raises(TypeError, match="not the characters of one string"):
        BM25Index("one long record text")
    with pytest.raises(ValueError, match="no documents"):
        BM25Index([])
    with pytest.raises(ValueError, match="unique"):
        BM25Index(["a b", "c d"], ids=["x", "x"])
    with pytest.raises(ValueError, match="2 ids for 1 documents"):
        BM25Index(["a b"], ids=["x", "y"])


def test_success_and_mrr_at_k_worked_example() -> None:
    ranked = [["r1", "r2", "r3"], ["r2", "r3", "r1"], ["r3", "r2", "r1"], []]
    relevant: list[str | set[str]] = ["r1", "r1", {"r2", "r9"}, "r1"]
    # ranks of the first relevant id: 1, 3, 2, none
    assert success_at_k(ranked, relevant, k=1) == 0.25
    assert success_at_k(ranked, relevant, k=2) == 0.5
    assert success_at_k(ranked, relevant, k=3) == 0.75
    assert mrr_at_k(ranked, relevant, k=3) == pytest.approx((1 + 1 / 3 + 1 / 2 + 0) / 4)
    assert mrr_at_k(ranked, relevant, k=2) == pytest.approx((1 + 0 + 1 / 2 + 0) / 4)
    with pytest.raises(ValueError, match="2 rankings for 1"):
        success_at_k([["a"], ["b"]], ["a"], k=1)


def test_building_an_index_logs_nothing_below_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    caplog.set_level(logging.DEBUG)  # an application logging everything at DEBUG and above
    BM25Index(["chest pain at rest", "ankle swelling"]).search("chest pain", k=1)
    assert [r for r in caplog.records if r.name.startswith("bm25s")] == []
