"""bedside.inputs: every way the standard library fails on bad input becomes one typed error naming the place."""

from __future__ import annotations

import csv
import io
from datetime import date, datetime
from pathlib import Path

import pytest

from bedside import inputs
from bedside.inputs import (
    InputError,
    check_year,
    checked_time,
    csv_dicts,
    csv_rows,
    decode,
    expect,
    json_object,
    loads_json,
    loads_toml,
    parse_xml,
    read_json_lines,
    read_text,
    read_xml_text,
)
from bedside.records import RecordError


class OwnError(InputError):
    """A reader's own error type: the helpers raise it when asked."""


def test_input_error_is_a_value_error_with_its_parts() -> None:
    error = InputError("bad value", path="data/cases.jsonl", line=12, field="facts[2]")
    assert isinstance(error, ValueError)
    assert str(error) == "data/cases.jsonl:12: field facts[2]: bad value"
    assert (error.path, error.line, error.field, error.reason) == ("data/cases.jsonl", 12, "facts[2]", "bad value")
    assert str(InputError("as written")) == "as written"


def test_reader_errors_are_input_errors() -> None:
    from bedside.judges.rubric import RubricError
    from bedside.runs.config import ConfigError
    from bedside.tasks.citeqa.readers import CaseFormatError
    from bedside.tasks.citeqa.submission import SubmissionError
    from bedside.tasks.instruct.readers import InstructDataError
    from bedside.training.data import TrainingDataError

    for kind in (RecordError, RubricError, ConfigError, CaseFormatError, SubmissionError, InstructDataError):
        assert issubclass(kind, InputError)
    assert issubclass(TrainingDataError, InputError)
    assert str(RecordError("bad", path="f.json", where="entry[3]")) == "f.json: entry[3]: bad"
    assert str(RecordError("bad", path="f.jsonl", line=2, field="'id'")) == "f.jsonl: line 2 field 'id': bad"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("9" * 5_000, "too many digits"),
        ('{"a": NaN}', "NaN is not a JSON value"),
        ('{"a": Infinity}', "Infinity is not a JSON value"),
        ('{"a": }', "not valid JSON"),
    ],
)
def test_loads_json_failures(text: str, needle: str) -> None:
    with pytest.raises(OwnError, match=needle) as caught:
        loads_json(text, path="x.jsonl", line=4, error=OwnError)
    assert str(caught.value).startswith("x.jsonl:4: ")


def test_a_json_document_error_names_line_and_column() -> None:
    with pytest.raises(InputError) as caught:
        loads_json('{\n  "a": 1,\n  oops\n}', path="doc.json")
    assert (caught.value.line, caught.value.column) == (3, 3)
    assert str(caught.value).startswith("doc.json:3:3: not valid JSON")


def test_json_object_and_expect_name_the_type() -> None:
    with pytest.raises(InputError, match="expected a JSON object, found a list"):
        json_object("[1]", path="a.jsonl", line=1)
    assert expect("x", str, field="id") == "x"
    with pytest.raises(InputError, match=r"field answer: expected a string, found a number"):
        expect(5, str, field="answer")
    with pytest.raises(InputError, match="expected a number, found a boolean"):
        expect(True, int, field="count")
    with pytest.raises(InputError, match="expected a string or a list or null, found an object"):
        expect({}, (str, list, type(None)), field="context")


def test_decode_names_the_line_and_byte(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        decode(b"first\nsecond \xff\n", path="notes.txt")
    assert caught.value.line == 2
    assert "notes.txt: not UTF-8 text (line 2, byte 13: b'\\xff'" in str(caught.value)
    assert decode(b"\xef\xbb\xbfwith a BOM") == "with a BOM"
    with pytest.raises(InputError, match="unknown text encoding"):
        decode(b"x", encoding="x-no-such-codec")


def test_read_text_missing_and_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_text(tmp_path / "absent.txt")
    with pytest.raises(InputError, match="not a file"):
        read_text(tmp_path)
    big = tmp_path / "big.txt"
    big.write_text("x" * 2_000_000)
    with pytest.raises(InputError, match="over the 1 MB limit"):
        read_text(big, max_bytes=1_000_000)


def test_read_json_lines_skips_blank_lines_and_numbers_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"a": 1}\n\n{"b": 2}\n')
    assert read_json_lines(path) == [(1, {"a": 1}), (3, {"b": 2})]


