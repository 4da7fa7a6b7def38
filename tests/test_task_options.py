"""Issue 35: every dataset and system option a config names is one its task declares, with a value it accepts.

A misspelled option used to be ignored (the run used the default for every sample) and a misspelled value passed
``config check`` only to make every sample a stored error. Each seed task declares its options as pydantic models
(:mod:`bedside.runs.options`); ``check_config`` (config check and run start) validates against them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs import RunConfig, execute, resolve_task
from bedside.runs.options import OptionsError, describe_options
from bedside.runs.runner import check_config

# task → (a valid system type, a misspelled system option, a value outside an option's fixed set,
#         a misspelled dataset option)
CASES: dict[str, tuple[str, str, tuple[str, Any], str]] = {
    "drafting": ("zero_shot", "machter", ("matcher", "embeding"), "clincian"),
    "citeqa": ("two_stage", "max_repair", ("fix_role", "fixer"), "keys"),
    "discharge": ("dischargesim", "schedul", ("exam", ["dialogue", "sumary"]), "profile"),
    "sensemaking": ("medagent", "fidelity_check", ("path", "eficient"), "persona"),
    "instruct": ("budgeted", "contxt", ("view", "timelime"), "record"),
}


def config(task: str, *, system: dict[str, Any] | None = None, dataset: dict[str, Any] | None = None) -> RunConfig:
    kind = CASES[task][0]
    return RunConfig.model_validate(
        {
            "name": "t",
            "task": task,
            "datasets": {"d": {"options": dataset or {}}},
            "systems": {"s": {"type": kind, "options": system or {}}},
            "models": {"system": "scripted/x"},
        }
    )


@pytest.mark.parametrize("task", sorted(CASES))
def test_every_system_declares_its_options(task: str) -> None:
    loaded = resolve_task(task)
    assert set(loaded.system_options) == set(loaded.systems)  # type: ignore[attr-defined]
    check_config(config(task), loaded)  # no options: valid


@pytest.mark.parametrize("task", sorted(CASES))
def test_a_misspelled_system_option_names_the_key_and_the_valid_ones(task: str) -> None:
    loaded = resolve_task(task)
    _, misspelled, _, _ = CASES[task]
    with pytest.raises(OptionsError) as caught:
        check_config(config(task, system={misspelled: 1}), loaded)
    message = str(caught.value)
    assert f"systems.s.options.{misspelled}: unknown option" in message
    schema = loaded.system_options[CASES[task][0]]  # type: ignore[attr-defined]
    assert all(name in message for name in schema.model_fields)


@pytest.mark.parametrize("task", sorted(CASES))
def test_a_value_outside_the_fixed_set_is_refused(task: str) -> None:
    loaded = resolve_task(task)
    key, value = CASES[task][2]
    with pytest.raises(OptionsError, match=rf"systems\.s\.options\.{key}"):
        check_config(config(task, system={key: value}), loaded)


@pytest.mark.parametrize("task", sorted(CASES))
def test_a_misspelled_dataset_option_names_the_key_and_the_valid_ones(task: str) -> None:
    loaded = resolve_task(task)
    misspelled = CASES[task][3]
    with pytest.raises(OptionsError) as caught:
        check_config(config(task, dataset={misspelled: "x"}), loaded)
    message = str(caught.value)
    assert f"datasets.d.options.{misspelled}: unknown option" in message
    assert all(name in message for name in loaded.dataset_options.model_fields)  # type: ignore[attr-defined]


def test_the_suggestion_names_the_closest_option() -> None:
    with pytest.raises(OptionsError, match="did you mean 'matcher'"):
        check_config(config("drafting", system={"machter": "lexical"}), resolve_task("drafting"))


def test_each_system_type_has_its_own_options() -> None:
    """``k`` belongs to the RAG systems; on zero_shot it would be ignored, so it is refused."""
    task = resolve_task("drafting")
    with pytest.raises(OptionsError, match=r"systems\.s\.options\.k: unknown option"):
        check_config(config("drafting", system={"k": 3}), task)
    rag = config("drafting", system={"pool": "demo", "k": 3}).model_copy(deep=True)
    rag.systems["s"].type = "rag"
    check_config(rag, task)


def test_config_check_fails_on_a_misspelled_option(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(
        "name: t\ntask: drafting\ndatasets: {demo: {limit: 1}}\n"
        "systems: {a: {type: zero_shot, options: {machter: lexical}}}\nmodels: {system: scripted/x}\n"
    )
    result = CliRunner().invoke(app, ["config", "check", str(path)])
    assert result.exit_code != 0
    assert "systems.a.options.machter: unknown option" in result.output
    assert "matcher" in result.output
    result = CliRunner().invoke(app, ["config", "check", str(path), "--set", "systems.a.options={matcher: embeding}"])
    assert result.exit_code != 0
    assert "systems.a.options.matcher" in result.output
    assert "embeding" in result.output


def test_a_run_does_not_start_with_a_misspelled_option(tmp_path: Path) -> None:
    run = config("drafting", dataset={"clincian": "np-b"}).model_copy(update={"store": str(tmp_path / "r.sqlite")})
    with pytest.raises(OptionsError, match="clincian"):
        asyncio.run(execute(run, cache=False))
    assert not (tmp_path / "r.sqlite").exists()  # refused before the store is opened


def test_options_are_described_with_their_defaults() -> None:
    described = {o["name"]: o for o in describe_options(resolve_task("drafting").system_options["zero_shot"])}  # type: ignore[attr-defined]
    assert described["matcher"]["default"] == "'embedding'"
    assert described["guard"]["default"] == "'reject'"


def test_tasks_list_and_show_give_systems_and_options_with_defaults() -> None:
    listed = CliRunner().invoke(app, ["tasks", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    systems = {t["task"]: t["systems"] for t in json.loads(listed.output)}
    assert systems["drafting"][:2] == ["clinician_rag", "rag"]
    assert set(systems) >= set(CASES)
    shown = CliRunner().invoke(app, ["tasks", "show", "drafting", "--json"])
    assert shown.exit_code == 0, shown.output
    zero_shot = {o["name"]: o for o in json.loads(shown.output)["systems"]["zero_shot"]}
    assert zero_shot["matcher"]["type"] == "embedding | lexical | trained | llm"
    assert zero_shot["matcher"]["default"] == "'embedding'"
    table = CliRunner().invoke(app, ["tasks", "show", "discharge"])
    assert "fidelity_checker" in table.output
    missing = CliRunner().invoke(app, ["tasks", "show", "no-such-task"])
    assert missing.exit_code != 0
    assert "unknown task" in missing.output


@pytest.mark.parametrize("task", ["discharge", "sensemaking"])
def test_fidelity_verify_without_the_combined_checker_is_refused_at_config_check(task: str, tmp_path: Path) -> None:
    """The judge verifies only what the combined checker leaves uncertain; with another checker the option would do
    nothing, so it is refused before the run rather than failing every sample's fidelity step."""
    kind = CASES[task][0]
    path = tmp_path / "run.yaml"
    path.write_text(
        f"name: t\ntask: {task}\ndatasets: {{d: {{}}}}\n"
        f"systems: {{a: {{type: {kind}, options: {{fidelity_verify: true}}}}}}\nmodels: {{system: scripted/x}}\n"
    )
    result = CliRunner().invoke(app, ["config", "check", str(path)])
    assert result.exit_code != 0
    flat = " ".join(result.output.split())
    assert "systems.a.options: fidelity_verify asks the judge" in flat
    assert "set fidelity_checker: combined (it is 'llm')" in flat
    check_config(config(task, system={"fidelity_verify": True, "fidelity_checker": "combined"}), resolve_task(task))


def test_a_verify_scope_without_verify_is_refused_at_config_check() -> None:
    """``verify_scope: all`` says which pairs the verifier decides; with no verifier it would change nothing."""
    task = resolve_task("drafting")
    with pytest.raises(OptionsError, match="verify_scope: all says which pairs the verifier decides: set verify"):
        check_config(config("drafting", system={"verify_scope": "all"}), task)
    check_config(config("drafting", system={"verify": True, "verify_scope": "all"}), task)
