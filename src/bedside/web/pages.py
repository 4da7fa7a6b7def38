"""What every page of the web app does with a request: its session, its role, a CSRF-checked form, rendering.

Kept apart from :mod:`bedside.web.app` (which builds the application and mounts every route) so that modules of
routes (:mod:`bedside.web.review_routes`) use them without importing the application that mounts them.
"""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from bedside.web.security import Session, load_session, same_token

SESSION_COOKIE = "bedside_session"


class LoginRequired(Exception):
    """The request has no live session: the app answers with the login page."""


class Forbidden(Exception):
    """The session's role may not see this page: the app answers 403."""


def session_of(request: Request) -> Session:
    """The request's session, or :class:`LoginRequired`."""
    known = getattr(request.state, "session", None)
    if known is not None:
        return known  # type: ignore[no-any-return]
    settings: Any = request.app.state.settings  # bedside.web.app.WebSettings
    found = load_session(request.app.state.store.engine, request.cookies.get(SESSION_COOKIE), settings.idle_s)
    if found is None:
        raise LoginRequired()
    request.scope.setdefault("state", {})["user_name"] = found.user.name
    return found


def admin_session(request: Request) -> Session:
    session = session_of(request)
    if not session.user.admin:
        raise Forbidden()
    return session


async def checked_post(request: Request, *, admin: bool = False) -> tuple[Session, Any]:
    """The session and the form of a POST whose CSRF token matches (form field ``csrf`` or ``X-CSRF-Token``)."""
    session = admin_session(request) if admin else session_of(request)
    form = await request.form()
    given = request.headers.get("x-csrf-token") or form.get("csrf")
    if not same_token(given if isinstance(given, str) else None, session.csrf):
        raise HTTPException(status_code=403, detail="CSRF token missing or invalid")
    return session, form


def render(request: Request, name: str, session: Session | None, **context: Any) -> HTMLResponse:
    templates: Jinja2Templates = request.app.state.templates
    response: HTMLResponse = templates.TemplateResponse(
        request, name, {"session": session, "user": session.user if session else None, **context}
    )
    return response
