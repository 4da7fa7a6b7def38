"""A multinomial logistic regression kept as plain arrays: fitted with scikit-learn, saved as ``.npz``.

The offline classifiers over MiniLM features (citeqa's evidence selector, drafting's theme classifier) need only
the coefficients to predict, so they keep those rather than a scikit-learn object: nothing is pickled, a saved
file loads under any scikit-learn version, and each file names its kind so one classifier's file is never read
as another's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray


@dataclass(frozen=True)
class LinearModel:
    coef: NDArray[np.float64]  # one row per label
    intercept: NDArray[np.float64]
    labels: tuple[str, ...]

    @classmethod
    def fit(cls, x: NDArray[Any], y: Sequence[str], *, c: float) -> LinearModel:
        """Balanced class weights, so rare labels are not drowned by common ones."""
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000, random_state=0).fit(x, list(y))
        coef, intercept = model.coef_, model.intercept_
        if len(model.classes_) == 2:  # binary: scikit-learn stores one row, for the second class
            coef, intercept = np.vstack([-coef, coef]), np.concatenate([-intercept, intercept])
        return cls(coef.astype(np.float64), intercept.astype(np.float64), tuple(str(k) for k in model.classes_))

    def scores(self, x: NDArray[Any]) -> NDArray[np.float64]:
        return x.astype(np.float64) @ self.coef.T + self.intercept

    def probabilities(self, x: NDArray[Any]) -> NDArray[np.float64]:
        logits = self.scores(x)
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]

    def predict(self, x: NDArray[Any]) -> list[str]:
        return [self.labels[int(k)] for k in self.scores(x).argmax(axis=1)]

    def save(self, path: str | Path, kind: str, *, provenance: Mapping[str, str] | None = None) -> Path:
        """Write to ``path`` exactly; ``kind`` (e.g. ``bedside-drafting-theme-classifier/1``) is checked on load, and
        so is ``provenance`` (what the model was fitted on, e.g. its training file's digest) when the loader asks."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = json.dumps({"format": kind, "labels": list(self.labels), "provenance": dict(provenance or {})})
        with path.open("wb") as handle:
            np.savez(handle, coef=self.coef, intercept=self.intercept, meta=np.array(meta))
        return path

    @classmethod
    def load(
        cls,
        path: str | Path,
        kind: str,
        description: str = "classifier",
        *,
        provenance: Mapping[str, str] | None = None,
    ) -> LinearModel:
        """``provenance``, when given, must equal what the file was saved with (a stale file is refused)."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                meta: dict[str, Any] = json.loads(str(data["meta"]))
                coef, intercept = data["coef"], data["intercept"]
        except (OSError, KeyError, ValueError) as exc:
            raise ValueError(f"{path}: not a saved {description} ({exc})") from None
        if meta.get("format") != kind:
            raise ValueError(f"{path}: format {meta.get('format')!r}, expected {kind}")
        if provenance is not None and meta.get("provenance") != dict(provenance):
            raise ValueError(
                f"{path}: fitted on {meta.get('provenance') or 'unrecorded data'}, not on {dict(provenance)}"
            )
        return cls(coef, intercept, tuple(meta["labels"]))
