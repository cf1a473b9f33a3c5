"""Restoring a backup while Cairn is stopped: the checks before the person confirms, the copy
put in place of the memory database (which is kept as `cairn.db.replaced-<time>`), and the rotated
audit files sorted between the two histories."""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import audit_files
from core.atomic_file import fsync_dir, reason_for
from core.backup_folder import format_stamp, info_for, remove_leftover, remove_with_sidecars
from core.database import StoreLock
from core.errors import (
    AlreadyRunning,
    IntegrityFailure,
    InvalidInput,
    IOFault,
    NotFound,
    RuntimeUnsafe,
)
from core.migrations import (
    SchemaVersion,
    foreign,
    lacking,
    missing_schema,
    read_version,
    refuse_newer_major,
)
from core.paths import Paths, ensure_private_dir
from core.runtime import probe, socket_path

log = logging.getLogger("core.backup")  # one logger for backups, whichever module logs


@dataclass(frozen=True)
class RestoreReport:
    """What `restore` did: which backup, from when, where the replaced database went, and where
    the rotated audit files of its history that the backup does not know went."""

    database: Path
    restored_from: Path
    backup_created_at_ms: int
    schema: str
    memories: int
    replaced: Path | None
    audit_set_aside: tuple[Path, ...] = ()
    audit_brought_back: tuple[Path, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "database": str(self.database),
            "restored_from": str(self.restored_from),
            "backup_created_at": self.backup_created_at_ms,
            "schema": self.schema,
            "memories": self.memories,
            "replaced": None if self.replaced is None else str(self.replaced),
            "audit_set_aside": [str(p) for p in self.audit_set_aside],
            "audit_brought_back": [str(p) for p in self.audit_brought_back],
        }


def check_backup(paths: Paths, source: Path) -> None:
    """Refuse a backup `restore` would refuse for what it is, before the person is asked to
    confirm (until 2026-12-01 a damaged file or one that is no database was refused only after
    the person typed `restore`). The file is read in place, read-only, and never written to;
    `restore` checks its copy again, holding the store's lock.

    Raises:
        NotFound, InvalidInput, IntegrityFailure, SchemaTooNew: as `restore` does.
    """
    source = _backup_file(paths, source)
    _verify(source, source, in_place=True)


def _backup_file(paths: Paths, source: Path) -> Path:
    """`source` as an absolute path, when it is a file that may be restored over `paths`' store.

    Raises:
        NotFound: it is not a file.
        InvalidInput: it is a folder, the live database, or has a write-ahead log beside it.
    """
    source = Path(os.path.abspath(os.path.expanduser(source)))
    if source.is_dir():
        raise InvalidInput(
            f"{source} is a folder; give a backup file (`cairn backup --list` shows them)",
            data={"path": str(source)},
        )
    if not source.is_file():
        raise NotFound(
            f"there is no backup file {source}; `cairn backup --list` shows the backups",
            data={"path": str(source)},
        )
    if paths.database.exists() and source.samefile(paths.database):
        raise InvalidInput(f"{source} is the live database itself; choose a backup")
    if Path(f"{source}-wal").exists() and Path(f"{source}-wal").stat().st_size > 0:
        raise InvalidInput(
            f"{source} has a write-ahead log next to it ({source.name}-wal), so the file alone "
            "is not the whole database; choose a backup made by Cairn",
            data={"path": str(source)},
        )
    return source


def refuse_while_running(paths: Paths) -> None:
    """Raise AlreadyRunning when a Cairn answers on the socket."""
    try:
        path = socket_path(paths)
    except RuntimeUnsafe:
        return  # no Cairn can serve a path that long; the store lock still guards the restore
    if probe(path):
        raise AlreadyRunning(
            f"Cairn is running (it answers on {path}); stop it first with `cairn stop`, then "
            "restore",
            data={"socket": str(path)},
        )


