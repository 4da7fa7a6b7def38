"""Errors shared by layers that do not otherwise depend on each other."""

from __future__ import annotations


class StorageError(Exception):
    """A file or database bedside must write cannot be opened or written (unwritable path, disk full).

    The message names the location and says what is safe: rows already committed are never lost, and a run
    stopped by this error resumes where it stopped once the cause is fixed.
    """
