"""Opening the store: pragmas, the lock, schema versions and migrations, integrity, the writer."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.app import Cairn
from core.changes import ChangeBus
from core.database import StoreLock, pragmas_for
from core.errors import (
    AlreadyRunning,
    IntegrityFailure,
    IOFault,
    SchemaTooNew,
    StoreUnavailable,
)
from core.migrations import CURRENT, MIGRATIONS, SchemaVersion, migrate, read_version
from core.model import Caller, Scope, Surface
from core.paths import Paths
from core.requests import WriteRequest
from core.schema import bind_tables
from core.settings import Settings
from core.store import Store
from tests.conftest import ROOT, FakeClock, open_policy, refusing_writes
from tests.serving import paths_for


def open_store(path: Path, settings: Settings | None = None) -> Store:
    return Store.open(path, settings or Settings.defaults(), ChangeBus(), FakeClock())


def test_pragmas_are_set_on_the_real_connections(short_tmp: Path) -> None:
    store = open_store(short_tmp / "s.db")
    try:

        def read_pragmas(tx: object) -> dict[str, object]:
            conn = store.write_tables.db.conn()
            return {
                p: conn.execute(f"PRAGMA {p}").fetchone()[0]
                for p in (
                    "journal_mode",
                    "synchronous",
                    "foreign_keys",
                    "busy_timeout",
                    "secure_delete",
                )
            }

        got = store.writer.run(read_pragmas)
        assert got == {
            "journal_mode": "wal",
            "synchronous": 1,
            "foreign_keys": 1,
            "busy_timeout": 5000,
            "secure_delete": 1,
        }
        reader = store.read_db.conn()
        assert reader.execute("PRAGMA query_only").fetchone()[0] == 1
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.execute("INSERT INTO meta(key, value) VALUES ('x', 'y')")
    finally:
        store.close()


def test_full_synchronous_is_a_setting(short_tmp: Path) -> None:
    settings = Settings.defaults().with_values(store__synchronous="FULL")
    assert ("synchronous", "FULL") in pragmas_for(settings, role="write")
    store = open_store(short_tmp / "s.db", settings)
    try:
        level = store.writer.run(
            lambda tx: store.write_tables.db.conn().execute("PRAGMA synchronous").fetchone()[0]
        )
        assert level == 2
    finally:
        store.close()


def test_one_process_at_a_time(paths: Paths) -> None:
    first = Cairn.open(paths)
    try:
        with pytest.raises(AlreadyRunning, match="already open in another Cairn process"):
            Cairn.open(paths)
    finally:
        first.close()
    Cairn.open(paths).close()  # released on close


def test_database_and_directory_are_owner_only(paths: Paths) -> None:
    Cairn.open(paths).close()
    assert paths.database.stat().st_mode & 0o077 == 0
    assert paths.data.stat().st_mode & 0o077 == 0


def test_models_mirror_the_migrated_schema(short_tmp: Path) -> None:
    conn = sqlite3.connect(short_tmp / "m.db", isolation_level=None)
    migrate(conn)
    tables = bind_tables(None)
    for model in tables.all():
        name = model._meta.table_name
        columns = {r[1] for r in conn.execute(f"PRAGMA table_info({name})")}
        fields = {f.column_name for f in model._meta.sorted_fields}
        assert fields == columns, name
    conn.close()


def populate(conn: sqlite3.Connection, version: SchemaVersion) -> None:
    """Representative rows for a database at `version` (grows with each migration)."""
    if version >= SchemaVersion(1, 0):
        conn.execute("INSERT INTO workspace VALUES ('ws_1', '/tmp/x', 1)")
        conn.execute(
            "INSERT INTO memory (id, seq, revision, content, kind, scope, workspace_id, "
            "importance, status, tier, created_at, updated_at, content_hash) VALUES ('m_1', 1, 1, "
            "'migrated memory', 'fact', 'project', 'ws_1', 3, 'active', 'human', 1, 1, 'h')"
        )
        conn.execute(
            "INSERT INTO revision (memory_id, revision, content, kind, scope, workspace_id, tags, "
            "importance, pinned, status, tier, actor, action, created_at) VALUES "
            "('m_1', 1, 'migrated memory', 'fact', 'project', 'ws_1', '[]', 3, 0, 'active', "
            "'human', 'human', 'write', 1)"
        )
        conn.execute(
            "INSERT INTO audit (at, actor_kind, actor, action, memory_id, revision) "
            "VALUES (1, 'human', 'human', 'write', 'm_1', 1)"
        )
    if version >= SchemaVersion(1, 1):
        conn.execute(
            "INSERT INTO memory_fts (rowid, content, summary, tags, keywords) "
            "VALUES (1, 'migrat memori', '', '', '')"
        )
    if version >= SchemaVersion(1, 2):  # a name `$` let through before 2026-11-30
        conn.execute(
            "INSERT INTO agent (name, status, created_at, created_by) "
            "VALUES ('helper\n', 'active', 1, 'self-declared')"
        )
    if version >= SchemaVersion(1, 3):  # changes of m_1 (expiring at 10 s) waiting for review
        conn.execute("UPDATE revision SET expires_at = 10000 WHERE memory_id = 'm_1'")
        for sid, ttl in (("s_copy", 9), ("s_own", 3600)):  # 9 s: m_1's expiry, rounded up
            conn.execute(
                "INSERT INTO suggestion (id, op, target_id, base_revision, content, ttl_seconds, "
                "agent, verified, first_seen, last_seen) "
                f"VALUES ('{sid}', 'update', 'm_1', 1, 'changed', {ttl}, 'b', 1, 1500, 1500)"
            )
    if version >= SchemaVersion(2, 2):  # keys kept as sent, a CR included, before 2026-11-30
        conn.execute("UPDATE memory SET dedupe_key = 'node\r' WHERE id = 'm_1'")
        conn.execute(
            "INSERT INTO idempotency (actor, key, request_hash, response, created_at) "
            "VALUES ('b', 'retry\r\n', 'h', '{}', 1)"
        )
    if version >= SchemaVersion(2, 3):  # an older Cairn of schema 2.0 on this store, since
        conn.execute("UPDATE memory SET kind = 'decision\n' WHERE id = 'm_1'")


@pytest.mark.parametrize("step", range(len(MIGRATIONS)), ids=[str(m.version) for m in MIGRATIONS])
def test_each_migration_from_the_previous_version(short_tmp: Path, step: int) -> None:
    db = short_tmp / "mig.db"
    conn = sqlite3.connect(db, isolation_level=None)
    previous = MIGRATIONS[step - 1].version if step else SchemaVersion(0, 0)
    migrate(conn, target=previous)
    assert read_version(conn) == previous
    populate(conn, previous)
    seen: list[tuple[int, int]] = []
    migrate(conn, target=MIGRATIONS[step].version, before_migrate=lambda a, b: seen.append((a, b)))
    assert read_version(conn) == MIGRATIONS[step].version
    if step:
        assert seen == [(previous.encoded, MIGRATIONS[step].version.encoded)]
        assert conn.execute("SELECT content FROM memory WHERE id='m_1'").fetchone() == (
            "migrated memory",
        )
    if MIGRATIONS[step].version == SchemaVersion(2, 0):  # counted from the index as it was
        counts = dict(conn.execute("SELECT term, docs FROM term_docs"))
        assert counts == {"migrat": 1, "memori": 1}
    if MIGRATIONS[step].version == SchemaVersion(2, 1):  # renamed to a name Cairn accepts
        assert [r[0] for r in conn.execute("SELECT name FROM agent")] == ["helper"]
    if MIGRATIONS[step].version == SchemaVersion(2, 2):  # a copy of the target's expiry dropped
        rows = conn.execute(
            "SELECT id, ttl_seconds, pinned, clear_expiry FROM suggestion ORDER BY id"
        ).fetchall()
        assert rows == [("s_copy", None, None, 0), ("s_own", 3600, None, 0)]
    if MIGRATIONS[step].version == SchemaVersion(2, 3):  # keys stored as they are read now
        assert conn.execute("SELECT dedupe_key FROM memory").fetchall() == [("node\n",)]
        assert conn.execute("SELECT key FROM idempotency").fetchall() == [("retry\n",)]
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memory_notes'").fetchone()
    if MIGRATIONS[step].version == SchemaVersion(2, 4):  # what an older Cairn wrote, repaired
        assert conn.execute("SELECT name FROM agent").fetchall() == [("helper",)]
        assert conn.execute("SELECT kind, dedupe_key FROM memory").fetchall() == [
            ("decision", "node\n")
        ]
        assert conn.execute("SELECT key FROM idempotency").fetchall() == [("retry\n",)]
        conn.execute("UPDATE memory SET dedupe_key = 'node\r'")  # and the next one is marked
        assert conn.execute("SELECT value FROM meta WHERE key = 'old_writes'").fetchone() == (
            "memory",
        )
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    store = open_store(db)  # and the migrated file opens as a store
    store.close()


def test_a_failing_migration_rolls_back_completely(
    short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.migrations as m

    def broken(conn: sqlite3.Connection, now: int) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    bad = m.Migration(SchemaVersion(CURRENT.major, CURRENT.minor + 1), "broken", broken)
    monkeypatch.setattr(m, "MIGRATIONS", (*m.MIGRATIONS, bad))
    conn = sqlite3.connect(short_tmp / "f.db", isolation_level=None)
    migrate(conn, target=CURRENT)
    with pytest.raises(RuntimeError, match="boom"):
        migrate(conn, target=bad.version)
    assert read_version(conn) == CURRENT
    assert conn.execute("SELECT name FROM sqlite_master WHERE name='half_done'").fetchone() is None
    conn.close()


def test_newer_major_is_refused_with_a_clear_error_and_left_untouched(short_tmp: Path) -> None:
    """A store of the next major (here one in rollback-journal mode, as a backup put back by
    hand is) is refused as too new before anything writes to it: the refusal came after the
    switch to WAL journaling had rewritten the file's header."""
    db = short_tmp / "new.db"
    conn = sqlite3.connect(db, isolation_level=None)
    migrate(conn)
    conn.execute(f"PRAGMA user_version = {(CURRENT.major + 1) * 1000}")
    conn.close()
    before = db.read_bytes()
    with pytest.raises(SchemaTooNew, match="newer Cairn"):
        open_store(db)
    assert db.read_bytes() == before
    assert not Path(f"{db}-wal").exists()


