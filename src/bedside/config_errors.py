"""Config validation errors in bedside's words: the full dotted path, "did you mean" and the valid keys.

pydantic validates run configs and model blocks; its messages ("Extra inputs are not permitted", "Input should be
a valid integer, unable to parse string as an integer", "Value error, ...") are phrased for programmers and leave
out what a user needs: which keys would have been right. Each problem becomes ``path: what is wrong`` here, with
the valid keys of the block the path names when a key is unknown (found by walking the model's fields along the
path, through dicts, lists and optional values).
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Mapping
from typing import Any, Union

from pydantic import BaseModel, ValidationError

_PLAIN = {
    "missing": "required, but not given",
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "string_type": "expected text",
    "dict_type": "expected a mapping of keys to values",
    "list_type": "expected a list",
    "tuple_type": "expected a list",
    "model_type": "expected a mapping of keys to values",
    "model_attributes_type": "expected a mapping of keys to values",
}
_BOUNDS = {
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "too_short": "must have at least {min_length} item(s)",
    "too_long": "must have at most {max_length} item(s)",
    "string_too_short": "must be at least {min_length} character(s) long",
    "string_too_long": "must be at most {max_length} characters long",
    "string_pattern_mismatch": "does not have the expected form ({pattern})",
    "literal_error": "expected one of {expected}",
}


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation can hold directly (through Optional and unions)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]
    return []


def _step(annotation: Any, part: str | int) -> Any:
    """The annotation one path step below ``annotation`` (a field of a model, a dict value, a list item)."""
    for model in _models_in(annotation):
        field = model.model_fields.get(str(part)) or next(
            (f for f in model.model_fields.values() if f.alias == part), None
        )
        if field is not None:
            return field.annotation
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (Union, types.UnionType):
        for arg in args:
            found = _step(arg, part)
            if found is not None:
                return found
        return None
    if origin is dict and len(args) == 2:
        return args[1]
    if origin in (list, tuple) and args:
        return args[0]
    return None


def _model_at(root: type[BaseModel], path: tuple[str | int, ...]) -> type[BaseModel] | None:
    annotation: Any = root
    for part in path:
        annotation = _step(annotation, part)
        if annotation is None:
            return None
    models = _models_in(annotation)
    return models[0] if models else None


def _keys(model: type[BaseModel]) -> list[str]:
    return sorted(field.alias or name for name, field in model.model_fields.items())


def _message(error: Any) -> str:
    kind = error["type"]
    if kind in _PLAIN:
        return _PLAIN[kind]
    if kind in _BOUNDS:
        try:
            return _BOUNDS[kind].format(**(error.get("ctx") or {}))
        except (KeyError, IndexError):
            pass
    said = str(error["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    # Any other pydantic message, in the same voice: "Input should be a valid URL" is "expected a valid URL".
    return said.replace("Input should be ", "expected ").replace("Input should ", "should ")


def problems(
    exc: ValidationError,
    *,
    root: type[BaseModel] | None = None,
    with_input: bool = False,
    misplaced: Mapping[str, str] | None = None,
) -> list[str]:
    """Each problem as ``path: what is wrong``; an unknown key with "did you mean" and the valid keys of its block
    (``root``: the model validated, to find them). ``with_input`` adds the value given, when it is short.
    ``misplaced``: keys that belong elsewhere, and where ("a sampling option: give it under options")."""
    found = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        where = ".".join(str(p) for p in loc)
        if error["type"] == "extra_forbidden" and loc:
            parent = ".".join(str(p) for p in loc[:-1])
            block = _model_at(root, loc[:-1]) if root is not None else None
            valid = _keys(block) if block is not None else []
            close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
            elsewhere = difflib.get_close_matches(str(loc[-1]), list(misplaced or {}), n=1)
            if elsewhere:
                hint = f" ({elsewhere[0]!r} is {(misplaced or {})[elsewhere[0]]})"
            else:
                hint = f" (did you mean {close[0]!r}?)" if close else ""
            listed = f"; valid keys: {', '.join(valid)}" if valid else ""
            found.append(f"{parent + ': ' if parent else ''}unknown key {str(loc[-1])!r}{hint}{listed}")
            continue
        shown = f"{where}: {_message(error)}" if where else _message(error)
        given = error.get("input")
        short = isinstance(given, str | int | float | bool) and len(repr(given)) < 60
        if with_input and error["type"] != "missing" and short:
            shown += f" (got {given!r})"
        found.append(shown)
    return found


__all__ = ["problems"]
