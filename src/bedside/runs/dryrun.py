"""What a run would do, without sending a request or writing a row: ``bedside run CONFIG --dry-run``.

Three answers, each as exact as can be known without calling a model:

* **the plan** (exact): per cell, samples already finished, outputs to re-score, rows reusable from other runs
  in the store, and samples still to run (:func:`~bedside.runs.runner.plan_run`, read-only);
* **the cache** (exact up to the first miss): each sample still to run is replayed with every call answered
  from the response cache only (a ``cache_only`` call scope). A sample that finishes costs nothing; one that
  misses needs the endpoint from that call on, and what comes after a miss cannot be known without its answer;
* **the cost** (an estimate): calls and tokens per sample by role, averaged over the successful samples of the
  same task and system type already in the store (tokens from samples that paid for their answers), times the
  samples that need the endpoint, priced with the roles' ``model_options.price``. With no such history it says
  so instead of guessing.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from bedside.llm.errors import CacheMissError
from bedside.llm.scope import call_scope
from bedside.runs.config import RunConfig
from bedside.runs.registry import resolve_task
from bedside.runs.runner import Plan, RunSummary, build_models, check_config, load_datasets, plan_run
from bedside.runs.store import Store
from bedside.runs.task import SampleContext, Task


@dataclass
class RoleEstimate:
    calls: float
    """Mean calls per sample of this role, from ``samples`` stored samples."""
    prompt_tokens: float | None
    completion_tokens: float | None
    samples: int
    price: dict[str, float] | None = None

    @property
    def cost(self) -> float | None:
        """Cost of one sample's calls of this role, when tokens and a price are known."""
        if self.price is None or self.prompt_tokens is None or self.completion_tokens is None:
            return None
        return (
            self.prompt_tokens * self.price["input_per_million"]
            + self.completion_tokens * self.price["output_per_million"]
        ) / 1e6


@dataclass
class DryRun:
    plan: Plan
    cache: str | None
    replayable: int = 0
    """Samples to run whose every call the cache answers: they would cost nothing."""
    replayed_answers: int = 0
    """Cache hits of those samples."""
    need_endpoint: int = 0
    """Samples that reach a call the cache cannot answer."""
    hits_before_miss: int = 0
    """Cache hits of those samples before their first miss."""
    replay_errors: dict[str, str] = field(default_factory=dict)
    """Samples whose cached replay raised something else (sample id -> cause): they would fail as errors."""
    estimates: dict[str, dict[str, RoleEstimate]] = field(default_factory=dict)
    """System type -> role -> per-sample estimate from stored samples (absent: no history)."""

    def expected(self) -> dict[str, Any]:
        """Calls, requests and cost the samples that need the endpoint are expected to take, where known."""
        by_type: dict[str, int] = defaultdict(int)
        for item in self.plan.generate:
            by_type[self.plan.config.systems[item.cell.system].type] += 1
        share = self.need_endpoint / len(self.plan.generate) if self.plan.generate else 0.0
        calls = 0.0
        cost = 0.0
        known_calls, known_cost = True, True
        for system_type, count in by_type.items():
            roles = self.estimates.get(system_type)
            if not roles:
                known_calls = known_cost = False
                continue
            for estimate in roles.values():
                calls += estimate.calls * count * share
                if estimate.cost is None:
                    known_cost = False
                else:
                    cost += estimate.cost * count * share
        settings = self.plan.config.settings
        return {
            "calls": round(calls) if known_calls else None,
            "requests_at_least": self.need_endpoint,
            "cost": round(cost, 6) if known_cost and calls else (0.0 if known_cost else None),
            # Bounds known without history: each answer is at most its role's max_tokens long.
            "max_tokens": {role: s["max_tokens"] for role, s in settings.items() if s.get("max_tokens")},
        }

    def data(self) -> dict[str, Any]:
        summary = self.plan.summary
        return {
            "run": summary.run_id,
            "cells": {
                cell.id: {
                    "samples": summary.cells[cell.id].total,
                    "finished": summary.cells[cell.id].skipped,
                    "stored_errors": summary.cells[cell.id].errors,
                    "rescore": sum(item.cell == cell for item, _ in self.plan.rescore),
                    "reuse": sum(item.cell == cell for item, _ in self.plan.reuse),
                    "run": sum(item.cell == cell for item in self.plan.generate),
                }
                for cell in self.plan.cells
            },
            "cache": self.cache,
            "replayable": self.replayable,
            "replayed_answers": self.replayed_answers,
            "need_endpoint": self.need_endpoint,
            "hits_before_miss": self.hits_before_miss,
            "replay_errors": self.replay_errors,
            "estimates": {
                system: {role: vars(e) for role, e in roles.items()} for system, roles in self.estimates.items()
            },
            "expected": self.expected(),
        }


