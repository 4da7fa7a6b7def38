"""Clinician judgements of model responses, as MedAlign collected them (Section 5).

Per instruction, each evaluator saw every model's response (blinded, shuffled) and gave each one a binary
correctness label and a rank (1 = best, ties allowed). A response is incorrect when at least one criterion holds:
C1 not clinically appropriate given the record, C2 contains errors that would change the clinical interpretation,
C3 does not address the instruction. The release carries only the binary label, so the C1-C3 flags are kept when
present and never required. ``provider_error`` marks a response that is an endpoint's error (MedAlign kept Azure
content-filter errors as the output and judged them incorrect), so analyses can also be run without them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator

CRITERIA = ("C1", "C2", "C3")
REVIEW_CRITERIA: tuple[tuple[str, str], ...] = (
    ("c1", "C1 not appropriate for the record"),
    ("c2", "C2 errors that change interpretation"),
    ("c3", "C3 does not address the instruction"),
)
"""The flags a rank review of instruct outputs shows beside each rank: (form key, our short wording)."""
PRIMARY_EVALUATOR = "Annotator_1"


class ResponseLabel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    instruction_id: str = Field(min_length=1)
    model: str = Field(min_length=1)
    response: str = ""
    evaluator: str = PRIMARY_EVALUATOR
    correct: StrictBool  # "yes" or "false" as text is a typo to name, not a value to guess
    rank: float | None = Field(default=None, ge=1)
    criteria: dict[str, StrictBool] = Field(default_factory=dict)  # criterion -> met (met makes it incorrect)
    provider_error: StrictBool = False
    # The specialty of the clinician who submitted the instruction, where the labels file carries it (the
    # release's reviewed file has it per row; Appendix J's breakdown needs it when the instructions file does not).
    submitter_specialty: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ResponseLabel:
        unknown = sorted(set(self.criteria) - set(CRITERIA))
        if unknown:
            raise ValueError(f"unknown criteria {', '.join(unknown)}; MedAlign's are {', '.join(CRITERIA)}")
        if self.criteria and any(self.criteria.values()) == self.correct:
            raise ValueError("a response meeting any of C1-C3 is incorrect, and one meeting none is correct")
        return self


def primary_labels(labels: list[ResponseLabel], evaluator: str = PRIMARY_EVALUATOR) -> list[ResponseLabel]:
    """The labels that enter the main tables: per instruction, the primary evaluator's where they judged it,
    else the single evaluator who did (bedside's choice for the triple-reviewed instructions, documented)."""
    by_instruction: dict[str, dict[str, list[ResponseLabel]]] = {}
    for label in labels:
        by_instruction.setdefault(label.instruction_id, {}).setdefault(label.evaluator, []).append(label)
    chosen: list[ResponseLabel] = []
    for instruction, evaluators in by_instruction.items():
        if evaluator in evaluators:
            chosen.extend(evaluators[evaluator])
        elif len(evaluators) == 1:
            chosen.extend(next(iter(evaluators.values())))
        else:
            raise ValueError(
                f"instruction {instruction}: several evaluators ({', '.join(sorted(evaluators))}) and none is "
                f"the primary one ({evaluator}); choose one with --evaluator"
            )
    return chosen
