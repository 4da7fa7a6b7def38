"""Evidence selection by a trained classifier instead of a prompt (the seed's 2-stage fine-tuned variant).

Each note sentence becomes one feature vector from MiniLM sentence embeddings (the offline all-MiniLM-L6-v2
stands in for the Sentence-BERT encoder): the sentence vector s, the question vector q (clinician question and
the patient's marked phrases), their element-wise product and absolute difference, their cosine, and the
sentence's relative position in the note. A multinomial logistic regression (scikit-learn, balanced class
weights) learns the key's three labels. A sentence is selected when its most probable label is essential or
supplementary; when none is, the single sentence least likely to be not-relevant is selected, so stage 2
always has evidence.

A fitted classifier saves to ``.npz`` (coefficients and labels as plain arrays, no pickle) and loads back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bedside.retrieval.linear_model import LinearModel
from bedside.tasks.citeqa.cases import RELEVANCE_LABELS, Case
from bedside.tasks.citeqa.scoring import Counts, prf_2025

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from bedside.retrieval.embeddings import MiniLMEmbedder

FORMAT = "bedside-citeqa-evidence-classifier/1"


def question_of(case: Case) -> str:
    return " ".join(part for part in (case.clinician_question, case.patient_question) if part)


def features(case: Case, embedder: MiniLMEmbedder | None = None) -> NDArray[np.float32]:
    """One row per note sentence, in note order."""
    from bedside.retrieval.embeddings import default_embedder

    model = embedder or default_embedder()
    vectors = model.embed([question_of(case), *(s.text for s in case.sentences)])
    q, s = vectors[0], vectors[1:]
    n = len(case.sentences)
    position = (np.arange(n, dtype=np.float32) / max(n - 1, 1))[:, None]
    cosine = (s @ q)[:, None]
    return np.hstack([s, np.broadcast_to(q, s.shape), s * q, np.abs(s - q), cosine, position]).astype(np.float32)


@dataclass(frozen=True)
class EvidenceClassifier:
    model: LinearModel

    @property
    def labels(self) -> tuple[str, ...]:
        return self.model.labels

    @classmethod
    def fit(
        cls, cases: Sequence[Case], *, c: float = 1.0, embedder: MiniLMEmbedder | None = None
    ) -> EvidenceClassifier:
        unkeyed = [case.id for case in cases if case.relevance is None or not case.sentences]
        if unkeyed:
            raise ValueError(f"training needs note sentences and a key for every case; missing for {unkeyed}")
        x = np.vstack([features(case, embedder) for case in cases])
        y = [case.relevance[s.id] for case in cases for s in case.sentences]  # type: ignore[index]
        if len(set(y)) < 2:
            raise ValueError("training needs at least two different relevance labels")
        return cls(LinearModel.fit(x, y, c=c))

    def probabilities(self, case: Case, embedder: MiniLMEmbedder | None = None) -> NDArray[np.float64]:
        return self.model.probabilities(features(case, embedder))

    def predict(self, case: Case, embedder: MiniLMEmbedder | None = None) -> dict[str, str]:
        """Sentence id → predicted label."""
        probabilities = self.probabilities(case, embedder)
        return {s.id: self.labels[int(k)] for s, k in zip(case.sentences, probabilities.argmax(axis=1), strict=True)}

    def select(self, case: Case, embedder: MiniLMEmbedder | None = None) -> list[str]:
        if not case.sentences:
            return []
        probabilities = self.probabilities(case, embedder)
        predicted = [self.labels[int(k)] for k in probabilities.argmax(axis=1)]
        chosen = [s.id for s, label in zip(case.sentences, predicted, strict=True) if label != "not-relevant"]
        if chosen:
            return chosen
        if "not-relevant" in self.labels:
            least = int(probabilities[:, self.labels.index("not-relevant")].argmin())
        else:
            least = int(probabilities.max(axis=1).argmax())
        return [case.sentences[least].id]

    def save(self, path: str | Path) -> Path:
        return self.model.save(path, FORMAT)

    @classmethod
    def load(cls, path: str | Path) -> EvidenceClassifier:
        return cls(LinearModel.load(path, FORMAT, "evidence classifier"))


def cross_validate(cases: Sequence[Case], *, folds: int = 5, c: float = 1.0) -> dict[str, float]:
    """Held-out selection quality: train on the other folds' cases, select on each held-out case.

    Returns pooled precision, recall and F1 of the selected sentences against essential + supplementary, and
    the 3-label macro F1 of the predictions (scikit-learn's ``f1_score``), over every held-out sentence.
    """
    from sklearn.metrics import f1_score

    if len(cases) < 2:
        raise ValueError("cross-validation needs at least two cases")
    folds = min(folds, len(cases))
    tp = fp = fn = 0
    gold_labels: list[str] = []
    predicted_labels: list[str] = []
    for k in range(folds):
        held = [case for i, case in enumerate(cases) if i % folds == k]
        model = EvidenceClassifier.fit([case for i, case in enumerate(cases) if i % folds != k], c=c)
        for case in held:
            relevant = set(case.labelled("essential", "supplementary"))
            chosen = set(model.select(case))
            tp, fp, fn = tp + len(chosen & relevant), fp + len(chosen - relevant), fn + len(relevant - chosen)
            predicted = model.predict(case)
            gold_labels += [case.relevance[s.id] for s in case.sentences]  # type: ignore[index]
            predicted_labels += [predicted[s.id] for s in case.sentences]
    selection = prf_2025(Counts(tp, fp, fn))
    macro = float(
        f1_score(gold_labels, predicted_labels, labels=list(RELEVANCE_LABELS), average="macro", zero_division=0)
    )
    return {
        "precision": selection.precision,
        "recall": selection.recall,
        "f1": selection.f1,
        "label_macro_f1": macro,
        "folds": float(folds),
    }
