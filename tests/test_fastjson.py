"""``bedside.fastjson.dumper`` must give exactly ``json.dumps``'s text (cache keys, sample keys and stored rows
depend on it), errors included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bedside.fastjson import dumper

VALUES: list[Any] = [
    {"b": 1, "a": [1.5, None, True, 'é🙂"\\\n', {"z": {}, "y": []}], "c": float("nan"), "d": 10**30, "e": -0.0},
    {"inf": float("-inf"), "nested": [[[{"k": "v"}]]], "1e300": 1e300, "third": 1 / 3},
    [],
    {},
    "x é",
    1,
    None,
    2.5,
    {"path": Path("/x")},
    {1: "int key", "a": 2},
]
ARGUMENTS: list[dict[str, Any]] = [
    {},
    {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False},
    {"sort_keys": True, "default": str},
]


def _outcome(call: Any, value: Any) -> Any:
    try:
        return call(value)
    except TypeError as exc:
        return ("TypeError", str(exc))


@pytest.mark.parametrize("arguments", ARGUMENTS)
def test_dumper_gives_json_dumps_text(arguments: dict[str, Any]) -> None:
    fast = dumper(**arguments)
    for value in VALUES:
        assert _outcome(fast, value) == _outcome(lambda v: json.dumps(v, **arguments), value), value
