"""Replacing a file whole or not at all, and saying why it could not be.

Every file Cairn writes outside the database (settings, policy, agent tokens, the pid file,
autostart entries, export archives) is written next to its final name, fsynced, given its mode,
renamed over the old file and the rename made durable: a crash leaves the old file or the new
one, never half of either. A step that fails raises `FileNotWritten`, which says which file,
which step and why in words a person acts on; the caller adds only what the file is for and
what stays as it was. Backups and restores copy a database through SQLite and keep their own
steps (core/backup.py) but use `fsync_file` and `fsync_dir` from here.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import tempfile
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import BinaryIO

from core.errors import IOFault
from core.paths import free_space, make_folders


class Step(Enum):
    """The step of replacing a file that failed."""

    FOLDER = "folder"  # making the folder the file goes in
    CREATE = "create"  # making the new file beside the old one
    WRITE = "write"  # writing the new file, flushing it, giving it its mode
    RENAME = "rename"  # putting the new file in the old one's place
    SYNC = "sync"  # making that durable: the new file is in place already


_STEP_SAID = {
    Step.FOLDER: "its folder {folder} cannot be made: ",
    Step.CREATE: "no new file can be made in {folder}: ",
    Step.WRITE: "",
    Step.RENAME: "it cannot be replaced: ",
}


class FileNotWritten(IOFault):
    """A file Cairn replaces could not be replaced: which file (`path`), the `step` that failed
    and the `reason` in words. Up to `Step.RENAME` the old file is as it was and no temporary
    file is left; the caller's `outcome` (what is unchanged) ends the message then.

    Args:
        what: what the file is for, as the message names it ("policy file").
        outcome: what stays as it was, said after the reason ("the setting is unchanged").
    """

    def __init__(
        self, what: str, path: Path, step: Step, reason: str, *, outcome: str = ""
    ) -> None:
        self.path = path
        self.step = step
        self.reason = reason
        if step is Step.SYNC:
            message = (
                f"the {what} {path} was written, but the change could not be made durable: "
                f"{reason}; a crash of the machine may still undo it"
            )
        else:
            where = _STEP_SAID[step].format(folder=path.parent)
            message = f"could not write the {what} {path}: {where}{reason}"
            if outcome:
                message += f"; {outcome}"
        super().__init__(message, data={"path": str(path), "step": step.value})


# What a person acts on, for the errno a failed write gives (the rest: reason_for).
_SAID = {
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the file system is read-only",
    errno.ENAMETOOLONG: "the name is too long for the file system",
    errno.EISDIR: "a folder is in its place; move it away",
    errno.EIO: "the disk reported an input/output error (is it failing, or was it removed?)",
    errno.EFBIG: (
        "the file would grow past the largest size this process may write (a file-size limit "
        "such as ulimit -f, or the file system's)"
    ),
}
if hasattr(errno, "EDQUOT"):  # not on Windows
    _SAID[errno.EDQUOT] = "your disk quota is used up; remove some of your files on that disk"


def reason_for(e: OSError, folder: Path) -> str:
    """Why writing a file in `folder` failed (`e`), in words a person acts on."""
    if e.errno == errno.ENOSPC:
        return f"the disk is full ({free_space(folder)})"
    if e.errno in (errno.ENOTDIR, errno.EEXIST):  # EEXIST: making a folder where a file is
        return f"{_file_in_the_way(folder)} is a file, not a folder"
    if e.errno == errno.ENOENT:
        return f"the folder {folder} does not exist"
    said = _SAID.get(e.errno or 0) or e.strerror or str(e)
    return said[:1].lower() + said[1:]


def _file_in_the_way(folder: Path) -> Path:
    """The first of `folder` and the folders above it that is there and is no folder."""
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate):
            if not candidate.is_dir():
                return candidate
            break
    return folder


@contextlib.contextmanager
def replacing(
    path: Path,
    *,
    what: str,
    mode: int = 0o600,
    folder_mode: int | None = None,
    outcome: str = "",
) -> Iterator[BinaryIO]:
    """A binary file to write `path`'s new content into. When the block ends cleanly the file
    is fsynced, given exactly `mode` (whatever the umask) and renamed over `path`; when it
    raises, the partial file is removed and `path` is untouched.

    Args:
        what: what the file is for, as an error names it ("settings file").
        folder_mode: make the folder (and those above it) first when missing, with this mode.
        outcome: what stays as it was when the file cannot be replaced, for the error.

    Raises:
        FileNotWritten: the folder, the new file, its content or the rename failed (an OSError
            raised inside the block counts as writing); `path` is as it was and no temporary
            file is left - or, at `Step.SYNC`, the new file is in place but not yet durable.
    """

    def refused(step: Step, e: OSError) -> FileNotWritten:
        return FileNotWritten(what, path, step, reason_for(e, path.parent), outcome=outcome)

    if folder_mode is not None:
        try:
            make_folders(path.parent, folder_mode)
        except OSError as e:
            raise refused(Step.FOLDER, e) from e
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise refused(Step.CREATE, e) from e
    step = Step.WRITE
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        step = Step.RENAME
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise refused(step, e) from e
        raise
    try:
        fsync_dir(path.parent)
    except OSError as e:
        raise refused(Step.SYNC, e) from e


def write_atomically(
    path: Path,
    data: bytes | str,
    *,
    what: str,
    mode: int = 0o600,
    folder_mode: int | None = None,
    outcome: str = "",
) -> None:
    """Replace `path` with `data` (text is written as UTF-8, newlines as given); the keywords
    and what it raises are `replacing`'s."""
    with replacing(path, what=what, mode=mode, folder_mode=folder_mode, outcome=outcome) as fh:
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
