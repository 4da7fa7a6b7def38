"""The simulation engine shared by the multi-turn tasks (discharge education, sensemaking): a staged conversation
loop between the system under test and a simulated patient, with per-role accounting through the sample's
context, a stage trace, cache replay, and a post-hoc check of the simulated patient's fidelity."""

from bedside.sim.engine import (
    STAY,
    TERMINATIONS,
    Agent,
    Conversation,
    ConversationState,
    Decision,
    SignalOrCap,
    Simulation,
    SimulationError,
    Stage,
    StagePolicy,
    Termination,
    Utterance,
    signal_or_cap,
)
from bedside.sim.knowledge import Knowledge

__all__ = [
    "STAY",
    "TERMINATIONS",
    "Agent",
    "Conversation",
    "ConversationState",
    "Decision",
    "Knowledge",
    "SignalOrCap",
    "Simulation",
    "SimulationError",
    "Stage",
    "StagePolicy",
    "Termination",
    "Utterance",
    "signal_or_cap",
]
