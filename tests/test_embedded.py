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


def test_alternating_roles_each_reuse_their_cached_prompt_prefix() -> None:
    """A doctor and a patient alternate, as in a simulation: each role's prompt keeps its cached prefix in its
    own llama.cpp slot, so a follow-up turn processes only its new tokens (counted by llama.cpp, not timed)."""
    from bedside.llm.providers.embedded import RuntimeCounts, runtime_counts

    doctor = "You are a doctor explaining a discharge plan. " + "The patient had pneumonia and takes amoxicillin. " * 25
    patient = "You are a patient going home. " + "You worry about your breathing and your medicines. " * 25
    settings = GenerationSettings(max_tokens=4, temperature=0.0)

    async def run() -> list[RuntimeCounts]:
        counts = []
        async with (
            get_model("embedded/smollm2-135m", role="system") as doc,
            get_model("embedded/smollm2-135m", role="patient") as pat,
        ):
            for model, system, turn in (
                (doc, doctor, "Begin."),
                (pat, patient, "Hello, I am your doctor."),
                (doc, doctor, "Begin. The patient said: thank you, what happens next?"),
                (pat, patient, "Hello, I am your doctor. Take one pill twice a day."),
            ):
                before = runtime_counts()
                await model.generate(turn, settings, system=system)
                counts.append(runtime_counts() - before)
        return counts

    first_doctor, first_patient, second_doctor, second_patient = asyncio.run(run())
    assert all(c.calls == 1 for c in (first_doctor, first_patient, second_doctor, second_patient))
    for first, second in ((first_doctor, second_doctor), (first_patient, second_patient)):
        assert first.prompt_processed + first.prompt_cached > 200  # the long system prompt
        assert second.prompt_cached >= first.prompt_processed + first.prompt_cached - 10  # the prefix, reused
        assert second.prompt_processed < first.prompt_processed / 5  # only the new tokens
