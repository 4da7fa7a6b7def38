"""MultiSenseEval on a finished conversation (spec 004 items 41-47).

- Health Belief Model ×3 (perceived susceptibility, severity, benefits) and conversation flow & correctness:
  one judge call each on the whole conversation, integers 1-4.
- Diagnostic accuracy, hard and soft: one binary call each on the Providing Information message and the case's
  label only (no options, no wider transcript), as the paper does. A conversation that never reached Providing
  Information has no diagnosis to judge: both are absent, and the sample is excluded by that cause.
- SMOG: one value per conversation, over the sensemaker's messages joined (the paper's t-test reproduces only
  with per-conversation values), with bedside's readability counter (:mod:`bedside.text.readability`).

How judges see the conversation (the paper does not say): ``Patient:`` / ``Sensemaker:`` lines. The reference's
unused helper writes a ``Stage: X`` line before every message; bedside leaves stage labels **off** by default,
because they would tell the flow judge the stage structure instead of letting it judge what was said
(``judge_stage_labels: true`` turns them on).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bedside.runs.steps import judge_all
from bedside.runs.task import SampleContext, Turn
from bedside.tasks.sensemaking.stages import PROVIDING, info
from bedside.text.readability import ReadabilityError, smog

CONVERSATION_JUDGES: dict[str, str] = {
    "susceptibility": "sensemaking_susceptibility",
    "severity": "sensemaking_severity",
    "benefits": "sensemaking_benefits",
    "flow": "sensemaking_flow_correctness",
}
DIAGNOSIS_JUDGES: dict[str, str] = {"hard": "diagnostic_accuracy_hard", "soft": "diagnostic_accuracy_soft"}
JUDGES = {**CONVERSATION_JUDGES, **DIAGNOSIS_JUDGES}
SPEAKERS = {"clinician": "Sensemaker", "patient": "Patient"}


def render_conversation(transcript: Sequence[Turn], *, stage_labels: bool = False) -> str:
    lines = []
    for turn in transcript:
        if stage_labels and turn.stage:
            lines.append(f"Stage: {info(turn.stage).title}")
        lines.append(f"{SPEAKERS.get(turn.role, turn.role)}: {turn.content}")
    return "\n".join(lines)


def diagnosis_message(transcript: Sequence[Turn]) -> str | None:
    """The sensemaker's Providing Information message, if the conversation reached it."""
    return next((t.content for t in transcript if t.role == "clinician" and t.stage == PROVIDING), None)


def conversation_smog(transcript: Sequence[Turn], grade: Callable[[str], float] = smog) -> float | None:
    """One grade per conversation over the sensemaker's messages joined (spec item 47: the paper's t-test only
    reproduces with per-conversation values); ``grade`` is :func:`smog` or the textstat cross-check."""
    text = " ".join(t.content for t in transcript if t.role == "clinician")
    try:
        return grade(text)
    except ReadabilityError:
        return None


async def run_judges(
    names: Sequence[str],
    context: SampleContext,
    *,
    transcript: Sequence[Turn],
    label: str | None,
    stage_labels: bool = False,
    max_repairs: int = 2,
) -> tuple[dict[str, dict[str, Any]], dict[str, str], dict[str, str]]:
    """(judge → stored judgement, judge → error with its cause, judge → why it did not run)."""
    unknown = sorted(set(names) - set(JUDGES))
    if unknown:
        raise ValueError(f"unknown judge(s) {', '.join(unknown)}; choose from {', '.join(JUDGES)}")
    conversation = render_conversation(transcript, stage_labels=stage_labels)
    statement = diagnosis_message(transcript)
    inputs: dict[str, Mapping[str, str]] = {n: {"conversation": conversation} for n in CONVERSATION_JUDGES}
    skipped: dict[str, str] = {}
    for name in DIAGNOSIS_JUDGES:
        if statement is None:
            skipped[name] = "not applicable: the conversation never reached Providing Information"
        elif not label:
            skipped[name] = "not applicable: the case has no diagnosis label"
        else:
            inputs[name] = {"diagnosis_statement": statement, "true_diagnosis": label}

    done, failed = await judge_all(
        JUDGES, {n: inputs[n] for n in names if n in inputs}, context, max_repairs=max_repairs
    )
    return done, failed, {n: why for n, why in skipped.items() if n in names}