def test_a_foreign_file_with_a_huge_user_version_is_not_a_cairn_store_and_left_untouched(
    short_tmp: Path,
) -> None:
    """Another program's SQLite file whose user_version reads as a far newer major (here the
    largest there is) was called "written by a newer Cairn (schema 2147483.647)" - upgrade Cairn,
    as if it were a store - and only after the switch to WAL journaling had changed the file."""
    from tests.test_cli_serving import cairn as run_cairn

    home = short_tmp / "huge"
    paths = paths_for(home)
    paths.data.mkdir(parents=True, mode=0o700)
    conn = sqlite3.connect(paths.database)
    conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    conn.execute("INSERT INTO moz_places (url) VALUES ('https://example.org')")
    conn.execute(f"PRAGMA user_version = {2**31 - 1}")
    conn.commit()
    conn.close()
    before = paths.database.read_bytes()
    with pytest.raises(
        StoreUnavailable,
        match=r"cairn\.db is not a Cairn memory database \(its user_version 2147483647 .*"
        r"moz_places.*\); Cairn has not changed it",
    ):
        Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    assert paths.database.read_bytes() == before
    done = run_cairn(home, "reindex")  # a command that opens the store itself
    assert done.returncode == 74, done.stderr
    assert "not a Cairn memory database" in done.stderr and "newer Cairn" not in done.stderr
    assert paths.database.read_bytes() == before
    assert not Path(f"{paths.database}-wal").exists()


