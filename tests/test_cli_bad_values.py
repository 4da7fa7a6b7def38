"""Option values that are out of range, and stores that do not exist: a clear error naming the option or the path,
never a silent result (issue 48's bad-input drill: a threshold of -1 scored unrelated text a perfect Edit-F1, a
concurrency of 0 hung, a misspelt --store listed no runs and left an empty database behind)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer._click as click_core
import typer.main
from typer.testing import CliRunner

from bedside.cli import app

RANGED = {
    "concurrency": 1,
    "limit": 0,
    "repeat": 1,
    "workers": 1,
    # "processes" also takes "auto": its floor is bedside's own check (tests/test_process_auto.py)
    "max_tokens": 1,
    "folds": 2,
    "max_repairs": 0,
    "k": 1,
    "threshold": 0,
}
"""Options whose value has a floor, and that floor at least."""


def _commands() -> list[tuple[str, Any]]:
    """Every command of the CLI (lazy groups loaded), by its path ("drafting editjudge")."""
    root = typer.main.get_command(app)
    found: list[tuple[str, Any]] = []

    def walk(command: Any, path: list[str], ctx: Any) -> None:
        if hasattr(command, "list_commands"):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                walk(sub, [*path, name], click_core.Context(sub, parent=ctx))
        else:
            found.append((" ".join(path), command))

    walk(root, [], click_core.Context(root))
    return found


def test_every_count_and_threshold_option_has_a_floor() -> None:
    unbounded = [
        f"{path} --{p.name}"
        for path, command in _commands()
        for p in command.params
        if p.name in RANGED and (getattr(p, "min", None) is None or p.min < RANGED[p.name])
    ]
    assert unbounded == []
    thresholds = [f"{path}" for path, command in _commands() for p in command.params if p.name == "threshold"]
    assert thresholds  # the check above saw them


def test_a_threshold_outside_0_1_is_refused_not_a_perfect_score() -> None:
    runner = CliRunner()
    base = ["drafting", "editjudge", "--reference", "Take your pills.", "--draft", "The weather is nice in Paris."]
    for bad in ("-1", "7", "nan"):
        result = runner.invoke(app, [*base, "--threshold", bad], env={"COLUMNS": "200"})
        assert result.exit_code == 2, bad
        assert "Invalid value for '--threshold'" in result.output, bad
        assert "Edit-F1" not in result.output


def test_a_temperature_the_settings_refuse_names_the_option() -> None:
    result = CliRunner().invoke(app, ["generate", "-m", "scripted/echo", "--no-cache", "--temperature", "-2", "hi"])
    assert result.exit_code == 1
    assert "--temperature -2.0: input should be greater than or equal to 0" in result.output
    assert "Traceback" not in result.output


def test_a_read_command_on_a_store_that_does_not_exist_says_so_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "store.sqlte"
    runner = CliRunner()
    for command in (["ls"], ["report", "some-run"], ["show", "some-run", "s1"], ["review", "list"], ["users", "list"]):
        result = runner.invoke(app, [*command, "--store", str(missing)])
        assert result.exit_code == 1, command
        assert f"no store at {missing}" in result.output, command
    assert not missing.parent.exists()


def test_a_run_config_threshold_outside_0_1_fails_config_check(tmp_path: Path) -> None:
    import pytest

    from bedside.tasks.drafting.matcher_kinds import make_matcher

    with pytest.raises(ValueError, match="threshold nan: a matcher's threshold is a similarity from 0 to 1"):
        make_matcher("embedding", threshold=float("nan"))
    path = tmp_path / "run.yaml"
    path.write_text(
        "name: x\ntask: drafting\ndatasets: {demo: {limit: 1}}\nsystems: {zero_shot: {options: {threshold: -1}}}\n"
        "models: {system: [scripted/echo]}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 1
    assert "threshold" in result.output


def test_a_blank_reference_or_draft_is_refused_as_pairs_refuse_it() -> None:
    runner = CliRunner()
    for args, option in (
        (["--reference", " ", "--draft", "Rest."], "--reference"),
        (["--reference", "Rest.", "--draft", ""], "--draft"),
    ):
        result = runner.invoke(app, ["drafting", "editjudge", *args])
        assert result.exit_code == 1
        assert f"{option} is blank" in result.output


def test_a_leaderboard_with_nothing_to_rank_is_an_error(tmp_path: Path) -> None:
    from bedside.runs.store import Store

    path = tmp_path / "store.sqlite"
    Store(str(path)).close()
    result = CliRunner().invoke(app, ["leaderboard", "--task", "nosuch", "--store", str(path)], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "no run of task nosuch in this store has a scored cell" in result.output


def test_fidelity_eval_of_only_the_llm_checker_without_a_judge_is_an_error() -> None:
    result = CliRunner().invoke(app, ["sim", "fidelity-eval", "--checkers", "llm"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "--checkers llm needs a judge: give --model" in result.output


def test_citeqa_answer_exits_1_when_a_case_failed(tmp_path: Path) -> None:
    cases = (
        Path(__file__).resolve().parents[1] / "src" / "bedside" / "tasks" / "citeqa" / "data" / "synthetic_cases.jsonl"
    )
    out = tmp_path / "answers.json"
    args = ["citeqa", "answer", "--cases", str(cases), "--system", "one_stage", "-m", "scripted/echo", "--limit", "1"]
    result = CliRunner().invoke(app, [*args, "--no-cache", "--metrics", "none", "-o", str(out)])
    assert result.exit_code == 1
    assert "1 case(s) failed" in " ".join(result.output.split())
    assert out.is_file()  # what was answered is still written


def test_a_misspelt_record_view_and_a_repeated_fidelity_id_are_refused(tmp_path: Path) -> None:
    runner = CliRunner()
    view = runner.invoke(app, ["instruct", "match", "x.csv", "--view", "tmeline"], env={"COLUMNS": "200"})
    assert view.exit_code == 2
    assert "'tmeline' is not one of 'paper', 'timeline'" in view.output
    row = '{"id": "a", "facts": ["I take aspirin."], "sentences": ["I take aspirin."], "labels": ["entailed"]}'
    path = tmp_path / "set.jsonl"
    path.write_text(row + "\n" + row + "\n", encoding="utf-8")
    result = runner.invoke(app, ["sim", "fidelity-eval", "--set", str(path), "--checkers", "embedding"])
    assert result.exit_code == 1
    assert f"{path}:2: id 'a' is also on line 1" in " ".join(result.output.split())


def test_a_repeated_judgement_whose_every_draw_failed_exits_1() -> None:
    args = ["judges", "run", "sensemaking_severity", "-i", "conversation=I feel sad", "-m", "scripted/echo"]
    result = CliRunner().invoke(app, [*args, "--repeat", "2", "--no-cache"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "every one of the 2 draws failed: no score" in result.output


def test_a_negative_reserve_is_refused() -> None:
    result = CliRunner().invoke(app, ["records", "render", "x.jsonl", "--reserve", "-50"], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "--reserve" in result.output


def test_a_user_name_differing_only_in_case_is_refused(tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite")
    runner = CliRunner()
    env = {"COLUMNS": "200"}
    args = ["--role", "annotator", "--password-stdin", "--store", store]
    first = runner.invoke(app, ["users", "add", "ann1", *args], input="correct horse battery\n", env=env)
    assert first.exit_code == 0, first.output
    second = runner.invoke(app, ["users", "add", "ANN1", *args], input="correct horse battery\n", env=env)
    assert second.exit_code == 1
    assert "user 'ann1' exists already: names that differ only in case are refused" in second.output


def test_instruct_labels_that_would_be_coerced_or_counted_nowhere_are_refused(tmp_path: Path) -> None:
    """The drill: correct "yes" was read as true, rank 99 among 4 models raised a mean rank, and a label for an
    instruction the file does not hold was counted."""
    import json

    data = Path(__file__).resolve().parents[1] / "src" / "bedside" / "tasks" / "instruct" / "data"
    base = {"instruction_id": "syn-01", "model": "m1", "correct": True, "rank": 1}
    cases = [
        ([{**base, "correct": "yes"}], "correct: Input should be a valid boolean"),
        ([base, {**base, "model": "m2", "rank": 9}], "rank 9 for m2 on syn-01 is above the 2 responses ranked there"),
        ([{**base, "instruction_id": "syn-999"}], "labels for instruction(s) not in the instructions file: 'syn-999'"),
    ]
    runner = CliRunner()
    for rows, said in cases:
        path = tmp_path / "labels.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        args = ["instruct", "evaluate", str(path), "-i", str(data / "synthetic_instructions.jsonl")]
        result = runner.invoke(app, args, env={"COLUMNS": "300"})
        assert result.exit_code == 1, said
        assert said in " ".join(result.output.split()), result.output


def test_a_citeqa_case_that_contradicts_itself_is_refused(tmp_path: Path) -> None:
    """The drill: a key that left a sentence unlabelled, a reference answer citing |42| of a 2-sentence note,
    and a sentence with no text were read as they were."""
    import json

    import pytest

    from bedside.tasks.citeqa.cases import Case

    base = {
        "id": "c1",
        "narrative": "Why was I given aspirin?",
        "clinician_question": "Why aspirin?",
        "sentences": [{"id": "1", "text": "Aspirin was given."}, {"id": "2", "text": "He went home."}],
        "relevance": {"1": "essential", "2": "not-relevant"},
    }
    for change, said in (
        ({"relevance": {"1": "essential"}}, "the key labels no relevance for sentence(s) ['2']"),
        ({"reference_answer": "For the heart |42|."}, "the reference answer cites sentence(s) the case lacks: ['42']"),
        ({"sentences": [{"id": "1", "text": "Aspirin."}, {"id": "2", "text": " "}]}, "sentence(s) ['2'] have no text"),
    ):
        with pytest.raises(ValueError, match="case c1: ") as caught:
            Case.model_validate(json.loads(json.dumps({**base, **change})))
        assert said in str(caught.value)


def test_a_power_analysis_with_no_answer_says_so() -> None:
    runner = CliRunner()
    nan = runner.invoke(app, ["instruct", "power", "--sd", "nan"])
    assert nan.exit_code == 1
    assert "standard error must be a positive number, not nan" in nan.output
    chance = runner.invoke(app, ["instruct", "power", "--sd", "0.014", "--alpha", "0.9", "--power", "0.2"])
    assert chance.exit_code == 1  # the quantiles sum below zero: it printed a negative difference
    assert "no minimum detectable difference" in chance.output
    assert runner.invoke(app, ["instruct", "power", "--sd", "0.014", "--df", "4"]).exit_code == 0


def test_a_discharge_case_with_an_unknown_sex_is_refused(tmp_path: Path) -> None:
    import json

    from bedside.tasks.discharge.task import SYNTHETIC_CASES

    rows = [json.loads(line) for line in SYNTHETIC_CASES.read_text().splitlines() if line.strip()]
    rows[1]["demographics"]["sex"] = "banana"  # told to the patient agent as its sex
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = CliRunner().invoke(app, ["discharge", "cases", str(cases)])
    assert result.exit_code == 1
    assert "cases.jsonl:2" in result.output
    assert "demographics.sex" in result.output
    rows[1]["demographics"]["sex"] = "F"  # MIMIC's spelling is read
    cases.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert CliRunner().invoke(app, ["discharge", "cases", str(cases)]).exit_code == 0


def test_a_second_label_by_one_annotator_is_refused_not_collapsed(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    row = '{{"item": {item}, "metric": "flow", "annotator": "{who}", "agree": {vote}}}\n'
    labels.write_text(
        row.format(item='"i1"', who="ana", vote="true") + row.format(item='"i1"', who="ana", vote="false")
    )
    result = CliRunner().invoke(app, ["sensemaking", "human-agreement", str(labels)])
    assert result.exit_code == 1  # the second label silently replaced the first
    assert "labels.jsonl:2" in result.output
    assert "first on line 1" in result.output
    labels.write_text(
        row.format(item='"i1"', who="Ana", vote="true") + row.format(item='"i2"', who="ana ", vote="true")
    )
    result = CliRunner().invoke(app, ["sensemaking", "human-agreement", str(labels)])
    assert result.exit_code == 1
    assert "only in case or spaces" in result.output
    labels.write_text(row.format(item=1, who="ana", vote="true") + row.format(item='"1"', who="ana", vote="false"))
    result = CliRunner().invoke(app, ["sensemaking", "human-agreement", str(labels)])
    assert result.exit_code == 1  # item 1 and item "1" are one item


def test_discharge_cases_warns_of_a_case_with_no_exam_questions(tmp_path: Path) -> None:
    """A case with ``questions: []`` runs with its exam skipped: visible in the run, and now said when the cases
    are listed, before anything runs."""
    import json

    from bedside.tasks.discharge.task import SYNTHETIC_CASES

    rows = [json.loads(line) for line in SYNTHETIC_CASES.read_text().splitlines() if line.strip()]
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(row) + "\n" for row in rows))
    quiet = CliRunner().invoke(app, ["discharge", "cases", str(cases)])
    assert quiet.exit_code == 0, quiet.output
    assert "no exam questions" not in quiet.output
    rows[0]["questions"] = []
    cases.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = CliRunner().invoke(app, ["discharge", "cases", str(cases)])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert f"1 case(s) have no exam questions ({rows[0]['id']})" in flat
    listed = CliRunner().invoke(app, ["discharge", "cases", str(cases), "--json"])
    assert json.loads(listed.stdout)[0]["questions"] == 0  # the warning stays off stdout
