"""Valid scripted answers for bedside's own prompts, shared by tests and benchmarks (no model involved).

:func:`rubric_answer` answers any shipped rubric's judge prompt validly. :class:`SensemakingScript` plays every
model call of a sensemaking sample (preparation, patient, sensemaker on both paths, judges, fidelity), telling
calls apart by their templates' wording, with knobs that drive the sensemaker's state machine into the cases the
tests pin (stays before a move, redundant candidates, empty extractions, an unparseable stage answer). It records
the kind of every call it answered, in order, in ``calls``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bedside.judges import load_rubric
from bedside.llm.types import ChatMessage

SENSEMAKING_RUBRICS = (
    "sensemaking_susceptibility",
    "sensemaking_severity",
    "sensemaking_benefits",
    "sensemaking_flow_correctness",
    "diagnostic_accuracy_hard",
)
_JUSTIFICATION = "The sensemaker explained this point clearly and specifically for this person in the conversation."


def rubric_answer(rubric_id: str, score: float | None = None) -> str:
    """A JSON answer every criterion of ``rubric_id`` accepts: the scale's middle (or ``score``)."""
    rubric = load_rubric(rubric_id)
    value = score if score is not None else float(round((rubric.scale.min + rubric.scale.max) / 2))
    evidence = {
        "quote": {"quote": "x", "supports": True},
        "snippet": {"snippet": "N/A", "addresses": False, "issue": "omitted"},
        "pair": {"summary_span": "x", "reference_span": "N/A", "match": False, "issue": "hallucinated"},
    }[rubric.evidence_kind]
    words = max(rubric.justification_min_words, 0)
    justification = _JUSTIFICATION if words <= len(_JUSTIFICATION.split()) else " ".join(["detail"] * words)
    return json.dumps(
        {c.name: {"score": value, "justification": justification, "evidence": [evidence]} for c in rubric.criteria}
    )


def _numbered(text: str, after: str) -> int:
    part = text.split(after, 1)[1] if after in text else text
    return len(re.findall(r"^\d+\. ", part, re.MULTILINE))


_STAGE_TITLES = {
    "Fostering the Relationship": "fostering",
    "Gathering Information": "gathering",
    "Providing Information": "providing_information",
    "Decision Making": "decision_making",
    "Responding to Emotions": "responding_to_emotions",
    "Exit": "exit",
}


def _stage_in(text: str, prefix: str) -> str:
    for title, stage in _STAGE_TITLES.items():
        if f"{prefix}{title}" in text:
            return stage
    raise ValueError(f"no stage after {prefix!r} in the prompt")


