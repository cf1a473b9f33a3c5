"""Backups: a copy taken during writes holds every acknowledged write, owner-only files, rotation
over two months, the backup before a migration, restore and its refusals, and `cairn backup` /
`cairn restore` at a terminal."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import subprocess
import sys
import threading
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from core import audit_files, backup_copy
from core.app import Cairn
from core.backup import BackupService, backup_before_migration
from core.backup_copy import BackupStopped
from core.backup_folder import KEEP_PRE_MIGRATION, BackupInfo, list_backups, newest_backup
from core.changes import ChangeBus
from core.errors import (
    AlreadyRunning,
    ErrorCode,
    IntegrityFailure,
    InvalidInput,
    IOFault,
    NotFound,
    RuntimeUnsafe,
    SchemaTooNew,
)
from core.janitor import Janitor
from core.migrations import CURRENT, STORE_TABLES, SchemaVersion, migrate
from core.model import Caller, Scope, Surface, WriteResult
from core.paths import Paths
from core.requests import WriteRequest
from core.restore import restore
from core.settings import Settings
from core.store import Store
from tests.conftest import ROOT, FakeClock, disk_full, open_policy, refusing_writes
from tests.serving import paths_for, running_daemon, served_in_thread
from tests.test_cli_serving import at_terminal
from tests.test_cli_serving import cairn as run_cairn

DAY_MS = 86_400_000
HOUR_MS = 3_600_000


def utc_ms(text: str) -> int:
    """'2026-02-27 20:00' (UTC) in ms since the epoch."""
    return int(datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=UTC).timestamp() * 1000)


def service(app: Cairn, settings: Settings | None = None) -> BackupService:
    return BackupService(app.store, app.paths, settings or app.settings, app.clock, app.failures)


def write(app: Cairn, text: str) -> str:
    result = app.memories.write(
        Caller.human(), WriteRequest(content=text, kind="fact", scope=Scope.GLOBAL)
    )
    assert result.id is not None, result
    return result.id


def read_only(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)


def memory_rows(db: Path) -> list[tuple[object, ...]]:
    conn = read_only(db)
    try:
        return list(conn.execute("SELECT * FROM memory ORDER BY id"))
    finally:
        conn.close()


def integrity(db: Path) -> list[str]:
    conn = read_only(db)
    try:
        return [r[0] for r in conn.execute("PRAGMA integrity_check")]
    finally:
        conn.close()


def opens_as_a_store(backup: Path, scratch: Path) -> None:
    """Cairn opens the backup (a copy of it: opening writes WAL files next to the database)."""
    scratch.mkdir()
    copy = scratch / "cairn.db"
    copy.write_bytes(backup.read_bytes())
    Store.open(copy, Settings.defaults(), ChangeBus(), FakeClock()).close()


def open_app(paths: Paths, clock: FakeClock | None = None) -> Cairn:
    open_policy(paths.config)
    return Cairn.open(paths, settings=Settings.defaults(), clock=clock or FakeClock())


def files_in(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()}


# -- taking backups -----------------------------------------------------------------------------


def test_a_backup_taken_during_writes_holds_every_acknowledged_write(
    cairn: Cairn, short_tmp: Path
) -> None:
    for i in range(200):
        write(cairn, f"background fact {i} about the heron build server")
    acked: list[str] = []
    stop = threading.Event()
    failed: list[BaseException] = []

    def keep_writing() -> None:
        i = 0
        try:
            while not stop.is_set():
                acked.append(write(cairn, f"concurrent note {i} on the otter deployment"))
                i += 1
        except BaseException as e:
            failed.append(e)

    writer = threading.Thread(target=keep_writing, name="test-writer")
    writer.start()
    backups = service(cairn)
    landed_during = 0
    try:
        for round_ in range(6):
            floor = len(acked) + 20
            deadline = time.monotonic() + 30
            while len(acked) < floor and time.monotonic() < deadline and not failed:
                time.sleep(0.005)
            before = list(acked)  # every write acknowledged before the backup begins
            info = backups.backup("manual")
            landed_during += len(acked) - len(before)
            # checked at once: the next backup (same day) rotates this one away
            assert integrity(info.path) == ["ok"]
            in_backup = {row[0] for row in memory_rows(info.path)}
            missing = set(before) - in_backup
            assert not missing, f"round {round_}: {len(missing)} acknowledged writes missing"
            opens_as_a_store(info.path, short_tmp / f"check{round_}")
    finally:
        stop.set()
        writer.join(30)
    assert not failed, failed
    # The writer really kept committing while backups were copied.
    assert landed_during > 0


class StopAfter(threading.Event):
    """A stop flag that is seen set from its `looks`-th look on: a stop asked mid-copy."""

    def __init__(self, looks: int) -> None:
        super().__init__()
        self.looks = looks

    def is_set(self) -> bool:
        self.looks -= 1
        return self.looks < 0 or super().is_set()


@pytest.mark.parametrize("looks", [0, 3])
def test_a_backup_ends_when_cairn_stops_and_keeps_nothing(
    cairn: Cairn, monkeypatch: pytest.MonkeyPatch, looks: int
) -> None:
    """A stopping Cairn waited for the scheduled backup to be copied whole and checked (7.6 s
    on a two-year store). The copy now looks at the stop between its pieces (and the check
    while it runs): it ends there, and keeps no backup and no partial file; the next one is
    taken as usual."""
    for i in range(300):
        write(cairn, f"fact {i} about the heron build server and its nightly jobs")
    monkeypatch.setattr(backup_copy, "COPY_PAGES", 4)  # many pieces for a small test store
    with pytest.raises(BackupStopped):
        service(cairn).backup("scheduled", stop=StopAfter(looks))
    assert not cairn.paths.backups.exists() or files_in(cairn.paths.backups) == set()
    info = service(cairn).backup("scheduled", stop=threading.Event())
    assert integrity(info.path) == ["ok"] and files_in(cairn.paths.backups) == {info.path.name}
    assert memory_rows(info.path) == memory_rows(cairn.paths.database)


def test_backup_files_are_owner_only_whatever_the_umask(cairn: Cairn) -> None:
    old = os.umask(0)
    try:
        info = service(cairn).backup()
    finally:
        os.umask(old)
    assert info.path.parent == cairn.paths.backups == cairn.paths.data / "backups"
    assert stat.S_IMODE(info.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(cairn.paths.backups.stat().st_mode) == 0o700
    # one self-contained file: no temp file, no -wal or -shm beside it
    assert files_in(cairn.paths.backups) == {info.path.name}
    assert info.size == info.path.stat().st_size > 0
    assert list_backups(cairn.paths.backups) == [info]
    assert info.to_dict() == {
        "path": str(info.path),
        "name": info.path.name,
        "reason": "manual",
        "created_at": cairn.clock.now_ms() // 1000 * 1000,
        "size": info.size,
    }


def test_a_loose_backup_directory_is_refused(cairn: Cairn) -> None:
    cairn.paths.backups.mkdir(mode=0o700)
    cairn.paths.backups.chmod(0o755)
    with pytest.raises(RuntimeUnsafe, match="open to group or others"):
        service(cairn).backup()
    assert files_in(cairn.paths.backups) == set()


def test_names_sort_by_time_and_say_why(cairn: Cairn, clock: FakeClock) -> None:
    clock.now = utc_ms("2026-11-30 02:15")
    backups = service(cairn)
    first = backups.backup("scheduled")
    second = backups.backup("manual")  # the same second: the next free second
    assert first.path.name == "cairn-20261130T021500Z-scheduled.db"
    assert second.path.name == "cairn-20261130T021501Z-manual.db"
    assert second.created_at_ms == first.created_at_ms + 1000
    assert [b.path for b in backups.list()] == [second.path]  # the newest of the day is kept
    with pytest.raises(InvalidInput):
        backups.backup("../escape")


def test_a_disk_error_is_an_io_fault_naming_the_path(cairn: Cairn) -> None:
    for i in range(100):
        write(cairn, f"padding fact {i} " + "x" * 300)
    backups = service(cairn)
    kept = backups.backup("manual")
    cairn.clock.advance(3600)  # type: ignore[attr-defined]  # the fixture's FakeClock
    with disk_full(16 * 1024), pytest.raises(IOFault) as raised:  # writes past 16 KiB fail
        backups.backup("manual")
    assert str(cairn.paths.backups) in raised.value.message
    assert raised.value.code is ErrorCode.IO
    assert files_in(cairn.paths.backups) == {kept.path.name}  # no half-written file left


def test_a_backup_the_disk_refuses_says_which_step_and_why_and_keeps_nothing(
    cairn: Cairn,
) -> None:
    """A full disk was SQLite's bare "disk I/O error"; a folder refusing new files was "Operation
    not permitted", and with a crashed backup's leftover in it a PermissionError that reached
    `cairn backup` as "internal error" (until 2026-12-01). Each names the backup, the step and
    why, and leaves the backups as they were."""
    for i in range(100):
        write(cairn, f"padding fact {i} " + "x" * 300)
    backups = service(cairn)
    kept = backups.backup("manual")
    cairn.clock.advance(3600)  # type: ignore[attr-defined]  # the fixture's FakeClock
    folder = cairn.paths.backups
    with disk_full(16 * 1024), pytest.raises(IOFault) as raised:
        backups.backup("manual")
    said = raised.value.message
    assert said.startswith(f"could not write the backup {folder}/cairn-"), said
    assert "the disk refused to write it" in said and "bytes free on its disk" in said, said
    assert said.endswith("; no backup was taken"), said
    assert files_in(folder) == {kept.path.name}

    leftover = folder / ".cairn-backup-1-1.tmp"  # a crashed backup's
    leftover.write_bytes(b"half a copy")
    with refusing_writes(folder), pytest.raises(IOFault) as raised:
        backups.backup("manual")
    said = raised.value.message
    assert said.startswith(f"could not write the backup {folder}/cairn-"), said
    assert said.endswith(
        f": no new file can be made in {folder}: permission denied; no backup was taken"
    ), said
    assert files_in(folder) == {kept.path.name, leftover.name}


def test_a_pre_migration_backup_the_folder_refuses_stops_the_migration_in_words(
    cairn: Cairn, clock: FakeClock
) -> None:
    folder = cairn.paths.backups
    folder.mkdir(mode=0o700, exist_ok=True)
    with refusing_writes(folder), pytest.raises(IOFault) as raised:
        backup_before_migration(cairn.store.path, folder, 1003, 1004, clock)
    assert raised.value.message.endswith(
        f": no new file can be made in {folder}: permission denied; no backup was taken. Cairn "
        f"did not migrate {cairn.store.path} without a backup; fix that and start Cairn again"
    ), raised.value.message
    assert files_in(folder) == set()


def test_an_old_backup_that_cannot_be_removed_is_said_in_health(
    cairn: Cairn, clock: FakeClock
) -> None:
    """Rotation could not remove an old backup: health showed "[Errno 1] Operation not
    permitted: '...'" (until 2026-12-01). It names the file and why; the new backup is kept."""
    settings = cairn.settings.with_values(backup__keep_daily=1, backup__keep_weekly=0)
    backups = service(cairn, settings)
    old = backups.backup("manual")
    clock.advance(3 * 86400)
    with refusing_writes(old.path):  # root: chattr +i on the file itself
        new = backups.backup("manual")
    assert new.path.is_file() and old.path.is_file()
    error = cairn.failures.snapshot()["backup.rotation"].last_error
    assert error == (
        f"could not remove the old backup {old.path}: permission denied; it is removed at the "
        "next rotation"
    )


