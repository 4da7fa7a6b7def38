"""The sensemaker (the system under test), Algorithm 2 as the reference runs it (spec 004 items 24-38), with
bedside's fixes for its quirks, on two execution paths that compute the same steps.

Per patient message p (the sensemaker sees only p, the facts F it has extracted so far and its memory H of its
own messages, which starts as the case's vital facts; never the transcript):

1. **mine** p for facts, except after a Providing Information message (and never at Exit): extract atomic facts,
   label each new or already present in F, append the new ones (F only grows);
2. **decide** stay or move on: after Providing Information always move on (no call); otherwise the model's
   MOVE/STAY, overridden by the stage's cap (:mod:`.stages`);
3. **generate** 3 candidate messages for the stage decided, **filter** those redundant with H, and send one of
   the survivors drawn with the conversation's seeded generator (appended to H);
4. **stagnation**: when no candidate survives, move one stage further and use that stage's candidates; when that
   stage would be Exit or beyond, or none of its candidates survives either, the conversation ends
   (``stagnation_end``) without an exit message. The reference writes a placeholder into the transcript and can
   send the literal "No New Message Generated" to the patient; bedside never does either.

``path: reference`` makes the reference's calls: extract, match (skipped only when nothing was extracted), the
stage call (made even when the cap forces the move, and then ignored, as the reference does), generate and
filter, and on stagnation a second generate and filter: 5 per ordinary exchange, 7 with stagnation.

``path: efficient`` folds steps 1-3's generation into one ``system`` call (new facts labelled against F, MOVE/STAY
unless the move is forced, 3 candidates for the stage chosen and up to 3 fallbacks for the stage after it when a
stagnation could need them) and one redundancy call over them all: 2 per exchange, stagnation included. When a
stagnation needs fallbacks the model did not write, the reference's separate generate + filter pair is made
instead (recorded as ``fallback_calls: separate``), never a silent end. Both
paths use the same templates' texts for stages and memory, so the difference is which call computes a step.

**Who makes which call.** In the paper a fixed model (GPT-4o) extracted and matched facts and ran the redundancy
filter, and only the stage decision and the generation were made by the models it compared (o1, R1). bedside
keeps that split: extraction, matching and the redundancy filter go to the ``helper`` role, the stage call,
the generation and the efficient path's folded call to ``system``. A run that sets no ``helper`` model sends the
helper side to each cell's system model (:func:`helper_role`), and then a comparison of system models also
varies the fixed side; the report says which happened.

Every answer is schema-validated JSON with re-asks; an answer still invalid after them is the sample's error
with its cause, never a default decision. The exchange's details (new facts, the stage answer and whether it
was ignored, the candidates, their redundancy flags, the chosen index, the branch) go to the stage trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from bedside.llm.types import Role
from bedside.prompts import render_chat
from bedside.runs.task import SampleContext
from bedside.sim import ConversationState, Decision, Utterance
from bedside.tasks.sensemaking.cases import SensemakingCase
from bedside.tasks.sensemaking.stages import EXIT, NO_FACT_MINING, PROVIDING, info, stage_after

Path = Literal["reference", "efficient"]
PATHS: tuple[Path, ...] = ("reference", "efficient")
N_CANDIDATES = 3
UNABLE_TO_DIAGNOSE = "I apologize but I am unable to diagnose you at the moment."
_STATE = "sensemaker"
REASONING_CHARS = 600  # see patient.REASONING_CHARS
MAX_NEW_FACTS = 8  # facts one patient message can state; bounds a looping list
Message = Annotated[str, Field(min_length=1, max_length=400)]  # a bound a schema-constrained endpoint enforces


class _Extracted(BaseModel):
    model_config = ConfigDict(extra="ignore")
    facts: list[Annotated[str, Field(max_length=200)]] = Field(max_length=MAX_NEW_FACTS)


class _StageAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    reasoning: str = Field(default="", max_length=REASONING_CHARS)
    confidence: int = Field(ge=1, le=10)
    stage: Literal["MOVE", "STAY"]


class _Candidates(BaseModel):
    model_config = ConfigDict(extra="ignore")
    reasoning: str = Field(default="", max_length=REASONING_CHARS)
    messages: list[Message] = Field(min_length=N_CANDIDATES, max_length=N_CANDIDATES)


class _NewFact(BaseModel):
    model_config = ConfigDict(extra="ignore")
    fact: str = Field(min_length=1, max_length=200)
    status: Literal["new", "present"]


def _labels(name: str, values: tuple[str, ...], n: int) -> type[BaseModel]:
    return create_model(
        f"{name}{n}",
        __config__=ConfigDict(extra="ignore"),
        labels=(list[Literal[values]], Field(min_length=n, max_length=n)),  # type: ignore[valid-type]
    )


def _folded_model(*, mine: bool, decide: bool) -> type[BaseModel]:
    fields: dict[str, Any] = {"reasoning": (str, Field(default="", max_length=REASONING_CHARS))}
    if mine:
        fields["new_facts"] = (list[_NewFact], Field(max_length=MAX_NEW_FACTS))
    if decide:
        fields["stage"] = (Literal["MOVE", "STAY"], ...)
    fields["messages"] = (list[Message], Field(min_length=N_CANDIDATES, max_length=N_CANDIDATES))
    fields["fallback_messages"] = (list[Message], Field(default_factory=list, max_length=N_CANDIDATES))
    return create_model(
        f"Folded{'M' if mine else ''}{'D' if decide else ''}", __config__=ConfigDict(extra="ignore"), **fields
    )


def _not_blank(messages: Sequence[str]) -> None:
    if any(not m.strip() for m in messages):
        raise ValueError("every message must have text")


def helper_role(context: SampleContext) -> Role:
    """The role of the paper's fixed side (fact extraction, fact matching, redundancy): ``helper`` when the run
    configures one, else ``system`` (the cell's own model)."""
    return "helper" if "helper" in context.models else "system"


@dataclass
class Memory:
    """What the sensemaker knows: facts F it extracted, its own messages H (seeded with the vital facts)."""

    facts: list[str]
    said: list[str]
    pending: str | None = None


def memory_of(state: ConversationState) -> Memory:
    memory: Memory = state.memory[_STATE]
    return memory


def new_memory(case: SensemakingCase) -> dict[str, Any]:
    return {_STATE: Memory(facts=[], said=list(case.vital_facts or []))}


@dataclass
class Sensemaker:
    """Both the stage policy and the clinician agent of the simulation: :meth:`decide` runs the exchange's
    steps and keeps the chosen message; :meth:`speak` sends it."""

    case: SensemakingCase
    path: Path = "reference"
    fold_mining: bool = True  # efficient path: extraction + matching inside the folded call
    fold_decision: bool = True  # efficient path: the MOVE/STAY decision inside the folded call

    def __post_init__(self) -> None:
        if self.path not in PATHS:
            raise ValueError(f"unknown sensemaker path {self.path!r}; choose from {', '.join(PATHS)}")

    # -- the policy side --------------------------------------------------------------------------------------
    async def decide(self, state: ConversationState, context: SampleContext) -> Decision:
        assert state.last_patient is not None
        if self.path == "efficient":
            return await self._decide_efficient(state, context)
        return await self._decide_reference(state, context)

    async def speak(self, state: ConversationState, context: SampleContext) -> Utterance:
        memory = memory_of(state)
        if memory.pending is None:
            raise RuntimeError("the sensemaker answers a patient message: the patient must open the conversation")
        text, memory.pending = memory.pending, None
        memory.said.append(text)
        return Utterance(text=text)

    # -- reference path ---------------------------------------------------------------------------------------
    async def _decide_reference(self, state: ConversationState, context: SampleContext) -> Decision:
        stage, message = state.stage.id, state.last_patient.text  # type: ignore[union-attr]
        details: dict[str, Any] = {"path": "reference"}
        if stage not in NO_FACT_MINING:
            await self._mine(state, context, message, details)
        move, source, forced = await self._reference_move(state, context, message, details)
        target = stage_after(stage) if move else stage
        assert target is not None
        chosen = await self._candidates_round(state, context, target, message, details, "primary")
        if chosen is not None:
            memory_of(state).pending = chosen
            return Decision(advance=move, source=source, forced=forced, details=details)
        following = stage_after(target)
        details["stagnation"] = True
        if following is None or following == EXIT:
            return Decision(end="stagnation_end", source="stagnation", forced=True, details=details)
        chosen = await self._candidates_round(state, context, following, message, details, "fallback")
        if chosen is None:
            return Decision(end="stagnation_end", source="stagnation", forced=True, details=details)
        memory_of(state).pending = chosen
        return Decision(to_stage=following, source="stagnation", forced=True, details=details)

    async def _mine(
        self, state: ConversationState, context: SampleContext, message: str, details: dict[str, Any]
    ) -> None:
        memory = memory_of(state)
        extracted = await context.generate_structured(
            helper_role(context), render_chat("sensemaking/extract_facts.j2", message=message), _Extracted
        )
        facts = [f.strip() for f in extracted.value.facts if f.strip()]
        details["extracted"] = facts
        if not facts:
            details["new_facts"] = []
            return
        answer = await context.generate_structured(
            helper_role(context),
            render_chat("sensemaking/match_facts.j2", known=memory.facts, facts=facts),
            _labels("FactLabels", ("present", "new"), len(facts)),
        )
        new = [f for f, label in zip(facts, answer.value.labels, strict=True) if label == "new"]  # type: ignore[attr-defined]
        details["new_facts"] = new
        memory.facts.extend(new)

    async def _reference_move(
        self, state: ConversationState, context: SampleContext, message: str, details: dict[str, Any]
    ) -> tuple[bool, str, bool]:
        stage = state.stage.id
        if stage == PROVIDING:
            return True, "stage_rule", True
        memory = memory_of(state)
        nxt = stage_after(stage)
        answer = await context.generate_structured(
            "system",
            render_chat(
                "sensemaking/next_stage.j2",
                current=info(stage),
                following=info(nxt) if nxt else None,
                message=message,
                facts=memory.facts,
                said=memory.said,
            ),
            _StageAnswer,
        )
        details["stage_answer"] = answer.value.stage
        details["confidence"] = answer.value.confidence
        cap = state.stage.cap
        if cap is not None and state.in_stage >= cap:
            details["stage_answer_ignored"] = True  # the reference asks anyway and discards the answer
            return True, "cap", True
        return answer.value.stage == "MOVE", "agent", False

    async def _candidates_round(
        self,
        state: ConversationState,
        context: SampleContext,
        stage: str,
        message: str,
        details: dict[str, Any],
        kind: Literal["primary", "fallback"],
    ) -> str | None:
        memory = memory_of(state)
        answer = await context.generate_structured(
            "system",
            render_chat(
                "sensemaking/generate.j2",
                stage=info(stage),
                message=message,
                facts=memory.facts,
                said=memory.said,
                n=N_CANDIDATES,
                unable=UNABLE_TO_DIAGNOSE,
            ),
            _Candidates,
            check=lambda value: _not_blank(value.messages),
        )
        candidates = [m.strip() for m in answer.value.messages]
        flags = await self._redundant(context, candidates, memory.said)
        return self._choose(state, details, kind, stage, candidates, flags)

    async def _redundant(self, context: SampleContext, candidates: list[str], said: list[str]) -> list[bool]:
        answer = await context.generate_structured(
            helper_role(context),
            render_chat("sensemaking/redundancy.j2", said=said, candidates=candidates),
            _labels("RedundancyLabels", ("redundant", "not_redundant"), len(candidates)),
        )
        return [label == "redundant" for label in answer.value.labels]  # type: ignore[attr-defined]

    @staticmethod
    def _choose(
        state: ConversationState,
        details: dict[str, Any],
        kind: str,
        stage: str,
        candidates: list[str],
        flags: list[bool],
    ) -> str | None:
        survivors = [i for i, redundant in enumerate(flags) if not redundant]
        round_ = {"stage": stage, "candidates": candidates, "redundant": flags, "chosen": None}
        details.setdefault("rounds", []).append({"kind": kind, **round_})
        if not survivors:
            return None
        chosen = state.rng(f"choice-{kind}").choice(survivors)
        details["rounds"][-1]["chosen"] = chosen
        return candidates[chosen]

    # -- efficient path ---------------------------------------------------------------------------------------
    async def _decide_efficient(self, state: ConversationState, context: SampleContext) -> Decision:
        stage, message = state.stage.id, state.last_patient.text  # type: ignore[union-attr]
        memory = memory_of(state)
        details: dict[str, Any] = {"path": "efficient"}
        mine = stage not in NO_FACT_MINING
        if mine and not self.fold_mining:  # the replay validation kept the reference's extract + match calls
            await self._mine(state, context, message, details)
            mine = False
        forced_source: str | None = None
        if stage == PROVIDING:
            forced_source = "stage_rule"
        elif state.stage.cap is not None and state.in_stage >= state.stage.cap:
            forced_source = "cap"
        decided: bool | None = None  # the move, when a separate call or the rules made it
        if forced_source is not None:
            decided = True
        elif not self.fold_decision:  # the replay validation kept the reference's stage call
            decided, _, _ = await self._reference_move(state, context, message, details)
        value = await folded_answer(
            context, stage=stage, message=message, facts=memory.facts, said=memory.said, mine=mine, move=decided
        )
        if mine:
            details["extracted"] = [f.fact.strip() for f in value.new_facts]
            new = [f.fact.strip() for f in value.new_facts if f.status == "new"]
            details["new_facts"] = new
            memory.facts.extend(new)
        if decided is None:
            details["stage_answer"] = value.stage
        move = decided if decided is not None else value.stage == "MOVE"
        source = forced_source or "agent"
        target = (stage_after(stage) if move else stage) or stage
        primary = [m.strip() for m in value.messages]
        fallbacks = [m.strip() for m in value.fallback_messages] if _has_fallback_stage(target) else []
        flags = await self._redundant(context, primary + fallbacks, memory.said)
        chosen = self._choose(state, details, "primary", target, primary, flags[: len(primary)])
        if chosen is not None:
            memory.pending = chosen
            return Decision(advance=move, source=source, forced=forced_source is not None, details=details)
        details["stagnation"] = True
        following = stage_after(target)
        if following is None or following == EXIT:
            return Decision(end="stagnation_end", source="stagnation", forced=True, details=details)
        if fallbacks:
            chosen = self._choose(state, details, "fallback", following, fallbacks, flags[len(primary) :])
        else:  # the model wrote no fallbacks: the reference's own step, a separate generate + filter
            details["fallback_calls"] = "separate"
            chosen = await self._candidates_round(state, context, following, message, details, "fallback")
        if chosen is None:
            return Decision(end="stagnation_end", source="stagnation", forced=True, details=details)
        memory.pending = chosen
        return Decision(to_stage=following, source="stagnation", forced=True, details=details)


def _has_fallback_stage(target: str) -> bool:
    after = stage_after(target)
    return after is not None and after != EXIT


def _check_folded(value: BaseModel) -> None:
    _not_blank(value.messages)  # type: ignore[attr-defined]
    _not_blank(value.fallback_messages)  # type: ignore[attr-defined]


async def folded_answer(
    context: SampleContext,
    *,
    stage: str,
    message: str,
    facts: Sequence[str],
    said: Sequence[str],
    mine: bool,
    move: bool | None,
) -> Any:
    """The efficient path's one ``system`` call: new facts labelled against F (when ``mine``), MOVE/STAY (when
    ``move`` is None; otherwise the move is given and the prompt states the stage), the candidates and the
    fallbacks. The replay validation (:mod:`.replay`) calls exactly this, so what it measures is what runs."""
    nxt = stage_after(stage)
    assert nxt is not None
    after_next = stage_after(nxt)
    if move is None:
        decided, after_decided = None, info(nxt) if nxt != EXIT else None
    else:
        target = nxt if move else stage
        after = stage_after(target)
        decided, after_decided = info(target), info(after) if after and after != EXIT else None
    answer = await context.generate_structured(
        "system",
        render_chat(
            "sensemaking/folded.j2",
            current=info(stage),
            following=info(nxt),
            after_following=info(after_next) if after_next and after_next != EXIT else None,
            decided=decided,
            after_decided=after_decided,
            mine=mine,
            message=message,
            facts=list(facts),
            said=list(said),
            n=N_CANDIDATES,
            unable=UNABLE_TO_DIAGNOSE,
        ),
        _folded_model(mine=mine, decide=move is None),
        check=_check_folded,
    )
    return answer.value
