"""What readers raise and warn: always naming the file, and the line or field, that is at fault."""

from __future__ import annotations

from pathlib import Path


class RecordError(ValueError):
    """A record file cannot be read as a whole. Nothing is returned half-read."""

    def __init__(self, message: str, *, path: str | Path | None = None, where: str | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.where = where
        self.reason = message
        located = ": ".join(part for part in (self.path, where) if part)
        super().__init__(f"{located}: {message}" if located else message)


class RecordWarning(UserWarning):
    """Something in a record file was skipped on purpose (an unmodelled resource type, an unknown element)."""
