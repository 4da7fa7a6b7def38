"""What one unit of work (a run's sample) asked for and got, seen from every call it makes, however deep.

A sample's calls go through task code, judges and simulation agents before they reach :class:`~bedside.llm.Model`;
threading a bookkeeping object through every one of those signatures would couple them all to the runner. A
context variable does not: the runner opens a :func:`call_scope` around a sample, asyncio copies the context
into every task the sample starts, and the model records into whatever scope is current.

Two things need it:

* **Retrying an error asks again.** A sample stored as an error remembers the cache keys of the answers that
  caused it (answers rejected by validation, and the last answer it received). ``--retry-errors`` opens the
  sample's scope with those keys in ``bypass``: each is sent to the endpoint once more instead of being
  replayed from the cache (its new answer replaces the cached one), while every other call of the sample is
  still a free cache hit.
* **An error says which answers caused it**: ``answered`` and ``rejected`` are what the runner stores.
* **A sample's call timeline**: every call the sample made (role, model, start and end relative to the scope's
  opening, tokens, cache hit, finish reason, error) is kept in ``calls``, which the runner stores with the
  sample and the viewer draws as the sample's timeline.
* **A dry run sends nothing**: in a ``cache_only`` scope a call the cache cannot answer raises
  :class:`~bedside.llm.errors.CacheMissError` instead of reaching the endpoint.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any

MAX_TIMELINE_CALLS = 1000
"""A sample keeps at most this many calls in its timeline (a long simulation's later calls are counted only)."""


@dataclass
class CallScope:
    bypass: set[str] = field(default_factory=set)
    """Cache keys to ask the endpoint for again, once each, instead of replaying."""
    answered: list[str] = field(default_factory=list)
    """Cache keys of the answers handed out in this scope, in order."""
    rejected: list[str] = field(default_factory=list)
    """Cache keys of answers a caller refused (a structured answer that never validated)."""
    cache_only: bool = False
    """Answer from the cache or raise ``CacheMissError``; never send a request."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    """The timeline: one entry per call made in this scope, in the order the calls ended."""
    calls_left_out: int = 0
    """Calls past :data:`MAX_TIMELINE_CALLS`, counted but not kept."""
    opened: float = field(default_factory=time.perf_counter)

    def note_call(self, started: float, **entry: Any) -> None:
        """Add one call to the timeline: ``started`` is its ``time.perf_counter()`` at the start; the entry's
        ``start_s``/``end_s`` are seconds since the scope opened."""
        if len(self.calls) >= MAX_TIMELINE_CALLS:
            self.calls_left_out += 1
            return
        now = time.perf_counter()
        self.calls.append({"start_s": round(started - self.opened, 6), "end_s": round(now - self.opened, 6), **entry})

    def timeline(self) -> list[dict[str, Any]]:
        """What the runner stores: the calls, and a last entry counting those left out when there were any."""
        if not self.calls_left_out:
            return list(self.calls)
        return [*self.calls, {"left_out": self.calls_left_out}]

    def take_bypass(self, key: str) -> bool:
        """Whether ``key`` must be asked again; true once per key, so a repeated identical call reuses the
        fresh answer instead of paying twice."""
        if key in self.bypass:
            self.bypass.discard(key)
            return True
        return False

    def culprits(self) -> list[str]:
        """The answers a retry should not replay: every rejected one and the last one received."""
        keys = list(dict.fromkeys(self.rejected))
        if self.answered and self.answered[-1] not in keys:
            keys.append(self.answered[-1])
        return keys


_current: ContextVar[CallScope | None] = ContextVar("bedside_call_scope", default=None)


def current_scope() -> CallScope | None:
    return _current.get()


class call_scope:  # used as a function: ``with call_scope(...) as scope``
    """Open a scope for the calls made inside the ``with`` block (and the tasks it starts).

    A class rather than a ``@contextmanager`` generator: the runner opens one per sample, and the generator
    machinery cost more than the scope itself."""

    __slots__ = ("_scope", "_token")

    def __init__(self, bypass: Iterable[str] = (), *, cache_only: bool = False) -> None:
        self._scope = CallScope(bypass=set(bypass), cache_only=cache_only)
        self._token: Token[CallScope | None] | None = None

    def __enter__(self) -> CallScope:
        self._token = _current.set(self._scope)
        return self._scope

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _current.reset(self._token)
            self._token = None
