"""A sample's key must not change between versions (a changed key re-runs every stored sample): it is the sha256
of ``json.dumps(data, sort_keys=True, default=str)`` of the documented fields, however it is computed."""

from __future__ import annotations

import datetime
import hashlib
import json
from pathlib import Path

from bedside.runs.config import RunConfig
from bedside.runs.runner import Cell, CellKeys, sample_key
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


def test_cell_keys_write_the_same_text_as_json_dumps_of_the_whole() -> None:
    """The per-cell parts (plan_run's fast path) give the documented hash for varied data: unicode, nested and
    unsorted keys, non-JSON values (``default=str``), several epochs, another dataset, system and model."""
    options = {"z": [3, {"y": 1, "x": None}], "path": Path("/p"), "día": "ñ"}
    config = RunConfig(
        name="x",
        task="drafting",
        datasets={"d": {}, "other": {}},  # type: ignore[dict-item]
        systems={"s": {"type": "zero_shot", "options": options}, "t": {"type": "zero_shot"}},  # type: ignore[dict-item]
        models={"system": ["scripted/a", "scripted/b"], "judge": ["scripted/j"], "patient": ["scripted/p"]},
        seed=7,
    )
    settings = {"system": {"seed": 7, "temperature": 0.5}, "judge": {"seed": 7}}
    samples = [
        Sample(id="a", inputs={"b": 1, "a": [1.5, "ü", None]}, strata={"z": "1", "a": "2"}),
        Sample(id="b", inputs={"when": datetime.date(2021, 5, 6), "nested": {"k": {"j": [True, False]}}}),
    ]
    for dataset, system_name, model in [("d", "s", "scripted/a"), ("other", "t", "scripted/b")]:
        cell = Cell(dataset, system_name, model)
        system = config.systems[system_name]
        for sample in samples:
            for epoch in (0, 3):
                data = {
                    "task": "drafting",
                    "dataset": dataset,
                    "sample": sample.model_dump(),
                    "system": {"name": system_name, **system.model_dump()},
                    "models": {"judge": "scripted/j", "patient": "scripted/p", "system": model},
                    "settings": settings,
                    "epoch": epoch,
                    "seed": 7,
                }
                expected = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()
                keys = CellKeys(config, cell, system.model_dump(), settings)
                assert keys.key(sample.model_dump(), epoch) == expected
                assert sample_key(config, cell, system, sample, epoch, settings) == expected
