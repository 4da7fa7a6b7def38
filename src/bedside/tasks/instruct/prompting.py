"""Building a prompt that fits a context window, measured in a stated tokenizer (MedAlign, Section 5).

The record's budget is ``context - reserve - tokens(prompt without the record)``, where ``reserve`` (256) is
kept for the answer, and the whole assembled prompt is then *measured* and must be at most
``context - reserve``: separately counted pieces can undercount at the joins, so when the measure is over,
the record's budget shrinks by the excess and the cut is made again. The record keeps its most recent part:

- ``paper`` view: the last tokens of the raw text, at a token boundary, ignoring XML (the paper's cut);
- ``timeline`` view: :func:`bedside.records.fit.fit`, whole events, well-formed XML.

Tokens are counted with the *budget tokenizer*, which need not be the generating model's (the paper's GPT-4
2k system was budgeted in the Vicuña tokenizer). Counts are of the message contents plus ``overhead``: the tokens
the endpoint's chat template adds to the whole prompt, which bedside cannot see. For another endpoint, measure it
once: a probe's ``usage.prompt_tokens`` minus its content tokens. The embedded model's is known (see
:data:`EMBEDDED_OVERHEAD`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bedside.llm.types import ChatMessage
from bedside.prompts import render_chat
from bedside.records.fit import DEFAULT_RESERVE, FitError, fit, fit_text
from bedside.tasks.instruct.ehr import EHR
from bedside.text.tokens import Tokenizer

ANSWER_TEMPLATE = "instruct/answer.j2"
# SmolLM2's chat template, measured against llama.cpp's own prompt counts: one user message costs 30 tokens beyond
# its content (the template adds a default system message), a system + user pair 14.
EMBEDDED_OVERHEAD = {"user": 30, "system+user": 14}
_ATTEMPTS = 8


class BudgetError(ValueError):
    """The question and template alone do not fit the context."""


@dataclass(frozen=True)
class Budget:
    context: int
    tokenizer: Tokenizer
    reserve: int = DEFAULT_RESERVE
    overhead: int = 0  # tokens the endpoint's chat template adds to the whole prompt

    @property
    def limit(self) -> int:
        return self.context - self.reserve

    def count(self, messages: list[ChatMessage]) -> int:
        return sum(self.tokenizer.count(m.content) for m in messages) + self.overhead


@dataclass
class Fitted:
    messages: list[ChatMessage]
    prompt_tokens: int
    ehr_tokens: int
    ehr_total_tokens: int
    truncated: bool
    telemetry: dict[str, Any] = field(default_factory=dict)


def cut_record(ehr: EHR, view: str, tokenizer: Tokenizer, tokens: int) -> tuple[str, bool]:
    """The most recent part of the record within ``tokens`` (the view's cut), and whether anything was cut."""
    if view == "paper":
        full = ehr.text("paper")
        kept = fit_text(full, tokenizer, tokens, reserve=0).text
        return kept, len(kept) < len(full)
    fitted = fit(ehr.record, tokenizer, tokens, reserve=0)
    return fitted.text, fitted.events_dropped > 0 or fitted.truncated_event


def fit_prompt(
    template: str | Path,
    variables: dict[str, Any],
    budget: Budget,
    *,
    cut: Callable[[int], str],
    slot: str = "ehr",
) -> tuple[list[ChatMessage], str, int]:
    """Render ``template`` with ``cut(room)`` in the slot, ``room`` being the tokens the budget leaves for it.

    Returns the messages, the text that went in and the measured prompt tokens (always within the limit)."""
    fixed = budget.count(render_chat(template, **variables, **{slot: ""}))
    room = budget.limit - fixed
    if room <= 0:
        raise BudgetError(
            f"the prompt without the record takes {fixed} tokens ({budget.tokenizer.name}); a context of "
            f"{budget.context} with {budget.reserve} reserved for the answer leaves no room for the record"
        )
    for _ in range(_ATTEMPTS):
        kept = cut(room)
        messages = render_chat(template, **variables, **{slot: kept})
        measured = budget.count(messages)
        if measured <= budget.limit:
            return messages, kept, measured
        room -= measured - budget.limit
        if room <= 0:
            break
    raise BudgetError(f"could not fit the record within {budget.limit} tokens after {_ATTEMPTS} cuts")


def budgeted_prompt(
    question: str,
    ehr: EHR,
    view: str,
    budget: Budget,
    *,
    template: str | Path = ANSWER_TEMPLATE,
    system: str | None = None,
) -> Fitted:
    """The paper's single prompt: the question, then as much of the most recent record as fits."""
    total = ehr.tokens(view, budget.tokenizer)
    truncated = {"value": False}

    def cut(room: int) -> str:
        try:
            kept, truncated["value"] = cut_record(ehr, view, budget.tokenizer, room)
        except FitError as exc:
            raise BudgetError(str(exc)) from None
        return kept

    messages, kept, measured = fit_prompt(template, {"question": question, "system": system}, budget, cut=cut)
    ehr_tokens = budget.tokenizer.count(kept)
    return Fitted(messages, measured, ehr_tokens, total, truncated["value"])
