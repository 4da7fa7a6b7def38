"""Reviews: their items and blinded per-annotator assignments (labels, meta-evaluation, export and import are in
:mod:`bedside.web.review_labels`, :mod:`bedside.web.review_meta` and :mod:`bedside.web.review_export`).

Six task types (the seed papers' human evaluations):

========== ============================================= =====================================================
type       annotators see                                a label
========== ============================================= =====================================================
rank       the context and N outputs (letters, shuffled)  per output: the review's flags and a rank (ties allowed)
pairwise   the context and two outputs (shuffled)         A, B or tie, plus evidence snippets
agree      an output, a judge's metric, score, reasoning  agree or disagree, and a comment
gold       a message and theme boxes                     a reply written in the boxes
match      a reference sentence and a draft               the draft span that matches it, or NO MATCH
evidence   a question and numbered note sentences         essential / supplementary / not-relevant per sentence
========== ============================================= =====================================================

Items come from a JSONL file (one object per line; fields per type in :data:`ITEM_FIELDS`; an optional ``judge``
holds the automatic judgement to compare with, an optional ``key`` anything else the admin needs) or from a
stored run: ``rank``, ``pairwise`` and ``agree`` are built from any run's outputs and scores; a task may build
any type itself with an optional ``review_items(task_type, rows)`` on its task object, or say only how a sample
reads to a reviewer with an optional ``review_context(sample)`` (a stored sample's dict → text; by default each of
the sample's inputs under its name, which for a task whose inputs name files would show a path, not the content).

Every type also takes a free comment and a safety flag with the reviewer's own note (``safety: {"note"}`` in the
label, only when flagged); the meta-evaluation counts the flags and lists their notes, and exports carry them
with the label. A pairwise (or rank) review from a run compares the cells its creator chooses.

Blinding: what is stored for annotators (``payload``) never holds a system, model or cell; those stay in the
item's ``key``, which only admin pages and exports read. Outputs are shown under letters in an order shuffled
per annotator and item with a seed, and each annotator's item order is shuffled with a seed of their own.
Labels are stored against the outputs' canonical positions, so the shuffle is presentation only.

Assignment: each item goes to ``overlap`` annotators (those with the fewest items so far, in a seeded order),
and no annotator gets more than ``per_annotator`` items. After creation an admin can add annotators, move or
release an annotator's unlabelled items, and close labelling (:mod:`bedside.web.review_edit`); a closed review
refuses labels in :func:`bedside.web.review_labels.save_label`, whoever calls it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, func, insert, select

from bedside.inputs import InputError, json_object
from bedside.web.db import (
    assignments_table,
    audit,
    items_table,
    labels_table,
    reviews_table,
    users_table,
)

TASK_TYPES = ("rank", "pairwise", "agree", "gold", "match", "evidence")
TASK_TITLES = {
    "rank": "Rank, with the review's criteria",
    "pairwise": "Pairwise preference",
    "agree": "Agree with the judge",
    "gold": "Gold reply in theme boxes",
    "match": "EditJudge match",
    "evidence": "Evidence relevance",
}
OPTIONAL_FIELDS: dict[str, tuple[str, ...]] = {"gold": ("context",), "match": ("spans",), "evidence": ("context",)}
"""Fields an item of a type may give beyond :data:`ITEM_FIELDS` (and ``id``, ``judge``, ``key``)."""
ITEM_FIELDS: dict[str, tuple[str, ...]] = {
    "rank": ("context", "outputs"),
    "pairwise": ("context", "outputs"),
    "agree": ("context", "output", "metric", "score", "reasoning"),
    "gold": ("message", "themes"),
    "match": ("sentence", "draft"),
    "evidence": ("question", "sentences"),
}
RELEVANCE = ("essential", "supplementary", "not-relevant")
CRITERIA = ("c1", "c2", "c3")
"""Rank criteria: a run's task gives its own through an optional ``review_criteria`` attribute ((key, wording)
pairs; instruct's are MedAlign's C1–C3, :func:`instruct_criteria`), a task without one gets ranks only; a JSONL of
rank items gets C1–C3 unless the creator writes others (items in that format are what the ``instruct`` export
expects)."""
MAX_NOTE = 4000
NO_MATCH = "NO MATCH"
MAX_ITEMS = 20000


class ReviewError(ValueError):
    """A review cannot be made, labelled, exported or imported as asked."""


class ReviewClosed(ReviewError):
    """Labelling of the review is closed by an admin: no label can be given or changed until it is reopened."""

    def __init__(self, review_id: str) -> None:
        super().__init__(
            f"review {review_id} is closed: labelling has ended, so labels can no longer be given or changed "
            "(the labels given are kept; an admin can reopen it)"
        )


@dataclass
class ReviewSpec:
    name: str
    task_type: str
    annotators: list[str]
    per_annotator: int
    overlap: int = 1
    blind: bool = True
    seed: int = 0
    instructions: str = ""
    judge_metric: str = ""  # from a run: the score the judge gave (agree) or to rank/prefer by (rank, pairwise)
    cells: list[str] = field(default_factory=list)  # from a run: the cells to rank or pair (all, by default)
    criteria: list[tuple[str, str]] | None = None  # rank: (key, wording) per flag; None: the task's own


# ---- items ------------------------------------------------------------------------------------------------


def _check_item(task_type: str, data: dict[str, Any], where: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(id, payload, key) from one item object; raises ReviewError naming ``where``."""
    if not isinstance(data, dict):
        raise ReviewError(f"{where}: expected a JSON object")
    item_id = str(data.get("id") or "").strip()
    if not item_id or len(item_id) > 200:
        raise ReviewError(f"{where}: an item needs an id (at most 200 characters)")
    missing = [f for f in ITEM_FIELDS[task_type] if f not in data]
    if missing:
        raise ReviewError(f"{where}: a {task_type} item needs {', '.join(missing)}")
    known = {"id", "judge", "key", *ITEM_FIELDS[task_type], *OPTIONAL_FIELDS.get(task_type, ())}
    for extra in sorted(set(data) - known):  # other fields are the writer's own (ignored); a near-miss is a typo
        close = difflib.get_close_matches(extra, sorted(known), n=1, cutoff=0.6)
        if close:  # a misspelt "key" or "context" would be dropped without a word
            raise ReviewError(f"{where}: unknown field {extra!r} (did you mean {close[0]!r}?)")
    payload: dict[str, Any] = {}
    key: dict[str, Any] = dict(data.get("key") or {})
    if "judge" in data:
        key["judge"] = data["judge"]
    if task_type in ("rank", "pairwise"):
        outputs = data["outputs"]
        if not isinstance(outputs, list) or len(outputs) < 2 or (task_type == "pairwise" and len(outputs) != 2):
            raise ReviewError(
                f"{where}: {task_type} needs {'two' if task_type == 'pairwise' else 'two or more'} outputs"
            )
        texts, names = [], []
        for i, output in enumerate(outputs):
            if isinstance(output, str):
                texts.append(output)
                names.append(f"output-{i + 1}")
            elif isinstance(output, dict) and isinstance(output.get("text"), str) and output["text"].strip():
                texts.append(output["text"])
                names.append(str(output.get("id") or f"output-{i + 1}"))
            else:
                raise ReviewError(f"{where}: outputs[{i}] must be a string or an object with text")
            if not texts[-1].strip():
                raise ReviewError(f"{where}: outputs[{i}] is blank: nothing to rank or compare")
        payload = {"context": str(data["context"]), "outputs": texts}
        key["outputs"] = names
    elif task_type == "agree":
        score = data["score"]
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise ReviewError(f"{where}: score must be a number (or null), not {score!r}")
        payload = {k: data[k] for k in ITEM_FIELDS["agree"]}
        payload["output"], payload["context"] = str(payload["output"]), str(payload["context"])
        payload["reasoning"] = str(payload["reasoning"] or "")
    elif task_type == "gold":
        themes = data["themes"]
        if not isinstance(themes, list) or not themes or not all(isinstance(t, str) and t for t in themes):
            raise ReviewError(f"{where}: themes must be a list of theme names")
        payload = {"message": str(data["message"]), "context": str(data.get("context") or ""), "themes": themes}
    elif task_type == "match":
        payload = {"sentence": str(data["sentence"]), "draft": str(data["draft"])}
        spans = data.get("spans")
        payload["spans"] = (
            [str(s) for s in spans] if isinstance(spans, list) and spans else _sentences(payload["draft"])
        )
    elif task_type == "evidence":
        sentences = data["sentences"]
        if not isinstance(sentences, list) or not sentences:
            raise ReviewError(f"{where}: sentences must be a list of {{id, text}}")
        cleaned: list[dict[str, str]] = []
        for i, s in enumerate(sentences):
            if not isinstance(s, dict) or "id" not in s or not isinstance(s.get("text"), str):
                raise ReviewError(f"{where}: sentences[{i}] needs id and text")
            if any(c["id"] == str(s["id"]) for c in cleaned):
                raise ReviewError(f"{where}: sentences[{i}] repeats the id {str(s['id'])!r}")
            cleaned.append({"id": str(s["id"]), "text": s["text"]})
        judge = data.get("judge")
        if isinstance(judge, dict):
            wrong = {k: v for k, v in judge.items() if v not in RELEVANCE}
            if wrong:
                raise ReviewError(f"{where}: judge: {wrong} not one of {', '.join(RELEVANCE)}")
        payload = {"question": str(data["question"]), "context": str(data.get("context") or ""), "sentences": cleaned}
    return item_id, payload, key


