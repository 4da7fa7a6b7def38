"""Every table the CLI prints stays whole off a terminal (a log, CI, a pipe): no header or cell is cut at 80 columns."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

import bedside.console
from bedside.cli import app
from bedside.console import markdown_table, show_table
from bedside.testing import ScriptedServer

DEMO_COHORT = Path(bedside.__file__).parent / "data" / "demo" / "cohort.jsonl"


def test_off_a_terminal_a_wide_table_is_markdown_with_nothing_cut() -> None:
    table = Table(title="EditJudge [bold]content[/] level", caption="a caption | with a pipe")
    for header in ("cell", "content Edit-F1 (micro)", "matcher failures", "judge flagged"):
        table.add_column(header)
    table.add_row("demo/thematic/embedded/smollm2-135m", "0.412 [0.301, 0.530]", "3", "[red]1[/]")
    console = Console(width=80, file=io.StringIO(), force_terminal=False)
    show_table(table, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "…" not in text
    assert "| cell | content Edit-F1 (micro) | matcher failures | judge flagged |" in text
    assert "| demo/thematic/embedded/smollm2-135m | 0.412 [0.301, 0.530] | 3 | 1 |" in text
    assert "**EditJudge content level**" in text
    assert "a caption \\| with a pipe" in text


@pytest.mark.parametrize("terminal", [False, True])
def test_a_task_table_prints_its_names_as_written_not_as_markup(terminal: bool) -> None:
    """Metric names carry square brackets (``concept_f1[umls]``): rich would read them as markup and drop them."""
    from bedside.cli.app import print_task_tables
    from bedside.runs.task import ReportTable

    table = ReportTable(
        title="Table 2 [summary]",
        columns=["cell", "concept_f1[mesh]"],
        rows=[["synthetic/dischargesim/embedded/smollm2-135m", "[bold]0.40[/bold]"]],
        note="UMLS-F is concept_f1[umls]; BLEURT is bleurt[src=none]",
    )
    console = Console(width=400, file=io.StringIO(), force_terminal=terminal)
    print_task_tables([table], console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    for written in ("Table 2 [summary]", "concept_f1[mesh]", "[bold]0.40[/bold]", "concept_f1[umls]", "[src=none]"):
        assert written in text, written


@pytest.fixture
def printed_tables(monkeypatch: pytest.MonkeyPatch) -> list[Table]:
    """Every table a command hands to ``show_table``."""
    seen: list[Table] = []

    def spy(table: Table) -> str:
        seen.append(table)
        return markdown_table(table)

    monkeypatch.setattr(bedside.console, "markdown_table", spy)
    return seen


def _scripted_run(tmp_path: Path, server: ScriptedServer, name: str) -> dict[str, Any]:
    config = {
        "name": name,
        "task": "drafting",
        "datasets": {"demo": {"limit": 2}},
        "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},
        "models": {"system": [server.model_name(name)]},
        "scorers": ["words"],
        "store": str(tmp_path / "store.sqlite"),
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return {"path": path, "store": config["store"]}


def test_every_table_the_cli_prints_keeps_its_headers_whole_at_80_columns(
    tmp_path: Path, printed_tables: list[Table]
) -> None:
    runner = CliRunner()
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        json.dumps({"id": "p1", "draft": "Keep taking it. Call us.", "reference": "Keep taking it for now."}) + "\n",
        encoding="utf-8",
    )
    commands: list[list[str]] = [
        ["metrics", "list"],
        ["records", "show", str(DEMO_COHORT)],
        ["drafting", "editjudge", "--pairs", str(pairs), "--matcher", "lexical"],
        ["drafting", "editjudge", "--reference", "Keep taking it for now.", "--draft", "Keep taking it."],
        ["discharge", "cases"],
        ["sensemaking", "cases"],
        ["instruct", "taxonomy"],
        ["instruct", "cases"],
    ]
    with ScriptedServer() as server:
        a = _scripted_run(tmp_path, server, "run-a")
        b = _scripted_run(tmp_path, server, "run-b")
        for run in (a, b):
            assert runner.invoke(app, ["run", str(run["path"]), "--no-cache"]).exit_code == 0
        commands += [["ls", "--store", a["store"]]]
        listed = runner.invoke(app, ["ls", "--store", a["store"]]).output.splitlines()
        ids = [line.split("|")[1].strip() for line in listed if line.startswith("| run-")]
        commands += [["compare", ids[0], ids[1], "--store", a["store"]]]
    for command in commands:
        before = len(printed_tables)
        result = runner.invoke(app, command, env={"COLUMNS": "80"})
        assert result.exit_code == 0, (command, result.output)
        assert len(printed_tables) > before, f"{command} printed no table"
        assert "…" not in result.output, command
        for table in printed_tables[before:]:
            for column in table.columns:
                header = bedside.console._plain(column.header)
                if table.show_header and header:
                    assert header in result.output, (command, header)


def test_commands_that_print_results_print_json_on_request(tmp_path: Path) -> None:
    runner = CliRunner()
    with ScriptedServer() as server:
        run = _scripted_run(tmp_path, server, "json-run")
        ran = runner.invoke(app, ["run", str(run["path"]), "--no-cache", "--json"])
    assert ran.exit_code == 0, ran.output
    summary = json.loads(ran.stdout)
    assert (summary["ran"], summary["errors"]) == (2, 0)
    assert summary["usage"]["system"]["calls"] == 2
    listed = json.loads(runner.invoke(app, ["ls", "--store", run["store"], "--json"]).stdout)
    assert [r["id"] for r in listed] == [summary["run"]]
    assert (listed[0]["planned"], listed[0]["samples"]) == (2, 2)  # a failed run's stored samples read against it
    exported = runner.invoke(app, ["export", summary["run"], "--store", run["store"]]).stdout
    sample_id = json.loads(exported.splitlines()[0])["sample_id"]
    shown = json.loads(
        runner.invoke(app, ["show", summary["run"], sample_id, "--store", run["store"], "--json"]).stdout
    )
    assert shown[0]["status"] == "ok"
    records = json.loads(runner.invoke(app, ["records", "show", str(DEMO_COHORT), "--json"]).stdout)
    assert len(records) == 12
    assert all(r["counts"] for r in records)
    rubrics = json.loads(runner.invoke(app, ["judges", "list", "--json"]).stdout)
    assert rubrics
    shown_rubric = json.loads(runner.invoke(app, ["judges", "show", rubrics[0]["id"], "--json"]).stdout)
    assert shown_rubric["messages"][0]["role"] in {"system", "user"}


def test_off_a_terminal_a_long_section_heading_is_printed_whole() -> None:
    from bedside.console import show_rule

    console = Console(width=80, file=io.StringIO(), force_terminal=False)
    title = "portal reply drafting: zero-shot and thematic, scored with EditJudge (embedding matcher)"
    show_rule(f"[bold]{title}[/]", console)
    assert console.file.getvalue() == f"== {title} ==\n"  # type: ignore[attr-defined]


def test_help_text_is_printed_as_written_not_read_as_markup() -> None:
    """Help strings are plain text: Rich markup mode dropped every "[default: ...]" and drew "A:B:" as an emoji."""
    shown = CliRunner().invoke(app, ["instruct", "agreement", "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    assert "[default: meteor, google_bleu, rougeL, chrf++, bleu]" in text
    assert "A:B: compare two metric rows" in text
    assert "[default: the two best metrics" in text


def test_off_a_terminal_a_suggested_command_is_printed_on_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = (
        "from bedside.console import out; "
        "out.print('3 error(s); every table: `bedside report a-very-long-run-name-0123456789 --store "
        "sqlite:////a/rather/long/folder/name/that/goes/on/runs.sqlite`', highlight=False, markup=False)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.count("\n") == 1, done.stdout  # one line, however long
    assert "--store sqlite:////a/rather/long/folder/name/that/goes/on/runs.sqlite`" in done.stdout
