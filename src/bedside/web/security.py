"""Accounts, sessions, CSRF tokens and login throttling for the web app.

- Passwords are argon2id hashes (argon2-cffi, its default parameters); a hash made with older parameters is
  re-hashed at the next successful login.
- A session is a random 32-byte token in an HttpOnly, SameSite=Strict cookie (Secure over TLS); the store keeps
  only its sha256, the user, a per-session CSRF token and the last time it was used. A session unused for
  ``idle_s`` (default 30 min) is gone; so is every session of a disabled user.
- Every state-changing request carries the session's CSRF token (a hidden form field or the ``X-CSRF-Token``
  header), compared in constant time. The login form, which has no session yet, uses a double-submit token: a
  random cookie and the same value in the form.
- Login throttling: after ``max_failures`` failed logins for one user name or from one client address within
  ``window_s``, further attempts are refused (HTTP 429) until the window passes, whatever the password.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import secrets
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, delete, insert, select, update

from bedside.web.db import sessions_table, users_table

ROLES = ("admin", "annotator")
MIN_PASSWORD = 10


class AccountError(ValueError):
    """A user cannot be added or changed as asked."""


def _hasher() -> Any:
    try:
        from argon2 import PasswordHasher
    except ImportError:
        raise ImportError("the web app needs argon2-cffi (pip install 'bedside[web]')") from None
    return PasswordHasher()


def hash_password(password: str) -> str:
    return str(_hasher().hash(password))


def add_user(engine: Engine, name: str, password: str, role: str) -> None:
    if role not in ROLES:
        raise AccountError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    if not name or not all(c.isalnum() or c in "-_." for c in name) or len(name) > 64:
        raise AccountError("a user name is 1-64 letters, digits, '-', '_' or '.'")
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"a password needs at least {MIN_PASSWORD} characters")
    with engine.begin() as db:
        if db.execute(select(users_table.c.name).where(users_table.c.name == name)).first():
            raise AccountError(f"user {name!r} exists already")
        db.execute(
            insert(users_table).values(
                name=name, password_hash=hash_password(password), role=role, disabled=False, created_at=time.time()
            )
        )


def list_users(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as db:
        rows = db.execute(
            select(users_table.c.name, users_table.c.role, users_table.c.disabled, users_table.c.created_at).order_by(
                users_table.c.name
            )
        ).mappings()
        return [dict(r) for r in rows]


def disable_user(engine: Engine, name: str) -> None:
    with engine.begin() as db:
        done = db.execute(update(users_table).where(users_table.c.name == name).values(disabled=True))
        if not done.rowcount:
            raise AccountError(f"no user {name!r}")
        db.execute(delete(sessions_table).where(sessions_table.c.user == name))


@dataclass(frozen=True)
class User:
    name: str
    role: str

    @property
    def admin(self) -> bool:
        return self.role == "admin"


# A fixed hash to verify against when the user does not exist, so a login takes as long either way.
_DUMMY_HASH: str | None = None


def verify_login(engine: Engine, name: str, password: str) -> User | None:
    global _DUMMY_HASH
    from argon2.exceptions import VerificationError

    hasher = _hasher()
    with engine.connect() as db:
        row = db.execute(select(users_table).where(users_table.c.name == name)).mappings().first()
    if row is None or row["disabled"]:
        if _DUMMY_HASH is None:
            _DUMMY_HASH = hasher.hash(secrets.token_hex(16))
        with contextlib.suppress(VerificationError):
            hasher.verify(_DUMMY_HASH, password)
        return None
    try:
        hasher.verify(row["password_hash"], password)
    except VerificationError:
        return None
    if hasher.check_needs_rehash(row["password_hash"]):
        with engine.begin() as db:
            db.execute(
                update(users_table).where(users_table.c.name == name).values(password_hash=hasher.hash(password))
            )
    return User(row["name"], row["role"])


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Session:
    user: User
    csrf: str
    token_hash: str


def new_session(engine: Engine, user: User) -> str:
    token = secrets.token_urlsafe(32)
    now = time.time()
    with engine.begin() as db:
        db.execute(
            insert(sessions_table).values(
                token_hash=_digest(token), user=user.name, csrf=secrets.token_urlsafe(32), created_at=now, last_seen=now
            )
        )
    return token


# last_seen is written at most this often per session, so browsing is not one write per request.
_TOUCH_S = 30.0


def load_session(engine: Engine, token: str | None, idle_s: float) -> Session | None:
    if not token or len(token) > 200:
        return None
    digest = _digest(token)
    now = time.time()
    with engine.connect() as db:
        row = (
            db.execute(
                select(sessions_table, users_table.c.role, users_table.c.disabled)
                .join(users_table, users_table.c.name == sessions_table.c.user)
                .where(sessions_table.c.token_hash == digest)
            )
            .mappings()
            .first()
        )
    if row is None:
        return None
    if row["disabled"] or now - row["last_seen"] > idle_s:
        end_session(engine, token)
        return None
    if now - row["last_seen"] > min(_TOUCH_S, idle_s / 4):
        with engine.begin() as db:
            db.execute(update(sessions_table).where(sessions_table.c.token_hash == digest).values(last_seen=now))
    return Session(User(row["user"], row["role"]), row["csrf"], digest)


def end_session(engine: Engine, token: str) -> None:
    with engine.begin() as db:
        db.execute(delete(sessions_table).where(sessions_table.c.token_hash == _digest(token)))


def same_token(given: str | None, expected: str) -> bool:
    return bool(given) and hmac.compare_digest(str(given).encode(), expected.encode())


class LoginThrottle:
    """Failed logins per user name and per client address in a sliding window (in this process's memory)."""

    def __init__(self, max_failures: int = 5, window_s: float = 900.0) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self._failures: dict[str, deque[float]] = defaultdict(deque)

    def _recent(self, key: str, now: float) -> int:
        found = self._failures[key]
        while found and now - found[0] > self.window_s:
            found.popleft()
        return len(found)

    def blocked(self, name: str, address: str) -> bool:
        now = time.time()
        return any(self._recent(k, now) >= self.max_failures for k in (f"user:{name}", f"addr:{address}"))

    def failed(self, name: str, address: str) -> None:
        now = time.time()
        for key in (f"user:{name}", f"addr:{address}"):
            self._failures[key].append(now)

    def succeeded(self, name: str) -> None:
        self._failures.pop(f"user:{name}", None)