def restore(paths: Paths, source: Path) -> RestoreReport:
    """Replace the memory database with the backup `source`, keeping the database it replaces.

    Cairn must not be running: the socket is probed and the store's lock is held throughout, so
    no Cairn can start halfway. The backup is copied next to the database and checked there (a
    SQLite file, `integrity_check` ok, a Cairn schema of this major or older) before anything is
    moved; then the current database and its -wal/-shm become `cairn.db.replaced-<time>` and the
    copy is renamed into place. Rotated audit files that are not part of the restored database's
    history (rotated after the backup was taken: the same seq numbers will be used again) move
    into `<state>/audit/replaced-<time>/`, so no later rotation can replace them. Restoring
    `cairn.db.replaced-<time>` itself (undoing a restore) brings that folder's files back.

    Raises:
        AlreadyRunning: Cairn is running (the message says to stop it with `cairn stop`).
        NotFound: `source` is not a file.
        InvalidInput: `source` is not a SQLite database, not Cairn's, or is the live database.
        IntegrityFailure: the backup is damaged.
        SchemaTooNew: the backup was written by a newer major version of Cairn.
        IOFault: the files could not be copied or moved: which step and why, in words; the
            database is as it was.
    """
    source = _backup_file(paths, source)
    database = paths.database
    refuse_while_running(paths)
    lock = _hold_store_lock(paths)
    try:
        refused = functools.partial(_restore_fault, source, paths)
        try:
            ensure_private_dir(paths.data)
        except OSError as e:
            raise refused(f"its folder {paths.data} cannot be made", e) from e
        for leftover in paths.data.glob(".cairn.db.restore-*.tmp"):  # from a crashed restore
            remove_leftover(leftover)
        try:
            fd, name = tempfile.mkstemp(prefix=".cairn.db.restore-", suffix=".tmp", dir=paths.data)
        except OSError as e:
            raise refused(f"no new file can be made in {paths.data}", e) from e
        temp = Path(name)
        try:
            try:
                with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
                    while chunk := src.read(1 << 20):
                        out.write(chunk)
                    out.flush()
                    os.fsync(out.fileno())
            except OSError as e:
                raise refused(f"it cannot be copied into {paths.data}", e) from e
            version, memories = _verify(temp, source)
            stamp = format_stamp(int(time.time() * 1000))
            try:
                replaced = _move_aside(database, stamp)
                os.replace(temp, database)
            except OSError as e:
                raise refused(f"it cannot be put in place of {database}", e) from e
            try:
                fsync_dir(paths.data)
            except OSError as e:
                raise refused(
                    f"it was put in place of {database}, but that could not be made durable",
                    e,
                    outcome="a crash of the machine may still undo it",
                ) from e
        finally:
            remove_with_sidecars(temp)
        folder = replaced.name.removeprefix(f"{database.name}.") if replaced else None
        returning = None
        if source.parent == database.parent and source.name.startswith(
            f"{database.name}.replaced-"
        ):
            returning = paths.audit_archive / source.name.removeprefix(f"{database.name}.")
        aside, back = _sort_audit_files(database, paths.audit_archive, folder, returning)
    finally:
        lock.release()
    info = info_for(source)
    created = info.created_at_ms if info else int(source.stat().st_mtime * 1000)
    return RestoreReport(database, source, created, str(version), memories, replaced, aside, back)


def _restore_fault(
    source: Path,
    paths: Paths,
    doing: str,
    e: OSError,
    *,
    outcome: str = "the memory database is as it was",
) -> IOFault:
    """A restore of `source` that failed at `doing` with `e`, said in words, and `outcome`."""
    return IOFault(
        f"could not restore {source}: {doing}: {reason_for(e, paths.data)}; {outcome}",
        data={"path": str(paths.database)},
    )


def _hold_store_lock(paths: Paths) -> StoreLock:
    try:
        return StoreLock(paths.store_lock).acquire()
    except AlreadyRunning as e:
        raise AlreadyRunning(
            f"Cairn is running (pid {e.data.get('pid', '?')}) and holds the memory store; stop "
            "it first with `cairn stop`, then restore",
            data=e.data,
        ) from e


