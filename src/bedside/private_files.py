"""Files that hold patient text are readable by their owner only, whatever the umask.

Prompts carry patients' records and messages, and outputs answer about them, so the run store, the response
cache, reports, exports and the task commands' outputs (submissions, SFT and preference sets, review items,
parsed cases, de-duplicated instructions, training output folders) are written through this module: files
0600, the folders bedside creates for them 0700. A common umask of 022 would otherwise leave all of them
readable by every account on a shared machine.

Rules, so that bedside never loosens what a user chose nor quietly changes their folders:

- a folder that already exists (the working directory, ``~/.cache``) is left as it is; only folders bedside
  creates are made 0700;
- a file bedside writes whole (a report, an export) is 0600 afterwards, even if it existed before with a wider
  mode: what it now holds is bedside's output; a file owned by someone else keeps its mode;
- a database file (store, cache) is created 0600 before SQLite opens it; SQLite gives its ``-wal``, ``-shm``
  and journal files the database file's mode. An existing database keeps its mode (it may be shared on
  purpose): ``chmod 600`` it, and its ``-wal``/``-shm`` files, to tighten one made by an older bedside.

Mode bits are POSIX; on Windows the folder's ACLs decide who can read.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO, TextIO

FILE_MODE = 0o600
DIR_MODE = 0o700

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def private_dir(path: str | Path) -> Path:
    """Create ``path`` and its missing parents as 0700; folders that exist already are not touched."""
    path = Path(path)
    missing: list[Path] = []
    current = path
    while not os.path.lexists(current):
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:
            continue  # another process made it meanwhile: not ours to change
        os.chmod(folder, DIR_MODE)  # mkdir's mode went through the umask
    if not path.is_dir():
        raise FileExistsError(errno.EEXIST, "exists and is not a folder", str(path))
    return path


def create_private_file(path: str | Path) -> bool:
    """Create an empty 0600 file (and its folder) unless the path exists; say whether it was created.

    Used before SQLite opens a database: SQLite would create it with the umask's mode, and its side files copy
    whatever mode the database has.
    """
    path = Path(path)
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, FILE_MODE)
    except FileExistsError:
        return False
    try:
        _tighten(fd)
    finally:
        os.close(fd)
    return True


def _open_fd(path: Path) -> int:
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _CLOEXEC, FILE_MODE)
    try:
        _tighten(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _tighten(fd: int) -> None:
    # Only regular files: ``-o /dev/stdout`` or a named pipe is the user's own plumbing.
    if os.name == "posix" and stat.S_ISREG(os.fstat(fd).st_mode):
        with contextlib.suppress(PermissionError):  # someone else's file we may write to: a deliberate share
            os.fchmod(fd, FILE_MODE)


def open_private(path: str | Path) -> TextIO:
    """Open ``path`` for writing UTF-8 text (truncated), 0600, creating its folder 0700 if missing."""
    return os.fdopen(_open_fd(Path(path)), "w", encoding="utf-8")


def open_private_binary(path: str | Path) -> BinaryIO:
    """Open ``path`` for writing bytes (truncated), 0600, creating its folder 0700 if missing."""
    return os.fdopen(_open_fd(Path(path)), "wb")


def write_private_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` as a 0600 file."""
    with open_private(path) as handle:
        handle.write(text)
    return Path(path)


@contextlib.contextmanager
def replace_private(path: str | Path, *, binary: bool = False) -> Iterator[IO[Any]]:
    """Write a whole file through a 0600 temporary file beside ``path``, renamed over it only once complete.

    An export that fails part-way (the disk fills, the process is stopped) leaves no partial file, and an
    earlier file at ``path`` as it was. Something that is not a regular file (``-o /dev/stdout``, a pipe) is
    written in place: it cannot be renamed over.
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        with open_private_binary(path) if binary else open_private(path) as handle:
            yield handle
        return
    private_dir(path.parent)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.partial")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, FILE_MODE)
    try:
        _tighten(fd)
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
