"""Every reader the command reaches, fed the inputs of issue 21: a typed error naming the file, never a traceback.

Each case is (reader, file name, bytes). The kinds: JSON nested 50,000 deep, a 5,000-digit integer, values of
the wrong JSON type, undecodable bytes, an XML encoding Python has no codec for, dates in year 99999 or year 1,
an oversize CSV field. Every one must raise :class:`~bedside.inputs.InputError` (the type the command reports
in one line) whose message names the file.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bedside import inputs
from bedside.inputs import InputError
from bedside.judges.rubric import rubric_from_file
from bedside.llm.scripted import ScriptedRules
from bedside.records import read_records
from bedside.runs.config import load_config
from bedside.sim.validation import read_fidelity_items
from bedside.tasks.citeqa.readers import read_cases as citeqa_cases
from bedside.tasks.citeqa.readers import read_key
from bedside.tasks.citeqa.submission import load_submission
from bedside.tasks.discharge.agreement import read_labels as discharge_labels
from bedside.tasks.discharge.readers import read_cases as discharge_cases
from bedside.tasks.drafting.cases import read_oncqa, read_pairs
from bedside.tasks.drafting.readers import read_cases as drafting_cases
from bedside.tasks.drafting.themes import load_themes, read_labelled_sentences
from bedside.tasks.drafting.validation import read_annotations
from bedside.tasks.instruct.readers import (
    read_instructions,
    read_labels_jsonl,
    read_release_reviewed,
    read_relevance,
)
from bedside.tasks.instruct.taxonomy import read_taxonomy
from bedside.tasks.sensemaking.readers import psych_index_ids, read_mediq
from bedside.tasks.sensemaking.readers import read_cases as sensemaking_cases
from bedside.tasks.sensemaking.validation import read_labels as sensemaking_labels
from bedside.training.data import read_dpo, read_sft

Reader = Callable[[Path], Any]

DEEP = b"[" * 50_000 + b"]" * 50_000
HUGE_INT = b"9" * 5_000
# Every field any JSON Lines reader here looks for, each holding a value of a type none of them takes.
FIELDS = [
    "id",
    "patient",
    "message",
    "text",
    "question",
    "facts",
    "context",
    "answer",
    "messages",
    "prompt",
    "chosen",
    "rejected",
    "draft",
    "reference",
    "label",
    "item",
    "metric",
    "annotator",
    "agree",
    "instruction_id",
    "model",
    "correct",
    "person_id",
    "relevance",
    "sentence",
    "gold",
    "theme",
    "case_id",
    "narrative",
    "sentences",
    "note",
    "OSCE_Examination",
    "structure",
    "demographics",
    "labels",
    "phase",
    "stage",
    "clinician_said",
    "raw_response",
    "doc_change",
    "q3",
    "evaluator",
    "rank",
]
WRONG_TYPES = ("{" + ", ".join(f'"{f}": {{"x": [1]}}' for f in FIELDS) + "}").encode()

JSONL_READERS: dict[str, Reader] = {
    "records": read_records,
    "citeqa cases": citeqa_cases,
    "drafting messages": drafting_cases,
    "drafting syppm": lambda path: drafting_cases(path, layout="syppm"),
    "drafting pairs": read_pairs,
    "drafting oncqa": read_oncqa,
    "drafting annotations": read_annotations,
    "drafting theme sentences": read_labelled_sentences,
    "discharge cases": discharge_cases,
    "discharge labels": discharge_labels,
    "sensemaking cases": sensemaking_cases,
    "sensemaking mediq": read_mediq,
    "sensemaking labels": sensemaking_labels,
    "sim fidelity items": read_fidelity_items,
    "instruct instructions": read_instructions,
    "instruct labels": read_labels_jsonl,
    "instruct relevance": read_relevance,
    "train sft": read_sft,
    "train dpo": read_dpo,
}

JSONL_LINES = {
    "deep": b'{"id": "a", "x": ' + DEEP + b"}",
    "huge int": b'{"id": ' + HUGE_INT + b"}",
    "not an object": b"[1, 2, 3]",
    "wrong types": WRONG_TYPES,
    "undecodable": b'{"id": "caf\xe9"}',
    "nan": b'{"id": NaN}',
    "duplicate key": b'{"id": "a", "id": "b"}',
    "empty": b"",  # an empty file (the test adds a newline: a blank line, too, holds nothing)
    "blank lines": b"\n  \n\t",
}


def expect_input_error(read: Reader, path: Path) -> InputError:
    """The InputError reading ``path`` raises; any other outcome fails the test."""
    with pytest.raises(InputError) as caught:
        read(path)
    assert path.name in str(caught.value), f"the message does not name the file: {caught.value}"
    return caught.value


def read_or_input_error(read: Reader, path: Path) -> str | None:
    """None when ``path`` reads; the message when it is an InputError naming the file; any other outcome fails."""
    try:
        read(path)
    except InputError as exc:
        message = str(exc)
    else:
        return None
    assert path.name in message, message
    return message


@pytest.mark.parametrize("kind", JSONL_LINES)
@pytest.mark.parametrize("reader", JSONL_READERS)
def test_json_lines_readers(tmp_path: Path, reader: str, kind: str) -> None:
    path = tmp_path / "input.jsonl"
    path.write_bytes(JSONL_LINES[kind] + b"\n")
    error = expect_input_error(JSONL_READERS[reader], path)
    if kind == "empty" or kind == "blank lines":  # nothing to read is an error, never an empty run
        assert "no " in str(error) or "empty" in str(error), str(error)
    elif kind != "wrong types":  # a schema error may name a field instead
        assert f"{path.name}:1" in str(error) or "line 1" in str(error), str(error)


def test_json_lines_errors_name_the_right_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b"\n\n" + JSONL_LINES["deep"] + b"\n")
    error = expect_input_error(sensemaking_cases, path)
    assert error.line == 3
    assert f"{path}:3:" in str(error)


# Whole-document JSON readers.

JSON_READERS: dict[str, Reader] = {
    "fhir bundle": read_records,
    "citeqa key": read_key,
    "citeqa website examples": citeqa_cases,
    "citeqa submission": load_submission,
    "sensemaking psych index": psych_index_ids,
    "scripted rules": ScriptedRules.from_file,
}

JSON_DOCUMENTS = {
    "deep": b'{"resourceType": "Bundle", "entry": ' + DEEP + b"}",
    "huge int": b'[{"case_id": ' + HUGE_INT + b', "answer": "x"}]',
    "undecodable": b'[{"case_id": "caf\xe9"}]',
    "wrong top-level type": b'"just a string"',
    "empty file": b"",
    "empty list": b"[]",
    "duplicate key": b'[{"case_id": "1", "case_id": "2", "answer": "x"}]',
    "wrong element types": b'[{"case_id": {"x": 1}, "answers": {"x": 1}, "answer": [1], "rules": 5, '
    b'"patient_question_lines": 7, "note_sentences": ["a"], "id": []}]',
}


@pytest.mark.parametrize("kind", JSON_DOCUMENTS)
@pytest.mark.parametrize("reader", JSON_READERS)
def test_json_document_readers(tmp_path: Path, reader: str, kind: str) -> None:
    path = tmp_path / "input.json"
    path.write_bytes(JSON_DOCUMENTS[kind])
    expect_input_error(JSON_READERS[reader], path)


WEBSITE_EXAMPLE = {
    "example": 1,
    "patient_question_lines": ["My <u>chest hurts</u>."],
    "clinician_question": "Why chest pain?",
    "note_sentences": {"1": "Chest pain.", "2": "Aspirin given."},
    "highlighted_evidence_ids": [1],
    "answer": "Aspirin was given |1|.",
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("patient_question_lines", "one line, not a list"),
        ("patient_question_lines", [["nested"]]),
        ("patient_question_lines", [5]),
        ("note_sentences", ["a list"]),
        ("note_sentences", {"1": 5}),
        ("highlighted_evidence_ids", 1),
        ("highlighted_evidence_ids", [{"id": 1}]),
        ("clinician_question", ["x"]),
        ("answer", 5),
        ("example", {"id": 1}),
    ],
)
def test_website_examples_with_wrong_field_types_name_the_field(tmp_path: Path, field: str, value: Any) -> None:
    import json

    path = tmp_path / "website_examples_2025.json"
    path.write_text(json.dumps([WEBSITE_EXAMPLE, {**WEBSITE_EXAMPLE, "example": 2, field: value}]))
    error = expect_input_error(citeqa_cases, path)
    assert "[1]" in str(error), str(error)
    assert field in str(error), str(error)


def test_website_examples_still_read(tmp_path: Path) -> None:
    import json

    path = tmp_path / "website_examples_2025.json"
    path.write_text(json.dumps([WEBSITE_EXAMPLE]))
    (case,) = citeqa_cases(path)
    assert case.relevance == {"1": "essential", "2": "not-relevant"}


# XML readers.

MEDALIGN = (
    '<?xml version="1.0" encoding="{encoding}"?>\n<record>\n<visit type="Office" start="{start}">\n'
    '<day start="{start}">\n<person>\nBirth: {birth}\nGender: FEMALE\n</person>\n'
    '<measurement start="{start}"><code>[LOINC/1] BP 120/80</code></measurement>\n</day>\n</visit>\n</record>\n'
)
EVENTSTREAM = (
    '<?xml version="1.0" encoding="{encoding}"?>\n<eventstream person_id="p1">\n'
    '<encounter start_timestamp="{start}">\n<person><birthdate>{birth}</birthdate></person>\n'
    '<events><entry timestamp="{start}"><event type="measurement" code="LOINC/1" name="BP">120</event></entry>'
    "</events>\n</encounter>\n</eventstream>\n"
)
GOOD = {"encoding": "UTF-8", "start": "10/08/2018 20:00", "birth": "01/02/1970"}


@pytest.mark.parametrize("dialect", [MEDALIGN, EVENTSTREAM], ids=["record", "eventstream"])
@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"start": "10/08/99999 20:00"}, "line 3"),
        ({"start": "01/01/0001 00:00"}, "line 3"),
        ({"start": "0001-01-01T00:00:00+05:00"}, "line 3"),
        ({"start": "9999-12-31T23:00:00-05:00"}, "line 3"),
        ({"birth": "01/02/99999"}, "line 5"),
        ({"birth": "01/02/0001"}, "line 5"),
        ({"encoding": "x-no-such-codec"}, ""),
    ],
)
def test_medalign_xml_dates_and_encodings(tmp_path: Path, dialect: str, change: dict[str, str], where: str) -> None:
    path = tmp_path / "patient.xml"
    path.write_text(dialect.format(**(GOOD | change)))
    error = expect_input_error(read_records, path)
    if where and dialect is MEDALIGN:
        assert where in str(error), str(error)


@pytest.mark.parametrize("dialect", [MEDALIGN, EVENTSTREAM], ids=["record", "eventstream"])
def test_medalign_xml_undecodable_bytes(tmp_path: Path, dialect: str) -> None:
    path = tmp_path / "patient.xml"
    path.write_bytes(dialect.format(**GOOD).replace("Office", "Caf\udce9", 1).encode("utf-8", "surrogateescape"))
    path.write_bytes(path.read_bytes().replace(b"BP", b"B\xff", 1))
    expect_input_error(read_records, path)


@pytest.mark.parametrize("dialect", [MEDALIGN, EVENTSTREAM], ids=["record", "eventstream"])
def test_medalign_xml_good_file_still_reads(tmp_path: Path, dialect: str) -> None:
    path = tmp_path / "patient.xml"
    path.write_text(dialect.format(**GOOD))
    (record,) = read_records(path)
    assert record.patient.birth_date is not None
    assert record.patient.birth_date.year == 1970
    assert len(record.measurements) == 1
    assert len(record.encounters) == 1


XML_READERS: dict[str, Reader] = {"citeqa case xml": citeqa_cases, "drafting liveqa xml": drafting_cases}
XML_DOCUMENTS = {
    "unknown encoding": b'<?xml version="1.0" encoding="x-no-such-codec"?><annotations/>',
    "undecodable": b'<?xml version="1.0" encoding="UTF-8"?><annotations><case id="1">caf\xe9</case></annotations>',
    "not well-formed": b"<annotations><case></annotations>",
    "empty": b"",
}


@pytest.mark.parametrize("kind", XML_DOCUMENTS)
@pytest.mark.parametrize("reader", XML_READERS)
def test_xml_readers(tmp_path: Path, reader: str, kind: str) -> None:
    path = tmp_path / "cases.xml"
    path.write_bytes(XML_DOCUMENTS[kind])
    expect_input_error(XML_READERS[reader], path)


def test_citeqa_phrase_offsets_that_are_not_numbers(tmp_path: Path) -> None:
    path = tmp_path / "cases.xml"
    path.write_text(
        '<annotations><case id="1"><patient_narrative>I hurt.</patient_narrative><patient_question>'
        '<phrase id="0" start_char_index="' + "9" * 5000 + '">hurt</phrase></patient_question></case></annotations>'
    )
    expect_input_error(citeqa_cases, path)


# CSV/TSV readers.

CSV_READERS: dict[str, tuple[str, str, Reader]] = {
    "drafting table": ("cases.csv", "id,message,reference", drafting_cases),
    "drafting syppm": ("syppm.csv", "id,message,chart_summary,response", lambda p: drafting_cases(p, layout="syppm")),
    "instruct sample": ("sample.csv", "instruction_id,question,human_assigned_subcategory_1", read_instructions),
    "instruct gold": (
        "gold.tsv",
        "instruction_id\tperson_id\tannotator_num\tclinician_response\tquestion\tfilename",
        read_instructions,
    ),
    "instruct reviewed": ("reviewed.tsv", "instruction_id\tmodel_name\tbinary_correct", read_release_reviewed),
    "instruct relevance": ("relevance.csv", "instruction_id,person_id,is_selected_ehr", read_relevance),
}


@pytest.mark.parametrize("reader", CSV_READERS)
def test_csv_fields_over_the_old_128_kb_limit_read(tmp_path: Path, reader: str) -> None:
    name, header, read = CSV_READERS[reader]
    separator = "\t" if name.endswith(".tsv") else ","
    columns = header.split(separator)
    row = separator.join(["1", "x" * 200_000, *["1"] * (len(columns) - 2)])
    path = tmp_path / name
    path.write_text(f"{header}\n{row}\n")
    message = read_or_input_error(read, path)  # a reader may refuse the row's content, never the field's size
    assert message is None or "limit" not in message, message


@pytest.mark.parametrize("reader", CSV_READERS)
def test_csv_fields_over_the_limit_are_an_error_naming_the_line(
    tmp_path: Path, reader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, header, read = CSV_READERS[reader]
    separator = "\t" if name.endswith(".tsv") else ","
    columns = header.split(separator)
    row = separator.join(["1", "x" * 5_000, *["1"] * (len(columns) - 2)])
    path = tmp_path / name
    path.write_text(f"{header}\n\n{row}\n")
    old = csv.field_size_limit(1_000)
    monkeypatch.setattr(inputs, "CSV_FIELD_LIMIT", 1_000)
    try:
        error = expect_input_error(read, path)
    finally:
        csv.field_size_limit(old)
    assert f"{name}:3" in str(error), str(error)
    assert "limit" in str(error), str(error)


def csv_file(tmp_path: Path, reader: str, content: bytes) -> Path:
    name, header, _ = CSV_READERS[reader]
    separator = b"\t" if name.endswith(".tsv") else b","
    columns = header.split(separator.decode())
    path = tmp_path / name
    path.write_bytes(header.encode() + b"\n" + separator.join([b"1", content, *[b"1"] * (len(columns) - 2)]) + b"\n")
    return path


@pytest.mark.parametrize("content", ["", "\n\n", "header only"])
@pytest.mark.parametrize("reader", CSV_READERS)
def test_csv_readers_refuse_a_table_with_no_rows(tmp_path: Path, reader: str, content: str) -> None:
    """An empty table gave a successful run over nothing; it is an error naming the file."""
    name, header, read = CSV_READERS[reader]
    path = tmp_path / name
    path.write_text(header + "\n" if content == "header only" else content)
    error = expect_input_error(read, path)
    assert "no " in str(error), str(error)


@pytest.mark.parametrize("reader", CSV_READERS)
def test_csv_readers_undecodable_bytes(tmp_path: Path, reader: str) -> None:
    error = expect_input_error(CSV_READERS[reader][2], csv_file(tmp_path, reader, b"caf\xe9"))
    assert error.line == 2
    assert "UTF-8" in str(error), str(error)


@pytest.mark.parametrize("reader", CSV_READERS)
def test_csv_readers_nul_bytes_read_or_fail_cleanly(tmp_path: Path, reader: str) -> None:
    """A NUL byte is not an error to the csv module since Python 3.11; it must not become one elsewhere."""
    read_or_input_error(CSV_READERS[reader][2], csv_file(tmp_path, reader, b"a\x00b"))


# Configs, rubrics, taxonomies, themes (YAML and TOML).

YAML_DOCUMENTS = {
    "huge int": b"name: x\nconcurrency: " + HUGE_INT + b"\n",
    "bad date": b"name: x\nwhen: 2020-13-45\n",
    "year 0": b"name: x\nwhen: 0000-01-01\n",
    "deep": b"name: x\nx: " + b"[" * 20_000 + b"]" * 20_000 + b"\n",
    "undecodable": b"name: caf\xe9\n",
    "wrong type": b"- a list, not a mapping\n",
}
YAML_READERS: dict[str, Reader] = {
    "run config": load_config,
    "rubric": rubric_from_file,
    "scripted rules": ScriptedRules.from_file,
}


@pytest.mark.parametrize("kind", YAML_DOCUMENTS)
@pytest.mark.parametrize("reader", YAML_READERS)
def test_yaml_readers(tmp_path: Path, reader: str, kind: str) -> None:
    path = tmp_path / "input.yaml"
    path.write_bytes(YAML_DOCUMENTS[kind])
    expect_input_error(YAML_READERS[reader], path)


TOML_DOCUMENTS = {
    "huge int": b"x = " + HUGE_INT + b"\n",
    "deep": b"x = " + b"[" * 20_000 + b"]" * 20_000 + b"\n",
    "undecodable": b'x = "caf\xe9"\n',
    "bad date": b"x = 2020-13-45\n",
    "wrong types": b'category = 5\nsubcategory = "x"\ntheme = 7\n',
}
TOML_READERS: dict[str, Reader] = {
    "run config": load_config,
    "rubric": rubric_from_file,
    "instruct taxonomy": read_taxonomy,
    "drafting themes": load_themes,
}


@pytest.mark.parametrize("kind", TOML_DOCUMENTS)
@pytest.mark.parametrize("reader", TOML_READERS)
def test_toml_readers(tmp_path: Path, reader: str, kind: str) -> None:
    path = tmp_path / "input.toml"
    path.write_bytes(TOML_DOCUMENTS[kind])
    expect_input_error(TOML_READERS[reader], path)


# Paired and derived files.


def test_discharge_osce_notes_undecodable_and_deep(tmp_path: Path) -> None:
    osce = tmp_path / "OSCE-format.jsonl"
    osce.write_text('{"OSCE_Examination": {"Patient_Actor": "not an object"}}\n')
    notes = tmp_path / "original-notes.txt"
    for content in (b'"caf\xe9"\n', DEEP + b"\n", HUGE_INT + b"\n", b"[1]\n"):
        notes.write_bytes(content)
        expect_input_error(lambda _: discharge_cases(osce, notes=notes), notes)
    notes.write_text('"A note."\n')
    (case,) = discharge_cases(osce, notes=notes)
    assert case.note == "A note."


def test_instruct_paper_view_of_an_undecodable_xml_record(tmp_path: Path) -> None:
    """The record reads (expat takes the declared latin-1), and the raw view decodes it the same way; a file
    whose bytes fit no declared encoding is an error naming it, not a UnicodeDecodeError."""
    from bedside.tasks.instruct.cases import Instruction
    from bedside.tasks.instruct.ehr import load_ehr

    latin = tmp_path / "latin.xml"
    text = MEDALIGN.format(**(GOOD | {"encoding": "ISO-8859-1"})).replace("Office", "Caf\xe9")
    latin.write_bytes(text.encode("latin-1"))
    ehr = load_ehr(Instruction(id="i1", question="q?", record=str(latin)))
    assert "Café" in ehr.text("paper")

    broken = tmp_path / "broken.xml"
    broken.write_bytes(MEDALIGN.format(**GOOD).encode().replace(b"Office", b"Caf\xe9"))
    expect_input_error(lambda p: load_ehr(Instruction(id="i2", question="q?", record=str(p))).text("paper"), broken)
