"""Accounts, sessions, CSRF tokens and login throttling for the web app.

- Passwords are argon2id hashes (argon2-cffi, its default parameters); a hash made with older parameters is
  re-hashed at the next successful login.
- A session is a random 32-byte token in an HttpOnly, SameSite=Strict cookie (Secure over TLS); the store keeps
  only its sha256, the user, a per-session CSRF token and the last time it was used. A session unused for
  ``idle_s`` (default 30 min) is gone; so is every session of a disabled user.
- Every state-changing request carries the session's CSRF token (a hidden form field or the ``X-CSRF-Token``
  header), compared in constant time. The login form, which has no session yet, uses a double-submit token: a
  random cookie and the same value in the form.
- Login throttling (:class:`LoginThrottle`): per (user name, client address), with exponential backoff after
  ``max_failures`` failures in ``window_s``, refused attempts answered HTTP 429 with ``Retry-After``. Someone who
  knows a user name cannot lock its owner out: the owner's own address has its own count. The client address is
  the connection's peer; ``X-Forwarded-For`` counts only from configured proxies (:func:`client_address`).
- What an unauthenticated request can make bedside write is bounded: names cut to 64 characters, and at most
  :class:`AuditBudget` audit rows per address per window.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, delete, func, insert, select, update

from bedside.web.db import assignments_table, labels_table, sessions_table, users_table

ROLES = ("admin", "annotator", "adjudicator")
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
        alike = db.execute(select(users_table.c.name).where(func.lower(users_table.c.name) == name.lower())).scalar()
        if alike is not None:  # "ANN1" beside "ann1": two people a reviewer's list cannot tell apart
            raise AccountError(f"user {alike!r} exists already: names that differ only in case are refused")
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


def enable_user(engine: Engine, name: str) -> None:
    """Let a disabled account log in again (its password is unchanged)."""
    with engine.begin() as db:
        if not db.execute(update(users_table).where(users_table.c.name == name).values(disabled=False)).rowcount:
            raise AccountError(f"no user {name!r}")


def reset_password(engine: Engine, name: str, password: str) -> None:
    """Give an account a new password and end its sessions (whoever held the old one is logged out)."""
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"a password needs at least {MIN_PASSWORD} characters")
    with engine.begin() as db:
        done = db.execute(
            update(users_table).where(users_table.c.name == name).values(password_hash=hash_password(password))
        )
        if not done.rowcount:
            raise AccountError(f"no user {name!r}")
        db.execute(delete(sessions_table).where(sessions_table.c.user == name))


def delete_user(engine: Engine, name: str) -> None:
    """Remove an account that has no labels and no assignments; one that has must be disabled instead, so a
    review's labels always name an account that exists."""
    with engine.begin() as db:
        if not db.execute(select(users_table.c.name).where(users_table.c.name == name)).first():
            raise AccountError(f"no user {name!r}")
        for table in (labels_table, assignments_table):
            if db.execute(select(table.c.review_id).where(table.c.annotator == name).limit(1)).first():
                raise AccountError(
                    f"user {name!r} has labels or assignments in a review; disable the account instead "
                    "(bedside users disable), which keeps them"
                )
        db.execute(delete(sessions_table).where(sessions_table.c.user == name))
        db.execute(delete(users_table).where(users_table.c.name == name))


@dataclass(frozen=True)
class User:
    name: str
    role: str

    @property
    def admin(self) -> bool:
        return self.role == "admin"

    @property
    def adjudicates(self) -> bool:
        """Admins and adjudicators settle disagreements (adjudicators see items blinded, and nothing else)."""
        return self.role in ("admin", "adjudicator")


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


def new_token(nbytes: int = 32) -> str:
    """An unguessable token (session, CSRF, login form). Every token the web app makes comes from here, so a test
    can render pages with fixed tokens (``tests/conftest.py``) and no page text is decided by chance."""
    return secrets.token_urlsafe(nbytes)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Session:
    user: User
    csrf: str
    token_hash: str


