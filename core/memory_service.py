"""The memory service: the only door to stored memories for every adapter.

Every method takes the `Caller` (who is asking, as the adapter established it) and plain values,
and returns frozen dataclasses. Writes run as jobs on the single writer; reads run on the calling
thread's read-only connection. Stamps - author tier, agent, workspace, session - come from the
caller, never from parameters.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from core import audit, relations, tombstones
from core.bulk import insert_new, new_memory_id, refused_forgotten
from core.changes import Topic
from core.clock import Clock
from core.dedupe import (
    dedupe_memory_id,
    dedupe_target,
    live_copy,
    live_with_text,
    same_fields,
    text_key,
    upserted,
)
from core.errors import (
    CairnError,
    Conflict,
    Forbidden,
    ForgottenMemory,
    InvalidInput,
    NotFound,
    ScopeDenied,
)
from core.governance import (
    Gate,
    Outcome,
    Redactor,
    Verdict,
    flagged,
    memory_fields,
)
from core.horizon import visible
from core.idempotency import binding_of, replayed, request_hash
from core.memory_reads import ChangeFeed, MemoryReader
from core.model import (
    Caller,
    ListFilter,
    Memory,
    MemoryDetail,
    Origin,
    Page,
    Relation,
    RelationKind,
    Scope,
    Status,
    Surface,
    Tombstone,
    WriteResult,
    WriteStatus,
)
from core.ownership import (
    ADOPTED_FLAG,
    NotesState,
    owner_of,
    owns,
    refuse_not_own,
    refuse_notes_edit,
    refuse_notes_source,
)
from core.policy import WIDE_SCOPES
from core.proposals import suggestion_for, waiting_because
from core.records import (
    fetch_memory,
    insert_revision,
    replace_memory,
)
from core.requests import UpdateRequest, WriteRequest
from core.settings import Settings
from core.similarity import NearDuplicates
from core.store import Store
from core.suggestions import Op, Reason, Suggestion, new_suggestion_id
from core.tiers import Decision, author_tier
from core.usage import UsageRecorder
from core.validation import (
    Limits,
    check_content,
    check_importance,
    check_keywords,
    check_kind,
    check_source,
    check_summary,
    check_tags,
    check_ttl,
    content_hash,
)
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


@dataclass(frozen=True)
class SupersedeResult:
    old: Memory
    new: Memory


class Proposals(Protocol):
    """Where a write that waits for a person goes (the review queue)."""

    def propose(self, tx: WriteTx, caller: Caller, suggestion: Suggestion) -> Suggestion: ...


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
        self._near = near
        self._observers = list(observers)
        self._notes_state: NotesState | None = None
        self._retention_ms = int(settings.number("lifecycle.expired_retention_days") * 86_400_000)
        self._idem_retention_ms = int(settings.number("idempotency.retention_hours") * 3_600_000)

    @property
    def limits(self) -> Limits:
        return self._limits

    def add_observer(self, observer: MemoryObserver) -> None:
        """Attach an observer at composition time (before the service serves requests)."""
        self._observers.append(observer)

    def follow_notes(self, state: NotesState) -> None:
        """At composition time: how to tell whether the notes folder follows a file now, so a
        refused change of a note's memory says what is true (`core/notes.py`)."""
        self._notes_state = state

    # -- preparing a write -------------------------------------------------------------------

    def prepare(self, caller: Caller, req: WriteRequest) -> Memory:
        """Validate a write and stamp it from the caller, with a fresh id and the current time.

        Raises:
            InvalidInput, TooLarge: a field is missing, malformed or over its limit.
            ScopeDenied: project or session scope without a bound workspace or session.
        """
        content = check_content(req.content, self._limits)
        kind = check_kind(req.kind, self._limits)
        importance = check_importance(req.importance)
        tags = check_tags(req.tags, self._limits)
        summary = check_summary(req.summary, self._limits)
        keywords = check_keywords(req.keywords, self._limits)
        source = check_source(req.source, self._limits)
        refuse_notes_source(caller, source)
        ttl = check_ttl(req.ttl_seconds)
        workspace_id, session_id = self._binding(caller, req.scope)
        now = self._clock.now_ms()
        origin = req.origin if caller.surface is Surface.AGENT else None
        return Memory(
            id=new_memory_id(now),
            revision=1,
            content=content,
            summary=summary,
            kind=kind,
            scope=req.scope,
            workspace_id=workspace_id,
            session_id=session_id,
            tags=tags,
            keywords=keywords,
            importance=importance,
            pinned=req.pinned,
            status=Status.ACTIVE,
            tier=author_tier(caller.surface, Decision.AUTO, caller.verified, origin),
            agent=caller.agent if caller.surface is Surface.AGENT else None,
            source=source,
            origin=origin,
            created_at=now,
            updated_at=now,
            expires_at=now + ttl * 1000 if ttl else None,
            dedupe_key=req.dedupe_key,
            superseded_by=None,
        )

    @staticmethod
    def _binding(caller: Caller, scope: Scope) -> tuple[str | None, str | None]:
        if scope is Scope.PROJECT and caller.workspace_id is None:
            raise ScopeDenied(
                "scope 'project' needs a workspace, and this connection is not bound to one "
                "(give a workspace directory when connecting)",
                data={"field": "scope"},
            )
        if scope is Scope.SESSION and caller.session_id is None:
            raise ScopeDenied(
                "scope 'session' needs a session id, and this connection has none",
                data={"field": "scope"},
            )
        return binding_of(caller, scope)

    # -- writing -----------------------------------------------------------------------------

    def write(self, caller: Caller, req: WriteRequest) -> WriteResult:
        """Store one memory, send it to review, or refuse it: the gate decides
        (core/governance.py). A duplicate or a retried key returns what is already there;
        `similar` names memories the write closely resembles.

        Raises:
            InvalidInput, TooLarge, ScopeDenied: the write is not acceptable as sent.
        """
        prepared = self.prepare(caller, req)
        verdict = self.check_new(caller, prepared, req)
        if verdict.outcome is Outcome.REFUSE:
            return verdict.refused()
        similar = self._near.find(caller, prepared)
        return self._store.writer.run(
            lambda tx: self.store_prepared(
                tx, caller, req, prepared, verdict=verdict, similar=similar
            )
        )

    def check_new(
        self, caller: Caller, memory: Memory, req: WriteRequest, reason: str | None = None
    ) -> Verdict:
        """The gate on a new memory: its fields, and what is stored beside them - its keys, and
        the reason of the supersession that writes it."""
        return self._gate.check(
            caller,
            kind=memory.kind,
            scope=memory.scope,
            origin=memory.origin,
            fields=memory_fields(memory),
            notes={
                "dedupe_key": req.dedupe_key,
                "idempotency_key": req.idempotency_key,
                "reason": reason,
            },
        )

    def write_many(
        self,
        caller: Caller,
        reqs: Sequence[WriteRequest],
        *,
        then: Callable[[WriteTx, list[WriteResult | CairnError]], None] | None = None,
    ) -> list[WriteResult | CairnError]:
        """Store many memories in one transaction; each entry is a result or the error it raised.

        Invalid entries do not stop the others: every valid entry lands (or waits, or is
        refused) as `write` would decide, and every invalid one is reported in its place. Entries
        the gate lets through without keys go through one set-based insert. Near-duplicates are
        not looked for here (a bulk import is one decision). `then` runs in the same transaction
        with the results: the caller's own records of them land with the memories or not at all.
        """
        prepared: list[tuple[Memory, Verdict] | CairnError | WriteResult] = []
        for req in reqs:
            try:
                memory = self.prepare(caller, req)
            except CairnError as e:  # reported per entry, in order
                prepared.append(e)
                continue
            verdict = self.check_new(caller, memory, req)
            prepared.append(
                verdict.refused() if verdict.outcome is Outcome.REFUSE else (memory, verdict)
            )

        def job(tx: WriteTx) -> list[WriteResult | CairnError]:
            now = self._clock.now_ms()
            out: list[WriteResult | CairnError | None] = [
                p if isinstance(p, (CairnError, WriteResult)) else None for p in prepared
            ]
            plain = [
                (i, flagged(p[0], p[1]))
                for i, (r, p) in enumerate(zip(reqs, prepared, strict=True))
                if isinstance(p, tuple)
                and p[1].outcome is Outcome.STORE
                and r.idempotency_key is None
                and r.dedupe_key is None
            ]
            results = insert_new(
                tx, caller, [m for _, m in plain], now=now, observers=self._observers
            )
            for (i, _), result in zip(plain, results, strict=True):
                out[i] = result
            for i, (req, prep) in enumerate(zip(reqs, prepared, strict=True)):
                if out[i] is not None or not isinstance(prep, tuple):
                    continue
                try:
                    with tx.db.atomic():
                        out[i] = self.store_prepared(tx, caller, req, prep[0], verdict=prep[1])
                except CairnError as e:
                    out[i] = e
            answers: list[WriteResult | CairnError] = [o for o in out if o is not None]
            if then is not None:
                then(tx, answers)
            return answers

        return self._store.writer.run(job)

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
        """Inside a write job: store a prepared memory (or propose it, when the verdict says to
        queue), honouring idempotency, dedupe keys, exact duplicates and tombstones. `verdict`
        None means a person already decided (adoption, import)."""
        conn = tx.conn
        now = self._clock.now_ms()
        earlier = replayed(conn, caller, req)
        if earlier is not None:
            return earlier
        result = self._land(tx, caller, prepared, verdict=verdict, similar=similar, now=now)
        if req.idempotency_key is not None:
            conn.execute(
                "INSERT INTO idempotency (actor, key, request_hash, response, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    caller.actor,
                    req.idempotency_key,
                    request_hash(req, caller),
                    json.dumps(result.to_dict()),
                    now,
                ),
            )
        return result

    def _land(
        self,
        tx: WriteTx,
        caller: Caller,
        prepared: Memory,
        *,
        verdict: Verdict | None,
        similar: tuple[str, ...],
        now: int,
    ) -> WriteResult:
        if verdict is not None:
            prepared = flagged(prepared, verdict)
        if verdict is not None and verdict.outcome is Outcome.QUEUE:
            return self._propose_new(
                tx,
                caller,
                prepared,
                reasons=verdict.reasons,
                verdict=verdict,
                similar=similar,
                now=now,
            )
        if caller.surface is Surface.AGENT and prepared.dedupe_key is not None:
            existing = dedupe_target(tx.conn, prepared, now)
            if existing is not None and not owns(caller, existing):
                reasons = (Reason("not_owner", owner_of(existing)),)
                return self._propose_new(
                    tx,
                    caller,
                    prepared,
                    reasons=reasons,
                    verdict=verdict,
                    similar=similar,
                    now=now,
                )
        result = self._store_new(tx, caller, prepared, now)
        if similar:
            result = replace(result, similar=tuple(i for i in similar if i != result.id))
        return result

    def _propose_new(
        self,
        tx: WriteTx,
        caller: Caller,
        prepared: Memory,
        *,
        reasons: tuple[Reason, ...],
        verdict: Verdict | None,
        similar: tuple[str, ...],
        now: int,
    ) -> WriteResult:
        """A new memory that waits for a person - proposed as an update of the memory its dedupe
        key names, or of the memory it closely resembles in the same scope; as a new memory
        otherwise. Content already stored, or forgotten, is answered without asking anyone."""
        conn = tx.conn
        same = live_with_text(conn, text_key(prepared), now)
        if same:
            existing = fetch_memory(conn, same[0], now)
            assert existing is not None
            return WriteResult.stored(existing, duplicate=True)
        if caller.surface is Surface.AGENT:
            by = tombstones.tombstoned_content(conn, prepared, content_hash(prepared.content))
            if by is not None:
                return refused_forgotten(by)
        target: Memory | None = None
        if prepared.dedupe_key is not None:
            target = dedupe_target(tx.conn, prepared, now)
        elif similar:
            first = fetch_memory(conn, similar[0], now)
            if first is not None and (first.scope, first.workspace_id, first.session_id) == (
                prepared.scope,
                prepared.workspace_id,
                prepared.session_id,
            ):
                target = first
                reasons = (*reasons, Reason("similar", first.id))
        suggestion = suggestion_for(
            caller,
            prepared,
            op=Op.ADD if target is None else Op.UPDATE,
            target=target,
            reasons=reasons,
            flags=verdict.flags if verdict is not None else (),
            similar=similar,
            now=now,
        )
        return self._pending(tx, caller, suggestion)

    def _pending(self, tx: WriteTx, caller: Caller, suggestion: Suggestion) -> WriteResult:
        kept = self._proposals.propose(tx, caller, suggestion)
        first = kept.reasons[0] if kept.reasons else Reason("policy", "ask")
        return WriteResult(
            WriteStatus.PENDING,
            suggestion_id=kept.id,
            reason=waiting_because(kept),
            reason_code=first.code,
            similar=kept.similar,
        )

    def _store_new(self, tx: WriteTx, caller: Caller, prepared: Memory, now: int) -> WriteResult:
        if prepared.dedupe_key is None:
            return insert_new(tx, caller, [prepared], now=now, observers=self._observers)[0]
        existing = dedupe_target(tx.conn, prepared, now)
        if existing is not None:
            if existing.status is Status.FORGOTTEN:
                return refused_forgotten(tombstones.tombstoned_id(tx.conn, existing.id))
            return self._upsert(tx, caller, existing, prepared, now)
        mid = dedupe_memory_id(
            prepared.scope, prepared.workspace_id, prepared.session_id, prepared.dedupe_key
        )
        by = tombstones.tombstoned_id(tx.conn, mid)
        if by is not None:  # purged: no row left, the tombstone stays
            return refused_forgotten(by)
        tombstones.lift_expired(tx.conn, mid)  # an expired one's id may live again
        return insert_new(
            tx,
            caller,
            [replace(prepared, id=mid)],
            now=now,
            observers=self._observers,
            check_duplicates=False,
        )[0]

    def _upsert(
        self, tx: WriteTx, caller: Caller, existing: Memory, prepared: Memory, now: int
    ) -> WriteResult:
        """A second write with the same dedupe key: a new revision of the same memory."""
        candidate = upserted(existing, prepared, by_agent=caller.surface is Surface.AGENT)
        if candidate is None:
            return WriteResult.stored(existing, duplicate=True)
        updated = replace(
            candidate,
            revision=existing.revision + 1,
            tier=prepared.tier,
            agent=prepared.agent if caller.surface is Surface.AGENT else existing.agent,
            origin=prepared.origin,
            updated_at=now,
            expired=False,
        )
        self.save_revision_in(tx, caller, updated, "upsert", None, now=now)
        return WriteResult.stored(updated)

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
        for observer in self._observers:
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

    def _load_for_change(self, tx: WriteTx, caller: Caller, memory_id: str, now: int) -> Memory:
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

    def update(self, caller: Caller, req: UpdateRequest) -> WriteResult:
        """Change fields of a memory, creating revision n+1 - or, for an agent changing what is
        not its own or what its policy holds, a proposal that waits for a person.

        Raises:
            NotFound: no such memory in the caller's horizon.
            Conflict: `if_revision` is not the current revision (nothing was written).
            InvalidInput, TooLarge, ScopeDenied: a new value is not acceptable.
        """
        return self._store.writer.run(lambda tx: self.update_in(tx, caller, req))

    def update_in(
        self,
        tx: WriteTx,
        caller: Caller,
        req: UpdateRequest,
        *,
        adopted: tuple[str, bool, bool] | None = None,
    ) -> WriteResult:
        """`update` inside a write job. `adopted` is (agent, verified, edited) when a person
        adopts an agent's proposed change: the tier then says the person vouched for it."""
        if not req.changes_anything():
            raise InvalidInput("the update changes nothing: give at least one field to change")
        content = check_content(req.content, self._limits) if req.content is not None else None
        kind = check_kind(req.kind, self._limits) if req.kind is not None else None
        importance = check_importance(req.importance) if req.importance is not None else None
        tags = check_tags(req.tags, self._limits) if req.tags is not None else None
        summary = check_summary(req.summary, self._limits) if req.summary is not None else None
        keywords = check_keywords(req.keywords, self._limits) if req.keywords is not None else None
        source = check_source(req.source, self._limits) if req.source is not None else None
        refuse_notes_source(caller, source)
        ttl = check_ttl(req.ttl_seconds)
        now = self._clock.now_ms()
        current = self._load_for_change(tx, caller, req.id, now)
        refuse_notes_edit(caller, current, self._notes_state)
        if current.revision != req.if_revision:
            raise Conflict(
                f"memory {req.id} is at revision {current.revision}, not {req.if_revision}; "
                "read it again and retry",
                data={"id": req.id, "current_revision": current.revision},
            )
        scope = req.scope or current.scope
        workspace_id, session_id = current.workspace_id, current.session_id
        if scope is not current.scope:
            if current.dedupe_key is not None:
                raise InvalidInput(
                    "the scope of a memory written with a dedupe_key cannot change; write a "
                    "new memory in the other scope",
                    data={"field": "scope"},
                )
            workspace_id, session_id = self._binding(caller, scope)
        expires_at = current.expires_at
        if req.clear_expiry:
            expires_at = None
        elif ttl is not None:
            expires_at = now + ttl * 1000
        candidate = replace(
            current,
            content=content if content is not None else current.content,
            summary=summary if req.summary is not None else current.summary,
            kind=kind or current.kind,
            scope=scope,
            workspace_id=workspace_id,
            session_id=session_id,
            tags=tags if tags is not None else current.tags,
            keywords=keywords if req.keywords is not None else current.keywords,
            importance=importance if importance is not None else current.importance,
            pinned=req.pinned if req.pinned is not None else current.pinned,
            expires_at=expires_at,
            source=source if source is not None else current.source,
        )
        if same_fields(candidate, current):
            return WriteResult.stored(current, duplicate=True)
        gated = self._gate_update(tx, caller, current, candidate, reason=req.reason, now=now)
        if isinstance(gated, WriteResult):
            return gated
        candidate = gated
        words_changed = (candidate.content, candidate.summary, candidate.keywords) != (
            current.content,
            current.summary,
            current.keywords,
        )
        origin = current.origin if caller.surface is Surface.AGENT else None
        tier = current.tier
        agent = current.agent
        if adopted is not None:
            proposer, verified, edited = adopted
            decision = Decision.ADOPTED_EDITED if edited else Decision.ADOPTED
            tier = author_tier(Surface.AGENT, decision, verified, current.origin or Origin.EXPLICIT)
            agent = proposer
            candidate = replace(
                candidate, flags=tuple(dict.fromkeys((*candidate.flags, ADOPTED_FLAG)))
            )
        elif words_changed:  # the tier says whose words these are
            tier = author_tier(caller.surface, Decision.AUTO, caller.verified, origin)
            agent = caller.agent if caller.surface is Surface.AGENT else current.agent
        updated = replace(
            candidate,
            revision=current.revision + 1,
            updated_at=now,
            tier=tier,
            agent=agent,
            expired=expires_at is not None and expires_at <= now,
        )
        self.save_revision_in(tx, caller, updated, "update", req.reason, now=now)
        return WriteResult.stored(updated)

    def _gate_update(
        self,
        tx: WriteTx,
        caller: Caller,
        current: Memory,
        candidate: Memory,
        *,
        reason: str | None,
        now: int,
    ) -> Memory | WriteResult:
        """The gate on an update: the candidate (flagged) when it may land, else the refusal
        or the pending proposal. The kind and scope are decided again only when they change."""
        verdict = self._gate.check(
            caller,
            kind=candidate.kind,
            scope=candidate.scope,
            origin=current.origin,
            fields=memory_fields(candidate),
            notes={"reason": reason},
            rule_kind=candidate.kind != current.kind,
            rule_scope=candidate.scope in WIDE_SCOPES and candidate.scope is not current.scope,
        )
        if verdict.outcome is Outcome.REFUSE:
            return verdict.refused()
        reasons = verdict.reasons if verdict.outcome is Outcome.QUEUE else ()
        if caller.surface is Surface.AGENT and not owns(caller, current):
            reasons = (Reason("not_owner", owner_of(current)), *reasons)
        if reasons:
            suggestion = suggestion_for(
                caller,
                candidate,
                op=Op.UPDATE,
                target=current,
                reasons=reasons,
                flags=verdict.flags,
                now=now,
                note=reason,
            )
            return self._pending(tx, caller, suggestion)
        return flagged(candidate, verdict)

    def rebind_in(
        self, tx: WriteTx, caller: Caller, memory: Memory, workspace_id: str, reason: str
    ) -> Memory:
        """Inside a write job: move a memory to another workspace as a new revision (a
        workspace merge; reversible through the revisions)."""
        updated = replace(
            memory,
            workspace_id=workspace_id,
            revision=memory.revision + 1,
            updated_at=self._clock.now_ms(),
        )
        self.save_revision_in(tx, caller, updated, "rebind", reason, now=updated.updated_at)
        return updated

    def set_pinned(self, caller: Caller, memory_id: str, pinned: bool) -> Memory:
        return self._set_state(caller, memory_id, "pin" if pinned else "unpin", pinned=pinned)

    def set_archived(self, caller: Caller, memory_id: str, archived: bool) -> Memory:
        action = "archive" if archived else "unarchive"
        return self._set_state(caller, memory_id, action, archived=archived)

    def _set_state(
        self,
        caller: Caller,
        memory_id: str,
        action: str,
        *,
        pinned: bool | None = None,
        archived: bool | None = None,
    ) -> Memory:
        return self._store.writer.run(
            lambda tx: self.set_state_in(
                tx, caller, memory_id, action, pinned=pinned, archived=archived
            )
        )

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
        """Pin, unpin, archive or unarchive inside a write job (a new revision, same words)."""
        now = self._clock.now_ms()
        current = self._load_for_change(tx, caller, memory_id, now)
        refuse_notes_edit(caller, current, self._notes_state)
        refuse_not_own(caller, current)
        candidate = current
        if pinned is not None:
            candidate = replace(current, pinned=pinned)
        if archived is not None:
            if current.status not in (Status.ACTIVE, Status.ARCHIVED):
                raise Conflict(
                    f"memory {memory_id} is {current.status.value}; only active or archived "
                    "memories can be archived or unarchived",
                    data={"id": memory_id, "status": current.status.value},
                )
            new_status = Status.ARCHIVED if archived else Status.ACTIVE
            candidate = replace(current, status=new_status)
        if same_fields(candidate, current):
            return current
        updated = replace(candidate, revision=current.revision + 1, updated_at=now)
        self.save_revision_in(tx, caller, updated, action, None, now=now)
        return updated

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
        prepared = self.prepare(caller, replacement) if replacement is not None else None
        if prepared is not None and replacement is not None:
            verdict = self.check_new(caller, prepared, replacement, reason)
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
        old = self._load_for_change(tx, caller, old_id, now)
        refuse_notes_edit(caller, old, self._notes_state)
        if old.status not in (Status.ACTIVE, Status.ARCHIVED):
            raise Conflict(
                f"memory {old_id} is already {old.status.value}",
                data={"id": old_id, "status": old.status.value},
            )
        existing = None
        if by_id is not None:
            existing = self._load_for_change(tx, caller, by_id, now)
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
                return self._pending(tx, caller, suggestion)
        if prepared is not None and replacement is not None:
            outcome = self.store_prepared(
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
        updated = self._mark_superseded(tx, caller, old, by=new.id, note=reason, now=now)
        return SupersedeResult(old=updated, new=new)

    def _mark_superseded(
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
        self.save_revision_in(tx, caller, updated, "supersede", note, now=now)
        relations.link_supersedes(tx.conn, by, old.id, note=note, at=now, by=caller.actor)
        return updated

    # -- forgetting --------------------------------------------------------------------------

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
                refuse_notes_edit(caller, memory, self._notes_state)
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
                return self._pending(tx, caller, suggestion)
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
        self._close_contradictions(tx, caller, memory.id, "forgotten", now)
        self._release_superseded(
            tx, caller, memory, f"{memory.id} was forgotten", going={memory.id}, now=now
        )
        audit.scrub_previews(tx, memory.id)
        conn.execute("UPDATE feedback SET note = NULL WHERE memory_id = ?", (memory.id,))
        tombstones.bury(
            conn, memory, content_hash(memory.content), by=caller.actor, at=now, reason=reason
        )
        for observer in self._observers:
            observer.memories_removed(tx, [memory.id], forgotten=True)
        audit.record(
            tx,
            caller,
            "forget",
            memory=gone,
            detail={"reason": reason} if reason else None,
            at=now,
        )

    def _close_contradictions(
        self, tx: WriteTx, caller: Caller, memory_id: str, how: str, now: int
    ) -> int:
        """`memory_id` is being forgotten or purged (`how`): the contradictions it is in close
        (there is nothing left to weigh the other side against), each on the record of the
        memory left standing. Returns how many closed."""
        closed = relations.close_contradictions_of(
            tx.conn, memory_id, resolution=how, at=now, by=caller.actor
        )
        for rel in closed:
            other_id = rel.to_id if rel.from_id == memory_id else rel.from_id
            audit.record(
                tx,
                caller,
                "resolve",
                memory_id=other_id,
                memory=fetch_memory(tx.conn, other_id, now),
                detail={"relation": rel.id, "resolution": how, "other": memory_id},
                at=now,
            )
        return len(closed)

    def _release_superseded(
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
            self._mark_superseded(tx, caller, old, by=by, note=reason, now=now)
            return
        restored = replace(
            old,
            status=status_before_superseded(conn, old.id),
            superseded_by=None,
            revision=old.revision + 1,
            updated_at=now,
        )
        self.save_revision_in(tx, caller, restored, "unsupersede", reason, now=now)

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
            stranded = [
                (str(r[0]), r[1])
                for r in conn.execute(
                    "SELECT m.id, m.superseded_by FROM memory m WHERE m.status = 'superseded' "
                    "AND (m.expires_at IS NULL OR m.expires_at > ?) "
                    "AND NOT EXISTS (SELECT 1 FROM memory r WHERE r.id = m.superseded_by "
                    "AND r.status != 'forgotten' AND (r.expires_at IS NULL OR r.expires_at > ?))",
                    (now, now),
                )
            ]
            freed: list[tuple[str, str]] = []
            for mid, by in stranded:
                replacement = fetch_memory(conn, by, now) if by is not None else None
                if replacement is not None and replacement.status is not Status.FORGOTTEN:
                    freed.append((mid, f"its replacement {by} expired"))
                else:
                    freed.append((mid, f"its replacement {by} is gone (forgotten or purged)"))
            self.release_in(tx, who, freed)
            sides = [
                str(r[0])
                for r in conn.execute(
                    "SELECT DISTINCT side FROM (SELECT from_id AS side FROM relation "
                    "WHERE kind = 'contradicts' AND open = 1 UNION SELECT to_id FROM relation "
                    "WHERE kind = 'contradicts' AND open = 1) WHERE NOT EXISTS (SELECT 1 FROM "
                    "memory m WHERE m.id = side AND m.status != 'forgotten')"
                )
            ]
            closed = 0
            for side in sides:
                gone = fetch_memory(conn, side, now)
                how = "forgotten" if gone is not None else "purged"
                closed += self._close_contradictions(tx, who, side, how, now)
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
                for observer in self._observers:
                    observer.memories_removed(tx, ids, forgotten=False)
            memories: list[Memory] = []
            for mid in ids:
                found = fetch_memory(conn, mid, now)
                assert found is not None
                memories.append(found)
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
                self._close_contradictions(tx, who, memory.id, "purged", now)
                self._release_superseded(
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

    # -- contradictions ----------------------------------------------------------------------

    def mark_contradiction(
        self, caller: Caller, a_id: str, b_id: str, note: str | None = None
    ) -> Relation:
        """Record that two memories contradict; it stays open until a person resolves it.

        Raises:
            InvalidInput: a memory by itself, or a secret in the note (`reason_code: secret`).
            Conflict: a side has expired (until 2026-11-30 it was taken, and the contradiction
                stayed open until the purge).
        """
        if a_id == b_id:
            raise InvalidInput("a memory cannot contradict itself")
        self._gate.refuse_secret({"note": note})

        def job(tx: WriteTx) -> Relation:
            now = self._clock.now_ms()
            a = self._load_for_change(tx, caller, a_id, now)
            b = self._load_for_change(tx, caller, b_id, now)
            for side in (a, b):
                if side.expired:  # hidden already, and purged soon: nothing to weigh
                    raise Conflict(
                        f"memory {side.id} has expired; only memories that have not can "
                        "contradict each other",
                        data={"id": side.id, "expired": True},
                    )
            rel_id = relations.open_contradiction(
                tx.conn, a.id, b.id, note=note, at=now, by=caller.actor
            )
            audit.record(
                tx,
                caller,
                "contradict",
                memory=a,
                detail={"other": b.id, "relation": rel_id},
                at=now,
            )
            return relations.fetch_relation(tx.conn, rel_id)

        return self._store.writer.run(job)

    def resolve_contradiction(
        self, caller: Caller, relation_id: int, keep: str, note: str | None = None
    ) -> Relation:
        """A person closes a contradiction: keep `from`, keep `to` (the other is superseded by
        it), or `both` (they do not really conflict)."""
        if not caller.is_human:
            raise Forbidden("only a person can resolve a contradiction")
        if keep not in ("from", "to", "both"):
            raise InvalidInput("keep must be 'from', 'to' or 'both'", data={"field": "keep"})
        self._gate.refuse_secret({"note": note})

        def job(tx: WriteTx) -> Relation:
            now = self._clock.now_ms()
            rel = relations.fetch_relation(tx.conn, relation_id)
            if rel.kind is not RelationKind.CONTRADICTS or not rel.open:
                raise Conflict(f"relation {relation_id} is not an open contradiction")
            if keep != "both":
                winner, loser = (
                    (rel.from_id, rel.to_id) if keep == "from" else (rel.to_id, rel.from_id)
                )
                self._refuse_to_keep(tx, caller, winner, now)
                old = self._load_for_change(tx, caller, loser, now)
                if old.status in (Status.ACTIVE, Status.ARCHIVED):
                    self._mark_superseded(tx, caller, old, by=winner, note=note, now=now)
            relations.close_contradiction(tx.conn, relation_id, keep=keep, at=now, by=caller.actor)
            # The event carries the memory's scope, so the live push and `changes.since` show
            # it to the same connections.
            subject = fetch_memory(tx.conn, rel.from_id, now)
            audit.record(
                tx,
                caller,
                "resolve",
                memory_id=rel.from_id,
                memory=subject,
                detail={"relation": relation_id, "keep": keep},
                at=now,
            )
            return relations.fetch_relation(tx.conn, relation_id)

        return self._store.writer.run(job)

    def _refuse_to_keep(self, tx: WriteTx, caller: Caller, memory_id: str, now: int) -> None:
        """Raise unless `memory_id` can be kept over the other side of a contradiction: the other
        becomes superseded by it, which hides it, so only a live (active) memory may win."""
        kept = fetch_memory(tx.conn, memory_id, now)
        if kept is None or not visible(caller, kept):
            raise NotFound(
                f"memory {memory_id} (the side to keep) not found",
                data={"id": memory_id, "field": "keep"},
            )
        if kept.status is not Status.ACTIVE:
            raise Conflict(
                f"memory {memory_id} is {kept.status.value}; only an active memory can be kept "
                "over another (keep 'both' to close the contradiction)",
                data={"id": memory_id, "status": kept.status.value, "field": "keep"},
            )
        if kept.expired:
            raise Conflict(
                f"memory {memory_id} has expired (it waits for its purge); only a live memory "
                "can be kept over another (keep 'both' to close the contradiction)",
                data={
                    "id": memory_id,
                    "status": kept.status.value,
                    "expired": True,
                    "field": "keep",
                },
            )

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
            memory = self._load_for_change(tx, caller, memory_id, now)
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


__all__ = ["ChangeFeed", "MemoryObserver", "MemoryService", "SupersedeResult", "Topic"]
