"""The conversation loop shared by every simulation: stages, caps, advance decisions, the end, and the books.

The engine runs a clinician side (the system under test) against a simulated patient through ordered stages.
It owns only what both simulated seeds share; prompts, what each side remembers, how a decision is made and
everything after the conversation belong to the task.

One exchange is: decide (stay or move on), the clinician speaks, the patient answers. In detail:

1. **Decide**, before every clinician message that answers a patient message (so before the first one only when
   the patient opens): the :class:`StagePolicy` returns a
   :class:`Decision` (stay, advance to the next stage, jump forward to a named stage, or end now).
   :class:`SignalOrCap` is the usual policy: the clinician's own signal in its previous message (its
   utterance's ``control["advance"]``), else the stage's cap. Stages only move forward; one decision moves one
   stage (or jumps to a named later one), so every stage entered gets at least one clinician message.
2. **Clinician message.** A stage's ``cap`` counts the clinician messages sent in it, the entry message included;
   the count restarts at every stage change. ``cap=None`` leaves the stage open until a signal; it is allowed
   because every simulation has a hard limit (``max_clinician_messages``).
3. **End checks**, right after a clinician message: the hard limit is reached → ``hard_limit`` (even when that
   message closes the conversation: the limit, not the clinician, decided the end); else the clinician signalled the
   end (``control["end"]``), or the last stage has had its cap → ``completed``. A policy can also end
   the conversation before a message (``Decision(end=...)``, e.g. ``stagnation_end``). The patient never answers
   the final clinician message.
4. **Patient message**, which carries the stage of the message it answers.

The transcript holds what each side *said*: the text after the task stripped its control tokens
(:class:`Utterance.text`). The raw text, the parsed control fields, the decision, whether it was forced, the
finish reason and the model calls of the exchange by role go to the trace, one entry per clinician message.

Every model call goes through the sample's :class:`~bedside.runs.task.SampleContext` and so through the response
cache with the sample's epoch: a conversation that is re-run, or resumed after an interruption, replays from the
cache and sends only the calls that were never answered.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from bedside.runs.task import SampleContext, Turn
from bedside.sim.knowledge import Knowledge

Side = Literal["clinician", "patient"]
Termination = Literal["completed", "hard_limit", "stagnation_end"]
TERMINATIONS: tuple[Termination, ...] = ("completed", "hard_limit", "stagnation_end")


class SimulationError(RuntimeError):
    """A simulation was set up wrongly (bad stages, a policy asking for an impossible move)."""


@dataclass(frozen=True)
class Stage:
    """One stage: its id (the goal text lives in the task's templates) and its cap in clinician messages."""

    id: str
    cap: int | None = None

    def __post_init__(self) -> None:
        if self.cap is not None and self.cap < 1:
            raise SimulationError(f"stage {self.id!r}: a cap must be at least 1 (got {self.cap})")


@dataclass(frozen=True)
class Utterance:
    """What one side produced. ``text`` is what the other side, the transcript and the judges see; ``raw`` is the
    model's text before control tokens were stripped (kept for the trace); ``control`` holds parsed control
    fields (``advance``, ``end``, or anything the task's policy reads)."""

    text: str
    raw: str | None = None
    control: Mapping[str, Any] = field(default_factory=dict)
    finish_reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)  # task-specific, copied into the trace


@dataclass(frozen=True)
class Decision:
    """A policy's answer before a clinician message."""

    advance: bool = False
    source: str | None = None  # agent | cap | predicate | stagnation | limit | ...
    forced: bool = False  # the move was not the clinician's own choice
    to_stage: str | None = None  # jump forward to this stage instead of the next one
    end: Termination | None = None  # end the conversation now, before any further message
    details: Mapping[str, Any] = field(default_factory=dict)

    def as_trace(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"advance": self.advance, "source": self.source, "forced": self.forced}
        if self.to_stage:
            entry["to_stage"] = self.to_stage
        if self.end:
            entry["end"] = self.end
        entry.update(self.details)
        return entry


STAY = Decision()


