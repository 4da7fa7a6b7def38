"""Reading files people hand bedside: one way to decode, parse JSON, XML, CSV and dates, with one error type.

Issue 21 fed 234 malformed files to the command's readers and 32 ended in a Python traceback: a year 99999 or
0, a 5,000-digit integer (Python's int-from-string limit), JSON nested thousands deep (``RecursionError``), an
XML encoding Python has no codec for, a CSV field over the csv module's 128 KB default, undecodable bytes, values
of the wrong JSON type. Each reader had its own ``json.loads``/``ET.parse``/``csv.reader`` call and caught the
exceptions its author thought of. Readers now go through the helpers here, which catch every way the standard
library fails on bad input and raise :class:`InputError` (a ``ValueError``, so callers that caught
``ValueError`` still do) naming the file, and the line and field where they mean something. The command turns
any :class:`InputError` into a one-line message and exit code 2.

Readers keep their own error types (``RecordError``, citeqa's ``CaseFormatError``, ...): those are subclasses of
:class:`InputError`, and every helper takes the class to raise as ``error``.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
import tomllib
import xml.parsers.expat
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar
from xml.etree import ElementTree

T = TypeVar("T")

MIN_YEAR = 1000
"""Earliest year a record, instruction or case may carry. Dates are moved by whole years when charts are built
(ages, "past year", an order active for 365 days), so a date near ``datetime.min``/``max`` would overflow later,
far from the file that held it; no clinical source dates anything before this."""
MAX_YEAR = 3000
"""Latest year accepted (the same reasoning as :data:`MIN_YEAR`; de-identified sources shift dates by decades
at most)."""

CSV_FIELD_LIMIT = 64 * 1024 * 1024
"""Largest CSV/TSV field read (the csv module's default is 128 KB; a MedAlign TSV answer or note can be larger).
A field over this is an :class:`InputError` naming the line."""


EMPTY = "no data: the file is empty or holds only blank lines"


class InputError(ValueError):
    """A file (or value) bedside was given cannot be read; the message says where and why.

    ``path``, ``line`` and ``field`` are kept for callers that want them apart; the message puts them first as
    ``FILE:LINE: field NAME: reason``. Built with a message alone, the message is kept as written (the older
    reader errors composed their own locations).
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
        column: int | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.column = column
        self.field = field
        self.reason = message
        super().__init__(locate(message, path=path, line=line, field=field, column=column))


def locate(
    message: str,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    field: str | None = None,
    column: int | None = None,
) -> str:
    """``FILE:LINE[:COLUMN]: field NAME: message``, leaving out what is not known."""
    where = str(path) if path is not None else ""
    if line is not None:
        where = f"{where}:{line}" if where else f"line {line}"
        if column is not None:
            where = f"{where}:{column}"
    if field:
        where = f"{where}: field {field}" if where else f"field {field}"
    return f"{where}: {message}" if where else message


# Text.


def decode(
    data: bytes,
    *,
    path: str | Path | None = None,
    encoding: str = "utf-8",
    error: type[InputError] = InputError,
) -> str:
    """``data`` as text; bytes that do not decode are an error naming the line and byte (a UTF-8 BOM is dropped)."""
    if encoding.replace("_", "-").lower() in ("utf-8", "utf8"):
        encoding = "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start : exc.start + 1]
        name = "UTF-8" if encoding == "utf-8-sig" else encoding
        problem = error(f"not {name} text (line {line}, byte {exc.start}: {bad!r}, {exc.reason})", path=path)
        problem.line = line  # in the message's words: "FILE: not UTF-8" reads first, as the readers always said
        raise problem from None
    except LookupError:
        raise error(f"unknown text encoding {encoding!r}", path=path) from None


def read_bytes(path: str | Path, *, max_bytes: int | None = None, error: type[InputError] = InputError) -> bytes:
    """The file's bytes, refusing a missing file, a folder, or one over ``max_bytes`` before reading it."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise error("not a file", path=path)
        if max_bytes is not None and size > max_bytes:
            raise error(
                f"file is {size / 1e6:.0f} MB, over the {max_bytes / 1e6:.0f} MB limit "
                "(pass a larger max_bytes if this is intended)",
                path=path,
            )
        return path.read_bytes()
    except FileNotFoundError:
        raise error("no such file", path=path) from None
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror or exc}", path=path) from None


def read_text(
    path: str | Path,
    *,
    encoding: str = "utf-8",
    max_bytes: int | None = None,
    error: type[InputError] = InputError,
) -> str:
    """A text file read whole: :func:`read_bytes` then :func:`decode`."""
    return decode(read_bytes(path, max_bytes=max_bytes, error=error), path=path, encoding=encoding, error=error)


def text_lines(
    path: str | Path, *, encoding: str = "utf-8", error: type[InputError] = InputError
) -> list[tuple[int, str]]:
    """(line number, line) for each non-blank line of a text file."""
    text = read_text(path, encoding=encoding, error=error)
    return [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]


# JSON.


class _DuplicateKey(Exception):  # not a ValueError: loads_json tells it apart from the parser's own
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object, refusing a key given twice (``json`` keeps the last silently; which one a writer meant is
    unknowable). Costs about a fifth more parse time on a FHIR-shaped document."""
    built = dict(pairs)
    if len(built) != len(pairs):
        seen: set[str] = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return built


def loads_json(
    text: str | bytes,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    error: type[InputError] = InputError,
) -> Any:
    """Parse JSON; every way the parser can fail is ``error`` naming the file and line.

    ``line`` is the file line the text starts on (JSON Lines); a document's own line numbers are added to it.
    Beyond :class:`json.JSONDecodeError`: nesting deeper than the interpreter's recursion limit
    (``RecursionError``), an integer over Python's 4,300-digit string-conversion limit (``ValueError``),
    and NaN/Infinity, which are not JSON and which the models refuse anyway.
    """

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON value")

    try:
        return json.loads(text, parse_constant=constant, object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:
        raise error(
            f"not readable JSON: key {exc.args[0]!r} appears twice in one object", path=path, line=line
        ) from None
    except json.JSONDecodeError as exc:
        if line is None:  # a whole document: its line and column
            raise error(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno, column=exc.colno) from None
        # One line of a JSON Lines file. A record cut short ("{... " with no "}") fails past its line end, on
        # the line after it by the parser's count: the record's own last line is the one to name.
        own = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        lines = len(own.rstrip("\r\n").splitlines()) or 1
        where = f"column {exc.colno}" if exc.lineno <= lines else "at the end of the line: the record is cut short"
        at = line + min(exc.lineno, lines) - 1
        raise error(f"not valid JSON: {exc.msg} ({where})", path=path, line=at) from None
    except RecursionError:
        raise error("not readable JSON: nested too deeply", path=path, line=line) from None
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8 text ({exc.reason})", path=path, line=line) from None
    except ValueError as exc:  # the int-from-string digit limit, or a NaN/Infinity constant
        reason = "a number has too many digits" if "digits" in str(exc) else str(exc)
        raise error(f"not readable JSON: {reason}", path=path, line=line) from None


def json_object(
    text: str | bytes,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    error: type[InputError] = InputError,
) -> dict[str, Any]:
    """One JSON object (a line of a JSON Lines file); any other JSON value is an error naming what it is."""
    value = loads_json(text, path=path, line=line, error=error)
    if not isinstance(value, dict):
        raise error(f"expected a JSON object, found {json_type(value)}", path=path, line=line)
    return value


def loads_toml(text: str, *, path: str | Path | None = None, error: type[InputError] = InputError) -> dict[str, Any]:
    """Parse TOML; a syntax error, an integer over the digit limit, a bad date or deep nesting is ``error``."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"not valid TOML: {exc}", path=path) from None
    except RecursionError:
        raise error("not readable TOML: nested too deeply", path=path) from None
    except (ValueError, OverflowError) as exc:
        raise error(f"not readable TOML: {exc}", path=path) from None


def read_json(path: str | Path, *, max_bytes: int | None = None, error: type[InputError] = InputError) -> Any:
    """A whole JSON file."""
    return loads_json(read_text(path, max_bytes=max_bytes, error=error), path=path, error=error)


def read_json_lines(path: str | Path, *, error: type[InputError] = InputError) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON Lines file; a file with none is an error (every
    reader of a JSON Lines file reads data to work on, and an empty one is a mistake, never an empty run)."""
    lines = text_lines(path, error=error)
    if not lines:
        raise error(EMPTY, path=path)
    return [(n, json_object(t, path=path, line=n, error=error)) for n, t in lines]


def nonempty(items: list[T], path: str | Path, what: str, *, error: type[InputError] = InputError) -> list[T]:
    """``items``, or ``error`` naming the file when there are none: a reader whose file holds no ``what`` must
    say so, never hand back an empty list that becomes a successful run over nothing."""
    if not items:
        raise error(f"the file holds no {what}", path=path)
    return items


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type, for messages (``a list``, ``a string``)."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def expect(
    value: Any,
    kind: type[T] | tuple[type, ...],
    *,
    path: str | Path | None = None,
    line: int | None = None,
    field: str,
    error: type[InputError] = InputError,
) -> T:
    """``value`` when it has the JSON type ``kind``; else an error naming the field and what was there.

    ``bool`` is never accepted as a number (JSON's ``true`` is a ``bool``, which Python counts as an ``int``).
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        wanted = " or ".join(json_type(k()) if k is not type(None) else "null" for k in kinds)
        raise error(f"expected {wanted}, found {json_type(value)}", path=path, line=line, field=field)
    return value  # type: ignore[return-value]


# Dates.


def checked_time(
    parse: Callable[[str], datetime],
    value: str,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    field: str | None = None,
    error: type[InputError] = InputError,
) -> datetime:
    """``parse(value)``, its failures (``ValueError``, ``OverflowError`` from a time zone shift past year 1 or
    9999) and years outside :data:`MIN_YEAR`..:data:`MAX_YEAR` all ``error`` naming the field."""
    try:
        when = parse(value)
    except (ValueError, OverflowError) as exc:
        text = str(exc)
        reason = text if repr(value) in text and "not a time" in text else f"{value!r} is not a time ({text})"
        raise error(reason, path=path, line=line, field=field) from None
    check_year(when, value, path=path, line=line, field=field, error=error)
    return when


def check_year(
    when: date,
    value: object = None,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    field: str | None = None,
    error: type[InputError] = InputError,
) -> None:
    """Refuse a date outside :data:`MIN_YEAR`..:data:`MAX_YEAR`."""
    if not MIN_YEAR <= when.year <= MAX_YEAR:
        shown = value if value is not None else when.isoformat()
        raise error(
            f"{shown!r} is out of range (years {MIN_YEAR}-{MAX_YEAR} are accepted)", path=path, line=line, field=field
        )


# XML.


def parse_xml(
    path: str | Path, *, max_bytes: int | None = None, error: type[InputError] = InputError
) -> ElementTree.Element:
    """An XML file as an ElementTree; not well-formed XML, an encoding Python cannot decode, or a declaration
    the parser refuses is ``error`` naming the line (for small files: task case sets, not patient records,
    which :mod:`bedside.records.medalign` streams)."""
    data = read_bytes(path, max_bytes=max_bytes, error=error)
    parser = ElementTree.XMLParser()
    try:
        parser.feed(data)
        return parser.close()
    except ElementTree.ParseError as exc:
        line, column = exc.position
        reason = xml_reason(exc)
        raise error(f"not well-formed XML: {reason}", path=path, line=line, column=column + 1) from None
    except (LookupError, ValueError, UnicodeError) as exc:  # an encoding declaration with no codec behind it
        raise error(f"not readable XML: {exc}", path=path) from None


_XML_ENCODING = re.compile(rb"""^(?:\xef\xbb\xbf)?<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def read_xml_text(path: str | Path, *, max_bytes: int | None = None, error: type[InputError] = InputError) -> str:
    """An XML file's text as written, decoded by its declared encoding (UTF-8 when it declares none): what a
    view of the raw file shows. An encoding Python lacks, or bytes that do not decode, are ``error``."""
    data = read_bytes(path, max_bytes=max_bytes, error=error)
    declared = _XML_ENCODING.match(data[:512])
    encoding = declared.group(1).decode("ascii") if declared else "utf-8"
    if not known_encoding(encoding):
        raise error(f"the XML declares encoding {encoding!r}, which Python has no codec for", path=path)
    return decode(data, path=path, encoding=encoding, error=error)


def xml_reason(exc: ElementTree.ParseError | xml.parsers.expat.ExpatError) -> str:
    """expat's message without its own ``line N, column M`` suffix (the error names the line)."""
    code = getattr(exc, "code", None)
    if isinstance(code, int) and code in range(1, 100):
        try:
            return xml.parsers.expat.ErrorString(code)
        except Exception:  # pragma: no cover - an unknown code: fall through to the text
            pass
    return re.sub(r":?\s*line \d+, column \d+$", "", str(exc))


def known_encoding(name: str) -> bool:
    """Whether Python has a codec named ``name``."""
    try:
        codecs.lookup(name)
    except LookupError:
        return False
    return True


# CSV.


def csv_rows(
    lines: Iterable[str],
    *,
    path: str | Path | None = None,
    first_line: int = 1,
    error: type[InputError] = InputError,
    **options: Any,
) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) for each row of CSV/TSV text (``options`` go to :func:`csv.reader`).

    Fields up to :data:`CSV_FIELD_LIMIT` are read; a larger one, a NUL byte or a broken quote is ``error``
    naming the line. The number is the line the row starts on, so a quoted field with line breaks does not shift
    the rows after it.
    """
    if csv.field_size_limit() < CSV_FIELD_LIMIT:
        csv.field_size_limit(CSV_FIELD_LIMIT)
    reader = csv.reader(lines, **options)
    start = first_line
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            reason = str(exc)
            if "field larger than field limit" in reason:
                reason = f"a field is over the {CSV_FIELD_LIMIT // (1024 * 1024)} MB limit"
            raise error(f"not readable CSV: {reason}", path=path, line=first_line + reader.line_num - 1) from None
        yield start, row
        start = first_line + reader.line_num


def csv_dicts(
    lines: Iterable[str],
    *,
    path: str | Path | None = None,
    error: type[InputError] = InputError,
    **options: Any,
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row as header → value) for a CSV/TSV table with a header line. Missing trailing fields
    read as ``""``; a row with more non-empty fields than the header is an error naming the line
    (``csv.DictReader`` would file them under ``None``, where no reader looks)."""
    rows = csv_rows(lines, path=path, error=error, **options)
    try:
        header_line, header = next(rows)
    except StopIteration:
        return
    first: dict[str, int] = {}
    for position, name in enumerate(header, start=1):
        if name.strip() and name in first:
            raise error(
                f"column {name!r} is in the header twice (columns {first[name]} and {position}): one would silently "
                "hide the other",
                path=path,
                line=header_line,
            )
        first[name] = position
    for number, row in rows:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header) and any(cell.strip() for cell in row[len(header) :]):
            raise error(f"{len(row)} fields under a header of {len(header)}", path=path, line=number)
        row = row[: len(header)]
        yield number, dict(zip(header, row + [""] * (len(header) - len(row)), strict=True))