def _verify(copy: Path, source: Path, *, in_place: bool = False) -> tuple[SchemaVersion, int]:
    """Check the copy of a backup; return its schema version and how many memories it holds.
    `in_place`: `copy` is the person's file itself, opened immutable (read-only, no locks, no
    -shm or -wal made beside it) and left as it is; a copy is made one self-contained file."""
    try:
        if in_place:
            conn = sqlite3.connect(f"{copy.as_uri()}?immutable=1", uri=True, isolation_level=None)
        else:
            conn = sqlite3.connect(copy, isolation_level=None)
        try:
            version = read_version(conn)
            problems = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
            if problems != ["ok"]:
                raise IntegrityFailure(
                    f"the backup {source} is damaged (SQLite's integrity check: "
                    f"{'; '.join(problems[:3])}); nothing was restored - choose another backup "
                    "(`cairn backup --list`)",
                    data={"path": str(source), "problems": problems[:20]},
                )
            reason = foreign(conn) or ("it holds no tables" if version.encoded == 0 else None)
            if reason is not None:
                raise InvalidInput(
                    f"{source} is a SQLite database but not a Cairn store ({reason}); nothing "
                    "was restored - choose a backup (`cairn backup --list`)",
                    data={"path": str(source), "user_version": version.encoded},
                )
            # The rule opening follows: a later minor of this major opens, so it is restored
            # (until 2026-11-30 it was refused as too new).
            refuse_newer_major(
                version,
                written=f"the backup {source}",
                then="; nothing was restored - upgrade Cairn first",
            )
            # Every table and column of the backup's schema, not only the memory table's: a
            # backup without one was restored, and Cairn failed to start (until 2026-11-30).
            missing = missing_schema(conn)
            if missing:
                raise InvalidInput(
                    f"{source} is a SQLite database but not a Cairn store (of schema {version} "
                    f"it lacks {lacking(missing)}); nothing was restored - choose a backup "
                    "(`cairn backup --list`)",
                    data={"path": str(source), "schema": str(version), "missing": missing},
                )
            memories = int(
                conn.execute("SELECT count(*) FROM memory WHERE status != 'forgotten'").fetchone()[
                    0
                ]
            )
            if not in_place:
                conn.execute("PRAGMA journal_mode=DELETE").fetchone()  # no -wal to carry along
        finally:
            conn.close()
    except sqlite3.DatabaseError as e:
        code = getattr(e, "sqlite_errorcode", 0) & 0xFF
        if code == sqlite3.SQLITE_NOTADB:
            raise InvalidInput(
                f"{source} is not a SQLite database; nothing was restored - choose a backup "
                "(`cairn backup --list`)",
                data={"path": str(source)},
            ) from e
        raise IntegrityFailure(
            f"the backup {source} is damaged ({e}); nothing was restored - choose another "
            "backup (`cairn backup --list`)",
            data={"path": str(source)},
        ) from e
    return version, memories


def _move_aside(database: Path, stamp: str) -> Path | None:
    """Keep the current database and its -wal/-shm as `<name>.replaced-<stamp>` (+ -wal, -shm).

    Its write-ahead log is first checkpointed into it (a Cairn killed mid-work leaves one), so
    the file holds every acknowledged write on its own. The database then gets a second name (a
    hard link), so there is a `cairn.db` at every instant: a restore killed before the backup
    arrives leaves the whole store in place. A database too damaged to checkpoint moves aside
    with its -wal and -shm as they are, before the new file arrives, so they can never be
    applied to it.
    """
    _checkpoint(database)
    present = [s for s in ("", "-wal", "-shm") if Path(f"{database}{s}").exists()]
    if not present:
        return None
    aside = database.with_name(f"{database.name}.replaced-{stamp}")
    n = 1
    while any(Path(f"{aside}{s}").exists() for s in ("", "-wal", "-shm")):
        n += 1
        aside = database.with_name(f"{database.name}.replaced-{stamp}-{n}")
    if "" in present:
        try:
            os.link(database, aside)
        except OSError:  # a file system without hard links: a moment with no cairn.db
            os.rename(database, aside)
    for suffix in ("-wal", "-shm"):
        if suffix in present:
            os.rename(f"{database}{suffix}", f"{aside}{suffix}")
    return aside


def _sort_audit_files(
    database: Path, archive_dir: Path, folder: str | None, returning: Path | None
) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """Move the rotated audit files the restored database does not know into a folder named
    like the replaced database (`replaced-<time>`); when the restored file is itself a replaced
    database, bring back the files set aside with it (`returning`). Returns (set aside, brought
    back). The database is already in place, so a failure here is logged, not raised: the next
    rotation sets files aside, and an export leaves them out and names them until then."""
    if not archive_dir.is_dir():
        return (), ()
    name = folder or audit_files.aside_folder_name()
    try:
        conn = sqlite3.connect(f"{database.absolute().as_uri()}?mode=ro", uri=True)
        try:
            if returning is not None and returning.is_dir():
                aside, back = audit_files.put_back(conn, archive_dir, returning, name)
            else:
                aside, back = audit_files.set_aside(conn, archive_dir, name), []
        finally:
            conn.close()
    except (OSError, sqlite3.Error) as e:
        log.warning(
            "the database was restored, but the rotated audit files in %s could not be sorted "
            "between it and the one it replaced: %s",
            archive_dir,
            e,
        )
        return (), ()
    return tuple(aside), tuple(back)


def _checkpoint(database: Path) -> None:
    """Fold `database`'s write-ahead log into it and remove the log (Cairn is stopped and its
    lock held: no one else has it open). A damaged database is left as it is."""
    if not Path(f"{database}-wal").exists():
        return
    try:
        conn = sqlite3.connect(database, timeout=0)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            conn.close()  # the last connection: SQLite removes the -wal and -shm
    except sqlite3.Error as e:
        log.warning(
            "could not fold the write-ahead log into %s before replacing it: %s", database, e
        )
