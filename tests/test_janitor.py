"""Housekeeping: the audit log rotates into JSON-lines files (never dropped); expired memories
are purged after the retention window and nothing else is."""

from __future__ import annotations

import json
import logging
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from core import audit, audit_files, audit_rotation
from core.app import Cairn
from core.daemon import Runtime
from core.errors import IOFault, NotFound
from core.janitor import Janitor
from core.model import Caller, Scope, Surface
from core.paths import Paths
from core.requests import WriteRequest
from core.settings import Settings
from core.writer import WriteTx
from tests.conftest import ROOT, FakeClock, cairn_env, disk_full, open_policy, refusing_writes
from tests.serving import paths_for, running_daemon, write_settings
from tests.test_cli_serving import at_terminal


def test_audit_rotation_moves_old_events_to_files_and_says_so(
    paths: Paths, clock: FakeClock
) -> None:
    settings = Settings.defaults().with_values(audit__max_events=1000)
    cairn = Cairn.open(paths, settings=settings, clock=clock)
    try:
        reqs = [
            WriteRequest(content=f"fact {i}", kind="fact", scope=Scope.GLOBAL) for i in range(1500)
        ]
        before = cairn.store.committed_seq  # the first start's own events (identity seeds)
        cairn.memories.write_many(Caller.human(), reqs)
        janitor = Janitor(cairn.store, cairn.memories, settings, paths)
        report = janitor.run()
        moved = before + 1500 - 900  # down to 90% of the bound, leaving headroom
        assert report.audit_rotated == moved
        files = sorted(paths.audit_archive.glob("audit-*.jsonl"))
        assert len(files) == 1
        events = [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines()]
        assert [e["seq"] for e in events] == list(range(1, moved + 1))
        assert {e["action"] for e in events[before:]} == {"write"}
        feed = cairn.memories.changes_since(Caller.human(), 0, limit=5000)
        assert feed.changes[0].seq == moved + 1
        assert feed.changes[-1].action == "audit_rotated"
        # A reader that last saw seq 10 learns that events were rotated away.
        assert cairn.memories.changes_since(Caller.human(), 10).gap
        assert not cairn.memories.changes_since(Caller.human(), moved).gap
        assert janitor.run().audit_rotated == 0  # its own event does not start another round
    finally:
        cairn.close()


def test_reading_changes_from_the_start_after_a_rotation_reports_the_gap(
    paths: Paths, clock: FakeClock, workspace_dir: Path
) -> None:
    """`changes.since {seq: 0}` - a reader starting from the beginning - never reported a gap,
    though the first events had been rotated out of the database: it took the oldest change
    left for the first one there was."""
    open_policy(paths.config)
    settings = Settings.defaults().with_values(audit__max_events=1000)
    cairn = Cairn.open(paths, settings=settings, clock=clock)
    try:
        ws = cairn.workspaces.resolve(str(workspace_dir)).id
        agent = Caller(Surface.AGENT, agent="a", verified=True, workspace_id=ws, session_id="s")
        assert not cairn.memories.changes_since(Caller.human(), 0).gap  # nothing rotated yet
        reqs = [
            WriteRequest(content=f"puffin {i}", kind="fact", scope=Scope.PROJECT)
            for i in range(1500)
        ]
        cairn.memories.write_many(agent, reqs)
        assert Janitor(cairn.store, cairn.memories, settings, paths).rotate_audit() > 0
        for caller in (Caller.human(), agent):
            feed = cairn.memories.changes_since(caller, 0, limit=3)
            assert feed.changes[0].seq > 1
            assert feed.gap, caller
    finally:
        cairn.close()