# -- the schedule and rotation ------------------------------------------------------------------


def test_due_follows_the_interval(cairn: Cairn, clock: FakeClock) -> None:
    backups = service(cairn)
    assert backups.due()  # never backed up
    backups.backup("scheduled")
    assert not backups.due()
    clock.advance(23.9 * 3600)
    assert not backups.due()
    clock.advance(0.1 * 3600)
    assert backups.due()
    backups.backup("manual")  # a manual backup counts
    assert not backups.due()
    clock.advance(25 * 3600)
    backup_before_migration(cairn.store.path, cairn.paths.backups, 1003, 1004, clock)
    assert backups.due()  # a pre-migration backup does not
    off = service(cairn, Settings.defaults().with_values(backup__interval_hours=0.0))
    assert not off.due()
    # a backup stamped in the future (the clock was set back) does not stop the schedule
    clock.advance(-30 * DAY_MS / 1000)
    assert backups.due()


def test_no_backup_is_scheduled_while_the_clock_reads_before_2026(
    cairn: Cairn, clock: FakeClock
) -> None:
    # A dead clock battery: the clock reads 1970. A scheduled backup then was named
    # cairn-19700102T...-scheduled.db, older by its name than every other backup.
    backups = service(cairn)
    clock.now = utc_ms("1970-01-02 08:00")
    assert not backups.due()
    assert backups.list() == []
    clock.now = utc_ms("2026-03-01 08:00")  # the clock set right: the schedule takes one at once
    assert backups.due()