@dataclass
class ConversationState:
    """Everything the agents and the policy may read. Each agent builds its own view from it: the engine imposes
    no history format. ``memory`` is task-owned (e.g. ``memory["clinician"]``); ``knowledge`` is read-only."""

    stages: tuple[Stage, ...]
    sample_id: str
    seed: int
    epoch: str
    knowledge: Mapping[Side, Knowledge] = field(default_factory=dict)
    memory: dict[str, Any] = field(default_factory=dict)
    turns: list[Turn] = field(default_factory=list)
    stage_index: int = 0
    in_stage: int = 0  # clinician messages sent in the current stage
    entered_by: str = "start"  # the decision source that entered the current stage
    clinician_messages: int = 0
    max_clinician_messages: int = 0
    last_clinician: Utterance | None = None
    last_patient: Utterance | None = None
    reached: list[str] = field(default_factory=list)

    @property
    def stage(self) -> Stage:
        return self.stages[self.stage_index]

    @property
    def is_last_stage(self) -> bool:
        return self.stage_index == len(self.stages) - 1

    @property
    def messages_left(self) -> int:
        return self.max_clinician_messages - self.clinician_messages

    def stage_index_of(self, stage_id: str) -> int:
        for index, stage in enumerate(self.stages):
            if stage.id == stage_id:
                return index
        raise SimulationError(f"no stage {stage_id!r}; stages are {', '.join(s.id for s in self.stages)}")

    def rng(self, purpose: str = "") -> random.Random:
        """A generator seeded from (run seed, sample, epoch, clinician message index, purpose): the same seed gives
        the same conversation, and a resumed one draws what the first attempt drew."""
        key = f"{self.seed}|{self.sample_id}|{self.epoch}|{self.clinician_messages}|{purpose}"
        return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))


class Agent(Protocol):
    """One side of the conversation. Models are reached through ``context`` with the agent's role."""

    async def speak(self, state: ConversationState, context: SampleContext) -> Utterance: ...


class StagePolicy(Protocol):
    async def decide(self, state: ConversationState, context: SampleContext) -> Decision: ...


class SignalOrCap:
    """Advance on the clinician's signal in its previous message, else when the stage's cap is used up."""

    async def decide(self, state: ConversationState, context: SampleContext) -> Decision:
        return signal_or_cap(state)


def signal_or_cap(state: ConversationState) -> Decision:
    if state.last_clinician is not None and state.last_clinician.control.get("advance"):
        return Decision(advance=True, source="agent")
    cap = state.stage.cap
    if cap is not None and state.in_stage >= cap:
        return Decision(advance=True, source="cap", forced=True)
    return STAY


