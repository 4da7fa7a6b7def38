"""Runs end to end against the scripted server: grid, store, resume with zero calls, kill -9, fault drill."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.errors import StorageError
from bedside.llm.scripted_server import FaultSpec
from bedside.runs import ConfigError, Store, execute, load_config
from bedside.runs.report import build_report, markdown
from bedside.runs.runner import Progress, RunSummary
from bedside.testing import ScriptedServer

runner = CliRunner()


def write_config(tmp_path: Path, server: ScriptedServer, **changes: Any) -> Path:
    config: dict[str, Any] = {
        "name": "grid",
        "task": "drafting",
        "datasets": {"demo": {"limit": 6}},
        "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},  # runner tests: no EditJudge
        "models": {"system": [server.model_name("model-a"), server.model_name("model-b")]},
        "settings": {"system": {"max_tokens": 64}},
        "scorers": ["bleu", "rougeL", "words"],
        "concurrency": 4,
        "store": str(tmp_path / "store.sqlite"),
    }
    config.update(changes)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def results_of(store_path: Path, run_id: str) -> dict[tuple[str, str, int], tuple[str, str | None, dict[str, Any]]]:
    store = Store(str(store_path))
    try:
        rows = store.results(run_id)
    finally:
        store.close()
    return {(r.cell, r.sample_id, r.epoch): (r.status, (r.output or {}).get("text"), r.scores) for r in rows}


def test_config_errors_name_the_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: x\ntask: drafting\ndatasets: {d: {limit: 0}}\nsystems: {s: {type: zero_shot}}\n"
        "models: {system: a/b, critic: c/d}\nconcurency: 3\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert str(path) in message
    assert "datasets.d.limit" in message
    assert "models" in message
    assert "concurency" in message
    with pytest.raises(ConfigError, match="expected KEY=VALUE"):
        load_config(path, ["oops"])


@pytest.mark.parametrize("repeats", [10**7, 10**12])
def test_repeats_are_bounded_unless_the_user_raises_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repeats: int
) -> None:
    """10^12 repeats passed ``config check`` and spun ``bedside run`` at full CPU; now both refuse in one line."""
    monkeypatch.delenv("BEDSIDE_MAX_REPEATS", raising=False)
    with ScriptedServer() as server:
        path = write_config(tmp_path, server, repeats=repeats)
    with pytest.raises(
        ConfigError, match=rf"{re.escape(str(path))}: repeats: .*at most 1,000 repeats.*BEDSIDE_MAX_REPEATS="
    ):
        load_config(path)
    for command in (["config", "check"], ["run"], ["run", "--dry-run"]):
        result = CliRunner().invoke(app, [*command, str(path)])
        assert result.exit_code == 1
        assert "at most 1,000 repeats" in result.output
        assert "Traceback" not in result.output
    assert load_config(path, ["repeats=1000"]).repeats == 1000
    monkeypatch.setenv("BEDSIDE_MAX_REPEATS", str(repeats))  # the user, not the config, raises the bound
    assert load_config(path).repeats == repeats
    monkeypatch.setenv("BEDSIDE_MAX_REPEATS", "many")
    with pytest.raises(ConfigError, match="BEDSIDE_MAX_REPEATS='many': expected a whole number"):
        load_config(path)


def test_choices_per_request_are_bounded(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        path = write_config(tmp_path, server, settings={"system": {"n": 10**12}})
        with pytest.raises(ConfigError, match=r"settings: system\.n: must be at most 128"):
            load_config(path)
        # A request that asks the scripted endpoint for more is a 400, not 10^12 answers built.
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "n": 10**12}).encode()
        request = urllib.request.Request(server.base_url + "/chat/completions", data=body, method="POST")
        request.add_header("Content-Type", "application/json")
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request)
        assert caught.value.code == 400


def test_bedside_cache_is_a_default_and_never_overrides_the_configs_cache(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        path = write_config(tmp_path, server, cache=str(tmp_path / "mine.sqlite"))
    config = load_config(path, environ={"BEDSIDE_CACHE": str(tmp_path / "other.sqlite")})
    assert config.cache == str(tmp_path / "mine.sqlite")


def test_overrides_from_environment_and_command_line(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        path = write_config(tmp_path, server)
    environ = {"BEDSIDE_CONCURRENCY": "9", "BEDSIDE_SYSTEMS__ZERO_SHOT__OPTIONS__K": "3", "BEDSIDE_CACHE_DIR": "x"}
    config = load_config(path, ["systems.zero_shot.options.k=5", "repeats=2"], environ=environ)
    assert config.concurrency == 9
    assert config.systems["zero_shot"].options == {"evaluate": False, "k": 5}  # --set wins over the environment
    assert config.repeats == 2
    # Execution-only settings do not change the run's identity; anything that can change a result does.
    assert load_config(path, ["concurrency=1"]).run_id == load_config(path).run_id
    assert load_config(path, ["seed=1"]).run_id != load_config(path).run_id


def test_a_two_cell_grid_runs_reports_and_reruns_without_model_calls(tmp_path: Path) -> None:
    with ScriptedServer({"rules": [], "default": "Thanks. Keep taking your medicine and call us if worse."}) as server:
        config = load_config(write_config(tmp_path, server))
        first = asyncio.run(execute(config, cache=False))
        assert server.stats()["requests"] == 12
        assert first.ran == 12
        assert first.errors == 0
        assert set(first.cells) == {f"demo/zero_shot/openai-compatible/{m}" for m in ("model-a", "model-b")}

        again = asyncio.run(execute(config, cache=False))
        assert server.stats()["requests"] == 12  # nothing re-run, no model call
        assert again.ran == 0
        assert all(c.skipped == 6 for c in again.cells.values())

        # A new scorer re-scores stored outputs; still no model call.
        rescored = asyncio.run(
            execute(load_config(write_config(tmp_path, server, scorers=["bleu", "chrf"])), cache=False)
        )
        assert server.stats()["requests"] == 12
        assert rescored.reused == 12

        # A change that affects the samples re-runs them.
        changed = load_config(write_config(tmp_path, server), ["settings.system.max_tokens=32"])
        asyncio.run(execute(changed, cache=False))
        assert server.stats()["requests"] == 24

    store = Store(config.store)
    report = build_report(store, config.run_id)
    text = markdown(report)
    store.close()
    assert [c.ok for c in report.cells] == [6, 6]
    assert "bleu" in report.metrics
    assert "words" in report.metrics
    words = next(m for m in report.cells[0].metrics if m.metric == "words")
    assert (words.n, words.mean, words.low, words.high) == (6, 10.0, 10.0, 10.0)
    assert "## demo/zero_shot/" in text
    assert "by clinician" in text
    assert "| system | 12 | 0 |" in text  # usage by role: 12 calls, no cache hits
    assert "| demo | zero_shot | words | 2 | 10.000 ± 0.000 |" in text  # the system over its two models


def test_cli_run_report_ls_show_export_compare(tmp_path: Path) -> None:
    with ScriptedServer() as server:  # echoes the prompt: each sample gets its own answer
        path = write_config(tmp_path, server, models={"system": server.model_name("a")})
        store = str(tmp_path / "store.sqlite")
        first = runner.invoke(app, ["run", str(path), "--no-cache"])
        assert first.exit_code == 0, first.output
        assert "6 samples run" in first.output
        second = runner.invoke(
            app, ["run", str(path), "--no-cache", "--set", f"models.system={server.model_name('b')}"]
        )
        assert second.exit_code == 0, second.output
    run_a = load_config(path).run_id
    run_b = load_config(path, [f"models.system={server.model_name('b')}"]).run_id
    listed = runner.invoke(app, ["ls", "--store", store], env={"COLUMNS": "200"})
    assert run_a in listed.output
    assert run_b in listed.output
    report = runner.invoke(app, ["report", run_a, "--store", store, "-o", str(tmp_path / "reports")])
    assert report.exit_code == 0, report.output
    page = (tmp_path / "reports" / f"{run_a}.html").read_text(encoding="utf-8")
    assert "<table>" in page
    assert "data:image/png;base64," in page
    exported = runner.invoke(app, ["export", run_a, "--store", store])
    rows = [json.loads(line) for line in exported.output.splitlines()]
    assert len(rows) == 6
    assert all(r["status"] == "ok" for r in rows)
    sample_id = rows[0]["sample_id"]
    shown = runner.invoke(app, ["show", run_a, sample_id, "--store", store])
    assert shown.exit_code == 0
    assert "[user]" in shown.output  # the captured prompt, by role
    assert rows[0]["sample"]["inputs"]["message"][:30] in shown.output
    parquet = tmp_path / "a.parquet"
    assert (
        runner.invoke(app, ["export", run_a, "--store", store, "--format", "parquet", "-o", str(parquet)]).exit_code
        == 0
    )
    import pyarrow.parquet as pq

    assert pq.read_table(parquet).num_rows == 6
    compared = runner.invoke(app, ["compare", run_a, run_b, "--store", store, "--json"])
    assert compared.exit_code == 0, compared.output
    by_metric = {r["metric"]: r for r in json.loads(compared.output)}
    assert by_metric["words"]["n"] == 6
    assert by_metric["words"]["difference"] == 0.0  # the echo is the same whichever model name
    missing = runner.invoke(app, ["show", "nope", "x", "--store", store])
    assert missing.exit_code == 1
    assert "no run 'nope'" in missing.output


def _stored_count(store_path: Path) -> int:
    """Rows stored so far, read without opening a Store (which would create tables the run is creating)."""
    try:
        with sqlite3.connect(f"file:{store_path}?mode=ro", uri=True, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_sigkill_at_random_points_then_resume_gives_the_uninterrupted_results(tmp_path: Path) -> None:
    rng = random.Random(1384)
    # Each run is killed at a random point: once a random number of samples has been stored, a random few
    # milliseconds later. The server lets through a random number of requests, at least enough to store that
    # many and always fewer than the run needs, and holds the rest: the run cannot finish before its kill,
    # however slow the machine, and the kill may still land while answers are being stored.
    with ScriptedServer(latency_ms=20) as server:
        reference_dir = tmp_path / "reference"
        reference_dir.mkdir()
        reference = load_config(write_config(reference_dir, server, datasets={"demo": {"limit": 14}}, concurrency=2))
        asyncio.run(execute(reference, cache=False))
        expected = results_of(Path(reference.store), reference.run_id)
        assert len(expected) == 28
        assert server.stats()["requests"] == 28  # one request per stored sample: the gate below counts on it

        partial_counts = []
        for attempt in range(3):
            folder = tmp_path / f"killed-{attempt}"
            folder.mkdir()
            path = write_config(folder, server, datasets={"demo": {"limit": 14}}, concurrency=2)
            config = load_config(path)
            kills = 0
            for _ in range(3):
                stored = _stored_count(Path(config.store))
                if stored >= 27:
                    break
                target = rng.randint(stored + 1, 27)
                server.hold(after=min(target + rng.randint(0, 2), 27) - stored)
                process = subprocess.Popen(
                    [sys.executable, "-m", "bedside.cli", "run", str(path), "--no-cache"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env={**os.environ, "COLUMNS": "120"},
                )
                try:
                    deadline = time.monotonic() + 300  # a hang guard only
                    while _stored_count(Path(config.store)) < target:
                        assert process.poll() is None, "the run ended before its kill"
                        assert time.monotonic() < deadline, f"the run stored fewer than {target} in five minutes"
                        time.sleep(0.02)
                    time.sleep(rng.uniform(0.0, 0.1))
                    process.send_signal(signal.SIGKILL)
                    process.wait()
                finally:
                    server.release()
                kills += 1
                partial_counts.append(_stored_count(Path(config.store)))
            finished = subprocess.run(
                [sys.executable, "-m", "bedside.cli", "run", str(path), "--no-cache"],
                capture_output=True,
                timeout=300,
                check=False,
            )
            assert finished.returncode == 0, finished.stderr
            assert kills >= 1
            got = results_of(Path(config.store), config.run_id)
            assert got == expected
        # Kills landed mid-run, leaving some samples stored and some not.
        assert any(0 < n < 28 for n in partial_counts), partial_counts


def test_a_running_run_whose_process_is_gone_is_listed_as_stale(tmp_path: Path) -> None:
    """A SIGTERM'd or killed run never writes its final status; its lock tells ``ls`` it is gone."""
    from sqlalchemy import insert, update

    from bedside.runs.store import LOCK_STALE_S, locks_table

    store = Store(str(tmp_path / "store.sqlite"))
    # a pid no process can have (one above the kernel's largest), so it cannot be reused while the test runs
    dead_pid = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1
    here = socket.gethostname()
    for run_id, lock in [
        ("killed", {"host": here, "pid": dead_pid, "heartbeat": time.time()}),
        ("no-lock", None),
        ("alive", {"host": here, "pid": os.getpid(), "heartbeat": time.time()}),
        ("elsewhere-silent", {"host": "other-host", "pid": 1, "heartbeat": time.time() - LOCK_STALE_S - 1}),
        ("elsewhere-beating", {"host": "other-host", "pid": 1, "heartbeat": time.time()}),
        ("done", None),
    ]:
        store.begin_run(run_id, run_id, "drafting", {})
        if lock is not None:
            with store.engine.begin() as db:
                db.execute(insert(locks_table).values(run_id=run_id, owner=run_id, **lock))
    store.finish_run("done", "finished")
    statuses = {run["id"]: run["status"] for run in store.runs()}
    assert statuses == {
        "killed": "stale",
        "no-lock": "stale",
        "alive": "running",
        "elsewhere-silent": "stale",
        "elsewhere-beating": "running",
        "done": "finished",
    }
    assert store.run("killed")["status"] == "stale"
    listed = runner.invoke(app, ["ls", "--store", str(tmp_path / "store.sqlite"), "--json"])
    assert {r["id"]: r["status"] for r in json.loads(listed.output)} == statuses
    # The stored row is untouched: a resumed run takes the lock over and writes its real status.
    with store.engine.begin() as db:
        db.execute(update(locks_table).where(locks_table.c.run_id == "killed").values(pid=os.getpid()))
    assert store.run("killed")["status"] == "running"
    store.close()


