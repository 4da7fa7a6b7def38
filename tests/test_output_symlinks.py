"""Report and export never write through a symbolic link unless asked, and a report's existing folder is made
owner-only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.private_files import SymlinkRefusedError, write_private_text
from bedside.runs import load_config
from bedside.testing import ScriptedServer

runner = CliRunner()
pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links and mode bits are POSIX here")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp_path = tmp_path_factory.mktemp("run")
    store = tmp_path / "store.sqlite"
    with ScriptedServer() as server:
        config = {
            "name": "links",
            "task": "drafting",
            "datasets": {"demo": {"limit": 1}},
            "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},
            "models": {"system": server.model_name()},
            "scorers": ["words"],
            "store": str(store),
        }
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        result = runner.invoke(app, ["run", str(path), "--no-cache"])
        assert result.exit_code == 0, result.output
    return store, load_config(path).run_id


def test_export_refuses_a_symlink_at_its_output_path_unless_asked(
    tmp_path: Path, finished_run: tuple[Path, str]
) -> None:
    store, run_id = finished_run
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    link = tmp_path / "rows.jsonl"
    link.symlink_to(victim)
    refused = runner.invoke(app, ["export", run_id, "--store", str(store), "-o", str(link)])
    assert refused.exit_code == 1
    assert "symbolic link" in refused.output
    assert "--follow-symlinks" in refused.output
    assert victim.read_text(encoding="utf-8") == "precious"
    dangling = tmp_path / "nowhere.jsonl"
    dangling.symlink_to(tmp_path / "created-by-the-link.jsonl")
    assert runner.invoke(app, ["export", run_id, "--store", str(store), "-o", str(dangling)]).exit_code == 1
    assert not (tmp_path / "created-by-the-link.jsonl").exists()
    asked = runner.invoke(app, ["export", run_id, "--store", str(store), "-o", str(link), "--follow-symlinks"])
    assert asked.exit_code == 0, asked.output
    assert victim.read_text(encoding="utf-8").startswith("{")


def test_report_refuses_symlinks_and_tightens_its_existing_folder(
    tmp_path: Path, finished_run: tuple[Path, str]
) -> None:
    store, run_id = finished_run
    folder = tmp_path / "reports"
    folder.mkdir()
    folder.chmod(0o755)
    victim = tmp_path / "victim.html"
    victim.write_text("precious", encoding="utf-8")
    (folder / f"{run_id}.html").symlink_to(victim)
    refused = runner.invoke(app, ["report", run_id, "--store", str(store), "-o", str(folder)])
    assert refused.exit_code == 1
    assert "symbolic link" in refused.output
    assert victim.read_text(encoding="utf-8") == "precious"
    assert mode(folder) == 0o700  # the report's folder, which existed 0755, is owner-only now
    (folder / f"{run_id}.html").unlink()
    written = runner.invoke(app, ["report", run_id, "--store", str(store), "-o", str(folder)])
    assert written.exit_code == 0, written.output
    assert sorted(mode(p) for p in folder.iterdir()) == [0o600, 0o600]


def test_a_link_to_a_pipe_or_device_is_the_users_plumbing(tmp_path: Path) -> None:
    link = tmp_path / "out"
    link.symlink_to("/dev/null")
    write_private_text(link, "goes nowhere")  # no error: /dev/stdout-style plumbing still works
    file_link = tmp_path / "file-link"
    file_link.symlink_to(tmp_path / "target")
    (tmp_path / "target").write_text("keep", encoding="utf-8")
    with pytest.raises(SymlinkRefusedError):
        write_private_text(file_link, "no")
    assert (tmp_path / "target").read_text(encoding="utf-8") == "keep"


def test_report_refuses_an_output_folder_that_is_a_symbolic_link(
    tmp_path: Path, finished_run: tuple[Path, str]
) -> None:
    # issue 48: the folder a link pointed to was followed and set to 0700
    store, run_id = finished_run
    target = tmp_path / "shared-folder"
    target.mkdir()
    target.chmod(0o755)
    link = tmp_path / "reports-link"
    link.symlink_to(target, target_is_directory=True)
    refused = runner.invoke(app, ["report", run_id, "--store", str(store), "-o", str(link)])
    assert refused.exit_code == 1
    assert "symbolic link" in refused.output
    assert mode(target) == 0o755  # not re-moded
    assert list(target.iterdir()) == []
    asked = runner.invoke(app, ["report", run_id, "--store", str(store), "-o", str(link), "--follow-symlinks"])
    assert asked.exit_code == 0, asked.output
    assert mode(target) == 0o755  # written into, never re-moded: it is not bedside's folder
