"""JSON Lines files of objects, read with errors a person can act on: the file and line of what is wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bedside.inputs import InputError, read_json_lines


def json_objects(path: Path, error: type[InputError] = InputError) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line. Every problem raises ``error`` naming the file (and line):
    unreadable, not UTF-8, not valid JSON (nested too deeply, a number too long), or not a JSON object.

    Kept as the name task readers import; the work is :func:`bedside.inputs.read_json_lines`.
    """
    return read_json_lines(path, error=error)
