"""The comprehension exam: the simulated patient answers the case's questions from what it was taught.

Settings (§2.3): ``dialogue`` (A: the conversation only, Table 1's Exam ACC) and ``summary`` (B: the generated
summary only, Table 2's), plus ``none``, a no-context baseline the paper does not report (chance is 1/3, but the
irrelevant option is meant to be absurd, so a model can beat chance knowing nothing about the case).

Leakage guard: the exam-taker is the patient model with its profile (a less literate patient should read like
one) but with **no case knowledge**: not its masked view, not the diagnosis label the simulated patient was
given. The material of the setting is all it sees.

Options are shuffled per question with a generator seeded from (run seed, sample, epoch, question id), so the
answer is not always the first option and a re-run asks the same thing. The answer is a structured letter at
temperature 0; an answer that still does not name one option after the re-asks is listed as unparsed and left
out of the accuracy, which is the share correct of the answers that could be read (:mod:`bedside.metrics.exam`;
the paper does not say how it parses or what it does with an unreadable answer). The exam-taker is the patient
model, the same for every doctor compared, so its format failures must not be scored as the doctor's teaching.
An exam with no readable answer has no accuracy (None): the task records it as the step's failure, and the
report shows it absent with the unparsed count.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bedside.llm.errors import StructuredOutputError
from bedside.llm.types import GenerationSettings
from bedside.metrics.exam import ExamQuestion, exam_accuracy
from bedside.prompts import render_chat
from bedside.runs.task import SampleContext
from bedside.tasks.discharge.cases import CATEGORIES, Question

Setting = Literal["dialogue", "summary", "none"]
SETTINGS: tuple[Setting, ...] = ("dialogue", "summary", "none")
LETTERS = ("A", "B", "C")


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    answer: Literal["A", "B", "C"]


def shuffled(question: Question, *, seed: int, sample_id: str, epoch: str) -> ExamQuestion:
    key = f"{seed}|{sample_id}|{epoch}|{question.id}"
    rng = random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))
    options = [question.answer, question.distractor, question.irrelevant]
    rng.shuffle(options)
    letters = dict(zip(LETTERS, options, strict=True))
    answer = next(letter for letter, text in letters.items() if text == question.answer)
    return ExamQuestion(id=question.id, question=question.question, options=letters, answer=answer)


@dataclass(frozen=True)
class ExamOutcome:
    setting: Setting
    accuracy: float | None  # correct / scored; None when no answer could be read
    correct: int
    total: int
    by_category: dict[str, list[int]]  # category -> [correct, total, unparsed]; scored = total - unparsed
    chosen: dict[str, str | None]
    key: dict[str, str]
    unparsed: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "setting": self.setting,
            "accuracy": self.accuracy,
            "correct": self.correct,
            "total": self.total,
            "by_category": self.by_category,
            "chosen": self.chosen,
            "key": self.key,
            "unparsed": self.unparsed,
        }


async def take_exam(
    questions: Sequence[Question],
    setting: Setting,
    material: str,
    profile_text: str,
    context: SampleContext,
    *,
    sample_id: str,
    max_repairs: int = 1,
    template: str = "discharge/exam.j2",
) -> ExamOutcome:
    exam = [shuffled(q, seed=context.seed, sample_id=sample_id, epoch=context.epoch) for q in questions]
    base = context.settings.get("patient") or GenerationSettings()
    settings = base.model_copy(update={"temperature": 0.0})
    answers: dict[str, str] = {}
    for item in exam:
        messages = render_chat(template, setting=setting, material=material, profile_text=profile_text, question=item)
        try:
            result = await context.generate_structured(
                "patient", messages, _Answer, settings=settings, max_repairs=max_repairs
            )
            answers[item.id] = result.value.answer
        except StructuredOutputError as exc:
            answers[item.id] = exc.last_text  # read by the free-text parser; usually unparsed, and listed
    scored = exam_accuracy(exam, answers)
    key = {q.id: q.answer for q in exam}
    by_category: dict[str, list[int]] = {}
    for question in questions:
        entry = by_category.setdefault(question.category, [0, 0, 0])
        entry[1] += 1
        entry[0] += scored.chosen.get(question.id) == key[question.id]
        entry[2] += scored.chosen.get(question.id) is None
    order: dict[str, int] = {c: i for i, c in enumerate(CATEGORIES)}
    return ExamOutcome(
        setting=setting,
        accuracy=scored.accuracy,
        correct=scored.correct,
        total=scored.total,
        by_category=dict(sorted(by_category.items(), key=lambda kv: order[kv[0]])),
        chosen=scored.chosen,
        key=key,
        unparsed=scored.unparsed,
    )