def test_newer_minor_of_the_same_major_opens(short_tmp: Path) -> None:
    db = short_tmp / "minor.db"
    conn = sqlite3.connect(db, isolation_level=None)
    migrate(conn)
    conn.execute(f"PRAGMA user_version = {CURRENT.encoded + 1}")
    conn.close()
    store = open_store(db)
    store.close()


def test_damaged_database_is_refused_with_what_to_do(short_tmp: Path) -> None:
    from core.paths import resolve_paths

    paths = resolve_paths({"CAIRN_HOME": str(short_tmp / "dmg")})
    db = paths.database
    app = Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    caller = Caller(Surface.HUMAN)
    for i in range(300):
        app.memories.write(
            caller, WriteRequest(content=f"row {i} " + "x" * 200, kind="fact", scope=Scope.GLOBAL)
        )
    store = app.store
    store.checkpoint()
    app.close()
    data = bytearray(db.read_bytes())
    page = 4096
    for offset in range(2 * page, len(data) - page, 3 * page):  # scribble over several pages
        data[offset + 8 : offset + 200] = b"\xff" * 192
    db.write_bytes(bytes(data))
    # integrity (exit 74) whichever check meets the damage first, with the command that brings
    # the newest backup back (until 2026-12-02 some said `cairn restore` alone, or were
    # store_unavailable)
    with pytest.raises(IntegrityFailure, match=r"`cairn restore --latest`") as e:
        open_store(db)
    assert str(db) in e.value.message