def test_a_rotation_landing_while_changes_are_read_is_reported_as_a_gap(
    paths: Paths, clock: FakeClock
) -> None:
    """A rotation that committed between `changes.since` reading the oldest event left and
    reading the events skipped what it moved without `gap: true`: a reader asking after seq
    100 got seq 600 and on as if nothing was missing. The rotation here lands at exactly that
    moment: the reader's own connection runs it as the events query starts."""
    open_policy(paths.config)
    settings = Settings.defaults().with_values(audit__max_events=1000)
    cairn = Cairn.open(paths, settings=settings, clock=clock)
    try:
        reqs = [
            WriteRequest(content=f"kittiwake {i}", kind="fact", scope=Scope.GLOBAL)
            for i in range(1500)
        ]
        cairn.memories.write_many(Caller.human(), reqs)
        janitor = Janitor(cairn.store, cairn.memories, settings, paths)
        rotated: list[int] = []

        def rotate_as_events_are_read(sql: str) -> None:
            if "FROM audit a" in sql and not rotated:
                rotated.append(janitor.rotate_audit())

        conn = cairn.store.read_db.conn()  # this thread's: the one changes_since reads with
        conn.set_trace_callback(rotate_as_events_are_read)
        try:
            feed = cairn.memories.changes_since(Caller.human(), 100, limit=50)
        finally:
            conn.set_trace_callback(None)
        assert rotated and rotated[0] > 100  # it landed, moving seq 101 and more
        skipped = feed.changes[0].seq != 101
        assert feed.gap == skipped, feed.changes[0].seq
    finally:
        cairn.close()


def count_audit(cairn: Cairn) -> int:
    return int(cairn.store.read_db.conn().execute("SELECT count(*) FROM audit").fetchone()[0])


def test_an_idle_store_rotates_once_and_then_creates_no_more_files(
    paths: Paths, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """With 1,300 events and a bound of 1,000, each round used to rotate, log, and append its own
    `audit_rotated` event - 1,001 again - so the next round moved that one event into a file of
    its own: a new file every hour, forever, on a store nobody used."""
    settings = Settings.defaults().with_values(audit__max_events=1000)
    cairn = Cairn.open(paths, settings=settings, clock=clock)
    try:
        before = cairn.store.committed_seq
        reqs = [
            WriteRequest(content=f"fact {i}", kind="fact", scope=Scope.GLOBAL)
            for i in range(1300 - before)
        ]
        cairn.memories.write_many(Caller.human(), reqs)
        assert count_audit(cairn) == 1300
        janitor = Janitor(cairn.store, cairn.memories, settings, paths)
        assert janitor.run().audit_rotated == 400  # down to 900, then its own event: 901
        assert count_audit(cairn) == 901
        files = sorted(paths.audit_archive.glob("audit-*.jsonl"))
        assert [f.name for f in files] == ["audit-000000000001-000000000400.jsonl"]
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="core.janitor"):
            for _ in range(24):  # a day of hourly rounds on an idle store
                clock.advance(3600)
                assert janitor.run().audit_rotated == 0
        assert sorted(paths.audit_archive.glob("audit-*.jsonl")) == files
        assert count_audit(cairn) == 901
        assert not caplog.records  # nothing done, nothing logged
        # Writing again fills the headroom; the next rotation is again a tenth of the bound.
        cairn.memories.write_many(
            Caller.human(),
            [WriteRequest(content=f"more {i}", kind="fact", scope=Scope.GLOBAL) for i in range(99)],
        )
        assert janitor.run().audit_rotated == 0  # 1,000 is not past the bound
        cairn.memories.write_many(
            Caller.human(), [WriteRequest(content="one more", kind="fact", scope=Scope.GLOBAL)]
        )
        assert janitor.run().audit_rotated == 101
        assert count_audit(cairn) == 901
        assert [f.name for f in sorted(paths.audit_archive.glob("audit-*.jsonl"))] == [
            "audit-000000000001-000000000400.jsonl",
            "audit-000000000401-000000000501.jsonl",
        ]
    finally:
        cairn.close()


