"""What a task plugs into the runner: samples in, outputs out, scores from outputs.

A task (``drafting``, ``citeqa``, ... or any ``package.module:attribute``) provides:

- ``load(name, dataset_config)`` → the samples of a dataset (each with an id unique within it);
- ``systems``: system type → an async callable ``(sample, options, context) -> Output``;
- ``default_scorers`` and, optionally, ``scorers`` (the names it scores itself), ``score(name, sample, output)``
  and ``scorer_texts`` (name → what that scorer reads, printed by config check and the report's methods note; a
  task that takes over a generic scorer's name must describe it, see :mod:`bedside.runs.scorers`), and
  ``headline_metric`` (the one metric a reader should look at first: the leaderboard's default and the report's
  sort key; without it, the first default scorer).

A sample is JSON-able data; an output is the text plus, for simulations, the whole transcript and a stage
trace. ``SampleContext`` hands systems their models by role and counts each sample's own usage, so a
multi-turn simulation's patient and judge calls are accounted for per sample as well as per run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from bedside.llm.model import Model, Structured
from bedside.llm.repetition import CUT_FINISH_REASONS, REPETITION
from bedside.llm.types import ChatMessage, Completion, GenerationSettings, Role
from bedside.runs.config import DatasetConfig

T = TypeVar("T", bound=BaseModel)


class Sample(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    inputs: dict[str, Any]
    references: list[str] = Field(default_factory=list)
    strata: dict[str, str] = Field(default_factory=dict)


class Turn(BaseModel):
    role: str
    content: str
    stage: str | None = None


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    transcript: list[Turn] | None = None
    trace: list[dict[str, Any]] | None = None
    prompts: list[list[ChatMessage]] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)


@dataclass
class RoleCounts:
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0  # from the model's price table; stays 0 for unpriced models
    truncated: int = 0  # answers cut off (max_tokens or the repetition guard): kept, scored, and counted
    repetitions: int = 0  # of those, the answers the repetition guard cut (finish_reason "repetition")


@dataclass
class SampleContext:
    """Models by role for one sample, with that sample's usage and the prompts it sent."""

    models: Mapping[Role, Model]
    settings: Mapping[Role, GenerationSettings]
    epoch: str
    seed: int
    usage: dict[str, RoleCounts] = field(default_factory=dict)
    prompts: list[list[ChatMessage]] = field(default_factory=list)

    def model(self, role: Role) -> Model:
        if role not in self.models:
            raise ValueError(f"this run configures no model for the {role!r} role (set models.{role})")
        return self.models[role]

    def record(self, role: Role, completion: Completion) -> None:
        """Count a completion got outside :meth:`generate` (e.g. by a judge object) in this sample's usage."""
        counts = self.usage.setdefault(role, RoleCounts())
        counts.calls += 1
        counts.cache_hits += completion.cached
        counts.truncated += completion.finish_reason in CUT_FINISH_REASONS
        counts.repetitions += completion.finish_reason == REPETITION
        if not completion.cached:
            counts.prompt_tokens += completion.usage.prompt_tokens
            counts.completion_tokens += completion.usage.completion_tokens
            price = self.models[role].config.price
            if price is not None:
                counts.cost += price.cost(completion.usage.prompt_tokens, completion.usage.completion_tokens)

    async def generate(self, role: Role, prompt: str | Sequence[ChatMessage], **kwargs: Any) -> Completion:
        """``Model.generate`` for ``role`` with this sample's epoch and the run's settings for the role."""
        settings = kwargs.pop("settings", None) or self.settings.get(role)
        messages = [ChatMessage(role="user", content=prompt)] if isinstance(prompt, str) else list(prompt)
        self.prompts.append(messages)
        completion = await self.model(role).generate(messages, settings, epoch=self.epoch, **kwargs)
        self.record(role, completion)
        return completion

    async def generate_structured(
        self, role: Role, prompt: str | Sequence[ChatMessage], output_type: type[T], **kwargs: Any
    ) -> Structured[T]:
        settings = kwargs.pop("settings", None) or self.settings.get(role)
        messages = [ChatMessage(role="user", content=prompt)] if isinstance(prompt, str) else list(prompt)
        self.prompts.append(messages)
        # Every attempt is counted as it arrives, so re-asks and a final failure show in the sample's usage.
        return await self.model(role).generate_structured(
            messages, output_type, settings, epoch=self.epoch, on_completion=lambda c: self.record(role, c), **kwargs
        )


System = Callable[[Sample, Mapping[str, Any], SampleContext], Awaitable[Output]]


@dataclass(frozen=True)
class ReportTable:
    """A task's own table for ``bedside report`` (e.g. micro-averaged scores that per-sample means cannot give).

    A task offers them with an optional ``report_tables(rows)`` method taking the run's stored result rows.
    """

    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass(frozen=True)
class AbsentPlot:
    """A figure a task's ``report_plots(rows)`` could not draw from this run, and why (e.g. "needs two or more
    models"): the HTML report says so where the figure would be, so a missing figure is never silent."""

    title: str
    reason: str


ReportPlot = tuple[str, str] | AbsentPlot
"""What ``report_plots(rows)`` returns per figure: (title, base64 PNG), or an :class:`AbsentPlot`."""


class Task(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def systems(self) -> Mapping[str, System]: ...

    @property
    def default_scorers(self) -> Sequence[str]: ...

    def load(self, name: str, config: DatasetConfig) -> list[Sample]: ...

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        """A task-specific scorer's value; raise KeyError for names the task does not define."""
        ...


def dataset_path(config: DatasetConfig, default: Path | None, *, dataset: str) -> Path:
    if config.path:
        return Path(config.path)
    if default is None:
        raise ValueError(f"dataset {dataset!r}: give a path")
    return default
