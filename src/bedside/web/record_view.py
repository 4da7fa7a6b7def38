"""The whole record behind a review item, for the reviewer: what the item was grounded in, unclipped, with the
sentences the outputs repeat from it highlighted.

An item built from a run keeps the run, sample and epoch in its key; the record is read from the stored sample
and rendered as the task shows it to reviewers: a task's optional ``review_record(sample)`` (the record alone),
else its ``review_context(sample)`` (instruct's: the instruction and the whole record as the systems' paper view
shows it), else each of the sample's inputs under its name. An item from a JSONL file has no stored sample: its
own context (message, question, sentence) is the record. The key itself (systems, models, cells) never reaches
the page, so blinding holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from bedside.runs.store import Store, results_table

MIN_QUOTED_WORDS = 4
"""An output sentence this long (in words) or longer, found verbatim in the record, is highlighted there."""


@dataclass
class Record:
    title: str
    text: str
    spans: list[dict[str, Any]] = field(default_factory=list)  # {"start", "end", "label"} for highlight_parts
    note: str = ""


def _stored_sample(store: Store, key: dict[str, Any]) -> dict[str, Any] | None:
    r = results_table.c
    run_id, sample_id = key.get("run"), key.get("sample")
    if not run_id or sample_id is None:
        return None
    cells = [key["cell"]] if key.get("cell") else list(key.get("cells") or [])
    query = select(r.sample).where(
        (r.run_id == str(run_id)) & (r.sample_id == str(sample_id)) & (r.epoch == int(key.get("epoch") or 0))
    )
    if cells:
        query = query.where(r.cell.in_([str(c) for c in cells]))
    with store.engine.connect() as db:
        found = db.execute(query.limit(1)).scalar()
    return dict(found) if isinstance(found, dict) else None


def _rendered(store: Store, run_id: str, sample: dict[str, Any]) -> tuple[str, str]:
    """(text, note) of a stored sample as its task shows it to reviewers."""
    from bedside.runs.registry import resolve_task
    from bedside.web.review import _inputs_text

    try:
        task = resolve_task(store.run(run_id)["task"])
    except Exception as exc:  # a task that no longer loads: the inputs as they are, and why
        return _inputs_text(
            sample
        ), f"the run's task could not be loaded ({type(exc).__name__}): inputs shown as stored"
    for hook in ("review_record", "review_context"):
        render = getattr(task, hook, None)
        if render is not None:
            try:
                found = render(sample)
                if found is not None:  # None: the task has no view of this sample; the next hook or the inputs
                    return str(found), ""
            except Exception as exc:  # a task's view must not take the page down
                return _inputs_text(sample), f"the task's {hook} failed ({type(exc).__name__}): inputs shown as stored"
    return _inputs_text(sample), ""


def _outputs(payload: dict[str, Any]) -> list[str]:
    found = [str(o) for o in payload.get("outputs") or []]
    for name in ("output", "draft"):
        if payload.get(name):
            found.append(str(payload[name]))
    return found


def quoted_spans(text: str, outputs: list[str]) -> list[dict[str, Any]]:
    """Where the record holds, verbatim, a sentence of one of the outputs (of :data:`MIN_QUOTED_WORDS` words or
    more): the sentences a draft or answer took from the record."""
    spans = []
    for number, output in enumerate(outputs, start=1):
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", output):
            sentence = sentence.strip()
            if len(sentence.split()) < MIN_QUOTED_WORDS:
                continue
            for found in re.finditer(re.escape(sentence), text):
                spans.append({"start": found.start(), "end": found.end(), "label": f"in output {number}"})
    return spans


def item_record(store: Store, item: dict[str, Any]) -> Record:
    """The record behind a review item (``item`` as stored: payload and key)."""
    payload, key = item["payload"] or {}, item["key"] or {}
    sample = _stored_sample(store, key)
    if sample is not None:
        text, note = _rendered(store, str(key["run"]), sample)
        title = f"The record of sample {key.get('sample')}"
    else:
        parts = [
            f"{name}:\n{payload[name]}" for name in ("context", "message", "question", "sentence") if payload.get(name)
        ]
        sentences = payload.get("sentences") or []
        if sentences:
            parts.append("\n".join(f"[{s.get('id')}] {s.get('text')}" for s in sentences))
        text, note = (
            "\n\n".join(parts),
            ("" if key.get("run") is None else "the stored sample is no longer in the store"),
        )
        title = "What this item was built from"
    return Record(title, text, quoted_spans(text, _outputs(payload)), note)
