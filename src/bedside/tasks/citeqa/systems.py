"""The answering systems: 1-stage, 2-stage (LLM evidence selection, then a cited answer) and classifier + stage 2.

Guardrails, for every model answer: the reply must parse as JSON matching the stage's schema; every cited id
must be a sentence of the case (in stage 2, one of the selected sentences); each statement cites at least one
sentence; the whole answer stays within the word limit (75). A reply that breaks a rule is sent back with the
reason and the model asked to reformat, at most ``max_repairs`` times (default 2); then the sample fails with
the last reason, recorded as that sample's error (see ``Model.generate_structured``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from bedside.prompts import render, render_chat
from bedside.runs.task import SampleContext
from bedside.tasks.citeqa.cases import Case
from bedside.tasks.citeqa.scoring import WORD_LIMIT
from bedside.tasks.citeqa.submission import AnswerSentence, format_answer

STAGE1_TEMPLATE = "citeqa/stage1.j2"
STAGE2_TEMPLATE = "citeqa/stage2.j2"
ONE_STAGE_TEMPLATE = "citeqa/one_stage.j2"
STAGE1_EXAMPLES = "citeqa/examples_stage1.j2"
ANSWER_EXAMPLES = "citeqa/examples_answer.j2"


class EvidenceSelection(BaseModel):
    relevant: list[str] = Field(description="ids of the note sentences that help answer the question")


class Statement(BaseModel):
    statement: str
    citations: list[str] = Field(description="ids of the note sentences supporting this statement")


class CitedAnswer(BaseModel):
    statements: list[Statement] = Field(min_length=1)


class OneStageAnswer(BaseModel):
    relevant: list[str]
    statements: list[Statement] = Field(min_length=1)


STATEMENT_MAX_CHARS = 400


@lru_cache(maxsize=256)
def schemas_for(ids: tuple[str, ...]) -> tuple[type[EvidenceSelection], type[CitedAnswer], type[OneStageAnswer]]:
    """The three answer schemas with ids restricted to ``ids`` (a JSON-schema enum).

    Endpoints with a JSON-schema mode (vLLM, llama.cpp, the embedded model) then cannot produce an id the case
    does not have; every answer is also validated against the same model after parsing, so an endpoint that
    ignores the schema still cannot get an unknown id, an empty list or an uncited statement through.
    """
    sentence_id = Literal[ids]  # type: ignore[valid-type]
    evidence = create_model(
        "EvidenceSelection",
        __base__=EvidenceSelection,
        relevant=(list[sentence_id], Field(min_length=1, max_length=len(ids))),
    )
    statement = create_model(
        "Statement",
        __base__=Statement,
        statement=(str, Field(min_length=1, max_length=STATEMENT_MAX_CHARS)),
        citations=(list[sentence_id], Field(min_length=1, max_length=len(ids))),
    )
    answer = create_model(
        "CitedAnswer",
        __base__=CitedAnswer,
        statements=(list[statement], Field(min_length=1, max_length=8)),  # type: ignore[valid-type]
    )
    one = create_model(
        "OneStageAnswer",
        __base__=OneStageAnswer,
        relevant=(list[sentence_id], Field(min_length=1, max_length=len(ids))),
        statements=(list[statement], Field(min_length=1, max_length=8)),  # type: ignore[valid-type]
    )
    return evidence, answer, one


@dataclass
class Answer:
    """A system's answer: the cited statements, the evidence it selected, and how it got there."""

    sentences: list[AnswerSentence]
    selected: list[str]
    trace: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return format_answer(self.sentences)


def numbered(case: Case, ids: Sequence[str] | None = None) -> str:
    wanted = set(ids) if ids is not None else None
    return "\n".join(f"ID: {s.id} ; text: {s.text}" for s in case.sentences if wanted is None or s.id in wanted)


def _require_sentences(case: Case) -> None:
    if not case.sentences:
        raise ValueError(f"case {case.id} has no note sentences to answer from")


