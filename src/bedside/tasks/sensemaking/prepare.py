"""A case made ready to simulate: facts decomposed, vitals split, intent and goal assigned, diagnosis labelled.

Each missing piece is one ``helper``-role call through the sample's context (so it is cached: the ten persona
instances of a case share one decomposition, and a re-run sends nothing), answered as schema-validated JSON with
re-asks, never parsed from free text:

- decomposition of the vignette into patient facts and vital facts (the paper's one call, Table 17);
- for given facts without a split: ``vitals: rules`` (default, :func:`.cases.is_vital_fact`) or ``llm``;
- the intent and the goal, one call each on the raw case text, each naming one of the three options
  (Tables 18-19); a name outside the options is re-asked, never looked up loosely;
- the diagnosis, when the case has none: derived by the helper and marked unreviewed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from bedside.prompts import render_chat
from bedside.runs.task import SampleContext
from bedside.tasks.sensemaking.cases import Diagnosis, SensemakingCase, split_vitals
from bedside.tasks.sensemaking.personas import goals, intents

VitalsRule = Literal["rules", "llm"]


class _Decomposition(BaseModel):
    model_config = ConfigDict(extra="ignore")
    vital_facts: list[str]
    patient_facts: list[str] = Field(min_length=1)


class _VitalIds(BaseModel):
    model_config = ConfigDict(extra="ignore")
    vital_fact_numbers: list[int]


class _Derived(BaseModel):
    model_config = ConfigDict(extra="ignore")
    rationale: str
    diagnosis: str = Field(min_length=2)


def _choice_model(name: str, options: list[str]) -> type[BaseModel]:
    choice: Any = Literal[tuple(options)]
    return create_model(name, __config__=ConfigDict(extra="ignore"), rationale=(str, ...), choice=(choice, ...))


def _clean(facts: list[str]) -> list[str]:
    return [f.strip().lstrip("-•# ").strip() for f in facts if f.strip().lstrip("-•# ").strip()]


async def prepare_case(
    case: SensemakingCase, context: SampleContext, *, vitals: VitalsRule = "rules"
) -> SensemakingCase:
    """The case with every piece the simulation needs; raises the model layer's errors when a step fails."""
    update: dict[str, object] = {}
    facts, vital_facts = case.facts, case.vital_facts
    if facts is None:
        assert case.vignette is not None
        answer = await context.generate_structured(
            "helper", render_chat("sensemaking/decompose.j2", vignette=case.vignette), _Decomposition
        )
        facts, vital_facts = _clean(answer.value.patient_facts), _clean(answer.value.vital_facts)
    elif vital_facts is None:
        if vitals == "rules":
            facts, vital_facts = split_vitals(facts)
        else:
            facts, vital_facts = await _llm_vitals(facts, context)
    update["facts"], update["vital_facts"] = facts, vital_facts
    text = case.vignette or "\n".join(f"- {f}" for f in [*facts, *(vital_facts or [])])
    for field, options in (("intent", intents()), ("goal", goals())):
        if getattr(case, field) is None:
            model = _choice_model(f"{field.title()}Choice", list(options))
            chosen: Any = await context.generate_structured(
                "helper",
                render_chat("sensemaking/assign.j2", kind=field, case_text=text, options=options),
                model,
            )
            update[field] = chosen.value.choice
    if case.diagnosis is None:
        derived = await context.generate_structured(
            "helper", render_chat("sensemaking/diagnosis.j2", case_text=text), _Derived
        )
        update["diagnosis"] = Diagnosis(
            label=derived.value.diagnosis.strip(), provenance="derived", reviewed=False, note=derived.value.rationale
        )
    return case.model_copy(update=update)


async def _llm_vitals(facts: list[str], context: SampleContext) -> tuple[list[str], list[str]]:
    def check(value: _VitalIds) -> None:
        bad = [n for n in value.vital_fact_numbers if not 1 <= n <= len(facts)]
        if bad:
            raise ValueError(f"fact numbers must be between 1 and {len(facts)}; got {bad}")

    answer = await context.generate_structured(
        "helper", render_chat("sensemaking/vitals.j2", facts=facts), _VitalIds, check=check
    )
    chosen = set(answer.value.vital_fact_numbers)
    return (
        [f for i, f in enumerate(facts, 1) if i not in chosen],
        [f for i, f in enumerate(facts, 1) if i in chosen],
    )