def test_rotation_over_sixty_days_keeps_exactly_the_expected_backups(
    cairn: Cairn, clock: FakeClock
) -> None:
    backups = service(cairn)  # keep_daily 7, keep_weekly 4 (the defaults)
    keep = (
        cairn.settings.integer("backup.keep_daily"),
        cairn.settings.integer("backup.keep_weekly"),
    )
    assert keep == (7, 4)
    migrations = {"2026-01-10", "2026-01-20", "2026-02-05", "2026-02-20"}
    switched_off = {"2026-02-25", "2026-02-26"}  # Cairn did not run: no backups those days
    start = utc_ms("2026-01-01 00:00")
    for day in range(60):  # 2026-01-01 (a Thursday) .. 2026-03-01 (a Sunday)
        date = datetime.fromtimestamp((start + day * DAY_MS) / 1000, tz=UTC).strftime("%Y-%m-%d")
        if date in switched_off:
            continue
        if date in migrations:
            clock.now = utc_ms(f"{date} 03:00")
            backup_before_migration(cairn.store.path, cairn.paths.backups, 1003, 1004, clock)
        for hour in ("06:00", "18:00"):
            clock.now = utc_ms(f"{date} {hour}")
            info = backups.backup("scheduled")
            assert info.path.exists()  # rotation never removes the backup just taken
            regular = [b for b in backups.list() if not b.pre_migration]
            assert len(regular) <= 7 + 4 + 1
        if date == "2026-02-27":
            clock.now = utc_ms(f"{date} 20:00")
            backups.backup("manual")
    kept = {b.path.name for b in backups.list()}
    assert kept == {
        # daily: the newest of each of the 7 most recent days that have a backup
        "cairn-20260301T180000Z-scheduled.db",
        "cairn-20260228T180000Z-scheduled.db",
        "cairn-20260227T200000Z-manual.db",
        "cairn-20260224T180000Z-scheduled.db",
        "cairn-20260223T180000Z-scheduled.db",
        "cairn-20260222T180000Z-scheduled.db",
        "cairn-20260221T180000Z-scheduled.db",
        # weekly, older than those: the newest of each of 4 ISO weeks (weeks 8, 7, 6, 5)
        "cairn-20260220T180000Z-scheduled.db",
        "cairn-20260215T180000Z-scheduled.db",
        "cairn-20260208T180000Z-scheduled.db",
        "cairn-20260201T180000Z-scheduled.db",
        # pre-migration: the last 3, kept apart from the schedule
        "cairn-20260120T030000Z-pre-migration-1.3-to-1.4.db",
        "cairn-20260205T030000Z-pre-migration-1.3-to-1.4.db",
        "cairn-20260220T030000Z-pre-migration-1.3-to-1.4.db",
    }
    assert files_in(cairn.paths.backups) == kept


def test_backups_stamped_in_the_future_leave_the_days_to_the_backups_of_now(
    cairn: Cairn, clock: FakeClock
) -> None:
    """A clock a month ahead for a week (a bad time server, a wrong clock battery), then set
    right. Until 2026-12-01 the week's backups, stamped 2027, stayed the 7 newest days: every
    backup taken since the clock was set right went at the next one's rotation but one a week -
    twelve days later, yesterday's and every other day's were gone. Now the days of backups
    stamped up to now come first; a future-stamped one keeps a place only where one is left."""
    backups = service(cairn)
    for day in range(1, 8):
        clock.now = utc_ms(f"2027-01-0{day} 06:00")
        backups.backup("scheduled")
    for day in range(1, 13):
        clock.now = utc_ms(f"2026-12-{day:02d} 06:00")
        assert backups.due()
        backups.backup("scheduled")
    kept = {b.path.name for b in backups.list()}
    assert kept == {
        # daily: the 7 most recent days up to now
        *(f"cairn-2026120{d}T060000Z-scheduled.db" for d in range(6, 10)),
        *(f"cairn-202612{d}T060000Z-scheduled.db" for d in range(10, 13)),
        # weekly, older than those: ISO week 49 of 2026; then, in the weekly places left, the
        # future-stamped ones: the newest of 2027's week 1 and of 2026's week 53
        "cairn-20261205T060000Z-scheduled.db",
        "cairn-20270107T060000Z-scheduled.db",
        "cairn-20270103T060000Z-scheduled.db",
    }, sorted(kept)


# -- before a migration -------------------------------------------------------------------------


