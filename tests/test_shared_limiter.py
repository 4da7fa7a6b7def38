"""The cluster-wide limiter's leases without Ray: the actor's state (fair shares, leases waiting in order, owners
reset, the 429 back-off, returns of a lost life ignored) and workers' :class:`RemoteLimiter`s on an in-process
stand-in for the actor, with a counter of what is in flight at the "endpoint" (no timing is asserted)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from bedside.llm.shared_limiter import RemoteLimiter, _LimiterState, _Limits, fair_shares


class _Handle:
    """A stand-in for a Ray actor handle, in this process: ``handle.method.remote(...)`` runs the method on the
    running loop and returns an awaitable (a fire-and-forget call runs all the same)."""

    def __init__(self, body: Any) -> None:
        self.body = body

    def __getattr__(self, name: str) -> Any:
        handle = self

        class _Method:
            @staticmethod
            def remote(*args: Any) -> asyncio.Future[Any]:
                async def call() -> Any:
                    result = getattr(handle.body, name)(*args)
                    return await result if inspect.isawaitable(result) else result

                return asyncio.ensure_future(call())

        return _Method


def test_fair_shares_split_by_demand_and_share_the_spare() -> None:
    assert fair_shares(10, {"a": 2, "b": 20, "c": 20}) == {"a": 2, "b": 4, "c": 4}
    assert fair_shares(10, {"a": 2, "b": 3}) == {"a": 5, "b": 5}  # demands met, the 5 left split evenly
    assert fair_shares(4, {"a": 0, "b": 9}) == {"a": 0, "b": 4}
    assert fair_shares(1, {"a": 5, "b": 5}) == {"a": 1, "b": 0}
    assert fair_shares(0, {"a": 3}) == {"a": 0}
    assert sum(fair_shares(7, {"a": 3, "b": 3, "c": 3}).values()) == 7


def test_limiter_state_leases_by_fair_share_resets_owners_and_backs_off() -> None:
    async def run() -> None:
        state = _LimiterState(4)
        assert state.renew("w0/1", demand=3) == (4, 4, 4)  # alone: its demand and the spare
        assert state.renew("w1", demand=2) == (0, 2, 4)  # nothing free: nothing granted, no waiting at the actor
        assert state.renew("w0/1", demand=3) == (0, 2, 4)  # the limit split over demands 3 and 2
        assert state.release("w0/1", count=2) == 4  # w0 gives back what it holds beyond its share
        assert state.renew("w1", demand=2) == (2, 2, 4)
        assert state.stats()["held"] == {"w0/1": 2, "w1": 2}
        assert await state.reset_owners("w0/", keep="w0/1") == 0  # no earlier life: nothing to give back
        assert await state.reset_owners("w0/", keep="w0/2", grace_s=0.01) == 2  # the restarted w0 gives back
        assert state.stats()["in_flight"] == 2
        assert state.on_rate_limited() == 2  # halved for every owner
        assert state.renew("w2", demand=1) == (0, 1, 2)  # w1 holds the whole (halved) limit
        assert state.renew("w1", demand=2, count=1, successes=1) == (0, 1, 2)  # one each: w1 gives one back
        assert state.renew("w2", demand=1) == (1, 1, 2)
        assert state.stats()["held"] == {"w1": 1, "w2": 1}
        assert state.stats()["max_in_flight"] == 4
        # three owners, two slots: the one holding fewest (w3, none) has the next turn, w2 (tied with w1 on one
        # held, named later) gives its slot back when its request ends
        assert state.renew("w3", demand=5) == (0, 1, 2)
        assert state.renew("w2", demand=1) == (0, 0, 2)

    asyncio.run(run())


def test_returns_tagged_with_a_lost_life_of_the_actor_are_ignored() -> None:
    async def run() -> None:
        limits = _Limits()
        granted, _, _, life = await limits.renew("e", "w", 2, 4, 0, 0, "")
        assert granted == 4
        await limits.release("e", "w", 2, 0, "an-earlier-life")
        assert (await limits.stats("e"))["in_flight"] == 4  # those slots may still be in use: they stay counted
        await limits.release("e", "w", 2, 0, life)
        assert (await limits.stats("e"))["in_flight"] == 2

    asyncio.run(run())


def _workers(limits: _Limits, count: int, cap: int) -> list[RemoteLimiter]:
    return [RemoteLimiter(_Handle(limits), "e", cap, f"worker-{i}/1/x") for i in range(count)]


def test_leases_keep_the_cap_across_workers_and_serve_requests_locally() -> None:
    """Three workers, 60 requests each, a cap of 5: the endpoint never sees more than 5, reaches 5, and most
    requests start on a slot their worker already held (no message to the actor)."""
    seen = {"now": 0, "most": 0}

    async def request(limiter: RemoteLimiter) -> None:
        async with limiter:
            seen["now"] += 1
            seen["most"] = max(seen["most"], seen["now"])
            for _ in range(3):
                await asyncio.sleep(0)
            seen["now"] -= 1

    async def run() -> list[RemoteLimiter]:
        limits = _Limits()
        workers = _workers(limits, 3, 5)
        await asyncio.gather(*(request(w) for _ in range(60) for w in workers))
        assert (await limits.stats("e"))["max_in_flight"] <= 5
        await asyncio.gather(*(w.close() for w in workers))  # finished workers give their leases back
        assert (await limits.stats("e"))["in_flight"] == 0
        return workers

    workers = asyncio.run(run())
    assert seen["most"] == 5
    started = sum(w.started for w in workers)
    assert started == 180
    assert sum(w.local for w in workers) > started / 2
    assert sum(w.actor_calls for w in workers) < started / 2


def test_a_restarted_actor_voids_the_lease_and_the_old_slots_are_not_returned() -> None:
    async def run() -> None:
        first = _Limits()
        handle = _Handle(first)
        worker = RemoteLimiter(handle, "e", 4, "worker-0/1/x")
        gates = {"old": asyncio.Event(), "new": asyncio.Event()}
        running = {"old": 0, "new": 0}
        all_in = {"old": asyncio.Event(), "new": asyncio.Event()}

        async def request(kind: str, count: int) -> None:
            async with worker:
                running[kind] += 1
                if running[kind] == count:
                    all_in[kind].set()
                await gates[kind].wait()

        old = [asyncio.ensure_future(request("old", 4)) for _ in range(4)]
        await all_in["old"].wait()
        assert (worker.held, (await first.stats("e"))["in_flight"]) == (4, 4)  # the whole lease in use
        second = _Limits()  # the actor's new life: it knows nothing of the lease
        handle.body = second
        new = asyncio.ensure_future(request("new", 1))
        await all_in["new"].wait()
        assert worker.stale == 4  # the four in flight hold slots of the lost life
        assert worker.held == (await second.stats("e"))["in_flight"] == 4  # the new life leased it its share afresh
        gates["old"].set()
        await asyncio.gather(*old)
        assert worker.stale == 0
        assert (await second.stats("e"))["in_flight"] == 4  # nothing of the old life was returned to the new one
        gates["new"].set()
        await new

    asyncio.run(run())


def test_a_worker_whose_lease_changes_nothing_renews_less_often_and_a_new_caller_is_still_served() -> None:
    """Renewing every ``RENEW_S`` whatever happened was most of a Ray worker's CPU per sample: while answers change
    nothing the interval doubles up to ``QUIET_RENEW_S``. Held for 40 of ``RENEW_S`` with two requests in
    flight, a worker sends a handful of renewals, not forty; then a caller that must wait (the lease is full) is
    served once a slot comes back."""

    async def run() -> tuple[int, int, int]:
        limits = _Limits()
        (worker,) = _workers(limits, 1, 2)
        gate, both_in = asyncio.Event(), asyncio.Event()
        order: list[str] = []

        async def request(name: str) -> None:
            async with worker:
                order.append(name)
                if len(order) == 2:
                    both_in.set()
                await gate.wait()

        held = [asyncio.ensure_future(request(f"held-{i}")) for i in range(2)]
        await both_in.wait()
        calls = worker.actor_calls
        await asyncio.sleep(40 * RemoteLimiter.RENEW_S)
        quiet_calls = worker.actor_calls - calls
        late = asyncio.ensure_future(request("late"))
        await asyncio.sleep(RemoteLimiter.RENEW_S)
        waiting_before_release = len(order)
        gate.set()
        await asyncio.gather(*held, late)
        await worker.close()
        assert (await limits.stats("e"))["max_in_flight"] <= 2
        return quiet_calls, waiting_before_release, len(order)

    quiet_calls, before, after = asyncio.run(run())
    assert quiet_calls <= 8
    assert (before, after) == (2, 3)  # the late caller waited for a slot, then ran
