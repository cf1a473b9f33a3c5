"""Changing a stored memory's fields: an update (or the proposal that waits for a person), a move to
another workspace, pinning and archiving."""

from __future__ import annotations

from dataclasses import replace

from core.clock import Clock
from core.dedupe import same_fields
from core.errors import Conflict, InvalidInput
from core.governance import Gate, Outcome, flagged, memory_fields
from core.memory_writes import binding
from core.model import Caller, Memory, Origin, Status, Surface, WriteResult
from core.ownership import (
    ADOPTED_FLAG,
    owner_of,
    owns,
    refuse_not_own,
    refuse_notes_edit,
    refuse_notes_source,
)
from core.policy import WIDE_SCOPES
from core.proposals import Proposals, pending, suggestion_for
from core.requests import UpdateRequest
from core.revisions import Revisions
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
)
from core.writer import WriteTx


class MemoryUpdates:
    """Changes of a stored memory, for `MemoryService`: `update`, `rebind_in`, pinning and
    archiving."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        limits: Limits,
        *,
        gate: Gate,
        proposals: Proposals,
        revisions: Revisions,
    ) -> None:
        self._store = store
        self._clock = clock
        self._limits = limits
        self._gate = gate
        self._proposals = proposals
        self._revisions = revisions

    def update(self, caller: Caller, req: UpdateRequest) -> WriteResult:
        """Change fields of a memory, creating revision n+1 - or, for an agent changing what is
        not its own or what its policy holds, a proposal that waits for a person.

        Raises:
            NotFound: no such memory in the caller's horizon.
            Conflict: `if_revision` is not the current revision (nothing was written).
            InvalidInput, TooLarge, ScopeDenied: a new value is not acceptable.
            IOFault: a move to project or session scope on a connection whose folder could not
                be registered (`memory_writes.binding`).
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
        current = self._revisions.load_for_change(tx, caller, req.id, now)
        refuse_notes_edit(caller, current, self._revisions.notes_state)
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
            workspace_id, session_id = binding(caller, scope)
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
        self._revisions.save_revision_in(tx, caller, updated, "update", req.reason, now=now)
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
            return pending(self._proposals, tx, caller, suggestion)
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
        self._revisions.save_revision_in(
            tx, caller, updated, "rebind", reason, now=updated.updated_at
        )
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
        current = self._revisions.load_for_change(tx, caller, memory_id, now)
        refuse_notes_edit(caller, current, self._revisions.notes_state)
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
        self._revisions.save_revision_in(tx, caller, updated, action, None, now=now)
        return updated
