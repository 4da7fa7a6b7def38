"""The grounded-QA task's views in the web app and its review items (hooks the web app finds on the task object).

- ``web_sections(row)``: the answer's statements with their citations linked to the numbered note sentences,
  each sentence marked with the key's label (essential / supplementary / not-relevant) where the case has one.
- ``review_items("evidence", rows)``: one evidence-relevance item per case (question and note sentences); the
  run's citations are the judgement compared with (a cited sentence counts as ``essential``, others
  ``not-relevant``), so the meta-evaluation shows how often clinicians agree with what the system cited.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _case(row: Any) -> dict[str, Any] | None:
    case = ((row.sample or {}).get("inputs") or {}).get("case")
    return case if isinstance(case, dict) else None


def _statements(row: Any) -> list[dict[str, Any]]:
    found = ((row.output or {}).get("extra") or {}).get("statements")
    return [s for s in found if isinstance(s, dict)] if isinstance(found, list) else []


def web_sections(row: Any) -> list[dict[str, Any]]:
    case = _case(row)
    if case is None:
        return []
    key = case.get("relevance") or {}
    cited = {str(c) for s in _statements(row) for c in s.get("citations") or []}
    sentences = [
        {
            "id": str(s.get("id")),
            "text": str(s.get("text") or ""),
            "label": key.get(str(s.get("id")), ""),
            "cited": str(s.get("id")) in cited,
        }
        for s in case.get("sentences") or []
    ]
    return [
        {
            "kind": "cited",
            "title": f"Question: {case.get('clinician_question', '')}",
            "statements": [
                {"text": str(s.get("statement") or ""), "citations": [str(c) for c in s.get("citations") or []]}
                for s in _statements(row)
            ],
            "sentences": sentences,
        }
    ]


def review_items(task_type: str, rows: Sequence[Any]) -> list[dict[str, Any]] | None:
    if task_type != "evidence":
        return None
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for row in rows:
        case = _case(row)
        if case is None or not case.get("sentences") or row.sample_id in seen:
            continue
        seen.add(row.sample_id)
        cited = {str(c) for s in _statements(row) for c in s.get("citations") or []}
        sentences = [{"id": str(s["id"]), "text": str(s["text"])} for s in case["sentences"]]
        items.append(
            {
                "id": str(row.sample_id),
                "question": str(case.get("clinician_question") or ""),
                "context": str(case.get("narrative") or ""),
                "sentences": sentences,
                "judge": {s["id"]: "essential" if s["id"] in cited else "not-relevant" for s in sentences},
                "key": {"cell": row.cell, "sample": row.sample_id, "epoch": row.epoch},
            }
        )
    return items