def old_database(path: Path, version: SchemaVersion) -> None:
    """A database at an older schema version holding one memory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=version)
    conn.execute(
        "INSERT INTO memory (id, seq, revision, content, kind, scope, importance, status, tier, "
        "created_at, updated_at, content_hash) VALUES ('m_old', 1, 1, 'kept across the upgrade', "
        "'fact', 'global', 3, 'active', 'human', 1, 1, 'h')"
    )
    conn.close()


def test_a_backup_is_taken_before_a_migration(short_tmp: Path) -> None:
    db = short_tmp / "up" / "cairn.db"
    backups_dir = short_tmp / "up" / "backups"
    old_database(db, SchemaVersion(1, 2))
    clock = FakeClock(utc_ms("2026-11-30 02:15"))
    taken: list[Path] = []

    def before_migrate(from_version: int, to_version: int) -> None:
        taken.append(backup_before_migration(db, backups_dir, from_version, to_version, clock))

    store = Store.open(db, Settings.defaults(), ChangeBus(), clock, before_migrate=before_migrate)
    store.close()
    assert [p.name for p in taken] == [f"cairn-20261130T021500Z-pre-migration-1.2-to-{CURRENT}.db"]
    backup = taken[0]
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert stat.S_IMODE(backups_dir.stat().st_mode) == 0o700
    assert integrity(backup) == ["ok"]
    conn = read_only(backup)
    assert conn.execute("PRAGMA user_version").fetchone() == (1002,)  # the schema before
    assert conn.execute("SELECT content FROM memory").fetchall() == [("kept across the upgrade",)]
    conn.close()
    # opened again, nothing is pending: no second backup
    Store.open(db, Settings.defaults(), ChangeBus(), clock, before_migrate=before_migrate).close()
    assert len(taken) == 1


def test_opening_cairn_on_an_older_database_backs_it_up_first(short_tmp: Path) -> None:
    paths = paths_for(short_tmp / "old")
    paths.data.mkdir(parents=True, mode=0o700)
    old_database(paths.database, SchemaVersion(1, 2))
    Cairn.open(paths).close()
    (taken,) = list_backups(paths.backups)
    assert taken.pre_migration and taken.reason == f"pre-migration-1.2-to-{CURRENT}"
    conn = read_only(taken.path)
    assert conn.execute("PRAGMA user_version").fetchone() == (1002,)
    conn.close()


def test_a_running_cairn_takes_its_scheduled_backup(short_tmp: Path) -> None:
    paths = paths_for(short_tmp / "sched")
    app = open_app(paths)
    try:
        write(app, "backed up on schedule")
    finally:
        app.close()
    with served_in_thread(paths):
        deadline = time.monotonic() + 10
        while not list_backups(paths.backups) and time.monotonic() < deadline:
            time.sleep(0.05)
    (taken,) = list_backups(paths.backups)
    assert taken.reason == "scheduled"
    assert memory_rows(taken.path) == memory_rows(paths.database)


def test_only_the_last_pre_migration_backups_are_kept(short_tmp: Path) -> None:
    db = short_tmp / "m" / "cairn.db"
    backups_dir = short_tmp / "m" / "backups"
    old_database(db, SchemaVersion(1, 3))
    clock = FakeClock(utc_ms("2026-01-01 00:00"))
    backups_dir.mkdir(mode=0o700)
    scheduled = backups_dir / "cairn-20251231T000000Z-scheduled.db"
    scheduled.write_bytes(db.read_bytes())
    made = []
    for _ in range(KEEP_PRE_MIGRATION + 2):
        made.append(backup_before_migration(db, backups_dir, 1003, 1004, clock))
        clock.advance(86_400)
    assert [b.path for b in list_backups(backups_dir)] == [
        *reversed(made[-KEEP_PRE_MIGRATION:]),
        scheduled,
    ]


# -- restore ------------------------------------------------------------------------------------


@pytest.fixture
def backed_up(short_tmp: Path) -> tuple[Paths, BackupInfo]:
    """A stopped Cairn with two memories in a backup and a third written after it."""
    paths = paths_for(short_tmp / "r")
    app = open_app(paths)
    try:
        write(app, "the staging database is called otter")
        write(app, "deploys happen on tuesdays")
        info = service(app).backup("manual")
        write(app, "written after the backup")
    finally:
        app.close()
    return paths, info


def test_a_good_restore_brings_back_exactly_the_backed_up_memories(
    backed_up: tuple[Paths, BackupInfo], short_tmp: Path
) -> None:
    paths, info = backed_up
    expected = memory_rows(info.path)
    before_restore = memory_rows(paths.database)
    assert len(expected) == 2 and len(before_restore) == 3
    report = restore(paths, info.path)
    assert report.restored_from == info.path
    assert report.backup_created_at_ms == info.created_at_ms
    assert (report.schema, report.memories) == (str(CURRENT), 2)
    assert memory_rows(paths.database) == expected
    assert stat.S_IMODE(paths.database.stat().st_mode) == 0o600
    # the replaced database is kept, whole, next to the restored one
    assert report.replaced is not None and report.replaced.parent == paths.data
    assert report.replaced.name.startswith("cairn.db.replaced-")
    assert memory_rows(report.replaced) == before_restore
    assert not [n for n in files_in(paths.data) if n.endswith(".tmp")]
    assert info.path.exists()  # the backup itself is left as it was
    app = open_app(paths)
    try:
        found = app.memories.list(Caller.human()).items
        assert sorted(m.content for m in found) == [
            "deploys happen on tuesdays",
            "the staging database is called otter",
        ]
    finally:
        app.close()


def damage(kind: str, good: Path, target: Path) -> None:
    if kind == "corrupted":
        data = bytearray(good.read_bytes())
        for offset in range(2 * 4096, len(data) - 4096, 3 * 4096):
            data[offset + 8 : offset + 200] = b"\xff" * 192
        target.write_bytes(bytes(data))
    elif kind == "truncated":
        target.write_bytes(good.read_bytes()[: 3 * 4096 + 100])
    elif kind == "not sqlite":
        target.write_text("this is not a database\n" * 500)
    elif kind == "newer major":
        target.write_bytes(good.read_bytes())
        conn = sqlite3.connect(target)
        conn.execute(f"PRAGMA user_version = {(CURRENT.major + 1) * 1000}")
        conn.close()
    elif kind == "not cairn's":
        conn = sqlite3.connect(target)
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.close()


_CRASHING = """
import os, sys
from pathlib import Path
from core.restore import restore
from tests.serving import paths_for
paths = paths_for(Path(sys.argv[1]))
if sys.argv[2] == "write":  # an acknowledged write left in the WAL: the process dies, unclosed
    from tests.test_backup import open_app, write
    write(open_app(paths), "acknowledged, then Cairn was killed")
else:  # a restore killed just before the backup takes the database's place
    os.replace = lambda *a, **k: os._exit(9)
    restore(paths, Path(sys.argv[3]))
