"""What a run refuses before it starts, and how it says so: a store URL holding a password (never printed), a
prompt template that does not exist (found by ``config check``, not on every sample) (issue 48)."""

from __future__ import annotations

from pathlib import Path

from bedside.cli import app
from bedside.testing import ScriptedServer
from test_compare_cells import _grid, runner


def test_a_store_url_with_a_password_is_refused_without_printing_it(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        path = _grid(tmp_path, server, store="postgresql+psycopg://postgres:Sup3rSecretPW@127.0.0.1:1/test")
        ran = runner.invoke(app, ["run", str(path), "--no-cache"])
    assert ran.exit_code == 1
    assert "holds a password" in ran.output
    assert "Sup3rSecretPW" not in ran.output


def test_config_check_refuses_a_template_that_does_not_exist(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        path = _grid(tmp_path, server)
        good = runner.invoke(app, ["config", "check", str(path)])
        assert good.exit_code == 0, good.output
        bad = runner.invoke(
            app, ["config", "check", str(path), "--set", f"systems.short.options.template={tmp_path / 'nope.j2'}"]
        )
    assert bad.exit_code == 1
    said = " ".join(bad.output.split())
    assert "systems.short.options.template:" in said
    assert "cannot read template: No such file or directory" in said
