"""`cairn mcp`'s standard input and output: the end of input is held back until every request
read from it has been answered, written and flushed.

The MCP SDK's stdio server (mcp 2.3.0) ends the session at the end of its input, and a
`tools/call` still in flight lost its answer - though what it did may have been done. Scripts,
and some clients, close the input right after their last request. So the bridge hands the SDK
an input that says "end" only once the requests read so far are answered: it counts the JSON-RPC
ids of the requests it reads (as the SDK reads them) against those of the answers it writes.
The wait is bounded: after `timeout` the calls still waiting on Cairn are cut off (they are
answered with an error), and when the client stops reading the output (it went away) there is
nobody to answer and the bridge ends at once.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import select
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from io import TextIOWrapper
from typing import Any, cast

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.dispatcher import as_request_id, coerce_request_id
from mcp.types import JSONRPCNotification, JSONRPCRequest, RequestId, jsonrpc_message_adapter

log = logging.getLogger("cairn.mcp")

GRACE = 5.0  # after the calls still waiting are cut off: time for their error answers to go out
_WATCH_S = 0.1  # how often a bridge whose input ended looks whether its output is still read


class Exchange:
    """The requests read whose answers are not written yet, by JSON-RPC id as the SDK matches
    them ("7" and 7 are one). Used on the event loop's thread only."""

    def __init__(self) -> None:
        self._waiting: collections.Counter[RequestId] = collections.Counter()
        self._changed = anyio.Event()

    @property
    def waiting(self) -> int:
        return self._waiting.total()

    def read(self, line: str) -> None:
        """A line of input, before the SDK sees it. A line the SDK does not take for a JSON-RPC
        message gets no answer from it, and is not waited for."""
        try:
            message = jsonrpc_message_adapter.validate_json(line, by_name=False)
        except (ValueError, RecursionError):
            return
        if isinstance(message, JSONRPCRequest):
            self._waiting[coerce_request_id(message.id)] += 1
        elif isinstance(message, JSONRPCNotification) and message.method == (
            "notifications/cancelled"
        ):
            # The SDK never answers a request its client cancelled.
            cancelled = as_request_id((message.params or {}).get("requestId"))
            if cancelled is not None:
                self._answered(coerce_request_id(cancelled))

    def wrote(self, line: str) -> None:
        """A message the SDK wrote, once it is out: an answer settles its request."""
        message = json.loads(line)
        if not isinstance(message, dict) or "method" in message:
            return  # a request or notification of the bridge's own
        if "result" in message or "error" in message:
            answered = as_request_id(message.get("id"))
            if answered is not None:
                self._answered(coerce_request_id(answered))

    def _answered(self, request_id: RequestId) -> None:
        if self._waiting[request_id] > 1:
            self._waiting[request_id] -= 1
        else:
            self._waiting.pop(request_id, None)
        self._changed.set()
        self._changed = anyio.Event()

    async def settled(self) -> None:
        """Returns when no request read waits for its answer."""
        while self._waiting:
            await self._changed.wait()


class _Input:
    """The client's messages, a line each, as the SDK reads them (`async for`); the end comes
    only after `ended` returns."""

    def __init__(self, fd: int, exchange: Exchange, ended: Callable[[], Awaitable[None]]) -> None:
        # closefd=False: a worker thread may still be blocked reading it when the bridge ends
        self._file = TextIOWrapper(
            os.fdopen(fd, "rb", closefd=False), encoding="utf-8", errors="replace"
        )
        self._exchange = exchange
        self._ended = ended

    async def __aiter__(self) -> AsyncIterator[str]:
        while line := await anyio.to_thread.run_sync(self._file.readline):
            self._exchange.read(line)  # counted before the SDK can answer it
            yield line
        await self._ended()


