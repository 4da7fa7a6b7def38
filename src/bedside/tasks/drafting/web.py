"""The drafting task's views in the web app and its review items (hooks the web app finds on the task object).

- ``web_sections(row)``: the stored EditJudge decisions drawn on the draft (each matched span labelled ``EM``,
  the draft text no reference sentence matched ``ED``) and on the reference (each sentence ``EM`` or ``EA``,
  flagged and failed decisions marked), plus the decision table.
- ``review_items(task_type, rows)``: ``match`` items (one per reference sentence and draft, the judge's span or
  NO MATCH kept for the agreement) and ``gold`` items (the message with one box per response theme).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bedside.tasks.drafting.themes import RESPONSE_THEMES

NO_MATCH = "NO MATCH"


def _evaluation(row: Any) -> dict[str, Any] | None:
    output = row.output or {}
    found = (output.get("extra") or {}).get("editjudge")
    return found if isinstance(found, dict) and "content" in found else None


def web_sections(row: Any) -> list[dict[str, Any]]:
    evaluation = _evaluation(row)
    if evaluation is None:
        return []
    content = evaluation["content"]
    draft = str((row.output or {}).get("text") or "")
    decisions = content.get("decisions") or []
    spans = []
    for d in decisions:
        if d.get("start") is not None and d.get("end") is not None:
            spans.append({"start": d["start"], "end": d["end"], "label": "EM"})
    covered = sorted((s["start"], s["end"]) for s in spans)
    at, gaps = 0, []
    for start, end in covered:
        if start > at and draft[at:start].strip():
            gaps.append({"start": at, "end": start, "label": "ED"})
        at = max(at, end)
    if draft[at:].strip():
        gaps.append({"start": at, "end": len(draft), "label": "ED"})
    reference_parts, reference_spans, cursor = [], [], 0
    for d in decisions:
        sentence = str(d.get("sentence") or "")
        label = "EM" if d.get("span") is not None else "EA"
        start = cursor
        reference_parts.append(sentence)
        reference_spans.append({"start": start, "end": start + len(sentence), "label": label})
        cursor += len(sentence) + 1
    table_rows = [
        [
            str(d.get("sentence") or ""),
            str(d.get("span")) if d.get("span") is not None else NO_MATCH,
            "yes" if d.get("flagged") else "",
            str(d.get("failure") or ""),
        ]
        for d in decisions
    ]
    return [
        {
            "kind": "highlight",
            "title": f"Draft: matched spans (EM) and expected deletions (ED); matcher {content.get('matcher', '')}",
            "text": draft,
            "spans": spans + gaps,
        },
        {
            "kind": "highlight",
            "title": "Reference sentences: matched (EM) or to add (EA)",
            "text": " ".join(reference_parts),
            "spans": reference_spans,
        },
        {
            "kind": "table",
            "title": (
                f"EditJudge decisions: EM {content.get('em')}, EA {content.get('ea')}, ED {content.get('ed')}, "
                f"content F1 {_f1(content.get('f1'))}"
            ),
            "columns": ["reference sentence", "matched draft span", "guard flagged", "matcher failure"],
            "rows": table_rows,
        },
    ]


def review_items(task_type: str, rows: Sequence[Any]) -> list[dict[str, Any]] | None:
    if task_type == "match":
        items = []
        for row in rows:
            evaluation = _evaluation(row)
            if evaluation is None:
                continue
            draft = str((row.output or {}).get("text") or "")
            for n, d in enumerate(evaluation["content"].get("decisions") or []):
                items.append(
                    {
                        "id": f"{row.cell}/{row.sample_id}/{row.epoch}/{n}",
                        "sentence": d["sentence"],
                        "draft": draft,
                        "judge": d.get("span") if d.get("span") is not None else NO_MATCH,
                        "key": {"cell": row.cell, "sample": row.sample_id, "epoch": row.epoch},
                    }
                )
        return _opaque(items)
    if task_type == "gold":
        seen: dict[str, dict[str, Any]] = {}
        for row in rows:
            inputs = (row.sample or {}).get("inputs") or {}
            case = inputs.get("case") or inputs
            message = case.get("message") if isinstance(case, dict) else None
            if isinstance(message, str) and row.sample_id not in seen:
                seen[row.sample_id] = {
                    "id": str(row.sample_id),
                    "message": message,
                    "context": str(case.get("chart_summary") or ""),
                    "themes": list(RESPONSE_THEMES),
                }
        return list(seen.values())
    return None


def _opaque(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Item ids that name no cell (system and model stay in the key only)."""
    import hashlib

    return [{**i, "id": "item-" + hashlib.sha256(i["id"].encode()).hexdigest()[:12]} for i in items]


def _f1(value: Any) -> str:
    """A stored content F1; absent (None) when no matcher answer of the draft could be used."""
    return "absent (no usable matcher answer)" if value is None else f"{float(value):.3f}"