def test_rotated_audit_files_never_hold_memory_content(paths: Paths, clock: FakeClock) -> None:
    """Forget cannot reach into archived files, so they never carry content previews."""
    settings = Settings.defaults().with_values(audit__max_events=1000)
    cairn = Cairn.open(paths, settings=settings, clock=clock)
    try:
        secret = cairn.memories.write(
            Caller.human(),
            WriteRequest(content="the vault code is tangerine", kind="fact", scope=Scope.GLOBAL),
        )
        reqs = [
            WriteRequest(content=f"fact {i}", kind="fact", scope=Scope.GLOBAL) for i in range(1100)
        ]
        cairn.memories.write_many(Caller.human(), reqs)
        Janitor(cairn.store, cairn.memories, settings, paths).run()
        assert secret.id is not None
        cairn.memories.forget(Caller.human(), secret.id)
        archived = "".join(
            f.read_text(encoding="utf-8") for f in paths.audit_archive.glob("audit-*.jsonl")
        )
        assert secret.id in archived  # the event itself is kept...
        # ...without the words (a word no hex id can hold: ids are random)
        assert "tangerine" not in archived and "fact 3" not in archived
    finally:
        cairn.close()


def test_janitor_purges_only_what_expired_long_enough_ago(
    cairn: Cairn, paths: Paths, clock: FakeClock
) -> None:
    human = Caller.human()
    short = cairn.memories.write(
        human, WriteRequest(content="short-lived", kind="fact", scope=Scope.GLOBAL, ttl_seconds=10)
    )
    long = cairn.memories.write(
        human,
        WriteRequest(content="long-lived", kind="fact", scope=Scope.GLOBAL, ttl_seconds=30 * 86400),
    )
    forever = cairn.memories.write(
        human, WriteRequest(content="forever", kind="fact", scope=Scope.GLOBAL)
    )
    janitor = Janitor(cairn.store, cairn.memories, cairn.settings, paths)
    clock.advance(8 * 86400)
    assert janitor.run().purged == 1
    remaining = {m.id for m in cairn.memories.list(human).items}
    assert remaining == {long.id, forever.id}
    assert short.id not in remaining


def test_a_failing_step_is_named_in_health_and_the_others_still_run(
    paths: Paths, clock: FakeClock, short_tmp: Path
) -> None:
    """A regular file where rotated audit files go made rotation fail, and with it the rest of
    the round: sessions stopped ending, nothing was purged after it, the workspace and daily
    integrity checks stopped; health said only `janitor: [Errno 17] File exists: '...'`."""
    settings = Settings.defaults().with_values(audit__max_events=1000)
    cairn = Cairn.open(paths, settings=settings, clock=clock)
    try:
        project = short_tmp / "gone"
        project.mkdir()
        ws = cairn.workspaces.resolve(str(project))
        agent = Caller(
            Surface.AGENT, agent="a", verified=True, workspace_id=ws.id, session_id="s-1"
        )
        scratch = cairn.memories.write(
            agent, WriteRequest(content="scratch: try -O2", kind="fact", scope=Scope.SESSION)
        ).id
        cairn.lifecycle.session_seen("s-1", ws.id)
        short = cairn.memories.write(
            Caller.human(),
            WriteRequest(content="short-lived", kind="fact", scope=Scope.GLOBAL, ttl_seconds=10),
        ).id
        reqs = [
            WriteRequest(content=f"fact {i}", kind="fact", scope=Scope.GLOBAL) for i in range(1100)
        ]
        cairn.memories.write_many(Caller.human(), reqs)
        events = cairn.store.read_db.conn().execute("SELECT count(*) FROM audit").fetchone()[0]
        paths.audit_archive.parent.mkdir(parents=True, exist_ok=True)
        paths.audit_archive.write_text("not a folder\n", encoding="utf-8")
        project.rmdir()
        clock.advance(8 * 86400)
        checks: list[str] = []
        cairn.store.read_db.conn().set_trace_callback(
            lambda sql: checks.append(sql) if "quick_check" in sql else None
        )
        janitor = Janitor(
            cairn.store,
            cairn.memories,
            settings,
            paths,
            lifecycle=cairn.lifecycle,
            failures=cairn.failures,
        )
        Runtime._housekeeping_round(cairn, janitor, frozenset(), threading.Event())

        failures = cairn.failures.snapshot()
        assert set(failures) == {"janitor.audit_rotation"}, failures
        error = failures["janitor.audit_rotation"].last_error
        assert error == (
            f"cannot rotate the audit log into {paths.audit_archive}: that path is a file, not "
            "a folder; move the file away (Cairn creates the folder). The events stay in the "
            "database until then"
        )
        health = cairn.health.snapshot(Caller.human())
        assert health["background_failures"]["janitor.audit_rotation"]["last_error"] == error
        # nothing lost: every event is still in the database, none in a file
        assert (
            cairn.store.read_db.conn().execute("SELECT count(*) FROM audit").fetchone()[0] >= events
        )
        # the other steps ran: the purge, the ended session, the workspace and integrity checks
        with pytest.raises(NotFound):
            cairn.memories.get(Caller.human(), str(short))
        assert cairn.memories.get(Caller.human(), str(scratch)).memory.expired
        assert "missing_workspaces" in cairn.warnings.snapshot()
        assert len(checks) == 1

        paths.audit_archive.unlink()  # the person moves the file away: the next round rotates
        report = janitor.run()
        assert report.audit_rotated > 0 and not report.failed
        assert len(list(paths.audit_archive.glob("audit-*.jsonl"))) == 1
    finally:
        cairn.close()