def test_a_damaged_database_refused_on_open_is_left_byte_for_byte(short_tmp: Path) -> None:
    """The refusal said "Cairn has not changed it", but WAL journaling was switched on before the
    check ran: a damaged file put back by hand (a backup, in rollback-journal mode) had its header
    rewritten (bytes 18 and 19, 1 and 1, became 2 and 2) by the open that refused it."""
    from core.backup import BackupService

    paths = paths_for(short_tmp / "kept")
    app = Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    for i in range(50):
        app.memories.write(
            Caller.human(),
            WriteRequest(content=f"memory {i} " + "y" * 500, kind="fact", scope=Scope.USER),
        )
    backup = BackupService(app.store, paths, app.settings, app.clock, app.failures).backup()
    app.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{paths.database}{suffix}").unlink(missing_ok=True)
    data = bytearray(backup.path.read_bytes())
    assert (data[18], data[19]) == (1, 1)  # a backup is a rollback-journal file
    data[4096 * 6 + 10 : 4096 * 6 + 400] = b"\xa5" * 390  # one page scribbled over
    paths.database.write_bytes(bytes(data))
    for _ in range(2):
        with pytest.raises(IntegrityFailure, match="Cairn has not changed it"):
            Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
        assert paths.database.read_bytes() == bytes(data)
        assert not Path(f"{paths.database}-wal").exists()


def test_a_store_whose_contents_were_lost_is_not_opened_as_a_new_one(short_tmp: Path) -> None:
    """A young store keeps everything in its WAL: with the WAL deleted after a crash (or the
    file emptied), Cairn opened the empty file as a brand-new store - 0 memories, no warning -
    while the backups beside it held the real ones."""
    from core.backup import BackupService
    from core.paths import resolve_paths
    from core.restore import restore

    paths = resolve_paths({"CAIRN_HOME": str(short_tmp / "lost")})
    app = Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    app.memories.write(
        Caller.human(), WriteRequest(content="the otter database", kind="fact", scope=Scope.USER)
    )
    BackupService(app.store, paths, app.settings, app.clock, app.failures).backup("manual")
    app.close()
    paths.database.write_bytes(b"")  # what is left when the contents were in the lost WAL
    with pytest.raises(
        StoreUnavailable,
        match=r"holds nothing .* 1 backup of a store lies .*`cairn restore --latest`",
    ):
        Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    assert paths.database.read_bytes() == b""  # untouched
    restore(paths, sorted(paths.backups.glob("cairn-*.db"))[-1])
    app = Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    try:
        [memory] = app.memories.list(Caller.human()).items
        assert memory.content == "the otter database"
    finally:
        app.close()
    # with no backup beside it, an empty file is simply a new store (nothing to bring back)
    fresh = short_tmp / "fresh" / "cairn.db"
    fresh.parent.mkdir()
    fresh.write_bytes(b"")
    open_store(fresh).close()


def test_a_deleted_database_with_backups_beside_it_is_not_replaced_by_a_new_one(
    short_tmp: Path,
) -> None:
    """With cairn.db (and its -wal, -shm) deleted or moved away while backups lay in `backups/`,
    Cairn created a new, empty store without a word - 0 memories - where an emptied file was
    refused; the next backup then sat beside the real ones as if nothing had happened."""
    from core.backup import BackupService
    from core.restore import restore

    paths = paths_for(short_tmp / "gone")
    app = Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    app.memories.write(
        Caller.human(), WriteRequest(content="the heron database", kind="fact", scope=Scope.USER)
    )
    BackupService(app.store, paths, app.settings, app.clock, app.failures).backup("manual")
    app.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{paths.database}{suffix}").unlink(missing_ok=True)
    with pytest.raises(
        StoreUnavailable,
        match=r"cairn\.db is missing, but 1 backup of a store lies in .*backups.*"
        r"`cairn restore --latest`, or, to start a new store, move the folder .*backups away",
    ):
        Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    assert not paths.database.exists()  # no new store made in its place
    restore(paths, sorted(paths.backups.glob("cairn-*.db"))[-1])
    app = Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    try:
        [memory] = app.memories.list(Caller.human()).items
        assert memory.content == "the heron database"
    finally:
        app.close()
    # following the other advice: with the backups moved away, a new store starts
    for suffix in ("", "-wal", "-shm"):
        Path(f"{paths.database}{suffix}").unlink(missing_ok=True)
    paths.backups.rename(short_tmp / "old-backups")
    app = Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    try:
        assert not app.memories.list(Caller.human()).items
    finally:
        app.close()


