"""Forgetting a memory for good (its content scrubbed, a tombstone left), purging expired ones, and
freeing what a forgotten or purged memory left hidden in a store from before they freed it
themselves."""

from __future__ import annotations

from dataclasses import replace

from core import audit, tombstones
from core.clock import Clock
from core.contradictions import Contradictions
from core.errors import NotFound
from core.governance import Gate
from core.horizon import visible
from core.model import Caller, Memory, Status, Surface, Tombstone, WriteResult
from core.ownership import owner_of, owns, refuse_notes_edit
from core.proposals import Proposals, pending
from core.records import fetch_memories, fetch_memory, insert_revision, replace_memory
from core.revisions import Revisions
from core.settings import Settings
from core.store import Store
from core.suggestions import Op, Reason, Suggestion, new_suggestion_id
from core.supersession import Supersession
from core.validation import content_hash
from core.writer import WriteTx


class Forgetting:
    """Forgetting and purging, for `MemoryService` and the janitor."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        *,
        gate: Gate,
        proposals: Proposals,
        revisions: Revisions,
        supersession: Supersession,
        contradictions: Contradictions,
    ) -> None:
        self._store = store
        self._clock = clock
        self._gate = gate
        self._proposals = proposals
        self._revisions = revisions
        self._supersession = supersession
        self._contradictions = contradictions
        self._retention_ms = int(settings.number("lifecycle.expired_retention_days") * 86_400_000)
        self._idem_retention_ms = int(settings.number("idempotency.retention_hours") * 3_600_000)

    def forget(
        self, caller: Caller, memory_id: str, reason: str | None = None
    ) -> Tombstone | WriteResult:
        """Forget a memory for good: its content is scrubbed from every revision, the index, audit
        previews and any queued proposal; a tombstone (id, content hash, who, when, why) stays so
        neither a dedupe upsert nor an import brings it back. Forgetting twice is a no-op. An
        agent forgetting what is not its own gets a pending proposal instead (a WriteResult);
        while capture is paused, a refusal."""
        refusal = self._gate.paused(caller) or self._gate.secret_in({"reason": reason})
        if refusal is not None:
            return refusal.refused()
        return self._store.writer.run(lambda tx: self.forget_in(tx, caller, memory_id, reason))

    def forget_in(
        self, tx: WriteTx, caller: Caller, memory_id: str, reason: str | None
    ) -> Tombstone | WriteResult:
        """`forget` inside a write job."""
        now = self._clock.now_ms()
        conn = tx.conn
        memory = fetch_memory(conn, memory_id, now)
        if memory is None or not visible(caller, memory):
            raise NotFound(f"memory {memory_id} not found", data={"id": memory_id})
        if memory.status is not Status.FORGOTTEN:
            if not caller.is_human:  # a person may forget a note's memory (the file stays)
                refuse_notes_edit(caller, memory, self._revisions.notes_state)
            reasons: tuple[Reason, ...] = ()
            if caller.surface is Surface.AGENT:
                if not owns(caller, memory):
                    reasons = (Reason("not_owner", owner_of(memory)),)
                elif mass := tombstones.mass_forget(conn, caller.actor, memory, now):
                    reasons = (Reason("mass_forget", mass),)
            if reasons:
                suggestion = Suggestion(
                    id=new_suggestion_id(now),
                    op=Op.FORGET,
                    agent=caller.actor,
                    verified=caller.verified,
                    target_id=memory.id,
                    base_revision=memory.revision,
                    reasons=reasons,
                    note=reason,
                    first_seen=now,
                    last_seen=now,
                )
                return pending(self._proposals, tx, caller, suggestion)
            self._scrub(tx, caller, memory, reason, now)
        tomb = tombstones.fetch(conn, memory_id)
        assert tomb is not None
        return tomb

    def _scrub(
        self, tx: WriteTx, caller: Caller, memory: Memory, reason: str | None, now: int
    ) -> None:
        conn = tx.conn
        conn.execute(
            "UPDATE revision SET content = '', summary = NULL, keywords = NULL, tags = '[]' "
            "WHERE memory_id = ?",
            (memory.id,),
        )
        gone = replace(
            memory,
            content="",
            summary=None,
            keywords=None,
            tags=(),
            status=Status.FORGOTTEN,
            revision=memory.revision + 1,
            updated_at=now,
        )
        replace_memory(conn, gone, content_hash=None)
        insert_revision(conn, gone, actor=caller.actor, action="forget", reason=None, at=now)
        self._contradictions.close_contradictions(tx, caller, memory.id, "forgotten", now)
        self._supersession.release_superseded(
            tx, caller, memory, f"{memory.id} was forgotten", going={memory.id}, now=now
        )
        audit.scrub_previews(tx, memory.id)
        conn.execute("UPDATE feedback SET note = NULL WHERE memory_id = ?", (memory.id,))
        tombstones.bury(
            conn, memory, content_hash(memory.content), by=caller.actor, at=now, reason=reason
        )
        for observer in self._revisions.observers:
            observer.memories_removed(tx, [memory.id], forgotten=True)
        audit.record(
            tx,
            caller,
            "forget",
            memory=gone,
            detail={"reason": reason} if reason else None,
            at=now,
        )

    def release_stranded(self, caller: Caller | None = None) -> int:
        """Free what hides a memory for nothing, as forget and purge do themselves: a memory
        superseded by one that is gone or forgotten (a store from before 2026-11-30 may hold
        such), or by one that has expired (it waits for its purge, hidden), moves on to the
        live end of the chain of replacements, or to a live copy of its text, or else comes
        back; and a contradiction with a forgotten or missing side closes. An expired memory is
        left to its purge. Returns how many memories and contradictions it freed; 0 once done."""
        who = caller or Caller.system()

        def job(tx: WriteTx) -> int:
            now = self._clock.now_ms()
            conn = tx.conn
            # Each with its replacement's status, all the reason needs (NULL: no such row).
            stranded = conn.execute(
                "SELECT m.id, m.superseded_by, r.status FROM memory m "
                "LEFT JOIN memory r ON r.id = m.superseded_by WHERE m.status = 'superseded' "
                "AND (m.expires_at IS NULL OR m.expires_at > ?) "
                "AND (r.id IS NULL OR r.status = 'forgotten' OR r.expires_at <= ?)",
                (now, now),
            ).fetchall()
            freed: list[tuple[str, str]] = []
            for mid, by, status in stranded:
                if status is not None and status != Status.FORGOTTEN.value:
                    freed.append((str(mid), f"its replacement {by} expired"))
                else:
                    freed.append((str(mid), f"its replacement {by} is gone (forgotten or purged)"))
            self._supersession.release_in(tx, who, freed)
            # Each side with whether its row is still there (forgotten) or not (purged).
            sides = conn.execute(
                "SELECT side, EXISTS (SELECT 1 FROM memory m WHERE m.id = side) FROM (SELECT "
                "from_id AS side FROM relation WHERE kind = 'contradicts' AND open = 1 UNION "
                "SELECT to_id FROM relation WHERE kind = 'contradicts' AND open = 1) WHERE NOT "
                "EXISTS (SELECT 1 FROM memory m WHERE m.id = side AND m.status != 'forgotten')"
            ).fetchall()
            closed = 0
            for side, held in sides:
                how = "forgotten" if held else "purged"
                closed += self._contradictions.close_contradictions(tx, who, str(side), how, now)
            return len(stranded) + closed

        return self._store.writer.run(job)

    def purge_expired(self, caller: Caller | None = None) -> int:
        """Delete memories whose expiry passed more than the retention window ago (each leaves a
        tombstone), and idempotency records older than their retention."""
        who = caller or Caller.system()

        def job(tx: WriteTx) -> int:
            now = self._clock.now_ms()
            conn = tx.conn
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM memory WHERE expires_at IS NOT NULL AND expires_at <= ? "
                    "AND status != 'forgotten'",
                    (now - self._retention_ms,),
                )
            ]
            purged = set(ids)
            if ids:
                for observer in self._revisions.observers:
                    observer.memories_removed(tx, ids, forgotten=False)
            found = fetch_memories(conn, ids, now)  # in `in_lists` chunks, not one by one
            memories = [found[mid] for mid in ids]
            # Every release before any delete: a chain of replacements is followed through the
            # rows of those going in this purge, whichever the loop meets first.
            for memory in memories:
                tombstones.bury(
                    conn,
                    memory,
                    content_hash(memory.content),
                    by=tombstones.EXPIRED_BY,
                    at=now,
                    reason=tombstones.EXPIRED_REASON,
                )
                audit.scrub_previews(tx, memory.id)
                self._contradictions.close_contradictions(tx, who, memory.id, "purged", now)
                self._supersession.release_superseded(
                    tx, who, memory, f"{memory.id} expired and was purged", going=purged, now=now
                )
            for memory in memories:
                mid = memory.id
                conn.execute("DELETE FROM relation WHERE from_id = ? OR to_id = ?", (mid, mid))
                conn.execute("DELETE FROM memory WHERE id = ?", (mid,))
                audit.record(
                    tx,
                    who,
                    "purge",
                    memory=memory,
                    detail={"reason": "expired"},
                    at=now,
                )
            conn.execute(
                "DELETE FROM idempotency WHERE created_at < ?", (now - self._idem_retention_ms,)
            )
            return len(ids)

        return self._store.writer.run(job)
