"""The memory service: the only door to stored memories for every adapter.

Every method takes the `Caller` (who is asking, as the adapter established it) and plain values,
and returns frozen dataclasses. Writes run as jobs on the single writer; reads run on the calling
thread's read-only connection. Stamps - author tier, agent, workspace, session - come from the
caller, never from parameters.

The service composes its parts and hands each call to the one that holds it: new memories
(core/memory_writes.py), changes of a stored one (core/memory_updates.py), supersession
(core/supersession.py), contradictions (core/contradictions.py), forgetting and purging
(core/forgetting.py), reads (core/memory_reads.py); what every change shares is in
core/revisions.py. Feedback and recall counts are kept here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from core import audit
from core.clock import Clock
from core.contradictions import Contradictions
from core.errors import CairnError, InvalidInput
from core.forgetting import Forgetting
from core.governance import Gate, Redactor, Verdict
from core.memory_reads import ChangeFeed, MemoryReader
from core.memory_updates import MemoryUpdates
from core.memory_writes import MemoryWrites
from core.model import (
    Caller,
    ListFilter,
    Memory,
    MemoryDetail,
    Page,
    Relation,
    Surface,
    Tombstone,
    WriteResult,
)
from core.ownership import NotesState
from core.proposals import Proposals
from core.requests import UpdateRequest, WriteRequest
from core.revisions import MemoryObserver, Revisions
from core.settings import Settings
from core.similarity import NearDuplicates
from core.store import Store
from core.suggestions import Op, Reason, Suggestion, new_suggestion_id
from core.supersession import SupersedeResult, Supersession
from core.usage import UsageRecorder
from core.validation import Limits, check_summary
from core.writer import WriteTx


class MemoryService:
    """Write, update, get, list, supersede, forget, pin and archive memories - every write
    through the governance gate, every read as a model may see it."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        usage: UsageRecorder,
        *,
        gate: Gate,
        proposals: Proposals,
        redactor: Redactor,
        near: NearDuplicates,
        observers: Sequence[MemoryObserver] = (),
    ) -> None:
        self._store = store
        self._clock = clock
        self._usage = usage
        self._limits = Limits(settings)
        self._gate = gate
        self._proposals = proposals
        self.redactor = redactor
        self.reader = MemoryReader(store, clock, redactor)
        self._revisions = Revisions(list(observers))
        self._writes = MemoryWrites(
            store,
            clock,
            self._limits,
            gate=gate,
            proposals=proposals,
            near=near,
            revisions=self._revisions,
        )
        self._updates = MemoryUpdates(
            store, clock, self._limits, gate=gate, proposals=proposals, revisions=self._revisions
        )
        self._supersession = Supersession(
            store,
            clock,
            gate=gate,
            proposals=proposals,
            writes=self._writes,
            revisions=self._revisions,
        )
        self._contradictions = Contradictions(
            store, clock, gate=gate, revisions=self._revisions, supersession=self._supersession
        )
        self._forgetting = Forgetting(
            store,
            settings,
            clock,
            gate=gate,
            proposals=proposals,
            revisions=self._revisions,
            supersession=self._supersession,
            contradictions=self._contradictions,
        )

    @property
    def limits(self) -> Limits:
        return self._limits

    def follow_notes(self, state: NotesState) -> None:
        """At composition time: how to tell whether the notes folder follows a file now, so a
        refused change of a note's memory says what is true (`core/notes.py`)."""
        self._revisions.notes_state = state

    # -- new memories (core/memory_writes.py) ------------------------------------------------

    def prepare(self, caller: Caller, req: WriteRequest) -> Memory:
        return self._writes.prepare(caller, req)

    def write(self, caller: Caller, req: WriteRequest) -> WriteResult:
        return self._writes.write(caller, req)

    def check_new(
        self, caller: Caller, memory: Memory, req: WriteRequest, reason: str | None = None
    ) -> Verdict:
        return self._writes.check_new(caller, memory, req, reason)

    def write_many(
        self,
        caller: Caller,
        reqs: Sequence[WriteRequest],
        *,
        then: Callable[[WriteTx, list[WriteResult | CairnError]], None] | None = None,
    ) -> list[WriteResult | CairnError]:
        return self._writes.write_many(caller, reqs, then=then)

    def store_prepared(
        self,
        tx: WriteTx,
        caller: Caller,
        req: WriteRequest,
        prepared: Memory,
        *,
        verdict: Verdict | None = None,
        similar: tuple[str, ...] = (),
    ) -> WriteResult:
        return self._writes.store_prepared(
            tx, caller, req, prepared, verdict=verdict, similar=similar
        )

    # -- changing a stored memory (core/revisions.py, core/memory_updates.py) ----------------

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
        self._revisions.save_revision_in(tx, caller, memory, action, reason, now=now)

    def update(self, caller: Caller, req: UpdateRequest) -> WriteResult:
        return self._updates.update(caller, req)

    def update_in(
        self,
        tx: WriteTx,
        caller: Caller,
        req: UpdateRequest,
        *,
        adopted: tuple[str, bool, bool] | None = None,
    ) -> WriteResult:
        return self._updates.update_in(tx, caller, req, adopted=adopted)

    def rebind_in(
        self, tx: WriteTx, caller: Caller, memory: Memory, workspace_id: str, reason: str
    ) -> Memory:
        return self._updates.rebind_in(tx, caller, memory, workspace_id, reason)

    def set_pinned(self, caller: Caller, memory_id: str, pinned: bool) -> Memory:
        return self._updates.set_pinned(caller, memory_id, pinned)

    def set_archived(self, caller: Caller, memory_id: str, archived: bool) -> Memory:
        return self._updates.set_archived(caller, memory_id, archived)

    def set_state_in(
        self,
        tx: WriteTx,
        caller: Caller,
        memory_id: str,
        action: str,
        *,
        pinned: bool | None = None,
        archived: bool | None = None,
    ) -> Memory:
        return self._updates.set_state_in(
            tx, caller, memory_id, action, pinned=pinned, archived=archived
        )

    # -- supersession (core/supersession.py) -------------------------------------------------

    def supersede(
        self,
        caller: Caller,
        old_id: str,
        *,
        by_id: str | None = None,
        replacement: WriteRequest | None = None,
        reason: str | None = None,
    ) -> SupersedeResult | WriteResult:
        return self._supersession.supersede(
            caller, old_id, by_id=by_id, replacement=replacement, reason=reason
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
        return self._supersession.supersede_in(
            tx,
            caller,
            old_id,
            by_id=by_id,
            replacement=replacement,
            prepared=prepared,
            verdict=verdict,
            reason=reason,
        )

    def release_in(self, tx: WriteTx, caller: Caller, freed: Sequence[tuple[str, str]]) -> None:
        self._supersession.release_in(tx, caller, freed)

    # -- forgetting and purging (core/forgetting.py) -----------------------------------------

    def forget(
        self, caller: Caller, memory_id: str, reason: str | None = None
    ) -> Tombstone | WriteResult:
        return self._forgetting.forget(caller, memory_id, reason)

    def forget_in(
        self, tx: WriteTx, caller: Caller, memory_id: str, reason: str | None
    ) -> Tombstone | WriteResult:
        return self._forgetting.forget_in(tx, caller, memory_id, reason)

    def release_stranded(self, caller: Caller | None = None) -> int:
        return self._forgetting.release_stranded(caller)

    def purge_expired(self, caller: Caller | None = None) -> int:
        return self._forgetting.purge_expired(caller)

    # -- contradictions (core/contradictions.py) ---------------------------------------------

    def mark_contradiction(
        self, caller: Caller, a_id: str, b_id: str, note: str | None = None
    ) -> Relation:
        return self._contradictions.mark_contradiction(caller, a_id, b_id, note)

    def resolve_contradiction(
        self, caller: Caller, relation_id: int, keep: str, note: str | None = None
    ) -> Relation:
        return self._contradictions.resolve_contradiction(caller, relation_id, keep, note)

    # -- reading (core/memory_reads.py) ---------------------------------------------------

    def get(
        self, caller: Caller, memory_id: str, *, history: bool = False, raw: bool = False
    ) -> MemoryDetail:
        return self.reader.get(caller, memory_id, history=history, raw=raw)

    def relations(self, caller: Caller, memory_id: str) -> tuple[Relation, ...]:
        return self.reader.relations(caller, memory_id)

    def list(
        self,
        caller: Caller,
        flt: ListFilter | None = None,
        *,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page:
        return self.reader.list(caller, flt, limit=limit, cursor=cursor)

    def changes_since(self, caller: Caller, seq: int, *, limit: int = 500) -> ChangeFeed:
        return self.reader.changes_since(caller, seq, limit=limit)

    def feedback(
        self, caller: Caller, memory_id: str, verdict: str, note: str | None = None
    ) -> tuple[int, str | None]:
        """Record a verdict on a memory: useful, wrong or stale. It never changes ranking or
        status by itself: an agent's `wrong` or `stale` puts the memory in the review queue
        (with the verdict and who gave it), where only a person's decision changes it. Returns
        the feedback id and the review suggestion's id (None when nothing was queued).

        Raises:
            NotFound: no such memory in the caller's horizon.
            InvalidInput: an unknown verdict, a note that is too long, or a secret in the note
                (`reason_code: secret`).
        """
        if verdict not in ("useful", "wrong", "stale"):
            raise InvalidInput(
                f"verdict must be useful, wrong or stale, got {verdict!r}",
                data={"field": "verdict"},
            )
        if note is not None:
            note = check_summary(note, self._limits, field="note")
            self._gate.refuse_secret({"note": note})
            flags, _ = self._gate.scan({"note": note})
            if flags:
                note = self.redactor.text(note)

        def job(tx: WriteTx) -> tuple[int, str | None]:
            now = self._clock.now_ms()
            memory = self._revisions.load_for_change(tx, caller, memory_id, now)
            cur = tx.conn.execute(
                "INSERT INTO feedback (memory_id, revision, agent, verified, verdict, note, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    memory.id,
                    memory.revision,
                    caller.actor,
                    int(caller.verified),
                    verdict,
                    note,
                    now,
                ),
            )
            audit.record(
                tx,
                caller,
                "feedback",
                memory=memory,
                detail={"verdict": verdict},
                at=now,
            )
            suggestion_id = None
            if caller.surface is Surface.AGENT and verdict in ("wrong", "stale"):
                kept = self._proposals.propose(
                    tx,
                    caller,
                    Suggestion(
                        id=new_suggestion_id(now),
                        op=Op.FEEDBACK,
                        agent=caller.actor,
                        verified=caller.verified,
                        target_id=memory.id,
                        base_revision=memory.revision,
                        reasons=(Reason("feedback", verdict),),
                        note=note,
                        verdict=verdict,
                        first_seen=now,
                        last_seen=now,
                    ),
                )
                suggestion_id = kept.id
            return int(cur.lastrowid or 0), suggestion_id

        return self._store.writer.run(job)

    def record_recall(self, memory_ids: Sequence[str]) -> None:
        """Count a recall through the agent path (batched; no revision, no audit)."""
        if memory_ids:
            self._usage.record(memory_ids, self._clock.now_ms())


__all__ = ["MemoryService", "SupersedeResult"]
