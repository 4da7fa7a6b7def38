"""One scorer resolution rule: the task's own scorer wins over bedside's generic one of the same name, a task that
takes a generic name must say what its scorer reads, and config check prints every name's implementation."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs.config import DatasetConfig
from bedside.runs.registry import resolve_task
from bedside.runs.scorers import GENERIC, GENERIC_TEXTS, check_scorers, resolve_scorers, score_sample
from bedside.runs.task import Output, Sample, System


class _Task:
    """A task with its own ``words`` (it counts the output's extra text, not the output text)."""

    name = "mine"
    systems: Mapping[str, System] = {}
    default_scorers = ("words",)
    scorers = ("words", "own")
    scorer_texts: Mapping[str, str] = {"words": "words in extra['answer'] only"}

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        return []

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        if scorer == "words":
            return float(len(output.extra["answer"].split()))
        if scorer == "own":
            return 1.0
        raise KeyError(scorer)


class _Silent(_Task):
    scorer_texts: Mapping[str, str] = {}


def test_the_tasks_scorer_wins_over_the_generic_one_of_the_same_name() -> None:
    output = Output(text="Patient: one two three\nSensemaker: four", extra={"answer": "four"})
    sample = Sample(id="s", inputs={}, references=["four"])
    scores = score_sample(_Task(), ["words", "own", "rougeL"], sample, output)
    # rougeL is the generic one (the task has none): LCS 1 of 6 output tokens and 1 reference token, F1 = 2/7
    assert scores == {"words": 1.0, "own": 1.0, "rougeL": pytest.approx(2 / 7)}
    lines = [r.line() for r in check_scorers(_Task(), ["words", "own", "rougeL"])]
    assert lines == [
        "words: mine (the task's own, over bedside's generic one), words in extra['answer'] only",
        "own: mine, mine's own scorer; higher is better",
        f"rougeL: bedside, {GENERIC_TEXTS['rougeL']}; higher is better",
    ]


def test_a_name_both_define_without_the_tasks_description_is_refused() -> None:
    with pytest.raises(ValueError, match=r"words are both bedside's generic scorers and task 'mine''s own"):
        resolve_scorers(_Silent(), ["words"])
    resolve_scorers(_Silent(), ["own", "rougeL"])
    with pytest.raises(ValueError, match="unknown scorer"):
        resolve_scorers(_Task(), ["nope"])


def test_every_generic_scorer_says_what_it_reads_and_the_shipped_tasks_overrides() -> None:
    assert set(GENERIC_TEXTS) == set(GENERIC)
    overrides = {}
    for name in ("drafting", "instruct", "discharge", "citeqa", "sensemaking"):
        task = resolve_task(name)
        resolved = resolve_scorers(task, [*task.default_scorers, *getattr(task, "scorers", ())])
        overrides[name] = sorted(r.name for r in resolved if r.overrides_generic)
    # only two names are taken over, each by the task whose text it must read; the other tasks store what they did
    assert overrides == {"drafting": [], "instruct": [], "discharge": ["rougeL"], "citeqa": [], "sensemaking": ["smog"]}


def test_config_check_prints_each_scorers_implementation_and_text(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "check",
                "task": "sensemaking",
                "datasets": {"synthetic": {"options": {"cases": 1, "personas": ["openness-basic"]}}},
                "systems": {"medagent": {"type": "medagent"}},
                "models": {"system": "scripted/x"},
                "scorers": ["smog", "words"],
            }
        ),
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["config", "check", str(config)])
    assert result.exit_code == 0, result.output
    assert (
        "smog: sensemaking (the task's own, over bedside's generic one), SMOG (bedside's counter) of the "
        "sensemaker's messages only"
    ) in " ".join(result.output.split())
    assert "words: bedside, whitespace words in the output text" in result.output
    checked = CliRunner().invoke(app, ["config", "check", str(config), "--json"])
    resolution = json.loads(checked.output)["scorer_resolution"]
    assert resolution[0]["name"] == "smog"
    assert resolution[0]["implementation"] == "sensemaking"
    assert resolution[0]["overrides_generic"] is True
    assert resolution[1]["implementation"] == "bedside"


def test_a_generic_scorer_that_cannot_run_here_fails_before_the_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert [r.name for r in check_scorers(_Task(), ["meteor", "rougeL"])] == ["meteor", "rougeL"]
    monkeypatch.setenv("BEDSIDE_WORDNET", str(tmp_path))  # WordNet not where it is said to be
    with pytest.raises(ValueError, match=r"cannot run on this machine: meteor \(METEOR unavailable: .*WordNet"):
        check_scorers(_Task(), ["meteor", "rougeL"])
    check_scorers(_Task(), ["rougeL", "own"])  # the others are not held up by it


def _run_config(folder: Path, **fields: object) -> Path:
    """A one-model run config (scripted echo) with ``fields``, written to ``folder/run.yaml``."""
    path = folder / "run.yaml"
    path.write_text(
        yaml.safe_dump({"name": "check", "models": {"system": "scripted/echo"}, **fields}), encoding="utf-8"
    )
    return path


def test_a_wordnet_setting_that_names_no_wordnet_fails_the_run_before_it_starts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = _run_config(tmp_path, task="drafting", datasets={"demo": {}}, systems={"thematic": {"type": "thematic"}})
    assert CliRunner().invoke(app, ["config", "check", str(config)]).exit_code == 0
    monkeypatch.setenv("BEDSIDE_WORDNET", str(tmp_path / "nowhere"))
    checked = CliRunner().invoke(app, ["config", "check", str(config)])
    assert checked.exit_code == 1
    assert "data.noun, data.verb, data.adj, data.adv, index.noun, index.verb, index.adj, index.adv, noun.exc" in (
        checked.output
    )
    assert "adv.exc not found in" in checked.output
    assert str(tmp_path / "nowhere") in checked.output


def test_a_run_whose_scorer_cannot_run_here_stops_before_it_opens_a_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = tmp_path / "runs" / "store.sqlite"
    config = _run_config(
        tmp_path,
        task="instruct",
        datasets={"synthetic": {}},
        systems={"budgeted": {"type": "budgeted"}},
        scorers=["meteor"],
        store=str(store),
    )
    monkeypatch.setenv("BEDSIDE_WORDNET", str(tmp_path / "nowhere"))
    result = CliRunner().invoke(app, ["run", str(config)])
    assert result.exit_code == 1
    assert "scorer(s) that cannot run on this machine: meteor (METEOR unavailable" in " ".join(result.output.split())
    assert " -> " not in result.output  # the run's store line is not printed
    assert not store.exists()  # and no empty store is left behind