def test_an_empty_database_beside_a_log_of_writes_is_refused_and_the_log_kept(
    short_tmp: Path,
) -> None:
    """A young store killed, then its cairn.db emptied: the writes live only in cairn.db-wal.
    The check for a lost store opened the pair read-only to look - and SQLite deleted the log
    (the refusal said Cairn had changed nothing); without backups the store opened as new."""
    paths = paths_for(short_tmp / "wal")
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from tests.serving import paths_for\n"
        "from tests.test_backup import open_app, write\n"
        "app = open_app(paths_for(Path(sys.argv[1])))\n"
        "write(app, 'acknowledged, then Cairn was killed')\n"
        "os._exit(0)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", script, str(paths.data.parent)], env=env, check=True)
    wal = Path(f"{paths.database}-wal")
    held = wal.read_bytes()
    assert held and b"acknowledged, then Cairn was killed" in held
    paths.database.write_bytes(b"")
    for _ in range(2):  # refused every time, the log untouched
        with pytest.raises(StoreUnavailable, match=r"is empty, but its write-ahead log"):
            Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
        assert wal.read_bytes() == held and paths.database.read_bytes() == b""
    paths.database.unlink()  # and with no cairn.db at all, no new one is made beside the log
    with pytest.raises(StoreUnavailable, match=r"is missing, but its write-ahead log"):
        Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    assert wal.read_bytes() == held and not paths.database.exists()


def test_a_lock_file_that_cannot_be_written_is_an_io_error(short_tmp: Path) -> None:
    """On a read-only data directory `cairn serve` died with a traceback (OSError, exit 1) and
    every command said only that Cairn could not be started."""
    blocked = short_tmp / "data"
    blocked.write_text("a file where the data directory should be\n")
    with pytest.raises(IOFault) as raised:
        StoreLock(blocked / "cairn.db.lock").acquire()
    # in words, naming what is in the way (until 2026-12-01 "Not a directory")
    assert raised.value.message == (
        f"cannot open the memory store's lock file {blocked}/cairn.db.lock: {blocked} is a file, "
        "not a folder. Cairn needs to write in its data directory"
    )
    blocked.unlink()
    blocked.mkdir()
    with refusing_writes(blocked), pytest.raises(IOFault) as raised:
        StoreLock(blocked / "cairn.db.lock").acquire()
    assert raised.value.message == (  # until 2026-12-01 "Operation not permitted"
        f"cannot open the memory store's lock file {blocked}/cairn.db.lock: permission denied. "
        "Cairn needs to write in its data directory"
    )


def test_not_a_database_is_refused(short_tmp: Path) -> None:
    db = short_tmp / "text.db"
    db.write_text("this is not sqlite" * 100)
    with pytest.raises(StoreUnavailable):
        open_store(db)


def test_migrate_leaves_another_programs_database_alone(short_tmp: Path) -> None:
    """`migrate` added Cairn's tables beside another program's (user_version 0) and migrated
    one of version 7 as if it were Cairn's schema 0.7."""
    for value in (0, 7, -5):
        conn = sqlite3.connect(short_tmp / f"other-{value}.db", isolation_level=None)
        conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
        conn.execute(f"PRAGMA user_version = {value}")
        with pytest.raises(StoreUnavailable, match=r"not a Cairn memory database .*moz_places"):
            migrate(conn, before_migrate=lambda a, b: pytest.fail("a backup was taken"))
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
        assert names == ["moz_places"]
        assert conn.execute("PRAGMA user_version").fetchone() == (value,)
        conn.close()


