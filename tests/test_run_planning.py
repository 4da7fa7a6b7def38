"""Before a run: `bedside config check`, `bedside run --dry-run` and `--limit`, none of which sends a request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.testing import ScriptedServer

runner = CliRunner()


def write(folder: Path, server: ScriptedServer, **changes: Any) -> Path:
    config: dict[str, Any] = {
        "name": "planned",
        "task": "drafting",
        "datasets": {"demo": {"limit": 4}},
        "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},
        "models": {"system": [server.model_name()]},
        "model_options": {"system": {"price": {"input_per_million": 1.0, "output_per_million": 2.0}}},
        "scorers": ["words"],
        "store": str(folder / "store.sqlite"),
    }
    config.update(changes)
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_a_dry_run_plans_replays_the_cache_and_estimates_without_sending(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache.sqlite")
    with ScriptedServer() as server:
        path = write(tmp_path, server)
        fresh = runner.invoke(app, ["run", str(path), "--dry-run", "--cache", cache, "--json"])
        assert fresh.exit_code == 0, fresh.output
        plan = json.loads(fresh.stdout)
        assert [c["run"] for c in plan["cells"].values()] == [4]
        assert plan["need_endpoint"] == 4  # no cache yet
        assert plan["expected"]["calls"] is None  # and no history to estimate from
        assert not (tmp_path / "store.sqlite").exists()  # a dry run creates no store

        assert runner.invoke(app, ["run", str(path), "--cache", cache]).exit_code == 0
        sent = server.stats()["requests"]
        assert sent == 4

        wider = json.loads(
            runner.invoke(
                app, ["run", str(path), "--dry-run", "--set", "datasets.demo.limit=6", "--cache", cache, "--json"]
            ).stdout
        )
        (cell,) = wider["cells"].values()
        assert (cell["samples"], cell["reuse"], cell["run"]) == (6, 4, 2)  # 6 samples: the 4 stored are reused
        assert (wider["replayable"], wider["need_endpoint"]) == (0, 2)  # the 2 new ones are not cached
        assert wider["expected"]["calls"] == 2  # one call per sample, from the 4 stored
        assert wider["expected"]["cost"] > 0  # priced from model_options

        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        other = write(elsewhere, server)  # the same samples, another store: only the cache can answer them
        replay = json.loads(runner.invoke(app, ["run", str(other), "--dry-run", "--cache", cache, "--json"]).stdout)
        assert (replay["replayable"], replay["replayed_answers"], replay["need_endpoint"]) == (4, 4, 0)
        shown = runner.invoke(app, ["run", str(other), "--dry-run", "--cache", cache])
        assert "4 of 4 sample(s) replay entirely" in " ".join(shown.output.split())
        assert server.stats()["requests"] == sent  # nothing was sent by any dry run


def test_limit_runs_the_first_samples_of_each_dataset(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        path = write(tmp_path, server)
        done = runner.invoke(app, ["run", str(path), "--no-cache", "--limit", "2", "--json"])
        assert done.exit_code == 0, done.output
        assert json.loads(done.stdout)["ran"] == 2
        assert server.stats()["requests"] == 2
        full = json.loads(runner.invoke(app, ["run", str(path), "--no-cache", "--json"]).stdout)
        assert (full["ran"], full["reused"]) == (2, 2)  # the limited run's samples are reused
        assert server.stats()["requests"] == 4


def test_config_check_names_the_key_at_fault(tmp_path: Path, monkeypatch: Any) -> None:
    with ScriptedServer() as server:
        good = write(tmp_path, server)
        checked = runner.invoke(app, ["config", "check", str(good), "--json"])
        assert checked.exit_code == 0, checked.output
        summary = json.loads(checked.stdout)
        assert summary["samples"] == {"demo": 4}
        assert summary["cells"] == 1

        cases: dict[str, dict[str, Any]] = {
            "systems.zero_shot.type": {"systems": {"zero_shot": {"type": "nope"}}},
            "models.system[0]": {"models": {"system": ["nonsense-name"]}},
            "SECRET_FOR_CHECK": {"model_options": {"system": {"api_key_env": "SECRET_FOR_CHECK"}}},
            "scorer": {"scorers": ["no_such_scorer"]},
            "datasets.demo.limit": {"datasets": {"demo": {"limit": 0}}},
        }
        monkeypatch.delenv("SECRET_FOR_CHECK", raising=False)
        for expected, change in cases.items():
            bad = write(tmp_path, server, **change)
            result = runner.invoke(app, ["config", "check", str(bad)])
            assert result.exit_code == 1, (expected, result.output)
            message = " ".join(result.output.split())
            assert expected in message, (expected, message)
            assert str(bad) in message or "run.yaml" in message
            assert "Traceback" not in result.output
    assert server.stats()["requests"] == 0


def test_a_dry_run_prices_a_role_from_its_aliases_when_they_agree(tmp_path: Path) -> None:
    """A sweep priced on its model aliases read "cost unknown (set model_options.ROLE.price)" (a newcomer's sweep,
    2026-11-29); aliases priced alike now price the role, and aliases priced apart still say unknown."""
    price = {"input_per_million": 1.0, "output_per_million": 2.0}
    with ScriptedServer() as server:
        base = server.model_name("m").split("@")[1]

        def alias(name: str, cost: dict[str, float]) -> dict[str, Any]:
            return {"provider": "openai-compatible", "model": name, "base_url": base, "price": cost}

        path = write(
            tmp_path,
            server,
            models={"system": ["a", "b"]},
            aliases={"a": alias("a", price), "b": alias("b", price)},
            model_options={},
        )
        assert runner.invoke(app, ["run", str(path), "--no-cache"]).exit_code == 0
        wider = ["--dry-run", "--set", "datasets.demo.limit=6", "--no-cache", "--json"]
        alike = json.loads(runner.invoke(app, ["run", str(path), *wider]).stdout)
        assert alike["expected"]["cost"] > 0
        apart = write(
            tmp_path,
            server,
            models={"system": ["a", "b"]},
            aliases={"a": alias("a", price), "b": alias("b", {**price, "output_per_million": 9.0})},
            model_options={},
        )
        assert json.loads(runner.invoke(app, ["run", str(apart), *wider]).stdout)["expected"]["cost"] is None
