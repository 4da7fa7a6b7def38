"""Getting JSON that matches a pydantic model out of a chat model, and saying precisely why it did not."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL | re.IGNORECASE)


def extract_json_text(text: str) -> str:
    """The JSON object inside a reply: code fences and text around the outermost braces are dropped."""
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    if not text.startswith("{"):
        start, end = text.find("{"), text.rfind("}")
        if start != -1 and end > start:
            text = text[start : end + 1]
    return text


def parse_structured(
    text: str, output_type: type[T], check: Callable[[T], None] | None = None
) -> tuple[T | None, str | None]:
    """``(value, None)`` when ``text`` holds a valid object, else ``(None, reason)`` fit to show the model."""
    candidate = extract_json_text(text)
    try:
        data: Any = json.loads(candidate)
    except json.JSONDecodeError as exc:
        return None, f"it is not valid JSON ({exc.msg}: line {exc.lineno}, column {exc.colno})."
    try:
        value = output_type.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}" for err in exc.errors()
        )
        return None, f"it does not match the schema: {problems}."
    if check is not None:
        try:
            check(value)
        except ValueError as exc:
            return None, f"{exc}"
    return value, None
