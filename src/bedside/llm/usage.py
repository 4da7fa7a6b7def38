"""Usage accounting per role (``system``, ``patient``, ``judge``): what was asked, answered, paid.

Counts, per role:

* ``calls``: answers handed to callers (cache hits included);
* ``cache_hits``: answers served from the cache, which cost nothing and send nothing;
* ``requests``: HTTP (or runtime) requests actually sent, retries included;
* ``prompt_tokens`` / ``completion_tokens``: tokens of answers that were not cache hits, as the endpoint
  reported them;
* ``cost``: from those tokens and the model's price table, when one is configured (else stays 0 and
  ``priced`` is false);
* ``truncated``: answers handed out that were cut off (``finish_reason: length``, or ``repetition``: the
  repetition guard), cache hits included;
  they are kept and scored, and counted so a report can say how many there were;
* ``repetitions``: the part of ``truncated`` that the repetition guard cut (``finish_reason: repetition``), so a
  run or the demo can say how often the embedded model fell into a loop;
* ``errors``: calls that failed for good.
"""

from __future__ import annotations

import threading

from pydantic import BaseModel

from bedside.llm.types import ROLES, Role


class RoleUsage(BaseModel):
    calls: int = 0
    cache_hits: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    priced: bool = False
    truncated: int = 0
    repetitions: int = 0
    errors: int = 0


class _Counts:
    """The running totals behind a :class:`RoleUsage`: plain attributes, since a pydantic model's attribute
    assignment cost ~2 us each and every call updates several."""

    __slots__ = (
        "cache_hits",
        "calls",
        "completion_tokens",
        "cost",
        "errors",
        "priced",
        "prompt_tokens",
        "repetitions",
        "requests",
        "truncated",
    )

    def __init__(self) -> None:
        self.calls = self.cache_hits = self.requests = self.prompt_tokens = self.completion_tokens = 0
        self.cost = 0.0
        self.priced = False
        self.truncated = self.repetitions = self.errors = 0

    def usage(self) -> RoleUsage:
        return RoleUsage(**{name: getattr(self, name) for name in self.__slots__})


if set(_Counts.__slots__) != set(RoleUsage.model_fields):  # a field added to one must be added to the other
    raise ImportError("bedside.llm.usage: _Counts and RoleUsage name different counts")


class UsageLedger:
    """Thread-safe totals by role; one ledger is usually shared by every model of a run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_role: dict[Role, _Counts] = {}

    def _entry(self, role: Role) -> _Counts:
        entry = self._by_role.get(role)
        if entry is None:
            if role not in ROLES:
                raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
            entry = self._by_role[role] = _Counts()
        return entry

    def record_request(self, role: Role) -> None:
        with self._lock:
            self._entry(role).requests += 1

    def record_answer(
        self,
        role: Role,
        *,
        cached: bool,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost: float | None = None,
        truncated: bool = False,
        repeated: bool = False,
    ) -> None:
        with self._lock:
            entry = self._entry(role)
            entry.calls += 1
            entry.truncated += truncated
            entry.repetitions += repeated
            if cached:
                entry.cache_hits += 1
            else:
                _add_tokens(entry, prompt_tokens, completion_tokens, cost)

    def record_tokens(
        self, role: Role, *, prompt_tokens: int, completion_tokens: int, cost: float | None = None
    ) -> None:
        """Tokens of an answer that was paid for but not handed out (an empty answer, refused)."""
        with self._lock:
            _add_tokens(self._entry(role), prompt_tokens, completion_tokens, cost)

    def record_error(self, role: Role) -> None:
        with self._lock:
            self._entry(role).errors += 1

    def snapshot(self) -> dict[Role, RoleUsage]:
        """A copy of the totals, roles in their fixed order."""
        with self._lock:
            return {role: self._by_role[role].usage() for role in ROLES if role in self._by_role}


def _add_tokens(entry: _Counts, prompt_tokens: int, completion_tokens: int, cost: float | None) -> None:
    entry.prompt_tokens += prompt_tokens
    entry.completion_tokens += completion_tokens
    if cost is not None:
        entry.cost += cost
        entry.priced = True
