"""The discharge task's option schemas (see :mod:`bedside.runs.options`): what a config may set, with defaults."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from bedside.runs.options import Options
from bedside.sim.fidelity_options import FidelityOptions

ExamSetting = Literal["dialogue", "summary", "none"]
JudgeName = Literal["conversation", "coverage", "strategy", "summary_a", "summary_b"]
ProfilesSpec = Literal["one_at_a_time", "grid", "none", "literacy", "education", "emotion"] | list[dict[str, str]]


class DatasetOptions(Options):
    format: Literal["bedside", "osce", "mimic"] | None = Field(None, description="default bedside JSONL")
    notes: str | None = Field(None, description="the DischargeSim release's notes file")
    questions: str | None = Field(None, description="format mimic: the exam questions CSV")
    patients: str | None = Field(None, description="format mimic: optional patients.csv (age, sex)")
    summaries: str | None = Field(None, description="format mimic: optional reference summaries JSONL")
    columns: dict[str, dict[str, str]] | None = Field(None, description="format mimic: per file, field -> column")
    profiles: ProfilesSpec = Field("one_at_a_time", description="profile conditions, or a list of {dimension: level}")


class SystemOptions(FidelityOptions):
    schedule: Literal["paper", "reference", "demo"] = "paper"
    prompt_style: Literal["chat", "blob"] | None = Field(None, description="default by schedule")
    documents_from: Literal["note_and_dialogue", "dialogue"] | None = Field(None, description="default by schedule")
    cut_note: bool | None = Field(None, description="default by schedule")
    checklist_schema: Literal["bedside", "reference"] | None = Field(None, description="default by schedule")
    max_doctor_messages: int | None = Field(None, ge=1, description="default by schedule")
    exam: ExamSetting | list[ExamSetting] = Field(default_factory=lambda: list(get_args(ExamSetting)))
    exam_questions: int | None = Field(None, ge=1, description="each case's first N questions (default all)")
    judges: JudgeName | list[JudgeName] = Field(default_factory=lambda: list(get_args(JudgeName)))
    judge_profile: bool = False
    judge_max_repairs: int = Field(2, ge=0, description="re-asks of a judge's malformed answer")
    documents: bool = True
    documents_max_tokens: int | None = Field(None, ge=1, description="default 1500")
    max_repairs: int = Field(2, ge=0, description="re-asks of a malformed checklist or summary")
