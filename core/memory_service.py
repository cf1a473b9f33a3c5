"""The memory service: the only door to stored memories for every adapter.

Every method takes the `Caller` (who is asking, as the adapter established it) and plain values,
and returns frozen dataclasses. Writes run as jobs on the single writer; reads run on the calling
thread's read-only connection. Stamps - author tier, agent, workspace, session - come from the
caller, never from parameters.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from core import audit, relations, tombstones
from core.bulk import insert_new, new_memory_id, refused_forgotten
from core.changes import Change, Topic
from core.clock import Clock
from core.errors import (
    CairnError,
    Conflict,
    Forbidden,
    ForgottenMemory,
    IdempotencyMismatch,
    InvalidInput,
    NotFound,
    ScopeDenied,
)
from core.horizon import horizon_sql, visible
from core.listing import check_limit, decode_cursor, encode_cursor, filter_digest, list_query
from core.model import (
    Caller,
    ListFilter,
    Memory,
    MemoryDetail,
    Page,
    Relation,
    RelationKind,
    Scope,
    Status,
    Surface,
    Tier,
    Tombstone,
    WriteResult,
    WriteStatus,
)
from core.records import (
    fetch_memory,
    fetch_revisions,
    insert_revision,
    memory_from_row,
    replace_memory,
)
from core.requests import UpdateRequest, WriteRequest
from core.settings import Settings
from core.store import Store
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
class ChangeFeed:
    changes: tuple[Change, ...]
    last_seq: int
    gap: bool  # the caller's seq is older than the oldest event still in the database


@dataclass(frozen=True)
class SupersedeResult:
    old: Memory
    new: Memory


def dedupe_memory_id(
    scope: Scope, workspace_id: str | None, session_id: str | None, key: str
) -> str:
    """The deterministic id of the memory a dedupe key names in one scope and workspace."""
    basis = "\x00".join(("dedupe", scope.value, workspace_id or "", session_id or "", key))
    return "m_" + hashlib.sha256(basis.encode("utf-8")).hexdigest()[:28]


def _request_hash(fingerprint: dict[str, Any]) -> str:
    blob = json.dumps(fingerprint, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _same_fields(a: Memory, b: Memory) -> bool:
    keys = (
        "content",
        "summary",
        "kind",
        "scope",
        "workspace_id",
        "session_id",
        "tags",
        "keywords",
        "importance",
        "pinned",
        "status",
        "expires_at",
        "superseded_by",
    )
    return all(getattr(a, k) == getattr(b, k) for k in keys)


class MemoryService:
    """Write, update, get, list, supersede, forget, pin and archive memories."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        usage: UsageRecorder,
        observers: Sequence[MemoryObserver] = (),
    ) -> None:
        self._store = store
        self._clock = clock
        self._usage = usage
        self._limits = Limits(settings)
        self._observers = list(observers)
        self._retention_ms = int(settings.number("lifecycle.expired_retention_days") * 86_400_000)
        self._idem_retention_ms = int(settings.number("idempotency.retention_hours") * 3_600_000)

    @property
    def limits(self) -> Limits:
        return self._limits

    def add_observer(self, observer: MemoryObserver) -> None:
        """Attach an observer at composition time (before the service serves requests)."""
        self._observers.append(observer)

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
        if scope is Scope.PROJECT:
            if caller.workspace_id is None:
                raise ScopeDenied(
                    "scope 'project' needs a workspace, and this connection is not bound to one "
                    "(give a workspace directory when connecting)",
                    data={"field": "scope"},
                )
            return caller.workspace_id, None
        if scope is Scope.SESSION:
            if caller.session_id is None:
                raise ScopeDenied(
                    "scope 'session' needs a session id, and this connection has none",
                    data={"field": "scope"},
                )
            return caller.workspace_id, caller.session_id
        return None, None

    # -- writing -----------------------------------------------------------------------------

    def write(self, caller: Caller, req: WriteRequest) -> WriteResult:
        """Store one memory (or return the existing one for a duplicate or a retried key)."""
        prepared = self.prepare(caller, req)
        return self._store.writer.run(lambda tx: self.store_prepared(tx, caller, req, prepared))

    def write_many(
        self, caller: Caller, reqs: Sequence[WriteRequest]
    ) -> list[WriteResult | CairnError]:
        """Store many memories in one transaction; each entry is a result or the error it raised.

        Invalid entries do not stop the others: every valid entry lands, every invalid one is
        reported in its place. Entries without keys go through one set-based insert.
        """
        prepared: list[Memory | CairnError] = []
        for req in reqs:
            try:
                prepared.append(self.prepare(caller, req))
            except CairnError as e:  # reported per entry, in order
                prepared.append(e)

        def job(tx: WriteTx) -> list[WriteResult | CairnError]:
            now = self._clock.now_ms()
            out: list[WriteResult | CairnError | None] = [None] * len(reqs)
            plain: list[tuple[int, Memory]] = [
                (i, p)
                for i, (r, p) in enumerate(zip(reqs, prepared, strict=True))
                if isinstance(p, Memory) and r.idempotency_key is None and r.dedupe_key is None
            ]
            results = insert_new(
                tx, caller, [m for _, m in plain], now=now, observers=self._observers
            )
            for (i, _), result in zip(plain, results, strict=True):
                out[i] = result
            for i, (req, prep) in enumerate(zip(reqs, prepared, strict=True)):
                if out[i] is not None:
                    continue
                if isinstance(prep, CairnError):
                    out[i] = prep
                    continue
                try:
                    with tx.db.atomic():
                        out[i] = self.store_prepared(tx, caller, req, prep)
                except CairnError as e:
                    out[i] = e
            return [o for o in out if o is not None]

        return self._store.writer.run(job)

    def store_prepared(
        self, tx: WriteTx, caller: Caller, req: WriteRequest, prepared: Memory
    ) -> WriteResult:
        """Inside a write job: store a prepared memory, honouring idempotency, dedupe keys,
        exact duplicates and tombstones. Used by `write`, by adoption and by import."""
        conn = tx.conn
        now = self._clock.now_ms()
        request_hash = None
        if req.idempotency_key is not None:
            request_hash = _request_hash(req.fingerprint())
            row = conn.execute(
                "SELECT request_hash, response FROM idempotency WHERE actor = ? AND key = ?",
                (caller.actor, req.idempotency_key),
            ).fetchone()
            if row is not None:
                if row[0] != request_hash:
                    raise IdempotencyMismatch(
                        f"idempotency key {req.idempotency_key!r} was already used for a "
                        "different write; use a new key for new content",
                        data={"idempotency_key": req.idempotency_key},
                    )
                first = json.loads(row[1])
                return WriteResult(
                    WriteStatus(first["status"]),
                    id=first.get("id"),
                    revision=first.get("revision"),
                    suggestion_id=first.get("suggestion_id"),
                    reason=first.get("reason"),
                    reason_code=first.get("reason_code"),
                    duplicate=bool(first.get("duplicate")),
                    replayed=True,
                )
        result = self._store_new(tx, caller, prepared, now)
        if req.idempotency_key is not None and request_hash is not None:
            conn.execute(
                "INSERT INTO idempotency (actor, key, request_hash, response, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    caller.actor,
                    req.idempotency_key,
                    request_hash,
                    json.dumps(result.to_dict()),
                    now,
                ),
            )
        return result

    def _store_new(self, tx: WriteTx, caller: Caller, prepared: Memory, now: int) -> WriteResult:
        if prepared.dedupe_key is None:
            return insert_new(tx, caller, [prepared], now=now, observers=self._observers)[0]
        mid = dedupe_memory_id(
            prepared.scope, prepared.workspace_id, prepared.session_id, prepared.dedupe_key
        )
        if tombstones.tombstoned_id(tx.conn, mid):
            return refused_forgotten()
        existing = fetch_memory(tx.conn, mid, now)
        if existing is not None:
            return self._upsert(tx, caller, existing, prepared, now)
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
        status = Status.ACTIVE if existing.status is Status.ARCHIVED else existing.status
        candidate = replace(
            existing,
            content=prepared.content,
            summary=prepared.summary,
            kind=prepared.kind,
            tags=prepared.tags,
            keywords=prepared.keywords,
            importance=prepared.importance,
            pinned=existing.pinned or prepared.pinned,
            status=status,
            expires_at=prepared.expires_at,
            source=prepared.source or existing.source,
        )
        if _same_fields(candidate, existing):
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
        self._save_revision(tx, caller, updated, "upsert", None, now=now)
        return WriteResult.stored(updated)

    def _save_revision(
        self,
        tx: WriteTx,
        caller: Caller,
        memory: Memory,
        action: str,
        reason: str | None,
        *,
        now: int,
    ) -> None:
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

    def _load_for_change(
        self, tx: WriteTx, caller: Caller, memory_id: str, now: int, *, changes: bool = True
    ) -> Memory:
        """The memory `caller` is about to change. With `changes`, an agent is refused a memory
        that holds a person's words: agents propose, people decide."""
        memory = self._load_visible(tx, caller, memory_id, now)
        if changes:
            refuse_agent_on_human_words(caller, memory)
        return memory

    def _load_visible(self, tx: WriteTx, caller: Caller, memory_id: str, now: int) -> Memory:
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
        """Change fields of a memory, creating revision n+1.

        Raises:
            NotFound: no such memory in the caller's horizon.
            Conflict: `if_revision` is not the current revision (nothing was written).
            InvalidInput, TooLarge, ScopeDenied: a new value is not acceptable.
        """
        if not req.changes_anything():
            raise InvalidInput("the update changes nothing: give at least one field to change")
        content = check_content(req.content, self._limits) if req.content is not None else None
        kind = check_kind(req.kind, self._limits) if req.kind is not None else None
        importance = check_importance(req.importance) if req.importance is not None else None
        tags = check_tags(req.tags, self._limits) if req.tags is not None else None
        summary = check_summary(req.summary, self._limits) if req.summary is not None else None
        keywords = check_keywords(req.keywords, self._limits) if req.keywords is not None else None
        ttl = check_ttl(req.ttl_seconds)

        def job(tx: WriteTx) -> WriteResult:
            now = self._clock.now_ms()
            current = self._load_for_change(tx, caller, req.id, now)
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
            )
            if _same_fields(candidate, current):
                return WriteResult.stored(current, duplicate=True)
            words_changed = (candidate.content, candidate.summary, candidate.keywords) != (
                current.content,
                current.summary,
                current.keywords,
            )
            origin = current.origin if caller.surface is Surface.AGENT else None
            tier = current.tier
            agent = current.agent
            if words_changed:  # the tier says whose words these are
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
            self._save_revision(tx, caller, updated, "update", req.reason, now=now)
            return WriteResult.stored(updated)

        return self._store.writer.run(job)

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
        def job(tx: WriteTx) -> Memory:
            now = self._clock.now_ms()
            current = self._load_for_change(tx, caller, memory_id, now)
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
            if _same_fields(candidate, current):
                return current
            updated = replace(candidate, revision=current.revision + 1, updated_at=now)
            self._save_revision(tx, caller, updated, action, None, now=now)
            return updated

        return self._store.writer.run(job)

    def supersede(
        self,
        caller: Caller,
        old_id: str,
        *,
        by_id: str | None = None,
        replacement: WriteRequest | None = None,
        reason: str | None = None,
    ) -> SupersedeResult:
        """Mark `old_id` superseded by an existing memory (`by_id`) or by a new one written now
        (`replacement`), in one transaction. Both memories are kept and linked both ways."""
        if (by_id is None) == (replacement is None):
            raise InvalidInput("give exactly one of 'by' (an existing memory id) or a new memory")
        prepared = self.prepare(caller, replacement) if replacement is not None else None

        def job(tx: WriteTx) -> SupersedeResult:
            now = self._clock.now_ms()
            old = self._load_for_change(tx, caller, old_id, now)
            if old.status not in (Status.ACTIVE, Status.ARCHIVED):
                raise Conflict(
                    f"memory {old_id} is already {old.status.value}",
                    data={"id": old_id, "status": old.status.value},
                )
            if prepared is not None and replacement is not None:
                outcome = self.store_prepared(tx, caller, replacement, prepared)
                if outcome.status is not WriteStatus.STORED or outcome.id is None:
                    raise Conflict(outcome.reason or "the replacement memory was not stored")
                new = fetch_memory(tx.conn, outcome.id, now)
                assert new is not None
            else:
                assert by_id is not None
                new = self._load_for_change(tx, caller, by_id, now, changes=False)
            if new.id == old.id:
                raise InvalidInput("a memory cannot supersede itself")
            if new.status is not Status.ACTIVE:
                raise Conflict(
                    f"memory {new.id} is {new.status.value}; only an active memory can supersede",
                    data={"id": new.id},
                )
            updated = replace(
                old,
                status=Status.SUPERSEDED,
                superseded_by=new.id,
                revision=old.revision + 1,
                updated_at=now,
            )
            self._save_revision(tx, caller, updated, "supersede", reason, now=now)
            relations.link_supersedes(tx.conn, new.id, old.id, note=reason, at=now, by=caller.actor)
            return SupersedeResult(old=updated, new=new)

        return self._store.writer.run(job)

    # -- forgetting --------------------------------------------------------------------------

    def forget(self, caller: Caller, memory_id: str, reason: str | None = None) -> Tombstone:
        """Forget a memory for good: its content is scrubbed from every revision, the index, audit
        previews and any queued proposal; a tombstone (id, content hash, who, when, why) stays so
        neither a dedupe upsert nor an import brings it back. Forgetting twice is a no-op."""

        def job(tx: WriteTx) -> Tombstone:
            now = self._clock.now_ms()
            conn = tx.conn
            memory = fetch_memory(conn, memory_id, now)
            if memory is None or not visible(caller, memory):
                raise NotFound(f"memory {memory_id} not found", data={"id": memory_id})
            if memory.status is not Status.FORGOTTEN:
                refuse_agent_on_human_words(caller, memory)
                self._scrub(tx, caller, memory, reason, now)
            tomb = tombstones.fetch(conn, memory_id)
            assert tomb is not None
            return tomb

        return self._store.writer.run(job)

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
            if ids:
                for observer in self._observers:
                    observer.memories_removed(tx, ids, forgotten=False)
            for mid in ids:
                memory = fetch_memory(conn, mid, now)
                assert memory is not None
                tombstones.bury(
                    conn,
                    memory,
                    content_hash(memory.content),
                    by=who.actor,
                    at=now,
                    reason="expired",
                )
                audit.scrub_previews(tx, mid)
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
        """Record that two memories contradict; it stays open until a person resolves it."""
        if a_id == b_id:
            raise InvalidInput("a memory cannot contradict itself")

        def job(tx: WriteTx) -> Relation:
            now = self._clock.now_ms()
            a = self._load_for_change(tx, caller, a_id, now, changes=False)
            b = self._load_for_change(tx, caller, b_id, now, changes=False)
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

        def job(tx: WriteTx) -> Relation:
            now = self._clock.now_ms()
            rel = relations.fetch_relation(tx.conn, relation_id)
            if rel.kind is not RelationKind.CONTRADICTS or not rel.open:
                raise Conflict(f"relation {relation_id} is not an open contradiction")
            if keep != "both":
                winner, loser = (
                    (rel.from_id, rel.to_id) if keep == "from" else (rel.to_id, rel.from_id)
                )
                old = self._load_for_change(tx, caller, loser, now)
                if old.status in (Status.ACTIVE, Status.ARCHIVED):
                    updated = replace(
                        old,
                        status=Status.SUPERSEDED,
                        superseded_by=winner,
                        revision=old.revision + 1,
                        updated_at=now,
                    )
                    self._save_revision(tx, caller, updated, "supersede", note, now=now)
                    relations.link_supersedes(
                        tx.conn, winner, loser, note=note, at=now, by=caller.actor
                    )
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

    # -- reading -----------------------------------------------------------------------------

    def get(self, caller: Caller, memory_id: str, *, history: bool = False) -> MemoryDetail:
        """One memory (with its revisions and relations when `history`).

        Raises:
            NotFound: no such memory in the caller's horizon (another workspace's memory looks
                exactly like one that does not exist).
        """
        now = self._clock.now_ms()
        with self._store.read_db.atomic():
            conn = self._store.read_db.conn()
            memory = fetch_memory(conn, memory_id, now)
            if (
                memory is None
                or not visible(caller, memory)
                or (memory.status is Status.FORGOTTEN and not caller.is_human)
            ):
                raise NotFound(f"memory {memory_id} not found", data={"id": memory_id})
            if not history:
                return MemoryDetail(memory)
            revisions = tuple(fetch_revisions(conn, memory_id))
            links = tuple(relations.relations_of(conn, memory_id))
        return MemoryDetail(memory, revisions, links)

    def relations(self, caller: Caller, memory_id: str) -> tuple[Relation, ...]:
        self.get(caller, memory_id)
        return tuple(relations.relations_of(self._store.read_db.conn(), memory_id))

    def list(
        self,
        caller: Caller,
        flt: ListFilter | None = None,
        *,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page:
        """Memories newest first, one page at a time; pages stay stable under concurrent writes.

        Raises:
            InvalidInput: a bad limit, or a cursor that was not issued for these filters.
        """
        flt = flt or ListFilter()
        check_limit(limit)
        digest = filter_digest(flt)
        after = decode_cursor(cursor, digest) if cursor else None
        now = self._clock.now_ms()
        sql, args = list_query(caller, flt, now_ms=now, after_seq=after, limit=limit)
        rows = self._store.read_db.conn().execute(sql, args).fetchall()
        items = tuple(memory_from_row(r, now) for r in rows[:limit])
        more = len(rows) > limit
        return Page(items, encode_cursor(int(rows[limit - 1][1]), digest) if more else None)

    def changes_since(self, caller: Caller, seq: int, *, limit: int = 500) -> ChangeFeed:
        """Audited changes after `seq`, oldest first - for an agent, only those on memories it
        can see. `gap` says events after `seq` were already rotated out of the database."""
        conn = self._store.read_db.conn()
        oldest = conn.execute("SELECT min(seq) FROM audit").fetchone()[0]
        gap = oldest is not None and 0 < seq < int(oldest) - 1
        if caller.is_human:
            sql = (
                "SELECT a.seq, a.action, a.memory_id, a.revision, a.actor, m.workspace_id, "
                "m.scope, m.session_id FROM audit a LEFT JOIN memory m ON m.id = a.memory_id "
                "WHERE a.seq > ? "
                "ORDER BY a.seq LIMIT ?"
            )
            args: list[Any] = [seq, limit]
        else:
            where, params = horizon_sql(caller)
            sql = (
                "SELECT a.seq, a.action, a.memory_id, a.revision, a.actor, m.workspace_id, "
                "m.scope, m.session_id FROM audit a JOIN memory m ON m.id = a.memory_id "
                "WHERE a.seq > ? AND " + where + " ORDER BY a.seq LIMIT ?"
            )
            args = [seq, *params, limit]
        changes = tuple(
            Change(
                seq=int(r[0]),
                action=r[1],
                topics=audit.topics_for(r[1]),
                memory_id=r[2],
                revision=r[3],
                workspace_id=r[5],
                actor=r[4],
                scope=r[6],
                session_id=r[7],
            )
            for r in conn.execute(sql, args)
        )
        return ChangeFeed(changes, changes[-1].seq if changes else max(seq, 0), gap)

    def feedback(
        self, caller: Caller, memory_id: str, verdict: str, note: str | None = None
    ) -> int:
        """Record an agent's (or a person's) verdict on a memory: useful, wrong or stale. It is
        kept for the human to see; it never changes ranking or status by itself.

        Raises:
            NotFound: no such memory in the caller's horizon.
            InvalidInput: an unknown verdict, or a note that is too long.
        """
        if verdict not in ("useful", "wrong", "stale"):
            raise InvalidInput(
                f"verdict must be useful, wrong or stale, got {verdict!r}",
                data={"field": "verdict"},
            )
        if note is not None:
            note = check_summary(note, self._limits)

        def job(tx: WriteTx) -> int:
            now = self._clock.now_ms()
            memory = self._load_for_change(tx, caller, memory_id, now, changes=False)
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
            return int(cur.lastrowid or 0)

        return self._store.writer.run(job)

    def record_recall(self, memory_ids: Sequence[str]) -> None:
        """Count a recall through the agent path (batched; no revision, no audit)."""
        if memory_ids:
            self._usage.record(memory_ids, self._clock.now_ms())


__all__ = ["ChangeFeed", "MemoryObserver", "MemoryService", "SupersedeResult", "Topic"]


def refuse_agent_on_human_words(caller: Caller, memory: Memory) -> None:
    """Raise Forbidden when an agent tries to change or forget a memory in a person's words."""
    if caller.surface is Surface.AGENT and memory.tier is Tier.HUMAN:
        raise Forbidden(
            f"memory {memory.id} holds a person's words; only a person can change or forget it",
            data={"id": memory.id},
        )
