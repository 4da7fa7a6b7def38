"""The sensemaking task's option schemas (see :mod:`bedside.runs.options`): what a config may set, with defaults."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from bedside.runs.options import Options
from bedside.sim.fidelity_options import FidelityOptions

JudgeName = Literal["susceptibility", "severity", "benefits", "flow", "hard", "soft"]


class DatasetOptions(Options):
    format: Literal["bedside", "mediq", "medagent_csv"] | None = Field(None, description="default bedside JSONL")
    columns: dict[str, str] | None = Field(None, description="format medagent_csv: field -> column")
    psych_index: str | None = Field(None, description="bedside's derived index file (mediq)")
    subset: Literal["strict", "union"] = "strict"
    cases: int | None = Field(None, ge=1, description="keep the first N cases")
    personas: str | list[str] | None = Field(None, description="'all' (default) or trait-literacy ids")


class SystemOptions(FidelityOptions):
    path: Literal["reference", "efficient"] = "reference"
    fold_mining: bool = True
    fold_decision: bool = True
    max_sensemaker_messages: int = Field(30, ge=1)
    vitals: Literal["rules", "llm"] = "rules"
    judges: JudgeName | list[JudgeName] = Field(default_factory=lambda: list(get_args(JudgeName)))
    judge_stage_labels: bool = False
    judge_max_repairs: int = Field(2, ge=0, description="re-asks of a judge's malformed answer")
