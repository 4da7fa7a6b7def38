"""The answering systems: 1-stage, 2-stage (LLM evidence selection, then a cited answer) and classifier + stage 2.

Guardrails, for every model answer: the reply must parse as JSON matching the stage's schema; every cited id
must be a sentence of the case (in stage 2, one of the selected sentences); each statement cites at least one
sentence; the whole answer stays within the word limit (75). A reply that breaks a rule is sent back with the
reason and a model asked to reformat it, at most ``max_repairs`` times (default 2). By default the system model
reformats its own reply (``Model.generate_structured``); with the system option ``fix_role`` (e.g. ``helper``)
the model of that role does, as the paper uses a separate fixing LLM: it gets the stage's prompt, the rejected
reply and the reason (template ``citeqa/fix.j2``). After the last re-ask, an answer whose only fault is the
word limit is kept, cut to its first 75 words counted as the official scorer counts them (split at spaces; a
system's statements have their whitespace normalised, so that is every whitespace): statements are kept in
order, the one that crosses the limit is cut, later ones are dropped with their citations, and the output
records it in ``extra["cut_to_word_limit"]`` (``words`` before the cut, ``limit``, the ``dropped`` statements;
scorer ``cut_to_word_limit``). Any other fault fails the sample with the last reason, recorded as that sample's
error.

Citations come from the answer's citation field and nowhere else. A model can be talked (by a patient's message
or a note carrying instructions) into writing citation syntax into a statement's text, ``... |1,2,3|``; once the
answer is in the submission format those pipes would cite every id they name. So pipes are taken out of every
statement's text before it is kept, and each statement that held some is recorded in
:attr:`Answer.citation_syntax` (the run stores it in the output's ``extra["citation_syntax_in_text"]``; the
``citation_syntax_in_text`` scorer counts it). Ids outside the case cannot be cited through the field: the
schema's enum and the check after parsing reject them, and an answer that keeps citing them after its repairs
is the sample's error, with that reason, never a scored answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, create_model

from bedside.llm.errors import StructuredOutputError
from bedside.llm.structured import parse_structured
from bedside.llm.types import ROLES, ChatMessage, Role
from bedside.prompts import render, render_chat
from bedside.runs.task import SampleContext
from bedside.tasks.citeqa.cases import Case
from bedside.tasks.citeqa.submission import (
    WORD_LIMIT,
    AnswerSentence,
    format_answer,
    neutralise_citation_syntax,
    official_words,
)

STAGE1_TEMPLATE = "citeqa/stage1.j2"
STAGE2_TEMPLATE = "citeqa/stage2.j2"
ONE_STAGE_TEMPLATE = "citeqa/one_stage.j2"
STAGE1_EXAMPLES = "citeqa/examples_stage1.j2"
ANSWER_EXAMPLES = "citeqa/examples_answer.j2"
FIX_TEMPLATE = "citeqa/fix.j2"

T = TypeVar("T", bound=BaseModel)


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
    """A system's answer: the cited statements, the evidence it selected, and how it got there.

    ``citation_syntax`` lists the statements whose text held citation syntax, which was taken out:
    ``{"statement": number (from 1), "removed": [pieces]}``. ``cut`` says how an answer still over the word
    limit after its re-asks was cut (see :func:`cut_to_word_limit`); None when it was not.
    """

    sentences: list[AnswerSentence]
    selected: list[str]
    trace: list[dict[str, Any]] = field(default_factory=list)
    citation_syntax: list[dict[str, Any]] = field(default_factory=list)
    cut: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        return format_answer(self.sentences)


def numbered(case: Case, ids: Sequence[str] | None = None) -> str:
    wanted = set(ids) if ids is not None else None
    return "\n".join(f"ID: {s.id} ; text: {s.text}" for s in case.sentences if wanted is None or s.id in wanted)


def _require_sentences(case: Case) -> None:
    if not case.sentences:
        raise ValueError(f"case {case.id} has no note sentences to answer from")


def check_statements(value: CitedAnswer | OneStageAnswer) -> None:
    """The rule the schema cannot state besides the word limit: no blank statement."""
    problems = [f"statement {i} is empty" for i, s in enumerate(value.statements, start=1) if not s.statement.strip()]
    if problems:
        raise ValueError("; ".join(problems))


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


def cut_to_word_limit(
    sentences: Sequence[AnswerSentence], word_limit: int
) -> tuple[list[AnswerSentence], dict[str, Any] | None]:
    """The sentences within ``word_limit`` words, counted as the official scorer counts them, and what was cut.

    The official scorer keeps the first 75 words of an answer's text. Cutting here, statement by statement,
    keeps the answer in the submission (an answer dropped for its length leaves the submission incomplete,
    which the official scorer refuses) and keeps each kept word with the citations of its statement; a
    statement wholly past the limit goes with its citations, which are recorded, since citing sentences for
    text nobody will read would claim support the answer no longer shows.
    """
    total = sum(len(official_words(s.text)) for s in sentences)
    if total <= word_limit:
        return list(sentences), None
    kept: list[AnswerSentence] = []
    dropped: list[AnswerSentence] = []
    left = word_limit
    for sentence in sentences:
        words = official_words(sentence.text)
        if left <= 0:
            dropped.append(sentence)
        elif len(words) <= left:
            kept.append(sentence)
            left -= len(words)
        else:
            kept.append(AnswerSentence(" ".join(words[:left]), sentence.citations))
            left = 0
    info = {
        "words": total,
        "limit": word_limit,
        "dropped": [{"statement": s.text, "citations": list(s.citations)} for s in dropped],
    }
    return kept, info


def fix_role_of(options: dict[str, Any]) -> Role:
    """The role whose model reformats a rejected reply: ``fix_role``, by default the system model itself."""
    role = options.get("fix_role") or "system"
    for known in ROLES:
        if role == known:
            return known
    raise ValueError(f"fix_role must be one of {', '.join(ROLES)}, not {role!r}")


async def ask(
    context: SampleContext,
    chat: Sequence[ChatMessage],
    output_type: type[T],
    options: dict[str, Any],
    *,
    check: Callable[[T], None] | None = None,
    last_resort: Callable[[T], None] | None = None,
) -> tuple[T, dict[str, Any]]:
    """A structured answer from the system model, reformatted by the ``fix_role`` model when it breaks a rule.

    Returns the answer and what to trace: ``attempts``, and ``fixed_by`` (the role) when the fixing model's
    reply was kept. ``last_resort``, when given, is a laxer check for the last rejected reply: a reply that
    passes it is returned instead of failing the sample (the caller deals with the rule it still breaks).
    """
    max_repairs = int(options.get("max_repairs", 2))
    fix_role = fix_role_of(options)
    own_repairs = max_repairs if fix_role == "system" else 0
    try:
        result = await context.generate_structured("system", chat, output_type, check=check, max_repairs=own_repairs)
        return result.value, {"attempts": result.attempts}
    except StructuredOutputError as exc:
        failure, by = exc, "system"
    if fix_role != "system" and max_repairs > 0:
        fix = render(options.get("fix_template", FIX_TEMPLATE), reply=failure.last_text, error=failure.last_error)
        last = chat[-1]
        fix_chat = [*chat[:-1], ChatMessage(role=last.role, content=f"{last.content}\n\n{fix}")]
        try:
            fixed = await context.generate_structured(
                fix_role, fix_chat, output_type, check=check, max_repairs=max_repairs - 1
            )
            return fixed.value, {"attempts": 1 + fixed.attempts, "fixed_by": fix_role}
        except StructuredOutputError as exc:
            failure, by = (
                StructuredOutputError(
                    f"{exc} (the system model's reply before it: {failure.last_error})",
                    attempts=1 + exc.attempts,
                    last_text=exc.last_text,
                    last_error=exc.last_error,
                    rejected=failure.rejected + exc.rejected,
                ),
                fix_role,
            )
    if last_resort is not None:
        value, _ = parse_structured(failure.last_text, output_type, last_resort)
        if value is not None:
            info: dict[str, Any] = {"attempts": failure.attempts}
            if by != "system":
                info["fixed_by"] = by
            return value, info
    raise failure


def _sentences(statements: Sequence[Statement]) -> tuple[list[AnswerSentence], list[dict[str, Any]]]:
    """The statements as answer sentences, citations from their field only, and where text held citation syntax."""
    sentences, flags = [], []
    for number, s in enumerate(statements, start=1):
        text, removed = neutralise_citation_syntax(" ".join(s.statement.split()))
        if removed:
            flags.append({"statement": number, "removed": list(removed)})
        sentences.append(AnswerSentence(text, tuple(dict.fromkeys(c.strip() for c in s.citations))))
    return sentences, flags


def _options(options: dict[str, Any] | Any) -> dict[str, Any]:
    return dict(options or {})


async def select_evidence(
    case: Case, context: SampleContext, options: dict[str, Any]
) -> tuple[list[str], dict[str, Any]]:
    """Stage 1: the ids of the sentences the model finds relevant (recall first), in note order, and its trace."""
    examples = render(options.get("stage1_examples", STAGE1_EXAMPLES))
    chat = render_chat(
        options.get("stage1_template", STAGE1_TEMPLATE), case=case, numbered=numbered(case), examples=examples
    )
    evidence, _, _ = schemas_for(tuple(case.sentence_ids))
    value, info = await ask(context, chat, evidence, options)
    chosen = set(value.relevant)
    return [i for i in case.sentence_ids if i in chosen], info


@dataclass
class Written:
    """A written answer: its sentences, the statements whose text held citation syntax, the cut (if any), and
    what to trace."""

    sentences: list[AnswerSentence]
    flags: list[dict[str, Any]]
    cut: dict[str, Any] | None
    trace: dict[str, Any]


def _written(statements: Sequence[Statement], info: dict[str, Any], word_limit: int) -> Written:
    sentences, flags = _sentences(statements)
    sentences, cut = cut_to_word_limit(sentences, word_limit)
    return Written(sentences, flags, cut, info)


async def answer_from(case: Case, selected: Sequence[str], context: SampleContext, options: dict[str, Any]) -> Written:
    """Stage 2: cited statements written from the selected sentences only, told to cite every one of them."""
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
    value, info = await ask(context, chat, answer, options, check=check_words(word_limit), last_resort=check_statements)
    written = _written(value.statements, info, word_limit)
    cited = {c for s in written.sentences for c in s.citations}
    uncited = [i for i in selected if i not in cited]
    if uncited:
        written.trace["uncited"] = uncited
    return written


async def two_stage(case: Case, context: SampleContext, options: dict[str, Any] | None = None) -> Answer:
    options = _options(options)
    _require_sentences(case)
    selected, evidence = await select_evidence(case, context, options)
    written = await answer_from(case, selected, context, options)
    trace = [{"stage": "evidence", "selected": selected, **evidence}, {"stage": "answer", **written.trace}]
    return Answer(written.sentences, selected, trace, written.flags, written.cut)


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
    value, info = await ask(context, chat, one, options, check=check_words(word_limit), last_resort=check_statements)
    chosen = set(value.relevant)
    selected = [i for i in case.sentence_ids if i in chosen]
    written = _written(value.statements, info, word_limit)
    trace = [{"stage": "one_stage", "selected": selected, **written.trace}]
    return Answer(written.sentences, selected, trace, written.flags, written.cut)


async def classifier_then_answer(
    case: Case, context: SampleContext, classifier: Any, options: dict[str, Any] | None = None
) -> Answer:
    """The trained classifier picks the evidence (no model call); stage 2 writes the answer from it."""
    options = _options(options)
    _require_sentences(case)
    selected = classifier.select(case)
    written = await answer_from(case, selected, context, options)
    trace = [{"stage": "evidence", "selected": selected, "by": "classifier"}, {"stage": "answer", **written.trace}]
    return Answer(written.sentences, selected, trace, written.flags, written.cut)
