"""A run that reuses another run's answers served at an endpoint it does not name says so (a newcomer's sweep,
2026-11-29: a second config naming a weaker server's model "llm" silently took the first server's answers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.testing import ScriptedServer

runner = CliRunner()


def _config(tmp_path: Path, name: str, model: str) -> Path:
    config: dict[str, Any] = {
        "name": name,
        "task": "drafting",
        "datasets": {"demo": {"limit": 3}},
        "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},
        "models": {"system": [model]},
        "scorers": ["words"],
        "store": str(tmp_path / "store.sqlite"),
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_answers_reused_from_another_server_are_named(tmp_path: Path) -> None:
    with ScriptedServer() as first, ScriptedServer() as second:
        assert (
            runner.invoke(app, ["run", str(_config(tmp_path, "a", first.model_name("llm"))), "--no-cache"]).exit_code
            == 0
        )
        moved = runner.invoke(app, ["run", str(_config(tmp_path, "b", second.model_name("llm"))), "--no-cache"])
        assert moved.exit_code == 0, moved.output
        assert "0 samples run, 3 reused" in moved.output
        assert "warning: 3 samples of demo/zero_shot/openai-compatible/llm were reused from another run" in moved.output
        assert first.base_url in moved.output  # where they came from
        as_json = runner.invoke(
            app, ["run", str(_config(tmp_path, "c", second.model_name("llm"))), "--no-cache", "--json"]
        )
        found = json.loads(as_json.stdout)["reused_from_elsewhere"]
        assert found == {"demo/zero_shot/openai-compatible/llm": {"samples": 3, "served_at": first.base_url}}
        # the same server under the same name again: nothing to say
        again = runner.invoke(app, ["run", str(_config(tmp_path, "d", first.model_name("llm"))), "--no-cache"])
        assert "3 reused" in again.output
        assert "warning:" not in again.output
