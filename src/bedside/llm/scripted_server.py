"""A real OpenAI-compatible HTTP server with scripted answers, for tests, benchmarks and fault drills.

It answers ``POST /v1/chat/completions`` from :class:`~bedside.llm.scripted.ScriptedRules`, after a fixed
latency, and injects faults at given rates from a seeded generator:

========== ==========================================================================================
fault      what the client sees
========== ==========================================================================================
``429``    HTTP 429 with a ``Retry-After`` header (``retry-after`` seconds, 1 by default)
``500``    HTTP 500 with an error body
``hang``   nothing: the server holds the request until the client goes away (or ``hang_s`` passes)
``malformed``    HTTP 200 whose body is not JSON
``invalid-json`` HTTP 200, a well-formed completion whose message content is broken JSON
``null``   HTTP 200, ``content: null`` and ``finish_reason: length`` (what vLLM with a reasoning parser
           returns when max tokens run out while the model is still thinking)
``empty``  HTTP 200, ``content: ""`` and ``finish_reason: stop``
``length`` HTTP 200, the scripted answer cut to its first half (by words), ``finish_reason: length``
``zero-width``     HTTP 200, content of only zero-width characters and whitespace, ``finish_reason: stop``
``content-filter`` HTTP 200, a canned apology as content and ``finish_reason: content_filter`` (a provider's
                   moderation stopping the answer)
========== ==========================================================================================

Fault spec string (CLI ``--faults``): comma-separated ``KIND=RATE`` items, plus ``retry-after=SECONDS``
and ``first=KIND+KIND+...`` (the first requests get exactly these faults, in order, before rates apply),
e.g. ``429=0.1,500=0.05,hang=0.01,retry-after=0.5,first=429+500``.

With ``api_key`` set, a request without ``Authorization: Bearer <api_key>`` gets HTTP 401.

With ``echo_headers`` set, every body (the answer's content on HTTP 200, the error message otherwise) starts
with the request's headers, as a careless proxy or debug endpoint would: for testing that no key is stored.

Counters (``GET /_scripted/stats``, or :meth:`ScriptedServer.stats`): requests, in flight now, most in flight
at once, held now, answers by kind, and requests in flight integrated over time (``in_flight_s`` over
``busy_s``: the mean concurrency, which ``bench/scale.py`` reports as endpoint utilisation).
``POST /_scripted/reset`` zeroes them. It binds to 127.0.0.1 unless told
otherwise.

A gate makes concurrency observable without timing: :meth:`ScriptedServer.hold` keeps requests waiting (counted
in flight) until :meth:`ScriptedServer.release`, or until a given number is in flight at once, so a test can
say "five requests were in flight together" because the server made them wait for each other, not because a
latency happened to be long enough on a busy machine. :meth:`ScriptedServer.wait_until` blocks a test until
the counters say something (a request arrived, one is held) instead of sleeping and hoping.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from bedside.llm.scripted import ScriptedRules, count_words
from bedside.llm.types import MAX_CHOICES, ChatMessage

FAULT_KINDS = (
    "429",
    "500",
    "hang",
    "malformed",
    "invalid-json",
    "null",
    "empty",
    "length",
    "zero-width",
    "content-filter",
)


@dataclass(frozen=True)
class FaultSpec:
    rates: dict[str, float] = field(default_factory=dict)
    retry_after_s: float = 1.0
    first: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for kind in (*self.rates, *self.first):
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault {kind!r}; known faults: {', '.join(FAULT_KINDS)}")
        if any(not 0.0 <= r <= 1.0 for r in self.rates.values()) or sum(self.rates.values()) > 1.0:
            raise ValueError("fault rates must each be in [0, 1] and add up to at most 1")

    @classmethod
    def parse(cls, spec: str | None) -> FaultSpec:
        if not spec:
            return cls()
        rates: dict[str, float] = {}
        retry_after = 1.0
        first: tuple[str, ...] = ()
        for item in filter(None, (part.strip() for part in spec.split(","))):
            name, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"fault spec item {item!r} is not NAME=VALUE")
            try:
                if name == "retry-after":
                    retry_after = float(value)
                elif name == "first":
                    first = tuple(filter(None, value.split("+")))
                else:
                    rates[name] = float(value)
            except ValueError:
                raise ValueError(f"fault spec item {item!r}: {value!r} is not a number") from None
        return cls(rates=rates, retry_after_s=retry_after, first=first)


class ScriptedServer:
    """Run it in a background thread (``with ScriptedServer(...) as server:``) or inside a running loop."""

    def __init__(
        self,
        rules: Any = None,
        *,
        latency_ms: float = 0.0,
        faults: FaultSpec | str | None = None,
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        hang_s: float = 300.0,
        api_key: str | None = None,
        echo_headers: bool = False,
    ) -> None:
        self.rules = ScriptedRules.coerce(rules)
        self.latency_s = latency_ms / 1000.0
        self.faults = faults if isinstance(faults, FaultSpec) else FaultSpec.parse(faults)
        self.seed = seed
        self.host = host
        self.port = port
        self.hang_s = hang_s
        self.api_key = api_key
        self.echo_headers = echo_headers
        self.recent: deque[dict[str, Any]] = deque(maxlen=100)
        """The last request bodies received, newest last, for tests that check what was sent."""
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        """Notified whenever a counter changes, for :meth:`wait_until`."""
        self._gate: asyncio.Event | None = None
        """While set to an event, requests past ``_let_through`` wait for it (see :meth:`hold`)."""
        self._let_through = 0
        self._open_at_in_flight: int | None = None
        self._hold_at_most_s = 0.0
        self.held = 0
        self._reset_counters()
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._serving_loop: asyncio.AbstractEventLoop | None = None

    # ----------------------------------------------------------------- counters

    def _reset_counters(self) -> None:
        with self._lock:
            self.requests = 0
            self.in_flight = 0
            self.max_in_flight = 0
            self.in_flight_s = 0.0
            """The integral of requests in flight over time (request-seconds), for utilisation."""
            self.first_at: float | None = None
            self.last_at: float | None = None
            """``time.monotonic`` of the first request's arrival and of the latest request's end."""
            self.answers: Counter[str] = Counter()
            self._rng = random.Random(self.seed)
            self._changed.notify_all()

    def reset(self) -> None:
        self._reset_counters()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return self._stats_locked()

    def _stats_locked(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "held": self.held,
            "answers": dict(self.answers),
            "in_flight_s": self.in_flight_s,
            "busy_s": (self.last_at - self.first_at) if self.first_at is not None and self.last_at else 0.0,
        }

    def wait_until(self, condition: Callable[[dict[str, Any]], bool], *, timeout_s: float = 300.0) -> dict[str, Any]:
        """Block until ``condition(stats)`` holds and return those stats: a test waits for what the server saw,
        not for a guessed time. ``timeout_s`` only turns a hang into a :class:`TimeoutError` naming the stats."""
        with self._changed:
            if not self._changed.wait_for(lambda: condition(self._stats_locked()), timeout=timeout_s):
                raise TimeoutError(f"the scripted server's counters never met the condition: {self._stats_locked()}")
            return self._stats_locked()

    # ----------------------------------------------------------------- gate

    def hold(self, *, after: int = 0, until_in_flight: int | None = None, at_most_s: float = 300.0) -> None:
        """Hold requests (counted in flight and in ``held``) until :meth:`release`.

        ``after`` lets that many more requests through first. With ``until_in_flight`` the gate also opens by
        itself once that many requests are in flight at once, which proves a client reaches that concurrency
        however slow the machine is. ``at_most_s`` opens it anyway, so a client that never gets there fails
        the test's assertion instead of hanging it. Requests that arrive after the gate opened are not held.
        """
        if self._serving_loop is None:
            raise RuntimeError("start the server before holding its requests")
        with self._lock:
            self._gate = asyncio.Event()
            self._let_through = after
            self._open_at_in_flight = until_in_flight
            self._hold_at_most_s = at_most_s

    def release(self) -> None:
        """Open the gate: every held request goes on, and new ones are no longer held."""
        with self._lock:
            gate, self._gate = self._gate, None
        if gate is not None and self._serving_loop is not None:
            self._serving_loop.call_soon_threadsafe(gate.set)

    async def _pass_gate(self) -> None:
        with self._lock:
            gate = self._gate
            if gate is None:
                return
            if self._let_through > 0:
                self._let_through -= 1
                return
            if self._open_at_in_flight is not None and self.in_flight >= self._open_at_in_flight:
                self._gate = None
                gate.set()  # on the serving loop already
                return
            self.held += 1
            self._changed.notify_all()
            at_most_s = self._hold_at_most_s
        try:
            await asyncio.wait_for(gate.wait(), timeout=at_most_s)
        except TimeoutError:
            with self._lock:
                if self._gate is gate:
                    self._gate = None
            gate.set()
        finally:
            with self._lock:
                self.held -= 1
                self._changed.notify_all()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def model_name(self, model: str = "scripted") -> str:
        """A model string that points bedside at this server."""
        return f"openai-compatible/{model}@{self.base_url}"

    # ----------------------------------------------------------------- HTTP

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/_scripted/stats", self._stats)
        app.router.add_post("/_scripted/reset", self._reset)
        return app

    def _count_in_flight(self, change: int) -> None:
        """Under the lock: one request more or fewer in flight, integrated over time, so a benchmark reads the
        endpoint's mean concurrency (``in_flight_s / busy_s``) from the server rather than sampling it."""
        now = time.monotonic()
        if self.first_at is None:
            self.first_at = now
        elif self.last_at is not None:
            self.in_flight_s += self.in_flight * (now - self.last_at)
        self.last_at = now
        self.in_flight += change

    def _next_fault(self) -> str | None:
        with self._lock:
            index = self.requests
            self.requests += 1
            self._count_in_flight(+1)
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._changed.notify_all()
            if index < len(self.faults.first):
                return self.faults.first[index]
            draw = self._rng.random()
        cumulative = 0.0
        for kind, rate in self.faults.rates.items():
            cumulative += rate
            if draw < cumulative:
                return kind
        return None

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        fault = self._next_fault()
        outcome = fault or "ok"
        echoed = "".join(f"{k}: {v}\n" for k, v in request.headers.items()) if self.echo_headers else ""
        try:
            await self._pass_gate()
            if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
                outcome = "401"
                return web.json_response({"error": {"message": f"{echoed}missing or wrong API key"}}, status=401)
            if fault == "429":
                return web.json_response(
                    {"error": {"message": f"{echoed}rate limited (scripted)", "type": "rate_limit"}},
                    status=429,
                    headers={"Retry-After": f"{self.faults.retry_after_s:g}"},
                )
            if fault == "hang":
                deadline = time.monotonic() + self.hang_s
                while time.monotonic() < deadline:
                    if request.transport is None or request.transport.is_closing():
                        break
                    await asyncio.sleep(0.02)
                return web.json_response({"error": {"message": "hung (scripted)"}}, status=504)
            try:
                body = await request.json()
                self.recent.append(body)
                messages = [ChatMessage.model_validate(m) for m in body["messages"]]
                n = int(body.get("n", 1))
                if not 1 <= n <= MAX_CHOICES:
                    raise ValueError(f"n must be 1 to {MAX_CHOICES}, got {n}")
            except (ValueError, KeyError, TypeError) as exc:
                outcome = "400"
                return web.json_response({"error": {"message": f"bad request: {exc}"}}, status=400)
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            if fault == "500":
                return web.json_response({"error": {"message": f"{echoed}internal error (scripted)"}}, status=500)
            if fault == "malformed":
                return web.Response(text='{"choices": [ this is not json', content_type="application/json")
            text: str | None = '{"answer": "unterminated' if fault == "invalid-json" else self.rules.answer(messages)
            finish_reason = "stop"
            if fault == "null":
                text, finish_reason = None, "length"
            elif fault == "empty":
                text = ""
            elif fault == "zero-width":
                text = "\u200b\u200c\u200d \n\u2060\ufeff"
            elif fault == "content-filter":
                text, finish_reason = "I'm sorry, but I can't help with that.", "content_filter"
            elif fault == "length":
                words = (text or "").split(" ")
                text, finish_reason = " ".join(words[: max(1, len(words) // 2)]), "length"
            if echoed and text is not None:
                text = echoed + text
            return web.json_response(
                _completion_body(body.get("model", "scripted"), messages, text, n, finish_reason=finish_reason)
            )
        finally:
            with self._lock:
                self._count_in_flight(-1)
                self.answers[outcome] += 1
                self._changed.notify_all()

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "scripted", "object": "model"}]})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats())

    async def _reset(self, request: web.Request) -> web.Response:
        self.reset()
        return web.json_response({"ok": True})

    # ----------------------------------------------------------------- lifecycle

    async def start_async(self) -> None:
        """Start serving on the running loop; ``port`` is filled in when it was 0."""
        self._serving_loop = asyncio.get_running_loop()
        self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
        await site.start()
        if self.port == 0:
            self.port = int(self._runner.addresses[0][1])

    async def stop_async(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def start(self) -> ScriptedServer:
        """Serve from a background thread with its own event loop; returns once the port is bound."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.start_async())
            except BaseException as exc:  # surfaced to the caller of start()
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.stop_async())
            loop.close()

        self._thread = threading.Thread(target=serve, name="bedside-scripted-server", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._thread = None
            self._loop = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _completion_body(
    model: str, messages: list[ChatMessage], text: str | None, n: int, *, finish_reason: str = "stop"
) -> dict[str, Any]:
    prompt_tokens = sum(count_words(m.content) for m in messages)
    completion_tokens = count_words(text or "") * n
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_scripted",
        "choices": [
            {"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
            for i in range(n)
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
