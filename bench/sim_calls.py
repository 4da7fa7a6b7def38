"""What a simulated discharge conversation costs: model calls and HTTP requests by role, and engine CPU.

Prints, measured in one run on this machine:

* for one whole DischargeSim sample against the scripted server (``paper`` schedule, a doctor that signals after
  two messages per stage): the exchanges, then logical calls, cache hits and HTTP requests by role, per
  conversation and per exchange, split into the conversation itself and the steps after it (documents, exam,
  judges, fidelity) — the numbers to multiply by a grid to budget a run;
* the engine's own CPU per exchange — goal < 2 ms — with agents that answer instantly (no model, no template),
  so nothing but the loop, the decisions, the transcript and the trace is measured; and, beside it, the CPU per
  exchange of the discharge agents (templates, text cleaning) over the in-process scripted provider, as a ratio.

Usage: ``python bench/sim_calls.py [--conversations 200]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from collections.abc import Sequence
from typing import Any

from bedside.llm import ROLES, ChatMessage, Model, Role, UsageLedger, get_model
from bedside.llm.scripted_server import ScriptedServer
from bedside.runs.task import SampleContext
from bedside.sim import ConversationState, Simulation, Stage, Utterance
from bedside.tasks.discharge.cases import DischargeCase
from bedside.tasks.discharge.judging import JUDGES
from bedside.tasks.discharge.schedules import STAGE_IDS, get_schedule
from bedside.tasks.discharge.task import SYNTHETIC_CASES, TASK

GOAL_MS = 2.0


def case() -> DischargeCase:
    return DischargeCase.model_validate_json(SYNTHETIC_CASES.read_text(encoding="utf-8").splitlines()[0])


def rules(messages: Sequence[ChatMessage]) -> str:
    """Valid answers for every call of a sample, told apart by their system prompts."""
    from bedside.judges import load_rubric

    system = messages[0].content
    user = messages[-1].content
    if "hospital doctor talking" in system:
        if "Bring the conversation to a close" in system:
            return "Goodbye. FINISHED SIMULATION"
        said = sum(m.content.count("(doctor)") for m in messages[1:])
        return "I will explain this part (doctor)." + (" NEXT STAGE" if said % 2 else "")
    if "You are a patient in the hospital" in system:
        return "Okay, thank you."
    if "take-home checklist" in system:
        return json.dumps(
            {"diagnosis": "x", "tests_and_treatments": [], "warning_signs": ["fever"], "medicines": [],
             "activities": [], "diet": [], "appointments": [], "pending_tests": []}
        )  # fmt: skip
    if "discharge summary in" in system:
        return json.dumps(
            {"discharge_medications": "as listed", "discharge_diagnosis": {"primary": "x", "secondary": ""},
             "discharge_condition": {"mental_status": "", "level_of_consciousness": "", "activity_status": ""},
             "discharge_instructions": "rest", "followup_instructions": "see your doctor"}
        )  # fmt: skip
    if "just left the hospital" in system:
        return '{"answer": "A"}'
    if "discharge checklist against" in system:
        return json.dumps({"consistent": [True] * len(re.findall(r"^\d+\. Area:", user, re.MULTILINE))})
    if "audit a simulated patient" in system:
        part = user.split("one sentence per line")[1]
        return json.dumps({"labels": ["non_informative"] * len(re.findall(r"^\d+\. ", part, re.MULTILINE))})
    for rubric_id in JUDGES.values():
        rubric = load_rubric(rubric_id)
        if all(f'"{c.name}"' in system for c in rubric.criteria):
            evidence = {
                "quote": {"quote": "x", "supports": True},
                "snippet": {"snippet": "N/A", "addresses": False, "issue": "omitted"},
                "pair": {"summary_span": "rest", "reference_span": "N/A", "match": False, "issue": "hallucinated"},
            }[rubric.evidence_kind]
            justification = "The doctor explained this point clearly and specifically for this patient today."
            return json.dumps(
                {
                    c.name: {"score": 3.0, "justification": justification, "evidence": [evidence]}
                    for c in rubric.criteria
                }
            )
    raise ValueError(f"unexpected call: {system[:80]}")


def calls_per_sample() -> None:
    with ScriptedServer(rules=rules) as server:

        async def main() -> tuple[Any, SampleContext, dict[str, int]]:
            ledger = UsageLedger()
            models: dict[Role, Model] = {r: get_model(server.model_name(r), role=r, usage=ledger) for r in ROLES}
            context = SampleContext(models, {}, "0", 0)
            sample = TASK.load("synthetic", _dataset())[0]
            try:
                output = await TASK.systems["dischargesim"](sample, {"schedule": "paper"}, context)
            finally:
                for model in models.values():
                    await model.aclose()
            requests: dict[str, int] = {role: usage.requests for role, usage in ledger.snapshot().items()}
            assert sum(requests.values()) == server.stats()["requests"]
            return output, context, requests

        output, context, by_model = asyncio.run(main())
    trace = output.trace or []
    exchanges = len(trace)
    conversation: dict[str, list[int]] = {}
    for entry in trace:
        for role, counts in entry.get("calls", {}).items():
            tally = conversation.setdefault(role, [0, 0])
            tally[0] += counts["calls"]
            tally[1] += counts["cache_hits"]
    print(f"one DischargeSim sample (paper schedule, doctor signals every 2nd message): {exchanges} exchanges")
    print(f"{'role':8} {'calls':>6} {'hits':>5} {'HTTP':>5} {'in conv.':>9} {'per exch.':>9} {'after':>6}")
    for role, counts in sorted(context.usage.items()):
        in_conversation = conversation.get(role, [0, 0])[0]
        print(
            f"{role:8} {counts.calls:6d} {counts.cache_hits:5d} {by_model.get(role, 0):5d} {in_conversation:9d} "
            f"{in_conversation / exchanges:9.2f} {counts.calls - in_conversation:6d}"
        )


def _dataset() -> Any:
    from bedside.runs.config import DatasetConfig

    return DatasetConfig(options={"profiles": [{"emotion": "anxious"}]})


class InstantClinician:
    async def speak(self, state: ConversationState, context: SampleContext) -> Utterance:
        return Utterance(text="Here is what you need to know.", raw="Here is what you need to know. NEXT STAGE",
                         control={"advance": state.in_stage >= 1})  # fmt: skip


class InstantPatient:
    async def speak(self, state: ConversationState, context: SampleContext) -> Utterance:
        return Utterance(text="Okay.")


def engine_cpu(conversations: int) -> tuple[float, float]:
    stages = (*(Stage(s, 5) for s in STAGE_IDS), Stage("closing", 1))
    bare = Simulation(stages, InstantClinician(), InstantPatient(), 50)
    schedule = get_schedule("paper")
    from bedside.tasks.discharge.agents import Doctor, Patient

    the_case = case()
    real = Simulation(schedule.stages, Doctor(the_case), Patient(the_case, {"emotion": "anxious"}), 50,
                      policy=schedule.policy())  # fmt: skip

    async def drive(simulation: Simulation, context: SampleContext, n: int) -> tuple[float, int]:
        exchanges = 0
        start = time.process_time()
        for i in range(n):
            conversation = await simulation.run(context, sample_id=f"s{i}")
            exchanges += len(conversation.trace)
        return (time.process_time() - start) * 1000 / exchanges, exchanges

    async def main() -> tuple[float, float]:
        context = SampleContext({}, {}, "0", 0)
        bare_ms, _ = await drive(bare, context, conversations)

        def doctor(messages: Sequence[ChatMessage]) -> str:
            said = sum(1 for m in messages if m.role == "assistant")
            if "Bring the conversation to a close" in messages[0].content:
                return "Goodbye. FINISHED SIMULATION"
            return "Let me explain." + (" NEXT STAGE" if said % 2 else "")

        async with (
            get_model("scripted/doctor", options={"rules": doctor}) as d,
            get_model("scripted/patient", role="patient") as p,
        ):
            real_context = SampleContext({"system": d, "patient": p}, {}, "0", 0)
            real_ms, _ = await drive(real, real_context, max(1, conversations // 10))
        return bare_ms, real_ms

    return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=200)
    args = parser.parse_args()
    calls_per_sample()
    bare_ms, real_ms = engine_cpu(args.conversations)
    print(
        f"engine CPU per exchange (instant agents): {bare_ms:.3f} ms "
        f"(goal < {GOAL_MS} ms; ratio to the goal {bare_ms / GOAL_MS:.3f})"
    )
    print(
        f"discharge agents over the in-process scripted provider: {real_ms:.3f} ms per exchange "
        f"({real_ms / bare_ms:.1f} x the engine alone: templates, text cleaning and the model layer)"
    )


if __name__ == "__main__":
    main()
