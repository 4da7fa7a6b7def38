"""Meaning-level similarity: sentence-vector cosine and BERTScore-style greedy token matching.

Each score's name carries the model that computed it, since numbers from different encoders are not
comparable: ``cosine[all-MiniLM-L6-v2[onnx-int8]]`` and ``bertscore[all-MiniLM-L6-v2[onnx-int8]]`` run offline
on the shipped MiniLM; ``bertscore[<model>/L<layer>]`` is the ``bert-score`` package itself (extra
``bertscore``: torch + a model directory you already have; nothing is downloaded).

The MiniLM BERTScore follows BERTScore's definition (Zhang et al., 2020) without its options: each token of
one text is matched to its most similar token of the other by cosine of contextual vectors (the model's last
layer, word pieces, [CLS]/[SEP] excluded); precision averages over the hypothesis's tokens, recall over the
reference's, F1 is their harmonic mean. No idf weighting and no baseline rescaling (bert-score's defaults).
With several references the best F1 is kept, as bert-score does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bedside.metrics.lexical import MetricUnavailableError
from bedside.retrieval.embeddings import MODEL_NAME, MiniLMEmbedder, default_embedder

if TYPE_CHECKING:
    from numpy.typing import NDArray

COSINE_NAME = f"cosine[{MODEL_NAME}]"
MINILM_BERTSCORE_NAME = f"bertscore[{MODEL_NAME}]"


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float


def semantic_similarity(
    hypotheses: Sequence[str], references: Sequence[str], *, embedder: MiniLMEmbedder | None = None
) -> list[float]:
    """Cosine of MiniLM sentence vectors, pairwise (hypothesis i with reference i); in [-1, 1]."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    model = embedder or default_embedder()
    vectors = model.embed([*hypotheses, *references])
    n = len(hypotheses)
    return [float(vectors[i] @ vectors[n + i]) for i in range(n)]


def _greedy(hypothesis: NDArray[np.float32], reference: NDArray[np.float32]) -> PRF:
    if len(hypothesis) == 0 or len(reference) == 0:
        return PRF(0.0, 0.0, 0.0)
    similarity = hypothesis @ reference.T
    precision = float(similarity.max(axis=1).mean())
    recall = float(similarity.max(axis=0).mean())
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return PRF(precision, recall, f1)


def minilm_bertscore(hypothesis: str, references: Sequence[str], *, embedder: MiniLMEmbedder | None = None) -> PRF:
    """Greedy token matching on MiniLM's contextual vectors; the reference with the best F1 is kept."""
    if isinstance(references, str) or not references:
        raise ValueError("references must be a non-empty list of strings")
    model = embedder or default_embedder()
    vectors = model.token_vectors([hypothesis, *references])
    return max((_greedy(vectors[0], ref) for ref in vectors[1:]), key=lambda s: s.f1)


class BertScorer:
    """The ``bert-score`` package with a local model directory (extra ``bertscore``).

    ``num_layers`` is required because bert-score only knows the layer to use for models it was tuned on.
    """

    def __init__(self, model_path: str | Path, *, num_layers: int, idf: bool = False, batch_size: int = 16) -> None:
        path = Path(model_path)
        if not path.is_dir():
            raise MetricUnavailableError(f"BERTScore model directory {path} does not exist")
        try:
            from bert_score import BERTScorer
        except ImportError:
            raise MetricUnavailableError(
                "BERTScore unavailable: the bert-score package is not installed (pip install 'bedside[bertscore]')"
            ) from None
        self.name = f"bertscore[{path.name}/L{num_layers}]"
        self._scorer: Any = BERTScorer(model_type=str(path), num_layers=num_layers, idf=idf, batch_size=batch_size)

    def score(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> list[PRF]:
        precision, recall, f1 = self._scorer.score(list(hypotheses), [list(r) for r in references])
        return [PRF(float(p), float(r), float(f)) for p, r, f in zip(precision, recall, f1, strict=True)]
