"""A trained offline content matcher: pair features and a logistic regression, instead of one threshold.

A single similarity threshold decides too much (content Edit-F1 moves by a factor of five between plausible
thresholds) and cannot know that "increase" and "continue" are opposites. This matcher scores each (reference
sentence, draft sentence) pair with a :class:`~bedside.retrieval.linear_model.LinearModel` over features that
each carry a different kind of evidence:

- MiniLM cosine, and how far the candidate is ahead of the draft's next best sentence by cosine;
- lexical overlap: ROUGE-1 F, the share of the reference's content words found in the candidate, rapidfuzz's
  token-set ratio, and the log length ratio;
- the clinical-safety guard's signals: one 0/1 feature per conflict kind (action, drug, number, negation,
  laterality, time), and whether both sides name a drug.

Training pairs come from match annotations: every draft sentence of an annotation's draft is a candidate,
labelled a match when it overlaps the annotated gold span. At use, the draft sentence with the highest
probability is the match when that probability reaches the threshold (0.5 unless calibrated); behind the guard,
as every matcher, a conflicting candidate is rejected. The model is saved as ``.npz`` arrays (no pickle).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bedside.retrieval.linear_model import LinearModel
from bedside.tasks.drafting.editjudge import Match, locate
from bedside.tasks.drafting.guard import CONFLICT_KINDS, ClinicalGuard, default_guard
from bedside.tasks.drafting.matchers import EmbeddingMatcher, SentenceMatcher, content_words
from bedside.tasks.drafting.validation import (
    JudgeAgreement,
    MatchAnnotation,
    best_threshold,
    judge_agreement,
    read_annotations,
)
from bedside.text.sentences import split_sentences

if TYPE_CHECKING:
    from numpy.typing import NDArray


FORMAT = "bedside-drafting-matcher/1"
TRAINED_THRESHOLD = 0.5
FEATURES = (
    "cosine",
    "cosine_margin",
    "rouge1_f",
    "content_recall",
    "token_set_ratio",
    "log_length_ratio",
    *(f"conflict_{kind}" for kind in CONFLICT_KINDS),
    "both_name_drugs",
)


class PairFeatures:
    """Computes the feature rows of one reference sentence against every sentence of a draft."""

    def __init__(self, guard: ClinicalGuard | None = None, embedder: EmbeddingMatcher | None = None) -> None:
        from rouge_score import rouge_scorer

        self.guard = guard or default_guard()
        self._embedding = embedder or EmbeddingMatcher()
        self._rouge = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)

    def rows(self, sentence: str, candidates: Sequence[str]) -> NDArray[np.float64]:
        from rapidfuzz import fuzz

        cosines = self._embedding.similarities(sentence, candidates)
        ordered = sorted(cosines, reverse=True)
        wanted = content_words(sentence)
        ref_signals = self.guard.signals(sentence)
        rows = []
        for candidate, cosine in zip(candidates, cosines, strict=True):
            runner_up = ordered[1] if cosine == ordered[0] and len(ordered) > 1 else ordered[0]
            kinds = {c.kind for c in self.guard.conflicts(sentence, candidate)}
            found = content_words(candidate)
            rows.append(
                [
                    cosine,
                    cosine - runner_up,
                    self._rouge.score(sentence, candidate)["rouge1"].fmeasure,
                    len(wanted & found) / len(wanted) if wanted else 0.0,
                    fuzz.token_set_ratio(sentence, candidate) / 100,
                    math.log((len(candidate) + 1) / (len(sentence) + 1)),
                    *(float(kind in kinds) for kind in CONFLICT_KINDS),
                    float(bool(ref_signals.drugs) and bool(self.guard.signals(candidate).drugs)),
                ]
            )
        return np.array(rows, dtype=np.float64).reshape(len(candidates), len(FEATURES))


def training_pairs(
    annotations: Sequence[MatchAnnotation], features: PairFeatures
) -> tuple[NDArray[np.float64], list[str]]:
    """One row per (annotation, draft sentence), labelled ``match`` when the sentence overlaps the gold span."""
    blocks, labels = [], []
    for annotation in annotations:
        sentences = split_sentences(annotation.draft)
        if not sentences:
            continue
        blocks.append(features.rows(annotation.sentence, [s.text for s in sentences]))
        gold = locate(annotation.gold, annotation.draft) if annotation.gold else None
        for s in sentences:
            hit = gold is not None and s.start < gold[1] and gold[0] < s.end
            labels.append("match" if hit else "no")
    return np.vstack(blocks), labels


class TrainedMatcher(SentenceMatcher):
    """The draft sentence with the highest match probability, when that probability reaches ``threshold``."""

    name = "trained"

    def __init__(
        self, model: LinearModel, threshold: float = TRAINED_THRESHOLD, features: PairFeatures | None = None
    ) -> None:
        super().__init__(threshold)
        if "match" not in model.labels:
            raise ValueError(f"a trained matcher needs a 'match' label; this model has {model.labels}")
        self.model = model
        self._features = features
        self._column = model.labels.index("match")

    @property
    def features(self) -> PairFeatures:
        if self._features is None:
            self._features = PairFeatures()
        return self._features

    def similarities(self, sentence: str, candidates: Sequence[str]) -> list[float]:
        rows = self.features.rows(sentence, candidates)
        return [float(p) for p in self.model.probabilities(rows)[:, self._column]]

    @classmethod
    def fit(
        cls, annotations: Sequence[MatchAnnotation], *, c: float = 1.0, features: PairFeatures | None = None
    ) -> TrainedMatcher:
        features = features or PairFeatures()
        x, y = training_pairs(annotations, features)
        if len(set(y)) < 2:
            raise ValueError("the annotations need both matches and NO MATCHes to train a matcher")
        return cls(LinearModel.fit(x, y, c=c), features=features)

    def save(self, path: str | Path) -> Path:
        return self.model.save(path, FORMAT)

    @classmethod
    def load(cls, path: str | Path, threshold: float = TRAINED_THRESHOLD) -> TrainedMatcher:
        model = LinearModel.load(path, FORMAT, "trained matcher")
        if model.coef.shape[1] != len(FEATURES):
            raise ValueError(f"{path}: {model.coef.shape[1]} features, this bedside computes {len(FEATURES)}")
        return cls(model, threshold)


@cache
def default_trained_matcher() -> TrainedMatcher:
    """Trained on bedside's 309 match annotations at first use (a few seconds), then kept for the process."""
    return TrainedMatcher.fit(read_annotations())


