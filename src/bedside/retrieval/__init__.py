"""Retrieval over documents (records, chunks, cases): BM25 now; embedding indexes build on the same shape."""

from bedside.retrieval.bm25 import BM25Index, Hit, OkapiBM25Index
from bedside.retrieval.ranking import mrr_at_k, success_at_k

__all__ = ["BM25Index", "Hit", "OkapiBM25Index", "mrr_at_k", "success_at_k"]
