"""Changing a review after it is made: add annotators, move or release an annotator's unlabelled items, close
labelling and reopen it. The web app's admin forms and `bedside review ...` both call these; each change is one
transaction and one audit entry.

What never changes: a label. Labels are stored per (item, annotator) apart from assignments, so moving work
moves only assignments of items their annotator has not labelled; a labelled item stays with whoever labelled it,
and every label stays attributed to who gave it.

Adding annotators (:func:`add_annotators`). Moving existing assignments to a newcomer would take items from
annotators who may have them open, so a new annotator is given what the review is *short of*: the items that
have fewer than ``overlap`` annotators (items nobody was assigned because capacity ran out, and items left short
by a release). They are visited in the order creation handed items out (the review's seeded draw), each goes to
the new annotators with the fewest items so far (seeded ties), at most ``per_annotator`` each, and an item is
given only when it can be brought up to ``overlap`` annotators — creation's rule, so every assigned item can be
agreed on (with overlap 2, an item nobody has needs two new annotators). When the review is short of nothing the
addition is refused, saying so: to share out work already assigned, move it (:func:`move_items`).

Moving (:func:`move_items`). An annotator's unlabelled items go to another active account (who joins the review
if they were not on it), or, with no target, are released (the review is then short of them, and a later
addition fills them). ``limit`` moves only the last so many, in the annotator's own order (where they would get
to last), to split work. An item the target already has stays where it is (an item is never assigned twice to
one annotator). The source's remaining items are renumbered 0..n-1 in their order (positions are "my n-th
item"); a form still open on a moved item carries :func:`bedside.web.review.item_token`, so its label is refused
instead of landing on the item now at that position.

Closing (:func:`close_labelling`, :func:`open_labelling`): a closed review refuses every label (item pages, label
posts, submissions; :func:`bedside.web.review.save_label` itself), and the review lists show it closed; labels,
exports, imports, the meta-evaluation and adjudication are untouched. While closed, its annotators cannot be
changed either (reopen first), so a closed review is exactly what was labelled when it closed.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine, delete, func, insert, select, update

from bedside.web.db import assignments_table, audit, items_table, labels_table, reviews_table, users_table
from bedside.web.review import ReviewError, assignment_order, labelling_closed


@dataclass
class Moved:
    """What :func:`move_items` did: the items moved (or released), those left with the source because the
    target already has them, and how many of the source's items stay because they are labelled."""

    source: str
    target: str | None
    moved: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    labelled: int = 0


def add_annotators(engine: Engine, review_id: str, names: Sequence[str], *, by: str) -> dict[str, list[str]]:
    """Add annotators to a review, giving them the items it is short of (see the module docstring); returns each
    new annotator's items in the order they will see them. Refused, changing nothing, when a name has no active
    account or is already on the review, when labelling is closed, or when no item can be given."""
    wanted = list(dict.fromkeys(n.strip() for n in names if n.strip()))
    if not wanted:
        raise ReviewError("name at least one annotator to add")
    a = assignments_table.c
    with engine.begin() as db:
        info = _locked_review(db, review_id)
        _refuse_if_closed(info, "adding annotators")
        _check_accounts(db, wanted)
        holding = set(db.execute(select(a.annotator).where(a.review_id == review_id).distinct()).scalars())
        already = [n for n in wanted if n in holding]
        if already:
            raise ReviewError(f"already on this review: {', '.join(already)} (move items to them instead)")
        config = dict(info["config"])
        overlap, cap, seed = int(config["overlap"]), int(config["per_annotator"]), int(config.get("seed", 0))
        items = list(
            db.execute(
                select(items_table.c.item_id)
                .where(items_table.c.review_id == review_id)
                .order_by(items_table.c.position)
            ).scalars()
        )
        held = Counter(db.execute(select(a.item_id).where(a.review_id == review_id)).scalars())
        plan = _fill_shortfall(assignment_order(items, seed), held, wanted, overlap=overlap, cap=cap, seed=seed)
        if not any(plan.values()):
            raise ReviewError(
                f"the review is short of no item its new annotators can take (every item has its {overlap} "
                f"annotator(s){'' if overlap == 1 else ', or needs more than the new annotators can give'}): "
                "nothing changed; to share out work already assigned, move an annotator's unlabelled items"
            )
        rows = []
        for name, given in plan.items():
            order = list(given)
            if config.get("blind", True):
                random.Random(f"{seed}|order|{name}").shuffle(order)  # as creation orders each annotator's items
            plan[name] = order
            rows += [
                {"review_id": review_id, "annotator": name, "item_id": i, "position": n, "submitted": False}
                for n, i in enumerate(order)
            ]
        if rows:
            db.execute(insert(assignments_table), rows)
        config["annotators"] = list(dict.fromkeys([*config.get("annotators", []), *wanted]))
        db.execute(update(reviews_table).where(reviews_table.c.id == review_id).values(config=config))
    audit(
        engine, by, "annotators-added", review_id, annotators=wanted, items={n: len(g) for n, g in plan.items()},
    )  # fmt: skip
    return plan


