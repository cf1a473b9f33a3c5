"""One connection to the socket server: its session (the agent, workspace and session its hello
bound), its read loop under the limits, the hello, and its requests in flight and their answers.

Frames are read here under the size, time and hello limits, parsed by `core.jsonrpc`, and each
request after the hello runs on the server's pool through `core.dispatch`. A failure answers
with one JSON-RPC error object or, when the stream cannot be trusted any more, closes this
connection; the server keeps serving everyone else.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from typing import TYPE_CHECKING, Any

from core import dispatch, jsonrpc, protocol, protocol_hello
from core.errors import CairnError, ErrorCode
from core.jsonrpc import RpcError, parse_frame, response_error
from core.subscriptions import PushQueue

if TYPE_CHECKING:
    from core.app import Cairn
    from core.server import Server

log = logging.getLogger("core.server")  # one logger for the socket server, whichever module logs

_HTTP_STARTS = (
    b"GET ",
    b"POST ",
    b"PUT ",
    b"HEAD ",
    b"DELETE ",
    b"OPTIONS ",
    b"PATCH ",
    b"CONNECT ",
)


class _Close(Exception):
    """Stop serving this connection (after an optional last message)."""


class Connection:
    def __init__(
        self,
        server: Server,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        session: protocol.Session,
    ) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.session = session
        self._buffer = bytearray()
        self._deadline = 0.0
        self._send_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()  # requests being answered
        self.pushes = PushQueue(
            session, self._send_line, self.cairn.activity, server.limits.max_push_backlog_bytes
        )
        self._loop = asyncio.get_running_loop()
        self._opened = self._loop.time()
        # A TCP connection takes one of `max_connections` from the moment its hello is being
        # answered (see Server._full and _hello).
        self.admitting = False

    @property
    def cairn(self) -> Cairn:
        return self.server.cairn

    def in_flight(self) -> list[asyncio.Task[None]]:
        return list(self._tasks)

    def abort(self) -> None:
        """Cancel what runs for this connection and close it now, dropping unsent bytes."""
        for task in [*self._tasks, *self.pushes.tasks]:
            task.cancel()
        self.writer.transport.abort()

    async def serve(self) -> None:
        try:
            while True:
                frame = await self._read_frame()
                if frame is None:
                    return
                frame = frame.rstrip(b"\r")
                if not frame.strip():
                    continue
                if not self.session.hello_done:
                    await self._before_hello(frame)
                    continue
                full = len(self._tasks) >= self.server.limits.max_in_flight
                if full and not await self._wait_or_refuse(frame):
                    continue
                task = asyncio.create_task(self._handle(frame))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        except _Close:
            pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            # Answers still being written get the time a stalled reader gets (see _send);
            # a shutdown's cancellation is not swallowed here.
            pending = [*self._tasks, *self.pushes.tasks]
            try:
                if pending:
                    await asyncio.wait(pending, timeout=self.server.limits.frame_timeout)
            finally:
                if (
                    self.writer.transport.get_write_buffer_size()
                    or self._tasks
                    or self.pushes.tasks
                ):
                    self.abort()
                self.writer.close()
            with contextlib.suppress(Exception):
                await self.writer.wait_closed()

    # -- reading -------------------------------------------------------------------------------

    async def _read_frame(self) -> bytes | None:
        limits = self.server.limits
        while True:
            newline = self._buffer.find(b"\n", 0, limits.max_frame_bytes + 1)
            if newline >= 0:
                frame = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                if self._buffer:
                    self._deadline = self._loop.time() + limits.frame_timeout
                return frame
            if len(self._buffer) > limits.max_frame_bytes:
                self.cairn.activity.count("bad_frames")
                await self._send(
                    response_error(
                        None,
                        ErrorCode.TOO_LARGE,
                        f"frame is larger than {limits.max_frame_bytes} bytes; closing",
                        {"limit": limits.max_frame_bytes},
                    )
                )
                raise _Close
            timeout = self._wait_budget()
            try:
                # A timeout scope, not wait_for: wait_for wraps each read in a task of its own.
                async with asyncio.timeout(timeout):
                    chunk = await self.reader.read(65536)
            except TimeoutError:
                if not self._buffer and self.session.hello_done:
                    raise _Close from None  # idle for longer than the idle timeout
                continue  # the frame and hello deadlines are checked on the next round
            if not chunk:
                return None
            if not self._buffer:
                self._deadline = self._loop.time() + limits.frame_timeout
            self._buffer += chunk
            if not self.session.hello_done and self._looks_like_http(bytes(self._buffer[:512])):
                with contextlib.suppress(Exception):
                    self.writer.write(
                        b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    )
                    await self.writer.drain()
                self.cairn.activity.count("refused_hello")
                raise _Close

    def _wait_budget(self) -> float:
        """How long to wait for more bytes; raises _Close when a limit has run out. Before the
        hello, the hello deadline bounds everything: a half-sent frame does not extend it."""
        limits = self.server.limits
        now = self._loop.time()
        hello_left = (
            self._opened + limits.hello_timeout - now if not self.session.hello_done else None
        )
        if hello_left is not None and hello_left <= 0:
            self.cairn.activity.count("refused_hello")
            raise _Close
        if self._buffer:
            timeout = self._deadline - now
            if timeout <= 0:
                self.cairn.activity.count("bad_frames")
                raise _Close  # a frame started and never finished: a stalled or slow client
            return timeout if hello_left is None else min(timeout, hello_left)
        return limits.idle_timeout if hello_left is None else hello_left

    @staticmethod
    def _looks_like_http(head: bytes) -> bool:
        """A browser or an HTTP client aimed at the port: never served."""
        first = head.split(b"\n", 1)[0]
        return head.startswith(_HTTP_STARTS) or b" HTTP/1." in first or b"\norigin:" in head.lower()

    # -- answering -----------------------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        """Send an answer. A client that does not take it within `frame_timeout` (its socket
        full: it reads none of its answers) is cut, so it holds no slot and cannot stall a stop.
        Pushes wait instead: a subscriber that leaves them unread is unsubscribed (`PushQueue`)."""
        data = jsonrpc.encode(message)
        transport = self.writer.transport
        if not self._send_lock.locked() and not transport.is_closing():
            # Nothing is waiting to be sent before it: write it now. When the socket took all of
            # it there is nothing to wait for (drain() would return at once), so most answers
            # need no timer and no task; otherwise wait below for the client to read the rest.
            self.writer.write(data)
            if not transport.get_write_buffer_size() and not transport.is_closing():
                return
            data = b""
        timeout = self.server.limits.frame_timeout
        try:
            await asyncio.wait_for(self._send_line(data), timeout)
        except TimeoutError:
            self.cairn.activity.count("stalled_readers")
            log.info("closed a connection that took none of its answers for %.0f s", timeout)
            self.abort()
            raise ConnectionResetError("the client is not reading its answers") from None

    async def _send_quietly(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self._send(message)

    async def _send_line(self, data: bytes) -> None:
        async with self._send_lock:
            if self.writer.transport.is_closing():  # gone: what is still queued is dropped
                raise ConnectionResetError("the connection is closed")
            self.writer.write(data)
            await self.writer.drain()

    async def _wait_or_refuse(self, frame: bytes) -> bool:
        """With max_in_flight requests running: a notification (it cannot be told "later")
        waits for one to end - True, run it; a request is refused with `rate_limited`."""
        try:
            req_id, _, _, notification = parse_frame(frame)
        except RpcError as e:
            req_id, notification = e.req_id, e.notification
        if notification:
            await asyncio.wait(set(self._tasks), return_when=asyncio.FIRST_COMPLETED)
            return True
        caller = self.session.caller
        agent = caller.agent if caller else None
        # A request refused for the rate is a request all the same (docs/health.md: every
        # request after the hello counts; until 2026-12-01 only those that ran did).
        self.cairn.activity.request(
            agent,
            verified=caller.verified if caller else False,
            at_ms=self.cairn.clock.now_ms(),
            write=False,
            search=False,
        )
        self.cairn.activity.refusal(agent, "rate_limited")
        await self._send(
            response_error(
                req_id,
                ErrorCode.RATE_LIMITED,
                f"more than {self.server.limits.max_in_flight} requests in flight on this "
                "connection; wait for answers before sending more",
            )
        )
        return False

    async def _before_hello(self, frame: bytes) -> None:
        try:
            req_id, method, params, notification = parse_frame(frame)
        except RpcError as e:
            self.cairn.activity.count("bad_frames")
            await self._send(response_error(e.req_id, e.code, e.message))
            raise _Close from None
        if method != "hello":
            self.cairn.activity.count("refused_hello")
            self.cairn.activity.refusal(None, ErrorCode.UNAUTHENTICATED.label)
            if not notification:
                await self._send(
                    response_error(
                        req_id, ErrorCode.UNAUTHENTICATED, "the first request must be hello"
                    )
                )
            raise _Close
        # Run as a request in flight, so a stop that begins meanwhile waits for its answer as
        # for any other (until 2026-11-30 the connection was cut with the hello unanswered).
        task = asyncio.create_task(self._hello(req_id, params, notification))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        await task

    async def _hello(self, req_id: Any, params: dict[str, Any], notification: bool) -> None:
        if self.session.transport != "unix":
            if not self.server.tcp_admits():
                self.cairn.activity.count("refused_too_many")
                if not notification:
                    await self._send(
                        response_error(req_id, ErrorCode.RATE_LIMITED, "too many connections")
                    )
                raise _Close from None
            self.admitting = True
        try:
            result = await self.server.run_in_pool(
                functools.partial(
                    protocol_hello.hello,
                    self.cairn,
                    self.session,
                    params,
                    human_allowed=self.server.human_allowed,
                )
            )
        except CairnError as e:
            self.cairn.activity.count("refused_hello")
            dispatch.count_hello_refusal(self.cairn, e, params)
            if not notification:
                await self._send(response_error(req_id, e.code, e.message, e.data))
            raise _Close from None
        if not notification:
            await self._send({"jsonrpc": "2.0", "id": req_id, "result": result})

    async def _handle(self, frame: bytes) -> None:
        try:
            req_id, method, params, notification = parse_frame(frame)
        except RpcError as e:
            self.cairn.activity.count("bad_frames")
            if not e.notification:
                await self._send_quietly(response_error(e.req_id, e.code, e.message))
            return
        try:
            known = protocol.METHODS.get(method)
            result = await self.server.run_in_pool(
                functools.partial(dispatch.call, self.cairn, self.session, method, params),
                search=known is not None and known.search,
            )
        except CairnError as e:
            dispatch.count_refusal(self.cairn, self.session, e)
            if not notification:
                await self._send_quietly(response_error(req_id, e.code, e.message, e.data))
            return
        except Exception:
            log.exception("internal error while serving %s", method)  # never the parameters
            if not notification:
                await self._send_quietly(
                    response_error(
                        req_id, ErrorCode.INTERNAL_ERROR, "internal error (see the Cairn log)"
                    )
                )
            return
        if not notification:
            await self._send_quietly({"jsonrpc": "2.0", "id": req_id, "result": result})


__all__ = ["Connection"]
