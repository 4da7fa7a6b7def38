"""The FastAPI application: the run viewer (admins) and the review app (admins and annotators).

Every route but ``/login`` and ``/static/*`` (the app's own CSS and JS, no data) needs a session; viewer pages,
exports, review set-up and the meta-evaluation need the admin role; annotators reach only their own
assignments. Every POST checks the session's CSRF token. Responses carry a strict Content-Security-Policy
(``'self'`` only, data: images for the report's plots), no-store caching, and no framing. The access log writes
the user, method, route template (never the concrete path or its query string), status and time; request
bodies are never logged.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bedside.runs.store import RunNotFoundError, Store
from bedside.web import browse, security
from bedside.web.dashboards import Dashboards
from bedside.web.db import audit, create_web_tables
from bedside.web.pages import (
    SESSION_COOKIE,
    Forbidden,
    LoginRequired,
    admin_session,
    checked_post,
    render,
    session_of,
)
from bedside.web.security import (
    AuditBudget,
    LoginThrottle,
    client_address,
    end_session,
    new_session,
    same_token,
    submitted_name,
    verify_login,
)

log = logging.getLogger("bedside.web")

LOGIN_CSRF_COOKIE = "bedside_login_csrf"
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


@dataclass
class WebSettings:
    idle_s: float = 1800.0
    max_upload_bytes: int = 10 * 1024 * 1024
    secure_cookies: bool | None = None  # None: Secure when the request came over https
    max_login_failures: int = 5
    login_window_s: float = 900.0
    trusted_proxies: frozenset[str] = frozenset()
    """Peer addresses whose ``X-Forwarded-For`` is believed (a reverse proxy in front); none by default."""
    audit_rows_per_address: int = 20
    """Audit rows that failed or throttled logins from one address may write per ``login_window_s``."""
    clock: Callable[[], float] = time.monotonic
    """The throttle's clock (tests pass a controlled one)."""
    dashboard_workers: int = 1  # worker processes drawing run dashboards off the event loop
    allowed_hosts: tuple[str, ...] | None = None
    """Host header values the app answers (a DNS-rebinding page reaches a loopback server under its own name,
    and is refused); None answers any (tests). ``bedside serve`` sets the bound names and ``--allowed-host``."""
    extra: dict[str, Any] = field(default_factory=dict)


