"""A model asked the one question the clinical-safety guard's rules could not answer: same meaning or not.

The guard (:mod:`bedside.text.conflicts`) finds conflicts by rule and says *uncertain* where its rules cannot
vouch for a pair (:mod:`bedside.text.alignment`). Those pairs can be sent to a verifier: the user's own endpoint
with a fixed, overridable prompt (``judges/same_meaning.j2``) that asks for one word, SAME or DIFFERENT. With
``scope="all"`` the verifier also decides every pair the rules let through: a reversal of a kind no rule reads
passes the guard silently (the outside-written sets hold 4 to 12 of 60), and only a reader of the whole meaning
can refuse it, at one call per matched pair. An answer that is neither word leaves the pair uncertain (counted,
never read as a match); a failed call is the run's failure like any other model call, never a default answer.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from bedside.prompts import render_chat

if TYPE_CHECKING:
    from bedside.llm import ChatMessage, Completion

VERIFIER_TEMPLATE = "judges/same_meaning.j2"
VerifyScope = Literal["uncertain", "all"]
VERIFY_SCOPES: tuple[VerifyScope, ...] = ("uncertain", "all")
_ANSWER = re.compile(r"\W*(SAME|DIFFERENT)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    """The verifier's answer: ``same`` True or False, or None when it gave neither word (``answer`` is what it
    said, kept for review)."""

    same: bool | None
    answer: str


def read_verdict(answer: str) -> Verdict:
    """SAME or DIFFERENT at the start of ``answer`` (any case, after quotes or a bullet); anything else is no
    verdict."""
    found = _ANSWER.match(answer)
    if found is None:
        return Verdict(None, answer.strip())
    return Verdict(found.group(1).upper() == "SAME", answer.strip())


class MeaningVerifier:
    """Asks a model whether a draft sentence means what the clinician's does (``generate``: one chat in, one
    completion out). ``scope`` says which pairs the guard hands it: ``uncertain`` (those its rules cannot vouch
    for) or ``all`` (every pair its rules find no conflict in)."""

    def __init__(
        self,
        generate: Callable[[list[ChatMessage]], Awaitable[Completion]],
        *,
        template: str | Path = VERIFIER_TEMPLATE,
        scope: VerifyScope = "uncertain",
    ) -> None:
        if scope not in VERIFY_SCOPES:
            raise ValueError(f"verifier scope {scope!r}: choose one of {', '.join(VERIFY_SCOPES)}")
        self._generate = generate
        self.template = template
        self.scope = scope
        self.asked = 0
        """Pairs asked so far (a report says how much the verifier decided)."""
        self.undecided = 0
        """Of them, answered with neither word (left uncertain)."""

    async def verify(self, reference: str, candidate: str) -> Verdict:
        completion = await self._generate(render_chat(self.template, reference=reference, candidate=candidate))
        verdict = read_verdict(completion.text)
        self.asked += 1
        self.undecided += verdict.same is None
        return verdict


__all__ = ["VERIFIER_TEMPLATE", "VERIFY_SCOPES", "MeaningVerifier", "Verdict", "VerifyScope", "read_verdict"]
