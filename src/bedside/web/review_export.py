"""A review's labels out (JSONL in the seed papers' formats, Parquet) and back in (labels written elsewhere)."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert, select, update

from bedside.private_files import open_private_binary
from bedside.web.db import (
    adjudications_table,
    assignments_table,
    audit,
    labels_table,
    users_table,
)
from bedside.web.review import (
    CRITERIA,
    RELEVANCE,
    ReviewClosed,
    ReviewError,
    _json_lines,
    labelling_closed,
    review,
)
from bedside.web.review_labels import all_items, all_labels
from bedside.web.review_meta import label_units

EXPORT_FORMATS = ("labels", "drafting", "instruct", "citeqa", "sensemaking")


def export_labels(engine: Engine, review_id: str, fmt: str) -> tuple[str, str]:
    """(text, file name) of a review's labels in ``fmt`` (see :data:`EXPORT_FORMATS`)."""
    info = review(engine, review_id)
    if info is None:
        raise ReviewError(f"no review {review_id}")
    task_type = info["task_type"]
    items = all_items(engine, review_id)
    labels = all_labels(engine, review_id)
    submitted = _submitted(engine, review_id)
    lines: list[dict[str, Any]] = []
    if fmt == "labels":
        settled = _adjudicated_values(engine, review_id)
        for lab in labels:
            lines.append(
                {
                    "review": review_id,
                    "task_type": task_type,
                    "item": lab["item_id"],
                    "annotator": lab["annotator"],
                    "label": lab["value"],
                    "submitted": (lab["item_id"], lab["annotator"]) in submitted,
                    "updated_at": lab["updated_at"],
                    "key": unblinded(items[lab["item_id"]]["key"] or {}),
                    "adjudicated": settled.get(lab["item_id"]),
                }
            )
    elif fmt == "drafting":
        _need(task_type, "match", fmt)
        for lab in labels:
            p = items[lab["item_id"]]["payload"]
            lines.append(
                {
                    "id": f"{lab['item_id']}@{lab['annotator']}",
                    "sentence": p["sentence"],
                    "draft": p["draft"],
                    "gold": lab["value"]["span"],
                }
            )
    elif fmt == "instruct":
        _need(task_type, "rank", fmt)
        for lab in labels:
            item = items[lab["item_id"]]
            names = (item["key"] or {}).get("outputs") or []
            for i, o in enumerate(lab["value"]["outputs"]):
                flags = {c.upper(): bool(o.get(c, False)) for c in CRITERIA}
                lines.append(
                    {
                        # An item built from a run is named dataset/sample[/epoch]; the instruction is the sample.
                        "instruction_id": (item["key"] or {}).get("sample", lab["item_id"]),
                        "model": names[i] if i < len(names) else f"output-{i + 1}",
                        "response": item["payload"]["outputs"][i],
                        "evaluator": lab["annotator"],
                        "correct": o["correct"],
                        "rank": o["rank"],
                        # Web labels derive correct from the flags; an imported binary label (MedAlign's release
                        # has no C1-C3) gets them all false, which contradicts "incorrect": kept only when they agree.
                        "criteria": flags if any(flags.values()) != o["correct"] else {},
                    }
                )
    elif fmt == "sensemaking":
        _need(task_type, "agree", fmt)
        for lab in labels:
            key = items[lab["item_id"]]["key"] or {}
            lines.append(
                {
                    "item": key.get("item", lab["item_id"]),
                    "metric": items[lab["item_id"]]["payload"]["metric"],
                    "annotator": lab["annotator"],
                    "agree": lab["value"]["agree"],
                }
            )
    elif fmt == "citeqa":
        _need(task_type, "evidence", fmt)
        votes: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for lab in labels:
            for sid, rel in lab["value"]["relevance"].items():
                votes[lab["item_id"]][sid].append(rel)
        key_out = [
            {
                "case_id": item_id,
                "answers": [
                    {
                        "sentence_id": sid,
                        "relevance": max(RELEVANCE, key=lambda r: (found.count(r), -RELEVANCE.index(r))),
                    }
                    for sid, found in sentences.items()
                ],
            }
            for item_id, sentences in votes.items()
        ]
        return json.dumps(key_out, indent=1, ensure_ascii=False) + "\n", f"{review_id}-key.json"
    else:
        raise ReviewError(f"format must be one of {', '.join(EXPORT_FORMATS)}")
    text = "".join(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines)
    return text, f"{review_id}-{fmt}.jsonl"


def unblinded(key: dict[str, Any]) -> dict[str, Any]:
    """An item's blinding key as an export gives it: for items built from a run, the system (and model) of each
    output, in the label's canonical output order, so labels can be read per system. Reviews made before keys
    held systems get them from the cell ids (``dataset/system/model``)."""
    key = dict(key)
    if "cells" in key and "systems" not in key:
        key["systems"] = [str(cell).split("/", 2)[1] if str(cell).count("/") >= 2 else None for cell in key["cells"]]
    if "cell" in key and "system" not in key:
        key["system"] = str(key["cell"]).split("/", 2)[1] if str(key["cell"]).count("/") >= 2 else None
    return key


def _parquet_table(engine: Engine, review_id: str) -> Any:
    try:
        import pyarrow as pa
    except ImportError:
        raise ReviewError("Parquet export needs pyarrow (pip install 'bedside[export]')") from None
    text, _ = export_labels(engine, review_id, "labels")
    names = ("review", "task_type", "item", "annotator", "label", "submitted", "updated_at", "key")
    columns: dict[str, list[Any]] = {name: [] for name in names}
    for line in text.splitlines():
        row = json.loads(line)
        for name in names:
            value = row[name]
            columns[name].append(json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else value)
    return pa.table(columns)