os._exit(0)
"""


def test_a_restore_killed_half_way_loses_no_acknowledged_write(
    backed_up: tuple[Paths, BackupInfo],
) -> None:
    """Killed after the database got its second name and its WAL had moved aside, a restore
    left cairn.db without its WAL: the next Cairn served it without the writes the WAL held,
    and its writes went into the file shared with the replaced copy, which read as malformed."""
    paths, info = backed_up
    home = paths.data.parent

    def run(*args: str) -> int:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        return subprocess.run(
            [sys.executable, "-c", _CRASHING, str(home), *args], env=env, timeout=60
        ).returncode

    assert run("write") == 0
    assert Path(f"{paths.database}-wal").stat().st_size > 0
    assert run("restore", str(info.path)) == 9
    contents = {str(r[0]) for r in read_only(paths.database).execute("SELECT content FROM memory")}
    assert "acknowledged, then Cairn was killed" in contents and len(contents) == 4
    app = open_app(paths)
    try:
        write(app, "written after the crash")
    finally:
        app.close()
    for name in files_in(paths.data):
        if name.startswith("cairn.db.replaced-") and not name.endswith(("-wal", "-shm")):
            assert integrity(paths.data / name) == ["ok"]
    assert integrity(paths.database) == ["ok"] and len(memory_rows(paths.database)) == 5


@pytest.mark.parametrize(
    ("kind", "error", "words"),
    [
        ("corrupted", IntegrityFailure, "damaged"),
        ("truncated", IntegrityFailure, "nothing was restored"),
        ("not sqlite", InvalidInput, "not a SQLite database"),
        ("newer major", SchemaTooNew, "newer Cairn"),
        ("not cairn's", InvalidInput, "not a Cairn store"),
    ],
)
def test_a_bad_backup_is_refused_and_nothing_is_replaced(
    backed_up: tuple[Paths, BackupInfo], kind: str, error: type[Exception], words: str
) -> None:
    paths, info = backed_up
    bad = paths.data.parent / f"bad-{kind.replace(' ', '-')}.db"
    damage(kind, info.path, bad)
    database_before = hashlib.sha256(paths.database.read_bytes()).hexdigest()
    data_before = files_in(paths.data)
    with pytest.raises(error, match=words):
        restore(paths, bad)
    assert hashlib.sha256(paths.database.read_bytes()).hexdigest() == database_before
    assert files_in(paths.data) == data_before  # nothing moved aside, no copy left behind


@pytest.mark.parametrize(
    ("kind", "status", "words"),
    [
        ("corrupted", 74, "is damaged"),
        ("truncated", 74, "is damaged"),
        ("not sqlite", 65, "is not a SQLite database"),
        ("newer major", 74, "newer Cairn"),
        ("not cairn's", 65, "not a Cairn store"),
    ],
)
def test_a_bad_backup_is_refused_before_the_person_is_asked(
    backed_up: tuple[Paths, BackupInfo], kind: str, status: int, words: str
) -> None:
    """`cairn restore FILE` asked the person to type `restore` and only then said the file was
    damaged or no database: other people's commands check what they can before asking. The
    file is checked read-only - it is not written to - and nothing of the store changes."""
    paths, info = backed_up
    home = paths.data.parent
    bad = home / ("bad-" + "".join(c for c in kind if c.isalpha()) + ".db")
    damage(kind, info.path, bad)
    bad_before = bad.read_bytes()
    database_before = paths.database.read_bytes()
    data_before, home_before = files_in(paths.data), files_in(home)
    code, shown = at_terminal(home, "restore", str(bad), typed="restore")
    assert code == status, shown
    assert words in shown and "nothing was restored" in shown, shown
    assert "to confirm" not in shown, shown
    assert bad.read_bytes() == bad_before  # no -wal, no journal mode set on the person's file
    assert files_in(home) == home_before and files_in(paths.data) == data_before
    assert paths.database.read_bytes() == database_before


def test_a_backup_of_a_newer_minor_schema_is_restored_as_opening_accepts_it(
    backed_up: tuple[Paths, BackupInfo], short_tmp: Path
) -> None:
    """Cairn opens a store of a later minor version of its major (a minor only adds what this
    code can ignore), but `cairn restore` refused a backup of one: "written by a newer Cairn
    (schema 2.1; this Cairn writes 2.0); nothing was restored - upgrade Cairn first", exit 74,
    for a file this same Cairn then served once put in place by hand."""
    paths, info = backed_up
    home = paths.data.parent
    minor = SchemaVersion(CURRENT.major, CURRENT.minor + 1)
    newer = home / "newer-minor.db"
    newer.write_bytes(info.path.read_bytes())
    conn = sqlite3.connect(newer)
    conn.execute(f"PRAGMA user_version = {minor.encoded}")
    conn.close()
    opens_as_a_store(newer, short_tmp / "opens")  # what opening says of it
    status, shown = at_terminal(home, "restore", str(newer), typed="restore")
    assert status == 0, shown
    assert f"restored {newer}" in shown and "2 memories" in shown, shown
    assert memory_rows(paths.database) == memory_rows(info.path)
    assert read_only(paths.database).execute("PRAGMA user_version").fetchone() == (minor.encoded,)
    app = open_app(paths)
    try:
        assert len(app.memories.list(Caller.human()).items) == 2
    finally:
        app.close()


def test_a_backup_with_a_schema_version_no_cairn_writes_is_refused(
    backed_up: tuple[Paths, BackupInfo],
) -> None:
    """A backup whose user_version was set to -5 was restored (exit 0); the next Cairn then took
    a backup named "pre-migration--1.995-to-2.0" and failed to start, "table meta already
    exists"."""
    paths, info = backed_up
    home = paths.data.parent
    bad = home / "negative.db"
    bad.write_bytes(info.path.read_bytes())
    conn = sqlite3.connect(bad)
    conn.execute("PRAGMA user_version = -5")
    conn.close()
    before = paths.database.read_bytes()
    data_before = files_in(paths.data)
    status, shown = at_terminal(home, "restore", str(bad), typed="restore")
    assert status == ErrorCode.INVALID_PARAMS.exit_status == 65, shown
    assert "is a SQLite database but not a Cairn store" in shown
    assert "user_version -5 is no schema version Cairn writes" in shown
    assert paths.database.read_bytes() == before and files_in(paths.data) == data_before
    app = open_app(paths)  # and the store is as it was
    try:
        assert len(app.memories.list(Caller.human()).items) == 3
    finally:
        app.close()


def test_a_sqlite_file_that_is_not_cairns_is_named_so_not_called_damaged(
    backed_up: tuple[Paths, BackupInfo],
) -> None:
    """A SQLite file with a table called memory (but not Cairn's columns) under this schema
    version was called damaged, "is damaged (no such column: status)", exit 74 - as if it were
    a Cairn backup gone bad, not a file that was never one."""
    paths, _ = backed_up
    home = paths.data.parent
    for name, tables in (("fake.db", ["memory"]), ("shaped.db", sorted(STORE_TABLES))):
        fake = home / name
        conn = sqlite3.connect(fake)
        for table in tables:
            conn.execute(f"CREATE TABLE {table} (x)")
        conn.execute(f"PRAGMA user_version = {CURRENT.encoded}")
        conn.commit()
        conn.close()
        before = paths.database.read_bytes()
        status, shown = at_terminal(home, "restore", str(fake), typed="restore")
        assert status == 65, shown
        assert "is a SQLite database but not a Cairn store" in shown, shown
        assert "damaged" not in shown
        assert paths.database.read_bytes() == before


