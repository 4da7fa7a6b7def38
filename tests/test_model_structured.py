"""Structured output: validation, repair by re-asking, and the typed failure when repair does not help."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from bedside.llm import GenerationSettings, StructuredOutputError, get_model
from bedside.testing import ScriptedServer


class Triage(BaseModel):
    urgency: int = Field(ge=1, le=5)
    reason: str


REPAIRED = {
    "could not be used": '{"urgency": 2, "reason": "mild symptoms"}',
}


def test_malformed_answer_is_repaired_when_the_second_answer_is_valid() -> None:
    rules = {
        "rules": [{"pattern": "could not be used", "reply": REPAIRED["could not be used"]}],
        "default": "Sure! Urgency is low, maybe 2?",
    }
    with ScriptedServer(rules) as server:

        async def run() -> tuple[Triage, int]:
            async with get_model(server.model_name()) as model:
                result = await model.generate_structured("Triage: mild cough", Triage)
                return result.value, result.attempts

        value, attempts = asyncio.run(run())
        assert value == Triage(urgency=2, reason="mild symptoms")
        assert attempts == 2
        first, second = server.recent
    # JSON-schema mode is used with an OpenAI-compatible endpoint, and the schema is stated in the prompt too.
    assert first["response_format"]["json_schema"]["schema"]["properties"]["urgency"]["maximum"] == 5
    assert "JSON Schema" in first["messages"][-1]["content"]
    # The re-ask carries the model's bad answer and the reason it was rejected.
    assert second["messages"][-2] == {"role": "assistant", "content": "Sure! Urgency is low, maybe 2?"}
    assert "not valid JSON" in second["messages"][-1]["content"]


def test_schema_violations_are_explained_to_the_model() -> None:
    rules = {
        "rules": [{"pattern": "could not be used", "reply": '```json\n{"urgency": 3, "reason": "ok"}\n```'}],
        "default": '{"urgency": 9, "reason": "too high"}',
    }
    with ScriptedServer(rules) as server:

        async def run() -> Triage:
            async with get_model(server.model_name()) as model:
                return (await model.generate_structured("triage", Triage)).value

        assert asyncio.run(run()).urgency == 3
        assert "urgency: Input should be less than or equal to 5" in server.recent[-1]["messages"][-1]["content"]


def test_check_callable_adds_rules_a_schema_cannot_state() -> None:
    def not_urgent(t: Triage) -> None:
        if t.urgency > 2:
            raise ValueError("urgency above 2 needs a reason mentioning a red flag")

    rules = {
        "rules": [{"pattern": "red flag", "reply": '{"urgency": 1, "reason": "fine"}'}],
        "default": '{"urgency": 4, "reason": "hmm"}',
    }
    with ScriptedServer(rules) as server:

        async def run() -> int:
            async with get_model(server.model_name()) as model:
                return (await model.generate_structured("triage", Triage, check=not_urgent)).attempts

        assert asyncio.run(run()) == 2


def test_repair_is_bounded_and_fails_as_a_typed_error() -> None:
    with ScriptedServer(faults="invalid-json=1.0") as server:

        async def run() -> None:
            async with get_model(server.model_name()) as model:
                await model.generate_structured("triage", Triage, max_repairs=2)

        with pytest.raises(StructuredOutputError) as info:
            asyncio.run(run())
        assert server.stats()["requests"] == 3
    assert info.value.attempts == 3
    assert "not valid JSON" in info.value.last_error


def test_a_failure_replayed_from_the_cache_says_so(tmp_path: Path) -> None:
    """After a failure, the same call answers from the response cache (an endpoint fixed since asks nothing): the
    error says the answers were replayed and how to ask again, where it used to look like a fresh failure."""
    with ScriptedServer(faults="invalid-json=1.0") as server:

        async def run() -> None:
            async with get_model(server.model_name(), cache=tmp_path / "cache.sqlite") as model:
                await model.generate_structured("triage", Triage, max_repairs=1)

        with pytest.raises(StructuredOutputError) as first:
            asyncio.run(run())
        with pytest.raises(StructuredOutputError) as again:
            asyncio.run(run())
        assert server.stats()["requests"] == 2  # the second failure asked nothing
    assert "replayed" not in str(first.value)
    assert str(again.value).endswith(
        "(2 of the answers replayed from the response cache: --no-cache, or a run's --retry-errors, asks the model "
        "again)"
    )


def test_instructions_mode_sends_no_response_format() -> None:
    with ScriptedServer({"triage": json.dumps({"urgency": 1, "reason": "x"})}) as server:

        async def run() -> None:
            async with get_model(server.model_name(), structured_mode="instructions") as model:
                await model.generate_structured("triage", Triage)

        asyncio.run(run())
        assert "response_format" not in server.recent[-1]


def test_scripted_provider_answers_structured_calls_in_process() -> None:
    config = {
        "provider": "scripted",
        "model": "t",
        "options": {"rules": {"triage": '{"urgency": 5, "reason": "chest pain"}'}},
    }

    async def run() -> Triage:
        async with get_model(config) as model:
            return (await model.generate_structured("triage please", Triage)).value

    assert asyncio.run(run()).reason == "chest pain"


def test_an_answer_cut_at_max_tokens_says_so_to_the_model_and_in_the_error() -> None:
    """JSON broken because the answer hit its token limit reads as a syntax error; the re-ask and the final error
    name the limit, so the model can answer shorter and the user knows which setting to raise."""
    whole = json.dumps({"urgency": 2, "reason": "a mild cough for three days with no fever and no breathlessness"})
    with ScriptedServer({"rules": [], "default": whole}, faults="length=1.0") as server:

        async def run() -> None:
            async with get_model(server.model_name()) as model:
                await model.generate_structured("Triage", Triage, GenerationSettings(max_tokens=40), max_repairs=1)

        with pytest.raises(StructuredOutputError) as failure:
            asyncio.run(run())
        repair_prompt = server.recent[1]["messages"][-1]["content"]
    assert "the answer was cut at max_tokens=40 before it was complete." in repair_prompt
    assert str(failure.value).endswith("); the answer was cut at max_tokens=40 before it was complete.")


def test_a_malformed_answer_that_was_not_cut_says_nothing_of_a_limit() -> None:
    with ScriptedServer({"rules": [], "default": "Urgency two, I think."}) as server:

        async def run() -> None:
            async with get_model(server.model_name()) as model:
                await model.generate_structured("Triage", Triage, GenerationSettings(max_tokens=40), max_repairs=0)

        with pytest.raises(StructuredOutputError) as failure:
            asyncio.run(run())
    assert "cut at" not in str(failure.value)
