"""Models are named by alias or PROVIDER/MODEL, never by URL: short cells, and a server moved to another port is the
same model (same run, same stored samples, same cached answers), while another model name is another model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from bedside.runs import ConfigError, Store, execute, load_config
from bedside.testing import ScriptedServer


def _write(tmp_path: Path, **config: Any) -> Path:
    data = {
        "name": "names",
        "task": "drafting",
        "datasets": {"demo": {"limit": 2}},
        "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},
        "scorers": ["words"],
        "store": str(tmp_path / "store.sqlite"),
        **config,
    }
    path = tmp_path / "names.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_an_alias_names_the_cell_and_the_stored_model(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        path = _write(
            tmp_path,
            aliases={"mine": server.model_name("qwen2.5-7b"), "judge-box": {"provider": "openai-compatible",
                     "model": "judge", "base_url": server.base_url}},
            models={"system": ["mine", server.model_name("other")], "judge": "judge-box"},
        )  # fmt: skip
        config = load_config(path)
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 0
    assert set(summary.cells) == {"demo/zero_shot/mine", "demo/zero_shot/openai-compatible/other"}
    store = Store(config.store)
    try:
        models = {row.model for row in store.results(config.run_id)}
    finally:
        store.close()
    assert models == {"mine", "openai-compatible/other"}
    assert all("http" not in cell for cell in summary.cells)


def test_moving_the_server_to_another_port_keeps_the_run_its_samples_and_its_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    with ScriptedServer() as first_server:
        moved_from = load_config(_write(tmp_path, models={"system": first_server.model_name("mine")}))
        asyncio.run(execute(moved_from, cache=cache))
        assert first_server.stats()["requests"] == 2
    with ScriptedServer() as second_server:
        assert second_server.base_url != first_server.base_url
        moved_to = load_config(_write(tmp_path, models={"system": second_server.model_name("mine")}))
        assert moved_to.run_id == moved_from.run_id
        again = asyncio.run(execute(moved_to, cache=cache))
        assert again.ran == 0  # every sample already stored under the same run and keys
        assert second_server.stats()["requests"] == 0
        # The same samples into a fresh store: nothing to reuse there, every answer comes from the cache.
        fresh = load_config(
            _write(tmp_path, models={"system": second_server.model_name("mine")}), [f"store={tmp_path / 'new.sqlite'}"]
        )
        replayed = asyncio.run(execute(fresh, cache=cache))
        assert (replayed.ran, replayed.reused) == (2, 0)
        assert second_server.stats()["requests"] == 0

        renamed = load_config(_write(tmp_path, models={"system": second_server.model_name("another-model")}))
        assert renamed.run_id != moved_from.run_id  # another model name is another model
        asyncio.run(execute(renamed, cache=cache))
        assert second_server.stats()["requests"] == 2


def test_two_grid_models_that_differ_only_by_url_are_refused(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        models={
            "system": [
                "openai-compatible/qwen@http://127.0.0.1:8000/v1",
                "openai-compatible/qwen@http://127.0.0.1:8001/v1",
            ]
        },
    )
    with pytest.raises(ConfigError, match="are both the model 'openai-compatible/qwen'"):
        load_config(path)


def test_an_alias_with_a_slash_or_a_bad_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="alias 'a/b'"):
        load_config(_write(tmp_path, aliases={"a/b": "embedded/smollm2-135m"}, models={"system": "a/b"}))
    with pytest.raises(ConfigError, match="alias 'mine'"):
        load_config(_write(tmp_path, aliases={"mine": "no provider here"}, models={"system": "mine"}))


def test_an_alias_sampling_options_reach_the_endpoint_and_the_cache_key(tmp_path: Path) -> None:
    """Issue 46: ``options: {temperature: 0.7}`` on an alias ran at temperature 0, silently."""
    from typer.testing import CliRunner

    from bedside.cli import app

    with ScriptedServer() as server:
        block = {"provider": "openai-compatible", "model": "good-1", "base_url": server.base_url}
        path = _write(
            tmp_path,
            aliases={"good-1": {**block, "options": {}}, "good-1-t07": {**block, "options": {"temperature": 0.7}}},
            models={"system": ["good-1", "good-1-t07"]},
            settings={"system": {"temperature": 0.0}},
        )
        cache = tmp_path / "cache.sqlite"
        result = CliRunner().invoke(app, ["run", str(path), "--cache", str(cache)])
        assert result.exit_code == 0, result.output
        sent = sorted(float(body["temperature"]) for body in server.recent)
        assert server.stats()["requests"] == 4  # two samples a model: the t07 alias is not served from the other's
    assert sent == [0.0, 0.0, 0.7, 0.7]


def test_a_misspelt_alias_option_fails_config_check_naming_the_key(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bedside.cli import app

    block = {"provider": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    path = _write(tmp_path, aliases={"t07": {**block, "options": {"temprature": 0.7}}}, models={"system": "t07"})
    result = CliRunner().invoke(app, ["config", "check", str(path)])
    assert result.exit_code != 0
    said = " ".join(result.output.split())
    assert "options.temprature" in said
    assert "did you mean 'temperature'?" in said
    bad = _write(tmp_path, aliases={"hot": {**block, "options": {"temperature": -1}}}, models={"system": "hot"})
    result = CliRunner().invoke(app, ["config", "check", str(bad)])
    assert result.exit_code != 0
    assert "options.temperature" in " ".join(result.output.split())
