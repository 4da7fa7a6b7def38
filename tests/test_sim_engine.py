"""The shared simulation engine against the scripted server: stage order, caps, signals, ends, replay, fidelity."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bedside.llm import ChatMessage, StructuredOutputError, get_model
from bedside.llm.scripted_server import ScriptedServer
from bedside.runs.task import SampleContext, Turn
from bedside.sim import (
    STAY,
    ConversationState,
    Decision,
    Knowledge,
    Simulation,
    SimulationError,
    Stage,
    Utterance,
)
from bedside.sim.fidelity import check_fidelity


class Clinician:
    """Says which stage it is in; signals an advance on the message numbers listed in ``signal_on``."""

    def __init__(self, signal_on: Sequence[int] = (), end_on: Sequence[int] = ()) -> None:
        self.signal_on = set(signal_on)
        self.end_on = set(end_on)

    async def speak(self, state: ConversationState, context: SampleContext) -> Utterance:
        number = state.clinician_messages + 1
        history = [f"{t.role}: {t.content}" for t in state.turns]
        prompt = f"stage={state.stage.id} n={number}\n" + "\n".join(history)
        completion = await context.generate("system", prompt)
        raw = (
            completion.text + (" NEXT" if number in self.signal_on else "") + (" END" if number in self.end_on else "")
        )
        control = {"advance": " NEXT" in raw, "end": " END" in raw}
        return Utterance(text=raw.replace(" NEXT", "").replace(" END", ""), raw=raw, control=control)


class Patient:
    def __init__(self, fail_after: int | None = None) -> None:
        self.fail_after = fail_after
        self.seen: list[str] = []

    async def speak(self, state: ConversationState, context: SampleContext) -> Utterance:
        if self.fail_after is not None and state.clinician_messages > self.fail_after:
            raise RuntimeError("interrupted")
        prompt = "patient answering: " + " | ".join(t.content for t in state.turns)
        self.seen.append(prompt)
        completion = await context.generate("patient", prompt)
        return Utterance(text=completion.text)


def doctor_rules(messages: Sequence[ChatMessage]) -> str:
    text = messages[-1].content
    if text.startswith("patient answering"):
        return "I see, thank you."
    found = re.match(r"stage=(\w+) n=(\d+)", text)
    assert found, text
    return f"Doctor message {found.group(2)} about {found.group(1)}."


def run_sim(
    server: ScriptedServer,
    simulation: Simulation,
    *,
    cache: Path | None = None,
    knowledge: dict[str, Knowledge] | None = None,
) -> tuple[Any, SampleContext]:
    async def main() -> tuple[Any, SampleContext]:
        system = get_model(server.model_name("doctor"), role="system", cache=cache)
        patient = get_model(server.model_name("patient"), role="patient", cache=cache)
        context = SampleContext({"system": system, "patient": patient}, {}, "0", 7)
        try:
            conversation = await simulation.run(context, sample_id="s1", knowledge=knowledge)  # type: ignore[arg-type]
            return conversation, context
        finally:
            await system.aclose()
            await patient.aclose()

    return asyncio.run(main())


STAGES = (Stage("a", cap=2), Stage("b", cap=3), Stage("c", cap=1))


def stages_of(conversation: Any) -> list[str]:
    return [t.stage for t in conversation.transcript if t.role == "clinician"]


@pytest.mark.scripted_server(rules=doctor_rules)
def test_caps_count_clinician_messages_per_stage_and_the_last_stage_completes(scripted_server: ScriptedServer) -> None:
    conversation, context = run_sim(scripted_server, Simulation(STAGES, Clinician(), Patient(), 20))
    assert stages_of(conversation) == ["a", "a", "b", "b", "b", "c"]
    assert conversation.termination == "completed"
    assert conversation.stages_reached == ["a", "b", "c"]
    # the patient answers every clinician message but the last
    assert [t.role for t in conversation.transcript[-2:]] == ["patient", "clinician"]
    assert context.usage["patient"].calls == 5
    assert [e["decision"]["source"] for e in conversation.trace] == [None, None, "cap", None, None, "cap"]
    assert all(e["forced"] == (e["decision"]["source"] == "cap") for e in conversation.trace)
    # calls per exchange, by role: one clinician and one patient call, none for the final message's patient
    assert conversation.trace[0]["calls"] == {
        "system": {"calls": 1, "cache_hits": 0},
        "patient": {"calls": 1, "cache_hits": 0},
    }
    assert conversation.trace[-1]["calls"] == {"system": {"calls": 1, "cache_hits": 0}}


@pytest.mark.scripted_server(rules=doctor_rules)
def test_a_signal_moves_the_next_message_and_is_stripped_from_what_the_patient_sees(
    scripted_server: ScriptedServer,
) -> None:
    patient = Patient()
    conversation, _ = run_sim(scripted_server, Simulation(STAGES, Clinician(signal_on=[1]), patient, 20))
    assert stages_of(conversation) == ["a", "b", "b", "b", "c"]
    assert conversation.trace[1]["decision"] == {"advance": True, "source": "agent", "forced": False}
    assert conversation.trace[0]["raw"].endswith(" NEXT")
    assert all("NEXT" not in t.content for t in conversation.transcript)
    assert all("NEXT" not in seen for seen in patient.seen)


@pytest.mark.scripted_server(rules=doctor_rules)
def test_a_signal_and_a_cap_on_the_same_message_still_give_every_stage_a_message(
    scripted_server: ScriptedServer,
) -> None:
    # message 2 uses up stage a's cap and signals: one move, so stage b is not skipped
    conversation, _ = run_sim(scripted_server, Simulation(STAGES, Clinician(signal_on=[2]), Patient(), 20))
    assert stages_of(conversation)[:3] == ["a", "a", "b"]


@pytest.mark.scripted_server(rules=doctor_rules)
def test_an_uncapped_stage_without_a_signal_runs_to_the_hard_limit(scripted_server: ScriptedServer) -> None:
    stages = (Stage("a", cap=1), Stage("open", cap=None), Stage("close", cap=1))
    conversation, context = run_sim(scripted_server, Simulation(stages, Clinician(), Patient(), 6))
    assert stages_of(conversation) == ["a", "open", "open", "open", "open", "open"]
    assert conversation.termination == "hard_limit"
    assert conversation.clinician_messages == 6
    assert context.usage["patient"].calls == 5  # the final message goes unanswered


@pytest.mark.scripted_server(rules=doctor_rules)
def test_the_clinician_can_end_the_conversation(scripted_server: ScriptedServer) -> None:
    stages = (Stage("a", cap=None),)
    conversation, _ = run_sim(scripted_server, Simulation(stages, Clinician(end_on=[3]), Patient(), 10))
    assert conversation.termination == "completed"
    assert conversation.clinician_messages == 3


@pytest.mark.scripted_server(rules=doctor_rules)
def test_the_patient_can_open(scripted_server: ScriptedServer) -> None:
    conversation, _ = run_sim(scripted_server, Simulation(STAGES, Clinician(), Patient(), 20, opener="patient"))
    first = conversation.transcript[0]
    assert (first.role, first.stage) == ("patient", "a")
    assert conversation.transcript[1].role == "clinician"


class Jumper:
    """Ends, jumps or stays by message number: a stand-in for a task's own policy (e.g. stagnation)."""

    def __init__(self, plan: dict[int, Decision]) -> None:
        self.plan = plan

    async def decide(self, state: ConversationState, context: SampleContext) -> Decision:
        return self.plan.get(state.clinician_messages, STAY)


