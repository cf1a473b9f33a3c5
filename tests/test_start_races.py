"""Starts and stops that overlap: a Cairn started while another still holds the store (starting,
or closing it after a stop), and a stopping Cairn beside the one started after it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.database import StoreLock
from core.errors import ErrorCode
from core.replaced_store import FileGone, Kept
from core.runtime import probe, socket_path
from tests.conftest import ROOT, cairn_env, processes_under
from tests.serving import (
    Daemon,
    paths_for,
    served_in_thread,
    start_daemon,
    stop_cairns_of,
    wait_for,
)


def _add_in_background(home: Path, text: str) -> subprocess.Popen[str]:
    """`cairn add TEXT --kind fact` started with CAIRN_HOME=home; its output is read later."""
    return subprocess.Popen(
        [sys.executable, "-m", "core.cli", "add", text, "--kind", "fact"],
        cwd=ROOT,
        env=cairn_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_command_run_while_cairn_closes_its_store_is_served_once_it_has(
    short_tmp: Path,
) -> None:
    """`cairn stop` (or the tray's Quit), and a command at once: the old Cairn's socket was gone
    but it still held the store while it closed it, so the daemon the command started found the
    store taken and exited, and the command waited its 20 s for a socket nobody would open, then
    failed ("Cairn did not start within 20 s"). The store's lock is held here, by a Cairn still
    closing it, until the new daemon has found it taken. The new daemon waits for the store now:
    once it is let go, it serves, and the command is answered."""
    home = short_tmp / "closing"
    paths = paths_for(home)
    held = StoreLock(paths.store_lock).acquire()
    try:
        client = _add_in_background(home, "written during a stop")
        try:
            log = paths.logs / "daemon.log"
            taken = "already open in another Cairn process"
            assert wait_for(lambda: log.exists() and taken in log.read_text(), 30), (
                "the command's daemon never found the store taken"
            )
            held.release()  # the old Cairn has closed its store, and ends
            out, err = client.communicate(timeout=60)
            assert client.returncode == 0, err
            assert out.startswith("stored ")
            assert "Traceback" not in err
            assert probe(socket_path(paths))
            assert len(_serving(home)) == 1, _serving(home)
        finally:
            if client.poll() is None:
                client.kill()
                client.communicate()
    finally:
        held.release()
        stop_cairns_of(home)


def test_a_stopping_cairn_leaves_the_socket_of_the_one_started_after_it_alone(
    short_tmp: Path,
) -> None:
    """A Cairn stopping let go of the store, then removed its socket file if it was still its
    own (the same inode). A Cairn started in that moment took the store, removed the old socket
    and bound its own - and the file system gave the new socket the old one's inode (it does so
    every time on ext4), so the old Cairn removed the new one's live socket: the new Cairn found
    its socket gone and stopped too, and no Cairn ran. The new Cairn starts here exactly when
    the old one has closed its store. The old one now removes its socket while it still holds
    the store, so a new Cairn never binds before that."""
    home = short_tmp / "handover"
    paths = paths_for(home)
    started: list[Daemon] = []
    left_at_close: list[bool] = []
    with served_in_thread(paths) as old:
        assert old.cairn is not None
        close = old.cairn.close

        def close_then_start_another(*, gone: FileGone | None = None) -> Kept:
            left_at_close.append(socket_path(paths).exists())
            closed = close(gone=gone)
            started.append(start_daemon(home))  # waits until the new Cairn serves
            return closed

        old.cairn.close = close_then_start_another  # type: ignore[method-assign]
        old.request_stop("stopped while another starts")
    try:
        assert started, "the old Cairn never closed its store"
        assert left_at_close == [False], "the old Cairn let go of the store before its socket"
        assert started[0].proc.poll() is None, "the new Cairn stopped"
        assert probe(socket_path(paths)), "the new Cairn's socket was removed"
    finally:
        for daemon in started:
            daemon.stop()
        stop_cairns_of(home)


def test_a_command_whose_daemon_finds_the_store_taken_by_one_starting_uses_that_one(
    short_tmp: Path,
) -> None:
    """Clients started together on a stopped Cairn: a daemon that finds the store taken by one
    starting at the same moment (not listening yet) waits; when that one serves, it exits
    `already_running` and its client connects to the winner. (Until 2026-11-30 the client failed
    with "already open in another Cairn process".) The winner's slow start is played by pausing
    it (SIGSTOP) once it holds the store and before it listens, until the client's own daemon
    has found the store taken."""
    home = short_tmp / "winner"
    paths = paths_for(home)
    winner = start_daemon(home, wait=False)
    client: subprocess.Popen[str] | None = None
    try:
        pid = str(winner.proc.pid)
        lock = paths.store_lock
        deadline = time.monotonic() + 30
        while not (lock.exists() and lock.read_text(encoding="utf-8") == pid):
            assert time.monotonic() < deadline, "the winner never took the store"
            time.sleep(0.001)  # the pause must come before it listens
        winner.proc.send_signal(signal.SIGSTOP)
        if probe(socket_path(paths)):
            winner.proc.send_signal(signal.SIGCONT)
            pytest.skip("the winner was already listening when it was paused")
        client = _add_in_background(home, "racing note")
        log = paths.logs / "daemon.log"
        assert wait_for(lambda: log.exists() and "waiting up to" in log.read_text(), 30), (
            "the client's daemon never found the store taken"
        )
        winner.proc.send_signal(signal.SIGCONT)
        out, err = client.communicate(timeout=60)
        assert client.returncode == 0, err
        assert out.startswith("stored ")
        assert winner.proc.poll() is None, "the winner stopped"
        assert wait_for(lambda: len(_serving(home)) == 1, 30), _serving(home)
    finally:
        winner.proc.send_signal(signal.SIGCONT)
        if client is not None and client.poll() is None:
            client.kill()
            client.communicate()
        winner.stop()
        stop_cairns_of(home)


def _serving(home: Path) -> list[str]:
    """The command lines of the Cairn daemons serving `home`."""
    return [c for c in processes_under(home).values() if c.endswith("core.cli serve")]


def test_a_daemon_killed_while_its_command_waits_is_said_so_not_an_older_runs_log(
    short_tmp: Path,
) -> None:
    """The daemon a command started was killed (SIGKILL, the out-of-memory killer) before it
    served: the command said "Cairn could not be started (exit -9): ... INFO cairn: Cairn
    stopped" - a status no person reads as a kill, and the last line of the log, written by an
    earlier Cairn that had stopped cleanly. It names the signal now, and quotes only what this
    start wrote to the log."""
    home = short_tmp / "killed"
    paths = paths_for(home)
    paths.logs.mkdir(parents=True)
    log = paths.logs / "daemon.log"
    log.write_text("2026-11-30 09:00:00,000 INFO cairn: Cairn stopped\n", encoding="utf-8")
    client = _add_in_background(home, "lost start")
    try:
        assert wait_for(lambda: bool(_serving(home)), 30), "the command started no Cairn"
        for pid, command in processes_under(home).items():
            if command.endswith("core.cli serve"):
                os.kill(pid, signal.SIGKILL)
        _out, err = client.communicate(timeout=60)
    finally:
        if client.poll() is None:
            client.kill()
            client.communicate()
        stop_cairns_of(home)
    assert client.returncode == ErrorCode.NOT_RUNNING.exit_status, err
    assert "Cairn could not be started: its process was ended by SIGKILL" in err, err
    assert "Cairn stopped" not in err, err
    assert "Traceback" not in err


def test_a_cairn_stopped_while_it_waits_for_the_store_exits_cleanly(short_tmp: Path) -> None:
    """`cairn serve` finding the store held by a Cairn that serves nothing waits for it; a
    SIGTERM then (the person's Ctrl-C, a logout) is a stop asked for, not a failure: it exits 0
    saying so. Until 2026-12-01 it exited 69 ("already open in another Cairn process"), which a
    service manager records as a failed start."""
    home = short_tmp / "waiting"
    paths = paths_for(home)
    held = StoreLock(paths.store_lock).acquire()
    try:
        daemon = start_daemon(home, wait=False)
        try:
            assert daemon.proc.stderr is not None
            said = ""
            while "waiting up to" not in said:  # ends: it gives up waiting after 15 s
                line = daemon.proc.stderr.readline()
                assert line, f"the daemon never waited for the store:\n{said}"
                said += line
            daemon.proc.send_signal(signal.SIGTERM)
            _, err = daemon.proc.communicate(timeout=30)
            assert daemon.proc.returncode == 0, said + err
            assert "already open" not in err, err
            assert "stopped before serving: received SIGTERM" in err, err
            assert not socket_path(paths).exists()
        finally:
            daemon.stop()
    finally:
        held.release()
        stop_cairns_of(home)
