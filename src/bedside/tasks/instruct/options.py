"""The instruct task's option schemas (see :mod:`bedside.runs.options`): what a config may set, with defaults."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bedside.records.fit import DEFAULT_RESERVE
from bedside.runs.options import Options


class DatasetOptions(Options):
    records: str | None = Field(None, description="records JSONL or folder (default the demo cohort)")
    columns: dict[str, str] | None = Field(None, description="a release TSV's column map")
    quoting: Literal["csv", "none"] = "csv"
    references: Literal["primary", "all"] = "primary"


class SystemOptions(Options):
    context: int = Field(2048, ge=1, description="the context length in tokens")
    tokenizer: str | None = Field(
        None, description="budget tokenizer (default: the embedded model's, or chars:3 for another endpoint)"
    )
    reserve: int = Field(DEFAULT_RESERVE, ge=1, description="tokens kept for the answer")
    view: Literal["paper", "timeline"] = "paper"
    system_prompt: str | None = None
    overhead: int | None = Field(None, ge=0)
    template: str | None = None
    judge: bool = Field(False, description="also run the medalign_correctness rubric")
    judge_record_tokens: int = Field(1024, ge=1)


class RefineOptions(SystemOptions):
    templates: dict[str, str] | None = Field(None, description="'first' and 'next' prompts")


class RagOptions(SystemOptions):
    k: int | None = Field(None, ge=1, description="chunks kept (default all that fit)")
    window: int = Field(256, ge=1, description="chunk size in tokens")
