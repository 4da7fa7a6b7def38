"""Reading records from any supported file, chosen by what the file is."""

from __future__ import annotations

from pathlib import Path

from bedside.records.errors import RecordError
from bedside.records.fhir import read_fhir_bundle
from bedside.records.jsonl import read_records_jsonl
from bedside.records.medalign import read_medalign_xml
from bedside.records.model import Record

FORMATS = ("fhir", "medalign", "jsonl")


def detect_format(path: Path) -> str:
    """``jsonl`` for ``.jsonl``, ``medalign`` for ``.xml``, ``fhir`` for ``.json``; else by the first byte."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".xml":
        return "medalign"
    if suffix == ".json":
        return "fhir"
    try:
        with path.open("rb") as handle:
            head = handle.read(512).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError as exc:
        raise RecordError(f"cannot read: {exc.strerror}", path=path) from None
    if head.startswith(b"<"):
        return "medalign"
    if head.startswith(b"{"):
        return "jsonl" if b'"patient"' in head.split(b"\n", 1)[0] else "fhir"
    raise RecordError("cannot tell the format (use .json for FHIR, .xml for MedAlign, .jsonl for bedside)", path=path)


def read_records(path: str | Path, *, format: str | None = None) -> list[Record]:
    """Every record in ``path``: one for a FHIR bundle or MedAlign file, any number for bedside JSONL."""
    path = Path(path)
    if not path.is_file():
        raise RecordError("no such file" if not path.exists() else "not a file", path=path)
    kind = format or detect_format(path)
    if kind == "fhir":
        return [read_fhir_bundle(path)]
    if kind == "medalign":
        return [read_medalign_xml(path)]
    if kind == "jsonl":
        return read_records_jsonl(path)
    raise RecordError(f"unknown format {kind!r}; known: {', '.join(FORMATS)}", path=path)
