"""Backups of the memory database: online copies (scheduled, on request, before a migration),
their rotation and listing, and restoring one while Cairn is stopped.

A backup is one self-contained SQLite file in `<data>/backups/`, named so that names sort by time
and say why: `cairn-20261130T021500Z-scheduled.db`, `-manual`, `-pre-migration-1.3-to-1.4`. It is
copied with SQLite's backup API from a separate read-only connection inside one read transaction,
so it holds exactly the state committed when that transaction began, whatever the writer does
meanwhile; it is checked (`integrity_check`), fsynced, and only then renamed into place.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from core import audit
from core.atomic_file import FileNotWritten, Step, fsync_dir, fsync_file, reason_for
from core.clock import FUTURE_SLACK_MS, Clock, SystemClock, before_floor
from core.database import StoreLock
from core.errors import (
    AlreadyRunning,
    CairnError,
    IntegrityFailure,
    InvalidInput,
    IOFault,
    NotFound,
    RuntimeUnsafe,
    StoreBusy,
)
from core.failures import BackgroundFailures
from core.migrations import (
    SchemaVersion,
    foreign,
    lacking,
    missing_schema,
    read_version,
    refuse_newer_major,
)
from core.paths import Paths, ensure_private_dir, free_space
from core.runtime import check_private_dir, probe, socket_path
from core.settings import Settings
from core.store import Store

log = logging.getLogger(__name__)

PRE_MIGRATION = "pre-migration"
KEEP_PRE_MIGRATION = 3
_STAMP = "%Y%m%dT%H%M%SZ"
_NAME = re.compile(r"^cairn-(\d{8}T\d{6}Z)-([a-z0-9][a-z0-9.-]*)\.db$")
_REASON = re.compile(r"^[a-z0-9][a-z0-9.-]{0,63}$")
_TEMP_PREFIX = ".cairn-backup-"
_SIDECARS = ("-wal", "-shm", "-journal")


@dataclass(frozen=True)
class BackupInfo:
    """One backup file. `created_at_ms` is the time in its name (UTC, whole seconds)."""

    path: Path
    reason: str
    created_at_ms: int
    size: int

    @property
    def pre_migration(self) -> bool:
        return self.reason.startswith(PRE_MIGRATION)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "name": self.path.name,
            "reason": self.reason,
            "created_at": self.created_at_ms,
            "size": self.size,
        }


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


class BackupService:
    """Takes, rotates and lists the backups of one open store."""

    def __init__(
        self,
        store: Store,
        paths: Paths,
        settings: Settings,
        clock: Clock,
        failures: BackgroundFailures,
    ) -> None:
        self._store = store
        self._paths = paths
        self._settings = settings
        self._clock = clock
        self._failures = failures
        self._lock = threading.Lock()  # one backup (and rotation) at a time

    def backup(self, reason: str = "manual", *, stop: threading.Event | None = None) -> BackupInfo:
        """Copy the database now, then rotate; the backup just taken is never rotated away.

        Args:
            reason: why, as it appears in the file name (`manual`, `scheduled`).
            stop: once set, the copy ends at its next step (Cairn is stopping).

        Raises:
            BackupStopped: `stop` was set before the copy was whole; nothing was kept.
            IOFault: the copy could not be written (disk full, permissions); names the path.
            IntegrityFailure: the copy failed SQLite's integrity check (the database is damaged).
            RuntimeUnsafe: the backup directory is a symlink, foreign, or open to others.
        """
        if not _REASON.fullmatch(reason) or reason.startswith(PRE_MIGRATION):
            raise InvalidInput(f"{reason!r} is not a backup reason", data={"reason": reason})
        timeout_s = self._settings.integer("store.busy_timeout_ms") / 1000
        with self._lock:
            info = _take(
                self._store.path, self._paths.backups, reason, self._clock, timeout_s, stop=stop
            )
            try:
                _delete(_rotated_away(self.list(), info, self._settings))
            except OSError as e:
                # The backup itself is good; a file left over is counted, not fatal.
                self._failures.record("backup.rotation", _not_removed(e), self._clock.now_ms())
        return info

    def use(self, settings: Settings) -> None:
        """Take changed `backup.*` settings (schedule, rotation) from the next check on."""
        self._settings = settings

    def list(self) -> list[BackupInfo]:
        """Every backup in the backup directory, newest first."""
        return list_backups(self._paths.backups)

    def due(self) -> bool:
        """True when `backup.interval_hours` (0: never) have passed since the newest scheduled or
        manual backup, or there is none. Backups stamped in the future (the clock was set back)
        do not count, so a wrong clock cannot stop the schedule. Never while the clock reads
        before 2026 (`core.clock.FLOOR_MS`): such a backup was named for 1970 and, the oldest by
        its name, the first to go at rotation; the schedule takes one once the clock is set."""
        hours = self._settings.number("backup.interval_hours")
        now = self._clock.now_ms()
        if hours <= 0 or before_floor(now):
            return False
        for info in self.list():
            if not info.pre_migration and info.created_at_ms <= now + FUTURE_SLACK_MS:
                return now - info.created_at_ms >= hours * 3_600_000
        return True


def backup_before_migration(
    db_path: Path,
    backups_dir: Path,
    from_version: int,
    to_version: int,
    clock: Clock | None = None,
) -> Path:
    """Back up a database that is about to be migrated (Store.open's `before_migrate` hook), and
    keep the newest `KEEP_PRE_MIGRATION` such backups; scheduled rotation never touches them.

    Args:
        from_version, to_version: encoded schema versions (`major * 1000 + minor`).

    Raises:
        IOFault, IntegrityFailure, RuntimeUnsafe: as `BackupService.backup`; the message says the
            database was not migrated (the hook's failure stops the migration).
    """
    reason = (
        f"{PRE_MIGRATION}-{SchemaVersion.decode(from_version)}-to-"
        f"{SchemaVersion.decode(to_version)}"
    )
    try:
        info = _take(db_path, backups_dir, reason, clock or SystemClock(), timeout_s=5.0)
    except CairnError as e:
        # FileNotWritten is built from its parts: said again as the IOFault it is
        kind = IOFault if isinstance(e, FileNotWritten) else type(e)
        raise kind(
            f"{e.message}. Cairn did not migrate {db_path} without a backup; fix that and start "
            "Cairn again",
            data=e.data,
        ) from e
    older = [b for b in list_backups(backups_dir) if b.pre_migration and b.path != info.path]
    try:
        _delete(b.path for b in older[KEEP_PRE_MIGRATION - 1 :])
    except OSError as e:
        log.warning("%s", _not_removed(e).message)
    return info.path


def newest_backup(directory: Path, now_ms: int | None = None) -> Path:
    """The newest backup that is not stamped in the future: after a clock fault a file dated
    2099 is not the latest state of the memories.

    Raises:
        NotFound: there is no such backup.
    """
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    for info in list_backups(directory):
        if info.created_at_ms <= now + FUTURE_SLACK_MS:
            return info.path
    raise NotFound(f"there are no backups in {directory} to restore (none dated up to now)")


def list_backups(directory: Path) -> list[BackupInfo]:
    """The backups in `directory`, newest first; other files there are ignored."""
    found: list[BackupInfo] = []
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return []
    for entry in entries:
        match = _NAME.fullmatch(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        with contextlib.suppress(FileNotFoundError):  # rotated away meanwhile
            found.append(
                BackupInfo(Path(entry.path), match[2], _parse_stamp(match[1]), entry.stat().st_size)
            )
    found.sort(key=lambda b: (b.created_at_ms, b.path.name), reverse=True)
    return found


def retained(
    backups: Sequence[BackupInfo], *, keep_daily: int, keep_weekly: int, now_ms: int
) -> set[Path]:
    """The scheduled and manual backups rotation keeps (pre-migration ones are not considered).

    Going back from the newest: the newest backup of each of the `keep_daily` most recent days
    that have one; then, among older backups, the newest of each of the `keep_weekly` most recent
    ISO weeks that have one. Days and weeks are UTC, like the names. Backups stamped after
    `now_ms` (taken while the clock ran ahead) come after all the others: they take the places
    left, never the days of the backups taken since the clock was set right.
    """
    keep: set[Path] = set()
    days: set[date] = set()
    weeks: set[tuple[int, int]] = set()

    def newest_first(b: BackupInfo) -> tuple[bool, int, str]:
        return (b.created_at_ms <= now_ms + FUTURE_SLACK_MS, b.created_at_ms, b.path.name)

    for info in sorted(backups, key=newest_first, reverse=True):
        if info.pre_migration:
            continue
        day = datetime.fromtimestamp(info.created_at_ms / 1000, tz=UTC).date()
        if day in days:
            continue
        if len(days) < keep_daily:
            days.add(day)
            keep.add(info.path)
            continue
        iso = day.isocalendar()
        week = (iso.year, iso.week)
        if week not in weeks and len(weeks) < keep_weekly:
            weeks.add(week)
            keep.add(info.path)
    return keep


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
            _remove_leftover(leftover)
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
            stamp = datetime.now(UTC).strftime(_STAMP)
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
            _remove_with_sidecars(temp)
        folder = replaced.name.removeprefix(f"{database.name}.") if replaced else None
        returning = None
        if source.parent == database.parent and source.name.startswith(
            f"{database.name}.replaced-"
        ):
            returning = paths.audit_archive / source.name.removeprefix(f"{database.name}.")
        aside, back = _sort_audit_files(database, paths.audit_archive, folder, returning)
    finally:
        lock.release()
    info = _info_for(source)
    created = info.created_at_ms if info else int(source.stat().st_mtime * 1000)
    return RestoreReport(database, source, created, str(version), memories, replaced, aside, back)


# -- taking a copy ------------------------------------------------------------------------------


def _take(
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
        _remove_leftover(leftover)
    taken = {b.created_at_ms // 1000 for b in list_backups(directory)}
    second = clock.now_ms() // 1000
    while second in taken:  # one backup per second, so names sort in the order they were taken
        second += 1
    target = directory / f"cairn-{_format_stamp(second * 1000)}-{reason}.db"
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
        _remove_with_sidecars(temp)
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


def _rotated_away(
    backups: Sequence[BackupInfo], just_taken: BackupInfo, settings: Settings
) -> list[Path]:
    keep = retained(
        backups,
        keep_daily=settings.integer("backup.keep_daily"),
        keep_weekly=settings.integer("backup.keep_weekly"),
        now_ms=just_taken.created_at_ms,  # stamped now (a second on, when that one was taken)
    )
    keep.add(just_taken.path)
    return [b.path for b in backups if not b.pre_migration and b.path not in keep]


_NOT_TAKEN = "no backup was taken"


def _not_removed(e: OSError) -> IOFault:
    """An old backup that could not be removed (`e` names it), said in words."""
    path = Path(os.fsdecode(e.filename)) if e.filename else None
    what = f"the old backup {path}" if path is not None else "an old backup"
    folder = path.parent if path is not None else Path(".")
    return IOFault(
        f"could not remove {what}: {reason_for(e, folder)}; it is removed at the next rotation",
        data={"path": str(path)},
    )


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


def _remove_leftover(path: Path) -> None:
    """Remove what a crashed backup or restore left; one that cannot go stays, and is said."""
    try:
        _remove_with_sidecars(path)
    except OSError as e:
        log.warning(
            "could not remove %s, left by a crashed copy: %s", path, reason_for(e, path.parent)
        )


def _delete(paths: Iterable[Path]) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            log.info("removed the old backup %s", path.name)


# -- restoring ----------------------------------------------------------------------------------


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
    name = folder or audit.aside_folder_name()
    try:
        conn = sqlite3.connect(f"{database.absolute().as_uri()}?mode=ro", uri=True)
        try:
            if returning is not None and returning.is_dir():
                aside, back = audit.put_back(conn, archive_dir, returning, name)
            else:
                aside, back = audit.set_aside(conn, archive_dir, name), []
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


def _info_for(path: Path) -> BackupInfo | None:
    match = _NAME.fullmatch(path.name)
    if match is None:
        return None
    return BackupInfo(path, match[2], _parse_stamp(match[1]), path.stat().st_size)


# -- files --------------------------------------------------------------------------------------


def _format_stamp(ms: int) -> str:
    return datetime.fromtimestamp(ms // 1000, tz=UTC).strftime(_STAMP)


def _parse_stamp(stamp: str) -> int:
    return int(datetime.strptime(stamp, _STAMP).replace(tzinfo=UTC).timestamp()) * 1000


def _remove_with_sidecars(path: Path) -> None:
    for suffix in ("", *_SIDECARS):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")
