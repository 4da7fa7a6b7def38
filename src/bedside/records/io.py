"""Reading records from any supported file, chosen by what the file is."""

from __future__ import annotations

import logging
from pathlib import Path

from bedside.records.errors import NoPatientError, RecordError
from bedside.records.fhir import read_fhir_bundle
from bedside.records.jsonl import read_records_jsonl
from bedside.records.medalign import read_medalign_xml
from bedside.records.model import Record

FORMATS = ("fhir", "medalign", "jsonl")
logger = logging.getLogger("bedside.records")


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


RECORD_SUFFIXES = (".json", ".xml", ".jsonl", ".ndjson")
"""The files :func:`read_records` reads from a folder (anything else there, and hidden files, are left alone)."""


def read_records(path: str | Path, *, format: str | None = None) -> list[Record]:
    """Every record in ``path``: one for a FHIR bundle or MedAlign file, any number for bedside JSONL; a folder
    is one dataset of every record file directly in it (:data:`RECORD_SUFFIXES`, in name order), e.g. one FHIR
    bundle per patient as Synthea writes them. A patient in two files of a folder is an error naming both."""
    path = Path(path)
    if path.is_dir():
        return _read_folder(path, format=format)
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


def _read_folder(folder: Path, *, format: str | None) -> list[Record]:
    files = sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and not p.name.startswith(".") and p.suffix.lower() in RECORD_SUFFIXES
    )
    records: list[Record] = []
    seen: dict[str, Path] = {}
    skipped: list[str] = []
    for file in files:
        try:
            found = read_records(file, format=format)
        except NoPatientError:
            skipped.append(file.name)  # a manifest, or a hospital or practitioner bundle: no patient to read
            continue
        for record in found:
            first = seen.setdefault(record.patient.id, file)
            if first != file:
                raise RecordError(f"patient {record.patient.id!r} is also in {first.name}", path=file)
            records.append(record)
    if skipped:
        logger.warning("%s: skipped %d file(s) that hold no patient: %s", folder, len(skipped), ", ".join(skipped[:5]))
    if not records:
        raise RecordError(f"no patient record in this folder's {', '.join(RECORD_SUFFIXES)} files", path=folder)
    return records
