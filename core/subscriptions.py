"""The change feed on the socket: which changes a subscribed connection may see, the bus's
change sets fanned out to subscribers, and each connection's queue of pushes not yet written.

Pushes are not requests: they never count against max_in_flight, and a subscriber that leaves
them unread is unsubscribed rather than cut (`PushQueue`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from core import audit_actions, jsonrpc
from core.agents import AgentStatus
from core.changes import Change, ChangeSet
from core.model import Caller, Scope, Surface

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterable

    from core import protocol
    from core.activity import Activity
    from core.app import Cairn
    from core.connection import Connection


def visible_change(caller: Caller, change: Change) -> bool:
    """Whether a pushed change may go to this connection (the same horizon as every read)."""
    if caller.is_human:
        return True
    if not audit_actions.agent_may_see(change.action):  # the same rule as changes.since
        return False
    if change.memory_id is None or change.scope is None:
        return False
    if change.scope in (Scope.GLOBAL.value, Scope.USER.value):
        return True
    if change.scope == Scope.PROJECT.value:
        return caller.workspace_id is not None and change.workspace_id == caller.workspace_id
    return (
        caller.session_id is not None
        and change.session_id == caller.session_id
        and change.workspace_id == caller.workspace_id
    )


class PushQueue:
    """One connection's `changes` notifications queued and not yet written, and their bytes."""

    def __init__(
        self,
        session: protocol.Session,
        send_line: Callable[[bytes], Coroutine[Any, Any, None]],
        activity: Activity,
        max_backlog_bytes: int,
    ) -> None:
        self._session = session
        self._send_line = send_line
        self._activity = activity
        self._limit = max_backlog_bytes
        self.tasks: set[asyncio.Task[None]] = set()  # pushed changes not yet written
        self._backlog = 0  # their bytes
        self._pushed_seq = 0  # the last store change queued for this subscriber

    def push(self, visible: list[dict[str, Any]], changes: ChangeSet) -> None:
        """Queue a `changes` notification. Pushes are not requests: they never count against
        max_in_flight. A subscriber that leaves more than max_push_backlog_bytes of them unread
        is unsubscribed, and its last push says so and where to catch up from."""
        data = jsonrpc.encode(
            {
                "jsonrpc": "2.0",
                "method": "changes",
                "params": {"changes": visible, "last_seq": changes.last_seq},
            }
        )
        limit = self._limit
        if self._backlog and self._backlog + len(data) > limit:
            self._activity.count("push_overflows")
            self.stop(
                changes,
                f"more than {limit} bytes of pushed changes were left unread; nothing more is "
                "pushed on this connection. Catch up with changes.since from last_seq, then "
                "changes.subscribe again",
            )
            return
        self._pushed_seq = max(self._pushed_seq, changes.last_seq)
        self._queue(data)

    def stop(self, changes: ChangeSet, reason: str) -> None:
        """Unsubscribe, and say so in a last push naming where to catch up from: every store
        change before `changes` was queued (changes outside the store - seq 0: health,
        settings - are not in the feed to catch up with)."""
        self._session.subscribed = False
        first = min((c.seq for c in changes.changes if c.seq), default=None)
        resume = first - 1 if first is not None else self._pushed_seq
        params = {"changes": [], "last_seq": resume, "unsubscribed": True, "reason": reason}
        self._queue(jsonrpc.encode({"jsonrpc": "2.0", "method": "changes", "params": params}))

    def _queue(self, data: bytes) -> None:
        self._backlog += len(data)
        task = asyncio.create_task(self._write(data))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _write(self, data: bytes) -> None:
        try:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await self._send_line(data)
        finally:
            self._backlog -= len(data)


class ChangeFeed:
    """The change bus's change sets, pushed to every subscribed connection on the event loop:
    each gets what its horizon lets it see, and an agent paused or revoked since its hello is
    unsubscribed instead."""

    def __init__(
        self, cairn: Cairn, loop: asyncio.AbstractEventLoop, connections: Iterable[Connection]
    ) -> None:
        self.cairn = cairn
        self._loop = loop
        self._connections = connections
        self._unsubscribe = cairn.bus.subscribe(self._changes_from_any_thread)

    def close(self) -> None:
        """Take no more change sets from the bus."""
        self._unsubscribe()

    def _changes_from_any_thread(self, changes: ChangeSet) -> None:
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._push, changes)

    def _push(self, changes: ChangeSet) -> None:
        statuses: dict[tuple[str, str | None], AgentStatus | None] = {}
        for conn in list(self._connections):
            caller = conn.session.caller
            if not conn.session.subscribed or caller is None:
                continue
            after = conn.session.subscribed_after  # a push still queued then is covered
            visible = [
                c.to_dict() for c in changes.changes if c.seq > after and visible_change(caller, c)
            ]
            if not visible:
                continue
            if caller.surface is Surface.AGENT and caller.agent is not None:
                standing = (caller.agent, conn.session.token_hash)
                if standing not in statuses:
                    statuses[standing] = self.cairn.agents.status(*standing)
                status = statuses[standing]
                if status is not AgentStatus.ACTIVE:  # paused or revoked since its hello
                    conn.pushes.stop(changes, self._why_not_pushed(caller.agent, status))
                    continue
            conn.pushes.push(visible, changes)

    def _why_not_pushed(self, agent: str, status: AgentStatus | None) -> str:
        then = "catch up with changes.since from last_seq, then changes.subscribe again"
        if status is AgentStatus.REVOKED and self.cairn.agents.status(agent) is not status:
            # its token was replaced (revoked, then added again): the agent itself works
            return (
                f"agent {agent!r} was given a new token after this connection was opened: "
                "nothing more is pushed on this connection. Connect again with the new token, "
                + then
            )
        what = status.value if status is not None else "removed"
        return (
            f"agent {agent!r} is {what}: nothing more is pushed on this connection. Once it is "
            f"active again, {then}"
        )


__all__ = ["ChangeFeed", "PushQueue", "visible_change"]