def export_parquet(engine: Engine, review_id: str, path: Path) -> None:
    """The generic labels as Parquet (the label as a JSON string), written 0600."""
    import pyarrow.parquet as pq

    table = _parquet_table(engine, review_id)
    with open_private_binary(path) as handle:
        pq.write_table(table, handle)


def parquet_bytes(engine: Engine, review_id: str) -> bytes:
    import io

    import pyarrow.parquet as pq

    table = _parquet_table(engine, review_id)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def _need(task_type: str, wanted: str, fmt: str) -> None:
    if task_type != wanted:
        raise ReviewError(f"the {fmt} format is for {wanted} reviews; this one is {task_type}")


def _adjudicated_values(engine: Engine, review_id: str) -> dict[str, Any]:
    """Item id -> the adjudicated label (see :mod:`bedside.web.adjudication`), for the labels export."""
    t = adjudications_table.c
    with engine.connect() as db:
        return {r.item_id: r.value for r in db.execute(select(t.item_id, t.value).where(t.review_id == review_id))}


def _submitted(engine: Engine, review_id: str) -> set[tuple[str, str]]:
    a = assignments_table.c
    with engine.connect() as db:
        return {
            (r.item_id, r.annotator)
            for r in db.execute(
                select(a.item_id, a.annotator).where((a.review_id == review_id) & a.submitted.is_(True))
            )
        }


def import_labels(engine: Engine, review_id: str, text: str, *, user: str) -> int:
    """Labels from the generic JSONL (``{item, annotator, label}`` per line), checked like web labels.

    An imported label replaces that annotator's label for the item, and counts in the meta-evaluation like any
    other. Every annotator must have an account (``bedside users add NAME``, disabled or not, so labels collected
    elsewhere can be attributed): a name nobody holds is a typo or a stranger whose labels would be counted
    as a colleague's, so the whole file is refused, naming them, and nothing is imported.
    """
    info = review(engine, review_id)
    if info is None:
        raise ReviewError(f"no review {review_id}")
    if labelling_closed(info):
        raise ReviewClosed(review_id)
    items = all_items(engine, review_id)
    with engine.connect() as db:
        accounts = {r.name for r in db.execute(select(users_table.c.name))}
    strangers: dict[str, int] = {}
    first_line: dict[tuple[str, str], int] = {}
    rows = []
    for number, data in _json_lines(text):
        if not {"item", "annotator", "label"} <= set(data):
            raise ReviewError(f"line {number}: needs item, annotator and label")
        item = items.get(str(data["item"]))
        if item is None:
            raise ReviewError(f"line {number}: no item {data['item']!r} in {review_id}")
        value = data["label"]
        try:
            label_units(info["task_type"], item, value)
            _validate(info["task_type"], item["payload"], value)
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise ReviewError(f"line {number}: not a {info['task_type']} label ({exc!r})") from None
        annotator = str(data["annotator"])
        if annotator not in accounts:
            strangers.setdefault(annotator, number)
        if (str(data["item"]), annotator) in first_line:
            raise ReviewError(
                f"line {number}: a second label by {annotator!r} for item {data['item']!r} (the first is on line "
                f"{first_line[(str(data['item']), annotator)]}): one would silently replace the other"
            )
        first_line[(str(data["item"]), annotator)] = number
        rows.append((str(data["item"]), annotator, value))
    if not rows:
        raise ReviewError("the file holds no labels: nothing imported")
    if strangers:
        named = ", ".join(f"{name!r} (line {line})" for name, line in strangers.items())
        raise ReviewError(
            f"no account for annotator(s) {named}; nothing imported. Add them with "
            "`bedside users add NAME --role annotator`, or correct the names"
        )
    lab = labels_table.c
    now = time.time()
    with engine.begin() as db:
        for item_id, annotator, value in rows:
            done = db.execute(
                update(labels_table)
                .where((lab.review_id == review_id) & (lab.item_id == item_id) & (lab.annotator == annotator))
                .values(value=value, updated_at=now, source="import")
            )
            if not done.rowcount:
                db.execute(
                    insert(labels_table).values(
                        review_id=review_id,
                        item_id=item_id,
                        annotator=annotator,
                        value=value,
                        updated_at=now,
                        source="import",
                    )
                )
    audit(engine, user, "labels-imported", review_id, labels=len(rows))
    return len(rows)


def _validate(task_type: str, payload: dict[str, Any], value: dict[str, Any]) -> None:
    if task_type == "rank":
        if len(value["outputs"]) != len(payload["outputs"]):
            raise IndexError("one entry per output")
        for o in value["outputs"]:
            rank = o["rank"]
            if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= len(payload["outputs"]):
                raise TypeError(f"a rank is a whole number from 1 to {len(payload['outputs'])}, not {rank!r}")
            if not isinstance(o["correct"], bool):
                raise TypeError("correct is true or false")
            for c in CRITERIA:
                o.setdefault(c, False)
    elif task_type == "pairwise":
        if value["preference"] not in (0, 1, "tie"):
            raise TypeError("preference is 0, 1 or tie")
    elif task_type == "agree":
        if not isinstance(value["agree"], bool):
            raise TypeError("agree is true or false")
    elif task_type == "gold":
        if not isinstance(value["boxes"], dict):
            raise TypeError("boxes")
    elif task_type == "match":
        if value["span"] is not None and value["span"] not in payload["draft"]:
            raise TypeError("span not in the draft")
    elif task_type == "evidence" and any(v not in RELEVANCE for v in value["relevance"].values()):
        raise TypeError("relevance labels")