def test_a_rotation_the_disk_refuses_is_said_in_words_and_keeps_every_event(
    paths: Paths, clock: FakeClock
) -> None:
    """The folder of rotated audit files refuses a new file, then the file cannot grow: health
    names the folder, the file and why in words (until 2026-12-01 the system's "Operation not
    permitted" and "File too large"), every event stays in the database, and the next round
    with room moves them."""
    settings = Settings.defaults().with_values(audit__max_events=1000)
    cairn = Cairn.open(paths, settings=settings, clock=clock)
    try:
        reqs = [
            WriteRequest(content=f"fact {i}", kind="fact", scope=Scope.GLOBAL) for i in range(1100)
        ]
        cairn.memories.write_many(Caller.human(), reqs)
        events = cairn.store.read_db.conn().execute("SELECT count(*) FROM audit").fetchone()[0]
        janitor = Janitor(cairn.store, cairn.memories, settings, paths, failures=cairn.failures)
        folder = paths.audit_archive
        folder.mkdir(parents=True)
        said = "cannot rotate the audit log into {folder}: the file {name}"
        kept = ". The events stay in the database until then"

        with refusing_writes(folder):
            assert janitor.run().failed == ("janitor.audit_rotation",)
        error = cairn.failures.snapshot()["janitor.audit_rotation"].last_error
        name = f"audit-{1:012d}-"
        assert error.startswith(said.format(folder=folder, name=name)), error
        assert error.endswith(f".jsonl cannot be written: permission denied{kept}"), error

        with disk_full():
            assert janitor.run().failed == ("janitor.audit_rotation",)
        error = cairn.failures.snapshot()["janitor.audit_rotation"].last_error
        assert error.startswith(said.format(folder=folder, name=name)), error
        assert error.endswith(
            "the file would grow past the largest size this process may write (a file-size "
            f"limit such as ulimit -f, or the file system's){kept}"
        ), error
        count = cairn.store.read_db.conn().execute("SELECT count(*) FROM audit").fetchone()[0]
        assert count >= events

        report = janitor.run()
        assert report.audit_rotated > 0 and not report.failed
        moved = sum(1 for f in folder.glob("audit-*.jsonl") for _ in audit_files.iter_rotated(f))
        assert moved == report.audit_rotated
    finally:
        cairn.close()


def test_without_a_failure_record_a_failing_step_is_raised(paths: Paths, clock: FakeClock) -> None:
    settings = Settings.defaults().with_values(audit__max_events=1000)
    cairn = Cairn.open(paths, settings=settings, clock=clock)
    try:
        reqs = [
            WriteRequest(content=f"fact {i}", kind="fact", scope=Scope.GLOBAL) for i in range(1100)
        ]
        cairn.memories.write_many(Caller.human(), reqs)
        paths.audit_archive.parent.mkdir(parents=True, exist_ok=True)
        paths.audit_archive.write_text("", encoding="utf-8")
        with pytest.raises(IOFault, match="is a file, not a folder"):
            Janitor(cairn.store, cairn.memories, settings, paths).run()
    finally:
        cairn.close()