class _Guard:
    """ASGI middleware: upload size limit, security headers, and an access log without paths or bodies."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        status = {"code": 500}
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _plain(send, 413, b"request body too large")
            _access(scope, 413, started)
            return
        seen = {"bytes": 0}

        async def limited_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                seen["bytes"] += len(message.get("body", b""))
                if seen["bytes"] > self.max_bytes:
                    raise _TooLarge()
            return message

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                extra = [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"x-frame-options", b"DENY"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"cache-control", b"no-store"),
                ]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        try:
            await self.app(scope, limited_receive, send_with_headers)
        except _TooLarge:
            await _plain(send, 413, b"request body too large")
            status["code"] = 413
        finally:
            _access(scope, status["code"], started)


class _TooLarge(Exception):
    pass


async def _plain(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), (b"content-security-policy", CSP.encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _access(scope: Scope, status: int, started: float) -> None:
    route = scope.get("route")
    template = getattr(route, "path", None) or ("/static/*" if scope.get("path", "").startswith("/static/") else "?")
    user = (scope.get("state") or {}).get("user_name", "-")
    log.info(
        "%s %s %s %d %.1fms", user, scope.get("method", "?"), template, status, (time.perf_counter() - started) * 1000
    )


def _resource_dir(name: str) -> Path:
    return Path(str(resources.files("bedside.web") / name))


MAX_ROW_NUMBER = 2**31 - 1
"""The largest epoch or item position a request may name (a larger one is a 422, never a database overflow)."""
Epoch = Annotated[int, Query(ge=0, le=MAX_ROW_NUMBER)]


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    app.state.dashboards.close()  # the dashboard workers end with the server


def create_app(store: Store | str, settings: WebSettings | None = None) -> FastAPI:
    """The app over ``store`` (a :class:`Store` or a location); creates the web tables when missing."""
    settings = settings or WebSettings()
    store = store if isinstance(store, Store) else Store(store)
    create_web_tables(store.engine)
    # The gate runs before any parameter is validated, so an anonymous request learns nothing from a 422.
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, dependencies=[Depends(_gate)], lifespan=_lifespan)
    if settings.allowed_hosts is not None:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(settings.allowed_hosts))
    app.state.store = store
    app.state.settings = settings
    app.state.summaries = browse.Summaries(store)
    app.state.dashboards = Dashboards(store, settings.dashboard_workers)
    app.state.meta_cache = {}  # review id -> (labels version, meta-evaluation)
    app.state.compare_cache = {}  # (runs, cells, versions, metrics) -> paired differences
    app.state.throttle = LoginThrottle(settings.max_login_failures, settings.login_window_s, clock=settings.clock)
    app.state.audit_budget = AuditBudget(settings.audit_rows_per_address, settings.login_window_s, clock=settings.clock)
    templates = Jinja2Templates(directory=str(_resource_dir("templates")))
    templates.env.filters["pretty"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False, default=str)
    templates.env.filters["num"] = _num
    templates.env.globals["highlight_parts"] = browse.highlight_parts
    templates.env.globals["timeline"] = browse.timeline
    app.state.templates = templates
    app.mount("/static", StaticFiles(directory=str(_resource_dir("static"))), name="static")
    app.add_middleware(_Guard, max_bytes=settings.max_upload_bytes)

    @app.exception_handler(LoginRequired)
    async def _login_required(request: Request, exc: LoginRequired) -> Response:
        if request.method == "GET":
            return RedirectResponse("/login", status_code=303)
        return Response("login required", status_code=401, media_type="text/plain")

    @app.exception_handler(Forbidden)
    async def _forbidden(request: Request, exc: Forbidden) -> Response:
        if request.method != "GET":
            return Response("forbidden", status_code=403, media_type="text/plain")
        # someone following a link an admin shared: say why, and where their own work is
        session = getattr(request.state, "session", None)
        why = (
            f"{session.user.name} is an annotator account; the run viewer, review set-up, exports and the audit log "
            "are for admins. Ask an admin if you need what this link shows."
            if session is not None
            else "This page is for admins."
        )
        page = render(request, "forbidden.html", session, why=why)
        page.status_code = 403
        return page

    @app.exception_handler(OverflowError)
    async def _out_of_range(request: Request, exc: OverflowError) -> Response:
        # A number in the request too large for the database (a crafted id): the request's fault, not a 500.
        return Response("a number in the request is out of range", status_code=400, media_type="text/plain")

    _viewer_routes(app)
    from bedside.web.review_routes import review_routes

    review_routes(app)
    return app


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


# ---- sessions and guards ---------------------------------------------------------------------------------


def _gate(request: Request) -> None:
    if request.url.path != "/login":
        request.state.session = session_of(request)


def _secure(request: Request) -> bool:
    setting = request.app.state.settings.secure_cookies
    return request.url.scheme == "https" if setting is None else bool(setting)


def _key(value: str | None) -> tuple[str, str, int] | None:
    """The ``after``/``before`` key of a run's sample pages: ``[cell, sample_id, epoch]`` (see :func:`_json_key`)."""
    if not value:
        return None
    cell, sample, epoch = _json_key(value, 2)
    return cell, sample, epoch


MAX_PAGE_KEY_CHARS = 1024
MAX_EPOCH = 2**31 - 1


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a page key value")


def _page_key(raw: str) -> tuple[str, int]:
    """The ``after`` page key of /compare: ``[sample_id, epoch]`` (see :func:`_json_key`)."""
    sample_id, epoch = _json_key(raw, 1)
    return sample_id, epoch