def _fill_shortfall(
    order: Sequence[str], held: Counter[str], newcomers: Sequence[str], *, overlap: int, cap: int, seed: int
) -> dict[str, list[str]]:
    """Creation's rule on what is missing: each short item, in the seeded order, to the newcomers with the fewest
    items (seeded ties, at most ``cap`` each), only when they bring it up to ``overlap`` annotators."""
    plan: dict[str, list[str]] = {n: [] for n in newcomers}
    tie = {n: random.Random(f"{seed}|added|{n}").random() for n in newcomers}
    for item in order:
        need = overlap - held[item]
        if need <= 0:
            continue
        room = [n for n in newcomers if len(plan[n]) < cap]
        if len(room) < need:
            continue  # a later item may need fewer
        for name in sorted(room, key=lambda n: (len(plan[n]), tie[n]))[:need]:
            plan[name].append(item)
    return plan


def move_items(
    engine: Engine, review_id: str, source: str, target: str | None, *, by: str, limit: int | None = None
) -> Moved:
    """Move ``source``'s unlabelled items to ``target`` (None: release them), at most ``limit`` (their last ones);
    see the module docstring. Refused, changing nothing, when labelling is closed, when ``source`` has no items
    in the review, when ``target`` is not an active account or is ``source``, or when nothing can move."""
    if limit is not None and limit < 1:
        raise ReviewError("the number of items to move must be at least 1")
    if target == source:
        raise ReviewError("choose another annotator to move the items to")
    a, lab = assignments_table.c, labels_table.c
    with engine.begin() as db:
        info = _locked_review(db, review_id)
        _refuse_if_closed(info, "moving items")
        if target is not None:
            _check_accounts(db, [target])
        mine = db.execute(
            select(a.item_id, a.submitted, a.position)
            .where((a.review_id == review_id) & (a.annotator == source))
            .order_by(a.position)
        ).all()
        if not mine:
            raise ReviewError(f"{source} has no items in this review")
        labelled = set(
            db.execute(select(lab.item_id).where((lab.review_id == review_id) & (lab.annotator == source))).scalars()
        )
        open_items = [r.item_id for r in mine if r.item_id not in labelled]
        done = Moved(source, target, labelled=len(mine) - len(open_items))
        if not open_items:
            raise ReviewError(f"every item of {source} is labelled: there is nothing to move (labels stay theirs)")
        chosen = open_items[-limit:] if limit is not None else open_items
        theirs: set[str] = set()
        if target is not None:
            theirs = set(
                db.execute(select(a.item_id).where((a.review_id == review_id) & (a.annotator == target))).scalars()
            )
        done.moved = [i for i in chosen if i not in theirs]
        done.kept = [i for i in chosen if i in theirs]
        if not done.moved:
            raise ReviewError(f"{target} already has every item that would move: nothing changed")
        moving = set(done.moved)
        db.execute(
            delete(assignments_table).where(
                (a.review_id == review_id) & (a.annotator == source) & a.item_id.in_(done.moved)
            )
        )
        _renumber(db, review_id, source, [r.item_id for r in mine if r.item_id not in moving])
        if target is not None:
            _append(db, info, target, done.moved)
    audit(
        engine, by, "items-moved" if target is not None else "items-released", review_id, source=source,
        to=target, items=len(done.moved), kept=len(done.kept), labelled_stay=done.labelled,
    )  # fmt: skip
    return done