def test_fault_drill_every_sample_scored_or_an_error_with_its_cause(tmp_path: Path) -> None:
    faults = (
        "429=0.1,500=0.1,hang=0.05,malformed=0.05,invalid-json=0.05,null=0.1,empty=0.05,length=0.1,retry-after=0.05"
    )
    with ScriptedServer(faults=faults, seed=7, hang_s=30) as server:
        path = write_config(
            tmp_path,
            server,
            datasets={"demo": {"limit": 14}},
            # long enough that only a hung request times out, however busy the machine
            model_options={"system": {"timeout_s": 5.0, "max_retries": 2}},
        )
        config = load_config(path)
        cache = tmp_path / "cache.sqlite"  # cached, so a retry that replayed failures would fix nothing
        summary = asyncio.run(execute(config, cache=cache))
        store = Store(config.store)
        stored = store.results(config.run_id)
        store.close()
        assert len(stored) == 28  # nothing lost
        errors = [r for r in stored if r.status == "error"]
        assert summary.errors == len(errors) > 0
        assert all(r.scores == {} and r.output is None for r in errors)  # no error is ever scored
        assert all(r.error and r.failure and r.failure["type"] in r.error for r in errors)  # each with its cause
        empty = [r for r in errors if "EmptyAnswerError" in (r.error or "")]
        assert empty, "the drill should have drawn null or empty answers"
        assert all("no text" in (r.error or "") for r in empty)
        ok = [r for r in stored if r.status == "ok"]
        assert all(r.scores and r.output and r.output["text"].strip() for r in ok)
        truncated = [r for r in ok if r.usage["system"]["truncated"]]
        assert truncated  # cut-off answers are kept, and counted
        assert summary.truncated == len(truncated)
        cell = truncated[0].cell
        counts = [sum(r.cell == cell for r in rows) for rows in (ok, errors, truncated)]
        report = markdown(build_report(Store(config.store), config.run_id))
        assert f"| {cell} | {counts[0]} | {counts[1]} | {counts[2]} |" in report

        # The server now answers: retrying the errors re-runs only those and recovers every one.
        server.faults = FaultSpec()
        before = server.stats()["requests"]
        retried = asyncio.run(execute(config, cache=cache, retry_errors=True))
        assert (retried.ran, retried.errors) == (len(errors), 0)
        # one request per error, or a retry more where a loaded machine stalled an answer past timeout_s
        assert len(errors) <= server.stats()["requests"] - before <= 3 * len(errors)
        after = results_of(Path(config.store), config.run_id)
        assert all(v[0] == "ok" for v in after.values())