class _Output:
    """The bridge's answers. Each message is written whole and unbuffered, then counted as
    answered; once the client stops reading, the rest is dropped (it can reach nobody)."""

    def __init__(self, fd: int, exchange: Exchange) -> None:
        self._fd = fd
        self._exchange = exchange
        self.gone = False

    def reader_gone(self) -> bool:
        """Whether the client closed its end of the output (a pipe's or a socket's), as a
        client that went away does. Unknown (False) without poll(2), as on Windows: there the
        timeout alone bounds the wait."""
        if not self.gone and hasattr(select, "poll"):
            poller = select.poll()
            poller.register(self._fd, 0)  # POLLERR and POLLHUP are reported unasked
            self.gone = any(e & (select.POLLERR | select.POLLHUP) for _, e in poller.poll(0))
        return self.gone

    async def write(self, text: str) -> None:
        if not self.gone:
            try:
                await anyio.to_thread.run_sync(self._write_all, text.encode("utf-8"))
            except BrokenPipeError:
                log.info("the MCP client stopped reading the bridge's output")
                self.gone = True
                return
        self._exchange.wrote(text)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    async def flush(self) -> None:
        """Each write is out when it returns."""


@contextlib.contextmanager
def _claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private copies of standard input and output for the protocol; meanwhile fd 0 reads the
    null device and fd 1 writes to standard error, so nothing else in the process (or a process
    it starts) reads the client's messages or writes into the answers - as the SDK's own stdio
    server does. The copies stay open: a worker thread may still be blocked on one."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    try:
        yield wire_in, wire_out
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


async def _serve(
    server: MCPServer[Any],
    *,
    timeout: float,
    ended: Callable[[], None],
    cut_off: Callable[[str], None],
) -> None:
    exchange = Exchange()
    with _claimed_stdio() as (wire_in, wire_out):
        output = _Output(wire_out, exchange)

        async def end_of_input() -> None:
            ended()
            if not exchange.waiting:
                return
            log.info("input ended; answering the %d request(s) read", exchange.waiting)
            async with anyio.create_task_group() as tg:

                async def watch() -> None:
                    while not output.reader_gone():
                        await anyio.sleep(_WATCH_S)
                    log.info("the MCP client stopped reading; nobody to answer")
                    cut_off("the MCP client went away")
                    tg.cancel_scope.cancel()

                tg.start_soon(watch)
                with anyio.move_on_after(timeout):
                    await exchange.settled()
                if exchange.waiting:
                    log.warning(
                        "%d request(s) not answered within %g s of the end of input; "
                        "cutting them off",
                        exchange.waiting,
                        timeout,
                    )
                    cut_off(
                        f"the bridge's input ended and Cairn did not answer within {timeout:g} s"
                    )
                    with anyio.move_on_after(GRACE):
                        await exchange.settled()
                tg.cancel_scope.cancel()

        stdin = _Input(wire_in, exchange, end_of_input)
        # WORKAROUND: MCPServer.run("stdio") gives the SDK's stdio server no input or output of
        # ours, and ends the session at the end of input; it is driven here as run_stdio_async
        # does (mcp is pinned), with an input that holds its end back. stdio_server reads the
        # input with `async for` and writes with write and flush, all these two provide.
        lowlevel = server._lowlevel_server
        async with stdio_server(
            cast(anyio.AsyncFile[str], stdin), cast(anyio.AsyncFile[str], output)
        ) as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def serve(
    server: MCPServer[Any],
    *,
    timeout: float,
    ended: Callable[[], None],
    cut_off: Callable[[str], None],
) -> None:
    """Serve `server` on standard input and output until the input ends and every request read
    from it is answered.

    Args:
        timeout: the longest the end of input waits for answers before `cut_off`.
        ended: called when the input ends (no answer from the client can come any more).
        cut_off: called with the reason when the calls still waiting on Cairn are to fail at
            once - `timeout` passed, or the client stopped reading the output.
    """
    anyio.run(lambda: _serve(server, timeout=timeout, ended=ended, cut_off=cut_off))
