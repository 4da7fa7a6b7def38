"""Routes of the review app. Annotators reach items only as "my n-th assignment in review R"
(``/reviews/R/items/n``), so there is no URL naming another annotator's item; admins set reviews up, change
their annotators and close labelling (:mod:`bedside.web.review_edit`), watch progress and the meta-evaluation,
export and import labels."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select
from starlette.concurrency import run_in_threadpool

from bedside.runs.store import Store, results_table
from bedside.web import adjudication as adj
from bedside.web import review as rv
from bedside.web import review_edit, review_export, review_labels, review_meta
from bedside.web.db import audit, audit_table, users_table
from bedside.web.pages import Forbidden, admin_session, checked_post, render, session_of


def _review_or_404(request: Request, review_id: str) -> dict[str, Any]:
    found = rv.review(request.app.state.store.engine, review_id)
    if found is None:
        raise HTTPException(status_code=404, detail="no such review")
    return found


def _int(value: Any, default: int, name: str) -> int:
    if value in (None, ""):
        return default
    try:
        return int(str(value))
    except ValueError:
        raise rv.ReviewError(f"{name} must be a whole number") from None


async def _upload_text(upload: Any) -> str:
    if upload is None or isinstance(upload, str) or not getattr(upload, "filename", ""):
        return ""
    data = await upload.read()
    try:
        return str(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise rv.ReviewError("the file is not UTF-8 text") from None


MAX_POSITION = 2**31 - 1
"""No review holds more items; a larger position in a URL is "no such item", not an integer the database
cannot bind."""


def _assignment(engine: Any, review_id: str, user: str, position: int) -> rv.Assignment | None:
    if not 0 <= position <= MAX_POSITION:
        return None
    return rv.assignment(engine, review_id, user, position)


def review_routes(app: FastAPI) -> None:
    @app.get("/reviews", response_class=HTMLResponse)
    async def reviews(request: Request) -> Response:
        session = session_of(request)
        engine = request.app.state.store.engine
        listed = rv.reviews_for(engine, None if session.user.adjudicates else session.user.name)
        mine = rv.reviews_for(engine, session.user.name) if session.user.adjudicates else listed
        return render(request, "reviews.html", session, reviews=listed, mine=mine, titles=rv.TASK_TITLES)

    @app.get("/reviews/new", response_class=HTMLResponse)
    async def new_review(request: Request) -> Response:
        session = admin_session(request)
        return _new_form(request, session, error=None, values={})

    def _new_form(request: Request, session: Any, error: str | None, values: dict[str, Any]) -> Response:
        store: Store = request.app.state.store
        with store.engine.connect() as db:
            users = [
                dict(r)
                for r in db.execute(
                    select(users_table.c.name, users_table.c.role)
                    .where(users_table.c.disabled.is_(False))
                    .order_by(users_table.c.name)
                ).mappings()
            ]
        with store.engine.connect() as db:
            cells: dict[str, list[str]] = {}
            for run_id, cell in db.execute(select(results_table.c.run_id, results_table.c.cell).distinct()):
                cells.setdefault(run_id, []).append(cell)
        response = render(
            request,
            "review_new.html",
            session,
            runs=store.runs(),
            cells={run_id: sorted(found) for run_id, found in cells.items()},
            users=users,
            types=rv.TASK_TYPES,
            titles=rv.TASK_TITLES,
            error=error,
            values=values,
        )
        if error:
            response.status_code = 400
        return response

    @app.post("/reviews")
    async def create(request: Request) -> Response:
        session, form = await checked_post(request, admin=True)
        store: Store = request.app.state.store
        values: dict[str, Any] = {k: form.get(k) for k in form if k != "items"}
        values["annotators"] = [str(a) for a in form.getlist("annotators")]
        values["cells"] = [str(c) for c in form.getlist("cells")]
        try:
            spec = rv.ReviewSpec(
                name=str(form.get("name") or "").strip()[:200],
                task_type=str(form.get("task_type") or ""),
                annotators=[str(a) for a in form.getlist("annotators")],
                per_annotator=_int(form.get("per_annotator"), 50, "items per annotator"),
                overlap=_int(form.get("overlap"), 1, "overlap"),
                blind=form.get("blind") == "on",
                seed=_int(form.get("seed"), 0, "seed"),
                instructions=str(form.get("instructions") or "")[:20000],
                judge_metric=str(form.get("judge_metric") or "").strip(),
                cells=values["cells"],
                criteria=rv.parse_criteria(str(form.get("criteria") or "")),
            )
            if spec.task_type not in rv.TASK_TYPES:
                raise rv.ReviewError("choose a task type")
            text = await _upload_text(form.get("items"))
            review_id = rv.new_review(
                store, spec, run_id=str(form.get("run") or ""), items_text=text or "", created_by=session.user.name
            )
        except rv.ReviewError as exc:
            return _new_form(request, session, error=str(exc), values=values)
        return RedirectResponse(f"/reviews/{review_id}", status_code=303)

    @app.get("/reviews/{review_id}", response_class=HTMLResponse)
    async def review_home(request: Request, review_id: str) -> Response:
        session = session_of(request)
        engine = request.app.state.store.engine
        info = _review_or_404(request, review_id)
        position = rv.next_position(engine, review_id, session.user.name)
        if not session.user.admin:
            if position is None:
                raise HTTPException(status_code=404, detail="no such review")
            return RedirectResponse(f"/reviews/{review_id}/items/{position}", status_code=303)
        return _review_page(request, session, info, error=None)

    def _review_page(request: Request, session: Any, info: dict[str, Any], error: str | None) -> Response:
        """The admin's page of a review (400 with ``error`` shown when a change from it was refused)."""
        engine = request.app.state.store.engine
        review_id = info["id"]
        progress = rv.progress(engine, review_id)
        with engine.connect() as db:
            accounts = list(
                db.execute(
                    select(users_table.c.name).where(users_table.c.disabled.is_(False)).order_by(users_table.c.name)
                ).scalars()
            )
        on_review = {p.annotator for p in progress}
        response = render(
            request,
            "review.html",
            session,
            review=info,
            progress=progress,
            unassigned=rv.unassigned_items(engine, review_id),
            position=rv.next_position(engine, review_id, session.user.name),
            title=rv.TASK_TITLES[info["task_type"]],
            formats=[
                f
                for f in (*review_export.EXPORT_FORMATS, "adjudicated", "parquet")
                if _format_fits(f, info["task_type"])
            ],
            closed=rv.labelling_closed(info),
            addable=[name for name in accounts if name not in on_review],
            accounts=accounts,
            error=error,
        )
        if error:
            response.status_code = 400
        return response

    def _closed_page(request: Request, session: Any, info: dict[str, Any]) -> Response:
        """What an annotator gets from any labelling page or post of a closed review (409)."""
        mine = rv.progress(request.app.state.store.engine, info["id"], only=session.user.name)
        response = render(
            request,
            "closed.html",
            session,
            review=info,
            closed=rv.labelling_closed(info) or {},
            progress=mine[0] if mine else None,
        )
        response.status_code = 409
        return response

    @app.get("/reviews/{review_id}/items/{position}", response_class=HTMLResponse)
    async def item(request: Request, review_id: str, position: int) -> Response:
        session = session_of(request)
        return await _item_page(request, session, review_id, position, error=None)

    async def _item_page(
        request: Request,
        session: Any,
        review_id: str,
        position: int,
        error: str | None,
        entered: dict[str, Any] | None = None,
        status: int = 400,
    ) -> Response:
        engine = request.app.state.store.engine
        shown = _assignment(engine, review_id, session.user.name, position)
        if shown is None:
            raise HTTPException(status_code=404, detail="no such item")
        if rv.labelling_closed(shown.review):
            return _closed_page(request, session, shown.review)
        mine = rv.progress(engine, review_id, only=session.user.name)
        outputs = shown.payload.get("outputs") or []
        diffs = None
        if shown.review["task_type"] == "pairwise" and len(outputs) == 2:  # the drafts' differences, marked
            from bedside.web.browse import word_diff

            diffs = await run_in_threadpool(word_diff, str(outputs[0]), str(outputs[1]))
        response = render(
            request,
            "item.html",
            session,
            diffs=diffs,
            a=shown,
            kind=shown.review["task_type"],
            title=rv.TASK_TITLES[shown.review["task_type"]],
            letters=[chr(ord("A") + i) for i in range(len(shown.order))],
            progress=mine[0] if mine else None,
            relevance=rv.RELEVANCE,
            no_match=rv.NO_MATCH,
            error=error,
            entered=entered,
            criteria=review_labels.review_criteria(shown.review),
            saved=request.query_params.get("saved") == "1",
            token=rv.item_token(review_id, shown.item_id),
        )
        if error:
            response.status_code = status
        return response

    @app.post("/reviews/{review_id}/items/{position}")
    async def save(request: Request, review_id: str, position: int) -> Response:
        session, form = await checked_post(request)
        engine = request.app.state.store.engine
        shown = _assignment(engine, review_id, session.user.name, position)
        if shown is None:
            raise HTTPException(status_code=404, detail="no such item")
        if rv.labelling_closed(shown.review):
            return _closed_page(request, session, shown.review)
        token = form.get("item")
        if token is not None and token != rv.item_token(review_id, shown.item_id):
            # the page was for an item an admin has since moved to someone else: never label the item now here
            moved = "an admin moved the item this page showed to another annotator: your entry was not saved"
            return await _item_page(request, session, review_id, position, error=moved, status=409)
        if shown.submitted:
            raise HTTPException(status_code=409, detail="this review is submitted: labels can no longer change")
        kind, criteria = shown.review["task_type"], review_labels.review_criteria(shown.review)
        try:
            value = review_labels.parse_label(kind, shown.payload, shown.order, form, criteria)
        except rv.ReviewError as exc:
            entered = review_labels.entered_label(kind, shown.payload, shown.order, form, criteria)
            return await _item_page(request, session, review_id, position, error=str(exc), entered=entered)
        # a write: in a thread, so a store busy with a run's writes never holds the event loop
        try:
            await run_in_threadpool(
                review_labels.save_label, engine, review_id, shown.item_id, session.user.name, value
            )
        except rv.ReviewClosed:  # closed after the check above
            return _closed_page(request, session, _review_or_404(request, review_id))
        if position + 1 < shown.count:
            return RedirectResponse(f"/reviews/{review_id}/items/{position + 1}", status_code=303)
        return RedirectResponse(f"/reviews/{review_id}/done", status_code=303)

    @app.get("/reviews/{review_id}/items/{position}/record", response_class=HTMLResponse)
    async def item_record(request: Request, review_id: str, position: int) -> Response:
        """The whole record behind the reviewer's own item (read and rendered in a thread: a task may load a
        large record file)."""
        session = session_of(request)
        store: Store = request.app.state.store
        shown = _assignment(store.engine, review_id, session.user.name, position)
        if shown is None:
            raise HTTPException(status_code=404, detail="no such item")
        if rv.labelling_closed(shown.review):
            return _closed_page(request, session, shown.review)
        record = await run_in_threadpool(_record_of, store, review_id, shown.item_id)
        return render(request, "record.html", session, a=shown, record=record)

    @app.get("/reviews/{review_id}/done", response_class=HTMLResponse)
    async def done(request: Request, review_id: str) -> Response:
        session = session_of(request)
        engine = request.app.state.store.engine
        mine = rv.progress(engine, review_id, only=session.user.name)
        if not mine:
            raise HTTPException(status_code=404, detail="no such review")
        info = _review_or_404(request, review_id)
        return render(request, "done.html", session, review=info, progress=mine[0], closed=rv.labelling_closed(info))

    @app.post("/reviews/{review_id}/submit")
    async def submit(request: Request, review_id: str) -> Response:
        session, _ = await checked_post(request)
        engine = request.app.state.store.engine
        mine = rv.progress(engine, review_id, only=session.user.name)
        if not mine:
            raise HTTPException(status_code=404, detail="no such review")
        info = _review_or_404(request, review_id)
        if rv.labelling_closed(info):
            return _closed_page(request, session, info)
        if mine[0].labelled < mine[0].assigned:
            raise HTTPException(status_code=409, detail="label every item before submitting")
        await run_in_threadpool(review_labels.submit, engine, review_id, session.user.name)
        return RedirectResponse(f"/reviews/{review_id}/done", status_code=303)

    @app.get("/reviews/{review_id}/meta", response_class=HTMLResponse)
    async def meta(request: Request, review_id: str) -> Response:
        session = admin_session(request)
        info = _review_or_404(request, review_id)
        engine = request.app.state.store.engine
        # The page refreshes itself every few seconds: recompute only when labels changed.
        cache: dict[str, tuple[Any, dict[str, Any]]] = request.app.state.meta_cache
        version = review_labels.labels_version(engine, review_id)
        cached = cache.get(review_id)
        if cached is not None and cached[0] == version:
            result = cached[1]
        else:
            result = await run_in_threadpool(review_meta.meta_evaluation, engine, review_id)
            cache[review_id] = (version, result)
        found = await run_in_threadpool(adj.disputed, engine, review_id)
        result = {**result, "disputed": {"items": len(found), "settled": sum(d.resolved is not None for d in found)}}
        return render(request, "meta.html", session, review=info, meta=result, updated=time.strftime("%H:%M:%S"))

    @app.get("/reviews/{review_id}/export")
    async def export(request: Request, review_id: str) -> Response:
        session = admin_session(request)
        _review_or_404(request, review_id)
        fmt = request.query_params.get("format", "labels")
        engine = request.app.state.store.engine
        if fmt == "parquet":
            try:
                data = await run_in_threadpool(review_export.parquet_bytes, engine, review_id)
            except rv.ReviewError as exc:
                raise HTTPException(status_code=400, detail=str(exc)) from None
            audit(engine, session.user.name, "labels-exported", review_id, format=fmt)
            return Response(
                data,
                media_type="application/vnd.apache.parquet",
                headers={"content-disposition": f'attachment; filename="{review_id}-labels.parquet"'},
            )
        try:
            if fmt == "adjudicated":
                text = await run_in_threadpool(adj.export_adjudicated, engine, review_id)
                name = f"{review_id}-adjudicated.jsonl"
            else:
                text, name = await run_in_threadpool(review_export.export_labels, engine, review_id, fmt)
        except rv.ReviewError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None
        audit(engine, session.user.name, "labels-exported", review_id, format=fmt)
        return Response(
            text,
            media_type="application/json" if name.endswith(".json") else "application/x-ndjson",
            headers={"content-disposition": f'attachment; filename="{name}"'},
        )

    @app.post("/reviews/{review_id}/import")
    async def import_(request: Request, review_id: str) -> Response:
        session, form = await checked_post(request, admin=True)
        info = _review_or_404(request, review_id)
        engine = request.app.state.store.engine
        try:
            text = await _upload_text(form.get("labels"))
            if not text:
                raise rv.ReviewError("choose a labels JSONL file")
            review_export.import_labels(engine, review_id, text, user=session.user.name)
        except rv.ReviewError as exc:
            return _review_page(request, session, info, error=str(exc))
        return RedirectResponse(f"/reviews/{review_id}/meta", status_code=303)

    # ---- changing a review after creation (admins; review_edit does the work, audited) ----

    async def _edit(request: Request, review_id: str, change: Callable[[Any, str, Any], object]) -> Response:
        """Run one review_edit change (``change(engine, admin name, form)``) off the event loop; a refusal shows
        on the review's page, a change goes back to it."""
        session, form = await checked_post(request, admin=True)
        info = _review_or_404(request, review_id)
        engine = request.app.state.store.engine
        try:
            await run_in_threadpool(change, engine, session.user.name, form)
        except rv.ReviewError as exc:
            return _review_page(request, session, info, error=str(exc))
        return RedirectResponse(f"/reviews/{review_id}", status_code=303)

    @app.post("/reviews/{review_id}/annotators")
    async def add_annotators(request: Request, review_id: str) -> Response:
        def change(engine: Any, by: str, form: Any) -> object:
            names = [str(n) for n in form.getlist("annotators")]
            return review_edit.add_annotators(engine, review_id, names, by=by)

        return await _edit(request, review_id, change)

    @app.post("/reviews/{review_id}/move")
    async def move(request: Request, review_id: str) -> Response:
        def change(engine: Any, by: str, form: Any) -> object:
            raw = form.get("limit")
            limit = None if raw in (None, "") else _int(raw, 0, "the number of items to move")
            target = str(form.get("target") or "").strip() or None
            return review_edit.move_items(engine, review_id, str(form.get("source") or ""), target, by=by, limit=limit)

        return await _edit(request, review_id, change)

    @app.post("/reviews/{review_id}/close")
    async def close(request: Request, review_id: str) -> Response:
        return await _edit(
            request, review_id, lambda engine, by, _form: review_edit.close_labelling(engine, review_id, by=by)
        )

    @app.post("/reviews/{review_id}/open")
    async def open_(request: Request, review_id: str) -> Response:
        return await _edit(
            request, review_id, lambda engine, by, _form: review_edit.open_labelling(engine, review_id, by=by)
        )

    def _adjudicator(request: Request) -> Any:
        session = session_of(request)
        if not session.user.adjudicates:
            raise Forbidden()
        return session

    @app.get("/reviews/{review_id}/adjudicate", response_class=HTMLResponse)
    async def adjudication_list(request: Request, review_id: str) -> Response:
        session = _adjudicator(request)
        info = _review_or_404(request, review_id)
        found = await run_in_threadpool(adj.disputed, request.app.state.store.engine, review_id)
        return render(
            request,
            "adjudicate.html",
            session,
            review=info,
            disputed=found,
            open=sum(d.resolved is None for d in found),
            title=rv.TASK_TITLES[info["task_type"]],
        )

    @app.get("/reviews/{review_id}/adjudicate/{position}", response_class=HTMLResponse)
    async def adjudication_item(request: Request, review_id: str, position: int) -> Response:
        session = _adjudicator(request)
        return _adjudication_page(request, session, review_id, position, error=None)

    def _adjudication_page(
        request: Request, session: Any, review_id: str, position: int, error: str | None
    ) -> Response:
        info = _review_or_404(request, review_id)
        found = adj.disputed(request.app.state.store.engine, review_id)
        item = next((d for d in found if d.position == position), None)
        if item is None:
            raise HTTPException(status_code=404, detail="no disagreement on that item")
        later = [d for d in found if d.resolved is None and d.position != position]
        response = render(
            request,
            "adjudicate_item.html",
            session,
            review=info,
            item=item,
            kind=info["task_type"],
            title=rv.TASK_TITLES[info["task_type"]],
            next_open=later[0].position if later else None,
            error=error,
        )
        if error:
            response.status_code = 400
        return response

    @app.post("/reviews/{review_id}/adjudicate/{position}")
    async def adjudicate(request: Request, review_id: str, position: int) -> Response:
        session, form = await checked_post(request)
        if not session.user.adjudicates:
            raise Forbidden()
        _review_or_404(request, review_id)
        engine = request.app.state.store.engine
        try:
            await run_in_threadpool(
                adj.adjudicate,
                engine,
                review_id,
                position,
                session.user.name,
                str(form.get("chosen") or ""),
                str(form.get("note") or ""),
            )
        except rv.ReviewError as exc:
            return _adjudication_page(request, session, review_id, position, error=str(exc))
        remaining = [d for d in adj.disputed(engine, review_id) if d.resolved is None]
        if remaining:
            return RedirectResponse(f"/reviews/{review_id}/adjudicate/{remaining[0].position}", status_code=303)
        return RedirectResponse(f"/reviews/{review_id}/adjudicate", status_code=303)

    @app.post("/reviews/{review_id}/reopen")
    async def reopen(request: Request, review_id: str) -> Response:
        """An annotator takes back their submission to edit their own labels (audited); they submit again."""
        session, _ = await checked_post(request)
        engine = request.app.state.store.engine
        mine = rv.progress(engine, review_id, only=session.user.name)
        if not mine:
            raise HTTPException(status_code=404, detail="no such review")
        info = _review_or_404(request, review_id)
        if rv.labelling_closed(info):
            return _closed_page(request, session, info)
        await run_in_threadpool(review_labels.reopen, engine, review_id, session.user.name)
        return RedirectResponse(f"/reviews/{review_id}/items/0", status_code=303)

    @app.get("/audit", response_class=HTMLResponse)
    async def audit_page(request: Request) -> Response:
        session = admin_session(request)
        with request.app.state.store.engine.connect() as db:
            entries = [
                dict(r) for r in db.execute(select(audit_table).order_by(audit_table.c.id.desc()).limit(500)).mappings()
            ]
        for entry in entries:
            entry["when"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(entry["at"]))
        return render(request, "audit.html", session, entries=entries)


def _record_of(store: Store, review_id: str, item_id: str) -> Any:
    from bedside.web.db import items_table
    from bedside.web.record_view import item_record

    t = items_table.c
    with store.engine.connect() as db:
        item = (
            db.execute(select(t.payload, t.key).where((t.review_id == review_id) & (t.item_id == item_id)))
            .mappings()
            .one()
        )
    return item_record(store, dict(item))


def _format_fits(fmt: str, task_type: str) -> bool:
    return (
        fmt in ("labels", "adjudicated")
        or {
            "drafting": "match",
            "instruct": "rank",
            "citeqa": "evidence",
            "sensemaking": "agree",
        }.get(fmt)
        == task_type
    )
