"""The citeqa task's option schemas (see :mod:`bedside.runs.options`): what a config may set, with defaults."""

from __future__ import annotations

from pydantic import Field

from bedside.llm.types import Role
from bedside.runs.options import Options


class DatasetOptions(Options):
    key: str | None = Field(None, description="a key JSON for case XML")


class AnswerOptions(Options):
    """What every citeqa system takes: the answer step, its re-asks and its prompts."""

    max_repairs: int = Field(2, ge=0, description="re-asks after a rejected reply")
    fix_role: Role = Field("system", description="the role whose model reformats a rejected reply")
    fix_template: str | None = None
    word_limit: int = Field(75, ge=1)
    answer_examples: str | None = None


class OneStageOptions(AnswerOptions):
    template: str | None = Field(None, description="the one-stage prompt")


class TwoStageOptions(AnswerOptions):
    stage1_template: str | None = None
    stage1_examples: str | None = None
    stage2_template: str | None = None


class ClassifierOptions(AnswerOptions):
    stage2_template: str | None = None
    model: str | None = Field(None, description="a saved classifier .npz")
    train: str | None = Field(None, description="cases to fit on (default the synthetic ones)")
    train_key: str | None = None
