"""A database file replaced by hand under Cairn - a backup renamed or copied over `cairn.db` -
and the write-ahead log the old database leaves beside it: never applied to the new file,
kept aside, and the new file opens."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.app import Cairn
from core.errors import IntegrityFailure, IOFault, StoreUnavailable
from core.model import Caller, Scope
from core.paths import Paths
from core.replaced_store import FileGone, set_foreign_log_aside
from core.requests import WriteRequest
from core.search import SearchRequest
from core.settings import Settings
from tests.conftest import ROOT, FakeClock, open_policy, refusing_writes
from tests.serving import Daemon, RawClient, paths_for, start_daemon

WRITES = 300  # enough for the log to pass a checkpoint: the old log then breaks an older file


def _ids(db: Path) -> set[str]:
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        return {row[0] for row in conn.execute("SELECT id FROM memory")}
    finally:
        conn.close()


def _ids_through(app: Cairn) -> set[str]:
    return {row[0] for row in app.store.read_db.conn().execute("SELECT id FROM memory")}


def _pair_is_damaged(db: Path, log: Path, scratch: Path) -> bool:
    """Whether `log` applied to `db` (as SQLite would, were it `db`-wal) breaks it - on copies."""
    scratch.mkdir()
    shutil.copyfile(db, scratch / "x.db")
    shutil.copyfile(log, scratch / "x.db-wal")
    conn = sqlite3.connect(f"{(scratch / 'x.db').as_uri()}?mode=ro", uri=True)
    try:
        return bool(conn.execute("PRAGMA quick_check").fetchone()[0] != "ok")
    except sqlite3.DatabaseError:
        return True
    finally:
        conn.close()


def _seed_with_backup(home: Path) -> tuple[Path, set[str]]:
    """A store with a few memories and a backup of it (Cairn's own, as `cairn backup` takes)."""
    paths = paths_for(home)
    open_policy(paths.config)
    app = _open(paths)
    try:
        _write(app, "in the backup", 5)
        backup = app.backups.backup("manual").path
    finally:
        app.close()
    return backup, _ids(backup)


def _open(paths: Paths) -> Cairn:
    return Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())


def _write(app: Cairn, prefix: str, n: int) -> None:
    for i in range(n):
        request = WriteRequest(
            content=f"{prefix} {i} " + "x" * 200, kind="fact", scope=Scope.GLOBAL
        )
        assert app.memories.write(Caller.human(), request).id is not None


def _write_through(daemon: Daemon, n: int) -> set[str]:
    client = RawClient(daemon.socket)
    try:
        assert "result" in client.hello("writer", workspace=str(daemon.home))
        ids = set()
        for i in range(n):
            reply = client.request(
                "memory.write",
                {
                    "content": f"Written before the file was replaced, number {i}: the cache "
                    f"layer holds {i * 7} entries",
                    "kind": "fact",
                    "scope": "project",
                },
            )
            ids.add(reply["result"]["id"])
        return ids
    finally:
        client.close()


def _ended(daemon: Daemon, timeout: float = 30) -> tuple[int | None, str]:
    try:
        status: int | None = daemon.proc.wait(timeout)
    except subprocess.TimeoutExpired:
        return None, ""
    assert daemon.proc.stderr is not None
    return status, daemon.proc.stderr.read()


def _serves_the_backup(home: Path, backup_ids: set[str], gone: str) -> None:
    """A Cairn started now serves the copied-in backup: it answers, a memory written before the
    replacement is not there, and once stopped its file holds the backup's memories."""
    daemon = start_daemon(home)
    try:
        client = RawClient(daemon.socket)
        try:
            assert "result" in client.hello("reader", workspace=str(home))
            assert "error" in client.request("memory.get", {"id": gone})
        finally:
            client.close()
    finally:
        assert daemon.stop() == 0
    assert _ids(paths_for(home).database) == backup_ids


