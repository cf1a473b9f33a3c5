"""Backups of the memory database: the schedule and rotation of one open store's backups, and
the backup taken before a migration.

A backup is one self-contained SQLite file in `<data>/backups/` (`core.backup_folder` names and
lists them; `core.backup_copy` takes one; `core.restore` puts one back while Cairn is stopped).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from core.atomic_file import FileNotWritten, reason_for
from core.backup_copy import take
from core.backup_folder import (
    KEEP_PRE_MIGRATION,
    PRE_MIGRATION,
    REASON,
    BackupInfo,
    delete_backups,
    list_backups,
    retained,
)
from core.clock import FUTURE_SLACK_MS, Clock, SystemClock, before_floor
from core.errors import CairnError, InvalidInput, IOFault
from core.failures import BackgroundFailures
from core.migrations import SchemaVersion
from core.paths import Paths
from core.settings import Settings
from core.store import Store

log = logging.getLogger("core.backup")  # one logger for backups, whichever module logs


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
        if not REASON.fullmatch(reason) or reason.startswith(PRE_MIGRATION):
            raise InvalidInput(f"{reason!r} is not a backup reason", data={"reason": reason})
        timeout_s = self._settings.integer("store.busy_timeout_ms") / 1000
        with self._lock:
            info = take(
                self._store.path, self._paths.backups, reason, self._clock, timeout_s, stop=stop
            )
            try:
                delete_backups(_rotated_away(self.list(), info, self._settings))
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
        before 2026 (`core.clock.FLOOR_MS`): such a backup was named for 1970, older by its name
        than every other backup; the schedule takes one once the clock is set."""
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
        info = take(db_path, backups_dir, reason, clock or SystemClock(), timeout_s=5.0)
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
        delete_backups(b.path for b in older[KEEP_PRE_MIGRATION - 1 :])
    except OSError as e:
        log.warning("%s", _not_removed(e).message)
    return info.path


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


def _not_removed(e: OSError) -> IOFault:
    """An old backup that could not be removed (`e` names it), said in words."""
    path = Path(os.fsdecode(e.filename)) if e.filename else None
    what = f"the old backup {path}" if path is not None else "an old backup"
    folder = path.parent if path is not None else Path(".")
    return IOFault(
        f"could not remove {what}: {reason_for(e, folder)}; it is removed at the next rotation",
        data={"path": str(path)},
    )
