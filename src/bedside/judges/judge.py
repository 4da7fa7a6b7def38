"""An LLM judge that scores inputs against a rubric, and fails loudly rather than guessing.

The judge renders the rubric's template with the inputs, asks for one JSON object with a
``{score, justification, evidence}`` entry per criterion (the schema is built from the rubric, so every
criterion is a required key, scores carry the scale's bounds and evidence items have the rubric's
``evidence_kind`` shape), and validates the answer: every criterion present, each score on the scale (whole
numbers on integer and binary scales), evidence present where the rubric requires it and internally consistent
(an "N/A" snippet must be a recorded omission), justifications at least ``justification_min_words`` long.
An answer that fails is sent back with the reason and re-asked, at most ``max_repairs`` times
(the model layer's structured-output loop). A judge that still fails raises :class:`JudgeError` carrying the
cause and the last answer; it never yields a default score.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model, model_validator

from bedside.judges.rubric import EvidenceKind, Rubric, load_rubric
from bedside.llm.errors import ModelError, StructuredOutputError
from bedside.llm.model import Model
from bedside.llm.types import Completion, GenerationSettings
from bedside.prompts import render_chat

# Caps on the answer's free text. They keep a judgement short enough to read, and, where the endpoint enforces the
# schema by grammar (llama.cpp), they stop a rambling small model from running out of tokens mid-string.
MAX_JUSTIFICATION_CHARS = 1200
MAX_QUOTE_CHARS = 400
MAX_EVIDENCE_ITEMS = 12


NOT_AVAILABLE = "N/A"  # the span of an evidence item that has nothing to quote (an omission)
EvidenceIssue = Literal["omitted", "vague", "hallucinated"]


def _normalise_span(text: str) -> str:
    """Spellings such as "n/a" or " N/A " become ``N/A``, so callers test one spelling."""
    return NOT_AVAILABLE if text.strip().upper() == NOT_AVAILABLE else text


# A quoted span of the material, or "N/A" where there is nothing to quote.
Span = Annotated[str, Field(min_length=1, max_length=MAX_QUOTE_CHARS), AfterValidator(_normalise_span)]


# The evidence kinds (``Rubric.evidence_kind``). Their docstrings reach the judge as the schema's descriptions.
class Evidence(BaseModel):
    """A verbatim quote from the inputs and whether it supports the score (True) or shows a shortfall."""

    quote: str = Field(min_length=1, max_length=MAX_QUOTE_CHARS)
    supports: bool
    issue: str | None = Field(default=None, max_length=MAX_QUOTE_CHARS)


class SnippetEvidence(BaseModel):
    """A passage of the material and whether it addresses the criterion. Something absent has no passage to quote:
    it is recorded as snippet "N/A", addresses false, issue "omitted", never as a stretched quote."""

    snippet: Span
    addresses: bool
    issue: EvidenceIssue | None = None

    @model_validator(mode="after")
    def _omission_is_explicit(self) -> SnippetEvidence:
        if self.snippet == NOT_AVAILABLE and (self.addresses or self.issue != "omitted"):
            raise ValueError(f'a "{NOT_AVAILABLE}" snippet records an omission: "addresses": false, "issue": "omitted"')
        return self


class PairEvidence(BaseModel):
    """A span of the judged summary set against the reference span it corresponds to, so coverage and factuality
    can be audited span by span. "N/A" on one side marks a unit the other side lacks."""

    summary_span: Span
    reference_span: Span
    match: bool
    issue: EvidenceIssue | None = None

    @model_validator(mode="after")
    def _consistent(self) -> PairEvidence:
        if self.summary_span == NOT_AVAILABLE and self.reference_span == NOT_AVAILABLE:
            raise ValueError(f'a pair needs text on at least one side; both spans are "{NOT_AVAILABLE}"')
        if self.match and (NOT_AVAILABLE in (self.summary_span, self.reference_span) or self.issue is not None):
            raise ValueError(f'a matching pair quotes both sides (no "{NOT_AVAILABLE}") and has "issue": null')
        return self


EvidenceItem = Evidence | SnippetEvidence | PairEvidence
# The answer schema's evidence list for each kind (spelled out: a type cannot be built from a variable).
_EVIDENCE_LISTS: dict[EvidenceKind, Any] = {
    "quote": list[Evidence],
    "snippet": list[SnippetEvidence],
    "pair": list[PairEvidence],
}


@dataclass(frozen=True)
class CriterionScore:
    score: float
    justification: str
    evidence: list[EvidenceItem] = field(default_factory=list)  # all of the rubric's evidence kind


@dataclass(frozen=True)
class Judgement:
    rubric: str
    judge: str
    epoch: str
    scores: dict[str, CriterionScore]
    aggregate: float
    attempts: int
    cached: bool
    groups: dict[str, float] = field(default_factory=dict)  # each rubric group's aggregate; empty without groups

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
    """The pydantic model of a valid answer for ``rubric``: one required entry per criterion, with evidence items
    of the rubric's ``evidence_kind``."""
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
        evidence=(_EVIDENCE_LISTS[rubric.evidence_kind], evidence_field),
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
        """Rules a JSON schema cannot state: scores on the scale's grid, justifications long enough."""
        off_scale, too_short = [], []
        min_words = self.rubric.justification_min_words
        for name in self.rubric.criterion_names:
            entry = getattr(answer, name)
            problem = self.rubric.scale.problem(entry.score)
            if problem:
                off_scale.append(f"{name}: {problem}")
            words = len(entry.justification.split())
            if words < min_words:
                too_short.append(f"{name} has {words}")
        problems = []
        if off_scale:
            problems.append("scores off the scale: " + "; ".join(off_scale) + ".")
        if too_short:
            problems.append(
                f"justifications too short (at least {min_words} words each): " + "; ".join(too_short) + "."
            )
        if problems:
            raise ValueError(" ".join(problems))

    async def judge(
        self,
        inputs: Mapping[str, str],
        *,
        epoch: int | str = 0,
        on_completion: Callable[[Completion], None] | None = None,
    ) -> Judgement:
        """Score ``inputs``; raises :class:`JudgeError` when no valid answer comes back.

        ``on_completion`` sees every attempt's completion (a run's sample counts its judge calls with it)."""
        messages = self.messages(inputs)
        try:
            result = await self.model.generate_structured(
                messages,
                self._answer,
                self.settings,
                epoch=epoch,
                max_repairs=self.max_repairs,
                check=self._check,
                on_completion=on_completion,
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
        values = {name: s.score for name, s in scores.items()}
        return Judgement(
            rubric=self.rubric.id,
            judge=self.name,
            epoch=str(epoch),
            scores=scores,
            aggregate=self.rubric.combine(list(values.values())),
            attempts=result.attempts,
            cached=result.completion.cached,
            groups=self.rubric.group_scores(values),
        )
