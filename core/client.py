"""A small Python client for Cairn's socket, sync and async, and the one rule for who starts
Cairn: when no Cairn runs, a client starts the headless daemon detached and waits for its socket.

    with Client.connect(agent="my-agent", workspace=".") as cairn:
        cairn.call("memory.write", {"content": "...", "kind": "fact", "scope": "project"})
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

from core import PROTOCOL_VERSION
from core.errors import (
    CairnError,
    ConnectionClosed,
    ErrorCode,
    InvalidInput,
    IOFault,
    NoAnswer,
    NotRunning,
    TooLarge,
)
from core.keychain import open_token_store
from core.paths import (
    HOME_ENV,
    Paths,
    cairn_home,
    ensure_private_dir,
    free_space,
    resolve_paths,
)
from core.runtime import probe, socket_path, socket_refused

_BY_RPC_CODE = {code.rpc_code: code for code in ErrorCode}
START_TIMEOUT = 20.0


class RemoteError(CairnError):
    """An error the server answered with; `code` is the server's code from the fixed table."""

    def __init__(self, code: ErrorCode, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message, data=data)
        self.code = code


def error_from(obj: dict[str, Any]) -> RemoteError:
    code = _BY_RPC_CODE.get(obj.get("code", 0), ErrorCode.INTERNAL_ERROR)
    return RemoteError(code, str(obj.get("message", "error")), obj.get("data") or {})


# How a daemon that refuses to start says why (its exit status), passed on by the client.
# (74 covers a damaged database, a newer schema and I/O alike: its log line says which.)
_STARTUP_FAILURES = (ErrorCode.CONFIG_INVALID, ErrorCode.RUNTIME_UNSAFE, ErrorCode.IO)


