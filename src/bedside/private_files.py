"""Files that hold patient text are readable by their owner only, whatever the umask.

Prompts carry patients' records and messages, and outputs answer about them, so the run store, the response
cache, reports, exports and the task commands' outputs (submissions, SFT and preference sets, review items,
parsed cases, de-duplicated instructions, training output folders) are written through this module: files
0600, the folders bedside creates for them 0700. A common umask of 022 would otherwise leave all of them
readable by every account on a shared machine.

Rules, so that bedside never loosens what a user chose nor quietly changes their folders:

- a folder that already exists (the working directory, ``~/.cache``) is left as it is; only folders bedside
  creates are made 0700; the exception is a folder named as a report's own output folder
  (``bedside report -o DIR``), made 0700 when the user owns it and it is not the working or home folder;
- a path that is a symbolic link to a regular file (or to nothing yet) is refused (:class:`SymlinkRefusedError`)
  unless the caller asks to follow links (``--follow-symlinks``): a link planted at an output path would
  otherwise make bedside overwrite its target with patient text; a link to a device or pipe (``/dev/stdout``)
  is the user's plumbing and is written to;
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
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class SymlinkRefusedError(OSError):
    """An output path is a symbolic link and following it was not asked for."""


_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def private_dir(path: str | Path, *, tighten: bool = False, follow_symlinks: bool = False) -> Path:
    """Create ``path`` and its missing parents as 0700; folders that exist already are not touched, except
    ``path`` itself with ``tighten`` (a report's own folder): made 0700 when this user owns it and it is
    neither the working folder nor the home folder. With ``tighten``, a ``path`` that is a symbolic link is
    refused (:class:`SymlinkRefusedError`) unless ``follow_symlinks``, and even then the folder it points to is
    written into but never re-moded: it is not bedside's."""
    path = Path(path)
    if tighten and os.path.islink(path):
        if not follow_symlinks:
            raise _link_refused(path)
        tighten = False
    existed = path.is_dir()
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
    if tighten and existed and os.name == "posix":
        _tighten_folder(path)
    return path


def _tighten_folder(path: Path) -> None:
    resolved = path.resolve()
    if resolved in (Path.cwd().resolve(), Path.home().resolve(), Path(resolved.anchor)):
        return
    info = os.stat(resolved)
    if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
        with contextlib.suppress(PermissionError):
            os.chmod(resolved, stat.S_IMODE(info.st_mode) & ~0o077 | DIR_MODE)


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


def _link_refused(path: Path) -> SymlinkRefusedError:
    return SymlinkRefusedError(
        errno.ELOOP,
        f"is a symbolic link (to {os.readlink(path)}); bedside does not write through links, so a "
        "planted link cannot make it overwrite another file: remove the link, choose another path, "
        "or pass --follow-symlinks",
        str(path),
    )


def _open_fd(path: Path, follow_symlinks: bool = False) -> int:
    private_dir(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _CLOEXEC
    if not follow_symlinks:
        if os.path.islink(path):
            try:
                plumbing = not stat.S_ISREG(os.stat(path).st_mode)  # /dev/stdout, a named pipe
            except FileNotFoundError:
                plumbing = False  # a dangling link: writing would create its target
            if not plumbing:
                raise _link_refused(path)
        else:
            flags |= _NOFOLLOW  # a link made between the check and the open fails here
    fd = os.open(path, flags, FILE_MODE)
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


def open_private(path: str | Path, *, follow_symlinks: bool = False) -> TextIO:
    """Open ``path`` for writing UTF-8 text (truncated), 0600, creating its folder 0700 if missing; a symbolic
    link at ``path`` is refused unless ``follow_symlinks``."""
    return os.fdopen(_open_fd(Path(path), follow_symlinks), "w", encoding="utf-8")


def open_private_binary(path: str | Path, *, follow_symlinks: bool = False) -> BinaryIO:
    """Open ``path`` for writing bytes (truncated), 0600, creating its folder 0700 if missing; a symbolic link
    at ``path`` is refused unless ``follow_symlinks``."""
    return os.fdopen(_open_fd(Path(path), follow_symlinks), "wb")


def write_private_text(path: str | Path, text: str, *, follow_symlinks: bool = False) -> Path:
    """Write ``text`` to ``path`` as a 0600 file."""
    with open_private(path, follow_symlinks=follow_symlinks) as handle:
        handle.write(text)
    return Path(path)


@contextlib.contextmanager
def replace_private(path: str | Path, *, binary: bool = False, follow_symlinks: bool = False) -> Iterator[IO[Any]]:
    """Write a whole file through a 0600 temporary file beside ``path``, renamed over it only once complete.

    An export that fails part-way (the disk fills, the process is stopped) leaves no partial file, and an
    earlier file at ``path`` as it was. Something that is not a regular file (``-o /dev/stdout``, a pipe) is
    written in place: it cannot be renamed over. A symbolic link at ``path`` is refused unless
    ``follow_symlinks``, and then its target is the file replaced.
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        with (
            open_private_binary(path, follow_symlinks=follow_symlinks)
            if binary
            else open_private(path, follow_symlinks=follow_symlinks)
        ) as handle:
            yield handle
        return
    if os.path.islink(path):
        if not follow_symlinks:
            raise _link_refused(path)
        path = path.resolve()
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