def trained_matcher(path: str | Path | None = None, *, threshold: float | None = None) -> TrainedMatcher:
    """A saved matcher (``path``), or the one trained on bedside's annotations."""
    chosen = TrainedMatcher.load(path) if path else default_trained_matcher()
    if threshold is not None:
        chosen = TrainedMatcher(chosen.model, threshold, chosen._features)
    return chosen


@dataclass(frozen=True)
class HeldOut:
    agreement: JudgeAgreement
    drafts: int


def leave_one_draft_out(
    annotations: Sequence[MatchAnnotation], *, guarded: bool = True, features: PairFeatures | None = None
) -> HeldOut:
    """Each draft's annotations judged by a matcher trained on the other drafts' annotations only.

    The threshold is chosen on the training drafts too (maximum agreement, as ``calibrate`` does), so nothing
    of the held-out draft informs its own decisions. Guarded: candidates with a guard conflict are never chosen.
    """
    features = features or PairFeatures()
    drafts = sorted({a.draft for a in annotations})
    if len(drafts) < 2:
        raise ValueError("leave-one-draft-out needs annotations on two or more drafts")
    blocks = []
    for annotation in annotations:
        sentences = [s.text for s in split_sentences(annotation.draft)]
        x, y = training_pairs([annotation], features) if sentences else (np.zeros((0, len(FEATURES))), [])
        blocks.append((sentences, x, y))
    conflict_columns = [FEATURES.index(f"conflict_{kind}") for kind in CONFLICT_KINDS]

    def best(model: LinearModel, index: int) -> tuple[str | None, float]:
        sentences, x, _ = blocks[index]
        if not sentences:
            return None, 0.0
        probability = model.probabilities(x)[:, model.labels.index("match")]
        allowed = ~x[:, conflict_columns].any(axis=1) if guarded else np.ones(len(sentences), dtype=bool)
        if not allowed.any():
            return None, float(probability.max())
        k = int(np.argmax(np.where(allowed, probability, -1.0)))
        return sentences[k], float(probability[k])

    predictions: list[Match] = [Match(None)] * len(annotations)
    for draft in drafts:
        train = [i for i, a in enumerate(annotations) if a.draft != draft and blocks[i][0]]
        model = LinearModel.fit(
            np.vstack([blocks[i][1] for i in train]), [y for i in train for y in blocks[i][2]], c=1.0
        )
        threshold = best_threshold([annotations[i] for i in train], [best(model, i) for i in train])
        for i, annotation in enumerate(annotations):
            if annotation.draft == draft:
                span, score = best(model, i)
                predictions[i] = Match(span if span is not None and score >= threshold else None, score=score)
    return HeldOut(judge_agreement(annotations, predictions), len(drafts))


__all__ = [
    "FEATURES",
    "TRAINED_THRESHOLD",
    "HeldOut",
    "PairFeatures",
    "TrainedMatcher",
    "default_trained_matcher",
    "leave_one_draft_out",
    "trained_matcher",
]