@pytest.mark.scripted_server(rules=doctor_rules)
def test_a_policy_can_jump_forward_and_end_early(scripted_server: ScriptedServer) -> None:
    policy = Jumper({1: Decision(to_stage="c", source="limit", forced=True)})
    conversation, _ = run_sim(scripted_server, Simulation(STAGES, Clinician(), Patient(), 20, policy=policy))
    assert stages_of(conversation) == ["a", "c"]
    assert conversation.stages_reached == ["a", "c"]

    policy = Jumper({2: Decision(end="stagnation_end", source="stagnation", forced=True)})
    conversation, _ = run_sim(scripted_server, Simulation(STAGES, Clinician(), Patient(), 20, policy=policy))
    assert conversation.termination == "stagnation_end"
    assert conversation.clinician_messages == 2
    assert conversation.trace[-1]["ended"] == "stagnation_end"


@pytest.mark.scripted_server(rules=doctor_rules)
def test_stages_never_move_back(scripted_server: ScriptedServer) -> None:
    policy = Jumper({1: Decision(to_stage="b", source="x"), 3: Decision(to_stage="a", source="x")})
    with pytest.raises(SimulationError, match="only move forward"):
        run_sim(scripted_server, Simulation(STAGES, Clinician(), Patient(), 20, policy=policy))


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(SimulationError, match="cap must be at least 1"):
        Stage("a", cap=0)
    with pytest.raises(SimulationError, match="repeat"):
        Simulation((Stage("a"), Stage("a")), Clinician(), Patient(), 5)
    with pytest.raises(SimulationError, match="at least one stage"):
        Simulation((), Clinician(), Patient(), 5)