def test_retry_errors_asks_again_for_cached_answers_that_never_validated(tmp_path: Path) -> None:
    """A structured answer that never validated is cached (replays stay deterministic); a retry must not
    replay it, or it would fail the same way without sending anything."""
    with ScriptedServer({"rules": [], "default": '{"score": 4}'}, faults="invalid-json=1.0") as server:
        path = write_config(
            tmp_path,
            server,
            task="runs_multiturn_task:TASK",
            systems={"rate": {"type": "rate"}},
            models={"system": [server.model_name()]},
            scorers=["rating"],
            cache=str(tmp_path / "cache.sqlite"),
        )
        runner = CliRunner()
        first = runner.invoke(app, ["run", str(path)])
        assert first.exit_code == 1, first.output  # every sample failed: not a success
        assert "\n4 error(s); every table: `bedside report " in first.output
        sent = server.stats()["requests"]
        assert sent == 4 * 3  # one ask and two re-asks per sample

        again = runner.invoke(app, ["run", str(path), "--retry-errors"])  # the server still breaks JSON
        assert again.exit_code == 1
        assert server.stats()["requests"] == sent * 2  # every rejected answer asked again, none replayed

        server.faults = FaultSpec()
        fixed = runner.invoke(app, ["run", str(path), "--retry-errors"])
        assert fixed.exit_code == 0, fixed.output
        assert "\n0 error(s); every table: `bedside report " in fixed.output
        config = load_config(path)
        assert {v[2]["rating"] for v in results_of(Path(config.store), config.run_id).values()} == {4.0}
        allowed = runner.invoke(app, ["run", str(path), "--allow-errors"])
        assert allowed.exit_code == 0


