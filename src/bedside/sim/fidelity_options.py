"""The fidelity check's task options, shared by every task that simulates a patient (discharge, sensemaking).

Kept apart from :mod:`bedside.sim.fidelity` so that listing a task's options imports no checker."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from bedside.runs.options import Options


class FidelityOptions(Options):
    fidelity: bool = True
    fidelity_checker: Literal["llm", "embedding", "combined"] = "llm"
    fidelity_prefilter: float | None = Field(None, description="a cosine")
    fidelity_verify: bool = Field(False, description="combined checker: ask the judge about uncertain sentences")

    @model_validator(mode="after")
    def _verify_needs_the_combined_checker(self) -> Self:
        # Caught at `config check`, not as an error in every sample's fidelity step.
        if self.fidelity_verify and self.fidelity_checker != "combined":
            raise ValueError(
                "fidelity_verify asks the judge about the sentences the combined checker leaves uncertain: "
                f"set fidelity_checker: combined (it is {self.fidelity_checker!r})"
            )
        return self
