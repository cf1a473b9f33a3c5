"""The text of a TOML file a person edits (settings.toml, policy.toml), read before any parser
sees it: never waited on, never read past a cap.

Cairn reads these files at start and, for the policy, on every edit while holding the lock that
`policy set` waits on: until 2026-12-01 a FIFO in their place (or a link to one) left Cairn
waiting for a writer for good, a link to /dev/zero or /dev/urandom read without end, and a
512 MiB file was read whole before its size was checked.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# A policy or settings file is a few KB: 1 MiB is far more than a person writes, and small
# enough to read and parse at once.
MAX_BYTES = 1024 * 1024

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO, a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class TextRefused(Exception):
    """The file was not read: `reason` says why, as a sentence about the file ("is not a
    regular file (a FIFO)")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NotAFile(TextRefused):
    """The path leads to a folder, a FIFO, a device or a socket, not to a regular file."""


class TooBig(TextRefused):
    """The file holds more than the cap; `size` is what it holds (at least cap + 1)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"is too big: {size:,} bytes, where Cairn reads at most {_mib(limit)} - was "
            "something else written into it?"
        )
        self.size = size


def _mib(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit % (1024 * 1024) == 0 else f"{limit:,} bytes"


def _refuse_unless_regular(mode: int) -> None:
    for check, kind in _KINDS:
        if check(mode):
            raise NotAFile(f"is not a regular file ({kind})")
    if not stat.S_ISREG(mode):
        raise NotAFile("is not a regular file")


def read_text(path: Path, *, limit: int = MAX_BYTES) -> str:
    """The text of the regular file at `path` (symbolic links followed, a UTF-8 byte order mark
    left out: Windows Notepad writes one and TOML has no place for it), read only when it is a
    regular file of at most `limit` bytes.

    Raises:
        NotAFile: the path leads to a folder, a FIFO, a device or a socket; nothing was read
            and nothing waited on.
        TooBig: the file holds more than `limit` bytes; at most `limit` + 1 were read.
        FileNotFoundError, OSError: as opening or reading the file raises them.
        UnicodeDecodeError: the text is not UTF-8.
    """
    _refuse_unless_regular(os.stat(path).st_mode)  # before opening: a device may act on open
    # Not waited on even if a FIFO was put there since the check; links are followed on
    # purpose (a dotfile manager's policy.toml is one).
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        _refuse_unless_regular(info.st_mode)
        if info.st_size > limit:
            raise TooBig(info.st_size, limit)
        chunks: list[bytes] = []
        left = limit + 1  # the file may have grown since fstat
        while left > 0:
            chunk = os.read(fd, min(left, 256 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise TooBig(max(info.st_size, len(data)), limit)
    return data.decode("utf-8-sig")
