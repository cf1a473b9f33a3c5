"""Changing a stored memory inside a write job: the memory a caller may change, its next revision,
and what is kept in step with it (the observers, the audit log)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from core import audit
from core.errors import ForgottenMemory, NotFound
from core.horizon import visible
from core.model import Caller, Memory, Status
from core.ownership import NotesState
from core.records import fetch_memory, insert_revision, replace_memory
from core.validation import content_hash
from core.writer import WriteTx


class MemoryObserver(Protocol):
    """Something kept in step with memories inside the same write transaction (the search index,
    the review queue). Called by the service after each row change, before commit."""

    def memories_written(
        self, tx: WriteTx, memories: Sequence[Memory], *, fresh: bool = False
    ) -> None:
        """`fresh`: the memories were just inserted (no earlier row to replace)."""
        ...

    def memories_removed(
        self, tx: WriteTx, memory_ids: Sequence[str], *, forgotten: bool
    ) -> None: ...


class Revisions:
    """The steps every change of a stored memory shares: loading the memory a caller is about to
    change, and storing it as its next revision with its observers and audit event. It also says
    whether the notes folder follows a file now (`notes_state`, set at composition time)."""

    def __init__(self, observers: list[MemoryObserver]) -> None:
        self.observers = observers
        self.notes_state: NotesState | None = None

    def load_for_change(self, tx: WriteTx, caller: Caller, memory_id: str, now: int) -> Memory:
        """The memory `caller` is about to change (it must be in the caller's horizon)."""
        memory = fetch_memory(tx.conn, memory_id, now)
        if memory is None or not visible(caller, memory):
            raise NotFound(f"memory {memory_id} not found", data={"id": memory_id})
        if memory.status is Status.FORGOTTEN:
            if caller.is_human:
                raise ForgottenMemory(
                    f"memory {memory_id} was forgotten; it cannot be changed",
                    data={"id": memory_id},
                )
            raise NotFound(f"memory {memory_id} not found", data={"id": memory_id})
        return memory

    def save_revision_in(
        self,
        tx: WriteTx,
        caller: Caller,
        memory: Memory,
        action: str,
        reason: str | None,
        *,
        now: int,
    ) -> None:
        """Inside a write job: store `memory` as its next revision - the row, the revision, the
        observers and the audit event (every change of a memory's fields, and lifecycle changes
        that are not an update's: an expiry set by the janitor)."""
        conn = tx.conn
        replace_memory(conn, memory, content_hash=content_hash(memory.content))
        insert_revision(conn, memory, actor=caller.actor, action=action, reason=reason, at=now)
        for observer in self.observers:
            observer.memories_written(tx, [memory])
        audit.record(
            tx,
            caller,
            action,
            memory=memory,
            content_preview=memory.content,
            detail={"reason": reason} if reason else None,
            at=now,
        )