def table_dicts(path: str | Path, *, error: type[InputError] = InputError) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) for a flat table: CSV when the name ends in ``.csv`` (quoted fields may hold line
    breaks), otherwise JSON Lines, one object a line. Both shapes read the same so a reader needs one loop."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        found = False
        for row in csv_dicts(io.StringIO(read_text(path, error=error), newline=""), path=path, error=error):
            found = True
            yield row
        if not found:
            raise error("no data: the table has no rows under its header (or no header)", path=path)
        return
    yield from read_json_lines(path, error=error)


def csv_table(
    path: str | Path,
    fields: Mapping[str, str],
    what: str,
    *,
    optional: Iterable[str] = (),
    error: type[InputError] = InputError,
) -> list[tuple[int, dict[str, str]]]:
    """The rows of a CSV file with a header, as (line the row starts on, field → stripped value).

    ``fields`` maps each field a reader needs to its column name (a column map over the reader's defaults); a
    column missing from the header is ``error`` naming the file, line 1 and the column, with the columns the file
    has. Fields in ``optional`` may be absent (their value is then ``""``). Quoted values may span lines, as in
    MIMIC-IV-Note's ``discharge.csv``."""
    path = Path(path)
    text = read_text(path, error=error)
    rows = csv_dicts(io.StringIO(text, newline=""), path=path, error=error)
    header = next(csv_rows(io.StringIO(text, newline=""), path=path, error=error), (1, []))[1]
    skip = set(optional)
    for field, column in fields.items():
        if field not in skip and column not in header:
            raise error(
                f"the {what} has no column {column!r} (for {field}); its columns are {', '.join(header) or '(none)'}",
                path=path,
                line=1,
            )
    return [(line, {f: row.get(c, "").strip() for f, c in fields.items()}) for line, row in rows]


# Column maps.


def require_columns(
    path: str | Path,
    header: Iterable[str],
    columns: Mapping[str, str],
    what: str,
    *,
    error: type[InputError] = InputError,
    how: str = "Map the fields to your file's columns with a column map.",
) -> None:
    """Raise ``error`` unless every column ``columns`` maps a field to is in ``header``.

    For readers of third-party tables read through a column map (bedside field → column name): the message names
    each missing column with the field it stands for, lists the columns the file does have, and ends with ``how``
    (where the reader's map is given)."""
    present = list(header)
    missing = [f"{column!r} (for {field})" for field, column in columns.items() if column not in present]
    if missing:
        raise error(
            f"{path}: the {what} has no column {', '.join(missing)}; "
            f"its columns are {', '.join(present) or '(none)'}. {how}"
        )
