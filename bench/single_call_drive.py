"""One timed drive of single-call samples against a scripted server, in a process of its own.

Run by ``bench/before_after.py`` and ``bench/runner_layers.py`` with ``PYTHONPATH`` set to the source tree under
test (this one, or an older ref's in a git worktree), so it uses only the public API every version has. After a
warm-up drive of a tenth of the samples (imports, first connections: not what per-sample CPU is about), it times
one drive and prints ``{"wall": seconds, "cpu": seconds}`` as its last line.

Layers: ``bare`` (aiohttp alone: the floor), ``floor`` (aiohttp plus the least any run that keeps its answers
must add, written as tightly as Python allows, with no bedside code on the path: see :func:`floor`),
``model`` / ``model+cache`` (``Model.generate`` without / with the SQLite response cache), ``runner`` /
``runner+cache`` (a whole run through ``execute``: plan, sample loop, the ``words`` scorer and a fresh SQLite
store, without / with the cache).

Usage: ``python bench/single_call_drive.py LAYER BASE_URL SAMPLES CONCURRENCY``
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

LAYERS = ("bare", "floor", "model", "model+cache", "runner", "runner+cache")


async def bare(base_url: str, n: int, concurrency: int) -> None:
    import aiohttp

    limit = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(i: int) -> None:
            body = {"model": "bench", "messages": [{"role": "user", "content": f"request {i}"}]}
            async with limit, session.post(f"{base_url}/chat/completions", json=body) as response:
                response.raise_for_status()
                await response.read()

        await asyncio.gather(*(one(i) for i in range(n)))


async def floor(base_url: str, n: int, concurrency: int, tmp: Path) -> None:
    """The bare client plus what a run that keeps its answers cannot do without, and nothing else: hash the request
    for a cache key, look it up in a SQLite cache (a miss), send it, parse the JSON answer, and keep the answer in
    the cache and one row per sample (and its score) in a store with bedside's schema and indexes, both committed
    every 50 ms in WAL mode. Raw ``sqlite3``, no retries, limiter, accounting, scorer thread or pydantic; a row
    smaller than bedside's (no prompts, usage by role or call timeline). What this costs over ``bare`` is a floor
    under any runner's CPU per sample, whatever its code."""
    import hashlib
    import sqlite3

    import aiohttp

    from bedside.runs import Store

    Store(str(tmp / "store.sqlite")).close()  # bedside's tables and indexes, nothing else of it
    store = sqlite3.connect(tmp / "store.sqlite", isolation_level=None)
    cache = sqlite3.connect(tmp / "cache.sqlite", isolation_level=None)
    for db in (store, cache):
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
    cache.execute("CREATE TABLE completions (key TEXT PRIMARY KEY, request TEXT, response TEXT, created REAL)")
    columns = [row[1] for row in store.execute("PRAGMA table_info(results)")]
    insert = f"INSERT OR REPLACE INTO results ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    finished_at = time.strftime("%Y-%m-%d %H:%M:%S.000000")
    rows: list[tuple[Any, ...]] = []
    scores: list[tuple[Any, ...]] = []
    answers: list[tuple[Any, ...]] = []

    def commit() -> None:
        store.execute("BEGIN IMMEDIATE")
        store.executemany(insert, rows)
        store.executemany("INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?)", scores)
        store.execute("COMMIT")
        cache.execute("BEGIN IMMEDIATE")
        cache.executemany("INSERT OR REPLACE INTO completions VALUES (?, ?, ?, ?)", answers)
        cache.execute("COMMIT")
        rows.clear()
        scores.clear()
        answers.clear()

    async def every_50_ms() -> None:
        while True:
            await asyncio.sleep(0.05)
            commit()

    limit = asyncio.Semaphore(concurrency)
    headers = {"Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def one(i: int) -> None:
            request = json.dumps({"model": "bench", "messages": [{"role": "user", "content": f"request {i}"}]})
            body = request.encode()
            key = hashlib.sha256(body).hexdigest()
            if cache.execute("SELECT response FROM completions WHERE key = ?", (key,)).fetchone() is not None:
                return
            async with limit, session.post(f"{base_url}/chat/completions", data=body) as response:
                response.raise_for_status()
                raw = await response.read()
            answer = json.loads(raw)
            text = answer["choices"][0]["message"]["content"]
            answers.append((key, request, raw.decode(), time.time()))
            words = float(len(text.split()))
            output = json.dumps({"text": text})
            usage = json.dumps(answer["usage"])
            scored = json.dumps({"words": words})
            sample = json.dumps({"id": f"s{i}", "inputs": {"prompt": f"request {i}"}})
            cell = ("run", "c", f"s{i}", 0)
            stored = (output, scored, usage, "{}", sample, finished_at, "null", "[]")
            rows.append((*cell, "n", "echo", "m", key, "ok", None, *stored))
            scores.append((*cell, "words", words))

        ticking = asyncio.ensure_future(every_50_ms())
        await asyncio.gather(*(one(i) for i in range(n)))
        ticking.cancel()
        commit()
    store.close()
    cache.close()


async def model(base_url: str, n: int, concurrency: int, cache: Path | None) -> None:
    from bedside.llm import get_model

    async with get_model(f"openai-compatible/bench@{base_url}", max_concurrency=concurrency, cache=cache) as m:
        await asyncio.gather(*(m.generate(f"request {i}") for i in range(n)))


def single_call_config(base_url: str, concurrency: int, store: Path) -> Any:
    """The benches' run config: the ``echo`` system of the single-call task on one endpoint, fresh store."""
    from bedside.runs import DatasetConfig, RunConfig

    return RunConfig(
        name="bench",
        task="bench-single-call",
        datasets={"n": DatasetConfig()},
        systems={"echo": {"type": "echo"}},  # type: ignore[dict-item]
        models={"system": [f"openai-compatible/bench@{base_url}"]},
        model_options={"system": {"max_concurrency": concurrency}},
        concurrency=concurrency,
        store=str(store),
    )


def runner(base_url: str, n: int, concurrency: int, tmp: Path, cache: Path | None) -> None:
    from bedside.runs import Output, Sample, execute

    async def answer(sample: Any, options: Any, context: Any) -> Any:
        completion = await context.generate("system", sample.inputs["prompt"])
        return Output(text=completion.text)

    class Task:
        name = "bench-single-call"
        systems: ClassVar[dict[str, Any]] = {"echo": answer}
        default_scorers = ("words",)
        scorers = ()

        def load(self, name: str, config: Any) -> list[Any]:
            return [Sample(id=f"s{i:05d}", inputs={"prompt": f"request {i}"}) for i in range(n)]

        def score(self, scorer: str, sample: Any, output: Any) -> float | None:
            raise KeyError(scorer)

    config = single_call_config(base_url, concurrency, tmp / "store.sqlite")
    summary = asyncio.run(execute(config, task=Task(), cache=cache))
    if summary.ran != n or summary.errors:
        raise SystemExit(f"expected {n} samples, ran {summary.ran}, {summary.errors} errors")


def drive(layer: str, base_url: str, n: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        cache = tmp / "cache.sqlite" if layer.endswith("+cache") else None
        if layer == "bare":
            asyncio.run(bare(base_url, n, concurrency))
        elif layer == "floor":
            asyncio.run(floor(base_url, n, concurrency, tmp))
        elif layer.startswith("model"):
            asyncio.run(model(base_url, n, concurrency, cache))
        else:
            runner(base_url, n, concurrency, tmp, cache)


def drive_in_process(layer: str, base_url: str, samples: int, concurrency: int, src: Path) -> dict[str, float]:
    """Run this script as a child process with ``src`` (a tree's ``src`` folder) on its path; its timings."""
    import os
    import subprocess

    done = subprocess.run(
        [sys.executable, __file__, layer, base_url, str(samples), str(concurrency)],
        env={**os.environ, "PYTHONPATH": str(src)},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{layer} drive with {src} failed:\n{done.stderr[-2000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return {"wall": float(found["wall"]), "cpu": float(found["cpu"])}


def main() -> None:
    layer, base_url, samples, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if layer not in LAYERS:
        raise SystemExit(f"unknown layer {layer!r}; choose from {', '.join(LAYERS)}")
    drive(layer, base_url, max(samples // 10, 1), concurrency)
    cpu, wall = time.process_time(), time.perf_counter()
    drive(layer, base_url, samples, concurrency)
    print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}))


if __name__ == "__main__":
    main()