def _json_key(raw: str, texts: int) -> Any:
    """A page key from the page's own "next" link: a JSON list of ``texts`` strings and an epoch. Anything else a
    client crafts (deep nesting, NaN or Infinity, an integer past SQLite's range, text that is not valid UTF-8)
    is a 400 with a message, never an exception in the route."""
    bad = HTTPException(status_code=400, detail="bad page key: expected the key from a 'next' or 'previous' link")
    if len(raw) > MAX_PAGE_KEY_CHARS:
        raise bad
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise bad from None
    if not (isinstance(value, list) and len(value) == texts + 1):
        raise bad
    *names, epoch = value
    if not all(isinstance(n, str) for n in names) or type(epoch) is not int or not 0 <= epoch <= MAX_EPOCH:
        raise bad
    try:
        for name in names:
            name.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a \ud800 escape
        raise bad from None
    return (*names, epoch)


def _float(value: str | None) -> float | None:
    if value is None or value.strip() == "":
        return None
    try:
        return float(value)
    except ValueError:
        raise HTTPException(status_code=400, detail="not a number") from None


def _run_or_404(request: Request, run_id: str) -> dict[str, Any]:
    store: Store = request.app.state.store
    try:
        run = store.run(run_id)
    except RunNotFoundError:
        raise HTTPException(status_code=404, detail="no such run") from None
    listed = {r["id"]: r for r in store.runs()}
    return listed[run["id"]]


# ---- routes ---------------------------------------------------------------------------------------------


