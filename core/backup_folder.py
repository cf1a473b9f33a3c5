"""The backup folder: how backups are named (`cairn-<UTC time>-<reason>.db`, so names sort by
time and say why), listed, found newest, chosen for keeping by rotation, and removed."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from core.atomic_file import reason_for
from core.clock import FUTURE_SLACK_MS
from core.errors import NotFound

log = logging.getLogger("core.backup")  # one logger for backups, whichever module logs

PRE_MIGRATION = "pre-migration"
KEEP_PRE_MIGRATION = 3
_STAMP = "%Y%m%dT%H%M%SZ"
_NAME = re.compile(r"^cairn-(\d{8}T\d{6}Z)-([a-z0-9][a-z0-9.-]*)\.db$")
REASON = re.compile(r"^[a-z0-9][a-z0-9.-]{0,63}$")  # a reason, as in the name
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


def info_for(path: Path) -> BackupInfo | None:
    match = _NAME.fullmatch(path.name)
    if match is None:
        return None
    return BackupInfo(path, match[2], _parse_stamp(match[1]), path.stat().st_size)


def format_stamp(ms: int) -> str:
    return datetime.fromtimestamp(ms // 1000, tz=UTC).strftime(_STAMP)


def _parse_stamp(stamp: str) -> int:
    return int(datetime.strptime(stamp, _STAMP).replace(tzinfo=UTC).timestamp()) * 1000


def remove_leftover(path: Path) -> None:
    """Remove what a crashed backup or restore left; one that cannot go stays, and is said."""
    try:
        remove_with_sidecars(path)
    except OSError as e:
        log.warning(
            "could not remove %s, left by a crashed copy: %s", path, reason_for(e, path.parent)
        )


def delete_backups(paths: Iterable[Path]) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            log.info("removed the old backup %s", path.name)


def remove_with_sidecars(path: Path) -> None:
    for suffix in ("", *_SIDECARS):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")
