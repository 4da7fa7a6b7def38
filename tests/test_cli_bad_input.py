"""The command given issue 21's malformed files: a one-line error naming the file, a non-zero exit, no traceback.

Each case runs a real command on a file that used to end in a Python traceback (deep JSON, a 5,000-digit integer,
a year 99999 or year 1, an XML encoding with no codec, undecodable bytes, wrong JSON types). One case runs the
installed command in a subprocess, where a traceback would actually be printed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from bedside.cli import app
from bedside.cli.app import BedsideGroup
from bedside.inputs import InputError

DEEP = b"[" * 50_000 + b"]" * 50_000
HUGE_INT = b"9" * 5_000
MEDALIGN = (
    '<?xml version="1.0" encoding="{encoding}"?>\n<record>\n<visit type="Office" start="{start}">\n'
    '<day start="{start}">\n<person>\nBirth: {birth}\n</person>\n'
    '<measurement start="{start}"><code>[LOINC/1] BP 120/80</code></measurement>\n</day>\n</visit>\n</record>\n'
)


def medalign(encoding: str = "UTF-8", start: str = "10/08/2018 20:00", birth: str = "01/02/1970") -> bytes:
    return MEDALIGN.format(encoding=encoding, start=start, birth=birth).encode()


# (name of the case, file name, content, command line with FILE for the file's path)
CASES: list[tuple[str, str, bytes, list[str]]] = [
    ("fhir deep json", "bundle.json", b'{"resourceType": "Bundle", "entry": ' + DEEP + b"}", ["records", "show"]),
    ("fhir year 99999", "bundle.json", b'{"resourceType": "Bundle", "entry": [{"resource": {"resourceType": '
     b'"Patient", "id": "p", "birthDate": "99999-01-01"}}]}', ["records", "show"]),
    ("fhir offset before year 1", "bundle.json", b'{"resourceType": "Bundle", "entry": [{"resource": {'
     b'"resourceType": "Patient", "id": "p", "deceasedDateTime": "0001-01-01T00:00:00+05:00"}}]}', ["records", "show"]),
    ("medalign year 99999", "patient.xml", medalign(start="10/08/99999 20:00"), ["records", "show"]),
    ("medalign birth year 1", "patient.xml", medalign(birth="01/02/0001"), ["records", "show"]),
    ("medalign unknown encoding", "patient.xml", medalign(encoding="x-no-such-codec"), ["records", "show"]),
    ("records jsonl huge int", "cohort.jsonl", b'{"patient": {"id": ' + HUGE_INT + b"}}\n", ["records", "show"]),
    ("records jsonl year 9999", "cohort.jsonl", b'{"patient": {"id": "a", "birth_date": "9999-12-31"}}\n',
     ["records", "render", "--as", "chart"]),
    ("citeqa cases unknown encoding", "cases.xml", b'<?xml version="1.0" encoding="x-bogus"?><annotations/>',
     ["citeqa", "score", "SUBMISSION", "--cases"]),
    ("citeqa submission deep", "submission.json", DEEP, ["citeqa", "score", "--cases", "CASES"]),
    ("discharge cases deep", "cases.jsonl", b'{"id": ' + DEEP + b"}\n", ["discharge", "cases"]),
    ("sensemaking cases undecodable", "cases.jsonl", b'{"id": "caf\xe9"}\n', ["sensemaking", "cases"]),
    ("instruct gold undecodable", "gold.tsv", b"instruction_id\tquestion\n1\tcaf\xe9\n",
     ["instruct", "cases", "--instructions"]),
    ("drafting pairs huge int", "pairs.jsonl", b'{"id": ' + HUGE_INT + b"}\n",
     ["drafting", "editjudge", "--matcher", "lexical", "--pairs"]),
    ("config huge int", "run.yaml", b"name: x\nconcurrency: " + HUGE_INT + b"\n", ["config", "check"]),
    ("rubric toml deep", "rubric.toml", b"x = " + b"[" * 20_000 + b"]" * 20_000 + b"\n", ["judges", "show"]),
    ("train sft wrong types", "sft.jsonl", b'{"messages": {"role": "user"}}\n',
     ["train", "sft", "--output", "OUT", "--data"]),
    # Issue 37: empty inputs and self-contradicting ones used to pass without a word.
    ("discharge cases empty", "cases.jsonl", b"\n\n", ["discharge", "cases"]),
    ("sensemaking cases empty", "cases.jsonl", b"", ["sensemaking", "cases"]),
    ("instruct gold header only", "gold.tsv", b"instruction_id\tquestion\n", ["instruct", "cases", "--instructions"]),
    ("drafting pairs empty", "pairs.jsonl", b"", ["drafting", "editjudge", "--matcher", "lexical", "--pairs"]),
    ("citeqa submission empty list", "submission.json", b"[]", ["citeqa", "score", "--cases", "CASES"]),
    ("citeqa submission duplicate key", "submission.json", b'[{"case_id": "1", "case_id": "2", "answer": "x"}]',
     ["citeqa", "score", "--cases", "CASES"]),
    ("records jsonl empty", "cohort.jsonl", b"", ["records", "show"]),
    ("fhir duplicate ids", "bundle.json", b'{"resourceType": "Bundle", "entry": [{"resource": {"resourceType": '
     b'"Patient", "id": "p"}}, {"resource": {"resourceType": "Patient", "id": "p"}}]}', ["records", "show"]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "filename", "content", "command"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_a_non_zero_exit(
    tmp_path: Path, name: str, filename: str, content: bytes, command: list[str]
) -> None:
    path = tmp_path / filename
    path.write_bytes(content)
    submission = tmp_path / "ok-submission.json"
    submission.write_text('[{"case_id": "1", "answer": "x |1|"}]')
    cases = tmp_path / "ok-cases.jsonl"
    cases.write_text(
        '{"id": "1", "narrative": "n", "clinician_question": "q", "sentences": [{"id": "1", "text": "s"}],'
        ' "relevance": {"1": "essential"}}\n'
    )
    replace = {"SUBMISSION": str(submission), "CASES": str(cases), "OUT": str(tmp_path / "out")}
    args = [replace.get(part, part) for part in command] + [str(path)]
    result = CliRunner().invoke(app, args)
    output = result.output
    assert result.exit_code != 0, output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in output
    assert filename in output, output
    assert "error:" in output, output


def test_the_root_command_reports_an_input_error_no_command_caught(tmp_path: Path) -> None:
    """A command (or a plugin's group) that lets an InputError through still fails in one line."""
    root = typer.Typer(cls=BedsideGroup)

    @root.command("read")
    def read() -> None:
        raise InputError("a reason", path=tmp_path / "data.jsonl", line=7, field="id")

    @root.command("decode")
    def decode() -> None:
        b"\xff".decode("utf-8")  # a reader the fuzz tests missed: still one line

    result = CliRunner().invoke(root, ["read"])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "data.jsonl:7: field id: a reason" in result.output
    result = CliRunner().invoke(root, ["decode"])
    assert result.exit_code == 1
    assert "UnicodeDecodeError" in result.output


def test_no_traceback_from_the_installed_command(tmp_path: Path) -> None:
    path = tmp_path / "patient.xml"
    path.write_bytes(medalign(start="10/08/99999 20:00"))
    done = subprocess.run(
        [sys.executable, "-m", "bedside.cli", "records", "show", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert "patient.xml: line 3 <visit>" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("store", "message"),
    [
        ("FILE", "file is not a database"),
        ("mongodb://host/db", "Can't load plugin"),
        ("sqlite:///", "names no database file"),
        ("sqlite://", "names no database file"),
    ],
)
@pytest.mark.parametrize("command", [["ls"], ["report", "some-run"], ["show", "some-run", "s1"], ["export", "r"]])
def test_a_store_that_cannot_be_opened_is_one_line(
    tmp_path: Path, store: str, message: str, command: list[str]
) -> None:
    """A file that is no database, a URL scheme SQLAlchemy has no driver for, or an in-memory SQLite URL (which
    would lose every result) used to end in a traceback or, for ``sqlite:///``, silently in an empty store."""
    path = tmp_path / "store.sqlite"
    path.write_text("not a database\n" * 100)
    result = CliRunner().invoke(app, [*command, "--store", str(path) if store == "FILE" else store])
    assert result.exit_code == 1, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)
