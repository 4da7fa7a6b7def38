"""The drafting task's option schemas (see :mod:`bedside.runs.options`): what a config may set, with defaults."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from bedside.runs.options import Options


class DatasetOptions(Options):
    columns: dict[str, str] | None = Field(None, description="a flat table's column map")
    records: str | None = Field(None, description="records to render chart summaries from")
    format: Literal["auto", "syppm"] | None = Field(None, description="cases format (default auto)")
    clinician: str | None = Field(None, description="keep only this clinician's replies")


class SystemOptions(Options):
    """The evaluation options every drafting system takes (EditJudge inside the sample)."""

    template: str | None = Field(None, description="the drafting prompt template")
    evaluate: bool = Field(True, description="score the draft with EditJudge")
    matcher: Literal["embedding", "lexical", "trained", "llm"] = "embedding"
    themes: Literal["offline", "llm"] = "offline"
    threshold: float | None = Field(
        None, ge=0.0, le=1.0, allow_inf_nan=False, description="an offline matcher's threshold, a similarity in 0-1"
    )
    guard: Literal["reject", "flag", "off"] = Field("reject", description="the clinical-safety guard")
    uncertain: Literal["keep", "reject"] = Field(
        "keep",
        description="a match the guard cannot vouch for, with no verifier: keep it (marked uncertain) or reject it",
    )
    verify: bool = Field(False, description="ask the judge role to decide the pairs the guard calls uncertain")
    verify_scope: Literal["uncertain", "all"] = Field(
        "uncertain",
        description="with verify: the pairs the judge decides, those the guard calls uncertain or every match "
        "its rules let through (one judge call per matched pair)",
    )
    verifier_template: str | None = Field(None, description="the verifier's prompt (default judges/same_meaning.j2)")
    judge_template: str | None = Field(None, description="the llm matcher's prompt")
    min_content_share: float | None = Field(None, ge=0, le=1, description="the llm matcher's (default 0.25)")
    matcher_model: str | None = Field(None, description="a trained matcher's .npz")
    theme_source: Literal["classifier", "boxes"] = "classifier"

    @model_validator(mode="after")
    def _scope_needs_verify(self) -> Self:
        # Caught at `config check`: a scope with no verifier would change nothing, silently.
        if self.verify_scope != "uncertain" and not self.verify:
            raise ValueError(
                f"verify_scope: {self.verify_scope} says which pairs the verifier decides: set verify: true"
            )
        return self


class RagOptions(SystemOptions):
    pool: str | None = Field(None, description="cases with clinician replies, or 'demo' (required)")
    pool_columns: dict[str, str] | None = None
    pool_records: str | None = None
    pool_format: Literal["auto", "syppm"] | None = None
    k: int = Field(5, ge=1, description="examples retrieved")


class ClinicianRagOptions(RagOptions):
    clinician: str | None = Field(None, description="default: the case's first replying clinician")
