"""What readers raise and warn: always naming the file, and the line or field, that is at fault."""

from __future__ import annotations

from pathlib import Path

from bedside.inputs import InputError, read_bytes


class RecordError(InputError):
    """A record file cannot be read as a whole. Nothing is returned half-read.

    An :class:`~bedside.inputs.InputError` (so the command reports it in one line), written as
    ``FILE: WHERE: reason`` where ``WHERE`` is a line, an element or a FHIR entry and field.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        where: str | None = None,
        line: int | None = None,
        field: str | None = None,
        column: int | None = None,
    ) -> None:
        if where is None and (line is not None or field):
            parts = (
                f"line {line}" if line is not None else "",
                f"column {column}" if line is not None and column is not None else "",
                f"field {field}" if field else "",
            )
            where = " ".join(p for p in parts if p)
        super().__init__(message)
        self.path = str(path) if path is not None else None
        self.line = line
        self.column = column
        self.field = field
        self.where = where
        located = ": ".join(part for part in (self.path, where) if part)
        self.args = (f"{located}: {message}" if located else message,)


class RecordWarning(UserWarning):
    """Something in a record file was skipped on purpose (an unmodelled resource type, an unknown element)."""


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, refusing before reading when it is larger than ``max_bytes``."""
    return read_bytes(path, max_bytes=max_bytes, error=RecordError)


class NoPatientError(RecordError):
    """A JSON file that holds no patient: not a FHIR Bundle (a manifest), or a Bundle without a Patient (Synthea's
    hospital and practitioner bundles). Reading one file, an error; reading a folder, the file is skipped, and
    said so."""