def _renumber(db: Connection, review_id: str, annotator: str, remaining: Sequence[str]) -> None:
    """Positions 0..n-1 again, in the annotator's order: "my n-th item" has no gaps to fall into."""
    a = assignments_table.c
    mine = (a.review_id == review_id) & (a.annotator == annotator)
    for n, item_id in enumerate(remaining):
        db.execute(update(assignments_table).where(mine & (a.item_id == item_id)).values(position=n))


def _append(db: Connection, info: dict[str, Any], target: str, items: Sequence[str]) -> None:
    """``items`` after ``target``'s own (shuffled with a seed of their own when the review is blind); a target
    new to the review joins its annotators."""
    a = assignments_table.c
    review_id, config = info["id"], dict(info["config"])
    start = db.execute(
        select(func.coalesce(func.max(a.position) + 1, 0)).where((a.review_id == review_id) & (a.annotator == target))
    ).scalar_one()
    order = list(items)
    if config.get("blind", True):
        random.Random(f"{config.get('seed', 0)}|order|{target}|{start}").shuffle(order)
    db.execute(
        insert(assignments_table),
        [
            {"review_id": review_id, "annotator": target, "item_id": i, "position": start + n, "submitted": False}
            for n, i in enumerate(order)
        ],
    )
    if target not in config.get("annotators", []):
        config["annotators"] = [*config.get("annotators", []), target]
        db.execute(update(reviews_table).where(reviews_table.c.id == review_id).values(config=config))


def close_labelling(engine: Engine, review_id: str, *, by: str) -> None:
    """End labelling: every label is refused until :func:`open_labelling`; labels given are kept."""
    with engine.begin() as db:
        info = _locked_review(db, review_id)
        if labelling_closed(info):
            raise ReviewError("labelling of this review is already closed")
        config = {**info["config"], "closed": {"at": time.time(), "by": by}}
        db.execute(update(reviews_table).where(reviews_table.c.id == review_id).values(config=config))
    audit(engine, by, "labelling-closed", review_id)


def open_labelling(engine: Engine, review_id: str, *, by: str) -> None:
    """Let annotators label a closed review again, where they left off."""
    with engine.begin() as db:
        info = _locked_review(db, review_id)
        closed = labelling_closed(info)
        if closed is None:
            raise ReviewError("labelling of this review is open: there is nothing to reopen")
        config = {k: v for k, v in info["config"].items() if k != "closed"}
        db.execute(update(reviews_table).where(reviews_table.c.id == review_id).values(config=config))
    audit(engine, by, "labelling-reopened", review_id, closed_by=closed.get("by"))


def _locked_review(db: Connection, review_id: str) -> dict[str, Any]:
    """The review's row, locked for this transaction on PostgreSQL (two admins' changes apply one after the
    other; SQLite runs one writer at a time anyway)."""
    found = (
        db.execute(select(reviews_table).where(reviews_table.c.id == review_id).with_for_update()).mappings().first()
    )
    if found is None:
        raise ReviewError(f"no review {review_id}")
    return dict(found)


def _refuse_if_closed(info: dict[str, Any], what: str) -> None:
    if labelling_closed(info):
        raise ReviewError(f"labelling of this review is closed: reopen it before {what}")


def _check_accounts(db: Connection, names: Sequence[str]) -> None:
    active = set(
        db.execute(
            select(users_table.c.name).where(users_table.c.name.in_(list(names)) & users_table.c.disabled.is_(False))
        ).scalars()
    )
    missing = [n for n in names if n not in active]
    if missing:
        raise ReviewError(f"no active account for {', '.join(missing)} (bedside users add)")
