"""Rubrics as data: criteria, score anchors, scale, evidence rule and aggregation, read from TOML or YAML.

A rubric file (see the shipped ones in ``bedside/judges/rubrics/``)::

    id = "discharge_conversation"
    title = "Discharge conversation"
    source = "DischargeSim (seed 002), Section 3.1 and Figure 14"
    judge_role = "an experienced clinician educator reviewing ..."
    task = "Rate how clearly the clinician's turns ..."
    guidance = ["Score strictly: ...", ...]          # optional, shown to the judge before the criteria
    justification = "one or two sentences"           # optional: what a justification should be, shown to the judge
    justification_min_words = 0                       # optional: shorter justifications are sent back (0 = no rule)
    evidence = false                                  # must every criterion give at least one evidence item?
    evidence_kind = "quote"                           # quote | snippet | pair: the shape of an evidence item
    aggregate = "mean"                                # mean | median | min | max | sum over criteria (and groups)
    template = "judges/rubric_judge.j2"               # the prompt; any template name or path

    [scale]
    min = 1.0
    max = 5.0
    kind = "decimal"                                  # decimal | integer | binary (binary is 0/1)

    [scale_anchors]                                   # optional: one band scale shared by every criterion
    "5.0" = "..."
    "4.0-4.9" = "..."

    [groups]                                          # optional: parts of the rubric, each scored by `aggregate`
    language_delivery = ["linguistic_clarity", "coherence", "non_repetition"]
    human_centred = ["personalization_empathy", "interaction_appropriateness"]

    [inputs]                                          # what the prompt is given, with the heading it gets
    conversation = "Clinician-patient conversation"
    reference_note = "Discharge note (ground truth)"

    [optional_inputs]                                 # given only when the caller passes them
    patient_profile = "Patient profile"

    [[criteria]]
    name = "linguistic_clarity"                       # the JSON key the judge answers under
    title = "Linguistic clarity"
    definition = "..."
    anchors = { "5.0" = "...", "4.0-4.9" = "...", ... }   # optional per-criterion bands

Evidence kinds (see ``bedside.judges.judge``): ``quote`` is ``{quote, supports, issue}``, a verbatim passage and
whether it backs the score; ``snippet`` is ``{snippet, addresses, issue}``, where an absent topic is
``{"snippet": "N/A", "addresses": false, "issue": "omitted"}`` rather than a forced quote; ``pair`` is
``{summary_span, reference_span, match, issue}``, so a summary can be audited span by span against its reference.
Groups let one call score several parts (a paper's two-part judge) while each part keeps its own aggregate.

``load_rubric`` takes a shipped rubric's id, or a path; folders in ``BEDSIDE_RUBRICS`` (``os.pathsep``-separated)
are searched before the package, so a file there with a shipped id overrides it. Every problem is reported with
the file and the key (``rubrics/x.toml: criteria.2.name: ...``).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from bedside.inputs import InputError, loads_toml, read_text
from bedside.safe_yaml import YamlLimitError, safe_load

RUBRICS_DIR = Path(__file__).parent / "rubrics"
DEFAULT_TEMPLATE = "judges/rubric_judge.j2"

Aggregate = Literal["mean", "median", "min", "max", "sum"]
EvidenceKind = Literal["quote", "snippet", "pair"]
Name = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]


class RubricError(InputError):
    """A rubric file is missing, unreadable or invalid; the message names the file and the key."""


class Scale(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min: float
    max: float
    kind: Literal["decimal", "integer", "binary"] = "decimal"

    @model_validator(mode="after")
    def _consistent(self) -> Scale:
        if self.kind == "binary" and (self.min, self.max) != (0, 1):
            raise ValueError("a binary scale runs from 0 to 1")
        if self.min >= self.max:
            raise ValueError(f"min ({self.min}) must be below max ({self.max})")
        if self.kind == "integer" and not (float(self.min).is_integer() and float(self.max).is_integer()):
            raise ValueError("an integer scale needs integer bounds")
        return self

    def problem(self, score: float) -> str | None:
        """Why ``score`` is not on this scale, or None."""
        if not self.min <= score <= self.max:
            return f"{score} is outside the scale {self.describe()}"
        if self.kind != "decimal" and not float(score).is_integer():
            return f"{score} is not a whole number; the scale is {self.describe()}"
        return None

    def describe(self) -> str:
        if self.kind == "binary":
            return "0 or 1"
        if self.kind == "integer":
            return f"whole numbers {int(self.min)} to {int(self.max)}"
        return f"{self.min:.1f} to {self.max:.1f} (decimals allowed)"


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Name
    title: str = Field(min_length=1)
    definition: str = Field(min_length=1)
    anchors: dict[str, str] = Field(default_factory=dict)


class Rubric(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Name
    title: str
    source: str = ""
    judge_role: str
    task: str
    guidance: list[str] = Field(default_factory=list)
    scale: Scale
    # One band scale for all criteria, shown once (a paper may anchor the whole rubric rather than each criterion).
    scale_anchors: dict[str, str] = Field(default_factory=dict)
    criteria: list[Criterion] = Field(min_length=1)
    # Named parts scored in the same call; declared after ``criteria`` so the validator can see them.
    groups: dict[Name, list[str]] = Field(default_factory=dict)
    justification: str = ""
    justification_min_words: int = Field(default=0, ge=0)
    evidence: bool = False
    evidence_kind: EvidenceKind = "quote"
    aggregate: Aggregate = "mean"
    inputs: dict[str, str] = Field(min_length=1)
    optional_inputs: dict[str, str] = Field(default_factory=dict)
    template: str = DEFAULT_TEMPLATE

    @field_validator("criteria")
    @classmethod
    def _unique_names(cls, criteria: list[Criterion]) -> list[Criterion]:
        names = [c.name for c in criteria]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"criterion names must be unique; repeated: {', '.join(duplicates)}")
        return criteria

    @field_validator("groups")
    @classmethod
    def _groups_name_criteria(cls, groups: dict[str, list[str]], info: ValidationInfo) -> dict[str, list[str]]:
        """Every grouped name is a criterion, in one group at most, so each group's aggregate is well defined."""
        criteria = info.data.get("criteria")
        if criteria is None:  # the criteria failed validation and are reported already
            return groups
        known = [c.name for c in criteria]
        owner: dict[str, str] = {}
        for group, names in groups.items():
            if not names:
                raise ValueError(f"group {group!r} lists no criteria")
            for name in names:
                if name not in known:
                    raise ValueError(
                        f"group {group!r} lists {name!r}, which is not a criterion of this rubric "
                        f"(criteria: {', '.join(known)})"
                    )
                if name in owner:
                    where = "twice" if owner[name] == group else f"in {owner[name]!r} too"
                    raise ValueError(
                        f"group {group!r} lists {name!r} {where}; a criterion belongs to one group at most"
                    )
                owner[name] = group
        return groups

    @property
    def criterion_names(self) -> list[str]:
        return [c.name for c in self.criteria]

    @property
    def parts(self) -> list[tuple[str | None, list[Criterion]]]:
        """Criteria as the prompt lists them: each group (declared order), then any ungrouped ones (name None)."""
        grouped = {name for names in self.groups.values() for name in names}
        parts: list[tuple[str | None, list[Criterion]]] = [
            (group, [c for c in self.criteria if c.name in names]) for group, names in self.groups.items()
        ]
        rest = [c for c in self.criteria if c.name not in grouped]
        if rest:
            parts.append((None, rest))
        return parts

    def group_scores(self, scores: Mapping[str, float]) -> dict[str, float]:
        """Each group's aggregate of ``scores`` (per criterion); empty when the rubric has no groups."""
        return {group: self.combine([scores[name] for name in names]) for group, names in self.groups.items()}

    def combine(self, scores: Sequence[float]) -> float:
        """The rubric's aggregate of per-criterion scores."""
        if not scores:
            raise ValueError(f"rubric {self.id}: no criterion scores to aggregate")
        if self.aggregate == "mean":
            return statistics.fmean(scores)
        if self.aggregate == "median":
            return float(statistics.median(scores))
        if self.aggregate == "min":
            return min(scores)
        if self.aggregate == "max":
            return max(scores)
        return float(sum(scores))


