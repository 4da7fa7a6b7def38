"""A toy task used by the runs tests: a two-role simulation (the system and a simulated patient take turns),
and a one-call rating that asks for structured output."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from bedside.runs import DatasetConfig, Output, Sample, SampleContext, Turn
from bedside.runs.task import System


async def _conversation(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    transcript: list[Turn] = []
    trace = []
    patient_says = sample.inputs["opening"]
    for stage in ("gather", "explain", "close")[: int(options.get("stages", 3))]:
        transcript.append(Turn(role="patient", content=patient_says, stage=stage))
        reply = await context.generate("system", f"[{stage}] patient said: {patient_says}")
        transcript.append(Turn(role="clinician", content=reply.text, stage=stage))
        patient_says = (await context.generate("patient", f"[{stage}] clinician said: {reply.text}")).text
        trace.append({"stage": stage, "turns": 2})
    return Output(text=transcript[-1].content, transcript=transcript, trace=trace)


class Rating(BaseModel):
    score: int = Field(ge=1, le=5)


async def _rate(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    answer = await context.generate_structured("system", f"Rate how unwell: {sample.inputs['opening']}", Rating)
    return Output(text=answer.completion.text, extra={"rating": answer.value.score})


class ConversationTask:
    name = "toy-conversation"
    systems: Mapping[str, System] = {"talk": _conversation, "rate": _rate}
    default_scorers = ("words", "turns")
    scorers = ("turns", "rating")

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        return [
            Sample(
                id=f"c{i}",
                inputs={"opening": f"I feel unwell ({i})"},
                strata={"persona": "anxious" if i % 2 else "calm"},
            )
            for i in range(4)
        ]

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        if scorer == "turns":
            return float(len(output.transcript or []))
        if scorer == "rating":
            return float(output.extra["rating"])
        raise KeyError(scorer)


TASK = ConversationTask()