@pytest.mark.scripted_server(rules=doctor_rules)
def test_a_rerun_and_an_interrupted_conversation_replay_from_the_cache(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    simulation = Simulation(STAGES, Clinician(), Patient(), 20)
    first, _ = run_sim(scripted_server, simulation, cache=tmp_path / "full.sqlite")
    full_requests = scripted_server.stats()["requests"]
    assert full_requests == 11

    scripted_server.reset()
    again, context = run_sim(scripted_server, simulation, cache=tmp_path / "full.sqlite")
    assert scripted_server.stats()["requests"] == 0
    assert again.transcript == first.transcript
    assert context.usage["system"].cache_hits == 6

    # interrupted after three exchanges, then resumed: only the rest is asked for
    scripted_server.reset()
    broken = Simulation(STAGES, Clinician(), Patient(fail_after=3), 20)
    with pytest.raises(RuntimeError, match="interrupted"):
        run_sim(scripted_server, broken, cache=tmp_path / "resume.sqlite")
    asked_before = scripted_server.stats()["requests"]
    assert asked_before == 7  # three exchanges and the fourth clinician message
    scripted_server.reset()
    resumed, _ = run_sim(scripted_server, simulation, cache=tmp_path / "resume.sqlite")
    assert scripted_server.stats()["requests"] == full_requests - asked_before
    assert resumed.transcript == first.transcript


def test_the_seeded_generator_depends_on_sample_epoch_and_message() -> None:
    def state(**kwargs: Any) -> ConversationState:
        values: dict[str, Any] = {"stages": STAGES, "sample_id": "s", "seed": 0, "epoch": "0", **kwargs}
        return ConversationState(**values)

    assert state().rng("x").random() == state().rng("x").random()
    assert state().rng("x").random() != state(sample_id="t").rng("x").random()
    assert state().rng("x").random() != state(epoch="1").rng("x").random()
    assert state().rng("x").random() != state(clinician_messages=1).rng("x").random()
    assert state().rng("x").random() != state().rng("y").random()


def fidelity_rules(messages: Sequence[ChatMessage]) -> str:
    text = messages[-1].content
    numbered = re.findall(r"^\d+\. (.*)$", text.split("## The patient's latest message")[1], re.MULTILINE)
    labels = []
    for sentence in numbered:
        if "metoprolol" in sentence and "metoprolol" in text.split("## What the clinician said earlier")[1]:
            labels.append("entailed")
        elif "three kids" in sentence:
            labels.append("unsupported")
        elif "no diabetes" in sentence:
            labels.append("contradicted")
        elif "chest pain" in sentence:
            labels.append("entailed")
        else:
            labels.append("non_informative")
    return json.dumps({"labels": labels})


@pytest.mark.scripted_server(rules=fidelity_rules)
def test_fidelity_labels_each_patient_sentence_and_counts_what_the_clinician_said_as_known(
    scripted_server: ScriptedServer,
) -> None:
    transcript = [
        Turn(role="clinician", content="You will take metoprolol twice a day.", stage="meds"),
        Turn(role="patient", content="So metoprolol twice a day? Thank you.", stage="meds"),
        Turn(role="clinician", content="Any questions?", stage="close"),
        Turn(
            role="patient", content="I came in with chest pain. I have three kids. I have no diabetes.", stage="close"
        ),
    ]
    knowledge = Knowledge(("I came in with chest pain.", "I have type 2 diabetes."), {"literacy": "low"})

    async def main() -> Any:
        async with get_model(scripted_server.model_name("judge"), role="judge") as judge:
            context = SampleContext({"judge": judge}, {}, "0", 0)
            return await check_fidelity(transcript, knowledge, context), context

    report, context = asyncio.run(main())
    assert [s.label for s in report.sentences] == [
        "entailed", "non_informative", "entailed", "unsupported", "contradicted",
    ]  # fmt: skip
    assert report.counts == {"non_informative": 1, "entailed": 2, "contradicted": 1, "unsupported": 1, "uncertain": 0}
    assert report.rate("unsupported") == pytest.approx(1 / 4)
    assert report.by_stage()["close"]["unsupported"] == 1
    assert context.usage["judge"].calls == 2  # one call per patient turn
    system, *_, user = scripted_server.recent[-1]["messages"]
    assert "metoprolol" in user["content"]
    assert "type 2 diabetes" in user["content"]
    assert "literacy: low" in system["content"]
    assert type(report).from_dict(report.as_dict()) == report


@pytest.mark.scripted_server(rules={".*": '{"labels": ["entailed"]}'})
def test_fidelity_re_asks_when_the_label_count_is_wrong_then_fails(scripted_server: ScriptedServer) -> None:
    transcript = [Turn(role="patient", content="I have pain. It is bad.", stage="a")]

    async def main() -> Any:
        async with get_model(scripted_server.model_name("judge"), role="judge") as judge:
            context = SampleContext({"judge": judge}, {}, "0", 0)
            return await check_fidelity(transcript, Knowledge(("pain",)), context, max_repairs=1)

    with pytest.raises(StructuredOutputError):
        asyncio.run(main())
    assert scripted_server.stats()["requests"] == 2
