"""How a serving Cairn stops: what its open connections are told, and how long it takes."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from core import audit_files, audit_rotation, protocol
from core.app import Cairn
from core.daemon import PID_FILE, Runtime
from core.paths import Paths
from core.runtime import probe
from tests.conftest import ROOT, cairn_env
from tests.serving import (
    Daemon,
    RawClient,
    paths_for,
    running_daemon,
    served_in_thread,
    start_daemon,
    wait_for,
    write_settings,
)
from tests.test_janitor import as_lines, audit_rows, exported_events, write_facts


def test_a_hello_being_answered_when_cairn_stops_gets_its_answer(short_tmp: Path) -> None:
    """Stopping waited only for requests after the hello: a connection whose hello was still
    being worked on (here: the tray asking the person) was cut the moment the stop began, and
    the client saw its connection reset with no answer. The hello is answered now, then the
    connection is closed."""
    asked, answer = threading.Event(), threading.Event()

    def confirm(_session: protocol.Session) -> str | None:
        asked.set()
        answer.wait(30)
        return None  # the person allowed it

    with served_in_thread(paths_for(short_tmp / "c"), confirm_human=confirm) as runtime:
        c = RawClient(runtime.socket)
        try:
            hello = {"protocol_version": 1, "role": "human"}
            c.send(
                json.dumps({"jsonrpc": "2.0", "id": 1, "method": "hello", "params": hello}).encode()
                + b"\n"
            )
            assert asked.wait(30), "the hello never reached the person's question"
            runtime.request_stop("the test stops Cairn while a hello is answered")
            # The stop has begun: Cairn no longer takes connections.
            assert wait_for(lambda: not probe(runtime.socket, timeout=0.5), timeout=30)
            answer.set()
            reply = c.read()
            assert reply.get("result", {}).get("role") == "human", reply
            assert c.closed(timeout=30)
        finally:
            answer.set()
            c.close()


def _serving(daemon: Daemon) -> Daemon:
    """The daemon once it is fully up: its pid file written (it listens a moment before)."""
    pid_file = daemon.paths.runtime / PID_FILE
    assert wait_for(lambda: pid_file.exists() and pid_file.read_text() == str(daemon.proc.pid))
    return daemon


def _delete(home: Path) -> None:
    """Delete a running Cairn's folder as a person would with `rm -rf`: a file it writes
    meanwhile (its first scheduled backup, say) can make one pass find a folder not empty."""
    for _ in range(20):
        try:
            shutil.rmtree(home)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)
    shutil.rmtree(home)


def _ended(daemon: Daemon, timeout: float = 30) -> int | None:
    """The daemon's exit status once it has ended on its own, None if it still runs."""
    try:
        return daemon.proc.wait(timeout)
    except subprocess.TimeoutExpired:
        return None


def test_a_daemon_whose_folder_is_deleted_stops_and_says_why(short_tmp: Path) -> None:
    """A daemon whose CAIRN_HOME was deleted under it served on for as long as it ran - a store
    that no longer exists on disk, on a socket no client could reach (one was found doing so 90
    minutes later). It notices within seconds now, says why in its log and stops cleanly."""
    home = short_tmp / "gone"
    daemon = start_daemon(home)
    try:
        _serving(daemon)
        _delete(home)
        status = _ended(daemon)
        assert daemon.proc.stderr is not None
        log = daemon.proc.stderr.read() if status is not None else ""
    finally:
        daemon.stop()
    assert status == 0, "the daemon still serves a deleted folder"
    assert f"stopping: its socket file {daemon.socket} was removed or replaced" in log, log
    assert "Cairn stopped" in log, log


def test_a_daemon_whose_folder_was_deleted_leaves_the_cairn_serving_there_now_alone(
    short_tmp: Path,
) -> None:
    """After its folder is deleted, a client starts a new Cairn there (the old one's store lock
    went with the folder). The old one, stopping, must not remove the new one's socket and pid
    file. The old one is held (SIGSTOP) until the new one serves, so it notices only then."""
    home = short_tmp / "again"
    old = start_daemon(home)
    try:
        _serving(old).proc.send_signal(signal.SIGSTOP)
        _delete(home)
        with running_daemon(home) as new:
            _serving(new)
            old.proc.send_signal(signal.SIGCONT)
            assert _ended(old) == 0, "the old daemon still serves a deleted folder"
            assert (new.paths.runtime / PID_FILE).read_text(encoding="utf-8") == str(new.proc.pid)
            c = RawClient(new.socket)
            try:
                assert "result" in c.hello("after"), "the new Cairn no longer answers"
            finally:
                c.close()
            assert new.proc.poll() is None
    finally:
        old.proc.send_signal(signal.SIGCONT)
        old.stop()


