"""A run's record of what each call sent: the generation settings after the alias's options, and the model the
endpoint said answered, in each call's timeline entry, `bedside show` and the report's methods (issue 48)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs import Store, load_config
from bedside.testing import ScriptedServer

runner = CliRunner()


def test_each_call_records_the_settings_it_sent_and_the_model_that_answered(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        config: dict[str, Any] = {
            "name": "sent",
            "task": "drafting",
            "datasets": {"demo": {"limit": 2}},
            "systems": {"z": {"type": "zero_shot", "options": {"evaluate": False}}},
            "aliases": {
                "warm": {
                    "provider": "openai-compatible",
                    "model": "m",
                    "base_url": server.base_url,
                    "options": {"temperature": 0.7, "seed": 11},
                }
            },
            "models": {"system": ["warm"]},
            "settings": {"system": {"max_tokens": 64, "temperature": 0.05}},
            "scorers": ["words"],
            "store": str(tmp_path / "store.sqlite"),
        }
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        ran = runner.invoke(app, ["run", str(path), "--no-cache"])
        assert ran.exit_code == 0, ran.output
    loaded = load_config(path)
    store = Store(loaded.store)
    try:
        rows = store.results(loaded.run_id)
    finally:
        store.close()
    calls = [call for row in rows for call in row.calls or []]
    assert len(calls) == 2
    assert all(call["sent"] == {"max_tokens": 64, "seed": 11, "temperature": 0.7} for call in calls)
    assert all(call["reported_model"] == "m" for call in calls)
    assert all(call["fingerprint"] == "fp_scripted" for call in calls)  # the endpoint's build, as it said
    shown = runner.invoke(app, ["show", loaded.run_id, rows[0].sample_id, "--store", loaded.store])
    said = [line for line in shown.stdout.splitlines() if line.startswith("sent ")]
    assert said == [
        'sent system ×1: {"max_tokens": 64, "seed": 11, "temperature": 0.7}, answered by m (fingerprint fp_scripted)'
    ]
    report = json.loads(runner.invoke(app, ["report", loaded.run_id, "--store", loaded.store, "--json"]).stdout)
    assert report["sent"] == [
        'system ×2: {"max_tokens": 64, "seed": 11, "temperature": 0.7}, answered by m (fingerprint fp_scripted)'
    ]


def test_failed_calls_name_the_model_they_were_sent_to() -> None:
    """A failed call has no reported model: the line said "system ×14: {...}" naming no model at all."""
    from bedside.runs.report import sent_lines

    calls = [
        {"role": "system", "model": "broken", "sent": {"max_tokens": 8}, "error": "ModelRequestError: 500"},
        {"role": "system", "model": "good", "sent": {"max_tokens": 8}, "reported_model": "good-v2"},
    ]
    assert sent_lines([*calls, calls[0]]) == [
        'system ×2: {"max_tokens": 8}, failed: ModelRequestError from broken',
        'system ×1: {"max_tokens": 8}, answered by good-v2',
    ]
    # an endpoint that answered, but with nothing, did answer: the failure says what it was, and how many requests
    empty = {"role": "system", "model": "empty", "sent": {}, "error": "EmptyAnswerError: no text", "attempts": 2}
    assert sent_lines([empty]) == ["system ×1: {}, failed: EmptyAnswerError from empty after 2 requests"]
