"""The paper's five LLM judges (Figs. 14–18), run on a finished conversation and its summary.

- ``conversation`` (J1, rubric ``discharge_conversation``): Language & Delivery and Human-Centred Communication in
  one call, as the paper does; L&D and HCC are the rubric's two group means.
- ``coverage`` (J2, ``discharge_content_coverage``) and ``strategy`` (J3, ``discharge_strategy``): six criteria each.
- ``summary_a`` (J4, ``discharge_summary_a``): the summary alone.
- ``summary_b`` (J5, ``discharge_summary_b``): the summary against the case's reference summary and the
  conversation; a case without a reference summary has no J5 score (absent, not zero).

Inputs as the spec chooses where the paper is silent: the conversation as ``Doctor:``/``Patient:`` lines with no
stage labels and the control tokens stripped; the ground truth is the full note. The profile-aware variants
(the patient's profile to J1 and J4, and the conversation to J4, which is the only way a judge can check the
literacy and emotion fit §3.2 asks of a summary) are opt-in (``judge_profile: true``). Set the judge's
temperature in the run's settings (the spec recommends 0).

Each judge call goes through the sample's context under the ``judge`` role, so it is cached and counted with
the sample; a judge that fails after its re-asks is that step's error, with its cause, never a score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bedside.runs.steps import judge_all
from bedside.runs.task import SampleContext

JUDGES: dict[str, str] = {
    "conversation": "discharge_conversation",
    "coverage": "discharge_content_coverage",
    "strategy": "discharge_strategy",
    "summary_a": "discharge_summary_a",
    "summary_b": "discharge_summary_b",
}
NEEDS_SUMMARY = frozenset({"summary_a", "summary_b"})

COVERAGE_CRITERIA = {  # the judge's criteria under the paper's Table 1 codes, in its column order
    "IRH": "return_indications",
    "MED": "medications",
    "DX": "diagnosis",
    "PDT": "post_discharge_care",
    "TDS": "hospital_course",
    "FU": "follow_up",
}
STRATEGY_CRITERIA = {
    "FR": "fostering_relationship",
    "GI": "gathering_information",
    "PI": "providing_information",
    "DM": "decision_making",
    "EBC": "enabling_behaviour_change",
    "RE": "responding_to_emotions",
}
SUMMARY_A_CRITERIA = {"FL": "fluency", "CO": "coherence", "INF": "informativeness", "PER": "personalisation"}
SUMMARY_B_CRITERIA = {"SC": "semantic_coverage", "FAC": "factuality", "REL": "relevance", "CON": "consistency"}


async def run_judges(
    names: Sequence[str],
    context: SampleContext,
    *,
    conversation: str,
    note: str,
    summary: str | None,
    reference_summary: str | None,
    profile_text: str = "",
    judge_profile: bool = False,
    max_repairs: int = 2,
) -> tuple[dict[str, dict[str, Any]], dict[str, str], dict[str, str]]:
    """(judge → stored judgement, judge → error with its cause, judge → why it did not run)."""
    unknown = sorted(set(names) - set(JUDGES))
    if unknown:
        raise ValueError(f"unknown judge(s) {', '.join(unknown)}; choose from {', '.join(JUDGES)}")
    inputs: dict[str, Mapping[str, str]] = {
        "conversation": {"conversation": conversation, "reference_note": note}
        | ({"patient_profile": profile_text} if judge_profile and profile_text else {}),
        "coverage": {"conversation": conversation, "reference_note": note},
        "strategy": {"conversation": conversation, "reference_note": note},
    }
    skipped: dict[str, str] = {}
    if summary is not None:
        inputs["summary_a"] = {"summary": summary} | (
            {"conversation": conversation} | ({"patient_profile": profile_text} if profile_text else {})
            if judge_profile
            else {}
        )
        if reference_summary:
            inputs["summary_b"] = {
                "summary": summary,
                "reference_summary": reference_summary,
                "conversation": conversation,
            }
        elif "summary_b" in names:
            skipped["summary_b"] = "not applicable: the case has no reference summary"

    for name in names:
        if name not in inputs and name not in skipped:
            skipped[name] = "skipped: there is no summary to judge"
    done, failed = await judge_all(
        JUDGES, {n: inputs[n] for n in names if n in inputs}, context, max_repairs=max_repairs
    )
    return done, failed, skipped
