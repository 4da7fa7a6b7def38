"""Issue 35: a task defined in YAML only (docs/examples/own-task), run end to end on the scripted server.

The run config names the task file; the prompts, the CSV dataset with its column map, a lexical metric and a
rubric judge all come from it. The stored scores and the report are read back; a judge whose answers are
unusable leaves its scores absent with the failure counted, never a number.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs import Store, resolve_task
from bedside.runs.config import DatasetConfig
from bedside.runs.taskfile import TaskFileError
from bedside.testing import ScriptedServer

EXAMPLE = Path(__file__).parent.parent / "docs" / "examples" / "own-task"
ANSWER = "Please use acetaminophen and call us if the pain continues."
VERDICT = {
    "plain_language": {"score": 4, "justification": "Short sentences and no jargon.", "evidence": []},
    "actionable": {"score": 5, "justification": "Says when to call the clinic.", "evidence": []},
}
runner = CliRunner()


@pytest.fixture
def example(tmp_path: Path) -> Path:
    folder = tmp_path / "own-task"
    shutil.copytree(EXAMPLE, folder)
    return folder


def write_config(tmp_path: Path, task: Path, server: ScriptedServer, **changes: Any) -> Path:
    config: dict[str, Any] = {
        "name": "own",
        "task": str(task),
        "datasets": {"questions": {}},
        "systems": {"plain": {"type": "plain"}, "brief": {"type": "brief"}},
        "models": {"system": server.model_name("answerer"), "judge": server.model_name("judge")},
        "store": str(tmp_path / "runs.sqlite"),
        **changes,
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def rows_of(store_path: Path) -> list[Any]:
    store = Store(str(store_path))
    try:
        (run,) = store.runs()
        return store.results(run["id"])
    finally:
        store.close()


def report_of(tmp_path: Path) -> str:
    """``bedside report`` of the one run in the test's store, as Markdown."""
    store_path = str(tmp_path / "runs.sqlite")
    store = Store(store_path)
    try:
        run_id = store.runs()[0]["id"]
    finally:
        store.close()
    done = runner.invoke(app, ["report", run_id, "--output", str(tmp_path / "reports"), "--store", store_path])
    assert done.exit_code == 0, done.output
    return next((tmp_path / "reports").glob("*.md")).read_text(encoding="utf-8")


def test_a_yaml_task_runs_end_to_end_with_a_metric_and_a_judge(example: Path, tmp_path: Path) -> None:
    def reply(messages: Any) -> str:
        text = messages[-1].content
        if "Answer to rate" in text:
            return json.dumps(VERDICT)
        return ANSWER if "two or three" not in text else ANSWER + " Call today."  # each prompt its own answer

    with ScriptedServer(reply) as server:
        config = write_config(tmp_path, example / "task.yaml", server)
        checked = runner.invoke(app, ["config", "check", str(config), "--json"])
        assert checked.exit_code == 0, checked.output
        assert json.loads(checked.output)["scorers"] == ["rougeL", "bleu", "fkgl", "clarity"]
        result = runner.invoke(app, ["run", str(config), "--no-cache"])
        assert result.exit_code == 0, result.output
        assert server.stats()["requests"] == 12  # 3 questions x 2 prompts, one answer and one judgement each
    rows = rows_of(tmp_path / "runs.sqlite")
    assert len(rows) == 6
    assert {r.status for r in rows} == {"ok"}
    for row in rows:
        assert row.output["text"] == (ANSWER if "/plain/" in row.cell else ANSWER + " Call today.")
        assert row.scores["clarity"] == 4.5  # the rubric's mean of 4 and 5
        assert 0 < (row.scores["rougeL"] or 0) <= 1
        assert row.output["extra"]["judgements"]["clarity"]["scores"] == {"plain_language": 4.0, "actionable": 5.0}
    q1 = next(r for r in rows if r.sample_id == "q1" and r.cell.startswith("questions/plain/"))
    assert q1.sample["references"][0].startswith("Ibuprofen can raise")
    # The prompt file was rendered with the mapped column: a chat template (plain) keeps its system message.
    text = report_of(tmp_path)
    assert text.count("| 4.500 [4.500, 4.500] (n=3) |") == 2  # clarity, in both cells
    assert "## Judge failures" in text
    assert text.count("| clarity | 0 of 3 |") == 2


