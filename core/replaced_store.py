"""What Cairn keeps when its database file is replaced by hand - the store it had open, and the
write-ahead log that is no longer the file's - so the log is never applied to another file.

SQLite's write-ahead log (`cairn.db-wal`) says nothing about which file it belongs to: opened
beside another file under the same name, its pages are laid over that file's (a backup renamed
or copied over `cairn.db` became "database disk image is malformed"). A set-aside log is named
`cairn.db.replaced-<time>.wal` (and its index `.shm`), names SQLite never pairs with a file;
the store Cairn had open, when kept, is `cairn.db.replaced-<time>`, as `cairn restore` names
the database it replaces. A serving Cairn sets its own log aside when its file is replaced or
overwritten (`core/store.py`, `Store.close`); opening sets aside a log that breaks a file sound
on its own (`set_foreign_log_aside`).

The header a serving Cairn looks at every few seconds (`overwritten`) is read through a
descriptor the store holds until it closes (`Store.overwritten`), never one opened and closed
for the look: POSIX drops every lock a process holds on a file when it closes any descriptor of that
file, SQLite's included.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path

from core.atomic_file import fsync_dir, fsync_file, reason_for
from core.errors import IOFault

log = logging.getLogger(__name__)

STAMP = "%Y%m%dT%H%M%SZ"  # as core/backup.py stamps `cairn.db.replaced-<time>`
LOG_SUFFIXES = (".wal", ".shm")  # what a set-aside -wal and -shm are named after the stamp


class FileGone(Enum):
    """How the file a store had open went from under it."""

    REPLACED = "replaced"  # another file, or none, at its path (moved over it, removed)
    OVERWRITTEN = "overwritten"  # the same file, its contents another file's (copied over it)


def overwritten(header_fd: int) -> bool:
    """True when the database file `header_fd` reads, which a serving Cairn holds as a
    write-ahead-logged SQLite store, now holds what such a store never writes there: another
    header, or a file without the WAL flag (bytes 18 and 19 of the header are 2 from the moment
    Cairn opens a store, and every page 1 it writes carries them) - a Cairn backup copied over
    it, for one. A file shorter than a header says nothing (a young store's file stays empty
    until its first checkpoint; a copy under way is looked at again).

    `header_fd` stays open as long as the store (`Store.overwritten`): it is never a descriptor
    opened and closed for the look, because POSIX drops every lock a process holds on a file
    when it closes any descriptor of that file, SQLite's included. Each look that did (until
    2026-12-01) dropped the serving store's locks, and the next program to write the store and
    close (the sqlite3 shell, a script) took itself for the last one using it: it folded the
    write-ahead log into the file and removed it under Cairn - a read on a new connection failed
    ("disk I/O error"), and what Cairn stored after went into the removed log."""
    try:
        if hasattr(os, "pread"):
            head = os.pread(header_fd, 100, 0)
        else:  # pragma: no cover - Windows, where closing a descriptor drops no other's locks
            os.lseek(header_fd, 0, os.SEEK_SET)
            head = os.read(header_fd, 100)
    except OSError:
        return False
    if len(head) < 100:
        return False
    return head[:16] != b"SQLite format 3\x00" or head[18:20] != b"\x02\x02"


@dataclass(frozen=True)
class Kept:
    """What a Cairn whose file was replaced kept when it stopped."""

    store: Path | None = None  # the store it had open, whole on its own
    log: Path | None = None  # its write-ahead log, away from the file now at the path
    problems: tuple[str, ...] = ()  # what could not be kept or set aside, and why, in words

    def said(self) -> str:
        """As told after why Cairn stopped ("" when nothing was kept)."""
        parts = []
        if self.store is None and self.log is not None and not self.problems:
            parts.append("the store it had open could not be kept whole")
        if self.store is not None:
            parts.append(f"the store it had open is kept as {self.store}")
        if self.log is not None:
            parts.append(
                f"its write-ahead log is kept as {self.log}, so it is never applied to the file "
                "at the path now"
            )
        parts.extend(self.problems)
        return "; ".join(parts)


def aside_name(database: Path) -> Path:
    """`cairn.db.replaced-<now>` (`-2`, `-3`... when taken), free together with its sidecars."""
    stamp = datetime.now(UTC).strftime(STAMP)
    aside = database.with_name(f"{database.name}.replaced-{stamp}")
    n = 1
    while any(Path(f"{aside}{s}").exists() for s in ("", "-wal", "-shm", *LOG_SUFFIXES)):
        n += 1
        aside = database.with_name(f"{database.name}.replaced-{stamp}-{n}")
    return aside


def kept_stores(database: Path) -> list[Path]:
    """The whole stores kept beside `database` (`cairn.db.replaced-<time>`, by a serving Cairn
    whose file was replaced, or by `cairn restore`), oldest first - not their logs."""
    names = database.parent.glob(f"{glob.escape(database.name)}.replaced-*")
    return sorted(p for p in names if not p.name.endswith(("-wal", "-shm", *LOG_SUFFIXES)))


def keep_open_store(conn: sqlite3.Connection, aside: Path) -> None:
    """Copy the store `conn` has open - its file with its log, as the connection reads them -
    to `aside`, a database that holds it whole on its own. Only reads through `conn`: nothing
    is written to its file or its log (a checkpoint would write into the log's path, which may
    be another store's by now).

    Raises:
        sqlite3.Error, OSError: it could not be copied (nothing is left at `aside`).
    """
    temp = aside.with_name(f".{aside.name}.tmp")
    try:
        fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        os.close(fd)
        dest = sqlite3.connect(temp)
        try:
            conn.backup(dest)
            # One self-contained file, as a backup is (and one `overwritten` tells from a store).
            dest.execute("PRAGMA journal_mode=DELETE").fetchone()
        finally:
            dest.close()
        fsync_file(temp)
        os.replace(temp, aside)
        fsync_dir(aside.parent)
    finally:
        for leftover in (temp, Path(f"{temp}-journal")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def set_log_aside(database: Path, aside: Path) -> Path | None:
    """Rename `database`'s -wal and -shm to `aside` + `.wal` / `.shm`; returns the log's new
    path, or None when there was no log.

    Raises:
        OSError: a rename failed; the log is back beside the database (unless that failed too).
    """
    moved = None
    for suffix, new in zip(("-wal", "-shm"), LOG_SUFFIXES, strict=True):
        try:
            os.rename(f"{database}{suffix}", f"{aside}{new}")
        except FileNotFoundError:
            continue
        except OSError:
            if moved is not None:  # both or neither: the log goes back beside its index
                with contextlib.suppress(OSError):
                    os.rename(moved, f"{database}-wal")
            raise
        if suffix == "-wal":
            moved = Path(f"{aside}{new}")
    fsync_dir(database.parent)
    return moved


def set_foreign_log_aside(path: Path) -> Path | None:
    """When the file at `path` is sound on its own (`PRAGMA quick_check` without its log), set
    its write-ahead log and index aside (`set_log_aside`) and return the log's new path; else
    None, and nothing moves. Called when the file with its log failed the checks on opening.

    SQLite cannot tell a log is another file's: it applies whatever lies at `<path>-wal`. A
    file that reads as damaged with the log and sound without it is taken as one whose log is
    not its own - a backup put over `cairn.db` beside a killed Cairn's log. (A log that is the
    file's own and breaks it would be set aside the same way: it is kept, so nothing is lost.)
    The store's lock is held: no one else has the files open."""
    wal = Path(f"{path}-wal")
    if not wal.is_file() or wal.stat().st_size == 0:
        return None
    try:
        # immutable: the file alone, as it is on disk - no log is read, no lock taken
        conn = sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True)
        try:
            if not conn.execute("PRAGMA user_version").fetchone()[0]:
                return None
            if [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()] != ["ok"]:
                return None
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    aside = aside_name(path)
    try:
        kept = set_log_aside(path, aside)
    except OSError as e:
        raise IOFault(
            f"the write-ahead log {wal} does not belong to the memory database {path} (applied, "
            "it breaks a file that is sound on its own), and it could not be moved aside: "
            f"{reason_for(e, path.parent)}; Cairn has not changed either file",
            data={"path": str(path)},
        ) from e
    log.warning(
        "the write-ahead log beside %s was not its own (applied, it broke a file that is sound "
        "on its own: was a backup put in its place?); it is kept as %s and the database opens "
        "without it",
        path,
        kept,
    )
    return kept
