"""Multiple-choice exam accuracy: how many questions a (simulated) patient answers correctly.

Answers come back as free text from a model, so the chosen option is read out of it first
(:func:`parse_choice`). An answer that names no option, or names two, is listed as unparsed, and a question with
no answer at all as unanswered. Neither is a choice, so neither is scored: accuracy is the share correct of the
questions whose answer named one option (``scored``), and the unparsed and unanswered are counted beside it.
Scoring them as wrong would report an exam-taker that failed to answer in the format as one that misunderstood
(in a simulation the exam measures what the *other* agent taught, so that error would land on the teacher). An
exam none of whose answers could be read has no accuracy (None), never 0.0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ExamQuestion:
    id: str
    question: str
    options: Mapping[str, str]  # letter -> option text, e.g. {"A": "Twice a day", ...}
    answer: str  # the correct letter

    def __post_init__(self) -> None:
        if self.answer not in self.options:
            raise ValueError(f"question {self.id}: answer {self.answer!r} is not one of {sorted(self.options)}")


@dataclass(frozen=True)
class ExamResult:
    correct: int
    total: int
    unparsed: list[str] = field(default_factory=list)  # question ids whose answer named no single option
    unanswered: list[str] = field(default_factory=list)
    chosen: dict[str, str | None] = field(default_factory=dict)

    @property
    def scored(self) -> int:
        """Questions whose answer named exactly one option: the denominator of :attr:`accuracy`."""
        return self.total - len(self.unparsed) - len(self.unanswered)

    @property
    def accuracy(self) -> float | None:
        """Correct over scored; None when no answer could be read (absent, never 0.0)."""
        return self.correct / self.scored if self.scored else None


_LETTER_PATTERNS = (
    re.compile(r"^\s*\(?([A-Za-z])\)?\s*$"),  # "B", "(b)"
    re.compile(r"(?i)\b(?:answer|option|choice)\s*(?:is|:)?\s*\(?([A-Za-z])\b\)?"),  # "Answer: B", "option (c)"
    re.compile(r"^\s*\(?([A-Za-z])[).:]\s"),  # "B) twice a day", "c. ..."
)


def parse_choice(text: str, options: Mapping[str, str]) -> str | None:
    """The option letter an answer picks, or None when it names none or several.

    Tried in order: a bare letter; "answer/option/choice: X"; a leading "X)" or "X."; otherwise the answer
    must contain exactly one option's full text (case-insensitive).
    """
    letters = {letter.upper(): letter for letter in options}
    for pattern in _LETTER_PATTERNS:
        found = pattern.search(text)
        if found and found.group(1).upper() in letters:
            return letters[found.group(1).upper()]
    lowered = text.lower()
    named = [letter for letter, option in options.items() if option.strip() and option.lower() in lowered]
    return named[0] if len(named) == 1 else None


def exam_accuracy(questions: Sequence[ExamQuestion], answers: Mapping[str, str]) -> ExamResult:
    """Score free-text ``answers`` (question id -> text) against the key."""
    if not questions:
        raise ValueError("the exam has no questions")
    correct = 0
    unparsed, unanswered = [], []
    chosen: dict[str, str | None] = {}
    for question in questions:
        if question.id not in answers:
            unanswered.append(question.id)
            chosen[question.id] = None
            continue
        choice = parse_choice(answers[question.id], question.options)
        chosen[question.id] = choice
        if choice is None:
            unparsed.append(question.id)
        elif choice == question.answer:
            correct += 1
    return ExamResult(correct, len(questions), unparsed, unanswered, chosen)
