"""An LLM judge that scores inputs against a rubric, and fails loudly rather than guessing.

The judge renders the rubric's template with the inputs, asks for one JSON object with a
``{score, justification, evidence}`` entry per criterion (the schema is built from the rubric, so every
criterion is a required key and scores carry the scale's bounds), and validates the answer: every criterion
present, each score on the scale (whole numbers on integer and binary scales), evidence present where the rubric
requires it. An answer that fails is sent back with the reason and re-asked, at most ``max_repairs`` times
(the model layer's structured-output loop). A judge that still fails raises :class:`JudgeError` carrying the
cause and the last answer; it never yields a default score.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from bedside.judges.rubric import Rubric, load_rubric
from bedside.llm.errors import ModelError, StructuredOutputError
from bedside.llm.model import Model
from bedside.llm.types import GenerationSettings
from bedside.prompts import render_chat

# Caps on the answer's free text. They keep a judgement short enough to read, and, where the endpoint enforces the
# schema by grammar (llama.cpp), they stop a rambling small model from running out of tokens mid-string.
MAX_JUSTIFICATION_CHARS = 1200
MAX_QUOTE_CHARS = 400
MAX_EVIDENCE_ITEMS = 12


class Evidence(BaseModel):
    """A verbatim quote from the inputs and whether it supports the score (True) or shows a shortfall."""

    quote: str = Field(min_length=1, max_length=MAX_QUOTE_CHARS)
    supports: bool
    issue: str | None = Field(default=None, max_length=MAX_QUOTE_CHARS)


@dataclass(frozen=True)
class CriterionScore:
    score: float
    justification: str
    evidence: list[Evidence] = field(default_factory=list)


@dataclass(frozen=True)
class Judgement:
    rubric: str
    judge: str
    epoch: str
    scores: dict[str, CriterionScore]
    aggregate: float
    attempts: int
    cached: bool

    def score(self, criterion: str) -> float:
        return self.scores[criterion].score


class JudgeError(RuntimeError):
    """A judge gave no valid judgement; ``cause`` says why (recorded with the sample, never scored)."""

    def __init__(self, rubric: str, judge: str, cause: str, *, attempts: int = 0, last_text: str = "") -> None:
        super().__init__(f"{judge} could not judge {rubric}: {cause}")
        self.rubric = rubric
        self.judge = judge
        self.cause = cause
        self.attempts = attempts
        self.last_text = last_text


def answer_model(rubric: Rubric) -> type[BaseModel]:
    """The pydantic model of a valid answer for ``rubric``: one required entry per criterion."""
    score_field: Any = Field(ge=rubric.scale.min, le=rubric.scale.max)
    evidence_field: Any = (
        Field(min_length=1, max_length=MAX_EVIDENCE_ITEMS)
        if rubric.evidence
        else Field(default_factory=list, max_length=MAX_EVIDENCE_ITEMS)
    )
    entry = create_model(
        "CriterionAnswer",
        __config__=ConfigDict(extra="ignore"),
        score=(float, score_field),
        justification=(str, Field(min_length=1, max_length=MAX_JUSTIFICATION_CHARS)),
        evidence=(list[Evidence], evidence_field),
    )
    fields: dict[str, Any] = {name: (entry, ...) for name in rubric.criterion_names}
    return create_model(f"Judgement_{rubric.id}", __config__=ConfigDict(extra="ignore"), **fields)


class RubricJudge:
    """One model judging with one rubric. ``name`` labels its scores (defaults to the model's name)."""

    def __init__(
        self,
        rubric: Rubric | str | Path,
        model: Model,
        *,
        name: str | None = None,
        settings: GenerationSettings | None = None,
        max_repairs: int = 2,
        template: str | Path | None = None,
    ) -> None:
        self.rubric = rubric if isinstance(rubric, Rubric) else load_rubric(rubric)
        self.model = model
        self.name = name or model.name
        self.settings = settings
        self.max_repairs = max_repairs
        self.template = template or self.rubric.template
        self._answer = answer_model(self.rubric)

    def messages(self, inputs: Mapping[str, str]) -> list[Any]:
        """The chat sent to the judge (before the JSON instructions the model layer appends)."""
        missing = [name for name in self.rubric.inputs if not str(inputs.get(name, "")).strip()]
        if missing:
            raise ValueError(f"rubric {self.rubric.id} needs the input(s) {', '.join(missing)}")
        unknown = sorted(set(inputs) - set(self.rubric.inputs) - set(self.rubric.optional_inputs))
        if unknown:
            raise ValueError(f"rubric {self.rubric.id} takes no input(s) named {', '.join(unknown)}")
        sections = [
            (label, inputs[name])
            for name, label in (*self.rubric.inputs.items(), *self.rubric.optional_inputs.items())
            if str(inputs.get(name, "")).strip()
        ]
        return render_chat(self.template, rubric=self.rubric, sections=sections)

    def _check(self, answer: BaseModel) -> None:
        problems = []
        for name in self.rubric.criterion_names:
            problem = self.rubric.scale.problem(getattr(answer, name).score)
            if problem:
                problems.append(f"{name}: {problem}")
        if problems:
            raise ValueError("scores off the scale: " + "; ".join(problems) + ".")

    async def judge(self, inputs: Mapping[str, str], *, epoch: int | str = 0) -> Judgement:
        """Score ``inputs``; raises :class:`JudgeError` when no valid answer comes back."""
        messages = self.messages(inputs)
        try:
            result = await self.model.generate_structured(
                messages,
                self._answer,
                self.settings,
                epoch=epoch,
                max_repairs=self.max_repairs,
                check=self._check,
            )
        except StructuredOutputError as exc:
            raise JudgeError(
                self.rubric.id, self.name, exc.last_error, attempts=exc.attempts, last_text=exc.last_text
            ) from exc
        except ModelError as exc:
            raise JudgeError(self.rubric.id, self.name, f"{type(exc).__name__}: {exc}") from exc
        scores = {}
        for name in self.rubric.criterion_names:
            entry = getattr(result.value, name)
            scores[name] = CriterionScore(float(entry.score), entry.justification, list(entry.evidence))
        return Judgement(
            rubric=self.rubric.id,
            judge=self.name,
            epoch=str(epoch),
            scores=scores,
            aggregate=self.rubric.combine([s.score for s in scores.values()]),
            attempts=result.attempts,
            cached=result.completion.cached,
        )
