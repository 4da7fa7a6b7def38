"""The sensemaker's six stages, their caps and the texts its prompts show (``data/stages.yaml``).

Caps are the most sensemaker messages a stage may hold, as the reference runs them: its counter of STAY
decisions forces a move at 4, which allows 5 messages in a stage entered by a move and 4 in Fostering (whose
first decision is taken on the patient's opening message, before any Fostering message). Providing Information
and Exit hold exactly one. bedside restarts the count at *every* stage change, a stagnation advance included
(the reference forgets to after a stagnation advance, which can cut a later stage short).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from bedside.sim import Stage

STAGE_DATA = Path(__file__).parent / "data" / "stages.yaml"
FOSTERING, GATHERING, PROVIDING, DECIDING, EMOTIONS, EXIT = (
    "fostering",
    "gathering",
    "providing_information",
    "decision_making",
    "responding_to_emotions",
    "exit",
)
CLOSED_WORLD = frozenset({FOSTERING, GATHERING, PROVIDING})  # the patient's facts-only rule holds here
NO_FACT_MINING = frozenset({PROVIDING, EXIT})  # the reply to these messages is not mined for facts


@dataclass(frozen=True)
class StageInfo:
    id: str
    title: str
    cap: int
    goal: str
    examples: tuple[str, ...]
    next: str


@lru_cache(maxsize=1)
def stage_infos() -> tuple[StageInfo, ...]:
    with STAGE_DATA.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    infos = tuple(
        StageInfo(s["id"], s["title"], int(s["cap"]), s["goal"], tuple(s["examples"]), s["next"])
        for s in data["stages"]
    )
    ids = [s.id for s in infos]
    if ids != [FOSTERING, GATHERING, PROVIDING, DECIDING, EMOTIONS, EXIT]:
        raise ValueError(f"{STAGE_DATA}: the stages must be the six sensemaking stages in order, got {ids}")
    return infos


def info(stage_id: str) -> StageInfo:
    return next(s for s in stage_infos() if s.id == stage_id)


def sim_stages() -> tuple[Stage, ...]:
    return tuple(Stage(s.id, cap=s.cap) for s in stage_infos())


def stage_after(stage_id: str) -> str | None:
    ids = [s.id for s in stage_infos()]
    index = ids.index(stage_id)
    return ids[index + 1] if index + 1 < len(ids) else None


def index_of(stage_id: str) -> int:
    return [s.id for s in stage_infos()].index(stage_id)
