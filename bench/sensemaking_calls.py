"""What a simulated sensemaking exchange costs, on both sensemaker paths: model calls and HTTP requests.

Prints, measured in one run against the scripted server (no model), for the ``reference`` path (the reference
code's calls) and the ``efficient`` path (≤ 4 calls per exchange computing the same steps): logical calls and
HTTP requests per exchange, mean and max, by exchange kind:

* ``first``: the patient's opening message + the sensemaker's first message + the patient's reply;
* ``ordinary``: the sensemaker processes a reply in stages 1, 2, 4 or 5, sends a message, the patient answers;
* ``after PI``: the exchange after the Providing Information message (no fact mining, no stage call);
* ``cap-forced``: the stage's cap forced the move;
* ``stagnation``: every candidate was redundant, the next stage's were used;
* ``exit``: the exit message (no patient reply).

Goal: efficient ≤ 4 in every kind; the reference makes 7 per ordinary exchange and 9 with a stagnation.
Usage: ``python bench/sensemaking_calls.py``
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from bedside.llm import ROLES, Model, Role, get_model
from bedside.llm.scripted_server import ScriptedServer
from bedside.runs.config import DatasetConfig
from bedside.runs.task import SampleContext
from bedside.tasks.sensemaking.task import TASK
from bedside.testing.scripted_answers import SensemakingScript

GOAL = 4
# Drives one conversation through every exchange kind: two stays in Gathering, the cap in Decision Making, and a
# stagnation when moving to Responding to Emotions the first time.
SCRIPTS: dict[str, Callable[[], SensemakingScript]] = {
    "gathering stays, cap in Decision Making": lambda: SensemakingScript(stays={"gathering": 2, "decision_making": 99}),
    "stagnation in Fostering": lambda: SensemakingScript(stays={"fostering": 2}, redundant=_once_redundant()),
}


def _once_redundant() -> Any:
    seen = {"n": 0}

    def redundant(stage: str) -> bool:
        if stage == "fostering":
            seen["n"] += 1
            return seen["n"] > 3  # the second Fostering round: every candidate repeats
        return False

    return redundant


def kind_of(index: int, entry: dict[str, Any]) -> str:
    decision = entry["decision"]
    if entry.get("ended"):
        return "end"
    if entry.get("stage") == "exit":
        return "exit"
    if index == 0:
        return "first"
    if decision.get("stagnation"):
        return "stagnation"
    if decision.get("source") == "stage_rule":
        return "after PI"
    if decision.get("source") == "cap":
        return "cap-forced"
    return "ordinary"


def measure(path: str, script: SensemakingScript) -> tuple[dict[str, list[int]], int, int]:
    """Calls per exchange by kind, and the conversation's total logical calls and HTTP requests."""
    with ScriptedServer(rules=script) as server:

        async def simulate() -> Any:
            models: dict[Role, Model] = {r: get_model(server.model_name(r), role=r) for r in ROLES}
            context = SampleContext(models, {}, "0", 0)
            sample = TASK.load("synthetic", DatasetConfig(options={"personas": ["openness-basic"], "cases": 1}))[0]
            try:
                return await TASK.systems["medagent"](sample, {"path": path, "judges": [], "fidelity": False}, context)
            finally:
                for model in models.values():
                    await model.aclose()

        output = asyncio.run(simulate())
        http = int(server.stats()["requests"])
    by_kind: dict[str, list[int]] = defaultdict(list)
    total = 0
    for index, entry in enumerate(output.trace or []):
        calls = sum(c["calls"] for c in entry.get("calls", {}).values())
        total += calls
        kind = kind_of(index, entry)
        by_kind[kind].append(calls - 1 if kind == "first" else calls)  # the one-off opening call apart
    return by_kind, total, http


def main() -> None:
    print("model calls per exchange by kind, against the scripted server (no cache)")
    print(f"{'path':10} {'kind':22} {'n':>3} {'mean':>6} {'max':>4}")
    worst: dict[str, int] = {}
    for path in ("reference", "efficient"):
        merged: dict[str, list[int]] = defaultdict(list)
        calls = http = 0
        for make in SCRIPTS.values():
            by_kind, total, requests = measure(path, make())
            calls, http = calls + total, http + requests
            for kind, values in by_kind.items():
                merged[kind].extend(values)
        for kind in ("first", "ordinary", "after PI", "cap-forced", "stagnation", "exit"):
            values = merged.get(kind, [])
            if not values:
                continue
            label = "first (opening apart)" if kind == "first" else kind
            print(f"{path:10} {label:22} {len(values):3d} {sum(values) / len(values):6.2f} {max(values):4d}")
            worst[path] = max(worst.get(path, 0), max(values))
        print(f"{path:10} {'total: calls / HTTP':22} {calls:d} / {http:d}")
    print(
        f"efficient path: at most {worst['efficient']} calls in any exchange (goal ≤ {GOAL}); "
        f"reference at most {worst['reference']}; ratio {worst['reference'] / worst['efficient']:.2f}"
    )


if __name__ == "__main__":
    main()