def check_words(word_limit: int) -> Callable[[CitedAnswer | OneStageAnswer], None]:
    """The rules the schema cannot state: no blank statement, and the whole answer within the word limit."""

    def check(value: CitedAnswer | OneStageAnswer) -> None:
        problems = [
            f"statement {i} is empty" for i, s in enumerate(value.statements, start=1) if not s.statement.strip()
        ]
        words = sum(len(s.statement.split()) for s in value.statements)
        if words > word_limit:
            problems.append(f"the answer has {words} words; shorten it to at most {word_limit}")
        if problems:
            raise ValueError("; ".join(problems))

    return check


def _sentences(statements: Sequence[Statement]) -> list[AnswerSentence]:
    return [
        AnswerSentence(" ".join(s.statement.split()), tuple(dict.fromkeys(c.strip() for c in s.citations)))
        for s in statements
    ]


def _options(options: dict[str, Any] | Any) -> dict[str, Any]:
    return dict(options or {})


async def select_evidence(case: Case, context: SampleContext, options: dict[str, Any]) -> tuple[list[str], int]:
    """Stage 1: the ids of the sentences the model finds relevant (recall first), in note order."""
    examples = render(options.get("stage1_examples", STAGE1_EXAMPLES))
    chat = render_chat(
        options.get("stage1_template", STAGE1_TEMPLATE), case=case, numbered=numbered(case), examples=examples
    )
    evidence, _, _ = schemas_for(tuple(case.sentence_ids))
    result = await context.generate_structured("system", chat, evidence, max_repairs=int(options.get("max_repairs", 2)))
    chosen = set(result.value.relevant)
    return [i for i in case.sentence_ids if i in chosen], result.attempts


async def answer_from(
    case: Case, selected: Sequence[str], context: SampleContext, options: dict[str, Any]
) -> tuple[list[AnswerSentence], int]:
    """Stage 2: cited statements written from the selected sentences only."""
    word_limit = int(options.get("word_limit", WORD_LIMIT))
    examples = render(options.get("answer_examples", ANSWER_EXAMPLES))
    chat = render_chat(
        options.get("stage2_template", STAGE2_TEMPLATE),
        case=case,
        numbered=numbered(case, selected),
        examples=examples,
        word_limit=word_limit,
    )
    _, answer, _ = schemas_for(tuple(selected))
    result = await context.generate_structured(
        "system",
        chat,
        answer,
        check=check_words(word_limit),
        max_repairs=int(options.get("max_repairs", 2)),
    )
    return _sentences(result.value.statements), result.attempts


async def two_stage(case: Case, context: SampleContext, options: dict[str, Any] | None = None) -> Answer:
    options = _options(options)
    _require_sentences(case)
    selected, attempts1 = await select_evidence(case, context, options)
    sentences, attempts2 = await answer_from(case, selected, context, options)
    trace = [
        {"stage": "evidence", "selected": selected, "attempts": attempts1},
        {"stage": "answer", "attempts": attempts2},
    ]
    return Answer(sentences, selected, trace)


async def one_stage(case: Case, context: SampleContext, options: dict[str, Any] | None = None) -> Answer:
    options = _options(options)
    _require_sentences(case)
    word_limit = int(options.get("word_limit", WORD_LIMIT))
    chat = render_chat(
        options.get("template", ONE_STAGE_TEMPLATE),
        case=case,
        numbered=numbered(case),
        examples=render(options.get("answer_examples", ANSWER_EXAMPLES)),
        word_limit=word_limit,
    )
    _, _, one = schemas_for(tuple(case.sentence_ids))
    result = await context.generate_structured(
        "system",
        chat,
        one,
        check=check_words(word_limit),
        max_repairs=int(options.get("max_repairs", 2)),
    )
    chosen = set(result.value.relevant)
    selected = [i for i in case.sentence_ids if i in chosen]
    trace = [{"stage": "one_stage", "selected": selected, "attempts": result.attempts}]
    return Answer(_sentences(result.value.statements), selected, trace)


async def classifier_then_answer(
    case: Case, context: SampleContext, classifier: Any, options: dict[str, Any] | None = None
) -> Answer:
    """The trained classifier picks the evidence (no model call); stage 2 writes the answer from it."""
    options = _options(options)
    _require_sentences(case)
    selected = classifier.select(case)
    sentences, attempts = await answer_from(case, selected, context, options)
    trace = [
        {"stage": "evidence", "selected": selected, "by": "classifier"},
        {"stage": "answer", "attempts": attempts},
    ]
    return Answer(sentences, selected, trace)
