"""Adjudication: an adjudicator (an ``adjudicator`` or ``admin`` account) settles the items whose annotators
disagree, by taking one annotator's label as the item's label, with a note saying why.

An item is in disagreement when two or more annotators labelled it and their *decisions* differ: the label
without its free comment and safety note (two annotators who both answered "agree" but wrote different comments
agree). Gold replies are free text, so every doubly-labelled gold item counts as a disagreement.

The adjudicator sees the item as annotators saw it, outputs in their canonical order (numbered, never named: the
blinding holds for adjudicators too), and each annotator's label; the choice is stored in
``review_adjudications`` beside the originals, which are never changed. The ``adjudicated`` export gives one line
per labelled item with the label to use (the adjudicated one, or the annotators' shared decision), whether it was
adjudicated, by whom and why, and every original label.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, delete, insert, select

from bedside.web.db import adjudications_table, audit
from bedside.web.review import MAX_NOTE, NO_MATCH, ReviewError, review
from bedside.web.review_export import unblinded
from bedside.web.review_labels import all_items, all_labels

FREE_FIELDS = ("comment", "safety")
"""Parts of a label that say why, not what: left out when deciding whether two labels agree."""


def decision(value: dict[str, Any]) -> dict[str, Any]:
    """A label without its free comment and safety note."""
    return {k: v for k, v in value.items() if k not in FREE_FIELDS}


def _same(values: list[dict[str, Any]]) -> bool:
    return len({json.dumps(decision(v), sort_keys=True) for v in values}) <= 1


@dataclass
class Disputed:
    """One item whose annotators disagree."""

    item_id: str
    position: int
    payload: dict[str, Any]
    labels: list[dict[str, Any]]  # {"annotator", "value", "summary"}
    resolved: dict[str, Any] | None  # the adjudication, when there is one


def summary(task_type: str, value: dict[str, Any]) -> str:
    """A label in a line of words, for the adjudicator (outputs by canonical number, never by system)."""
    if task_type == "rank":
        parts = []
        for i, o in enumerate(value.get("outputs") or []):
            flags = [k.upper() for k, v in o.items() if k not in ("rank", "correct") and v is True]
            parts.append(f"output {i + 1}: rank {o.get('rank')}" + (f" ({', '.join(flags)})" if flags else ""))
        return "; ".join(parts)
    if task_type == "pairwise":
        pref = value.get("preference")
        return "tie" if pref == "tie" else f"prefers output {int(pref) + 1}" if pref is not None else "no choice"
    if task_type == "agree":
        return "agrees with the judge" if value.get("agree") else "disagrees with the judge"
    if task_type == "gold":
        return " | ".join(f"{k}: {v}" for k, v in (value.get("boxes") or {}).items())
    if task_type == "match":
        return NO_MATCH if value.get("span") is None else f"matches: {value['span']}"
    if task_type == "evidence":
        return "; ".join(f"{k}: {v}" for k, v in (value.get("relevance") or {}).items())
    return json.dumps(decision(value), ensure_ascii=False)


def adjudications(engine: Engine, review_id: str) -> dict[str, dict[str, Any]]:
    """Item id -> its adjudication (``value``, ``adjudicator``, ``chosen``, ``note``, ``at``)."""
    t = adjudications_table.c
    with engine.connect() as db:
        return {
            r["item_id"]: dict(r)
            for r in db.execute(select(adjudications_table).where(t.review_id == review_id)).mappings()
        }


def disputed(engine: Engine, review_id: str) -> list[Disputed]:
    """The review's items in disagreement, in item order, each with its labels and adjudication (if any)."""
    info = review(engine, review_id)
    if info is None:
        raise ReviewError(f"no review {review_id}")
    items = all_items(engine, review_id)
    by_item: dict[str, list[dict[str, Any]]] = {}
    for lab in all_labels(engine, review_id):
        by_item.setdefault(lab["item_id"], []).append(lab)
    settled = adjudications(engine, review_id)
    found = []
    for item_id, labels in by_item.items():
        if len(labels) < 2 or (info["task_type"] != "gold" and _same([lab["value"] for lab in labels])):
            continue
        found.append(
            Disputed(
                item_id=item_id,
                position=int(items[item_id]["position"]),
                payload=items[item_id]["payload"],
                labels=[
                    {
                        "annotator": lab["annotator"],
                        "value": lab["value"],
                        "summary": summary(info["task_type"], lab["value"]),
                    }
                    for lab in labels
                ],
                resolved=settled.get(item_id),
            )
        )
    return sorted(found, key=lambda d: d.position)


def adjudicate(engine: Engine, review_id: str, position: int, adjudicator: str, chosen: str, note: str) -> None:
    """Settle the disputed item at ``position`` with annotator ``chosen``'s label (replacing an earlier
    adjudication of the item); the annotators' labels stay as they are."""
    item = next((d for d in disputed(engine, review_id) if d.position == position), None)
    if item is None:
        raise ReviewError("no disagreement on that item to adjudicate")
    label = next((lab for lab in item.labels if lab["annotator"] == chosen), None)
    if label is None:
        raise ReviewError("choose one of the annotators' labels")
    t = adjudications_table.c
    with engine.begin() as db:
        db.execute(delete(adjudications_table).where((t.review_id == review_id) & (t.item_id == item.item_id)))
        db.execute(
            insert(adjudications_table).values(
                review_id=review_id,
                item_id=item.item_id,
                value=decision(label["value"]),
                chosen=chosen,
                adjudicator=adjudicator,
                note=note.strip()[:MAX_NOTE],
                at=time.time(),
            )
        )
    audit(engine, adjudicator, "item-adjudicated", f"{review_id}/{item.item_id}")


def export_adjudicated(engine: Engine, review_id: str) -> str:
    """One JSONL line per labelled item: the label to use and every original label.

    ``label`` is the adjudicated decision where there is one, else the decision all annotators share; an item
    still in disagreement has ``label: null`` and ``disputed: true``, so nothing unsettled passes as settled."""
    info = review(engine, review_id)
    if info is None:
        raise ReviewError(f"no review {review_id}")
    items = all_items(engine, review_id)
    settled = adjudications(engine, review_id)
    by_item: dict[str, list[dict[str, Any]]] = {}
    for lab in all_labels(engine, review_id):
        by_item.setdefault(lab["item_id"], []).append(lab)
    lines = []
    for item_id, labels in sorted(by_item.items(), key=lambda kv: items[kv[0]]["position"]):
        adjudication = settled.get(item_id)
        agreed = info["task_type"] != "gold" and _same([lab["value"] for lab in labels])
        label = (
            adjudication["value"]
            if adjudication is not None
            else decision(labels[0]["value"])
            if agreed or len(labels) == 1
            else None
        )
        lines.append(
            {
                "review": review_id,
                "task_type": info["task_type"],
                "item": item_id,
                "label": label,
                "adjudicated": adjudication is not None,
                "disputed": adjudication is None and label is None,
                "adjudication": None
                if adjudication is None
                else {k: adjudication[k] for k in ("adjudicator", "chosen", "note", "at")},
                "originals": [{"annotator": lab["annotator"], "label": lab["value"]} for lab in labels],
                "key": unblinded(items[item_id]["key"] or {}),
            }
        )
    return "".join(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines)
