"""Classification metrics for tasks whose answer is a label (triage urgency, yes/no, a category).

A model's answer is text; the label is read from it (:func:`extract_label`) by one of three rules: the first
non-empty line (default), the whole answer, or a regular expression (its first group, else the whole match).
Labels compare after :func:`normalise_label`: lower case, spaces collapsed, surrounding quotes, brackets and
final punctuation dropped ("**Urgent.**" is "urgent"). When the task names its label set, an extraction that is
not a label but holds exactly one label as a whole word is that label ("Urgency: urgent" is "urgent"); one that
holds none, or several, is *unreadable*: counted apart, and wrong for accuracy.

Per sample, ``exact_match`` is 1 when the normalised answer equals a normalised reference, and ``accuracy`` 1
when the extracted label equals the reference label. Over a set (:func:`summarise_labels`): accuracy, each
label's precision, recall, F1 and support, macro F1 (labels weighted equally, over the labels the gold labels or
the answers hold: one of the task's labels that neither holds is left out, not counted as 0) and micro F1 (counts
pooled over the labels; equal to accuracy when every answer was read, above it when unreadable answers lower
recall but not precision), and the confusion matrix with a column for unreadable answers (scikit-learn's definitions,
``zero_division=0``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

EXTRACT_RULES = ("first_line", "whole", "regex:PATTERN")
UNREADABLE = "(unreadable)"
"""The predicted-label column of the confusion matrix for answers no label could be read from."""

_SPACES = re.compile(r"\s+")
_EDGES = "\"'`*_()[]{}<>.,;:!? \t"


def normalise_label(text: str) -> str:
    """``text`` as a comparable label: lower case, spaces collapsed, quotes, brackets, markup and final
    punctuation stripped from both ends."""
    return _SPACES.sub(" ", text.strip().lower()).strip(_EDGES)


def check_extract_rule(rule: str) -> str:
    """``rule`` if it is one of :data:`EXTRACT_RULES` (a ``regex:`` whose pattern compiles); ValueError if not."""
    if rule in ("first_line", "whole"):
        return rule
    if rule.startswith("regex:"):
        try:
            re.compile(rule[len("regex:") :])
        except re.error as exc:
            raise ValueError(f"extract {rule!r}: the pattern does not compile ({exc})") from None
        return rule
    raise ValueError(f"extract {rule!r}: choose first_line, whole or regex:PATTERN")


def extract_label(answer: str, rule: str = "first_line", labels: Sequence[str] | None = None) -> str | None:
    """The normalised label read from ``answer`` by ``rule``, or None when none can be read (see the module
    docstring)."""
    if rule == "whole":
        found: str | None = answer
    elif rule == "first_line":
        found = next((line for line in answer.splitlines() if line.strip()), None)
    else:
        match = re.search(rule[len("regex:") :], answer, flags=re.IGNORECASE | re.MULTILINE)
        found = None if match is None else (match.group(1) if match.groups() else match.group())
    if found is None:
        return None
    label = normalise_label(found)
    if not labels:
        return label or None
    known = [normalise_label(x) for x in labels]
    if label in known:
        return label
    inside = [x for x in known if re.search(rf"(?<!\w){re.escape(x)}(?!\w)", label)]
    return inside[0] if len(inside) == 1 else None


def exact_match(answer: str, references: Sequence[str]) -> float | None:
    """1.0 when the normalised answer equals a normalised reference, 0.0 when not, None without references."""
    if not references:
        return None
    said = normalise_label(answer)
    return float(any(said == normalise_label(r) for r in references))


@dataclass(frozen=True)
class LabelScore:
    label: str
    precision: float
    recall: float
    f1: float
    support: int


@dataclass(frozen=True)
class LabelSummary:
    """Classification figures over a set of (gold, predicted) labels."""

    n: int
    accuracy: float
    macro_f1: float
    micro_f1: float
    unreadable: int
    per_label: tuple[LabelScore, ...]
    labels: tuple[str, ...]
    """Rows of :attr:`confusion` (gold) and its columns but the last (predicted)."""
    confusion: tuple[tuple[int, ...], ...]
    """``confusion[i][j]``: gold ``labels[i]`` predicted ``labels[j]``; the last column counts unreadable answers."""


def _macro(order: Sequence[str], f1: Sequence[float], seen: set[str]) -> float:
    """Macro F1 over the labels the gold labels or the answers hold: a label of the task's set that neither holds
    is no evidence, and counting it as F1 0 gave a model right on 4 of 4 emergency cases a macro F1 of 0.333."""
    present = [float(f) for label, f in zip(order, f1, strict=True) if label in seen]
    return sum(present) / len(present) if present else 0.0


def summarise_labels(pairs: Sequence[tuple[str, str | None]], labels: Sequence[str] | None = None) -> LabelSummary:
    """Accuracy, per-label and macro/micro F1 and the confusion matrix of (gold, predicted) pairs (predicted None:
    unreadable). ``labels`` fixes the label order and set; default: every gold and predicted label, sorted."""
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

    gold = [normalise_label(g) for g, _ in pairs]
    predicted = [UNREADABLE if p is None else normalise_label(p) for _, p in pairs]
    order = [normalise_label(x) for x in labels] if labels else sorted(set(gold) | set(predicted) - {UNREADABLE})
    order = [x for x in dict.fromkeys(order) if x != UNREADABLE]
    if not pairs:
        return LabelSummary(0, 0.0, 0.0, 0.0, 0, (), tuple(order), ())
    precision, recall, f1, support = precision_recall_fscore_support(gold, predicted, labels=order, zero_division=0)
    micro = precision_recall_fscore_support(gold, predicted, labels=order, average="micro", zero_division=0)[2]
    matrix = confusion_matrix(gold, predicted, labels=[*order, UNREADABLE])
    return LabelSummary(
        n=len(pairs),
        accuracy=sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(pairs),
        macro_f1=_macro(order, f1, set(gold) | set(predicted)),
        micro_f1=float(micro),
        unreadable=predicted.count(UNREADABLE),
        per_label=tuple(
            LabelScore(label, float(p), float(r), float(f), int(s))
            for label, p, r, f, s in zip(order, precision, recall, f1, support, strict=True)
        ),
        labels=tuple(order),
        confusion=tuple(tuple(int(v) for v in row) for row in matrix[: len(order)]),
    )


__all__ = [
    "EXTRACT_RULES",
    "UNREADABLE",
    "LabelScore",
    "LabelSummary",
    "check_extract_rule",
    "exact_match",
    "extract_label",
    "normalise_label",
    "summarise_labels",
]