def test_a_backup_renamed_over_the_running_store_opens_next_time_and_the_old_store_is_kept(
    short_tmp: Path,
) -> None:
    """A person moved a backup over the live cairn.db (a new file under the old name) while
    Cairn ran. Cairn stopped within 2 s, as it should, but left the old database's write-ahead
    log beside the new file; the next start applied it to the backup and refused the result as
    damaged ("database disk image is malformed", exit 74) - and the old store, whose file was
    gone, survived only as that log. Now the stop keeps the old store whole as
    cairn.db.replaced-<time> (every acknowledged write in it) and its log aside, and the next
    start serves the backup."""
    home = short_tmp / "mv"
    backup, backup_ids = _seed_with_backup(home)
    database = paths_for(home).database
    daemon = start_daemon(home)
    try:
        written = _write_through(daemon, WRITES)
        assert Path(f"{database}-wal").stat().st_size > 0
        shutil.copyfile(backup, short_tmp / "copy.db")
        os.replace(short_tmp / "copy.db", database)
        status, log = _ended(daemon)
    finally:
        daemon.stop()
    assert status == 0, log
    assert f"stopping: its database {database} was removed or replaced" in log, log
    kept = sorted(database.parent.glob("cairn.db.replaced-*"))
    stores = [p for p in kept if not p.name.endswith((".wal", ".shm"))]
    logs = [p for p in kept if p.name.endswith(".wal")]
    assert len(stores) == 1 and len(logs) == 1, kept
    assert f"kept as {stores[0]}" in log, log
    assert _ids(stores[0]) == backup_ids | written, "the old store's writes were not all kept"
    assert not Path(f"{database}-wal").exists()
    assert _pair_is_damaged(database, logs[0], short_tmp / "pair"), (
        "the log would have done no harm: the test did not reproduce the damage"
    )
    _serves_the_backup(home, backup_ids, gone=min(written))


def test_a_backup_copied_over_the_running_store_is_left_as_copied_and_opens_next_time(
    short_tmp: Path,
) -> None:
    """A person copied a backup over the live cairn.db (`cp`: the same file, its contents
    rewritten) while Cairn ran. Cairn did not notice: it acknowledged writes into its old log,
    and at its stop folded that log into the copied file, which then could not be opened
    ("malformed"). It notices within seconds now - the file is no longer a write-ahead-logged
    SQLite file, as Cairn's backups are not - and stops without touching the file: the copy is
    left byte for byte, the old log is kept aside, and the next start serves the backup."""
    home = short_tmp / "cprun"
    backup, backup_ids = _seed_with_backup(home)
    database = paths_for(home).database
    daemon = start_daemon(home)
    try:
        written = _write_through(daemon, WRITES)
        inode = database.stat().st_ino
        shutil.copyfile(backup, database)
        assert database.stat().st_ino == inode
        status, log = _ended(daemon, timeout=15)
    finally:
        daemon.stop()
    assert status == 0, "Cairn did not notice its database was overwritten"
    assert f"stopping: its database {database} was overwritten" in log, log
    assert database.read_bytes() == backup.read_bytes(), "the copied file was written to"
    (kept,) = database.parent.glob("cairn.db.replaced-*.wal")
    assert f"its write-ahead log is kept as {kept}" in log, log
    _serves_the_backup(home, backup_ids, gone=min(written))


def test_a_backup_copied_over_a_killed_cairns_store_opens_and_the_stray_log_is_kept(
    short_tmp: Path,
) -> None:
    """Cairn was killed (a crash, a power cut of the process) and a person copied a backup over
    cairn.db - the same file, its contents rewritten. The killed Cairn's write-ahead log lay
    beside it; opening applied it to the backup: "malformed", exit 74. A log that breaks a file
    which is sound on its own is not that file's: it is set aside now, kept, and said, and the
    backup opens."""
    home = short_tmp / "cp"
    backup, backup_ids = _seed_with_backup(home)
    database = paths_for(home).database
    daemon = start_daemon(home)
    try:
        written = _write_through(daemon, WRITES)
        daemon.proc.send_signal(signal.SIGKILL)
        daemon.proc.wait(10)
    finally:
        daemon.stop()
    inode = database.stat().st_ino
    shutil.copyfile(backup, database)
    assert database.stat().st_ino == inode
    wal_bytes = Path(f"{database}-wal").read_bytes()
    assert wal_bytes
    assert _pair_is_damaged(database, Path(f"{database}-wal"), short_tmp / "pair")

    daemon = start_daemon(home)  # until 2026-12-01: "daemon exited 74: ... malformed"
    try:
        daemon.proc.send_signal(signal.SIGTERM)
        status, said = _ended(daemon)
    finally:
        daemon.stop()
    assert status == 0, said
    (log,) = database.parent.glob("cairn.db.replaced-*.wal")
    assert log.read_bytes() == wal_bytes, "the stray log was not kept as it was"
    assert f"it is kept as {log}" in said, said
    _serves_the_backup(home, backup_ids, gone=min(written))