def test_prompts_are_rendered_from_the_mapped_columns(example: Path, tmp_path: Path) -> None:
    seen: list[str] = []

    def answer(messages: Any) -> str:
        seen.append("\n".join(f"{m.role}: {m.content}" for m in messages))
        return ANSWER

    with ScriptedServer(answer) as server:
        (example / "task.yaml").write_text(
            (example / "task.yaml").read_text().replace("judges:", "old_judges:", 1).split("old_judges:")[0]
        )
        config = write_config(tmp_path, example / "task.yaml", server, systems={"plain": {"type": "plain"}})
        assert runner.invoke(app, ["run", str(config), "--no-cache"]).exit_code == 0
    fasting = next(s for s in seen if "fast before my blood test" in s)
    assert fasting.startswith("system: You answer patients' questions")
    assert "user: How long should I fast before my blood test?" in fasting


def test_a_judge_that_never_answers_on_the_scale_is_absent_and_counted(example: Path, tmp_path: Path) -> None:
    rules = {"rules": [{"pattern": "Answer to rate", "reply": "I would rate it highly."}], "default": ANSWER}
    with ScriptedServer(rules) as server:
        config = write_config(tmp_path, example / "task.yaml", server, systems={"plain": {"type": "plain"}})
        result = runner.invoke(app, ["run", str(config), "--no-cache"])
        assert result.exit_code == 0, result.output
    # the run's own summary says so too, not only the report: every sample finished, every judge failed
    assert "failed steps in stored samples (clarity 3): their scores are absent" in " ".join(result.output.split())
    rows = rows_of(tmp_path / "runs.sqlite")
    assert len(rows) == 3
    for row in rows:
        assert row.status == "ok"  # the answer stands; only the judge failed
        assert row.scores["clarity"] is None  # absent, never 0
        assert row.scores["rougeL"] is not None
        assert "clarity" in row.output["extra"]["errors"]
    text = report_of(tmp_path)
    assert "| clarity | 3 of 3 |" in text  # the judge-failure table counts what is absent


def test_editing_a_prompt_reruns_the_samples(example: Path) -> None:
    before = resolve_task(str(example / "task.yaml")).load("q", DatasetConfig())
    (example / "prompts" / "brief.j2").write_text("Answer briefly: {{ question }}\n")
    after = resolve_task(str(example / "task.yaml")).load("q", DatasetConfig())
    assert before[0].inputs["task"] != after[0].inputs["task"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("metrics: [rougeL, bleu, fkgl]", "metrics: [rougeL, bleuu]"), "unknown metric(s) bleuu"),
        (("prompts:", "prompt:"), "unknown key 'prompt' (did you mean 'prompts'?); valid keys: classification,"),
        (("  brief: prompts/brief.j2", "  brief: prompts/missing.j2"), "prompts.brief: no such template file"),
        (
            ("inputs: {question: question, answer: output}", "inputs: {questoin: question}"),
            "takes no input(s) questoin",
        ),
    ],
)
def test_task_file_errors_name_the_file_and_key(example: Path, change: tuple[str, str], message: str) -> None:
    path = example / "task.yaml"
    path.write_text(path.read_text().replace(*change))
    with pytest.raises(TaskFileError) as caught:
        resolve_task(str(path))
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_a_dataset_row_without_a_mapped_column_names_the_line(example: Path) -> None:
    (example / "questions.csv").write_text("qid,question\nq1,Hello?\n")
    task = resolve_task(str(example / "task.yaml"))
    with pytest.raises(TaskFileError, match=r"questions.csv:2: no column 'patient_question' \(for question\)"):
        task.load("q", DatasetConfig())


