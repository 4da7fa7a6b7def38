"""The six content stages, their caps, and how the conversation moves through them.

Run order (the paper's Fig. 1 and the reference code): Diagnosis → Tests & treatments → Return indicators →
Medications → Post-discharge treatment → Follow-up, then a closing message. §2.2 lists the same six in another
order (IRH, MED, DX, PDT, TDS, FU); that is the order of the judges and of Table 1, not of the conversation.

The doctor opens (answering an empty patient message) and moves on by appending the control token
``NEXT STAGE`` to a message, which moves the *next* message to the next stage; the cap is the other trigger.
The closing message ends with ``FINISHED SIMULATION``. Both tokens are stripped before the patient, the
transcript or a judge sees the text (the reference code leaves them in); they stay in the trace.

Named schedules, each a fact of one source:

- ``paper`` (the default): 5 doctor messages per stage, medications uncapped ("no upper limit, to ensure
  complete coverage of all prescribed drugs", §2.3), one closing message, a hard limit of 50 doctor messages.
  Neither source checks drug coverage, and bedside does not invent a harness rule that would do the doctor's
  work: under this schedule a doctor that never says NEXT STAGE stays in Medications until the hard limit.
  The share of listed drugs the doctor mentioned is measured and reported instead.
- ``reference``: the public code's modulo counter exactly (4, 5, 5, 10, 5, 5 messages when the doctor never
  signals; a stage entered by NEXT STAGE gets one message fewer than one entered by the cap, medications 9 or
  10), the closing prompt repeated until FINISHED SIMULATION or the hard limit, and the code's generation
  settings for both agents' turns: temperature 0.05 and 200-token replies (they replace the run's settings for
  those turns; documents, exam and judges keep theirs).
- ``demo``: one message per stage and 12 at most, for minutes-long demos on the embedded model.

In every schedule the message at the hard limit is the closing one (the reference code gives the 50th message
the closing instructions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from bedside.runs.task import SampleContext
from bedside.sim import STAY, ConversationState, Decision, Stage, signal_or_cap

STAGE_IDS = ("diagnosis", "tests_treatments", "return_indicators", "medications", "post_discharge", "follow_up")
CLOSING = "closing"

NEXT_STAGE = "NEXT STAGE"
FINISHED = "FINISHED SIMULATION"


@dataclass(frozen=True)
class Schedule:
    name: str
    stages: tuple[Stage, ...]
    max_doctor_messages: int = 50
    counter: Literal["cap", "reference"] = "cap"
    max_tokens: int | None = None  # per agent message; None leaves the run's settings alone
    temperature: float | None = None  # per agent message; None leaves the run's settings alone

    def policy(self) -> SignalOrCapWithClosing | ReferenceCounter:
        return ReferenceCounter() if self.counter == "reference" else SignalOrCapWithClosing()


def _stages(caps: tuple[int | None, ...], closing: int | None) -> tuple[Stage, ...]:
    return (*(Stage(s, c) for s, c in zip(STAGE_IDS, caps, strict=True)), Stage(CLOSING, closing))


SCHEDULES: dict[str, Schedule] = {
    "paper": Schedule("paper", _stages((5, 5, 5, None, 5, 5), 1)),
    "reference": Schedule(
        "reference", _stages((None,) * 6, None), counter="reference", max_tokens=200, temperature=0.05
    ),
    "demo": Schedule("demo", _stages((1, 1, 1, 1, 1, 1), 1), max_doctor_messages=12),
}


def get_schedule(name: str) -> Schedule:
    try:
        return SCHEDULES[name]
    except KeyError:
        raise ValueError(f"unknown schedule {name!r}; choose from {', '.join(SCHEDULES)}") from None


def _closing_at_limit(state: ConversationState) -> Decision | None:
    if state.messages_left == 1 and state.stage.id != CLOSING:
        return Decision(to_stage=CLOSING, source="limit", forced=True)
    return None


class SignalOrCapWithClosing:
    """The engine's usual rule (the doctor's NEXT STAGE, else the stage's cap), with the closing message at the
    hard limit."""

    async def decide(self, state: ConversationState, context: SampleContext) -> Decision:
        return _closing_at_limit(state) or signal_or_cap(state)


class ReferenceCounter:
    """The reference code's stage counter, replayed exactly.

    Before each doctor message the code does ``stage_infs = (stage_infs + 1) % max_stage_infs`` and moves on a
    stage when that gives 0; the stage's prompt then sets ``max_stage_infs`` (5 for Diagnosis, 10 for
    Medications, 5 again from Post-discharge on; the others keep the last value). NEXT STAGE in a message moves
    the stage and sets ``stage_infs = 0`` after it. The count lives in ``state.memory["reference_counter"]``.
    """

    _MAX_SET_BY_STAGE: ClassVar[dict[int, int]] = {0: 5, 3: 10, 4: 5}

    async def decide(self, state: ConversationState, context: SampleContext) -> Decision:
        counter = state.memory.setdefault("reference_counter", {"stage_infs": 1, "max": 5})
        limit = _closing_at_limit(state)
        if limit is not None:
            counter["stage_infs"] = (counter["stage_infs"] + 1) % counter["max"]
            return limit
        if state.stage.id == CLOSING:
            return STAY  # the closing prompt repeats until FINISHED SIMULATION or the hard limit
        decision = STAY
        signalled = state.last_clinician is not None and state.last_clinician.control.get("advance")
        if signalled:
            decision = Decision(advance=True, source="agent")
            counter["stage_infs"] = 1 % counter["max"]
        else:
            counter["stage_infs"] = (counter["stage_infs"] + 1) % counter["max"]
            if counter["stage_infs"] == 0:
                decision = Decision(advance=True, source="cap", forced=True)
        entering = state.stage_index + 1 if decision.advance else state.stage_index
        counter["max"] = self._MAX_SET_BY_STAGE.get(entering, counter["max"])
        return Decision(
            advance=decision.advance,
            source=decision.source,
            forced=decision.forced,
            details={"stage_infs": counter["stage_infs"]},
        )