@pytest.mark.parametrize("user_version", [0, 7, CURRENT.encoded + 1])
def test_another_programs_database_in_place_of_the_store_is_refused_untouched(
    short_tmp: Path, user_version: int
) -> None:
    """Another program's SQLite file put where cairn.db should be (here a browser's history)
    was taken over: with user_version 0 Cairn added its tables beside the other program's;
    with 7 it took a "pre-migration-0.7-to-2.0" backup and migrated it; with 2001 (a version
    of this major) it crashed with a traceback, "no such table: audit"."""
    from tests.test_cli_serving import cairn as run_cairn

    home = short_tmp / "foreign"
    paths = paths_for(home)
    paths.data.mkdir(parents=True, mode=0o700)
    conn = sqlite3.connect(paths.database)
    conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    conn.execute("INSERT INTO moz_places (url) VALUES ('https://example.org')")
    conn.execute(f"PRAGMA user_version = {user_version}")
    conn.commit()
    conn.close()
    before = paths.database.read_bytes()
    with pytest.raises(
        StoreUnavailable,
        match=r"cairn\.db is not a Cairn memory database \(.*moz_places.*\); Cairn has not "
        r"changed it",
    ):
        Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    done = run_cairn(home, "reindex")  # a command that opens the store itself
    assert done.returncode == 74, done.stderr
    assert "not a Cairn memory database" in done.stderr and "Traceback" not in done.stderr
    assert paths.database.read_bytes() == before
    assert not Path(f"{paths.database}-wal").exists()
    assert not paths.backups.exists()  # nor was a pre-migration backup taken of it


def test_a_store_failing_after_it_opened_is_refused_and_released(short_tmp: Path) -> None:
    """A file with Cairn's schema version and table names but not their columns got past the
    checks and then failed reading the audit log: a raw "sqlite3.OperationalError" traceback,
    and the store's lock and writer thread were left held in the process."""
    from core.migrations import STORE_TABLES

    db = short_tmp / "shaped.db"
    conn = sqlite3.connect(db)
    for name in sorted(STORE_TABLES):
        conn.execute(f"CREATE TABLE {name} (x)")
    conn.execute(f"PRAGMA user_version = {CURRENT.encoded}")
    conn.commit()
    conn.close()
    writers = {t for t in threading.enumerate() if t.name == "cairn-writer"}
    for _ in range(2):  # the second time is not "already open in another Cairn process"
        with pytest.raises(
            StoreUnavailable, match=r"cannot open the memory database .*no such column"
        ):
            open_store(db)
    assert {t for t in threading.enumerate() if t.name == "cairn-writer"} <= writers


def test_a_folder_in_place_of_the_database_is_named_as_one(short_tmp: Path) -> None:
    """A folder where cairn.db should be was refused as "unable to open database file. If the
    file is damaged, restore a backup" - the message spoke of a damaged file, not a folder."""
    paths = paths_for(short_tmp / "dir")
    paths.database.mkdir(parents=True)
    (paths.database / "notes.txt").write_text("someone's folder\n")
    with pytest.raises(StoreUnavailable, match=r"cairn\.db is a folder, not a database file") as e:
        Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    assert "damaged" not in e.value.message
    assert sorted(p.name for p in paths.database.iterdir()) == ["notes.txt"]


def test_a_link_to_a_database_that_is_not_there_is_named_as_one(short_tmp: Path) -> None:
    """cairn.db as a symbolic link to a file that does not exist (a moved disk, a renamed
    folder) ended Cairn with a FileExistsError traceback."""
    paths = paths_for(short_tmp / "link")
    paths.database.parent.mkdir(parents=True)
    target = short_tmp / "elsewhere" / "cairn.db"
    paths.database.symlink_to(target)
    with pytest.raises(StoreUnavailable) as e:
        Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    assert e.value.message == (
        f"the memory database {paths.database} is a link to {target}, which does not exist; "
        "Cairn has not changed it. Make the link point at your database again, or remove it "
        "to start a new store"
    )
    assert paths.database.is_symlink() and not target.exists()


