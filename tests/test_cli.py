from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import bedside
from bedside.cli import app
from bedside.testing import ScriptedServer

runner = CliRunner()


def test_generate_prints_text_and_json_with_usage(cache_path: Path) -> None:
    with ScriptedServer({"headache": "Drink water and rest."}) as server:
        plain = runner.invoke(app, ["generate", "-m", server.model_name(), "--cache", str(cache_path), "headache?"])
        assert plain.exit_code == 0, plain.output
        assert plain.output.strip() == "Drink water and rest."
        result = runner.invoke(
            app, ["generate", "-m", server.model_name(), "--cache", str(cache_path), "--json", "headache?"]
        )
        assert result.exit_code == 0, result.output
        assert server.stats()["requests"] == 1
    data = json.loads(result.output)
    assert data["text"] == "Drink water and rest."
    assert data["cached"] is True
    assert data["usage"] == {"prompt_tokens": 1, "completion_tokens": 4, "total_tokens": 5}


def test_generate_reports_errors_without_a_traceback() -> None:
    result = runner.invoke(app, ["generate", "-m", "nosuch/model", "hi"])
    assert result.exit_code == 1
    assert "unknown model provider 'nosuch'" in result.output
    assert "Traceback" not in result.output


def test_demo_runs_on_a_scripted_model(tmp_path: Path) -> None:
    store, reports = tmp_path / "demo.sqlite", tmp_path / "reports"
    full_sizes = ["--limit", "0", "--citeqa-cases", "10"]  # every synthetic message and grounded-QA case
    result = runner.invoke(
        app,
        ["demo", "-m", "scripted/demo", "--no-cache", "--store", str(store), "--reports", str(reports), *full_sizes],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    # Drafting: zero-shot and thematic on all 14 synthetic messages, through a stored run, scored with EditJudge.
    assert "portal reply drafting: zero-shot and thematic" in result.output
    assert "EditJudge: content and theme level, micro-averaged" in result.output
    assert "IAP:" in result.output  # the table wraps at the runner's 80 columns; the full row is in the report
    assert "Theme proportions" in result.output
    # Discharge: one simulated conversation through a stored run; the echo model cannot write JSON documents, so
    # those steps are recorded as failed, not scored.
    assert "discharge education by simulation" in result.output
    assert "DischargeSim Table 1" in result.output
    # Sensemaking: one conversation; the echo model cannot write the JSON answers, so the sample is an error.
    assert "mental-health sensemaking" in result.output
    assert "EM " in result.output
    pages = list(reports.glob("demo-drafting-*.html"))
    assert len(pages) == 1
    page = pages[0].read_text(encoding="utf-8")
    assert "Theme-level Edit-F1 per theme" in page
    assert "IAP: demo (embedding, 8 cases)" in page
    assert "demo/zero_shot/scripted/demo" in page
    # The echoing model's draft contains the prompt: the chart as of 2026-03-14 (lisinopril active, amlodipine
    # ended that day) was what the model saw.
    from bedside.runs import Store

    opened = Store(str(store))
    try:
        (run,) = [r for r in opened.runs() if r["task"] == "drafting"]
        rows = {(r.system, r.sample_id): r for r in opened.results(run["id"])}
        (citeqa_run,) = [r for r in opened.runs() if r["task"] == "citeqa"]
        citeqa_rows = opened.results(citeqa_run["id"])
    finally:
        opened.close()
    assert len(rows) == 28
    first = rows[("zero_shot", "demo-01-msg1")].output["text"]  # type: ignore[index]
    assert "-lisinopril 10 MG Oral Tablet" in first
    assert "amlodipine" not in first
    # The grounded-QA part runs too, as a stored run (`bedside ls` lists it with the others); an echoing model
    # never writes valid cited JSON, and each failure is stored and shown with its cause.
    assert "grounded answers with citations: 2-stage system, 10 synthetic cases" in result.output
    assert citeqa_run["name"] == "demo-citeqa"
    assert sorted(r.status for r in citeqa_rows) == ["error"] * 10
    assert "0 of 10 cases answered; 10 failed, each listed above with its cause" in " ".join(result.output.split())
    assert "failed: StructuredOutputError" in result.output
    # Each section says what it took and names its full version; the total closes the demo, with the next commands.
    for section, config in [
        ("drafting", "drafting-demo"),
        ("citeqa", "citeqa-systems"),
        ("discharge", "discharge-demo"),
        ("sensemaking", "sensemaking-demo"),
        ("instruct", "instruct-demo"),
    ]:
        line = next(line for line in result.output.splitlines() if line.startswith(f"{section}: "))
        assert " s wall (" in line, line
        assert "repetition guard fired 0 time(s)" in line, line
        assert f"full version: bedside run configs/{config}.yaml" in line, line
    assert "Demo: wall time per section" in result.output
    assert next(line for line in result.output.splitlines() if line.startswith("| total |"))
    assert f"bedside ls --store {store}" in result.output


def test_the_demo_is_one_small_case_per_section_by_default(tmp_path: Path) -> None:
    """The sizes behind the demo's wall time (README): 1 message x 2 drafting systems, 1 grounded-QA case, one
    conversation per simulation, one instruction x 3 instruct systems."""
    from bedside.runs import Store

    store = tmp_path / "demo.sqlite"
    result = runner.invoke(
        app,
        ["demo", "-m", "scripted/demo", "--no-cache", "--store", str(store), "--reports", str(tmp_path / "r")],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    opened = Store(str(store))
    try:
        results = {run["name"]: opened.results(run["id"]) for run in opened.runs()}
    finally:
        opened.close()
    assert {name: len(rows) for name, rows in results.items()} == {
        "demo-drafting": 2,
        "demo-citeqa": 1,
        "demo-discharge": 1,
        "demo-sensemaking": 1,
        "demo-instruct": 3,
    }
    # the discharge conversation's later steps at their demo sizes: three exam questions per setting, no judge
    (discharge,) = results["demo-discharge"]
    assert discharge.output is not None
    extra = discharge.output["extra"]
    totals = {setting: exam["total"] for setting, exam in extra["exam"].items()}
    assert totals.pop("summary", 3) == 3  # taken only when the scripted model wrote a valid summary
    assert totals == {"dialogue": 3, "none": 3}
    assert extra["judgements"] == {}
    assert [c["role"] for c in discharge.calls or []].count("judge") == 0
    # the echoing model never writes the checklist as JSON: the demo shows the failed-steps table with the cause
    assert extra["errors"]["checklist"].startswith("StructuredOutputError: ")
    assert "Failed and skipped steps" in result.output
    # the demo prints the conversation's first four turns and says where the rest is
    turns = len(discharge.output["transcript"])
    assert turns > 4
    hint = f"... {turns - 4} more turn(s): `bedside show demo-discharge-"
    assert hint in " ".join(result.output.split())
    assert f"{discharge.sample_id} --store {store}` prints the whole conversation" in " ".join(result.output.split())
    assert sum(" Doctor: " in line for line in result.output.splitlines()) == 2  # turns 1 and 3 of the four
    assert "grounded answers with citations: 2-stage system, 1 synthetic cases" in result.output


def test_demo_sends_the_api_key_with_every_request(tmp_path: Path) -> None:
    """Issue 19: the run-based sections used to drop --api-key-env, so their requests went unauthenticated."""
    from bedside.runs import Store

    store = tmp_path / "demo.sqlite"
    with ScriptedServer(api_key="sekret") as server:
        result = runner.invoke(
            app,
            [
                "demo",
                "-m",
                server.model_name(),
                "--api-key-env",
                "DEMO_TEST_KEY",
                "--limit",
                "1",
                "--citeqa-cases",
                "1",
                "--discharge-conversations",
                "1",
                "--sensemaking-conversations",
                "1",
                "--instruct-instructions",
                "1",
                "--store",
                str(store),
                "--reports",
                str(tmp_path / "reports"),
                "--cache",
                str(tmp_path / "cache.sqlite"),
            ],
            env={"DEMO_TEST_KEY": "sekret", "COLUMNS": "200"},
        )
        stats = server.stats()
    assert result.exit_code == 0, result.output
    assert "401" not in stats["answers"], stats
    assert stats["answers"].get("ok") == stats["requests"] > 0
    # Every section made requests of its own, each a stored run: counted through their stored samples' usage
    opened = Store(str(store))
    try:
        calls = {
            run["name"]: sum(u.get("calls", 0) for row in opened.results(run["id"]) for u in row.usage.values())
            for run in opened.runs()
        }
    finally:
        opened.close()
    assert set(calls) == {"demo-drafting", "demo-citeqa", "demo-discharge", "demo-sensemaking", "demo-instruct"}
    assert all(n > 0 for n in calls.values()), calls


def test_serve_scripted_from_the_shell(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - pattern: refill\n    reply: Refill sent to your pharmacy.\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "bedside.cli", "serve-scripted", "--port", "0", "--rules", str(rules)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "serving scripted answers on http://127.0.0.1:" in line
        base_url = line.split(" on ", 1)[1].strip()
        result = runner.invoke(
            app, ["generate", "-m", f"openai-compatible/x@{base_url}", "--no-cache", "need a refill"]
        )
        assert result.output.strip() == "Refill sent to your pharmacy."
    finally:
        process.terminate()
        process.wait(timeout=120)


def test_task_command_groups_come_from_entry_points_and_the_core_imports_no_task(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.metadata

    import typer

    from bedside.cli import register_groups

    toy = typer.Typer()

    @toy.command()
    def hello() -> None:
        typer.echo("hello from a plugin")

    extra = [
        importlib.metadata.EntryPoint(name="toy", value=f"{__name__}:_TOY", group="bedside.cli"),
        importlib.metadata.EntryPoint(name="broken", value="no_such_module:app", group="bedside.cli"),
    ]
    real = importlib.metadata.entry_points
    monkeypatch.setattr(
        importlib.metadata,
        "entry_points",
        lambda group: [*real(group=group), *extra] if group == "bedside.cli" else real(group=group),
    )
    globals()["_TOY"] = toy
    root = typer.Typer()

    @root.callback()
    def main() -> None: ...

    added = register_groups(root)
    assert {"drafting", "citeqa", "discharge", "sensemaking", "instruct", "train", "toy"} <= set(added)
    assert "broken" not in added  # left out with a warning, the rest still work
    result = CliRunner().invoke(root, ["toy", "hello"])
    assert result.output.strip() == "hello from a plugin"

    core = Path(bedside.__file__).parent
    for module in core.rglob("*.py"):
        relative = module.relative_to(core)
        if relative.parts[0] == "tasks" or relative == Path("cli/demo.py"):
            continue  # the tasks themselves, and the demo, which runs each shipped task on purpose
        source = module.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import) bedside\.tasks", source, re.MULTILINE), relative


def test_the_demo_says_why_a_conversation_ended_at_its_limit_is_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo's 4-message limit ends the sensemaking conversation at the hard limit, which the paper's tables
    exclude: the section says so instead of leaving empty comparison tables unexplained."""
    from bedside.cli.demo import _demo_sensemaking
    from bedside.runs import Store
    from bedside.testing.scripted_answers import SensemakingScript

    store = str(tmp_path / "demo.sqlite")
    with ScriptedServer(rules=SensemakingScript()) as server:
        _demo_sensemaking(server.model_name(), conversations=1, cache=False, store=store, api_key_env=None)
    opened = Store(store)
    try:
        (run,) = opened.runs()
        (row,) = opened.results(run["id"])
    finally:
        opened.close()
    assert row.output is not None
    assert row.output["extra"]["termination"] == "hard_limit"
    extra = row.output["extra"]
    judges = {k.removeprefix("judge_") for k in (*extra["errors"], *extra["skipped"]) if k.startswith("judge_")}
    assert set(extra["judgements"]) | judges == {"flow", "hard"}  # the demo's two judges, soft accuracy not asked
    printed = " ".join(capsys.readouterr().out.split())
    assert "1 conversation(s) ended at the demo's message limit (hard_limit): the paper's comparisons" in printed
    assert "`bedside run configs/sensemaking-demo.yaml` runs whole conversations" in printed