def test_a_backup_missing_a_table_or_column_cairn_needs_is_refused_naming_them(
    backed_up: tuple[Paths, BackupInfo],
) -> None:
    """Restore looked only at the memory table: a backup without the table scan_allow and the
    column feedback.note was restored (exit 0) and the store it replaced moved aside; Cairn
    then failed to start, with a traceback ending "no such table: scan_allow"."""
    paths, info = backed_up
    home = paths.data.parent
    lacking = home / "lacking.db"
    lacking.write_bytes(info.path.read_bytes())
    conn = sqlite3.connect(lacking)
    conn.execute("DROP TABLE scan_allow")
    conn.execute("ALTER TABLE feedback DROP COLUMN note")
    conn.commit()
    conn.close()
    before = paths.database.read_bytes()
    data_before = files_in(paths.data)
    status, shown = at_terminal(home, "restore", str(lacking), typed="restore")
    assert status == ErrorCode.INVALID_PARAMS.exit_status == 65, shown
    assert (
        f"{lacking} is a SQLite database but not a Cairn store (of schema {CURRENT} it lacks "
        "the table scan_allow and the column feedback.note); nothing was restored"
    ) in " ".join(shown.split()), shown
    assert paths.database.read_bytes() == before and files_in(paths.data) == data_before
    with pytest.raises(InvalidInput) as refused:
        restore(paths, lacking)
    assert refused.value.data["missing"] == ["scan_allow", "feedback.note"]


def test_a_backup_of_an_older_schema_is_checked_against_that_schema(
    backed_up: tuple[Paths, BackupInfo], short_tmp: Path
) -> None:
    """What a backup must hold is its own version's schema: one made by an older Cairn lacks
    the tables added since, is restored, and is migrated when Cairn opens it."""
    paths, _ = backed_up
    old = paths.data.parent / "old.db"
    conn = sqlite3.connect(old, isolation_level=None)
    migrate(conn, target=SchemaVersion(1, 2))
    conn.close()
    report = restore(paths, old)
    assert (report.schema, report.memories) == ("1.2", 0)
    open_app(paths).close()  # migrated to this version on open
    assert read_only(paths.database).execute("PRAGMA user_version").fetchone() == (CURRENT.encoded,)


def test_restore_refuses_a_missing_file_and_the_live_database(
    backed_up: tuple[Paths, BackupInfo],
) -> None:
    paths, _ = backed_up
    with pytest.raises(NotFound, match="backup --list"):
        restore(paths, paths.data / "nope.db")
    with pytest.raises(InvalidInput, match="is a folder"):
        restore(paths, paths.backups)
    with pytest.raises(InvalidInput, match="live database"):
        restore(paths, paths.database)


def test_the_latest_backup_is_never_one_stamped_in_the_future(
    backed_up: tuple[Paths, BackupInfo],
) -> None:
    """After a clock fault `restore --latest` picked a file dated 2099 - older data."""
    paths, info = backed_up
    future = paths.backups / "cairn-20991130T000000Z-scheduled.db"
    future.write_bytes(info.path.read_bytes())
    assert newest_backup(paths.backups) == info.path
    future.rename(paths.backups / "cairn-20991130T000000Z-manual.db")
    info.path.unlink()
    with pytest.raises(NotFound, match="none dated up to now"):
        newest_backup(paths.backups)


def test_restore_refuses_while_the_store_is_open(cairn: Cairn) -> None:
    info = service(cairn).backup()
    with pytest.raises(AlreadyRunning, match="cairn stop"):
        restore(cairn.paths, info.path)
    assert not [n for n in files_in(cairn.paths.data) if "replaced" in n]


def test_restore_refuses_while_cairn_runs(backed_up: tuple[Paths, BackupInfo]) -> None:
    paths, info = backed_up
    home = paths.data.parent
    with running_daemon(home) as daemon:
        inode = paths.database.stat().st_ino
        with pytest.raises(AlreadyRunning, match="stop it first with `cairn stop`"):
            restore(paths, info.path)
        assert daemon.proc.poll() is None
        assert paths.database.stat().st_ino == inode
        assert not [n for n in files_in(paths.data) if "replaced" in n]


# -- the command line ---------------------------------------------------------------------------


def test_backup_and_restore_from_a_terminal(backed_up: tuple[Paths, BackupInfo]) -> None:
    paths, _ = backed_up
    home = paths.data.parent
    status, shown = at_terminal(home, "backup", typed="")
    assert status == 0, shown
    assert "backed up to " in shown
    newest = list_backups(paths.backups)[0]
    assert newest.reason == "manual" and str(newest.path) in shown
    assert memory_rows(newest.path) == memory_rows(paths.database)  # three memories

    status, shown = at_terminal(home, "backup", "--list", typed="")
    assert status == 0, shown
    assert all(b.path.name in shown for b in list_backups(paths.backups))

    # the newest backup holds three memories; empty the store, then bring them back
    app = open_app(paths)
    try:
        for m in app.memories.list(Caller.human()).items:
            app.memories.forget(Caller.human(), m.id)
    finally:
        app.close()
    wanted = memory_rows(newest.path)
    status, shown = at_terminal(home, "restore", "--latest", typed="yes")
    assert status == 1 and "not confirmed; nothing was changed" in shown, shown
    assert memory_rows(paths.database) != wanted

    status, shown = at_terminal(home, "restore", "--latest", typed="restore")
    assert status == 0, shown
    assert f"restored {newest.path}" in shown and "3 memories" in shown
    assert "the database it replaced is kept as " in shown
    assert memory_rows(paths.database) == wanted