def test_the_running_daemon_names_the_failing_step_in_health_and_ends_sessions(
    short_tmp: Path,
) -> None:
    """The same round in `cairn serve`, read with `cairn health` at a terminal."""
    home = short_tmp / "hk"
    write_settings(home, "[audit]\nmax_events = 1000\n")
    paths = paths_for(home)
    open_policy(paths.config)
    project = short_tmp / "proj"
    project.mkdir()
    ten_days_ago = FakeClock(int(time.time() * 1000) - 10 * 86_400_000)
    seeded = Cairn.open(paths, clock=ten_days_ago)
    try:
        ws = seeded.workspaces.resolve(str(project))
        agent = Caller(
            Surface.AGENT, agent="a", verified=True, workspace_id=ws.id, session_id="s-1"
        )
        scratch = seeded.memories.write(
            agent, WriteRequest(content="scratch: try -O2", kind="fact", scope=Scope.SESSION)
        ).id
        seeded.lifecycle.session_seen("s-1", ws.id)
        reqs = [
            WriteRequest(content=f"fact {i}", kind="fact", scope=Scope.GLOBAL) for i in range(1100)
        ]
        seeded.memories.write_many(Caller.human(), reqs)
    finally:
        seeded.close()
    paths.audit_archive.parent.mkdir(parents=True, exist_ok=True)
    paths.audit_archive.write_text("not a folder\n", encoding="utf-8")

    with running_daemon(home):
        deadline = time.monotonic() + 30
        while True:
            status, shown = at_terminal(home, "health", "--json", typed="")
            assert status == 0, shown
            health = json.loads(shown[shown.index("{") :])
            if health["background_failures"]:
                break
            assert time.monotonic() < deadline, "the round never recorded its failure"
            time.sleep(0.2)
    assert list(health["background_failures"]) == ["janitor.audit_rotation"], health
    error = health["background_failures"]["janitor.audit_rotation"]["last_error"]
    assert error.startswith(f"cannot rotate the audit log into {paths.audit_archive}: that path")

    after = Cairn.open(paths)
    try:
        assert after.memories.get(Caller.human(), str(scratch)).memory.expired  # the session ended
    finally:
        after.close()


def test_a_rotation_never_replaces_a_file_already_there(paths: Paths, clock: FakeClock) -> None:
    """A rotation whose transaction did not commit leaves its file behind with the rows still in
    the table. The next rotation keeps that file when it holds the same bytes (or fewer: the
    rest is appended, as after a rotation killed between chunks), and sets it aside - never
    overwrites it - when its events are not the table's."""
    settings = Settings.defaults().with_values(audit__max_events=1000)
    cairn = Cairn.open(paths, settings=settings, clock=clock)
    archive = paths.audit_archive

    def failed_rotation(tx: WriteTx) -> None:
        audit_rotation.rotate(tx, 1000, archive)
        raise OSError("disk full")  # after the file, before the commit

    def write(n: int, prefix: str) -> None:
        reqs = [
            WriteRequest(content=f"{prefix} {i}", kind="fact", scope=Scope.GLOBAL) for i in range(n)
        ]
        cairn.memories.write_many(Caller.human(), reqs)

    try:
        write(1300 - cairn.store.committed_seq, "first")
        janitor = Janitor(cairn.store, cairn.memories, settings, paths)
        with pytest.raises(OSError, match="disk full"):
            cairn.store.writer.run(failed_rotation)
        (left,) = audit_files.rotated_files(archive)
        inode, content = left.stat().st_ino, left.read_bytes()
        assert count_audit(cairn) == 1300  # the rows are still there
        assert janitor.run().audit_rotated == 400
        assert audit_files.rotated_files(archive) == [left]
        assert (left.stat().st_ino, left.read_bytes()) == (inode, content)  # kept, not rewritten
        assert not [p for p in archive.iterdir() if p.is_dir()]

        write(500, "second")  # 1,401 events
        with pytest.raises(OSError, match="disk full"):
            cairn.store.writer.run(failed_rotation)
        second = next(p for p in audit_files.rotated_files(archive) if p != left)
        whole = second.read_bytes()
        second.write_bytes(b"".join(whole.splitlines(keepends=True)[:-100]))  # 100 lines short
        assert janitor.run().audit_rotated == 501
        assert audit_files.rotated_files(archive) == [left, second]
        assert second.read_bytes() == whole  # carried on, not set aside
        assert not [p for p in archive.iterdir() if p.is_dir()]

        write(600, "third")  # 1,501 events
        with pytest.raises(OSError, match="disk full"):
            cairn.store.writer.run(failed_rotation)
        third = audit_files.rotated_files(archive)[-1]
        lines = third.read_bytes().splitlines(keepends=True)
        lines[-1] = lines[-1].replace(b'"actor": "', b'"actor": "someone else, ')
        damaged = b"".join(lines)  # its last event is not the table's
        third.write_bytes(damaged)
        assert janitor.run().audit_rotated == 601
        (aside,) = [p for p in archive.iterdir() if p.is_dir()]
        assert aside.name.startswith("replaced-")
        assert (aside / third.name).read_bytes() == damaged  # set aside whole
        events = [json.loads(line) for line in third.read_text(encoding="utf-8").splitlines()]
        assert [e["seq"] for e in events] == list(range(902, 1503))
    finally:
        cairn.close()


