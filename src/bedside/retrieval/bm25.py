"""BM25 over a list of documents: bm25s's Lucene variant (:class:`BM25Index`) and rank_bm25's Okapi
(:class:`OkapiBM25Index`, what MedAlign matched instructions to records with), both offline.

Scoring is bm25s's default Lucene variant, summed over the distinct query terms t found in document d:
``idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))`` with ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``
(Lucene drops the classic ``(k1 + 1)`` factor, which scales every score alike and leaves rankings unchanged).
Tokens are lower-cased runs of two or more word characters, English stop words removed (bm25s's built-in
list). Documents that share no term with the query (score 0) are not returned, so a top-k list may be
shorter than k: a zero-score "hit" would count as found by Success@K.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import bm25s

# bm25s sets its own logger to DEBUG, so "Building index from IDs objects" reached every handler an application
# installs (one line per index in `bedside run` output): only its warnings are news.
logging.getLogger("bm25s").setLevel(logging.WARNING)


@dataclass(frozen=True)
class Hit:
    id: str
    index: int
    score: float


def _document_ids(documents: Sequence[str], ids: Sequence[str] | None, index: str) -> list[str]:
    """The documents' ids (their positions by default), after checking the input an index needs."""
    if isinstance(documents, str):
        raise TypeError(f"{index} indexes a sequence of documents, not the characters of one string")
    if not documents:
        raise ValueError("cannot build a BM25 index over no documents")
    out = [str(i) for i in range(len(documents))] if ids is None else [str(i) for i in ids]
    if len(out) != len(documents):
        raise ValueError(f"{len(out)} ids for {len(documents)} documents")
    if len(set(out)) != len(out):
        raise ValueError("document ids must be unique")
    return out


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
        self.ids = _document_ids(documents, ids, "BM25Index")
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


def whitespace_tokens(text: str) -> list[str]:
    """Split on whitespace only, case kept: how the retriever MedAlign's matching used tokenizes."""
    return text.split()


class OkapiBM25Index:
    """Classic BM25 "Okapi" as the ``rank_bm25`` package's ``BM25Okapi`` scores it (MedAlign's matching).

    For a query with tokens q (repeats counted each time), document d of length |d|, corpus of N documents with
    mean length avgdl::

        score(d) = sum over q of idf(q) * tf(q, d) * (k1 + 1) / (tf(q, d) + k1 * (1 - b + b * |d| / avgdl))
        idf(t) = ln((N - df(t) + 0.5) / (df(t) + 0.5)); a negative idf is replaced by epsilon * mean idf

    (the mean over every term in the corpus, negatives included, as ``rank_bm25`` computes it). Defaults
    k1 = 1.5, b = 0.75, epsilon = 0.25 and whitespace tokens, case kept, no stop words. Unlike :class:`BM25Index`
    (bm25s, Lucene idf, stop words removed) a common term can score at ``epsilon``; rankings of the two differ.
    Documents scoring exactly 0 are not returned, as with :class:`BM25Index`; ties keep corpus order.
    """

    def __init__(
        self,
        documents: Sequence[str],
        ids: Sequence[str] | None = None,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        tokenize: Callable[[str], list[str]] = whitespace_tokens,
    ) -> None:
        import numpy as np
        from scipy.sparse import csc_matrix

        self.ids = _document_ids(documents, ids, "OkapiBM25Index")
        self.k1, self.b, self.epsilon, self._tokenize = k1, b, epsilon, tokenize
        vocabulary: dict[str, int] = {}
        rows: list[int] = []
        columns: list[int] = []
        counts: list[int] = []
        lengths = np.zeros(len(documents), dtype=float)
        for row, document in enumerate(documents):
            tokens = tokenize(document)
            lengths[row] = len(tokens)
            for term, count in Counter(tokens).items():
                rows.append(row)
                columns.append(vocabulary.setdefault(term, len(vocabulary)))
                counts.append(count)
        self._vocabulary = vocabulary
        self._tf = csc_matrix((counts, (rows, columns)), shape=(len(documents), len(vocabulary)), dtype=float)
        n = len(documents)
        df = np.diff(self._tf.indptr).astype(float)
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        average = float(idf.mean()) if idf.size else 0.0
        idf[idf < 0] = epsilon * average
        self._idf = idf
        average_length = float(lengths.mean())
        self._norm = k1 * (1 - b + b * lengths / average_length) if average_length > 0 else np.full(n, k1 * (1 - b))

    def __len__(self) -> int:
        return len(self.ids)

    def scores(self, query: str) -> list[float]:
        """The score of every document for ``query``, in corpus order."""
        import numpy as np

        total = np.zeros(len(self.ids), dtype=float)
        for term in self._tokenize(query):
            column = self._vocabulary.get(term)
            if column is None:
                continue
            start, end = self._tf.indptr[column], self._tf.indptr[column + 1]
            rows = self._tf.indices[start:end]
            tf = self._tf.data[start:end]
            total[rows] += self._idf[column] * tf * (self.k1 + 1) / (tf + self._norm[rows])
        return [float(s) for s in total]

    def search(self, query: str, k: int = 10) -> list[Hit]:
        if k < 1:
            raise ValueError("k must be at least 1")
        scored = self.scores(query)
        order = sorted((i for i, s in enumerate(scored) if s != 0), key=lambda i: (-scored[i], i))
        return [Hit(id=self.ids[i], index=i, score=scored[i]) for i in order[:k]]

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        if isinstance(queries, str):
            raise TypeError("search_many takes a sequence of queries; use search() for one")
        return [self.search(q, k) for q in queries]
