"""Samples are scored on the store writer's thread: a scorer that raises makes only its own sample an error (with
the answers ``--retry-errors`` asks again for), counts and progress come out as before, and slow scorers hold
the samples back instead of piling up unstored."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bedside.runs import DatasetConfig, Output, RunConfig, RunSummary, Sample, SampleContext, Store, execute
from bedside.runs.runner import Progress
from bedside.runs.task import System


async def _echo(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    completion = await context.generate("system", sample.inputs["prompt"])
    return Output(text=completion.text)


class ScoringTask:
    name = "scoring-toy"
    systems: Mapping[str, System] = {"echo": _echo}
    default_scorers = ("words", "picky")
    scorers = ("picky",)

    def __init__(self, samples: int, fail: tuple[str, ...] = (), delay_s: float = 0.0) -> None:
        self.samples = samples
        self.fail = fail
        self.delay_s = delay_s
        self.scoring = self.most_at_once = self.scored = 0
        self._lock = threading.Lock()

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        return [Sample(id=f"s{i:02d}", inputs={"prompt": f"request {i}"}) for i in range(self.samples)]

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        if scorer != "picky":
            raise KeyError(scorer)
        with self._lock:
            self.scoring += 1
            self.most_at_once = max(self.most_at_once, self.scoring)
        time.sleep(self.delay_s)
        with self._lock:
            self.scoring -= 1
            self.scored += 1
        if sample.id in self.fail:
            raise ValueError(f"cannot score {sample.id}")
        return float(len(output.text))


class Recorder(Progress):
    def __init__(self) -> None:
        self.done: list[int] = []
        self.stopped: tuple[int, int] | None = None

    def update(self, summary: RunSummary) -> None:
        self.done.append(sum(c.done for c in summary.cells.values()))

    def stop(self, summary: RunSummary) -> None:
        self.stopped = (sum(c.done for c in summary.cells.values()), summary.errors)


def config(tmp_path: Path, concurrency: int = 8) -> RunConfig:
    return RunConfig(
        name="scoring",
        task="scoring-toy",
        datasets={"d": DatasetConfig()},
        systems={"echo": {"type": "echo"}},  # type: ignore[dict-item]
        models={"system": ["scripted/toy"]},
        concurrency=concurrency,
        store=str(tmp_path / "store.sqlite"),
    )


def test_a_scorer_that_raises_is_its_samples_error_and_a_retry_asks_again(tmp_path: Path) -> None:
    cfg, cache = config(tmp_path), tmp_path / "cache.sqlite"
    progress = Recorder()
    summary = asyncio.run(execute(cfg, task=ScoringTask(12, fail=("s03",)), cache=cache, progress=progress))
    assert (summary.ran, summary.errors) == (11, 1)
    assert [c.done for c in summary.cells.values()] == [12]
    assert progress.stopped == (12, 1)
    assert progress.done == sorted(progress.done)
    assert progress.done[-1] == 12

    store = Store(cfg.store)
    rows = {r.sample_id: r for r in store.results(cfg.run_id)}
    store.close()
    failed = rows["s03"]
    assert (failed.status, failed.error, failed.output, failed.scores) == (
        "error",
        "ValueError: cannot score s03",
        None,
        {},
    )
    assert failed.failure is not None
    assert failed.failure["type"] == "ValueError"
    assert len(failed.failure["retry_bypass"]) == 1  # the answer it got: a retry asks for it again
    assert failed.usage["system"]["calls"] == 1
    assert all(
        r.status == "ok" and r.scores["picky"] == len((r.output or {})["text"]) for k, r in rows.items() if k != "s03"
    )

    again = asyncio.run(execute(cfg, task=ScoringTask(12, fail=("s03",)), cache=cache))
    assert (again.ran, again.errors, again.usage.snapshot()) == (0, 1, {})  # an error is finished, as an error

    retried = asyncio.run(execute(cfg, task=ScoringTask(12), cache=cache, retry_errors=True))
    assert (retried.ran, retried.errors) == (1, 0)
    assert retried.usage.snapshot()["system"].requests == 1  # asked again, not replayed from the cache


def test_slow_scorers_hold_samples_back_and_every_sample_is_stored(tmp_path: Path) -> None:
    cfg = config(tmp_path, concurrency=16)
    task = ScoringTask(40, delay_s=0.01)
    summary = asyncio.run(execute(cfg, task=task, cache=False))
    assert (task.scored, task.most_at_once) == (40, 1)  # the scoring really ran, one sample at a time
    assert (summary.ran, summary.errors) == (40, 0)
    store = Store(cfg.store)
    rows = store.results(cfg.run_id)
    store.close()
    assert len(rows) == 40
    assert all(r.scores["picky"] == len((r.output or {})["text"]) for r in rows)