def test_multi_turn_simulations_store_transcript_trace_and_usage_per_role(tmp_path: Path) -> None:
    # The scripted server echoes each prompt, so every turn of every conversation is a distinct request.
    with ScriptedServer() as server:
        path = write_config(
            tmp_path,
            server,
            task="runs_multiturn_task:TASK",
            datasets={"toy": {}},
            systems={"talk": {"type": "talk", "options": {"stages": 3}}},
            models={"system": server.model_name("clinician"), "patient": server.model_name("patient")},
            scorers=None,
        )
        config = load_config(path)
        summary = asyncio.run(execute(config, cache=False))
        assert summary.ran == 4
        assert server.stats()["requests"] == 24  # 4 conversations x 3 stages x (clinician + patient)
    store = Store(config.store)
    rows = store.results(config.run_id)
    report = build_report(store, config.run_id)
    store.close()
    first = rows[0]
    assert [t["role"] for t in first.output["transcript"]] == ["patient", "clinician"] * 3  # type: ignore[index]
    assert [t["stage"] for t in first.output["transcript"]][::2] == ["gather", "explain", "close"]  # type: ignore[index]
    assert first.output["trace"] == [{"stage": s, "turns": 2} for s in ("gather", "explain", "close")]  # type: ignore[index]
    assert first.usage["system"]["calls"] == 3
    assert first.usage["patient"]["calls"] == 3
    assert first.scores["turns"] == 6.0
    assert first.scores["words"] == len(first.output["text"].split())  # type: ignore[index]
    assert set(report.cells[0].strata["persona"]) == {"anxious", "calm"}
    assert report.usage["patient"]["calls"] == 12


