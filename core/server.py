"""The socket server: newline-delimited JSON-RPC 2.0 over a private Unix socket (and, opt-in,
loopback TCP with tokens), asyncio, runnable in a plain loop (`cairn serve`) or inside Qt's
(qasync). It listens, accepts a connection or refuses it (another user's, one over the limits),
runs service calls on its thread pools, and stops letting the answers running finish.

Each connection is served by `core.connection`, which parses hostile input once, in order: size,
encoding, JSON, shape (`core.jsonrpc`), then the method's version and parameters
(`core.protocol`). Every failure answers with one JSON-RPC error object or, when the stream cannot
be trusted any more, closes that connection; the server itself keeps serving everyone else.
Service calls run on a thread pool, never on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import jsonrpc, protocol
from core.connection import Connection
from core.errors import CairnError, ErrorCode
from core.jsonrpc import response_error
from core.runtime import Peer, bind_unix, has_terminal, peer_credentials
from core.subscriptions import ChangeFeed

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.app import Cairn

log = logging.getLogger(__name__)

# How long a connection over the limit has to send its first frame before it is refused.
_REFUSAL_READ_S = 1.0


@dataclass(frozen=True)
class Limits:
    max_frame_bytes: int
    frame_timeout: float
    idle_timeout: float
    hello_timeout: float
    max_connections: int
    max_in_flight: int
    max_push_backlog_bytes: int

    @staticmethod
    def from_cairn(cairn: Cairn) -> Limits:
        s = cairn.settings
        return Limits(
            max_frame_bytes=s.integer("server.max_frame_bytes"),
            frame_timeout=s.number("server.frame_timeout_s"),
            idle_timeout=s.number("server.idle_timeout_s"),
            hello_timeout=s.number("server.hello_timeout_s"),
            max_connections=s.integer("server.max_connections"),
            max_in_flight=s.integer("server.max_in_flight"),
            max_push_backlog_bytes=s.integer("server.max_push_backlog_bytes"),
        )


class Server:
    def __init__(
        self,
        cairn: Cairn,
        *,
        confirm_human: Callable[[protocol.Session], str | None] | None = None,
    ) -> None:
        self.cairn = cairn
        self.limits = Limits.from_cairn(cairn)
        self._max_tcp_unauthenticated = cairn.settings.integer("server.max_tcp_unauthenticated")
        self._confirm_human = confirm_human
        self._executor = ThreadPoolExecutor(
            max_workers=cairn.settings.integer("server.workers"), thread_name_prefix="cairn-rpc"
        )
        self._search_executor = ThreadPoolExecutor(
            max_workers=cairn.settings.integer("server.search_workers"),
            thread_name_prefix="cairn-search",
        )
        self._servers: list[asyncio.AbstractServer] = []
        self._connections: set[Connection] = set()
        self._handlers: set[asyncio.Task[Any]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._feed: ChangeFeed | None = None
        self.addresses: list[str] = []

    async def start_unix(self, path: Path) -> None:
        self._attach()
        sock = bind_unix(path)
        server = await asyncio.start_unix_server(functools.partial(self._accept, "unix"), sock=sock)
        self._servers.append(server)
        self.addresses.append(str(path))
        log.info("listening on %s", path)

    async def start_tcp(self, port: int) -> None:
        """Loopback only: 127.0.0.1 and, when the machine has it, ::1. Never another address."""
        self._attach()
        for host in ("127.0.0.1", "::1"):
            try:
                server = await asyncio.start_server(
                    functools.partial(self._accept, "tcp"), host=host, port=port
                )
            except OSError as e:
                if host == "::1":
                    log.info("no IPv6 loopback (%s); TCP on 127.0.0.1 only", e)
                    continue
                raise
            self._servers.append(server)
            for s in server.sockets:
                addr = s.getsockname()
                self.addresses.append(f"tcp://{addr[0]}:{addr[1]}")
                if port == 0:
                    port = addr[1]
            log.info("listening on tcp %s:%d (tokens required)", host, port)

    def _attach(self) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            self._feed = ChangeFeed(self.cairn, self._loop, self._connections)

    async def close(self, drain_s: float = 2.0) -> None:
        """Stop listening, let requests already running answer (up to `drain_s` seconds - the
        `daemon.shutdown` that asked for this gets its reply), then close every connection."""
        for server in self._servers:
            server.close()
        running = [task for conn in self._connections for task in conn.in_flight()]
        if running:
            await asyncio.wait(running, timeout=drain_s)
        for conn in list(self._connections):
            conn.abort()
        for server in self._servers:  # after the aborts: on 3.12+ this waits for connections
            with contextlib.suppress(Exception):
                await server.wait_closed()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._feed is not None:
            self._feed.close()
        self._executor.shutdown(wait=True, cancel_futures=True)
        self._search_executor.shutdown(wait=True, cancel_futures=True)

    # -- connections ---------------------------------------------------------------------------

    async def _accept(
        self, transport: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
            task.add_done_callback(self._handlers.discard)
        peer: Peer | None = None
        if transport == "unix":
            raw = writer.get_extra_info("socket")
            try:
                peer = peer_credentials(raw) if raw is not None else None
            except OSError:
                peer = None
            if peer is None or peer.uid != _own_uid():
                # Closed before a single byte is read: another user cannot even say hello.
                self.cairn.activity.count("refused_peer_uid")
                log.warning("refused a connection from uid %s", peer.uid if peer else "unknown")
                writer.close()
                return
        if self._full(transport):
            self.cairn.activity.count("refused_too_many")
            # A stop while this waits (cancelling the handler) still answers and closes, and the
            # handler ends quietly: until 2026-11-30 it left the connection open - the client
            # heard nothing, not even an end of file, and the transport leaked.
            with contextlib.suppress(Exception, asyncio.CancelledError):
                # The client's first frame (its hello) is read first: a socket closed with what
                # the client sent unread resets the connection, and the client lost the answer
                # (about two times in three until 2026-11-30).
                await asyncio.wait_for(reader.readline(), timeout=_REFUSAL_READ_S)
            with contextlib.suppress(Exception, asyncio.CancelledError):
                writer.write(
                    jsonrpc.encode(
                        response_error(None, ErrorCode.RATE_LIMITED, "too many connections")
                    )
                )
                await writer.drain()
            writer.close()
            return
        conn = Connection(self, reader, writer, protocol.Session(transport, peer))
        self._connections.add(conn)
        self.cairn.activity.connected()
        try:
            await conn.serve()
        except asyncio.CancelledError:
            # The server is closing: the handler ends quietly instead of logging a traceback.
            return
        finally:
            self._connections.discard(conn)
            self.cairn.activity.disconnected()
            caller = conn.session.caller
            if caller is not None and caller.session_id is not None:
                # Closing: the store may be closing too, and a stop may cancel this wait (the
                # write still runs); a CancelledError out of here was logged by asyncio as
                # "Exception in callback StreamReaderProtocol..." until 2026-12-01.
                with contextlib.suppress(CairnError, asyncio.CancelledError):
                    await self.run_in_pool(
                        functools.partial(
                            self.cairn.lifecycle.session_seen,
                            caller.session_id,
                            caller.workspace_id,
                        )
                    )

    def _full(self, transport: str) -> bool:
        """Whether a new connection on `transport` is refused. A TCP connection that has not
        completed its hello counts only against `server.max_tcp_unauthenticated`, never against
        `server.max_connections`: anyone on the machine can open one, and until 2026-11-30
        enough silent ones left the owner's agents on the Unix socket "too many connections"."""
        pending = self._pending_tcp()
        served = len(self._connections) - pending
        if transport != "unix" and pending >= self._max_tcp_unauthenticated:
            return True
        return served >= self.limits.max_connections

    def _pending_tcp(self) -> int:
        """TCP connections not (yet) holding one of `max_connections`: their hello neither
        answered nor being answered."""
        return sum(
            1
            for c in self._connections
            if c.session.transport != "unix" and not c.session.hello_done and not c.admitting
        )

    def tcp_admits(self) -> bool:
        """Whether a TCP connection whose hello comes now may take one of `max_connections`
        (it is counted as pending until then): the limit holds for every transport together
        (until 2026-11-30 TCP connections admitted while silent could all say hello and serve
        beyond it, leaving the Unix socket "too many connections")."""
        return len(self._connections) - self._pending_tcp() < self.limits.max_connections

    def human_allowed(self, session: protocol.Session) -> str | None:
        """None when this connection may act for a person, else why not. A person's
        connection needs the Unix socket and, without the tray to ask, a process sitting at a
        terminal: an agent's tool call runs without one."""
        if session.transport != "unix" or session.peer is None:
            return "a person's connection must come over the Unix socket"
        if session.peer.pid is None:
            return (
                "this system does not say which process is connecting, so a person's "
                "connection is refused"
            )
        if self._confirm_human is not None:
            return self._confirm_human(session)
        if not has_terminal(session.peer.pid):
            return (
                "a person's connection needs an interactive terminal (standard input and output "
                "must be a terminal); run the command yourself in a terminal, or start the tray "
                "application (`cairn`), which asks you about commands run without one"
            )
        return None

    def live_sessions(self) -> frozenset[str]:
        """Sessions with an open connection: never ended, whatever their last-seen time."""
        return frozenset(
            c.session.caller.session_id
            for c in list(self._connections)
            if c.session.caller is not None and c.session.caller.session_id is not None
        )

    def run_in_pool(self, fn: Callable[[], Any], *, search: bool = False) -> asyncio.Future[Any]:
        """Run a service call off the event loop: searches on their own small pool, so they
        neither fight each other for the interpreter lock nor hold up writes and reads."""
        assert self._loop is not None
        return self._loop.run_in_executor(self._search_executor if search else self._executor, fn)


def _own_uid() -> int:
    return os.getuid()


__all__ = ["Limits", "Server"]