def _viewer_routes(app: FastAPI) -> None:
    @app.get("/login", response_class=HTMLResponse)
    async def login_page(request: Request) -> Response:
        token = security.new_token(24)
        response = render(request, "login.html", None, login_csrf=token, error=None)
        response.set_cookie(
            LOGIN_CSRF_COOKIE, token, httponly=True, samesite="strict", secure=_secure(request), max_age=3600
        )
        return response

    @app.post("/login")
    async def login(request: Request) -> Response:
        form = await request.form()
        # Cut before anything else: no account has a longer name, and nothing a stranger sends is kept whole.
        name, password = submitted_name(str(form.get("name") or "")), str(form.get("password") or "")
        given = form.get("csrf")
        cookie = request.cookies.get(LOGIN_CSRF_COOKIE)
        if not cookie or not same_token(given if isinstance(given, str) else None, cookie):
            raise HTTPException(status_code=403, detail="CSRF token missing or invalid")
        settings: WebSettings = request.app.state.settings
        address = client_address(
            request.client.host if request.client else None,
            request.headers.get("x-forwarded-for"),
            settings.trusted_proxies,
        )
        throttle: LoginThrottle = request.app.state.throttle
        budget: AuditBudget = request.app.state.audit_budget
        store: Store = request.app.state.store
        wait = throttle.retry_after(name, address)
        if wait > 0:
            if budget.take(address):
                audit(store.engine, name, "login-throttled")
            refused = render(request, "login.html", None, login_csrf=cookie, error="Too many attempts; wait and retry.")
            refused.status_code = 429
            refused.headers["Retry-After"] = str(math.ceil(wait))
            return refused
        user = verify_login(store.engine, name, password)
        if user is None:
            throttle.failed(name, address)
            if budget.take(address):
                audit(store.engine, name, "login-failed")
            response = render(request, "login.html", None, login_csrf=cookie, error="Wrong name or password.")
            response.status_code = 401
            return response
        throttle.succeeded(name, address)
        token = new_session(store.engine, user)
        audit(store.engine, user.name, "login")
        done = RedirectResponse("/" if user.admin else "/reviews", status_code=303)
        done.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="strict", secure=_secure(request))
        done.delete_cookie(LOGIN_CSRF_COOKIE)
        return done

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        session, _ = await checked_post(request)
        token = request.cookies.get(SESSION_COOKIE)
        if token:
            end_session(request.app.state.store.engine, token)
        audit(request.app.state.store.engine, session.user.name, "logout")
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE)
        return response

    @app.get("/", response_class=HTMLResponse)
    async def runs_list(request: Request) -> Response:
        session = session_of(request)
        if not session.user.admin:
            return RedirectResponse("/reviews", status_code=303)
        summaries: browse.Summaries = request.app.state.summaries
        return render(request, "runs.html", session, runs=await run_in_threadpool(summaries.runs))

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    async def run_dashboard(request: Request, run_id: str) -> Response:
        session = admin_session(request)
        run = await run_in_threadpool(_run_or_404, request, run_id)
        summaries: browse.Summaries = request.app.state.summaries
        dashboards: Dashboards = request.app.state.dashboards
        # both passes over the run's rows happen off the event loop, so no other page waits on them
        summary = await run_in_threadpool(summaries.summary, run)
        dashboard = await dashboards.get(run)
        return render(
            request,
            "run.html",
            session,
            run=run,
            summary=summary,
            report=dashboard.report,
            spread=dashboard.spread,
            images=dashboard.images,
        )

    @app.get("/runs/{run_id}/samples", response_class=HTMLResponse)
    async def samples(request: Request, run_id: str) -> Response:
        session = admin_session(request)
        run = await run_in_threadpool(_run_or_404, request, run_id)
        summary = await run_in_threadpool(request.app.state.summaries.summary, run)
        q = request.query_params
        sort = q.get("sort", "")
        flt = browse.SampleFilter(
            dataset=q.get("dataset", ""),
            system=q.get("system", ""),
            model=q.get("model", ""),
            stratum=q.get("stratum", ""),
            metric=q.get("metric", ""),
            low=_float(q.get("low")),
            high=_float(q.get("high")),
            errors_only=q.get("errors") == "1",
            search=q.get("q", ""),
            sort=sort if sort.lstrip("-") in summary.metrics else "",
        )
        store = request.app.state.store
        number = 0
        if flt.sort:
            number = _int_param(q.get("page"), "page")
            rows, more = await run_in_threadpool(browse.sorted_sample_page, store, summary, flt, number)
            page = browse.SamplePage(rows, None, None)
        else:
            more = False
            page = await run_in_threadpool(
                browse.sample_page, store, summary, flt, after=_key(q.get("after")), before=_key(q.get("before"))
            )
        shown = [m for m in [flt.sort.lstrip("-"), flt.metric, *summary.metrics] if m][:6]
        shown = list(dict.fromkeys(shown))
        base = {k: v for k, v in q.items() if k not in ("after", "before", "page") and v}
        return render(
            request,
            "samples.html",
            session,
            run=run,
            summary=summary,
            flt=flt,
            page=page,
            metrics=shown,
            base=base,
            number=number,
            more=more,
            key_json=lambda k: json.dumps(list(k)),
        )

    @app.get("/runs/{run_id}/failures", response_class=HTMLResponse)
    async def failures(request: Request, run_id: str) -> Response:
        session = admin_session(request)
        run = await run_in_threadpool(_run_or_404, request, run_id)
        summary = await run_in_threadpool(request.app.state.summaries.summary, run)
        found = await run_in_threadpool(browse.failures, request.app.state.store, run["id"])
        cells = {c.cell: c for c in summary.cells}
        return render(request, "failures.html", session, run=run, summary=summary, failures=found, cells=cells)

    @app.get("/runs/{run_id}/progress", response_class=HTMLResponse)
    async def run_progress(request: Request, run_id: str) -> Response:
        """What a running run has stored so far; the run page polls it (a grouped count, never the dashboard)."""
        session = admin_session(request)
        run = await run_in_threadpool(_run_or_404, request, run_id)
        cells = await run_in_threadpool(browse.progress, request.app.state.store, run["id"])
        per_second = await run_in_threadpool(browse.pace, request.app.state.store, run["id"])
        return render(
            request,
            "progress.html",
            session,
            run=run,
            cells=cells,
            pace=per_second,
            left=browse.time_left(cells, per_second),
            updated=time.strftime("%H:%M:%S", time.gmtime()),
        )

    @app.get("/runs/{run_id}/sample", response_class=HTMLResponse)
    async def sample(request: Request, run_id: str, cell: str, sample: str, epoch: Epoch = 0) -> Response:
        session = admin_session(request)
        run = await run_in_threadpool(_run_or_404, request, run_id)
        row = await run_in_threadpool(browse.one_sample, request.app.state.store, run["id"], cell, sample, epoch)
        if row is None:
            raise HTTPException(status_code=404, detail="no such sample")
        sections, note = await run_in_threadpool(browse.task_sections, run["task"], row)
        return render(request, "sample.html", session, run=run, row=row, sections=sections, note=note)

    @app.get("/compare", response_class=HTMLResponse)
    async def compare_page(request: Request) -> Response:
        session = admin_session(request)
        q = request.query_params
        store: Store = request.app.state.store
        summaries: browse.Summaries = request.app.state.summaries
        runs = await run_in_threadpool(store.runs)
        if not q.get("a") or not q.get("b"):
            return render(request, "compare.html", session, runs=runs, a=None, b=None)
        run_a = await run_in_threadpool(_run_or_404, request, q["a"])
        run_b = await run_in_threadpool(_run_or_404, request, q["b"])
        sa = await run_in_threadpool(summaries.summary, run_a)
        sb = await run_in_threadpool(summaries.summary, run_b)
        pairs = browse.matched_cells(sa, sb)
        chosen = q.get("pair", "")
        pair = next((p for p in pairs if f"{p[0]}|{p[1]}" == chosen), pairs[0] if pairs else None)
        rows: list[Any] = []
        diffs: list[Any] = []
        differences: list[browse.PairedMetric] = []
        after = None
        metrics = sorted(set(sa.metrics) & set(sb.metrics))[:4]
        if pair is not None:
            start = _page_key(q["after"]) if q.get("after") else None
            rows, after = await run_in_threadpool(
                browse.paired_rows, store, run_a["id"], pair[0], run_b["id"], pair[1], after=start
            )
            diffs = await run_in_threadpool(_diffs, rows)
            differences = await _paired_metrics(
                request, run_a, pair[0], run_b, pair[1], sorted(set(sa.metrics) & set(sb.metrics))
            )
        return render(
            request,
            "compare.html",
            session,
            runs=runs,
            a=run_a,
            b=run_b,
            pairs=pairs,
            pair=pair,
            rows=list(zip(rows, diffs, strict=True)),
            after=json.dumps(list(after)) if after else None,
            metrics=metrics,
            differences=differences,
        )


