"""What one side of a simulation knows: a read-only list of facts and a profile.

The patient's knowledge is its memory of its own case (a masked view: what the task decides the patient may
know); the clinician's is what the system under test was given. The agents read it to build their prompts and
the fidelity checker reads it to decide whether what the patient said is grounded. Enforcing a closed world is
the task's job, not this object's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Knowledge:
    facts: tuple[str, ...]
    profile: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if any(not fact.strip() for fact in self.facts):
            raise ValueError("a fact must not be empty")

    def numbered(self) -> str:
        """The facts as a numbered list, for prompts."""
        return "\n".join(f"{i}. {fact}" for i, fact in enumerate(self.facts, 1))
