"""A review's labels: read from a form, checked against the item, saved, submitted, reopened, and read back."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine, func, insert, select, update

from bedside.web.db import (
    assignments_table,
    audit,
    items_table,
    labels_table,
    reviews_table,
)
from bedside.web.review import (
    MAX_NOTE,
    NO_MATCH,
    RELEVANCE,
    ReviewClosed,
    ReviewError,
    instruct_criteria,
    labelling_closed,
)


def review_criteria(info: dict[str, Any]) -> list[tuple[str, str]]:
    """A rank review's flags as stored at creation (reviews made before criteria were stored: C1–C3)."""
    stored = (info.get("config") or {}).get("criteria")
    return instruct_criteria() if stored is None else [(str(k), str(w)) for k, w in stored]


def _form_getter(form: Any) -> Any:
    def get(name: str) -> str:
        value = form.get(name)
        return value.strip() if isinstance(value, str) else ""

    return get


def parse_label(
    task_type: str,
    payload: dict[str, Any],
    order: list[int],
    form: Any,
    criteria: Sequence[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """A label from a submitted form (field names use the letters shown; stored by canonical index).

    Every type may carry a ``comment`` and a safety flag (``safety: {"note"}``, only when flagged: a flag needs
    the reviewer's own words for what is unsafe).
    """
    value = _parse_answer(task_type, payload, order, form, instruct_criteria() if criteria is None else criteria)
    get = _form_getter(form)
    comment = get("comment")[:MAX_NOTE]
    if comment and "comment" not in value:
        value["comment"] = comment
    if get("safety") == "on":
        note = get("safety_note")[:MAX_NOTE]
        if not note:
            raise ReviewError("say in the safety box what the safety problem is")
        value["safety"] = {"note": note}
    return value


def entered_label(
    task_type: str,
    payload: dict[str, Any],
    order: list[int],
    form: Any,
    criteria: Sequence[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """What the form held, shaped like a label but unchecked, so a page refused for a validation error shows the
    annotator's entries again instead of the last saved label."""
    get = _form_getter(form)
    criteria = instruct_criteria() if criteria is None else criteria
    letters = [chr(ord("A") + i) for i in range(len(order))]
    value: dict[str, Any] = {"comment": get("comment")}
    if get("safety") == "on":
        value["safety"] = {"note": get("safety_note")}
    if task_type == "rank":
        outputs: list[dict[str, Any]] = [{} for _ in order]
        for shown, canonical in enumerate(order):
            rank = get(f"rank_{letters[shown]}")
            outputs[canonical] = {"rank": int(rank) if rank.isdigit() else None}
            outputs[canonical].update({k: get(f"{k}_{letters[shown]}") == "on" for k, _ in criteria})
        value["outputs"] = outputs
    elif task_type == "pairwise":
        choice = get("preference")
        value["preference"] = (
            "tie" if choice == "tie" else order[letters.index(choice)] if choice in letters[:2] else None
        )
        value["evidence"] = [line.strip() for line in get("evidence").splitlines() if line.strip()]
    elif task_type == "agree":
        value["agree"] = {"yes": True, "no": False}.get(get("agree"))
    elif task_type == "gold":
        value["boxes"] = {theme: get(f"box_{i}") for i, theme in enumerate(payload["themes"])}
    elif task_type == "match":
        choice = get("span")
        if choice == "__custom__":
            choice = get("custom_span")
        if choice:
            value["span"] = None if choice == NO_MATCH else choice
    elif task_type == "evidence":
        value["relevance"] = {s["id"]: get(f"rel_{s['id']}") for s in payload["sentences"]}
    return value


def _parse_answer(
    task_type: str, payload: dict[str, Any], order: list[int], form: Any, criteria: Sequence[tuple[str, str]]
) -> dict[str, Any]:
    get = _form_getter(form)

    letters = [chr(ord("A") + i) for i in range(len(order))]
    if task_type == "rank":
        outputs = []
        for shown, canonical in enumerate(order):
            letter = letters[shown]
            rank = get(f"rank_{letter}")
            if not rank.isdigit() or not 1 <= int(rank) <= len(order):
                raise ReviewError(f"give output {letter} a rank from 1 to {len(order)}")
            flags = {key: get(f"{key}_{letter}") == "on" for key, _ in criteria}
            outputs.append((canonical, {"rank": int(rank), **flags, "correct": not any(flags.values())}))
        return {"outputs": [v for _, v in sorted(outputs)]}
    if task_type == "pairwise":
        choice = get("preference")
        if choice not in ("A", "B", "tie"):
            raise ReviewError("choose A, B or tie")
        preference = "tie" if choice == "tie" else order[letters.index(choice)]
        evidence = [line.strip() for line in get("evidence").splitlines() if line.strip()][:20]
        return {"preference": preference, "evidence": evidence}
    if task_type == "agree":
        choice = get("agree")
        if choice not in ("yes", "no"):
            raise ReviewError("choose agree or disagree")
        return {"agree": choice == "yes", "comment": get("comment")[:MAX_NOTE]}
    if task_type == "gold":
        boxes = {theme: get(f"box_{i}")[:8000] for i, theme in enumerate(payload["themes"])}
        if not any(boxes.values()):
            raise ReviewError("write the reply in at least one box")
        return {"boxes": boxes}
    if task_type == "match":
        choice = get("span")
        if choice == "__custom__":
            choice = get("custom_span")
        if not choice:
            raise ReviewError("choose the matching span or NO MATCH")
        if choice != NO_MATCH and choice not in payload["draft"]:
            raise ReviewError("the span must be text of the draft")
        return {"span": None if choice == NO_MATCH else choice}
    if task_type == "evidence":
        labels = {}
        for s in payload["sentences"]:
            value = get(f"rel_{s['id']}")
            if value not in RELEVANCE:
                raise ReviewError(f"label sentence {s['id']}")
            labels[s["id"]] = value
        return {"relevance": labels}
    raise ReviewError(f"unknown task type {task_type}")


def save_label(engine: Engine, review_id: str, item_id: str, annotator: str, value: dict[str, Any]) -> None:
    """Store ``annotator``'s label for the item; :class:`ReviewClosed` when labelling is closed. The review's row is
    read FOR SHARE in the same transaction (PostgreSQL), so a label cannot land after a close has committed."""
    lab = labels_table.c
    now = time.time()
    with engine.begin() as db:
        config = db.execute(
            select(reviews_table.c.config).where(reviews_table.c.id == review_id).with_for_update(read=True)
        ).scalar_one_or_none()
        if config is None:
            raise ReviewError(f"no review {review_id}")
        if labelling_closed({"config": config}):
            raise ReviewClosed(review_id)
        done = db.execute(
            update(labels_table)
            .where((lab.review_id == review_id) & (lab.item_id == item_id) & (lab.annotator == annotator))
            .values(value=value, updated_at=now, source="web")
        )
        if not done.rowcount:
            db.execute(
                insert(labels_table).values(
                    review_id=review_id, item_id=item_id, annotator=annotator, value=value, updated_at=now, source="web"
                )
            )
    audit(engine, annotator, "label-saved", f"{review_id}/{item_id}")


def submit(engine: Engine, review_id: str, annotator: str) -> int:
    a = assignments_table.c
    with engine.begin() as db:
        done = db.execute(
            update(assignments_table)
            .where((a.review_id == review_id) & (a.annotator == annotator))
            .values(submitted=True)
        )
    audit(engine, annotator, "review-submitted", review_id, items=done.rowcount)
    return int(done.rowcount)


def reopen(engine: Engine, review_id: str, annotator: str) -> int:
    """Take back ``annotator``'s submission so they can edit their own labels; they submit again when done."""
    a = assignments_table.c
    with engine.begin() as db:
        done = db.execute(
            update(assignments_table)
            .where((a.review_id == review_id) & (a.annotator == annotator))
            .values(submitted=False)
        )
    audit(engine, annotator, "review-reopened", review_id, items=done.rowcount)
    return int(done.rowcount)


def all_labels(engine: Engine, review_id: str) -> list[dict[str, Any]]:
    lab = labels_table.c
    with engine.connect() as db:
        return [
            dict(r)
            for r in db.execute(
                select(labels_table).where(lab.review_id == review_id).order_by(lab.item_id, lab.annotator)
            ).mappings()
        ]


def labels_version(engine: Engine, review_id: str) -> tuple[int, float]:
    """(number of labels, last change): what the meta-evaluation depends on besides the items."""
    lab = labels_table.c
    with engine.connect() as db:
        count, last = db.execute(select(func.count(), func.max(lab.updated_at)).where(lab.review_id == review_id)).one()
    return int(count), float(last or 0.0)


def all_items(engine: Engine, review_id: str) -> dict[str, dict[str, Any]]:
    with engine.connect() as db:
        return {
            r["item_id"]: dict(r)
            for r in db.execute(
                select(items_table).where(items_table.c.review_id == review_id).order_by(items_table.c.position)
            ).mappings()
        }