def test_a_restore_the_data_folder_refuses_is_one_line_and_changes_nothing(
    backed_up: tuple[Paths, BackupInfo],
) -> None:
    """No file can be made beside the database: `cairn restore` was a PermissionError's
    traceback, exit 1 (until 2026-12-01). One line says which folder and why, exit 74, and the
    database is as it was."""
    paths, info = backed_up
    before = memory_rows(paths.database)
    with refusing_writes(paths.data):
        status, shown = at_terminal(paths.data.parent, "restore", str(info.path), typed="restore")
    assert status == ErrorCode.IO.exit_status, shown
    assert "Traceback" not in shown
    assert (
        f"cairn: could not restore {info.path}: no new file can be made in {paths.data}: "
        "permission denied; the memory database is as it was" in shown
    ), shown
    assert memory_rows(paths.database) == before
    assert not [n for n in files_in(paths.data) if "replaced" in n or n.endswith(".tmp")]


def test_a_restore_the_disk_cannot_hold_changes_nothing(
    backed_up: tuple[Paths, BackupInfo],
) -> None:
    """The copy of the backup cannot grow: said in words (until 2026-12-01 "[Errno 27] File too
    large"), and the database is as it was with no copy left beside it."""
    paths, info = backed_up
    before = memory_rows(paths.database)
    with disk_full(64), pytest.raises(IOFault) as raised:  # the lock file's pid fits
        restore(paths, info.path)
    assert raised.value.message == (
        f"could not restore {info.path}: it cannot be copied into {paths.data}: the file would "
        "grow past the largest size this process may write (a file-size limit such as ulimit "
        "-f, or the file system's); the memory database is as it was"
    )
    assert memory_rows(paths.database) == before
    assert not [n for n in files_in(paths.data) if "replaced" in n or n.endswith(".tmp")]


def test_a_file_where_the_backups_folder_goes_is_an_io_error_that_says_move_it(
    backed_up: tuple[Paths, BackupInfo],
) -> None:
    """A file named `backups` beside the database: `cairn backup` exited 77 with "exists and is
    not a directory", the status of an unsafe runtime folder (until 2026-12-01). It is a file in
    the way, which the person moves: exit 74, said in those words, and the file is left alone."""
    paths, _ = backed_up
    backups = paths.backups
    moved = backups.with_name("backups.before")
    backups.rename(moved)
    backups.write_text("not a folder", encoding="utf-8")
    status, shown = at_terminal(paths.data.parent, "backup", typed="")
    assert status == ErrorCode.IO.exit_status == 74, shown
    assert "Traceback" not in shown
    assert (
        f"cairn: the backup directory {backups} is a file, not a folder; Cairn keeps its files "
        "in that folder - move the file away" in shown
    ), shown
    assert backups.read_text(encoding="utf-8") == "not a folder"


def test_backup_json_at_a_terminal(backed_up: tuple[Paths, BackupInfo]) -> None:
    paths, _ = backed_up
    status, shown = at_terminal(paths.data.parent, "backup", "--json", typed="")
    assert status == 0, shown
    data = json.loads(shown[shown.index("{") :])
    assert data == list_backups(paths.backups)[0].to_dict()


def test_backup_commands_need_a_terminal(backed_up: tuple[Paths, BackupInfo]) -> None:
    paths, info = backed_up
    home = paths.data.parent
    for args in (("backup",), ("backup", "--list"), ("restore", str(info.path))):
        out = run_cairn(home, *args, stdin="restore\n")
        assert out.returncode == ErrorCode.FORBIDDEN.exit_status, (args, out.stderr)
        assert "interactive terminal" in out.stderr
    assert len(list_backups(paths.backups)) == 1


def test_restore_at_a_terminal_refuses_while_cairn_runs(
    backed_up: tuple[Paths, BackupInfo],
) -> None:
    paths, info = backed_up
    home = paths.data.parent
    with running_daemon(home) as daemon:
        status, shown = at_terminal(home, "restore", str(info.path), typed="restore")
        assert status == ErrorCode.ALREADY_RUNNING.exit_status == 69, shown
        assert "stop it first with `cairn stop`" in shown
        assert "to confirm" not in shown  # refused before asking
        status, shown = at_terminal(home, "backup", "--list", typed="")
        assert status == 0 and info.path.name in shown, shown
        assert daemon.proc.poll() is None


# -- the audit files rotated around a restore ---------------------------------------------------


def rotating_app(paths: Paths) -> Cairn:
    """A Cairn that rotates its audit log past 1,000 events (the smallest bound allowed)."""
    open_policy(paths.config)
    settings = Settings.defaults().with_values(audit__max_events=1000)
    return Cairn.open(paths, settings=settings, clock=FakeClock())


def write_many(app: Cairn, prefix: str, n: int) -> set[str]:
    reqs = [
        WriteRequest(content=f"{prefix} {i}", kind="fact", scope=Scope.GLOBAL) for i in range(n)
    ]
    results = app.memories.write_many(Caller.human(), reqs)
    ids = {r.id for r in results if isinstance(r, WriteResult) and r.id is not None}
    assert len(ids) == n
    return ids


def rotate(app: Cairn) -> int:
    return Janitor(app.store, app.memories, app.settings, app.paths).run().audit_rotated


