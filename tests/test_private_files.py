"""Everything bedside writes that holds prompts or outputs is 0600, and the folders it creates 0700 (issue 19)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import bedside
from bedside.cli import app
from bedside.llm.cache import ResponseCache
from bedside.llm.types import ProviderResponse
from bedside.private_files import create_private_file, private_dir, write_private_text
from bedside.runs import Store, execute, load_config
from bedside.runs.report import export_jsonl, export_parquet, write_report
from bedside.runs.store import ResultRow
from bedside.testing import ScriptedServer

runner = CliRunner()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The common default umask, under which files would otherwise be created 0644 and folders 0755."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def write_config(tmp_path: Path, server: ScriptedServer, store: Path) -> Path:
    config = {
        "name": "private",
        "task": "drafting",
        "datasets": {"demo": {"limit": 2}},
        "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},
        "models": {"system": server.model_name()},
        "scorers": ["words"],
        "store": str(store),
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.mark.usefixtures("umask_022")
def test_store_cache_report_and_exports_through_the_api_are_owner_only(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)  # an existing folder: bedside must leave it as it is
    store_path = tmp_path / "runs" / "nested" / "store.sqlite"
    cache_path = tmp_path / "cache" / "llm.sqlite"
    with ScriptedServer() as server:
        config = load_config(write_config(tmp_path, server, store_path))
        summary = asyncio.run(execute(config, cache=cache_path))
    assert summary.ran == 2
    assert mode(tmp_path) == 0o755
    for folder in (tmp_path / "runs", tmp_path / "runs" / "nested", tmp_path / "cache"):
        assert mode(folder) == 0o700, folder
    assert mode(store_path) == 0o600
    assert mode(cache_path) == 0o600

    # SQLite's side files take the database's mode; look at them while a connection holds them open.
    store = Store(str(store_path))
    try:
        store.begin_run("probe", "probe", "drafting", {})
        wal = Path(f"{store_path}-wal")
        assert wal.exists()
        assert mode(wal) == 0o600
        assert mode(Path(f"{store_path}-shm")) == 0o600

        reports = tmp_path / "reports" / "deep"
        md, page = write_report(store, config.run_id, reports)
        assert mode(tmp_path / "reports") == mode(reports) == 0o700
        assert mode(md) == mode(page) == 0o600
        rows = store.results(config.run_id)
    finally:
        store.close()

    exported = tmp_path / "exports" / "rows.jsonl"
    assert export_jsonl(rows, exported) == 2
    assert mode(exported.parent) == 0o700
    assert mode(exported) == 0o600
    assert [json.loads(line)["sample_id"] for line in exported.read_text().splitlines()] == [r.sample_id for r in rows]
    parquet = tmp_path / "exports" / "rows.parquet"
    export_parquet(rows, parquet)
    assert mode(parquet) == 0o600
    import pyarrow.parquet as pq

    assert pq.read_table(parquet).num_rows == 2

    cache = ResponseCache(cache_path)
    try:
        cache.put("k", {"messages": []}, ProviderResponse(texts=("hi",)))
        assert mode(Path(f"{cache_path}-wal")) == 0o600
    finally:
        cache.close()


@pytest.mark.usefixtures("umask_022")
def test_the_cli_writes_store_cache_report_and_exports_owner_only(tmp_path: Path) -> None:
    store = tmp_path / "store" / "bedside.sqlite"
    cache = tmp_path / "cache" / "llm.sqlite"
    with ScriptedServer() as server:
        path = write_config(tmp_path, server, store)
        result = runner.invoke(app, ["run", str(path), "--cache", str(cache)])
        assert result.exit_code == 0, result.output
    run_id = load_config(path).run_id
    assert mode(store) == mode(cache) == 0o600
    assert mode(store.parent) == mode(cache.parent) == 0o700

    reports = tmp_path / "reports"
    result = runner.invoke(app, ["report", run_id, "--store", str(store), "-o", str(reports)])
    assert result.exit_code == 0, result.output
    assert mode(reports) == 0o700
    assert sorted(mode(p) for p in reports.iterdir()) == [0o600, 0o600]

    exports = tmp_path / "exports"
    for name, fmt in (("rows.jsonl", "jsonl"), ("rows.parquet", "parquet")):
        result = runner.invoke(
            app, ["export", run_id, "--store", str(store), "--format", fmt, "-o", str(exports / name)]
        )
        assert result.exit_code == 0, result.output
        assert mode(exports / name) == 0o600
    assert mode(exports) == 0o700


@pytest.mark.usefixtures("umask_022")
def test_a_rewritten_output_is_tightened_and_an_existing_folder_is_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    old = shared / "report.md"
    old.write_text("from an older bedside")
    old.chmod(0o644)
    write_private_text(old, "new text")
    assert old.read_text() == "new text"
    assert mode(old) == 0o600
    assert mode(shared) == 0o755

    # A database that exists keeps its mode (it may be shared on purpose); a new one is 0600.
    existing = shared / "team.sqlite"
    existing.touch(mode=0o640)
    existing.chmod(0o640)
    assert create_private_file(existing) is False
    assert mode(existing) == 0o640
    assert create_private_file(shared / "new" / "mine.sqlite") is True
    assert mode(shared / "new" / "mine.sqlite") == 0o600
    assert mode(shared / "new") == 0o700


@pytest.mark.parametrize("umask", [0o000, 0o277])
def test_modes_do_not_depend_on_the_umask(tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        folder = private_dir(tmp_path / "a" / "b")
        written = write_private_text(folder / "out.txt", "x")
        created = folder / "db.sqlite"
        create_private_file(created)
    finally:
        os.umask(previous)
    assert mode(tmp_path / "a") == mode(folder) == 0o700
    assert mode(written) == mode(created) == 0o600


def test_a_path_that_is_a_file_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError):
        private_dir(tmp_path / "file")


@pytest.mark.usefixtures("umask_022")
def test_task_outputs_holding_patient_text_are_owner_only(tmp_path: Path) -> None:
    from bedside.records import read_records_jsonl, write_records_jsonl
    from bedside.tasks.citeqa.submission import write_submission
    from bedside.tasks.drafting.adaptation import write_jsonl

    cohort = Path(bedside.__file__).parent / "data" / "demo" / "cohort.jsonl"
    records = tmp_path / "out" / "records.jsonl"
    assert write_records_jsonl(read_records_jsonl(cohort)[:2], records) == 2
    submission = write_submission(tmp_path / "out" / "submission.json", {"1": "answer |1|"})
    sft = tmp_path / "out" / "sft.jsonl"
    write_jsonl(sft, [{"messages": []}])
    assert mode(tmp_path / "out") == 0o700
    assert [mode(p) for p in (records, submission, sft)] == [0o600, 0o600, 0o600]


def test_in_memory_databases_create_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cache = ResponseCache(":memory:")
    cache.put("k", {"messages": []}, ProviderResponse(texts=("hi",)))
    assert len(cache) == 1
    cache.close()
    Store(":memory:").close()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_an_export_that_fails_part_way_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """A full disk mid-export used to leave a truncated file that looked like an export; now the old file (or
    none) stays and only complete files are renamed into place."""
    import errno

    import bedside.runs.report as report

    if kind == "parquet":
        pytest.importorskip("pyarrow")
    rows = [
        ResultRow("r", "c", f"s{i}", 0, "d", "sys", "m", "k", "ok", None, {"text": "x" * 1000}, {}, {}, {}, {})
        for i in range(50)
    ]
    target = tmp_path / f"rows.{kind}"
    export = report.export_jsonl if kind == "jsonl" else report.export_parquet
    export(rows[:1], target)
    before = target.read_bytes()

    if kind == "jsonl":
        written: list[str] = []
        from bedside.runs.store import iter_jsonl as original

        def lines(items: Any) -> Iterator[str]:
            for line in original(items):
                if len(written) == 10:
                    raise OSError(errno.ENOSPC, "No space left on device")
                written.append(line)
                yield line

        monkeypatch.setattr(report, "iter_jsonl", lines)
    else:
        import pyarrow.parquet as pq

        def full(table: Any, where: Any) -> None:
            where.write(b"PAR1 partial")
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(pq, "write_table", full)
    with pytest.raises(OSError, match="No space left"):
        export(rows, target)
    assert target.read_bytes() == before  # the earlier export, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]  # no partial file beside it
    target.unlink()
    with pytest.raises(OSError, match="No space left"):
        export(rows, target)
    assert list(tmp_path.iterdir()) == []


def test_a_report_folder_that_is_a_symbolic_link_is_refused_and_its_target_never_remoded(tmp_path: Path) -> None:
    target = tmp_path / "shared-folder"
    target.mkdir(mode=0o755)
    os.chmod(target, 0o755)
    link = tmp_path / "reports"
    link.symlink_to(target)
    with pytest.raises(OSError, match="is a symbolic link"):
        private_dir(link, tighten=True)
    private_dir(link, tighten=True, follow_symlinks=True)  # followed on request: written into, not re-moded
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(private_dir(tmp_path / "own", tighten=True)).st_mode) == 0o700
