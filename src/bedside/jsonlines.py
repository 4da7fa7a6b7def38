"""JSON Lines files of objects, read with errors a person can act on: the file and line of what is wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def json_objects(path: Path, error: type[ValueError] = ValueError) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line. Every problem raises ``error`` naming the file (and line):
    unreadable, not valid JSON, or a line that is not a JSON object."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from None
    out = []
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{number}: not valid JSON ({exc.msg}, column {exc.colno})") from None
        if not isinstance(record, dict):
            raise error(f"{path}:{number}: expected a JSON object")
        out.append((number, record))
    return out