def test_a_replaced_store_that_cannot_be_kept_says_why_when_cairn_stops(short_tmp: Path) -> None:
    """A backup renamed over the store, and the data folder then refusing new files: the store
    Cairn had open cannot be kept and its log cannot be set aside. Until 2026-12-01 the stop
    said nothing of it (only the log had "[Errno 1] Operation not permitted"); now what the
    tray and the daemon's last line say names each file and why, and the log stays where it was
    (nothing is lost) with what to do about it."""
    home = short_tmp / "keep"
    backup, _ = _seed_with_backup(home)
    paths = paths_for(home)
    app = _open(paths)
    try:
        _write(app, "after the backup", WRITES)
        wal = Path(f"{paths.database}-wal")
        held = wal.read_bytes()
        os.replace(shutil.copyfile(backup, short_tmp / "copy.db"), paths.database)
        with refusing_writes(paths.data):
            said = app.store.close(gone=FileGone.REPLACED).said()
    finally:
        app.close()
    data = paths.data
    assert said.startswith(
        f"the store it had open could not be kept as {data}/cairn.db.replaced-"
    ), said
    assert ": permission denied; its write-ahead log" in said, said
    assert said.endswith(
        f"its write-ahead log {wal} could not be set aside: permission denied; keep it, and move "
        "it away before Cairn starts again, so it is never applied to the file at the path now"
    ), said
    assert wal.read_bytes() == held
    assert not [p.name for p in data.iterdir() if "replaced" in p.name or p.suffix == ".tmp"]


def test_a_stray_log_that_cannot_be_set_aside_is_said_in_words(short_tmp: Path) -> None:
    """A killed Cairn's log beside a backup copied over its file, in a folder refusing renames:
    the refusal named the system's "[Errno 1] Operation not permitted: ..." (until 2026-12-01)."""
    home = short_tmp / "stray"
    backup, _ = _seed_with_backup(home)
    paths = paths_for(home)
    app = _open(paths)
    try:
        _write(app, "more", WRITES)
        wal = Path(f"{paths.database}-wal").read_bytes()
    finally:
        app.close()
    shutil.copyfile(backup, paths.database)
    Path(f"{paths.database}-wal").write_bytes(wal)
    with refusing_writes(paths.data), pytest.raises(IOFault) as raised:
        set_foreign_log_aside(paths.database)
    assert raised.value.message.endswith(
        "and it could not be moved aside: permission denied; Cairn has not changed either file"
    ), raised.value.message
    assert Path(f"{paths.database}-wal").read_bytes() == wal


def test_a_file_damaged_on_its_own_is_refused_and_its_log_stays(short_tmp: Path) -> None:
    """Setting a log aside is for a file that is sound without it: a file damaged on its own is
    refused as before, and nothing is moved."""
    home = short_tmp / "bad"
    backup, _ = _seed_with_backup(home)
    paths = paths_for(home)
    app = _open(paths)
    try:
        _write(app, "more", WRITES)
        wal = Path(f"{paths.database}-wal").read_bytes()
    finally:
        app.close()
    shutil.copyfile(backup, paths.database)
    Path(f"{paths.database}-wal").write_bytes(wal)
    with open(paths.database, "r+b") as f:  # damage the file itself: a page of b-tree garbage
        f.seek(4096 * 3)
        f.write(b"\x0d" + b"\xff" * 4095)
    with pytest.raises(IntegrityFailure):
        _open(paths).close()
    assert Path(f"{paths.database}-wal").read_bytes() == wal
    assert not list(paths.database.parent.glob("cairn.db.replaced-*"))


def test_a_read_after_the_file_was_replaced_leaves_the_new_file_as_it_was(short_tmp: Path) -> None:
    """In the seconds before Cairn notices a file renamed over its database, a read on a thread
    that had no connection yet opened one on the new file - which read that file with the old
    store's log and, closing, folded the log into it and removed it: the backup put there was
    ruined, and the old store's last writes with it. Such a read is refused now, and the file
    put there is left byte for byte."""
    home = short_tmp / "read"
    backup, _ = _seed_with_backup(home)
    paths = paths_for(home)
    app = _open(paths)
    _write(app, "after the backup", WRITES)
    written = _ids_through(app)
    shutil.copyfile(backup, short_tmp / "copy.db")
    os.replace(short_tmp / "copy.db", paths.database)
    failure: list[BaseException] = []

    def read() -> None:
        try:
            app.store.read_db.conn().execute("SELECT count(*) FROM memory").fetchone()
        except BaseException as e:
            failure.append(e)

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(30)
    kept = app.close(gone=FileGone.REPLACED)
    assert paths.database.read_bytes() == backup.read_bytes()
    assert [type(e) for e in failure] == [StoreUnavailable], failure
    assert kept.store is not None and _ids(kept.store) == written


