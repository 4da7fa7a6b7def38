"""A discharge note parsed into the structure the doctor sees (§2.2), by a model under the ``helper`` role.

The paper does not describe its parser; bedside asks any model for JSON matching
:class:`~bedside.tasks.discharge.cases.DischargeStructure` (validated, re-asked with the reason on failure, then
a ``StructuredOutputError`` with its cause). The call goes through the response cache, so every system and model
of a run that parses the same note pays for it once. ``bedside discharge parse`` writes parsed cases to JSONL so
they can be read, corrected by a person and reused.
"""

from __future__ import annotations

from bedside.prompts import render_chat
from bedside.runs.task import SampleContext
from bedside.tasks.discharge.cases import DischargeCase, DischargeStructure


async def parse_note(case: DischargeCase, context: SampleContext, *, max_repairs: int = 2) -> DischargeCase:
    """``case`` with its structure filled from its note (unchanged when it already has one)."""
    if case.structure is not None:
        return case
    messages = render_chat("discharge/parse.j2", note=case.note)
    result = await context.generate_structured("helper", messages, DischargeStructure, max_repairs=max_repairs)
    return case.model_copy(update={"structure": result.value})