def test_a_connection_being_refused_as_one_too_many_when_cairn_stops_is_closed(
    short_tmp: Path,
) -> None:
    """A connection over `server.max_connections` waits up to a second for the client's first
    line before it is answered "too many connections". A stop in that second cancelled the
    answer without closing the connection: the client got neither the refusal nor an end of
    file, and the server left its transport open (a ResourceWarning once collected). Now the
    client reads the refusal or an end of file, and nothing is left open."""
    home = short_tmp / "c"
    write_settings(home, "[server]\nmax_connections = 1\n")
    leaks: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with served_in_thread(paths_for(home)) as runtime:
            assert runtime.cairn is not None
            first = RawClient(runtime.socket)
            extra: RawClient | None = None
            try:
                activity = runtime.cairn.activity
                assert wait_for(lambda: activity.connections_now == 1, timeout=30)
                extra = RawClient(runtime.socket)  # silent: the server waits for its hello
                assert wait_for(lambda: activity.refused_too_many == 1, timeout=30)
                runtime.request_stop("the test stops Cairn while a connection is refused")
                # the socket file goes at the end of the stop (probing it instead could connect
                # just as the server closes, and leave that connection's transport to the test)
                assert wait_for(lambda: not runtime.socket.exists(), timeout=30)
                extra.sock.settimeout(30)
                line = extra.file.readline()  # the refusal, or an end of file: never a hang
                assert line == b"" or b"too many connections" in line, line
            finally:
                first.close()
                if extra is not None:
                    extra.close()
        gc.collect()
        leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks == [], leaks


