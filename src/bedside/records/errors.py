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


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, refusing before reading when it is larger than ``max_bytes``."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise RecordError(
                f"file is {size / 1e6:.0f} MB, over the {max_bytes / 1e6:.0f} MB limit "
                "(pass a larger max_bytes if this is intended)",
                path=path,
            )
        return path.read_bytes()
    except OSError as exc:
        raise RecordError(f"cannot read: {exc.strerror}", path=path) from None