@dataclass
class Conversation:
    """A finished conversation: what was said, how it went, and why it ended."""

    transcript: list[Turn]
    trace: list[dict[str, Any]]
    termination: Termination
    stages_reached: list[str]
    clinician_messages: int
    memory: dict[str, Any]

    def messages_per_stage(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for turn in self.transcript:
            if turn.role == "clinician" and turn.stage is not None:
                counts[turn.stage] = counts.get(turn.stage, 0) + 1
        return counts


@dataclass(frozen=True)
class Simulation:
    """A conversation's shape: stages, the two sides, the policy, who opens and the hard limit."""

    stages: Sequence[Stage]
    clinician: Agent
    patient: Agent
    max_clinician_messages: int
    policy: StagePolicy = field(default_factory=SignalOrCap)
    opener: Side = "clinician"

    def __post_init__(self) -> None:
        if not self.stages:
            raise SimulationError("a simulation needs at least one stage")
        ids = [s.id for s in self.stages]
        if len(set(ids)) != len(ids):
            raise SimulationError(f"stage ids repeat: {ids}")
        if self.max_clinician_messages < 1:
            raise SimulationError("max_clinician_messages must be at least 1")

    async def run(
        self,
        context: SampleContext,
        *,
        sample_id: str,
        knowledge: Mapping[Side, Knowledge] | None = None,
        memory: Mapping[str, Any] | None = None,
    ) -> Conversation:
        state = ConversationState(
            stages=tuple(self.stages),
            sample_id=sample_id,
            seed=context.seed,
            epoch=context.epoch,
            knowledge=dict(knowledge or {}),
            memory=dict(memory or {}),
            max_clinician_messages=self.max_clinician_messages,
            reached=[self.stages[0].id],
        )
        trace: list[dict[str, Any]] = []
        before = _snapshot(context)
        opening_trace: dict[str, Any] = {}
        if self.opener == "patient":
            opening = await self.patient.speak(state, context)
            state.last_patient = opening
            state.turns.append(Turn(role="patient", content=opening.text, stage=state.stage.id))
            opening_trace = {
                "raw": opening.raw,
                "details": dict(opening.details),
                "finish_reason": opening.finish_reason,
            }
        termination: Termination | None = None
        while termination is None:
            decision = await self.policy.decide(state, context) if state.last_patient is not None else STAY
            stage_before = state.stage.id
            if decision.end:
                trace.append({"index": state.clinician_messages, "stage_before": stage_before, **_end(decision)})
                termination = decision.end
                break
            if (decision.advance or decision.to_stage) and self._move(state, decision):
                termination = "completed"
                trace.append({"index": state.clinician_messages, "stage_before": stage_before, **_end(decision)})
                break
            said = await self.clinician.speak(state, context)
            state.clinician_messages += 1
            state.in_stage += 1
            state.last_clinician = said
            state.turns.append(Turn(role="clinician", content=said.text, stage=state.stage.id))
            entry = _trace_entry(state, stage_before, decision, said)
            if opening_trace:  # the patient's opening message goes with the first exchange
                entry["opening"], opening_trace = opening_trace, {}
            last_used_up = state.is_last_stage and state.stage.cap is not None and state.in_stage >= state.stage.cap
            if state.clinician_messages >= self.max_clinician_messages:
                termination = "hard_limit"  # even when that last message closes: the limit decided the end
            elif said.control.get("end") or last_used_up:
                termination = "completed"
            if termination is None:
                answer = await self.patient.speak(state, context)
                state.last_patient = answer
                state.turns.append(Turn(role="patient", content=answer.text, stage=state.stage.id))
                if answer.raw is not None and answer.raw != answer.text:
                    entry["patient_raw"] = answer.raw
                if answer.details:
                    entry["patient"] = dict(answer.details)
                if answer.finish_reason:
                    entry["patient_finish_reason"] = answer.finish_reason
            now = _snapshot(context)
            entry["calls"] = _delta(before, now)
            before = now
            trace.append(entry)
        return Conversation(
            transcript=state.turns,
            trace=trace,
            termination=termination,
            stages_reached=list(state.reached),
            clinician_messages=state.clinician_messages,
            memory=state.memory,
        )

    @staticmethod
    def _move(state: ConversationState, decision: Decision) -> bool:
        """Apply a move; True when it steps past the last stage (the conversation is complete)."""
        if decision.to_stage is not None:
            target = state.stage_index_of(decision.to_stage)
            if target < state.stage_index:
                raise SimulationError(f"stages only move forward: {state.stage.id!r} → {decision.to_stage!r}")
        else:
            target = state.stage_index + 1
        if target >= len(state.stages):
            return True
        if target != state.stage_index:
            state.stage_index = target
            state.in_stage = 0
            state.entered_by = decision.source or "policy"
            state.reached.append(state.stage.id)
        return False


def _end(decision: Decision) -> dict[str, Any]:
    return {"decision": decision.as_trace(), "ended": decision.end or "completed"}


def _trace_entry(state: ConversationState, stage_before: str, decision: Decision, said: Utterance) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "index": state.clinician_messages,
        "stage_before": stage_before,
        "stage": state.stage.id,
        "in_stage": state.in_stage,
        "decision": decision.as_trace(),
        "forced": decision.forced,
        "finish_reason": said.finish_reason,
    }
    if said.control:
        entry["control"] = dict(said.control)
    if said.raw is not None and said.raw != said.text:
        entry["raw"] = said.raw
    if said.details:
        entry["clinician"] = dict(said.details)
    return entry


def _snapshot(context: SampleContext) -> dict[str, tuple[int, int]]:
    return {role: (c.calls, c.cache_hits) for role, c in context.usage.items()}


def _delta(before: Mapping[str, tuple[int, int]], now: Mapping[str, tuple[int, int]]) -> dict[str, dict[str, int]]:
    out = {}
    for role, (calls, hits) in now.items():
        was_calls, was_hits = before.get(role, (0, 0))
        if calls != was_calls:
            out[role] = {"calls": calls - was_calls, "cache_hits": hits - was_hits}
    return out