def new_session(engine: Engine, user: User) -> str:
    token = new_token()
    now = time.time()
    with engine.begin() as db:
        db.execute(
            insert(sessions_table).values(
                token_hash=_digest(token), user=user.name, csrf=new_token(), created_at=now, last_seen=now
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


MAX_NAME_CHARS = 64
"""User names are at most this long (see :func:`add_user`); a longer submitted name is cut to it before it is
throttled, audited or looked up, so an unauthenticated request cannot make bedside store or hold a large text."""


def submitted_name(name: str) -> str:
    """A name from the login form, bounded: cut to :data:`MAX_NAME_CHARS` (no account has a longer one)."""
    return name[:MAX_NAME_CHARS]


class LoginThrottle:
    """Failed logins per (user name, client address), with exponential backoff, in this process's memory.

    After ``max_failures`` failures of one name from one address within ``window_s``, that pair waits
    ``base_delay_s``, doubling with each further failure up to ``max_delay_s``. Keyed on the pair, an attacker
    who knows a user name slows down only their own attempts: the owner, logging in from their own address,
    is never locked out by someone else's failures. One address that fails across many names
    (``address_factor`` times ``max_failures`` in the window) is itself slowed the same way, whatever name it
    tries next. A success from an address clears that pair. At most ``max_entries`` pairs are tracked (the
    oldest forgotten first), so a flood of distinct names cannot grow memory without bound.

    ``clock`` is injectable so tests need no real waiting.
    """

    def __init__(
        self,
        max_failures: int = 5,
        window_s: float = 900.0,
        *,
        base_delay_s: float = 30.0,
        max_delay_s: float = 900.0,
        address_factor: int = 4,
        max_entries: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.address_factor = address_factor
        self.max_entries = max_entries
        self._clock = clock
        self._failures: OrderedDict[tuple[str, str], deque[float]] = OrderedDict()

    def _recent(self, key: tuple[str, str], now: float) -> deque[float] | None:
        found = self._failures.get(key)
        if found is None:
            return None
        while found and now - found[0] > self.window_s:
            found.popleft()
        if not found:
            del self._failures[key]
            return None
        return found

    def _wait(self, failures: deque[float] | None, limit: int, now: float) -> float:
        if failures is None or len(failures) < limit:
            return 0.0
        delay = min(self.max_delay_s, self.base_delay_s * 2.0 ** (len(failures) - limit))
        return max(0.0, failures[-1] + delay - now)

    def retry_after(self, name: str, address: str) -> float:
        """Seconds this (name, address) must still wait before its next attempt is checked; 0 when it may try."""
        now = self._clock()
        pair = self._wait(self._recent((name, address), now), self.max_failures, now)
        spread = self._wait(self._recent(("", address), now), self.max_failures * self.address_factor, now)
        return max(pair, spread)

    def blocked(self, name: str, address: str) -> bool:
        return self.retry_after(name, address) > 0

    def failed(self, name: str, address: str) -> None:
        now = self._clock()
        for key in ((name, address), ("", address)):
            found = self._failures.get(key)
            if found is None:
                found = self._failures[key] = deque()
            else:
                self._failures.move_to_end(key)
            found.append(now)
            if len(found) > self.max_failures * self.address_factor * 4:
                found.popleft()  # the backoff is capped long before this: older failures change nothing
        while len(self._failures) > self.max_entries:
            self._failures.popitem(last=False)

    def succeeded(self, name: str, address: str) -> None:
        self._failures.pop((name, address), None)


class AuditBudget:
    """At most ``per_window`` audit rows per client address per ``window_s`` for unauthenticated events (failed
    and throttled logins): each row is small (names are cut to :data:`MAX_NAME_CHARS`), and this bounds how many
    rows a client without an account can make bedside write. Rows over the budget are counted, not written."""

    def __init__(
        self,
        per_window: int = 20,
        window_s: float = 900.0,
        *,
        max_entries: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_window = per_window
        self.window_s = window_s
        self.max_entries = max_entries
        self.dropped = 0
        self._clock = clock
        self._spent: OrderedDict[str, deque[float]] = OrderedDict()

    def take(self, address: str) -> bool:
        """Whether one more row may be written for ``address`` now (and count it when so)."""
        now = self._clock()
        spent = self._spent.get(address)
        if spent is None:
            spent = self._spent[address] = deque()
        else:
            self._spent.move_to_end(address)
        while spent and now - spent[0] > self.window_s:
            spent.popleft()
        if len(spent) >= self.per_window:
            self.dropped += 1
            return False
        spent.append(now)
        while len(self._spent) > self.max_entries:
            self._spent.popitem(last=False)
        return True


def client_address(peer: str | None, forwarded_for: str | None, trusted_proxies: frozenset[str]) -> str:
    """The address a request came from, for throttling and audit.

    ``X-Forwarded-For`` is read only when the direct peer is one of ``trusted_proxies`` (configured, none by
    default): from any other client it is ignored, or a client could pick the address it is throttled under.
    Read from the right, the first address that is not itself a trusted proxy is the client.
    """
    address = peer or "?"
    if not forwarded_for or address not in trusted_proxies:
        return address
    for hop in reversed([part.strip() for part in forwarded_for.split(",")][-16:]):
        if hop and hop not in trusted_proxies:
            return hop[:64]
    return address