def _int_param(value: str | None, name: str) -> int:
    if not value:
        return 0
    try:
        number = int(value)
    except ValueError:
        raise HTTPException(status_code=400, detail=f"{name} must be a whole number") from None
    if not 0 <= number <= MAX_ROW_NUMBER:
        raise HTTPException(status_code=400, detail=f"{name} is out of range")
    return number


def _diffs(rows: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> list[Any]:
    """Word-level differences of each pair's outputs (None where either side has no output)."""
    found = []
    for ra, rb in rows:
        text_a = ((ra.get("output") or {}).get("text") or "")[:20000]
        text_b = (((rb or {}).get("output") or {}).get("text") or "")[:20000]
        both = ra.get("status") == "ok" and rb is not None and rb.get("status") == "ok"
        found.append(browse.word_diff(text_a, text_b) if both else None)
    return found


async def _paired_metrics(
    request: Request, run_a: dict[str, Any], cell_a: str, run_b: dict[str, Any], cell_b: str, metrics: list[str]
) -> list[browse.PairedMetric]:
    """The compare page's differences with CIs, computed in a thread and kept per runs' versions (a bootstrap
    over thousands of samples is not redone on every page of the same comparison)."""
    from bedside.web.dashboards import run_version

    cache: dict[Any, list[browse.PairedMetric]] = request.app.state.compare_cache
    key = (run_a["id"], cell_a, run_b["id"], cell_b, run_version(run_a), run_version(run_b), tuple(metrics))
    if key not in cache:
        store = request.app.state.store
        cache[key] = await run_in_threadpool(
            browse.paired_metrics, store, run_a["id"], cell_a, run_b["id"], cell_b, metrics
        )
        while len(cache) > 64:
            cache.pop(next(iter(cache)))
    return cache[key]


__all__ = ["WebSettings", "admin_session", "checked_post", "create_app", "render", "session_of"]