def daemon_command() -> list[str]:
    """How to start the headless daemon from this installation (source tree or bundle)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "serve"]
    return [sys.executable, "-m", "core.cli", "serve"]


def ensure_running(paths: Paths, *, timeout: float = START_TIMEOUT) -> bool:
    """Start the headless daemon when no Cairn answers; True when this call started it.

    Raises:
        NotRunning: the daemon did not come up (the message carries the end of its log).
    """
    path = socket_path(paths)
    if probe(path):
        return False
    ensure_private_dir(paths.state)
    logs = ensure_private_dir(paths.logs)
    log_file = logs / "daemon.log"
    env = dict(os.environ)  # the daemon inherits the environment as it is, but for CAIRN_HOME:
    # it runs in /, where a relative one named another store (until 2026-11-30 the command then
    # waited 20 s for a socket that never came), so it is handed the absolute folder.
    home = cairn_home(env)
    if home is not None:
        env[HOME_ENV] = str(home)
    # owner-only, like every file Cairn keeps (the folder is too; a copied log keeps its mode)
    try:
        fd = os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError as e:  # another user's (a Cairn run with sudo): until 2026-12-01 a traceback
        raise IOFault(
            f"cannot open Cairn's log {log_file}: {e.strerror or e}; the Cairn a command starts "
            "writes there - make it writable for your user (a Cairn run with sudo leaves files "
            "of root's), or remove it",
            data={"log": str(log_file)},
        ) from e
    with os.fdopen(fd, "ab") as out:
        start_of_run = out.seek(0, os.SEEK_END)  # what earlier Cairns wrote is not this one's
        proc = subprocess.Popen(
            daemon_command(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            cwd="/",
            env=env,
        )
    deadline = time.monotonic() + timeout
    other = False  # another Cairn holds the store: started at the same moment, not listening yet
    while time.monotonic() < deadline:
        if probe(path, timeout=0.5):
            return not other
        code = proc.poll()
        if code == ErrorCode.ALREADY_RUNNING.exit_status:
            other = True  # wait for its socket, up to the same deadline
        elif code is not None and not probe(path, timeout=0.5):
            if code < 0:  # ended by a signal (a kill, the out-of-memory killer) before serving
                message = (
                    f"Cairn could not be started: its process was ended by "
                    f"{_signal_name(-code)} before it served (see {log_file})"
                )
            else:
                message = (
                    f"Cairn could not be started (exit {code}): {_tail(log_file, start_of_run)}"
                )
            # Why it stopped (a settings file to fix: 78) is the command's answer too.
            why = next((c for c in _STARTUP_FAILURES if c.exit_status == code), None)
            if why is not None:
                raise RemoteError(why, message, {"log": str(log_file)})
            raise NotRunning(message, data={"log": str(log_file)})
        time.sleep(0.05)
    raise NotRunning(f"Cairn did not start within {timeout:.0f} s; see {log_file}")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _tail(path: Path, start: int) -> str:
    """The last line the daemon wrote to its log from byte `start` on: a line an earlier Cairn
    wrote there is not why this one failed (until 2026-12-01 it was quoted as if)."""
    try:
        with path.open("rb") as f:
            f.seek(start)
            lines = f.read().decode("utf-8", errors="replace").strip().splitlines()
    except OSError:
        lines = []
    if lines:
        return lines[-1]
    # It could not even say why: its log is on a full disk, most likely (until 2026-12-01 this
    # said only "no log").
    return f"it wrote nothing to its log {path}. Is its disk full? ({free_space(path.parent)})"


def _hello_params(
    *,
    agent: str | None,
    token: str | None,
    workspace: str | None,
    session: str | None,
    role: str,
    paths: Paths,
    enroll: bool = False,
    label: str | None = None,
) -> dict[str, Any]:
    params: dict[str, Any] = {"protocol_version": PROTOCOL_VERSION, "role": role}
    if role == "agent":
        name = agent or os.environ.get("CAIRN_AGENT") or "cli"
        params["agent"] = name
        if enroll:
            params["enroll"] = True  # a never-seen name asks for its token (first use)
        else:
            token = token or os.environ.get("CAIRN_TOKEN") or open_token_store(paths)[0].get(name)
            if token:
                params["token"] = token
    if label is not None:
        params["client"] = label
    if workspace is not None:
        params["workspace"] = os.path.abspath(os.path.expanduser(workspace))
    if session is not None:
        params["session"] = session
    return params


def _request_line(
    req_id: int, method: str, params: dict[str, Any] | None, hello: dict[str, Any]
) -> bytes:
    """One JSON-RPC request as the newline-terminated frame the server reads, no larger than
    the frames the server said (in `hello`) that it reads.

    Raises:
        InvalidInput: a text holds a character UTF-8 cannot carry (a lone surrogate, which is
            what bytes that were not UTF-8 become in a command line's arguments).
        TooLarge: the request is larger than the server reads. Sent, it was refused with words
            about frames ("frame is larger than 1048576 bytes; closing") and the connection
            closed, so the requests after it failed too (until 2026-12-02).
    """
    frame = {"jsonrpc": "2.0", "id": req_id, "method": method, "params": params or {}}
    text = json.dumps(frame, ensure_ascii=False, separators=(",", ":")) + "\n"
    try:
        line = text.encode()
    except UnicodeEncodeError as e:
        bad = ascii(e.object[e.start : e.end])
        raise InvalidInput(
            f"{method}: the request holds text that is not valid UTF-8 ({bad} - bytes of "
            "another encoding?); nothing was sent"
        ) from None
    largest = hello.get("limits", {}).get("max_frame_bytes")
    if isinstance(largest, int) and len(line) - 1 > largest:
        raise TooLarge(
            f"{method}: the request is {len(line) - 1:,} bytes, more than the {largest:,} "
            "bytes Cairn reads in one request (setting server.max_frame_bytes); nothing was "
            "sent",
            data={"limit": largest, "bytes": len(line) - 1},
        )
    return line


class Client:
    """A blocking client: one connection, one request at a time, notifications buffered."""

    def __init__(self, sock: socket.socket, *, timeout: float) -> None:
        self._sock = sock
        self._sock.settimeout(timeout)
        # Read by hand, not through sock.makefile: after a timeout a socket file refuses every
        # later read ("cannot read from timed out object"), and waiting for a push times out.
        self._buffer = bytearray()
        self._ids = itertools.count(1)
        self._notes: collections.deque[dict[str, Any]] = collections.deque()
        self.hello: dict[str, Any] = {}

    @classmethod
    def connect(
        cls,
        paths: Paths | None = None,
        *,
        agent: str | None = None,
        token: str | None = None,
        workspace: str | None = None,
        session: str | None = None,
        role: str = "agent",
        autostart: bool = True,
        timeout: float = 30.0,
        enroll: bool = False,
        label: str | None = None,
        opened: Callable[[Client], None] | None = None,
    ) -> Client:
        """Connect (starting the daemon first when none runs and `autostart`) and say hello.
        `enroll` registers a never-seen agent name and gets its token (`hello.enrolled`);
        `label` describes the client in the hello; `opened` is handed the client once its
        socket is connected, before the hello, so another thread can `abort` a hello that waits
        on a stuck Cairn.

        Raises:
            NotRunning: no Cairn runs and it was not (or could not be) started.
            RemoteError: the server refused the hello.
        """
        paths = paths or resolve_paths()
        path = socket_path(paths)
        if autostart and os.environ.get("CAIRN_NO_AUTOSTART") != "1":
            ensure_running(paths)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError) as e:
            sock.close()
            raise NotRunning(
                f"Cairn is not running (no server at {path}); start it with `cairn serve` or "
                "the tray",
                data={"socket": str(path)},
            ) from e
        except PermissionError as e:
            sock.close()
            raise socket_refused(path, e) from e
        client = cls(sock, timeout=timeout)
        try:
            if opened is not None:
                opened(client)
            client.hello = client.call(
                "hello",
                _hello_params(
                    agent=agent,
                    token=token,
                    workspace=workspace,
                    session=session,
                    role=role,
                    paths=paths,
                    enroll=enroll,
                    label=label,
                ),
            )
        except BaseException:
            client.close()
            raise
        return client

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its result (or raise the server's error)."""
        req_id = next(self._ids)
        try:
            self._sock.sendall(_request_line(req_id, method, params, self.hello))
        except (BrokenPipeError, ConnectionResetError):
            # The server closed first; its reason (a frame too large, ...) may be waiting.
            raise self._last_words() from None
        while True:
            try:
                message = self._read()
            except TimeoutError as e:
                waited = self._sock.gettimeout() or 0
                raise NoAnswer(
                    f"Cairn did not answer {method} within {waited:.0f} s (it may be stuck or "
                    "stopped); what was asked may or may not have been carried out",
                    data={"timeout_s": waited, "method": method},
                ) from e
            if message.get("id") == req_id and "method" not in message:
                if "error" in message:
                    raise error_from(message["error"])
                result: dict[str, Any] = message["result"]
                return result
            if "method" in message:
                self._notes.append(message)
            elif message.get("id") is None and "error" in message:
                raise error_from(message["error"])

    def next_notification(self, timeout: float) -> dict[str, Any] | None:
        """The next pushed notification (e.g. `changes`), or None after `timeout` seconds."""
        if self._notes:
            return self._notes.popleft()
        previous = self._sock.gettimeout()
        self._sock.settimeout(timeout)
        try:
            message = self._read()
        except TimeoutError:
            return None
        finally:
            self._sock.settimeout(previous)
        return message if "method" in message else None

    def _read(self) -> dict[str, Any]:
        """The next message. A timeout (TimeoutError) keeps what was read so far for the next
        call, so the connection stays usable."""
        while (end := self._buffer.find(b"\n")) < 0:
            try:
                chunk = self._sock.recv(1 << 16)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                raise ConnectionClosed("Cairn closed the connection")
            self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        message: dict[str, Any] = json.loads(line)
        return message

    def _last_words(self) -> CairnError:
        """The error the server sent before it closed the connection, or NotRunning."""
        with contextlib.suppress(OSError, ValueError, CairnError):
            while True:
                message = self._read()
                if "error" in message and "method" not in message:
                    return error_from(message["error"])
        return ConnectionClosed("Cairn closed the connection")

    def closed_by_server(self) -> bool:
        """Whether Cairn has closed this connection (a restart, the idle timeout): looked at
        without reading or waiting, so a request is not sent into a connection already gone."""
        timeout = self._sock.gettimeout()
        try:
            self._sock.setblocking(False)
            return self._sock.recv(1, socket.MSG_PEEK) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True
        finally:
            with contextlib.suppress(OSError):
                self._sock.settimeout(timeout)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()

    def abort(self) -> None:
        """Break the connection off, from any thread: a call waiting on Cairn's answer in
        another thread wakes and fails as if Cairn had closed the connection (closing alone
        would leave it waiting). Close it afterwards as usual."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncClient:
    """An asyncio client: many requests in flight, notifications on a queue."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.notifications: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.hello: dict[str, Any] = {}
        self._reading = asyncio.create_task(self._read_loop())

    @classmethod
    async def connect(
        cls,
        paths: Paths | None = None,
        *,
        agent: str | None = None,
        token: str | None = None,
        workspace: str | None = None,
        session: str | None = None,
        autostart: bool = True,
    ) -> AsyncClient:
        paths = paths or resolve_paths()
        path = socket_path(paths)
        if autostart and os.environ.get("CAIRN_NO_AUTOSTART") != "1":
            await asyncio.get_running_loop().run_in_executor(None, ensure_running, paths)
        try:
            reader, writer = await asyncio.open_unix_connection(str(path), limit=64 * 1024 * 1024)
        except (FileNotFoundError, ConnectionRefusedError) as e:
            raise NotRunning(f"Cairn is not running (no server at {path})") from e
        client = cls(reader, writer)
        try:
            client.hello = await client.call(
                "hello",
                _hello_params(
                    agent=agent,
                    token=token,
                    workspace=workspace,
                    session=session,
                    role="agent",
                    paths=paths,
                ),
            )
        except BaseException:
            await client.close()
            raise
        return client

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        req_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[req_id] = future
        try:
            self._writer.write(_request_line(req_id, method, params, self.hello))
            await self._writer.drain()
        except ConnectionError as e:
            # Closed on us: the server may have said why first (the read loop hands that to
            # every request waiting, this one included); otherwise it is gone.
            try:
                return await asyncio.wait_for(future, 5.0)
            except TimeoutError:
                raise ConnectionClosed("Cairn closed the connection") from e
        return await future

    async def _read_loop(self) -> None:
        try:
            while True:
                line = await self._reader.readline()
                if not line:
                    break
                message = json.loads(line)
                if "method" in message:
                    await self.notifications.put(message)
                    continue
                if message.get("id") is None and "error" in message:
                    # The server's last word before it closes (over the connection cap, a
                    # frame too large): every request waiting gets it, not "not running".
                    refused = error_from(message["error"])
                    for waiting in self._pending.values():
                        if not waiting.done():
                            waiting.set_exception(refused)
                    self._pending.clear()
                    continue
                future = self._pending.pop(message.get("id"), None)
                if future is None or future.done():
                    continue
                if "error" in message:
                    future.set_exception(error_from(message["error"]))
                else:
                    future.set_result(message["result"])
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionClosed("Cairn closed the connection"))
            self._pending.clear()

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reading