# -- a rotation of many chunks ------------------------------------------------------------------


def audit_rows(paths: Paths) -> list[dict[str, Any]]:
    """The audit table as the rotated files hold it (no previews), read from the file itself."""
    conn = sqlite3.connect(f"file:{paths.database}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            f"SELECT {', '.join(audit.AUDIT_COLUMNS)} FROM audit ORDER BY seq"
        ).fetchall()
    finally:
        conn.close()
    return [audit.event_from_values(r).to_dict() | {"preview": None} for r in rows]


def as_lines(events: list[dict[str, Any]]) -> bytes:
    """The export format's lines, as a rotation wrote them in one transaction before chunks."""
    return b"".join(
        json.dumps(e, ensure_ascii=False, sort_keys=True).encode() + b"\n" for e in events
    )


def exported_events(cairn: Cairn, target: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    cairn.archive.export(Caller.human(), target)
    with zipfile.ZipFile(target) as z:
        manifest = json.loads(z.read("manifest.json"))
        lines = z.read("audit.jsonl").decode().splitlines()
    return manifest, [json.loads(line) for line in lines]


def write_facts(cairn: Cairn, n: int, prefix: str) -> None:
    for start in range(0, n, 1000):
        reqs = [
            WriteRequest(content=f"{prefix} {i}", kind="fact", scope=Scope.GLOBAL)
            for i in range(start, min(n, start + 1000))
        ]
        cairn.memories.write_many(Caller.human(), reqs)


def test_a_long_rotation_lets_a_write_in_before_it_ends(
    paths: Paths, clock: FakeClock, short_tmp: Path
) -> None:
    """The first housekeeping round of a store far over `audit.max_events` moved every excess
    event in one write transaction: on a two-year store (297,747 events) every agent's write
    waited ~15 s. It moves a chunk per transaction now: a write made once the move has begun
    lands before the move's own `audit_rotated` event, and the rotated file, the export and
    health read back exactly what one transaction wrote."""
    settings = Settings.defaults().with_values(audit__max_events=1000)
    cairn = Cairn.open(paths, settings=settings, clock=clock)
    try:
        write_facts(cairn, 6000, "guillemot")
        before = audit_rows(paths)
        moved = len(before) - 900
        janitor = Janitor(cairn.store, cairn.memories, settings, paths, rotation_chunk=200)
        with ThreadPoolExecutor(1) as pool:
            rotating = pool.submit(janitor.rotate_audit)
            deadline = time.monotonic() + 30
            while not audit_files.rotated_files(paths.audit_archive) and not rotating.done():
                assert time.monotonic() < deadline, "the rotation never began"
                time.sleep(0.001)
            written = cairn.memories.write(
                Caller.human(),
                WriteRequest(content="a write during the rotation", kind="fact", scope=Scope.USER),
            )
            assert rotating.result(timeout=60) == moved
        conn = cairn.store.read_db.conn()
        (write_seq,) = conn.execute(
            "SELECT seq FROM audit WHERE memory_id = ?", (written.id,)
        ).fetchone()
        (rotated_seq,) = conn.execute(
            "SELECT seq FROM audit WHERE action = 'audit_rotated'"
        ).fetchone()
        assert write_seq < rotated_seq, "the write waited for the whole rotation"

        (rotated,) = audit_files.rotated_files(paths.audit_archive)
        assert rotated.name == f"audit-{1:012d}-{moved:012d}.jsonl"
        assert rotated.read_bytes() == as_lines(before[:moved])
        assert count_audit(cairn) == cairn.health.snapshot(Caller.human())["audit_events"]
        manifest, events = exported_events(cairn, short_tmp / "all.zip")
        assert manifest["audit"]["missing_seqs"]["count"] == 0
        assert not manifest["audit"]["unreadable_lines"]
        assert [e["seq"] for e in events] == list(range(1, rotated_seq + 1))
        assert [e | {"preview": None} for e in events[: len(before)]] == before
    finally:
        cairn.close()


@pytest.mark.parametrize("where", ["committed", "appended", "cut"])
def test_a_rotation_killed_between_chunks_loses_and_duplicates_nothing(
    short_tmp: Path, where: str
) -> None:
    """SIGKILL during a rotation of many chunks: after a chunk committed, after a chunk's lines
    were appended and fsynced but before its rows' deletion committed (its events in the file
    and in the table), and in the middle of an append (a line cut short). The next round carries
    the same file on: every event ends in exactly one place, the file holds the same bytes a
    whole rotation would have written, and an export has each event once."""
    home = short_tmp / "k"
    paths = paths_for(home)
    write_settings(home, "[audit]\nmax_events = 1000\n")
    cairn = Cairn.open(paths)
    try:
        write_facts(cairn, 4000, "puffin")
    finally:
        cairn.close()
    before = audit_rows(paths)
    moved = len(before) - 900

    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.kill_rotation", "300", "4", where.replace("cut", "appended")],
        cwd=ROOT,
        env=cairn_env(home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        said = [proc.stdout.readline().strip() for _ in range(4 if where == "committed" else 3)]
        held = proc.stdout.readline().strip()
        assert held == "HOLD", (said, held, proc.stderr.read() if proc.stderr else "")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    (rotated,) = audit_files.rotated_files(paths.audit_archive)
    in_file = [json.loads(line) for line in rotated.read_bytes().splitlines()]
    assert len(in_file) == 1200  # four chunks of 300, the fourth committed or not
    left = audit_rows(paths)
    assert left[0]["seq"] == (1201 if where == "committed" else 901)
    if where == "cut":  # killed halfway through the fourth chunk's last line
        data = rotated.read_bytes()
        rotated.write_bytes(data[: len(data) - 40])

    cairn = Cairn.open(paths)
    try:
        # An export before the rotation carries on: each event once, no line counted damaged.
        manifest, events = exported_events(cairn, short_tmp / "before.zip")
        assert manifest["audit"]["missing_seqs"]["count"] == 0
        assert not manifest["audit"]["unreadable_lines"]
        assert [e["seq"] for e in events] == list(range(1, len(before) + 1))
        janitor = Janitor(cairn.store, cairn.memories, cairn.settings, paths, rotation_chunk=300)
        assert janitor.run().audit_rotated == moved - (1200 if where == "committed" else 900)
        assert audit_files.rotated_files(paths.audit_archive) == [rotated]
        assert rotated.read_bytes() == as_lines(before[:moved])
        table = [e["seq"] for e in audit_rows(paths)]
        assert table[0] == moved + 1 and table[: len(before) - moved] == list(
            range(moved + 1, len(before) + 1)
        )
        manifest, events = exported_events(cairn, short_tmp / "after.zip")
        assert manifest["audit"]["missing_seqs"]["count"] == 0
        assert not manifest["audit"]["unreadable_lines"]
        assert [e["seq"] for e in events] == list(range(1, table[-1] + 1))
    finally:
        cairn.close()
