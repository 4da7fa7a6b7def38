"""Samples are scored on the store writer's thread: a scorer that raises makes only its own sample an error (with
the answers ``--retry-errors`` asks again for), counts and progress come out as before, and slow scorers hold
the samples back instead of piling up unstored."""

from __future__ import annotations

import asyncio
import os
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from bedside.runs import DatasetConfig, Output, RunConfig, RunSummary, Sample, SampleContext, Store, execute
from bedside.runs.runner import Progress
from bedside.runs.task import System


async def _echo(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    completion = await context.generate("system", sample.inputs["prompt"])
    return Output(text=completion.text)


class ScoringTask:
    name = "scoring-toy"
    systems: Mapping[str, System] = {"echo": _echo}
    default_scorers: tuple[str, ...] = ("words", "picky")
    scorers: tuple[str, ...] = ("picky",)

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
    assert (again.failed, again.retried_errors) == (0, 0)

    still = asyncio.run(execute(cfg, task=ScoringTask(12, fail=("s03",)), cache=cache, retry_errors=True))
    assert (still.ran, still.failed, still.retried_errors) == (0, 1, 1)  # tried again, failed again: both said

    retried = asyncio.run(execute(cfg, task=ScoringTask(12), cache=cache, retry_errors=True))
    assert (retried.ran, retried.errors, retried.failed, retried.retried_errors) == (1, 0, 0, 1)
    assert retried.usage.snapshot()["system"].requests == 1  # asked again, not replayed from the cache
    assert still.usage.snapshot()["system"].requests == 1


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


class ThreadsSeen(ScoringTask):
    """Records the thread each scorer call runs on."""

    def __init__(self, samples: int) -> None:
        super().__init__(samples)
        self.threads: set[str] = set()

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        self.threads.add(threading.current_thread().name)
        return super().score(scorer, sample, output)


def _run_recording_threads(cfg: RunConfig) -> tuple[set[str], set[str], int]:
    """Run ``cfg``; the threads its scorers ran on, the threads its store writes ran on, and the rows stored."""
    written: set[str] = set()

    class Recording(Store):
        def write(self, rows: Any) -> None:
            written.add(threading.current_thread().name)
            super().write(rows)

    task = ThreadsSeen(30)
    store = Recording(cfg.store)
    try:
        summary = asyncio.run(execute(cfg, store=store, task=task, cache=False))
        assert (summary.ran, summary.errors) == (30, 0)
        return task.threads, written, len(store.results(cfg.run_id))
    finally:
        store.close()


def test_sqlite_rows_are_written_on_the_loop_and_scored_on_the_writer_thread(tmp_path: Path) -> None:
    """A SQLite write is CPU in this process: on the writer thread its calls traded the GIL with the loop's and
    cost more than on the loop (bench/before_after.py). Scoring stays on the thread, off the loop."""
    scored, written, stored = _run_recording_threads(config(tmp_path))
    assert scored
    assert all(name.startswith("bedside-store") for name in scored)
    assert written == {threading.main_thread().name}
    assert stored == 30


def test_postgresql_rows_are_written_on_the_writer_thread() -> None:
    """A server's write is mostly waiting on the network: on the loop it would hold up every response."""
    url = os.environ.get("BEDSIDE_TEST_POSTGRES_URL")
    if not url:
        pytest.skip(
            "set BEDSIDE_TEST_POSTGRES_URL (postgresql+psycopg://user@127.0.0.1/db) to test the PostgreSQL writer"
        )
    cfg = RunConfig(
        name=f"threads-{uuid.uuid4().hex[:8]}",
        task="scoring-toy",
        datasets={"d": DatasetConfig()},
        systems={"echo": {"type": "echo"}},  # type: ignore[dict-item]
        models={"system": ["scripted/toy"]},
        concurrency=8,
        store=url,
        seed=uuid.uuid4().int % 2**31,  # a key no earlier run in this shared database stored (it would be reused)
    )
    scored, written, stored = _run_recording_threads(cfg)
    assert scored
    assert all(name.startswith("bedside-store") for name in scored)
    assert written
    assert all(name.startswith("bedside-store") for name in written)
    assert stored == 30


class _Embedder:
    """Stands in for MiniLM: counts the model calls and the texts in them; the first ``broken`` calls raise."""

    def __init__(self, broken: int = 0) -> None:
        self.calls: list[list[str]] = []
        self.broken = broken

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        self.calls.append(list(texts))
        if len(self.calls) <= self.broken:
            raise RuntimeError("the model stumbled")
        vectors = np.array([[len(t) % 7 + 1.0, 1.0] for t in texts], dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


class ReferenceTask(ScoringTask):
    default_scorers: tuple[str, ...] = ("cosine",)
    scorers: tuple[str, ...] = ()

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        return [
            Sample(id=f"s{i:02d}", inputs={"prompt": f"request {i}"}, references=[f"reference {i % 3}"])
            for i in range(self.samples)
        ]


def _with_embedder(monkeypatch: pytest.MonkeyPatch, embedder: _Embedder) -> None:
    import bedside.metrics.semantic
    import bedside.retrieval.embeddings

    for module in (bedside.retrieval.embeddings, bedside.metrics.semantic):
        monkeypatch.setattr(module, "default_embedder", lambda: embedder)


def test_a_batch_of_samples_is_embedded_together_before_it_is_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = _Embedder()
    _with_embedder(monkeypatch, embedder)
    summary = asyncio.run(execute(config(tmp_path), task=ReferenceTask(24), cache=False))
    assert (summary.ran, summary.errors) == (24, 0)
    prepared = [call for call in embedder.calls if len(call) > 2]  # the writer's batches, each embedded at once
    assert prepared
    assert all(len(call) == len(set(call)) for call in prepared)  # each text once per batch
    assert {"reference 0", "reference 1", "reference 2"} <= {text for call in prepared for text in call}
    # then each sample's scorer asks for its two texts (which the real embedder finds kept: test_retrieval_embeddings)
    assert len(embedder.calls) == len(prepared) + 24
    store = Store(config(tmp_path).store)
    assert all(r.scores["cosine"] is not None for r in store.results(config(tmp_path).run_id))
    store.close()


def test_a_batch_that_cannot_be_embedded_together_is_scored_sample_by_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = _Embedder(broken=1)
    _with_embedder(monkeypatch, embedder)
    summary = asyncio.run(execute(config(tmp_path, concurrency=1), task=ReferenceTask(3), cache=False))
    assert (summary.ran, summary.errors) == (3, 0)  # the saving failed; the scores did not