def _sentences(text: str) -> list[str]:
    from bedside.text.sentences import split_sentences

    return [s.text for s in split_sentences(text)] or [text]


def _json_lines(text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line of uploaded JSON Lines as an object, read as every bedside reader reads JSON (deep
    nesting, huge integers and non-objects are clear errors); a bad line is a :class:`ReviewError` naming it."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield number, json_object(line, line=number)
            except InputError as exc:
                raise ReviewError(str(exc)) from None


def items_from_jsonl(task_type: str, text: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    if task_type not in TASK_TYPES:
        raise ReviewError(f"task type must be one of {', '.join(TASK_TYPES)}")
    items = []
    for number, data in _json_lines(text):
        items.append(_check_item(task_type, data, f"line {number}"))
        if len(items) > MAX_ITEMS:
            raise ReviewError(f"more than {MAX_ITEMS} items")
    _unique(items)
    return items


def _unique(items: Sequence[tuple[str, Any, Any]]) -> None:
    repeated = [i for i, n in Counter(i for i, _, _ in items).items() if n > 1]
    if repeated:
        raise ReviewError(f"item ids repeat: {', '.join(sorted(repeated)[:5])}")
    if not items:
        raise ReviewError("no items")


GOLD_INPUTS = frozenset({"reference", "references", "gold", "answer", "answers"})
"""Input names that hold the expected answer: never shown to reviewers by the generic context (a task that wants
them shown says so in its own ``review_context``)."""


def _inputs_text(sample: dict[str, Any]) -> str:
    """A sample's inputs as plain text for reviewers: each input under its name, strings as they are, and never
    the gold answers (:data:`GOLD_INPUTS`), which a reviewer judging outputs must not see."""
    parts = []
    for name, value in (sample.get("inputs") or {}).items():
        if name in GOLD_INPUTS:
            continue
        shown = value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False)
        parts.append(f"{name}:\n{shown}")
    return "\n\n".join(parts)


def items_from_run(store: Any, run_id: str, spec: ReviewSpec) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Items built from a stored run's outputs (see the module docstring)."""
    from bedside.runs.registry import resolve_task

    run = store.run(run_id)
    rows = [r for r in store.results(run["id"]) if r.status == "ok" and r.output]
    try:
        task = resolve_task(run["task"])
    except (ValueError, ImportError):
        task = None
    own = getattr(task, "review_context", None)

    def describe(sample: dict[str, Any]) -> str:
        """The task's view of the sample, or the generic one where the task has none for it (None)."""
        found = own(sample) if own is not None else None
        return str(found) if found is not None else _inputs_text(sample)

    hook = getattr(task, "review_items", None)
    if hook is not None:
        made = hook(spec.task_type, rows)
        if made is not None:
            items = [_check_item(spec.task_type, dict(d), f"{run['task']} item {i}") for i, d in enumerate(made)]
            for _, _, key in items:
                key.setdefault("run", run["id"])
            _unique(items)
            return items
    metric = spec.judge_metric
    if spec.task_type in ("rank", "pairwise"):
        chosen = _chosen_cells(spec, {r.cell for r in rows})
        groups: dict[tuple[str, str, int], list[Any]] = defaultdict(list)
        for r in rows:
            if not chosen or r.cell in chosen:
                groups[(r.dataset, r.sample_id, r.epoch)].append(r)
        items = []
        for (dataset, sample_id, epoch), group in sorted(groups.items()):
            group.sort(key=lambda r: chosen.index(r.cell) if chosen else 0)  # chosen: in the creator's order
            if not chosen:
                group.sort(key=lambda r: r.cell)
            if spec.task_type == "pairwise":
                group = group[:2]
            if len(group) < 2:
                continue
            data: dict[str, Any] = {
                "id": f"{dataset}/{sample_id}" + (f"/{epoch}" if epoch else ""),
                "context": describe(group[0].sample),
                "outputs": [{"id": r.cell, "text": r.output["text"]} for r in group],
                "key": {
                    "run": run["id"],
                    "cells": [r.cell for r in group],
                    "systems": [r.system for r in group],
                    "models": [r.model for r in group],
                    "sample": sample_id,
                    "epoch": epoch,
                },
            }
            if metric:
                scores = [r.scores.get(metric) for r in group]
                if spec.task_type == "rank":
                    data["judge"] = {"scores": scores, "metric": metric}
                elif None not in scores:
                    a, b = float(scores[0] or 0.0), float(scores[1] or 0.0)
                    data["judge"] = "A" if a > b else "B" if b > a else "tie"
            items.append(_check_item(spec.task_type, data, f"sample {sample_id}"))
        _unique(items)
        return items
    if spec.task_type == "agree":
        if not metric:
            raise ReviewError("an agree review from a run needs the judge's metric")
        scored = sorted({m for r in rows for m in r.scores})
        if metric not in scored:
            raise ReviewError(f"no answered sample of run {run['id']} has the metric {metric!r}; its metrics: "
                              f"{', '.join(scored) or 'none'}")  # fmt: skip
        items = []
        for r in rows:
            score = r.scores.get(metric)
            if score is None:
                continue
            judgements = (r.output.get("extra") or {}).get("judgements") or {}
            reasoning = _reasoning(judgements, metric, getattr(task, "judge_scorers", {}))
            data = {
                "id": f"{r.cell}/{r.sample_id}/{r.epoch}/{metric}",
                "context": describe(r.sample),
                "output": r.output["text"],
                "metric": metric,
                "score": score,
                "reasoning": reasoning,
                "key": {
                    "run": run["id"],
                    "cell": r.cell,
                    "system": r.system,
                    "model": r.model,
                    "sample": r.sample_id,
                    "epoch": r.epoch,
                },
            }
            items.append(_check_item("agree", data, f"sample {r.sample_id}"))
        # Item ids hold the cell: give annotators an opaque id instead.
        blinded = [(_opaque(i), p, {**k, "item": i}) for i, p, k in items]
        _unique(blinded)
        return blinded
    raise ReviewError(
        f"{spec.task_type} items cannot be built from a {run['task']} run's outputs: upload a JSONL of items"
    )


def _reasoning(judgements: Mapping[str, Any], metric: str, judge_scorers: Mapping[str, tuple[str, str]]) -> str:
    """What the judge said for ``metric``: the task's ``judge_scorers`` name the judgement and criterion a metric
    reads (sensemaking's ``diagnosis_hard`` is the ``hard`` judgement's ``correct``); a rubric judgement keeps its
    texts under ``justifications`` (per criterion), a plain one under ``reasoning`` or the like. Annotators who
    agree or disagree with a score are shown why it was given."""
    key, criterion = judge_scorers.get(metric, (metric, ""))
    judged = judgements.get(key)
    if not isinstance(judged, dict):
        return ""
    texts = judged.get("justifications")
    if isinstance(texts, dict):
        chosen = [texts.get(criterion)] if criterion else list(texts.values())
        return " ".join(str(text) for text in chosen if text)
    return str(judged.get("reasoning") or judged.get("justification") or judged.get("explanation") or "")


def _chosen_cells(spec: ReviewSpec, present: set[str]) -> list[str]:
    """The creator's cells, checked against the run's (a pairwise review needs exactly two; none: every cell,
    and a pairwise review of a run with more than two cells must name its two)."""
    chosen = list(dict.fromkeys(c for c in spec.cells if c))
    unknown = [c for c in chosen if c not in present]
    if unknown:
        raise ReviewError(f"the run has no cell {', '.join(unknown)} with outputs")
    if spec.task_type == "pairwise":
        if chosen and len(chosen) != 2:
            raise ReviewError("a pairwise review compares two cells: choose exactly two")
        if not chosen and len(present) > 2:
            raise ReviewError(f"the run has {len(present)} cells: choose the two to compare")
    if spec.task_type == "rank" and len(chosen) == 1:
        raise ReviewError("a rank review needs two or more cells")
    return chosen


def instruct_criteria() -> list[tuple[str, str]]:
    """MedAlign's C1–C3, from the registered instruct task (the web layer imports no task): the flags of a rank
    review uploaded as JSONL, and of rank reviews stored before reviews stored their criteria."""
    from bedside.runs.registry import resolve_task

    try:
        task = resolve_task("instruct")
    except (LookupError, ValueError, ImportError):
        return []
    return [(str(k), str(w)) for k, w in getattr(task, "review_criteria", ())]


def rank_criteria(store: Any, run_id: str | None, spec: ReviewSpec) -> list[tuple[str, str]]:
    """The rank review's flags: the creator's, else the run's task's ``review_criteria``, else (JSONL) C1–C3."""
    if spec.criteria is not None:
        return spec.criteria
    if run_id is None:
        return instruct_criteria()
    from bedside.runs.registry import resolve_task

    try:
        task = resolve_task(store.run(run_id)["task"])
    except (ValueError, ImportError):
        return []
    return [(str(k), str(w)) for k, w in getattr(task, "review_criteria", ())]


def parse_criteria(text: str) -> list[tuple[str, str]] | None:
    """Rank criteria written one per line as ``key: wording`` (None when the text is empty)."""
    found: list[tuple[str, str]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, colon, wording = line.partition(":")
        key = key.strip().lower()
        if not colon or not key.isidentifier() or not wording.strip():
            raise ReviewError(f"rank criteria line {n}: write key: wording (e.g. c1: not appropriate)")
        found.append((key, wording.strip()[:300]))
    if len({k for k, _ in found}) != len(found):
        raise ReviewError("rank criteria: each key once")
    return found or None


def _opaque(value: str) -> str:
    return "item-" + hashlib.sha256(value.encode()).hexdigest()[:12]


# ---- creating a review ---------------------------------------------------------------------------------------


def new_review_id(name: str) -> str:
    """A new review's id: unique over time, so two reviews of one name never share one. Tests fix it
    (``tests/conftest.py``) so that no page text is decided by chance."""
    return "rv-" + hashlib.sha256(f"{name}|{time.time_ns()}".encode()).hexdigest()[:10]


def new_review(store: Any, spec: ReviewSpec, *, run_id: str = "", items_text: str = "", created_by: str) -> str:
    """A review built from a JSONL of items (``items_text``) or from a stored run's outputs (``run_id``): the one
    path the web form and ``bedside review create`` take. Returns the review's id."""
    from bedside.runs.store import RunNotFoundError

    if spec.task_type not in TASK_TYPES:
        raise ReviewError(f"task type {spec.task_type!r}: choose one of {', '.join(TASK_TYPES)}")
    if items_text:
        items = items_from_jsonl(spec.task_type, items_text)
        source = "jsonl"
        spec.cells = []
    elif run_id:
        try:
            items = items_from_run(store, run_id, spec)
            if spec.task_type == "rank":
                spec.criteria = rank_criteria(store, run_id, spec)
        except RunNotFoundError:
            raise ReviewError(f"no run {run_id!r}") from None
        source = f"run:{run_id}"
    else:
        raise ReviewError("choose a run or upload a JSONL of items")
    return create_review(store.engine, spec, items, source=source, created_by=created_by)


def create_review(
    engine: Engine,
    spec: ReviewSpec,
    items: list[tuple[str, dict[str, Any], dict[str, Any]]],
    *,
    source: str,
    created_by: str,
) -> str:
    if spec.task_type not in TASK_TYPES:
        raise ReviewError(f"task type must be one of {', '.join(TASK_TYPES)}")
    annotators = list(dict.fromkeys(a.strip() for a in spec.annotators if a.strip()))
    if not annotators:
        raise ReviewError("name at least one annotator")
    with engine.connect() as db:
        known = {r.name for r in db.execute(select(users_table.c.name).where(users_table.c.disabled.is_(False)))}
    unknown = [a for a in annotators if a not in known]
    if unknown:
        raise ReviewError(f"no active account for {', '.join(unknown)} (bedside users add)")
    if not 1 <= spec.overlap <= len(annotators):
        raise ReviewError(f"overlap must be between 1 and the number of annotators ({len(annotators)})")
    if spec.per_annotator < 1:
        raise ReviewError("items per annotator must be at least 1")
    plan = assign(
        [i for i, _, _ in items], annotators, overlap=spec.overlap, per_annotator=spec.per_annotator, seed=spec.seed
    )
    if not any(plan.values()):
        raise ReviewError("no item could be assigned")
    review_id = new_review_id(spec.name)
    config = {
        "annotators": annotators,
        "per_annotator": spec.per_annotator,
        "overlap": spec.overlap,
        "blind": spec.blind,
        "seed": spec.seed,
        "judge_metric": spec.judge_metric,
        "cells": spec.cells,
        "criteria": [list(c) for c in (instruct_criteria() if spec.criteria is None else spec.criteria)]
        if spec.task_type == "rank"
        else [],
    }
    with engine.begin() as db:
        db.execute(
            insert(reviews_table).values(
                id=review_id,
                name=spec.name or review_id,
                task_type=spec.task_type,
                instructions=spec.instructions,
                config=config,
                source=source,
                created_by=created_by,
                created_at=time.time(),
            )
        )
        db.execute(
            insert(items_table),
            [
                {"review_id": review_id, "item_id": i, "position": n, "payload": p, "key": k}
                for n, (i, p, k) in enumerate(items)
            ],
        )
        rows = []
        for annotator, assigned in plan.items():
            order = list(assigned)
            if spec.blind:
                random.Random(f"{spec.seed}|order|{annotator}").shuffle(order)
            rows += [
                {"review_id": review_id, "annotator": annotator, "item_id": i, "position": n, "submitted": False}
                for n, i in enumerate(order)
            ]
        db.execute(insert(assignments_table), rows)
    given = {item for chosen in plan.values() for item in chosen}
    audit(
        engine, created_by, "review-created", review_id, items=len(items), assignments=len(rows), source=source,
        unassigned=len(items) - len(given),
    )  # fmt: skip
    return review_id


def assign(
    items: Sequence[str], annotators: Sequence[str], *, overlap: int, per_annotator: int, seed: int
) -> dict[str, list[str]]:
    """Each item to ``overlap`` annotators with room left (fewest items first, seeded ties), ≤ per_annotator each.

    Items that cannot get ``overlap`` annotators are left out whole, so every assigned item can be agreed on.
    """
    order, rng = _seeded_order(items, seed)
    plan: dict[str, list[str]] = {a: [] for a in annotators}
    tie = {a: rng.random() for a in annotators}
    for item in order:
        room = [a for a in annotators if len(plan[a]) < per_annotator]
        if len(room) < overlap:
            break
        for annotator in sorted(room, key=lambda a: (len(plan[a]), tie[a]))[:overlap]:
            plan[annotator].append(item)
    return plan


def _seeded_order(items: Sequence[str], seed: int) -> tuple[list[str], random.Random]:
    rng = random.Random(f"{seed}|assign")
    order = list(items)
    rng.shuffle(order)
    return order, rng


def assignment_order(items: Sequence[str], seed: int) -> list[str]:
    """The order in which :func:`assign` hands out ``items`` (given in the review's item order) for ``seed``: what
    annotators added later are given items in, so they follow the review's own draw."""
    return _seeded_order(items, seed)[0]


# ---- reading a review -------------------------------------------------------------------------------------


def labelling_closed(info: dict[str, Any]) -> dict[str, Any] | None:
    """``{"at", "by"}`` when an admin closed the review's labelling (kept in its config), else None."""
    closed = (info.get("config") or {}).get("closed")
    return dict(closed) if isinstance(closed, dict) else None


def item_token(review_id: str, item_id: str) -> str:
    """A stand-in for the item id in an annotator's form (ids may name systems; this names nothing): a label sent
    for a position whose item an admin has since moved is refused instead of landing on another item."""
    return hashlib.sha256(f"{review_id}|{item_id}".encode()).hexdigest()[:16]


@dataclass
class Progress:
    annotator: str
    assigned: int
    labelled: int
    submitted: bool


def unassigned_items(engine: Engine, review_id: str) -> list[str]:
    """The review's items no annotator was assigned (beyond ``per_annotator`` × annotators ÷ ``overlap``, or
    left whole because fewer than ``overlap`` annotators had room): shown, never silently dropped."""
    i, a = items_table.c, assignments_table.c
    assigned = select(a.item_id).where(a.review_id == review_id)
    query = select(i.item_id).where((i.review_id == review_id) & i.item_id.not_in(assigned)).order_by(i.position)
    with engine.connect() as db:
        return [str(r.item_id) for r in db.execute(query)]


def item_count(engine: Engine, review_id: str) -> int:
    with engine.connect() as db:
        return int(
            db.execute(
                select(func.count()).select_from(items_table).where(items_table.c.review_id == review_id)
            ).scalar_one()
        )


def review(engine: Engine, review_id: str) -> dict[str, Any] | None:
    with engine.connect() as db:
        found = db.execute(select(reviews_table).where(reviews_table.c.id == review_id)).mappings().first()
    return dict(found) if found else None


def reviews_for(engine: Engine, user: str | None) -> list[dict[str, Any]]:
    """Every review (user None: an admin's list) or the reviews ``user`` has assignments in, with progress."""
    with engine.connect() as db:
        listed = [
            dict(r) for r in db.execute(select(reviews_table).order_by(reviews_table.c.created_at.desc())).mappings()
        ]
        if user is not None:
            mine = {
                r.review_id
                for r in db.execute(
                    select(assignments_table.c.review_id).where(assignments_table.c.annotator == user).distinct()
                )
            }
            listed = [r for r in listed if r["id"] in mine]
    for r in listed:
        r["progress"] = progress(engine, r["id"], only=user)
        r["closed"] = labelling_closed(r)
    return listed


def progress(engine: Engine, review_id: str, only: str | None = None) -> list[Progress]:
    a, lab = assignments_table.c, labels_table.c
    query = (
        select(
            a.annotator,
            func.count().label("assigned"),
            func.count(lab.item_id).label("labelled"),
            func.min(case_int(a.submitted)).label("submitted"),
        )
        .select_from(
            assignments_table.outerjoin(
                labels_table,
                (lab.review_id == a.review_id) & (lab.item_id == a.item_id) & (lab.annotator == a.annotator),
            )
        )
        .where(a.review_id == review_id)
        .group_by(a.annotator)
        .order_by(a.annotator)
    )
    if only is not None:
        query = query.where(a.annotator == only)
    with engine.connect() as db:
        return [Progress(r.annotator, r.assigned, r.labelled, bool(r.submitted)) for r in db.execute(query)]


def case_int(column: Any) -> Any:
    from sqlalchemy import case

    return case((column.is_(True), 1), else_=0)


@dataclass
class Assignment:
    review: dict[str, Any]
    position: int
    count: int
    item_id: str
    payload: dict[str, Any]
    label: dict[str, Any] | None
    submitted: bool
    order: list[int] = field(default_factory=list)  # shown position -> canonical output index


def assignment(engine: Engine, review_id: str, annotator: str, position: int) -> Assignment | None:
    """``annotator``'s own ``position``-th item (None when they have none there): the only way items reach them."""
    a = assignments_table.c
    with engine.connect() as db:
        found = db.execute(
            select(a.item_id, a.submitted).where(
                (a.review_id == review_id) & (a.annotator == annotator) & (a.position == position)
            )
        ).first()
        if found is None:
            return None
        count = db.execute(
            select(func.count()).where((a.review_id == review_id) & (a.annotator == annotator))
        ).scalar_one()
        item = db.execute(
            select(items_table.c.payload).where(
                (items_table.c.review_id == review_id) & (items_table.c.item_id == found.item_id)
            )
        ).scalar_one()
        label = db.execute(
            select(labels_table.c.value).where(
                (labels_table.c.review_id == review_id)
                & (labels_table.c.item_id == found.item_id)
                & (labels_table.c.annotator == annotator)
            )
        ).scalar_one_or_none()
    info = review(engine, review_id)
    assert info is not None
    shown = Assignment(info, position, int(count), found.item_id, item, label, bool(found.submitted))
    outputs = item.get("outputs") or []
    shown.order = list(range(len(outputs)))
    if info["config"].get("blind", True) and outputs:
        random.Random(f"{info['config'].get('seed', 0)}|outputs|{annotator}|{found.item_id}").shuffle(shown.order)
    return shown


def next_position(engine: Engine, review_id: str, annotator: str) -> int | None:
    """Where ``annotator`` left off: their first item without a label (None when none is assigned)."""
    a, lab = assignments_table.c, labels_table.c
    with engine.connect() as db:
        first_open = db.execute(
            select(func.min(a.position))
            .select_from(
                assignments_table.outerjoin(
                    labels_table,
                    (lab.review_id == a.review_id) & (lab.item_id == a.item_id) & (lab.annotator == a.annotator),
                )
            )
            .where((a.review_id == review_id) & (a.annotator == annotator) & lab.item_id.is_(None))
        ).scalar_one_or_none()
        if first_open is not None:
            return int(first_open)
        any_at = db.execute(
            select(func.min(a.position)).where((a.review_id == review_id) & (a.annotator == annotator))
        ).scalar_one_or_none()
    return None if any_at is None else int(any_at)
