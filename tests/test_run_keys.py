"""A sample's key must not change between versions (a changed key re-runs every stored sample): it is the sha256
of ``json.dumps(data, sort_keys=True, default=str)`` of the documented fields, however it is computed."""

from __future__ import annotations

import datetime
import hashlib
import json
from pathlib import Path

from bedside.runs.config import RunConfig
from bedside.runs.runner import Cell, sample_key
from bedside.runs.task import Sample


def test_sample_key_is_the_hash_of_the_documented_json() -> None:
    options = {"evaluate": False, "path": Path("/x"), "day": datetime.date(2020, 1, 1), "word": "é"}
    config = RunConfig(
        name="x",
        task="drafting",
        datasets={"d": {}},  # type: ignore[dict-item]
        systems={"s": {"type": "zero_shot", "options": options}},  # type: ignore[dict-item]
        models={"system": ["scripted/a"], "judge": ["scripted/j"]},
    )
    cell = Cell("d", "s", "scripted/a")
    sample = Sample(id="é1", inputs={"prompt": "héllo", "n": [1, 2.5, None, {"b": 1, "a": 2}]}, strata={"k": "v"})
    settings = {"system": {"seed": 0, "max_tokens": 5, "stop": ["a"]}}
    data = {
        "task": "drafting",
        "dataset": "d",
        "sample": sample.model_dump(),
        "system": {"name": "s", **config.systems["s"].model_dump()},
        "models": {"judge": "scripted/j", "system": "scripted/a"},
        "settings": settings,
        "epoch": 1,
        "seed": config.seed,
    }
    expected = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()
    assert sample_key(config, cell, config.systems["s"], sample, 1, settings) == expected
    premade = {"sample_data": sample.model_dump(), "system_data": config.systems["s"].model_dump()}
    assert sample_key(config, cell, config.systems["s"], sample, 1, settings, **premade) == expected
