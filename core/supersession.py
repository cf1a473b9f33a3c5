"""Superseding a memory by another, and releasing what a memory that goes (forgotten, purged or
expired) leaves superseded: on to the live end of its chain of replacements, to a live copy of
its text, or back to the status it had."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace

from core import relations
from core.clock import Clock
from core.dedupe import live_copy
from core.errors import Conflict, InvalidInput
from core.governance import Gate, Outcome, Verdict, flagged
from core.memory_writes import MemoryWrites
from core.model import Caller, Memory, Status, Surface, WriteResult, WriteStatus
from core.ownership import owner_of, owns, refuse_notes_edit
from core.proposals import Proposals, pending, suggestion_for
from core.records import fetch_memory
from core.requests import WriteRequest
from core.revisions import Revisions
from core.store import Store
from core.suggestions import Op, Reason
from core.writer import WriteTx


@dataclass(frozen=True)
class SupersedeResult:
    old: Memory
    new: Memory


def live_heir(conn: sqlite3.Connection, start: str | None, going: set[str], now: int) -> str | None:
    """The first memory along the chain of replacements from `start` (itself included) that is
    still live: there, not among `going`, not forgotten, not expired. None when the chain ends
    without one."""
    seen: set[str] = set()
    mid = start
    while mid is not None and mid not in seen:
        seen.add(mid)
        memory = fetch_memory(conn, mid, now)
        if memory is None:
            return None
        if mid not in going and memory.status is not Status.FORGOTTEN and not memory.expired:
            return mid
        mid = memory.superseded_by
    return None


def refuse_expired_replacement(new: Memory) -> None:
    """Raise when `new` has expired: what it replaced would be hidden behind a hidden memory.

    Raises:
        Conflict: naming the memory, `data.field` `by`.
    """
    if new.expired:
        raise Conflict(
            f"memory {new.id} has expired (it waits for its purge); only a live memory can "
            "supersede another",
            data={"id": new.id, "status": new.status.value, "expired": True, "field": "by"},
        )


def status_before_superseded(conn: sqlite3.Connection, memory_id: str) -> Status:
    """The status a memory last had before it was superseded: active or archived."""
    row = conn.execute(
        "SELECT status FROM revision WHERE memory_id = ? AND status IN ('active', 'archived') "
        "ORDER BY revision DESC LIMIT 1",
        (memory_id,),
    ).fetchone()
    return Status(row[0]) if row else Status.ACTIVE


class Supersession:
    """Supersession, for `MemoryService` and the parts that release what forgetting and purging
    leave behind."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        gate: Gate,
        proposals: Proposals,
        writes: MemoryWrites,
        revisions: Revisions,
    ) -> None:
        self._store = store
        self._clock = clock
        self._gate = gate
        self._proposals = proposals
        self._writes = writes
        self._revisions = revisions

    def supersede(
        self,
        caller: Caller,
        old_id: str,
        *,
        by_id: str | None = None,
        replacement: WriteRequest | None = None,
        reason: str | None = None,
    ) -> SupersedeResult | WriteResult:
        """Mark `old_id` superseded by an existing memory (`by_id`) or by a new one written now
        (`replacement`), in one transaction. Both memories are kept and linked both ways. An
        agent superseding what is not its own, or with a replacement its policy holds, gets a
        pending proposal (a WriteResult); a refused replacement, a refusal.

        Raises:
            InvalidInput: neither or both of `by_id` and `replacement`, or a memory by itself.
            NotFound: either memory is not in the caller's horizon.
            Conflict: the old memory is not active or archived; the new one is not active.
        """
        if (by_id is None) == (replacement is None):
            raise InvalidInput("give exactly one of 'by' (an existing memory id) or a new memory")
        prepared = self._writes.prepare(caller, replacement) if replacement is not None else None
        if prepared is not None and replacement is not None:
            verdict = self._writes.check_new(caller, prepared, replacement, reason)
        else:
            verdict = (
                self._gate.paused(caller)
                or self._gate.secret_in({"reason": reason})
                or Verdict(Outcome.STORE)
            )
        if verdict.outcome is Outcome.REFUSE:
            return verdict.refused()
        return self._store.writer.run(
            lambda tx: self.supersede_in(
                tx,
                caller,
                old_id,
                by_id=by_id,
                replacement=replacement,
                prepared=prepared,
                verdict=verdict,
                reason=reason,
            )
        )

    def supersede_in(
        self,
        tx: WriteTx,
        caller: Caller,
        old_id: str,
        *,
        by_id: str | None,
        replacement: WriteRequest | None,
        prepared: Memory | None,
        verdict: Verdict | None,
        reason: str | None,
    ) -> SupersedeResult | WriteResult:
        """`supersede` inside a write job; `verdict` None: a person adopted it (no gate)."""
        now = self._clock.now_ms()
        old = self._revisions.load_for_change(tx, caller, old_id, now)
        refuse_notes_edit(caller, old, self._revisions.notes_state)
        if old.status not in (Status.ACTIVE, Status.ARCHIVED):
            raise Conflict(
                f"memory {old_id} is already {old.status.value}",
                data={"id": old_id, "status": old.status.value},
            )
        existing = None
        if by_id is not None:
            existing = self._revisions.load_for_change(tx, caller, by_id, now)
            if existing.id == old.id:
                raise InvalidInput("a memory cannot supersede itself")
            refuse_expired_replacement(existing)
        if verdict is not None:
            reasons = verdict.reasons if verdict.outcome is Outcome.QUEUE else ()
            if caller.surface is Surface.AGENT and not owns(caller, old):
                reasons = (Reason("not_owner", owner_of(old)), *reasons)
            if reasons:
                proposed = prepared or existing
                assert proposed is not None
                suggestion = suggestion_for(
                    caller,
                    proposed,
                    op=Op.SUPERSEDE,
                    target=old,
                    reasons=reasons,
                    flags=verdict.flags,
                    now=now,
                    replacement_id=existing.id if existing is not None else None,
                    note=reason,
                )
                return pending(self._proposals, tx, caller, suggestion)
        if prepared is not None and replacement is not None:
            outcome = self._writes.store_prepared(
                tx, caller, replacement, flagged(prepared, verdict) if verdict else prepared
            )
            if outcome.status is not WriteStatus.STORED or outcome.id is None:
                raise Conflict(outcome.reason or "the replacement memory was not stored")
            new = fetch_memory(tx.conn, outcome.id, now)
            assert new is not None
        else:
            assert existing is not None
            new = existing
        if new.id == old.id:
            raise InvalidInput("a memory cannot supersede itself")
        if new.status is not Status.ACTIVE:
            raise Conflict(
                f"memory {new.id} is {new.status.value}; only an active memory can supersede",
                data={"id": new.id},
            )
        refuse_expired_replacement(new)
        updated = self.mark_superseded(tx, caller, old, by=new.id, note=reason, now=now)
        return SupersedeResult(old=updated, new=new)

    def mark_superseded(
        self, tx: WriteTx, caller: Caller, old: Memory, *, by: str, note: str | None, now: int
    ) -> Memory:
        """`old` becomes superseded by the memory `by`: a new revision, and the relation."""
        updated = replace(
            old,
            status=Status.SUPERSEDED,
            superseded_by=by,
            revision=old.revision + 1,
            updated_at=now,
        )
        self._revisions.save_revision_in(tx, caller, updated, "supersede", note, now=now)
        relations.link_supersedes(tx.conn, by, old.id, note=note, at=now, by=caller.actor)
        return updated

    def release_superseded(
        self,
        tx: WriteTx,
        caller: Caller,
        gone: Memory,
        why: str,
        *,
        going: set[str],
        now: int,
    ) -> None:
        """`gone` is being forgotten or purged (`going`: every memory that is): what it superseded
        is not left hidden behind an id that means nothing. Each such memory is superseded by
        what replaced `gone`, if anything live did, or by a live memory with its very text;
        otherwise it gets back the status it had before it was superseded (a revision
        `unsupersede`). Memories that are going too are left alone; the rows of all of `going`
        are still there, so the chain is followed past those going with `gone` (and any that
        expired) to its live end."""
        conn = tx.conn
        heir = None
        if gone.status is Status.SUPERSEDED:
            heir = live_heir(conn, gone.superseded_by, going | {gone.id}, now)
        for mid in relations.superseded_by(conn, gone.id):
            if mid in going:
                continue
            old = fetch_memory(conn, mid, now)
            assert old is not None
            reason = f"its replacement {why}"
            self._release_one(
                tx, caller, old, gone.id, heir=heir, reason=reason, going=going, now=now
            )

    def _release_one(
        self,
        tx: WriteTx,
        caller: Caller,
        old: Memory,
        gone_id: str | None,
        *,
        heir: str | None,
        reason: str,
        going: set[str],
        now: int,
    ) -> None:
        """`old` was superseded by `gone_id`, which is no longer live: the link goes, and `old` is
        superseded by `heir` (the live end of the chain of replacements), or by a live memory
        with its very text; otherwise it gets back the status it had before (`unsupersede`)."""
        conn = tx.conn
        if gone_id is not None:
            relations.unlink_supersedes(conn, gone_id, old.id)
        by = heir if heir is not None and heir != old.id else live_copy(conn, old, going, now)
        if by is not None:
            self.mark_superseded(tx, caller, old, by=by, note=reason, now=now)
            return
        restored = replace(
            old,
            status=status_before_superseded(conn, old.id),
            superseded_by=None,
            revision=old.revision + 1,
            updated_at=now,
        )
        self._revisions.save_revision_in(tx, caller, restored, "unsupersede", reason, now=now)

    def release_in(self, tx: WriteTx, caller: Caller, freed: Sequence[tuple[str, str]]) -> None:
        """Inside a write job: each memory of `freed` (id, why) is superseded by one that is not
        live - gone, forgotten or expired - and is released as a forget of it would release it:
        on to the live end of the chain of replacements, or to a live copy of its text, or back
        to the status it had (the reason of its new revision is `why`)."""
        now = self._clock.now_ms()
        for mid, why in freed:
            old = fetch_memory(tx.conn, mid, now)
            assert old is not None, mid
            assert old.status is Status.SUPERSEDED, mid
            heir = live_heir(tx.conn, old.superseded_by, set(), now)
            self._release_one(
                tx, caller, old, old.superseded_by, heir=heir, reason=why, going=set(), now=now
            )