def test_a_database_that_cannot_be_written_is_refused_on_open(short_tmp: Path) -> None:
    """An immutable (or read-only) cairn.db opened and served: every write failed, a hello
    included, so even `cairn health` said "could not be written" - and nothing said why."""
    paths = paths_for(short_tmp / "ro")
    Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock()).close()
    if os.geteuid() != 0:  # a user is stopped by the file's mode
        paths.database.chmod(0o400)
        try:
            with pytest.raises(StoreUnavailable) as e:
                Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
        finally:
            paths.database.chmod(0o600)
    else:  # root only by the immutable attribute
        locked = subprocess.run(["chattr", "+i", str(paths.database)], capture_output=True)
        if locked.returncode != 0:
            pytest.skip(f"chattr +i is not available here: {locked.stderr!r}")
        try:
            with pytest.raises(StoreUnavailable) as e:
                Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
        finally:
            subprocess.run(["chattr", "-i", str(paths.database)], check=True)
    assert e.value.message.startswith(
        f"the memory database {paths.database} cannot be written (its file "
    )
    assert "chattr -i" in e.value.message
    Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock()).close()


def test_writer_group_commit_isolates_a_failing_job(short_tmp: Path) -> None:
    store = open_store(short_tmp / "g.db")
    gate = threading.Event()
    try:
        blocker = store.writer.submit(lambda tx: gate.wait(5))  # holds the writer

        def insert(key: str, fail: bool = False):  # type: ignore[no-untyped-def]
            def job(tx: object) -> str:
                store.write_tables.db.conn().execute(
                    "INSERT INTO meta(key, value) VALUES (?, 'v')", (key,)
                )
                if fail:
                    raise ValueError("job failed after writing")
                return key

            return job

        futures = [
            store.writer.submit(insert("a")),
            store.writer.submit(insert("b", fail=True)),
            store.writer.submit(insert("c")),
        ]
        gate.set()
        blocker.result()
        assert futures[0].result() == "a" and futures[2].result() == "c"
        with pytest.raises(ValueError, match="after writing"):
            futures[1].result()
        keys = {r[0] for r in store.read_db.conn().execute("SELECT key FROM meta")}
        assert {"a", "c"} <= keys and "b" not in keys
    finally:
        store.close()


def test_closed_store_refuses_work(short_tmp: Path) -> None:
    store = open_store(short_tmp / "c.db")
    store.close()
    with pytest.raises(StoreUnavailable, match="closed"):
        store.writer.submit(lambda tx: None)


def test_concurrent_writers_are_serialized_without_loss(paths: Paths, clock: FakeClock) -> None:
    """Callers run their job in place when the connection is free and queue otherwise; under
    contention every write lands exactly once and the audit sequence has no gaps or repeats."""
    open_policy(paths.config)
    app = Cairn.open(paths, settings=Settings.defaults(), clock=clock)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        caller = Caller(Surface.AGENT, agent=f"w{n}", verified=True)
        try:
            for i in range(150):
                app.memories.write(
                    caller,
                    WriteRequest(content=f"writer {n} note {i}", kind="fact", scope=Scope.GLOBAL),
                )
        except BaseException as e:  # reported below
            errors.append(e)

    try:
        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        conn = app.store.read_db.conn()
        assert conn.execute("SELECT count(*), count(DISTINCT content) FROM memory").fetchone() == (
            1200,
            1200,
        )
        seqs = [
            r[0] for r in conn.execute("SELECT seq FROM audit WHERE action = 'write' ORDER BY seq")
        ]
        assert seqs == list(range(seqs[0], seqs[0] + 1200))
        assert conn.execute("SELECT count(*) FROM memory_fts").fetchone()[0] == 1200
    finally:
        app.close()


def test_releasing_memory_keeps_the_store_working(cairn: Cairn) -> None:
    """The housekeeping round hands back page caches (and trims the heap) between requests:
    the store reads and writes as before, from any thread."""
    first = cairn.memories.write(
        Caller.human(),
        WriteRequest.from_params(
            {"content": "the cache is trimmed after housekeeping", "kind": "fact", "scope": "user"}
        ),
    )
    done: list[BaseException | None] = []

    def release() -> None:
        try:
            cairn.store.release_memory()
            done.append(None)
        except BaseException as e:  # handed to the test thread
            done.append(e)

    worker = threading.Thread(target=release)
    worker.start()
    worker.join(10)
    assert done == [None]
    assert first.id is not None
    assert cairn.memories.get(Caller.human(), first.id).memory.content.startswith("the cache")
    again = cairn.memories.write(
        Caller.human(),
        WriteRequest.from_params(
            {"content": "writes still land after a release", "kind": "fact", "scope": "user"}
        ),
    )
    assert again.id is not None
