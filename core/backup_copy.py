"""Taking one backup: an online copy of the memory database from one snapshot, checked
(`integrity_check`), fsynced, and only then renamed into the backup folder.

It is copied with SQLite's backup API from a separate read-only connection inside one read
transaction, so it holds exactly the state committed when that transaction began, whatever the
writer does meanwhile.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from pathlib import Path

from core.atomic_file import FileNotWritten, Step, fsync_dir, fsync_file, reason_for
from core.backup_folder import (
    BackupInfo,
    format_stamp,
    list_backups,
    remove_leftover,
    remove_with_sidecars,
)
from core.clock import Clock
from core.errors import CairnError, IntegrityFailure, IOFault, StoreBusy
from core.paths import ensure_private_dir, free_space
from core.runtime import check_private_dir

log = logging.getLogger("core.backup")  # one logger for backups, whichever module logs

_TEMP_PREFIX = ".cairn-backup-"
_NOT_TAKEN = "no backup was taken"


def take(
    source: Path,
    directory: Path,
    reason: str,
    clock: Clock,
    timeout_s: float,
    *,
    stop: threading.Event | None = None,
) -> BackupInfo:
    """Copy `source` into a new backup in `directory` and return it."""
    ensure_private_dir(directory)  # IOFault when it cannot be made
    check_private_dir(directory, "backup directory")
    for leftover in directory.glob(f"{_TEMP_PREFIX}*.tmp"):
        # Only the holder of the store's lock writes here, so these are from a crashed backup.
        remove_leftover(leftover)
    taken = {b.created_at_ms // 1000 for b in list_backups(directory)}
    second = clock.now_ms() // 1000
    while second in taken:  # one backup per second, so names sort in the order they were taken
        second += 1
    target = directory / f"cairn-{format_stamp(second * 1000)}-{reason}.db"
    temp = directory / f"{_TEMP_PREFIX}{os.getpid()}-{threading.get_ident()}.tmp"
    step = Step.CREATE
    try:
        fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        step = Step.WRITE
        _copy(source, temp, timeout_s, stop)
        fsync_file(temp)
        step = Step.RENAME
        os.replace(temp, target)
        step = Step.SYNC
        fsync_dir(directory)
        size = target.stat().st_size
    except sqlite3.Error as e:
        raise _translated(e, source, target) from e
    except OSError as e:
        raise FileNotWritten(
            "backup", target, step, reason_for(e, directory), outcome=_NOT_TAKEN
        ) from e
    finally:
        remove_with_sidecars(temp)
    log.info("backed up %s to %s", source, target)
    return BackupInfo(target, reason, second * 1000, size)


class BackupStopped(Exception):
    """A backup given up because Cairn is stopping; nothing of it was kept."""


# Pages copied between two looks at the stop flag: 4 MB, a few ms (the two-year store's 275 MB
# copy plus its integrity check held a stopping Cairn 7.6 s, 2026-12-01).
COPY_PAGES = 1024


def _copy(source: Path, temp: Path, timeout_s: float, stop: threading.Event | None = None) -> None:
    """Copy `source` into `temp` from one snapshot and check the copy; with `stop`, the copy
    and the check end early once it is set (BackupStopped)."""

    def stopping(*_: int) -> None:
        if stop is not None and stop.is_set():
            raise BackupStopped("Cairn is stopping")

    src = sqlite3.connect(
        f"{source.absolute().as_uri()}?mode=ro", uri=True, timeout=timeout_s, isolation_level=None
    )
    try:
        # The read transaction pins one snapshot: every page copied comes from the state committed
        # when it began, however many commits the writer makes during the copy.
        src.execute("BEGIN")
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()
        dst = sqlite3.connect(temp, isolation_level=None)
        try:
            src.backup(dst, pages=COPY_PAGES if stop is not None else -1, progress=stopping)
            src.execute("COMMIT")
            # The copy carries the source's WAL flag; make it one self-contained file.
            dst.execute("PRAGMA journal_mode=DELETE").fetchone()
            if stop is not None:  # the check is one statement: interrupted from within
                dst.set_progress_handler(stop.is_set, 100_000)
            try:
                problems = [r[0] for r in dst.execute("PRAGMA integrity_check").fetchall()]
            except sqlite3.OperationalError:
                stopping()
                raise
        finally:
            dst.close()
    finally:
        src.close()
    if problems != ["ok"]:
        raise IntegrityFailure(
            f"the copy of {source} failed SQLite's integrity check ({'; '.join(problems[:3])}), "
            "so it was not kept: the database itself may be damaged - see "
            "docs/backup-and-export.md",
            data={"path": str(source), "problems": problems[:20]},
        )


def _translated(e: sqlite3.Error, source: Path, target: Path) -> CairnError:
    code = getattr(e, "sqlite_errorcode", 0) & 0xFF
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return IntegrityFailure(
            f"cannot back up {source}: {e}; the database may be damaged - see "
            "docs/backup-and-export.md",
            data={"path": str(source)},
        )
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreBusy(
            f"cannot back up {source} now ({e}); try again", data={"path": str(source)}
        )
    if code in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL):
        # What the disk said is not passed on by SQLite: the likely causes, and the room left.
        room = free_space(target.parent)
        why = (
            f"the disk refused to write it (SQLite: {e}) - a full disk ({room}), a file-size "
            "limit, or a failing disk"
        )
        return FileNotWritten("backup", target, Step.WRITE, why, outcome=_NOT_TAKEN)
    return IOFault(f"cannot back up {source} to {target}: {e}", data={"path": str(target)})