def test_a_json_lines_record_cut_short_is_named_by_its_own_line(tmp_path: Path) -> None:
    """The parser fails past the line's end ("{..." with no "}", the newline still on it): the records reader
    named the next line."""
    from bedside.records import read_records_jsonl

    path = tmp_path / "a.jsonl"
    path.write_text('{"patient": {"id": "p1"}}\n{"patient": {"id": "p2"}\n{"patient": {"id": "p3"}}\n')
    with pytest.raises(RecordError, match=r"line 2: not valid JSON: .*\(at the end of the line: the record is cut"):
        list(read_records_jsonl(path))
    with pytest.raises(InputError, match=r"line 4: not valid JSON: .* \(column 9\)"):  # within the line: its column
        loads_json('{"b": 2 x}\n', line=4)


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("99999-01-01", "is not a time"),
        ("0001-01-01T00:00:00+05:00", "out of range"),
        ("9999-12-31T23:00:00-05:00", "out of range"),
        ("0999-12-31", "out of range"),
        ("3001-01-01", "out of range"),
        ("yesterday", "is not a time"),
    ],
)
def test_checked_time(value: str, needle: str) -> None:
    def parse(text: str) -> datetime:
        return (
            datetime.fromisoformat(text).astimezone().replace(tzinfo=None)
            if "T" in text
            else datetime.fromisoformat(text)
        )

    with pytest.raises(InputError, match=needle) as caught:
        checked_time(parse, value, path="r.json", field="onset")
    assert str(caught.value).startswith("r.json: field onset: ")


def test_check_year_bounds() -> None:
    check_year(date(inputs.MIN_YEAR, 1, 1))
    check_year(date(inputs.MAX_YEAR, 12, 31))
    with pytest.raises(InputError):
        check_year(date(1, 1, 1))


def test_toml_failures() -> None:
    for text, needle in (
        ("x = " + "9" * 5000, "not readable TOML"),
        ("x = " + "[" * 20_000 + "]" * 20_000, "nested too deeply"),
        ("x = ", "not valid TOML"),
    ):
        with pytest.raises(InputError, match=needle):
            loads_toml(text, path="t.toml")


def test_parse_xml_failures(tmp_path: Path) -> None:
    path = tmp_path / "cases.xml"
    path.write_bytes(b'<?xml version="1.0" encoding="x-bogus"?><a/>')
    with pytest.raises(InputError, match=r"cases\.xml: not readable XML: unknown encoding"):
        parse_xml(path)
    path.write_bytes(b"<a>\n<b></a>")
    with pytest.raises(InputError, match=r"cases.xml:2:\d+: not well-formed XML: mismatched tag"):
        parse_xml(path)
    path.write_bytes(b"<a>caf\xe9</a>")
    with pytest.raises(InputError, match="not well-formed XML"):
        parse_xml(path)


def test_read_xml_text_follows_the_declaration(tmp_path: Path) -> None:
    path = tmp_path / "r.xml"
    path.write_bytes('<?xml version="1.0" encoding="ISO-8859-1"?><r>Café</r>'.encode("latin-1"))
    assert "Café" in read_xml_text(path)
    path.write_bytes(b'<?xml version="1.0" encoding="x-bogus"?><r/>')
    with pytest.raises(InputError, match="no codec"):
        read_xml_text(path)
    path.write_bytes(b"<r>caf\xe9</r>")
    with pytest.raises(InputError, match="not UTF-8"):
        read_xml_text(path)


def test_csv_rows_number_rows_by_their_first_line() -> None:
    text = 'a,b\n1,"two\nlines"\n3,4\n'
    assert list(csv_rows(io.StringIO(text, newline=""))) == [(1, ["a", "b"]), (2, ["1", "two\nlines"]), (4, ["3", "4"])]


def test_csv_fields_over_128_kb_read_and_over_the_limit_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    big = "x" * 200_000
    (_, (_, row)) = list(csv_rows(io.StringIO(f"a\n{big}\n")))
    assert row == [big]
    old = csv.field_size_limit(100)
    monkeypatch.setattr(inputs, "CSV_FIELD_LIMIT", 100)
    try:
        with pytest.raises(InputError, match=r"t.csv:3: not readable CSV: a field is over"):
            list(csv_rows(io.StringIO("a\nb\n" + "y" * 500 + "\n"), path="t.csv"))
    finally:
        csv.field_size_limit(old)


def test_csv_dicts_refuse_extra_fields_and_pad_missing_ones() -> None:
    rows = list(csv_dicts(io.StringIO("a,b\n1\n\n2,3,,\n"), path="t.csv"))
    assert rows == [(2, {"a": "1", "b": ""}), (4, {"a": "2", "b": "3"})]
    with pytest.raises(InputError, match=r"t.csv:2: 3 fields under a header of 2"):
        list(csv_dicts(io.StringIO("a,b\n1,2,3\n"), path="t.csv"))