def _history(store: Store, config: RunConfig) -> dict[str, dict[str, RoleEstimate]]:
    """Per system type and role: mean calls (and tokens, from samples that paid) per stored successful sample."""
    calls: dict[tuple[str, str], list[float]] = defaultdict(list)
    tokens: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    types = {system.type for system in config.systems.values()}
    for run in store.runs():
        if run["task"] != config.task:
            continue
        systems = {name: block.get("type") for name, block in (run["config"].get("systems") or {}).items()}
        for row in store.results(run["id"]):
            system_type = systems.get(row.system)
            if row.status != "ok" or system_type not in types:
                continue
            for role, counts in row.usage.items():
                calls[(system_type, role)].append(float(counts.get("calls", 0)))
                if counts.get("calls") and not counts.get("cache_hits"):
                    tokens[(system_type, role)].append(
                        (float(counts.get("prompt_tokens", 0)), float(counts.get("completion_tokens", 0)))
                    )
    out: dict[str, dict[str, RoleEstimate]] = defaultdict(dict)
    for (system_type, role), values in calls.items():
        paid = tokens.get((system_type, role))
        price = _role_price(config, role)
        out[system_type][role] = RoleEstimate(
            calls=fmean(values),
            prompt_tokens=fmean(p for p, _ in paid) if paid else None,
            completion_tokens=fmean(c for _, c in paid) if paid else None,
            samples=len(values),
            price=dict(price) if price else None,
        )
    return dict(out)


def _role_price(config: RunConfig, role: str) -> Any:
    """The price a role's calls are charged at: its ``model_options.price``, else the one ``price`` every model
    alias of the role gives (a sweep's aliases priced alike); None where neither says, or the aliases differ (a
    mean over models priced apart would be no model's cost)."""
    price = config.model_options.get(role, {}).get("price")
    if price:
        return price
    given = [
        block.get("price") if isinstance(block := config.model_spec(spec), dict) else None
        for spec in config.models.get(role, [])
    ]
    if given and all(p is not None and p == given[0] for p in given):
        return given[0]
    return None


def _existing_store(location: str) -> Store:
    """The store at ``location``, or an empty one in memory when its file does not exist (a dry run creates none)."""
    if "://" not in location and not Path(location).expanduser().exists():
        return Store(":memory:")
    return Store(location)


def _existing_cache(cache: str | Path | bool | None) -> Path | str | None:
    from bedside.llm.cache import default_cache_path
    from bedside.llm.cache_postgres import is_postgres_url

    if isinstance(cache, str) and is_postgres_url(cache):  # [scale-out] a cache on a server: it exists
        return cache
    path = default_cache_path() if cache is True else (None if cache is False or cache is None else Path(cache))
    return path if path is not None and path.exists() else None


async def dry_run(
    config: RunConfig,
    *,
    store: Store | None = None,
    task: Task | None = None,
    retry_errors: bool = False,
    cache: str | Path | bool | None = True,
) -> DryRun:
    """Plan ``config`` against its store and replay what is left from the cache alone; nothing is sent or written.

    A store that does not exist yet is not created (the plan is then: everything to run).
    """
    task = task or resolve_task(config.task)
    check_config(config, task)
    datasets = load_datasets(config, task)
    own_store = store is None
    store = store or _existing_store(config.store)
    try:
        plan = plan_run(config, store, task=task, datasets=datasets, retry_errors=retry_errors)
        estimates = _history(store, config)
    finally:
        if own_store:
            store.close()
    cache_path = _existing_cache(cache)
    from bedside.llm.cache_postgres import redacted_url

    result = DryRun(plan, redacted_url(str(cache_path)) if cache_path else None, estimates=estimates)
    if not plan.generate:
        return result
    if cache_path is None:
        result.need_endpoint = len(plan.generate)
        return result
    models, cell_models = build_models(plan, cache_path, RunSummary(plan.summary.run_id, {}))
    gate = asyncio.Semaphore(max(1, min(plan.config.concurrency, 32)))

    async def replay(item: Any) -> None:
        async with gate:
            system = plan.config.systems[item.cell.system]
            context = SampleContext(cell_models[item.cell.id], plan.settings, str(item.epoch), plan.config.seed)  # type: ignore[arg-type]
            with call_scope(plan.bypass.get(item.key, ()), cache_only=True) as scope:
                try:
                    await plan.task.systems[system.type](item.sample, system.options, context)
                except CacheMissError:
                    result.need_endpoint += 1
                    result.hits_before_miss += len(scope.answered)
                except Exception as exc:  # the replay of a cached failure: it would be stored as an error
                    result.replay_errors[f"{item.cell.id}/{item.sample.id}/{item.epoch}"] = (
                        f"{type(exc).__name__}: {exc}"
                    )
                else:
                    result.replayable += 1
                    result.replayed_answers += len(scope.answered)

    try:
        await asyncio.gather(*(replay(item) for item in plan.generate))
    finally:
        for model in models.values():
            await model.aclose()
    return result