def test_a_young_stores_file_moved_over_it_is_refused_naming_the_kept_store(
    short_tmp: Path,
) -> None:
    """A young store keeps everything in its write-ahead log: its file holds nothing yet. A copy
    of that file moved over it made Cairn stop and set the log aside, and the next start
    refused the empty file pointing only at `cairn restore --latest` - a backup older than the
    store Cairn had just kept whole. The refusal names the kept store first now."""
    home = short_tmp / "young"
    database = paths_for(home).database
    daemon = start_daemon(home)
    try:
        written = _write_through(daemon, 3)
        shutil.copyfile(database, short_tmp / "copy.db")
        os.replace(short_tmp / "copy.db", database)
        status, log = _ended(daemon)
    finally:
        daemon.stop()
    assert status == 0, log
    replaced = database.parent.glob("cairn.db.replaced-*")
    (kept,) = (p for p in replaced if not p.name.endswith((".wal", ".shm")))
    assert written <= _ids(kept)
    again = start_daemon(home, wait=False)
    try:
        status, said = _ended(again)
    finally:
        again.stop()
    assert status != 0, "a new, empty store was opened in its place"
    named = f"the store Cairn kept when its file was replaced, `cairn restore {kept}`"
    assert named in said, said


def test_a_program_writing_the_store_after_cairn_looked_at_its_file_removes_no_log(
    short_tmp: Path,
) -> None:
    """A serving Cairn reads its database file's header every 2 s (`Store.overwritten`). It opened
    and closed the file to do so, and closing a file drops every lock the process holds on it
    (POSIX), SQLite's included: the next program to write the store (the sqlite3 shell, a
    script) took itself for the last one using it, and, closing, folded the write-ahead log
    into the file and removed it and its index under Cairn. A read on a thread without a
    connection yet then failed - `cairn context` answered "internal error" (disk I/O error) -
    and what Cairn stored afterwards went into the removed log: no other program saw it, and a
    kill lost it. Looking at the header keeps SQLite's locks now."""
    paths = paths_for(short_tmp / "outside")
    open_policy(paths.config)
    app = _open(paths)
    try:
        _write(app, "the gate code is 4411, number", 1)
        assert not app.store.overwritten()  # as a serving Cairn looks, every 2 s
        script = (
            "import sqlite3, sys\n"
            "db = sqlite3.connect(sys.argv[1])\n"
            "with db:\n"
            "    db.execute(\"UPDATE memory SET content = content || ' (edited)'\")\n"
            "db.close()\n"
        )
        subprocess.run([sys.executable, "-c", script, str(paths.database)], check=True)
        assert Path(f"{paths.database}-wal").exists(), "the program removed Cairn's log"

        _write(app, "stored after the program wrote", 1)
        found: list[object] = []

        def search() -> None:  # a thread with no connection yet, as a new server worker is
            try:
                result = app.search.search(Caller.human(), SearchRequest(query="gate code"))
                found.extend(h.memory.content for h in result.hits)
            except BaseException as e:
                found.append(e)

        reader = threading.Thread(target=search)
        reader.start()
        reader.join(30)
        assert found == ["the gate code is 4411, number 0 " + "x" * 200 + " (edited)"], found

        written = _ids_through(app)
    finally:
        app.close()
    held = [f"/proc/self/fd/{fd}" for fd in os.listdir("/proc/self/fd")]
    assert str(paths.database) not in {os.path.realpath(p) for p in held}, "kept open"
    assert len(written) == 2
    # what another program (or a Cairn started after a kill) reads of the file: Cairn's write
    # after the outside one included; read in another process, as SQLite shares one log index
    # between the connections of a process
    seen = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            "db = sqlite3.connect(sys.argv[1])\n"
            "print(' '.join(sorted(r[0] for r in db.execute('SELECT id FROM memory'))))\n",
            str(paths.database),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert set(seen.stdout.split()) == written
