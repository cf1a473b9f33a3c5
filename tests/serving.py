"""Helpers for tests that need a running Cairn: the real daemon as a subprocess, or the same
Runtime served from a thread of the test process; raw socket clients that send exact bytes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import protocol
from core.clock import Clock
from core.daemon import Runtime
from core.paths import Paths, resolve_paths
from core.runtime import probe, socket_path
from tests.conftest import ROOT, cairn_env, end_processes_under


def write_settings(home: Path, text: str) -> None:
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(text, encoding="utf-8")


def paths_for(home: Path) -> Paths:
    return resolve_paths({"CAIRN_HOME": str(home)})


@dataclass
class Daemon:
    home: Path
    paths: Paths
    proc: subprocess.Popen[str]

    @property
    def socket(self) -> Path:
        return socket_path(self.paths)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
        return self.proc.returncode


# How long a test waits for `cairn serve` to listen: a bound for a hung one. A start took 5-16 s
# on a loaded machine (two test workers, other suites and CPU burners on 2 CPUs, 2026-12-01),
# and 30 s was once not enough. Five times the slowest start seen.
DAEMON_START_S = 60.0


def start_daemon(
    home: Path,
    *,
    umask: int | None = None,
    wait: bool = True,
    extra_env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
) -> Daemon:
    """`cairn serve args` as a real subprocess with CAIRN_HOME=home; waits for its socket."""
    env = cairn_env(home) | (extra_env or {})

    def preexec() -> None:
        if umask is not None:
            os.umask(umask)

    proc = subprocess.Popen(
        [sys.executable, "-m", "core.cli", "serve", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec,  # noqa: PLW1509 - only sets the umask before exec
    )
    daemon = Daemon(home, paths_for(home), proc)
    if wait:
        started = time.monotonic()
        while not probe(daemon.socket, timeout=0.2):
            if proc.poll() is not None:
                err = proc.stderr.read() if proc.stderr else ""
                raise AssertionError(f"daemon exited {proc.returncode}: {err}")
            if time.monotonic() - started > DAEMON_START_S:
                proc.send_signal(signal.SIGTERM)
                try:
                    _, err = proc.communicate(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    _, err = proc.communicate()
                daemon.stop()
                raise AssertionError(f"daemon did not start within {DAEMON_START_S:.0f} s: {err}")
            time.sleep(0.05)
    return daemon


@contextlib.contextmanager
def running_daemon(home: Path, **kwargs: Any) -> Iterator[Daemon]:
    daemon = start_daemon(home, **kwargs)
    try:
        yield daemon
    finally:
        daemon.stop()


def stop_cairns_of(home: Path) -> None:
    """Stop every process whose CAIRN_HOME is `home` (or in it) - a daemon a command started
    on its own included, whose pid the test never sees - and wait until they are gone: SIGTERM,
    the clean stop, then SIGKILL for one still there 10 s later."""
    end_processes_under(home, grace=0)


# How long a test waits for a Cairn served from a thread to start, or to stop: bounds for a
# hung one, far above what a loaded machine takes (a start took up to ~10 s under load).
SERVED_WAIT_S = 90.0


@contextlib.contextmanager
def served_in_thread(
    paths: Paths,
    *,
    confirm_human: Callable[[protocol.Session], str | None] | None = None,
    clock: Clock | None = None,
) -> Iterator[Runtime]:
    """The real Runtime (store, server, socket) on an event loop in a thread of this process.
    `confirm_human` stands in for the tray's confirmation of a person's connection; `clock` is
    the one the store reads (the system's by default).

    A start or stop that fails raises here, in the test, with its own message; one that does
    not end within `SERVED_WAIT_S` is an AssertionError saying so. (Until 2026-12-01 a stop
    that failed was lost on its thread, and the test went on after 30 s as if it had stopped.)
    """
    runtime = Runtime(paths, janitor_interval=3600, confirm_human=confirm_human, clock=clock)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)

        async def main() -> None:
            try:
                await runtime.start()
            except BaseException as e:
                failure.append(e)
                started.set()
                return
            started.set()
            try:
                await runtime.wait()
            finally:
                await runtime.stop()

        try:
            loop.run_until_complete(main())
        except BaseException as e:
            failure.append(e)
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="test-cairn-server", daemon=True)
    thread.start()
    if not started.wait(SERVED_WAIT_S):
        runtime.request_stop("test gave up waiting for the start")
        thread.join(SERVED_WAIT_S)
        raise AssertionError(f"the served Cairn did not start within {SERVED_WAIT_S:.0f} s")
    if failure:
        thread.join(SERVED_WAIT_S)
        raise failure[0]
    try:
        yield runtime
    finally:
        runtime.request_stop("test finished")
        thread.join(SERVED_WAIT_S)
    if thread.is_alive():
        raise AssertionError(f"the served Cairn did not stop within {SERVED_WAIT_S:.0f} s")
    if failure:
        raise failure[0]


class RawClient:
    """Sends exact bytes and reads exact lines: for framing and error-shape tests."""

    def __init__(self, path: Path, timeout: float = 10.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self.file = self.sock.makefile("rb")
        self._ids = 0
        self.notes: list[dict[str, Any]] = []

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def request(
        self, method: str, params: dict[str, Any] | None = None, **extra: Any
    ) -> dict[str, Any]:
        self._ids += 1
        message = {
            "jsonrpc": "2.0",
            "id": self._ids,
            "method": method,
            "params": params or {},
        } | extra
        self.send((json.dumps(message) + "\n").encode())
        while True:
            reply = self._read_line()
            if "id" in reply or "method" not in reply:
                return reply
            self.notes.append(reply)

    def read(self) -> dict[str, Any]:
        """The next message: stashed notifications first, then the wire."""
        if self.notes:
            return self.notes.pop(0)
        return self._read_line()

    def _read_line(self) -> dict[str, Any]:
        line = self.file.readline()
        if not line:
            raise ConnectionError("closed by the server")
        value: dict[str, Any] = json.loads(line)
        return value

    def closed(self, timeout: float = 10.0) -> bool:
        """True when the server closed the connection (EOF) within `timeout`."""
        self.sock.settimeout(timeout)
        try:
            return self.file.readline() == b""
        except TimeoutError:
            return False  # still open: the server said nothing and did not close
        except (ConnectionError, OSError):
            return True

    def hello(self, agent: str = "raw", **params: Any) -> dict[str, Any]:
        return self.request("hello", {"protocol_version": 1, "agent": agent, **params})

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()
        with contextlib.suppress(OSError):
            self.sock.close()


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()