def _read(path: Path) -> object:
    text = read_text(path, error=RubricError)
    try:
        if path.suffix == ".toml":
            return loads_toml(text, path=path, error=RubricError)
        if path.suffix in (".yaml", ".yml"):
            return safe_load(text)  # bounded: a rubric's text ends up in every judge prompt
    except yaml.YAMLError as exc:
        raise RubricError(f"{path}: not valid {path.suffix[1:].upper()}: {exc}") from None
    except YamlLimitError as exc:
        raise RubricError(f"{path}: {exc}") from None
    raise RubricError(f"{path}: a rubric file must end in .toml, .yaml or .yml")


def rubric_from_file(path: str | Path) -> Rubric:
    source = Path(path)
    data = _read(source)
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or '(top level)'}: {error['msg']}" for error in exc.errors()
        )
        raise RubricError(f"{source}: {problems}") from None


def _search_dirs() -> list[Path]:
    user = [Path(d) for d in os.environ.get("BEDSIDE_RUBRICS", "").split(os.pathsep) if d]
    return [*user, RUBRICS_DIR]


def rubric_path(name: str) -> Path:
    """The file a rubric id (or path) stands for: a path as given, else BEDSIDE_RUBRICS folders, then shipped."""
    candidate = Path(name)
    if candidate.suffix in (".toml", ".yaml", ".yml"):
        if not candidate.is_file():
            raise RubricError(f"{candidate}: no such rubric file")
        return candidate
    for folder in _search_dirs():
        for suffix in (".toml", ".yaml", ".yml"):
            path = folder / f"{name}{suffix}"
            if path.is_file():
                return path
    raise RubricError(f"no rubric {name!r}; shipped rubrics: {', '.join(shipped_rubrics())}")


def load_rubric(name: str | Path) -> Rubric:
    """A shipped rubric by id, an override from ``BEDSIDE_RUBRICS``, or a rubric file by path."""
    path = rubric_path(str(name))
    rubric = rubric_from_file(path)
    if path.stem != rubric.id and path.parent != RUBRICS_DIR and not Path(str(name)).suffix:
        raise RubricError(f"{path}: the file is named {path.stem!r} but its id is {rubric.id!r}")
    return rubric


def shipped_rubrics() -> list[str]:
    return sorted(p.stem for p in RUBRICS_DIR.glob("*.toml"))