def rotated_events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def exported_audit(archive: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with zipfile.ZipFile(archive) as z:
        manifest = json.loads(z.read("manifest.json"))
        events = [json.loads(line) for line in z.read("audit.jsonl").decode().splitlines()]
    return manifest, events


def an_era_rotated_after_a_backup(paths: Paths) -> tuple[BackupInfo, Path, bytes, set[str]]:
    """A store backed up with few events, then 1,200 writes and a rotation: the rotated file holds
    events the backup does not know. Returns the backup, that file, its bytes and the ids written
    after the backup."""
    app = rotating_app(paths)
    try:
        write_many(app, "before the backup", 50)
        info = service(app).backup("manual")
        later = write_many(app, "after the backup", 1200)
        assert rotate(app) > 0
    finally:
        app.close()
    (rotated,) = audit_files.rotated_files(paths.audit_archive)
    assert later & {e["memory_id"] for e in rotated_events(rotated)}
    return info, rotated, rotated.read_bytes(), later


def test_a_restore_keeps_the_audit_files_rotated_after_its_backup(short_tmp: Path) -> None:
    """The restored database numbers its audit events again from where the backup left off, so
    the next rotation wrote a file of the same name - `audit-000000000001-...jsonl` - and replaced
    the one rotated before the restore: its events were gone from everywhere."""
    paths = paths_for(short_tmp / "r")
    home = paths.data.parent
    info, old, old_bytes, old_ids = an_era_rotated_after_a_backup(paths)

    status, shown = at_terminal(home, "restore", str(info.path), typed="restore")
    assert status == 0, shown
    app = rotating_app(paths)
    try:
        new_ids = write_many(app, "after the restore", 1200)
        assert rotate(app) > 0
        # Health names what the restore kept and nothing deletes (it said nothing of them).
        kept_by_restore = app.health.snapshot(Caller.human())["set_aside"]
        assert "set_aside" not in app.health.snapshot(Caller(Surface.AGENT, agent="a"))
    finally:
        app.close()
    kept = [p for p in paths.audit_archive.rglob("*.jsonl") if p.read_bytes() == old_bytes]
    assert len(kept) == 1, "the events rotated before the restore are gone"

    # The restore set the replaced database's later history aside, whole, in a folder named
    # like the replaced database, and said so.
    (replaced,) = [p for p in paths.data.iterdir() if p.name.startswith("cairn.db.replaced-")]
    aside = paths.audit_archive / replaced.name.removeprefix("cairn.db.")
    assert kept == [aside / old.name]
    assert f"1 rotated audit file of the database it replaced moved to {aside}" in shown
    assert kept_by_restore["paths"] == [str(replaced), str(aside / old.name)]
    assert kept_by_restore["files"] == 2
    assert kept_by_restore["bytes"] == replaced.stat().st_size + len(old_bytes)
    # The folder itself holds one history: the new era's rotation, under the same name.
    (new,) = audit_files.rotated_files(paths.audit_archive)
    assert new.name == old.name and new.read_bytes() != old_bytes
    assert not old_ids & {e["memory_id"] for e in rotated_events(new)}

    # The export is one history, contiguous and without duplicates, and names the other one.
    out = short_tmp / "all.zip"
    status, shown = at_terminal(home, "export", "--out", str(out), typed="")
    assert status == 0, shown
    manifest, events = exported_audit(out)
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(seqs) + 1))
    ids = {e["memory_id"] for e in events}
    assert new_ids <= ids and not old_ids & ids
    held = len(rotated_events(aside / old.name))
    assert manifest["audit"]["other_history"] == [
        {"file": f"{aside.name}/{old.name}", "events": held}
    ]
    assert manifest["audit"]["missing_seqs"] == {"count": 0, "ranges": []}
    assert manifest["audit"]["unreadable_lines"] == []
    assert f"not included: {held} audit events of another history (a replaced database)" in shown
    assert f"{aside.name}/{old.name}" in shown


def test_a_database_put_back_by_hand_never_loses_its_rotated_audit_files(
    short_tmp: Path,
) -> None:
    """Copying a backup over cairn.db (no `cairn restore`) leaves the later rotated files where
    they were: an export names them and leaves them out, the next rotation sets them aside."""
    paths = paths_for(short_tmp / "r")
    info, old, old_bytes, old_ids = an_era_rotated_after_a_backup(paths)
    for suffix in ("-wal", "-shm"):
        Path(f"{paths.database}{suffix}").unlink(missing_ok=True)
    paths.database.write_bytes(info.path.read_bytes())

    app = rotating_app(paths)
    try:
        manifest = app.archive.export(Caller.human(), short_tmp / "1.zip").to_dict()
        _, events = exported_audit(short_tmp / "1.zip")
        seqs = [e["seq"] for e in events]
        assert seqs == list(range(1, len(seqs) + 1))
        assert not old_ids & {e["memory_id"] for e in events}
        held = len(rotated_events(old))
        assert manifest["audit"]["other_history"] == [{"file": old.name, "events": held}]

        new_ids = write_many(app, "after the copy", 1200)
        assert rotate(app) > 0
        (aside,) = [p for p in paths.audit_archive.iterdir() if p.is_dir()]
        assert aside.name.startswith("replaced-")
        assert (aside / old.name).read_bytes() == old_bytes
        (new,) = audit_files.rotated_files(paths.audit_archive)
        assert new_ids & {e["memory_id"] for e in rotated_events(new)}

        manifest = app.archive.export(Caller.human(), short_tmp / "2.zip").to_dict()
        _, events = exported_audit(short_tmp / "2.zip")
        seqs = [e["seq"] for e in events]
        assert seqs == list(range(1, len(seqs) + 1))
        assert manifest["audit"]["other_history"] == [
            {"file": f"{aside.name}/{old.name}", "events": held}
        ]
    finally:
        app.close()


def test_undoing_a_restore_brings_its_audit_files_back(short_tmp: Path) -> None:
    """Restoring `cairn.db.replaced-<time>` (undoing a restore) left its rotated files in the
    folder the restore had set them aside in, and kept the undone store's file of the same seq
    numbers in their place: the export gave the other store's events as this one's."""
    paths = paths_for(short_tmp / "r")
    home = paths.data.parent
    info, old, old_bytes, old_ids = an_era_rotated_after_a_backup(paths)
    first = restore(paths, info.path)
    assert first.replaced is not None and len(first.audit_set_aside) == 1
    app = rotating_app(paths)
    try:
        new_ids = write_many(app, "after the restore", 1200)
        assert rotate(app) > 0
    finally:
        app.close()
    new_bytes = old.read_bytes()  # the undone store's file, under the same name
    assert new_bytes != old_bytes

    status, shown = at_terminal(home, "restore", str(first.replaced), typed="restore")
    assert status == 0, shown
    assert old.read_bytes() == old_bytes  # back where it was
    assert not first.audit_set_aside[0].parent.exists()  # its folder, emptied, is gone
    (undone,) = [p for p in paths.audit_archive.iterdir() if p.is_dir()]
    assert (undone / old.name).read_bytes() == new_bytes
    came = first.audit_set_aside[0].parent
    assert f"1 rotated audit file of the restored database brought back from {came}" in shown
    assert f"1 rotated audit file of the database it replaced moved to {undone}" in shown

    app = rotating_app(paths)
    try:
        manifest = app.archive.export(Caller.human(), short_tmp / "all.zip").to_dict()
    finally:
        app.close()
    _, events = exported_audit(short_tmp / "all.zip")
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(seqs) + 1))
    ids = {e["memory_id"] for e in events}
    assert old_ids <= ids and not new_ids & ids
    assert manifest["audit"]["other_history"] == [
        {"file": f"{undone.name}/{old.name}", "events": len(rotated_events(undone / old.name))}
    ]
