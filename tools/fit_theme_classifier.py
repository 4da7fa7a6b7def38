"""Fit bedside's theme classifier on its labelled sentences and write the shipped file.

``bedside.tasks.drafting`` ships the fitted classifier (``data/theme_classifier.npz``, a few kB of coefficients) so
that no run imports scikit-learn or embeds the training sentences at start-up. The file records what it was fitted
on (the sentences' digest, the regularisation, the embedder's release); a run finding it stale fits afresh with a
warning, and ``tests/test_drafting_themes.py`` fails until this script is run again.

Run from the repository root: ``python tools/fit_theme_classifier.py``.
"""

from __future__ import annotations

from bedside.tasks.drafting.themes import (
    DEFAULT_C,
    ThemeClassifier,
    read_labelled_sentences,
    shipped_classifier_path,
    training_provenance,
)


def main() -> None:
    sentences = read_labelled_sentences()
    classifier = ThemeClassifier.fit(sentences, c=DEFAULT_C)
    path = classifier.save(shipped_classifier_path(), provenance=training_provenance(DEFAULT_C))
    print(f"{path}: fitted on {len(sentences)} sentences, labels {', '.join(classifier.model.labels)}")


if __name__ == "__main__":
    main()
