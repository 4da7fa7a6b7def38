"""The simulated patient, Algorithm 1 as the reference runs it (spec 004 items 16-23).

The patient is **stateless**: each reply is written from the sensemaker's current message alone (never the
history), the persona and the facts. Per reply:

1. **select** (one ``patient`` call, JSON): at most 3 facts from the pool that together answer the message, or
   none. The pool is the case's facts with one pseudo-fact put first: the intent's definition while the message
   being answered is in stages 1-3, the goal's from Decision Making on.
2. **answer** (one call, plain text) from the *selected facts only*, in persona. Stages 1-3 are a closed world:
   anything asked that is not in the facts is false, a stated diagnosis is agreed with, nothing is added; from
   Decision Making on, missing details may be answered creatively and next steps agreed to.
3. when nothing was selected, **one** no-match call instead (no facts at all): background questions get a
   negative or unsure answer, questions about decisions, feelings, diagnosis or next steps an affirmative one.

The opening message is one call per conversation choosing at most 2 items from [intent] + facts. Every choice
(selected fact numbers, branch) is kept in the utterance's details and so in the stage trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from bedside.prompts import render_chat
from bedside.runs.task import SampleContext
from bedside.sim import ConversationState, Utterance
from bedside.tasks.sensemaking.cases import SensemakingCase
from bedside.tasks.sensemaking.personas import Persona, goals, intents
from bedside.tasks.sensemaking.stages import CLOSED_WORLD

MAX_SELECTED = 3
MAX_OPENING_ITEMS = 2
# A bound on the free-text reasoning before the answer: a small model under a token limit otherwise rambles past
# it and never closes the JSON (schema-constrained endpoints enforce the bound while generating).
REASONING_CHARS = 300
MESSAGE_CHARS = 400  # likewise for a message: a looping small model is cut by the schema, not the token limit
_SPACE = re.compile(r"\s+")


class _Selection(BaseModel):
    model_config = ConfigDict(extra="ignore")
    reasoning: str = Field(default="", max_length=REASONING_CHARS)
    fact_numbers: list[int] = Field(max_length=MAX_SELECTED)


class _Opening(BaseModel):
    model_config = ConfigDict(extra="ignore")
    reasoning: str = Field(default="", max_length=REASONING_CHARS)
    item_numbers: list[int] = Field(max_length=MAX_OPENING_ITEMS)
    message: str = Field(min_length=1, max_length=MESSAGE_CHARS)


def _numbers_check(pool: list[str]):  # type: ignore[no-untyped-def]
    def check(value: _Selection | _Opening) -> None:
        numbers = value.fact_numbers if isinstance(value, _Selection) else value.item_numbers
        bad = [n for n in numbers if not 1 <= n <= len(pool)]
        if bad:
            raise ValueError(f"numbers must be between 1 and {len(pool)}; got {bad}")

    return check


def _text(raw: str) -> str:
    text = re.sub(r"^\s*\**(?:patient|answer|me)\**\s*:\s*", "", raw.strip(), flags=re.IGNORECASE)
    return _SPACE.sub(" ", text).strip().strip('"').strip()


@dataclass
class SensemakingPatient:
    case: SensemakingCase
    persona: Persona

    def pool(self, stage: str) -> list[str]:
        """The facts the patient may use when answering a message of ``stage``."""
        if self.case.intent is None or self.case.goal is None:
            raise ValueError(f"case {self.case.id}: prepare the case first (it has no intent or goal)")
        lead = intents()[self.case.intent] if stage in CLOSED_WORLD else goals()[self.case.goal]
        return [lead["definition"], *(self.case.facts or [])]

    def _persona(self) -> dict[str, object]:
        return {"traits": self.persona.traits_text(), "literacy": self.persona.literacy_bullets()}

    async def speak(self, state: ConversationState, context: SampleContext) -> Utterance:
        if state.last_clinician is None:
            return await self._opening(context)
        stage = state.stage.id
        question = state.last_clinician.text
        pool = self.pool(stage)
        selection = await context.generate_structured(
            "patient",
            render_chat("sensemaking/patient_select.j2", question=question, pool=pool, limit=MAX_SELECTED),
            _Selection,
            check=_numbers_check(pool),
        )
        numbers = list(dict.fromkeys(selection.value.fact_numbers))
        if numbers:
            completion = await context.generate(
                "patient",
                render_chat(
                    "sensemaking/patient_answer.j2",
                    question=question,
                    facts=[pool[n - 1] for n in numbers],
                    closed_world=stage in CLOSED_WORLD,
                    **self._persona(),
                ),
            )
            branch = "facts"
        else:
            completion = await context.generate(
                "patient", render_chat("sensemaking/patient_no_match.j2", question=question, **self._persona())
            )
            branch = "no_match"
        return Utterance(
            text=_text(completion.text),
            raw=completion.text,
            finish_reason=completion.finish_reason,
            details={"selected": numbers, "branch": branch, "closed_world": stage in CLOSED_WORLD},
        )

    async def _opening(self, context: SampleContext) -> Utterance:
        pool = self.pool("fostering")
        answer = await context.generate_structured(
            "patient",
            render_chat("sensemaking/patient_opening.j2", pool=pool, limit=MAX_OPENING_ITEMS, **self._persona()),
            _Opening,
            check=_numbers_check(pool),
        )
        numbers = list(dict.fromkeys(answer.value.item_numbers))
        return Utterance(
            text=_text(answer.value.message),
            raw=answer.completion.text,
            finish_reason=answer.completion.finish_reason,
            details={"selected": numbers, "branch": "opening", "closed_world": True},
        )
