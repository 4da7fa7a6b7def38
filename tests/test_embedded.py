"""The embedded SmolLM2 model, run for real (installed by `make`; no network needed)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from bedside.judges import JudgeError, Judgement, RubricJudge
from bedside.llm import GenerationSettings, get_model

pytestmark = pytest.mark.embedded


def test_embedded_model_generates_text_offline() -> None:
    async def run() -> tuple[str, int, int]:
        async with get_model("embedded/smollm2-135m") as model:
            completion = await model.generate(
                "In one sentence, what should I do if my blood pressure reading is high?",
                GenerationSettings(max_tokens=40, temperature=0.0),
                system="You are a helpful nurse.",
            )
        return completion.text, completion.usage.prompt_tokens, completion.usage.completion_tokens

    text, prompt_tokens, completion_tokens = asyncio.run(run())
    assert text.strip()
    assert prompt_tokens > 10
    assert 0 < completion_tokens <= 40


def test_embedded_model_is_deterministic_and_samples_differ_by_seed() -> None:
    settings = GenerationSettings(max_tokens=16, temperature=1.0, n=2, seed=11)

    async def run() -> tuple[tuple[str, ...], tuple[str, ...]]:
        async with get_model("embedded/smollm2-135m") as model:
            first = await model.generate("Name a fruit.", settings)
            second = await model.generate("Name a fruit.", settings)
        return first.texts, second.texts

    first, second = asyncio.run(run())
    assert first == second
    assert len(first) == 2


def test_embedded_model_follows_a_json_schema() -> None:
    class Answer(BaseModel):
        city: str

    async def run() -> str:
        async with get_model("embedded/smollm2-135m") as model:
            result = await model.generate_structured(
                "Which city is the capital of France?", Answer, GenerationSettings(max_tokens=40, temperature=0.0)
            )
        return result.value.city

    assert isinstance(asyncio.run(run()), str)


def test_a_rubric_judge_runs_on_the_embedded_model() -> None:
    """The 135M model is a weak judge; what must hold is that its answer is validated against the rubric
    (grammar-constrained JSON, scores on the scale) or the failure is typed, never a default score."""

    conversation = (
        "Person: I have felt low for weeks and cannot sleep.\n"
        "Sensemaker: Low mood that lasts can turn into depression, which affects sleep, work and health, "
        "so it is worth acting on now."
    )

    async def run() -> Judgement | JudgeError:
        async with get_model("embedded/smollm2-135m", role="judge") as model:
            judge = RubricJudge("sensemaking_severity", model, settings=GenerationSettings(max_tokens=512))
            try:
                return await judge.judge({"conversation": conversation})
            except JudgeError as exc:
                return exc

    result = asyncio.run(run())
    if isinstance(result, JudgeError):
        assert result.cause
    else:
        assert result.score("severity") in (1, 2, 3, 4)
