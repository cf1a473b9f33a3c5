"""Writing new memories: preparing and gating a write on the caller's thread, and storing it inside
a write job - honouring idempotency, dedupe keys, exact duplicates and tombstones - or proposing it
to a person."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace

from core import tombstones
from core.bulk import insert_new, new_memory_id, refused_forgotten
from core.clock import Clock
from core.dedupe import dedupe_memory_id, dedupe_target, live_with_text, text_key, upserted
from core.errors import CairnError, IOFault, ScopeDenied
from core.governance import Gate, Outcome, Verdict, flagged, memory_fields
from core.idempotency import binding_of, replayed, request_hash
from core.model import Caller, Memory, Scope, Status, Surface, WriteResult
from core.ownership import owner_of, owns, refuse_notes_source
from core.proposals import Proposals, pending, suggestion_for
from core.records import fetch_memory
from core.requests import WriteRequest
from core.revisions import Revisions
from core.similarity import NearDuplicates
from core.store import Store
from core.suggestions import Op, Reason
from core.tiers import Decision, author_tier
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


def binding(caller: Caller, scope: Scope) -> tuple[str | None, str | None]:
    """The workspace and session a write of `scope` by `caller` lands in (see `binding_of`).

    Raises:
        IOFault: project or session scope on a connection whose folder could not be registered
            as a workspace (a full disk at its hello): it has no workspace id to store them under.
        ScopeDenied: project scope without a bound workspace, or session scope without a session.
    """
    if caller.unregistered_folder is not None and scope in (Scope.PROJECT, Scope.SESSION):
        raise IOFault(
            f"scope '{scope.value}' needs a workspace id for the folder "
            f"{caller.unregistered_folder}, and the folder could not be registered as a "
            "workspace when this connection began (the memory database could not be written "
            "then: a full disk, or a read-only file or disk); nothing was stored: connect again "
            "once the database can be written",
            data={"field": "scope", "workspace": caller.unregistered_folder},
        )
    if scope is Scope.PROJECT and caller.workspace_id is None:
        raise ScopeDenied(
            "scope 'project' needs a workspace, and this connection is not bound to one "
            "(give a workspace directory when connecting)",
            data={"field": "scope"},
        )
    if scope is Scope.SESSION and caller.session_id is None:
        raise ScopeDenied(
            "scope 'session' needs a session id, and this connection has none (give one when "
            "connecting: `session` in the hello, `--session ID` on the command line)",
            data={"field": "scope"},
        )
    return binding_of(caller, scope)


class MemoryWrites:
    """New memories, for `MemoryService`: `prepare`, `check_new`, `write`, `write_many` and
    `store_prepared`."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        limits: Limits,
        *,
        gate: Gate,
        proposals: Proposals,
        near: NearDuplicates,
        revisions: Revisions,
    ) -> None:
        self._store = store
        self._clock = clock
        self._limits = limits
        self._gate = gate
        self._proposals = proposals
        self._near = near
        self._revisions = revisions

    def prepare(self, caller: Caller, req: WriteRequest) -> Memory:
        """Validate a write and stamp it from the caller, with a fresh id and the current time.

        Raises:
            InvalidInput, TooLarge: a field is missing, malformed or over its limit.
            ScopeDenied: project or session scope without a bound workspace or session.
            IOFault: project or session scope on a connection whose folder could not be
                registered (`binding`).
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
        workspace_id, session_id = binding(caller, req.scope)
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
                tx, caller, [m for _, m in plain], now=now, observers=self._revisions.observers
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
        # The memory holding the dedupe key, looked up once for the whole write.
        keyed = None if prepared.dedupe_key is None else dedupe_target(tx.conn, prepared, now)
        if verdict is not None and verdict.outcome is Outcome.QUEUE:
            return self._propose_new(
                tx,
                caller,
                prepared,
                keyed,
                reasons=verdict.reasons,
                verdict=verdict,
                similar=similar,
                now=now,
            )
        if caller.surface is Surface.AGENT and keyed is not None and not owns(caller, keyed):
            return self._propose_new(
                tx,
                caller,
                prepared,
                keyed,
                reasons=(Reason("not_owner", owner_of(keyed)),),
                verdict=verdict,
                similar=similar,
                now=now,
            )
        result = self._store_new(tx, caller, prepared, keyed, now)
        if similar:
            result = replace(result, similar=tuple(i for i in similar if i != result.id))
        return result

    def _propose_new(
        self,
        tx: WriteTx,
        caller: Caller,
        prepared: Memory,
        keyed: Memory | None,
        *,
        reasons: tuple[Reason, ...],
        verdict: Verdict | None,
        similar: tuple[str, ...],
        now: int,
    ) -> WriteResult:
        """A new memory that waits for a person - proposed as an update of the memory its dedupe
        key names (`keyed`), or of the memory it closely resembles in the same scope; as a new
        memory otherwise. Content already stored, or forgotten, is answered without asking
        anyone."""
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
        target = keyed
        if prepared.dedupe_key is None and similar:
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
        return pending(self._proposals, tx, caller, suggestion)

    def _store_new(
        self, tx: WriteTx, caller: Caller, prepared: Memory, keyed: Memory | None, now: int
    ) -> WriteResult:
        """Store `prepared`: a new memory, or a new revision of `keyed` (the memory holding its
        dedupe key)."""
        if prepared.dedupe_key is None:
            return insert_new(tx, caller, [prepared], now=now, observers=self._revisions.observers)[
                0
            ]
        if keyed is not None:
            if keyed.status is Status.FORGOTTEN:
                return refused_forgotten(tombstones.tombstoned_id(tx.conn, keyed.id))
            return self._upsert(tx, caller, keyed, prepared, now)
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
            observers=self._revisions.observers,
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
        self._revisions.save_revision_in(tx, caller, updated, "upsert", None, now=now)
        return WriteResult.stored(updated)