def test_a_folder_in_the_pid_files_way_is_said_and_leaves_no_socket(short_tmp: Path) -> None:
    """A folder at `run/cairn.pid` made `cairn serve` end in a traceback after it had started
    listening, leaving its socket behind (until 2026-11-30)."""
    home = short_tmp / "h"
    paths = paths_for(home)
    paths.runtime.mkdir(parents=True, mode=0o700)
    os.chmod(paths.runtime, 0o700)
    (paths.runtime / PID_FILE).mkdir()
    run = subprocess.run(
        [sys.executable, "-m", "core.cli", "serve"],
        cwd=ROOT,
        env=cairn_env(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 74, run.stderr
    assert f"could not write the pid file {paths.runtime / PID_FILE}: " in run.stderr
    assert "a folder is in its place; move it away" in run.stderr
    assert "Traceback" not in run.stderr
    assert sorted(p.name for p in paths.runtime.iterdir()) == [PID_FILE]  # no socket left


def test_a_stopping_cairn_leaves_a_pid_file_naming_another_process(short_tmp: Path) -> None:
    """A file system may give a new file the inode of one deleted a moment before: after its
    folder was deleted and a new Cairn started there, the old one took the new one's pid file
    for its own (same device and inode) and removed it (seen once in the suite, under load).
    A pid file is its own only while it names its process; here the path keeps its inode and
    names another process, as after such a reuse."""
    home = short_tmp / "reused"
    daemon = start_daemon(home)
    pid_file = daemon.paths.runtime / PID_FILE
    try:
        _serving(daemon)
        with open(pid_file, "r+", encoding="utf-8") as f:  # the same inode, another Cairn's pid
            f.seek(0)
            f.truncate()
            f.write("4242424")
        daemon.proc.send_signal(signal.SIGTERM)
        assert _ended(daemon) == 0
    finally:
        daemon.stop()
    assert pid_file.read_text(encoding="utf-8") == "4242424"


# -- a stop during housekeeping -----------------------------------------------------------------


def _serve_until_stopped(paths: Paths, hook: Callable[[Runtime], None]) -> None:
    """Serve `paths` with the real Runtime on this thread until something asks it to stop.
    `hook` runs once the runtime is up and before its first housekeeping round begins (the
    round's task has not run yet: nothing was awaited since `start` made it)."""
    runtime = Runtime(paths, janitor_interval=3600)

    async def main() -> None:
        await runtime.start()
        try:
            hook(runtime)
            await runtime.wait()
        finally:
            await runtime.stop()

    asyncio.run(main())


def _stop_at(runtime: Runtime, statement: str, nth: int) -> None:
    """Ask `runtime` to stop (as SIGTERM, `cairn stop` or the tray's Quit do) while its write
    connection runs the `nth` statement starting with `statement`: inside that write job, so
    the job commits and what follows it meets the stop."""
    seen = [0]

    def trace(sql: str) -> None:
        if sql.startswith(statement):
            seen[0] += 1
            if seen[0] == nth:
                runtime.request_stop(f"the test stops Cairn at {statement!r} {nth}")

    assert runtime.cairn is not None
    runtime.cairn.store.writer.run(
        lambda tx: tx.conn.set_trace_callback(trace), transactional=False
    )


@pytest.mark.parametrize("chunks", [3, 15])
def test_a_stop_during_the_first_rotation_ends_it_between_chunks_and_a_restart_finishes_it(
    short_tmp: Path, caplog: pytest.LogCaptureFixture, chunks: int
) -> None:
    """A Cairn stopped while its first housekeeping round moved a big audit backlog waited for
    the whole move, then ran the rest of the round (the scheduled backup included) before it
    closed: ~12 s on a two-year store, past a system shutdown's grace period. The stop is seen
    between chunks now: the chunk being written commits, the rest of the round waits for the
    next start, which moves the rest into a file of its own - every event once, in a file or the
    table.
    A stop during the chunk that moves the last event still finishes the rotation (15 chunks of
    500 here): nothing is left to carry on but its own `audit_rotated` event."""
    home = short_tmp / "r"
    paths = paths_for(home)
    write_settings(home, "[audit]\nmax_events = 1000\n")
    cairn = Cairn.open(paths)
    try:
        write_facts(
            cairn, 15 * audit_rotation.CHUNK_EVENTS + 900 - cairn.store.committed_seq, "gannet"
        )
    finally:
        cairn.close()
    before = audit_rows(paths)
    moved = len(before) - 900
    assert moved == 15 * audit_rotation.CHUNK_EVENTS

    caplog.set_level(logging.INFO)
    delete = "DELETE FROM audit WHERE seq <="  # a chunk's deletion, in its write transaction
    _serve_until_stopped(paths, lambda runtime: _stop_at(runtime, delete, chunks))
    said = caplog.text
    assert "Cairn stopped" in said, said
    table = audit_rows(paths)
    rotated_events = [e for e in table if e["action"] == "audit_rotated"]
    paused = chunks * audit_rotation.CHUNK_EVENTS
    if chunks < 15:
        assert "audit rotation paused by the stop" in said, said
        # the file holds what was moved, and is named for it: the next round starts another
        (rotated,) = audit_files.rotated_files(paths.audit_archive)
        assert rotated.name == f"audit-{1:012d}-{paused:012d}.jsonl"
        assert rotated.read_bytes() == as_lines(before[:paused])
        assert table == before[paused:]  # beyond the limit still
        assert not rotated_events
    else:
        (rotated,) = audit_files.rotated_files(paths.audit_archive)
        assert rotated.name == f"audit-{1:012d}-{moved:012d}.jsonl"
        assert rotated.read_bytes() == as_lines(before[:moved])
        assert table[:-1] == before[moved:]
        assert [e["detail"]["events"] for e in rotated_events] == [moved]
    assert not list(paths.backups.glob("*.db")), "the stopped round went on to its backup"

    caplog.clear()
    inserted = "INSERT INTO audit"  # the next round's first write after the rotation is its event
    restart = chunks < 15
    if restart:
        _serve_until_stopped(paths, lambda runtime: _stop_at(runtime, inserted, 1))
        assert "Cairn stopped" in caplog.text
        first, second = audit_files.rotated_files(paths.audit_archive)
        assert first == rotated and first.read_bytes() == as_lines(before[:paused])
        assert second.name == f"audit-{paused + 1:012d}-{moved:012d}.jsonl"
        assert second.read_bytes() == as_lines(before[paused:moved])
    table = audit_rows(paths)
    assert table[: len(before) - moved] == before[moved:]
    assert [e["detail"]["events"] for e in table if e["action"] == "audit_rotated"] == [
        moved - paused if restart else moved
    ]
    cairn = Cairn.open(paths)
    try:
        manifest, events = exported_events(cairn, short_tmp / "all.zip")
    finally:
        cairn.close()
    assert manifest["audit"]["missing_seqs"]["count"] == 0
    assert not manifest["audit"]["unreadable_lines"]
    assert [e["seq"] for e in events] == list(range(1, table[-1]["seq"] + 1))
    assert [e | {"preview": None} for e in events[: len(before)]] == before


def test_a_stop_just_after_a_session_closed_logs_no_traceback(
    short_tmp: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A connection bound to a session records, as it closes, that the session was alive - a
    write. A stop while that write waited cancelled the connection's handler inside its
    `finally`, and asyncio logged "Exception in callback StreamReaderProtocol..." with a
    CancelledError traceback in the daemon's log at an ordinary stop (seen in one of five
    start/search/stop cycles). The writer is held busy here so the stop comes at that moment."""
    caplog.set_level(logging.ERROR)
    with served_in_thread(paths_for(short_tmp / "c")) as runtime:
        assert runtime.cairn is not None
        cairn = runtime.cairn
        gate, holding = threading.Event(), threading.Event()

        def hold(_tx: object) -> None:
            holding.set()
            gate.wait(30)

        c = RawClient(runtime.socket)
        assert "result" in c.hello(workspace=str(short_tmp), session="s-1")
        holder = threading.Thread(target=cairn.store.writer.run, args=(hold,))
        holder.start()
        try:
            assert holding.wait(30)
            c.close()
            assert wait_for(lambda: cairn.activity.connections_now == 0, timeout=30)
            runtime.request_stop("the test stops Cairn as a session closes")
            time.sleep(0.5)  # the stop cancels the closing connection's handler meanwhile
        finally:
            gate.set()
            holder.join(30)
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert said == [], said