@dataclass
class SensemakingScript:
    """Plays a sensemaking sample. ``stays[stage]``: how many STAY answers the sensemaker gives in a stage
    before MOVE (default 0); ``redundant(stage)``: whether that stage's candidates are judged redundant;
    ``extract_nothing``: fact extraction finds no fact; ``select_nothing``: the patient matches no fact;
    ``bad_stage_answer``: the stage decision is never valid JSON; ``judge_score``: the judges' score."""

    stays: dict[str, int] = field(default_factory=dict)
    redundant: Callable[[str], bool] = lambda stage: False
    extract_nothing: bool = False
    select_nothing: bool = False
    bad_stage_answer: bool = False
    judge_score: float | None = None
    calls: list[str] = field(default_factory=list)
    _stays_given: dict[str, int] = field(default_factory=dict)
    _written: int = 0

    def __call__(self, messages: Sequence[ChatMessage]) -> str:
        system = messages[0].content
        user = messages[-1].content
        kind, answer = self._answer(system, user)
        self.calls.append(kind)
        return answer

    def _decision(self, stage: str) -> str:
        given = self._stays_given.get(stage, 0)
        if given < self.stays.get(stage, 0):
            self._stays_given[stage] = given + 1
            return "STAY"
        return "MOVE"

    def _messages(self, stage: str, n: int = 3) -> list[str]:
        out = []
        for _ in range(n):
            self._written += 1
            out.append(f"[{stage}] message {self._written}: how have you been sleeping?")
        return out

    def _answer(self, system: str, user: str) -> tuple[str, str]:
        if "into atomic facts for a simulated patient" in system:
            return "decompose", json.dumps(
                {
                    "vital_facts": ["The pulse is 90/min."],
                    "patient_facts": ["The person feels low.", "The person sleeps badly."],
                }
            )
        if "only report measured vital signs" in system:
            return "vitals", json.dumps({"vital_fact_numbers": []})
        if "preparing a realistic simulated patient" in system:
            choice = "comfort" if "care goal" in system else "interpreting_medical_information"
            return "assign", json.dumps({"rationale": "fits", "choice": choice})
        if "name the single most likely diagnosis" in system:
            return "diagnosis", json.dumps({"rationale": "low mood", "diagnosis": "major depressive disorder"})
        if "You are a person starting a conversation" in system:
            return "patient_opening", json.dumps(
                {
                    "reasoning": "",
                    "item_numbers": [2],
                    "message": "I have been feeling low and I want to understand why.",
                }
            )
        if "You decide which of a patient's facts answer" in system:
            return "patient_select", json.dumps({"reasoning": "", "fact_numbers": [] if self.select_nothing else [2]})
        if "Use only the facts below" in system:
            return "patient_answer", "I have been feeling low for weeks."
        if "None of what you know about" in system:
            return "patient_no_match", "No, not that I know of."
        if "List the facts the person states about themselves" in system:
            facts = [] if self.extract_nothing else [f"The person said thing {len(self.calls)}."]
            return "extract", json.dumps({"facts": facts})
        if "For each numbered new fact" in system:
            return "match", json.dumps({"labels": ["new"] * _numbered(user, "## New facts")})
        if "Decide whether to stay in the current stage or move" in system:
            if self.bad_stage_answer:
                return "stage", "I think we should probably move on."
            stage = _stage_in(system, "Current stage: ")
            return "stage", json.dumps({"reasoning": "", "confidence": 5, "stage": self._decision(stage)})
        if "candidate messages for your next turn" in system:
            stage = _stage_in(system, "stage of the\nconversation: ")
            return "generate", json.dumps({"reasoning": "", "messages": self._messages(stage)})
        if "For each numbered candidate message" in system:
            candidates = re.findall(r"^\d+\. \[(\w+)\]", user.split("## Candidates", 1)[1], re.MULTILINE)
            labels = ["redundant" if self.redundant(stage) else "not_redundant" for stage in candidates]
            return "redundancy", json.dumps({"labels": labels})
        if "Do the following steps and answer with every field asked" in system:
            return "folded", self._folded(system, user)
        if "audit a simulated patient" in system:
            return "fidelity", json.dumps({"labels": ["entailed"] * _numbered(user, "one sentence per line")})
        for rubric_id in SENSEMAKING_RUBRICS:
            rubric = load_rubric(rubric_id)
            if all(f'"{c.name}"' in system for c in rubric.criteria):
                score = self.judge_score if rubric.scale.kind != "binary" else 1.0
                return f"judge:{rubric_id}", rubric_answer(rubric_id, score)
        raise ValueError(f"unexpected call: {system[:100]!r}")

    def _folded(self, system: str, user: str) -> str:
        answer: dict[str, Any] = {"reasoning": ""}
        if '"new_facts"' in user:
            answer["new_facts"] = (
                [] if self.extract_nothing else [{"fact": f"The person said thing {len(self.calls)}.", "status": "new"}]
            )
        if "The stage is decided: you are now in " in system:
            chosen = _stage_in(system, "The stage is decided: you are now in ")
        else:
            current = _stage_in(system, '"STAY" to remain in ')
            decision = self._decision(current)
            answer["stage"] = decision
            chosen = current if decision == "STAY" else _stage_in(system, '"MOVE" to go on to ')
        answer["messages"] = self._messages(chosen)
        order = list(_STAGE_TITLES.values())
        after = order[order.index(chosen) + 1] if chosen != "exit" else None
        answer["fallback_messages"] = self._messages(after) if after and after != "exit" else []
        return json.dumps(answer)