def test_misspelled_dataset_options_of_a_task_file_fail_config_check(example: Path, tmp_path: Path) -> None:
    with ScriptedServer() as server:
        config = write_config(tmp_path, example / "task.yaml", server, datasets={"q": {"options": {"column": {}}}})
    result = runner.invoke(app, ["config", "check", str(config)])
    assert result.exit_code != 0
    assert "datasets.q.options.column: unknown option" in result.output


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("null.jsonl", '{"qid": "q1", "q": null}\n', "null.jsonl:1: question is null, not text"),
        ("object.jsonl", '{"qid": "q1", "q": {"a": 1}}\n', "object.jsonl:1: question is dict, not text"),
        ("bool.jsonl", '{"qid": true, "q": "Q"}\n', "bool.jsonl:1: id is bool, not text"),
        ("float.jsonl", '{"qid": 1.0, "q": "Q"}\n{"qid": 1, "q": "Q2"}\n', "float.jsonl:1: id 1.0 is a decimal number"),
        ("blank.csv", 'qid,q\n  ,"Q one"\n', "blank.csv:2: the id is blank"),
        (
            "twice.csv",
            "qid,q,q\nq1,Q one,Q again\n",
            "twice.csv:1: column 'q' is in the header twice (columns 2 and 3)",
        ),
    ],
)
def test_a_dataset_value_that_would_be_coerced_is_an_error_naming_the_line(
    tmp_path: Path, name: str, text: str, said: str
) -> None:
    """The second bad-input drill (issue 48): null became the text "None", an object its repr, ids 1.0 and 1 two
    samples, a blank id a sample, and a column named twice kept its last value."""
    from bedside.runs.taskfile import TaskFileError, read_samples

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TaskFileError) as caught:
        read_samples(path, {"id": "qid", "question": "q"})
    assert said in str(caught.value)


def test_a_prompt_reading_a_variable_the_dataset_does_not_give_fails_config_check(
    example: Path, tmp_path: Path
) -> None:
    # a columns map naming the variable wrong: every sample would fail at run time, one by one
    task = example / "task.yaml"
    task.write_text(task.read_text().replace("question: patient_question", "qustion: patient_question"))
    with ScriptedServer() as server:
        config = write_config(tmp_path, task, server)
    result = runner.invoke(app, ["config", "check", str(config)])
    assert result.exit_code == 1
    assert "uses 'question' (did you mean 'qustion'?)" in result.output
    assert "dataset 'questions' does not give" in result.output
    # a typo in the template is named the same way
    task.write_text(task.read_text().replace("qustion: patient_question", "question: patient_question"))
    prompt = example / "prompts" / "brief.j2"
    prompt.write_text(prompt.read_text().replace("{{ question }}", "{{ questoin }}"))
    result = runner.invoke(app, ["config", "check", str(config)])
    assert result.exit_code == 1
    assert "prompts.brief (brief.j2) uses 'questoin' (did you mean 'question'?)" in result.output


def test_a_run_whose_prompt_would_build_a_gigabyte_stops_each_sample_at_once(example: Path, tmp_path: Path) -> None:
    # issue 48: a size-producing template hung a run at 0 samples while memory grew to gigabytes
    (example / "prompts" / "plain.j2").write_text('{{ "%*s"|format(10**9, question) }}')
    with ScriptedServer() as server:
        config = write_config(tmp_path, example / "task.yaml", server, systems={"plain": {"type": "plain"}})
        result = runner.invoke(app, ["run", str(config), "--no-cache"])
    assert "format would build 1,000,000,000 characters" in result.output + str(
        [r.failure for r in rows_of(tmp_path / "runs.sqlite")]
    )
    assert all(r.status == "error" for r in rows_of(tmp_path / "runs.sqlite"))
    # a width the template fixes is refused before anything runs: `config check` names the file and line
    checked = runner.invoke(app, ["config", "check", str(config)])
    assert checked.exit_code == 1
    assert "plain.j2:1: format would build 1,000,000,000 characters" in " ".join(checked.output.split())
    # a width from the data cannot be known before a sample is rendered: the run stops that sample at once
    (example / "prompts" / "plain.j2").write_text("{{ question|center(question|length * 10**8) }}")
    assert runner.invoke(app, ["config", "check", str(config)]).exit_code == 0
