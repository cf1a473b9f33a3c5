"""Replacing a file whole or not at all.

Every file Cairn writes outside the database (settings, policy, agent tokens, autostart
entries, archived audit events, export archives) is written next to its final name, fsynced,
given its mode, renamed over the old file and the rename made durable: a crash leaves the old
file or the new one, never half of either. Backups and restores copy a database through SQLite
and keep their own steps (core/backup.py) but use `fsync_file` and `fsync_dir` from here.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


@contextlib.contextmanager
def replacing(path: Path, *, mode: int = 0o600) -> Iterator[BinaryIO]:
    """A binary file to write `path`'s new content into. When the block ends cleanly the file
    is fsynced, given exactly `mode` (whatever the umask) and renamed over `path`; when it
    raises, the partial file is removed and `path` is untouched.

    Raises:
        OSError: the temporary file could not be created, written or renamed.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def write_atomically(path: Path, data: bytes | str, *, mode: int = 0o600) -> None:
    """Replace `path` with `data` (text is written as UTF-8, newlines as given)."""
    with replacing(path, mode=mode) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def fsync_file(path: Path) -> None:
    """Make a file's written bytes durable (Windows flushes only a handle open for writing)."""
    fd = os.open(path, os.O_RDWR if sys.platform == "win32" else os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Make a rename in the directory `path` durable (not possible, nor needed, on Windows)."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
