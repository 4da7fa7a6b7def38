"""BM25 over a list of documents, through ``bm25s`` (sparse-matrix BM25, offline, no downloads).

Scoring is bm25s's default Lucene variant, summed over the distinct query terms t found in document d:
``idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))`` with ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``
(Lucene drops the classic ``(k1 + 1)`` factor, which scales every score alike and leaves rankings unchanged).
Tokens are lower-cased runs of two or more word characters, English stop words removed (bm25s's built-in
list). Documents that share no term with the query (score 0) are not returned, so a top-k list may be
shorter than k: a zero-score "hit" would count as found by Success@K.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import bm25s


@dataclass(frozen=True)
class Hit:
    id: str
    index: int
    score: float


class BM25Index:
    def __init__(
        self,
        documents: Sequence[str],
        ids: Sequence[str] | None = None,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        stopwords: str | None = "en",
    ) -> None:
        if isinstance(documents, str):
            raise TypeError("BM25Index indexes a sequence of documents, not the characters of one string")
        if not documents:
            raise ValueError("cannot build a BM25 index over no documents")
        self.ids = [str(i) for i in range(len(documents))] if ids is None else [str(i) for i in ids]
        if len(self.ids) != len(documents):
            raise ValueError(f"{len(self.ids)} ids for {len(documents)} documents")
        if len(set(self.ids)) != len(self.ids):
            raise ValueError("document ids must be unique")
        self._stopwords = stopwords
        self._retriever = bm25s.BM25(k1=k1, b=b)
        tokens = bm25s.tokenize(list(documents), stopwords=stopwords, show_progress=False)
        self._retriever.index(tokens, show_progress=False)

    def __len__(self) -> int:
        return len(self.ids)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        """Top-k hits per query, best first; ties keep bm25s's order."""
        if isinstance(queries, str):
            raise TypeError("search_many takes a sequence of queries; use search() for one")
        if k < 1:
            raise ValueError("k must be at least 1")
        k = min(k, len(self.ids))
        tokenized = bm25s.tokenize(list(queries), stopwords=self._stopwords, return_ids=False, show_progress=False)
        results: list[list[Hit]] = [[] for _ in tokenized]
        # Queries of nothing but stop words or punctuation match nothing; the rest go to bm25s in one batch.
        asked = [i for i, terms in enumerate(tokenized) if terms]
        if not asked:
            return results
        documents, scores = self._retriever.retrieve([tokenized[i] for i in asked], k=k, show_progress=False)
        for row, i in enumerate(asked):
            results[i] = [
                Hit(id=self.ids[int(d)], index=int(d), score=float(sc))
                for d, sc in zip(documents[row], scores[row], strict=True)
                if sc > 0
            ]
        return results