def test_tasks_resolve_by_entry_point_or_import_path() -> None:
    from bedside.runs import resolve_task

    assert resolve_task("drafting").name == "drafting"
    assert resolve_task("runs_multiturn_task:TASK").name == "toy-conversation"  # allowed in conftest
    with pytest.raises(ValueError, match="not a registered task"):
        resolve_task("runs_multiturn_task:OTHER")  # an import path the user did not allow
    with pytest.raises(ValueError, match="unknown task 'nope'; registered: citeqa, discharge, drafting"):
        resolve_task("nope")


def test_a_dataset_with_no_samples_is_an_error_not_an_empty_successful_run(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        path = write_config(
            tmp_path,
            server,
            task="runs_ray_task:TASK",
            datasets={"d": {"options": {"samples": 0}}},
            systems={"echo": {"type": "echo"}},
            scorers=["words"],
        )
        for command in (["run"], ["run", "--dry-run"]):
            result = CliRunner().invoke(app, [*command, str(path)])
            assert result.exit_code == 1
            assert "dataset 'd': no samples to run" in result.output
        assert server.stats()["requests"] == 0


def test_a_failing_store_write_stops_the_run_and_keeps_what_was_written(tmp_path: Path) -> None:
    requested_when_full: list[int] = []

    class FullDisk(Store):
        writes = 0

        def write(self, rows: Any) -> None:
            FullDisk.writes += 1
            if FullDisk.writes > 1:
                requested_when_full.append(server.stats()["requests"])
                raise OSError("database or disk is full")
            super().write(rows)

    with ScriptedServer({"rules": [], "default": "Call us if it gets worse."}, latency_ms=80) as server:
        config = load_config(write_config(tmp_path, server, models={"system": [server.model_name("a")]}, concurrency=1))
        store = FullDisk(config.store)
        with pytest.raises(StorageError, match=r"disk is full\); \d+ finished sample\(s\) could not be stored"):
            asyncio.run(execute(config, store=store, cache=False))
        store.close()
        requests = server.stats()["requests"]
    kept = results_of(tmp_path / "store.sqlite", config.run_id)
    # The first batch is kept, the second's write fails, and the run stops at the next finished sample instead
    # of generating the rest unsaved: counted against the requests made when the write failed, not against the
    # pace of the batches (which a loaded machine changes). At concurrency 1 that is the sample in flight, plus
    # one more that may finish between the failure and the writer thread's flag.
    assert kept
    first_failure = requested_when_full[0]
    assert len(kept) < requests <= first_failure + 2
    reopened = Store(config.store)
    assert next(r for r in reopened.runs() if r["id"] == config.run_id)["status"] == "failed"
    reopened.close()


POSTGRES_URL = os.environ.get("BEDSIDE_TEST_POSTGRES_URL")


@pytest.mark.skipif(
    not POSTGRES_URL,
    reason="set BEDSIDE_TEST_POSTGRES_URL (postgresql+psycopg://user@127.0.0.1/db; password in PGPASSWORD) "
    "to test the store on PostgreSQL",
)
def test_the_store_works_on_postgresql(tmp_path: Path) -> None:
    assert POSTGRES_URL is not None
    with ScriptedServer({"rules": [], "default": "Keep taking it and call us if worse."}) as server:
        # Model names of their own: the database outlives the test, and a sample stored by an earlier session
        # under the same key (keys name the model, not its URL) would be reused instead of run.
        unique = uuid.uuid4().hex[:8]
        models = {"system": [server.model_name(f"model-a-{unique}"), server.model_name(f"model-b-{unique}")]}
        config = load_config(write_config(tmp_path, server, name=f"pg-{unique}", store=POSTGRES_URL, models=models))
        first = asyncio.run(execute(config, cache=False))
        again = asyncio.run(execute(config, cache=False))
        assert (first.ran, again.ran, server.stats()["requests"]) == (12, 0, 12)
    store = Store(POSTGRES_URL)
    try:
        report = build_report(store, config.run_id)
        assert [c.ok for c in report.cells] == [6, 6]
        assert any(r["id"] == config.run_id for r in store.runs())
        assert len(store.results(config.run_id)) == 12
    finally:
        store.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_step_failures_are_counted_by_json_path_in_the_store(backend: str, tmp_path: Path) -> None:
    """What `bedside run` says at the end about failed later steps: counted in the database, per step, over the
    run's successful samples only (an errored sample's output is not a step's failure)."""
    from bedside.runs.store import ResultRow

    if backend == "postgresql" and not POSTGRES_URL:
        pytest.skip("set BEDSIDE_TEST_POSTGRES_URL to count step failures on PostgreSQL")
    url = POSTGRES_URL if backend == "postgresql" else str(tmp_path / "store.sqlite")
    assert url is not None
    run_id = f"steps-{uuid.uuid4().hex[:8]}"

    def row(sample: str, status: str, errors: dict[str, str] | None) -> ResultRow:
        output = None if errors is None else {"text": "", "extra": {"errors": errors} if errors else {}}
        return ResultRow(
            run_id, "c", sample, 0, "d", "s", "m", f"k-{run_id}-{sample}", status,
            None if status == "ok" else "ValueError: broken", output, {}, {}, {}, {},
        )  # fmt: skip

    store = Store(url)
    try:
        store.write(
            [
                row("a", "ok", {"judge_flow": "JudgeError: x", "checklist": "StructuredOutputError: y"}),
                row("b", "ok", {"judge_flow": "JudgeError: z"}),
                row("c", "ok", {}),
                row("d", "error", None),
                row("e", "ok", None),
            ]
        )
        assert store.step_failures(run_id) == {"judge_flow": 2, "checklist": 1}
        assert list(store.step_failures(run_id)) == ["judge_flow", "checklist"]  # commonest first
        assert store.step_failures("no-such-run") == {}
    finally:
        store.close()


def test_progress_off_a_terminal_prints_plain_lines() -> None:
    """A batch job's log gets a line now and then; a live display would only draw at the end."""
    from io import StringIO

    from rich.console import Console

    from bedside.runs.progress import TerminalProgress
    from bedside.runs.runner import CellProgress, RunSummary

    stream = StringIO()
    progress = TerminalProgress(Console(file=stream, force_terminal=False, width=200), log_every_s=0.0)
    summary = RunSummary("r", {"a": CellProgress(total=2), "b": CellProgress(total=1)})
    progress.start(summary)
    summary.cells["a"].done = 2
    summary.cells["b"].errors = 1
    progress.update(summary)
    summary.cells["b"].done = 1
    progress.stop(summary)
    lines = stream.getvalue().splitlines()
    assert [line.rsplit(",", 1)[0] for line in lines] == [
        "0/3 samples, 0 errors, 0/2 cells done, 0 model calls answered (0 cached), 0 requests sent",
        "2/3 samples, 1 errors, 1/2 cells done, 0 model calls answered (0 cached), 0 requests sent",
        "3/3 samples, 1 errors, 2/2 cells done, 0 model calls answered (0 cached), 0 requests sent",
    ]


class Recorder(Progress):
    """A progress display that notes what it was told: (samples done, model calls) at each update."""

    def __init__(self) -> None:
        self.updates: list[tuple[int, int]] = []
        self.interrupted = False

    def update(self, summary: RunSummary) -> None:
        calls = sum(u.calls for u in summary.usage.snapshot().values())
        self.updates.append((sum(c.done for c in summary.cells.values()), calls))

    def interrupting(self, summary: RunSummary) -> None:
        self.interrupted = True


def test_progress_hears_from_a_run_while_a_sample_is_still_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A simulated conversation can take an hour on a CPU: the display must not wait for the sample to end."""
    from bedside.runs import runner as runner_module

    class ReleasingRecorder(Recorder):
        """Lets the server answer the first request only after five updates that found no sample done."""

        def update(self, summary: RunSummary) -> None:
            super().update(summary)
            if sum(done == 0 for done, _ in self.updates) == 5:
                server.release()

    monkeypatch.setattr(runner_module, "PROGRESS_TICK_S", 0.02)
    with ScriptedServer({"rules": [], "default": "Rest and drink water."}) as server:
        server.hold(at_most_s=60)  # without ticks, the first answer would come after a minute, and too few ticks
        models, datasets = {"system": [server.model_name("a")]}, {"demo": {"limit": 2}}
        config = load_config(write_config(tmp_path, server, models=models, datasets=datasets, concurrency=1))
        progress = ReleasingRecorder()
        asyncio.run(execute(config, progress=progress, cache=False))
    before_first = [u for u in progress.updates if u[0] == 0]
    assert len(before_first) >= 5  # ticks while the first answer was on its way
    assert progress.updates[-1] == (2, 2)
    assert not progress.interrupted


def test_an_interrupted_run_says_so_before_waiting_for_the_calls_in_flight(tmp_path: Path) -> None:
    class HeldRecorder(Recorder):
        """Notes how many calls the server still held when the run said it was interrupted."""

        held_when_told: int | None = None

        def interrupting(self, summary: RunSummary) -> None:
            super().interrupting(summary)
            self.held_when_told = server.stats()["held"]
            server.release()

    with ScriptedServer({"rules": [], "default": "Rest and drink water."}) as server:
        server.hold()  # every call stays in flight until the run has said it is interrupted
        config = load_config(write_config(tmp_path, server, models={"system": [server.model_name("a")]}))
        progress = HeldRecorder()

        async def run_then_interrupt() -> None:
            running = asyncio.ensure_future(execute(config, progress=progress, cache=False))
            await asyncio.to_thread(server.wait_until, lambda stats: stats["held"] > 0)  # the run is under way
            running.cancel()
            with pytest.raises(asyncio.CancelledError):
                await running

        asyncio.run(run_then_interrupt())
    assert progress.interrupted
    assert progress.held_when_told  # it said so while its calls were still in flight
    store = Store(config.store)
    assert next(r for r in store.runs() if r["id"] == config.run_id)["status"] == "interrupted"
    store.close()


@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path: Path, sigint: str) -> None:
    """A scheduler's SIGTERM: the finished samples are kept, the run is marked interrupted (not stale) and the
    process exits 143; also when started with SIGINT ignored (nohup, a shell's ``&``)."""
    with ScriptedServer() as server:
        path = write_config(tmp_path, server, concurrency=1)
        config = load_config(path)
        server.hold(after=2)  # two samples' calls answered, then every request waits
        ignore = sigint == "ignored"
        process = subprocess.Popen(
            [sys.executable, "-m", "bedside.cli", "run", str(path), "--no-cache"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "COLUMNS": "120"},
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN if ignore else signal.SIG_DFL),
        )
        try:
            server.wait_until(lambda stats: stats["held"] >= 1)  # the third request waits: two are answered
            deadline = time.monotonic() + 300  # a hang guard only
            while _stored_count(Path(config.store)) < 2:
                assert time.monotonic() < deadline, "the two answered samples were never stored"
                time.sleep(0.02)
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=120)
        finally:
            server.release()
            if process.poll() is None:
                process.kill()
    assert process.returncode == 143, stderr
    assert "terminated (SIGTERM): finished samples are stored" in " ".join(stderr.split())
    store = Store(config.store)
    try:
        assert store.run(config.run_id)["status"] == "interrupted"
        assert sum(r.status == "ok" for r in store.results(config.run_id)) >= 2
    finally:
        store.close()
