"""bedside's own record form: one JSON record per line, read back exactly as written."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from bedside.inputs import loads_json, nonempty
from bedside.private_files import FILE_MODE, private_dir
from bedside.records.errors import RecordError
from bedside.records.model import Record


def iter_records_jsonl(path: str | Path) -> Iterator[Record]:
    """Yield the records of a JSONL file; a bad line is a :class:`RecordError` naming its number and field."""
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"cannot read: {exc.strerror}", path=path) from None
    with handle:
        number = 0
        seen: dict[str, int] = {}
        try:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                record = _record(line, path, number)
                # Two records of one patient would be two charts for one id: which one a case reads is chance.
                if record.patient.id in seen:
                    raise RecordError(
                        f"patient {record.patient.id!r} is also on line {seen[record.patient.id]}: one record per "
                        "patient (merge them)",
                        path=path,
                        where=f"line {number}",
                    )
                seen[record.patient.id] = number
                yield record
        except UnicodeDecodeError as exc:
            raise RecordError(f"not UTF-8 text ({exc.reason})", path=path, where=f"line {number + 1}") from None


def _record(line: str, path: Path, number: int) -> Record:
    if "\x00" in line or "\\u0000" in line:  # a NUL byte: binary data, or text no prompt or store should carry
        raise RecordError(
            "holds a NUL character (\\u0000): not text a record can hold", path=path, where=f"line {number}"
        )
    data = loads_json(line, path=path, line=number, error=RecordError)
    try:
        return Record.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        field = ".".join(str(part) for part in problem["loc"]) or "(record)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        message = str(problem["msg"]).removeprefix("Value error, ")
        raise RecordError(f"{message}{more}", path=path, where=f"line {number} field {field!r}") from None


def read_records_jsonl(path: str | Path) -> list[Record]:
    return nonempty(list(iter_records_jsonl(path)), path, "records", error=RecordError)


def write_records_jsonl(records: Iterable[Record], path: str | Path) -> int:
    """Write records atomically (a crash leaves the old file or the new one, never half of one).

    The file is 0600 and a folder made for it 0700: records are patient data (:mod:`bedside.private_files`).
    """
    path = Path(path)
    private_dir(path.parent)
    count = 0
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.chmod(temporary, FILE_MODE)  # mkstemp asks for 0600, but through the umask
            for record in records:
                handle.write(record.model_dump_json(exclude_defaults=True))
                handle.write("\n")
                count += 1
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return count
