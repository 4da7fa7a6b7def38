"""Option schemas: what a task's dataset and system ``options`` may hold, checked before anything runs.

A misspelled option must not be silently ignored (the run would use the default for every sample), and a
misspelled value must not pass ``bedside config check`` only to turn every sample into a stored error. So each
task declares its options as pydantic models deriving from :class:`Options` (unknown keys are refused, values
with a fixed set of choices are ``Literal`` types):

- ``dataset_options``: one model for every dataset of the task;
- ``system_options``: system type → model.

:func:`check_options` validates a config against them; the runner calls it at ``bedside config check`` and at run
start, before any dataset is read. A task without schemas (a third-party one written before them) has its
options passed through unchecked. The schemas also describe the options, with their defaults, for
``bedside list tasks``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError


class Options(BaseModel):
    """Base of an option schema: every key must be declared; values are checked against their types."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class OptionsError(ValueError):
    """An option that the task does not declare, or a value it does not accept; names the key and the valid ones."""


def _problem(schema: type[BaseModel], where: str, error: Any) -> str:
    loc = [str(part) for part in error["loc"]]
    key = ".".join(loc)
    valid = ", ".join(sorted(schema.model_fields)) or "(none)"
    if error["type"] == "extra_forbidden":
        close = difflib.get_close_matches(loc[0], list(schema.model_fields), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"{where}.{key}: unknown option{hint}; valid options: {valid}"
    if not loc:  # a rule across options (a model validator): its message names the options itself
        return f"{where}: {error['msg'].removeprefix('Value error, ')}"
    value = error.get("input")
    shown = f" (got {value!r})" if isinstance(value, str | int | float | bool) and len(repr(value)) < 80 else ""
    return f"{where}.{key}: {error['msg']}{shown}"


def validate_options(schema: type[BaseModel], options: Mapping[str, Any], *, where: str) -> BaseModel:
    """``options`` validated against ``schema``; every problem names ``where``.key (and the valid keys)."""
    try:
        return schema.model_validate(dict(options))
    except ValidationError as exc:
        raise OptionsError("; ".join(_problem(schema, where, e) for e in exc.errors())) from None


def check_options(task: Any, datasets: Mapping[str, Any], systems: Mapping[str, Any]) -> None:
    """Check every dataset's and system's ``options`` against the task's schemas (see the module docstring).

    ``datasets`` and ``systems`` are a run config's (objects with ``.options``; systems also with ``.type``).
    """
    dataset_schema: type[BaseModel] | None = getattr(task, "dataset_options", None)
    if dataset_schema is not None:
        for name, dataset in datasets.items():
            validate_options(dataset_schema, dataset.options, where=f"datasets.{name}.options")
    system_schemas: Mapping[str, type[BaseModel]] | None = getattr(task, "system_options", None)
    if system_schemas is not None:
        for name, system in systems.items():
            schema = system_schemas.get(system.type)
            if schema is not None:
                validate_options(schema, system.options, where=f"systems.{name}.options")


def describe_options(schema: type[BaseModel]) -> list[dict[str, str]]:
    """Each option's name, type, default and description, for listings (``bedside list tasks``)."""
    described = []
    for name, field in schema.model_fields.items():
        default = "(required)" if field.is_required() else repr(field.get_default(call_default_factory=True))
        described.append(
            {
                "name": name,
                "type": _type_name(field.annotation),
                "default": default,
                "description": field.description or "",
            }
        )
    return described


def _type_name(annotation: Any) -> str:
    """A readable type: a Literal as its values (``embedding | lexical``), unions and lists spelled out."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return " | ".join(str(a) for a in args)
    if origin in (Union, UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is list:
        return f"list of ({_type_name(args[0])})" if args else "list"
    if origin is dict:
        return "mapping"
    if annotation is type(None):
        return "null"
    return getattr(annotation, "__name__", str(annotation))
