"""What the sharded-executor tests share (Ray workers, local worker processes): one config over the test task
``runs_ray_task:TASK`` with two echo systems, and a run's rows keyed by sample for comparing two executors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bedside.runs import DatasetConfig, RunConfig
from bedside.runs.store import ResultRow


def shard_config(
    tmp: Path, name: str, spec: str, *, samples: int, options: dict[str, Any], concurrency: int
) -> RunConfig:
    return RunConfig(
        name=name,
        task="runs_ray_task:TASK",
        datasets={"d": DatasetConfig(options={"samples": samples})},
        systems={"plain": {"type": "echo"}, "prefixed": {"type": "echo", "options": {"prefix": "> "}}},  # type: ignore[dict-item]
        models={"system": [spec]},
        model_options={"system": options},
        concurrency=concurrency,
        store=str(tmp / "store.sqlite"),
    )


def by_sample(rows: list[ResultRow]) -> dict[tuple[str, str, int], tuple[str, Any, Any, str]]:
    return {(r.cell, r.sample_id, r.epoch): (r.status, r.output, r.scores, r.key) for r in rows}
