"""Config errors at any depth in bedside's words: the full path, "did you mean" and the valid keys; no pydantic
phrasing reaches the user (issue 46 item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bedside.runs import ConfigError, load_config

BASE = {
    "name": "c",
    "task": "drafting",
    "datasets": {"demo": {"limit": 2}},
    "systems": {"z": {"type": "zero_shot"}},
    "models": {"system": "embedded/smollm2-135m"},
}


@pytest.mark.parametrize(
    ("override", "said"),
    [
        ("model_aliases.x=1", "unknown key 'model_aliases' (did you mean 'aliases'?); valid keys: aliases, cache,"),
        ("systems.z.typ=zero_shot", "systems.z: unknown key 'typ' (did you mean 'type'?); valid keys: options, type"),
        ("settings.system.max_token=5", "settings: system: unknown key 'max_token' (did you mean 'max_tokens'?)"),
        ("settings.system.temperature=-1", "system.temperature: must be at least 0.0 (got -1)"),
        ("concurrency=abc", "concurrency: expected a whole number (got 'abc')"),
        ("datasets.demo.limit=0", "datasets.demo.limit: must be at least 1 (got 0)"),
        ("aliases.a.temprature=1", "unknown key 'temprature' ('temperature' is a generation option: give it under"),
        ("aliases.a.base_ur=x", "unknown key 'base_ur' (did you mean 'base_url'?)"),
    ],
)
def test_a_config_error_names_the_full_path_and_the_valid_keys(tmp_path: Path, override: str, said: str) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(BASE), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, [override])
    message = str(caught.value)
    assert said in message
    for pydantic_words in ("Extra inputs", "Input should", "Value error", "validation error", "(top level)"):
        assert pydantic_words not in message
