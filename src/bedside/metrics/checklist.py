"""Field accuracy of a structured (JSON) checklist against a reference, e.g. DischargeSim's AHRQ checklist.

Both documents are flattened to leaf fields with dotted paths (``medications.0.dose``). Every field of the
reference is scored; a field missing from the prediction is wrong. Extra predicted fields do not count against
accuracy but are listed, so they stay visible.

- exact: the JSON values are equal (``5`` equals ``5.0``, but ``true`` does not equal ``1``).
- normalised: strings are compared lowercased, with punctuation removed and whitespace collapsed; numbers
  and strings that spell the same number match (``5`` and ``"5.0"``); a list of scalars matches a list with the
  same normalised items in any order (a multiset), so ``["Aspirin", "metoprolol"]`` matches
  ``["metoprolol.", "aspirin"]``. Lists of objects are compared item by item, in order.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_PUNCTUATION = re.compile(r"[^\w\s]")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class FieldResult:
    path: str
    reference: Any
    predicted: Any
    present: bool
    exact: bool
    normalised: bool


@dataclass(frozen=True)
class ChecklistResult:
    fields: list[FieldResult]
    extra: list[str] = field(default_factory=list)

    @property
    def exact_accuracy(self) -> float:
        return sum(f.exact for f in self.fields) / len(self.fields) if self.fields else 0.0

    @property
    def normalised_accuracy(self) -> float:
        return sum(f.normalised for f in self.fields) / len(self.fields) if self.fields else 0.0


def _is_scalar_list(value: Any) -> bool:
    return isinstance(value, list) and all(not isinstance(v, dict | list) for v in value)


def flatten(document: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf fields by dotted path; a list of scalars is one leaf (compared as a multiset when normalised)."""
    if isinstance(document, Mapping):
        out: dict[str, Any] = {}
        for key, value in document.items():
            out.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(document, list) and not _is_scalar_list(document):
        out = {}
        for index, value in enumerate(document):
            out.update(flatten(value, f"{prefix}.{index}" if prefix else str(index)))
        return out
    return {prefix: document}


def normalise_value(value: Any) -> Any:
    if isinstance(value, list):
        return Counter(str(normalise_value(v)) for v in value)
    if isinstance(value, bool) or value is None:
        return ("literal", value)  # tagged, so that true never equals 1 (Python says True == 1)
    if isinstance(value, int | float):
        return float(value)
    text = _SPACE.sub(" ", _PUNCTUATION.sub(" ", str(value).lower())).strip()
    try:
        return float(str(value).strip())
    except ValueError:
        return text


def checklist_accuracy(predicted: Mapping[str, Any], reference: Mapping[str, Any]) -> ChecklistResult:
    """Per-field exact and normalised agreement of ``predicted`` with ``reference``."""
    wanted = flatten(reference)
    if not wanted:
        raise ValueError("the reference checklist has no fields")
    got = flatten(predicted)
    results = []
    for path, expected in wanted.items():
        present = path in got
        value = got.get(path)
        exact = present and value == expected and isinstance(value, bool) == isinstance(expected, bool)
        normalised = present and normalise_value(value) == normalise_value(expected)
        results.append(FieldResult(path, expected, value, present, exact, exact or normalised))
    return ChecklistResult(results, sorted(set(got) - set(wanted)))
