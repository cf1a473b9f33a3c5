"""Applying one adopted proposal: what adopting each kind of proposal - a new memory, a change,
a supersession, feedback, a memory to forget, an identity document - does, as the person's own
write, with the person's edits."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from core.clock import Clock, utc_minute
from core.errors import Conflict, InvalidInput
from core.governance import Gate, Outcome, flagged, memory_fields
from core.identity import IdentityService
from core.memory_service import MemoryService, SupersedeResult
from core.model import Caller, Memory, Origin, Revision, Status, Surface, WriteStatus
from core.ownership import ADOPTED_FLAG
from core.records import SELECT_REVISION, fetch_memory, revision_from_row
from core.requests import UpdateRequest, WriteRequest
from core.review_edits import cleared, edit_value, effective_edits, refuse_what_does_not_apply
from core.suggestions import Op, Suggestion
from core.tiers import Decision, author_tier
from core.writer import WriteTx


@dataclass(frozen=True)
class Decided:
    """What adopting or rejecting one suggestion did."""

    suggestion_id: str
    op: Op
    decision: str  # adopted or rejected
    memory_id: str | None = None
    revision: int | None = None
    edited: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "suggestion_id": self.suggestion_id,
            "op": self.op.value,
            "decision": self.decision,
            "memory_id": self.memory_id,
            "revision": self.revision,
            "edited": list(self.edited),
        }


class Adoption:
    """Adopt one proposal inside the decision's write job, as the person's own write."""

    def __init__(
        self, clock: Clock, memories: MemoryService, *, gate: Gate, identity: IdentityService
    ) -> None:
        self._clock = clock
        self._memories = memories
        self._gate = gate
        self._identity = identity

    def apply(
        self,
        tx: WriteTx,
        caller: Caller,
        s: Suggestion,
        *,
        edits: dict[str, Any],
        if_revision: int | None,
        action: str | None,
    ) -> Decided:
        # The proposal's workspace; a user or global proposal made project-scope by the
        # person's edit lands in the workspace the person is in (their connection's).
        person = Caller(
            Surface.HUMAN,
            workspace_id=s.workspace_id or caller.workspace_id,
            session_id=s.session_id or caller.session_id,
        )
        now = self._clock.now_ms()
        refuse_what_does_not_apply(s, edits=edits, if_revision=if_revision, action=action)
        if s.op is Op.ADD:
            return self._adopt_add(tx, caller, person, s, edits)
        if s.op is Op.IDENTITY:
            unknown = sorted(set(edits) - {"content"})
            if unknown:
                raise InvalidInput(
                    "an identity proposal's content is the only thing to edit",
                    data={"field": unknown[0]},
                )
            content = edits.get("content", s.content)
            version = self._identity.adopt_in(tx, caller, s, str(content), if_version=if_revision)
            edited = ("content",) if version.content != s.content else ()
            return Decided(s.id, s.op, "adopted", s.target_id, version.version, edited)
        target = fetch_memory(tx.conn, s.target_id or "", now)
        if target is None or target.status is Status.FORGOTTEN:
            raise Conflict(
                f"the memory this proposal is about ({s.target_id}) no longer exists; reject "
                "the proposal",
                data={"id": s.target_id},
            )
        if s.op in (Op.FORGET, Op.FEEDBACK) and if_revision not in (None, target.revision):
            raise Conflict(
                f"memory {target.id} changed since you looked at it (it is at revision "
                f"{target.revision}, you saw {if_revision}); look at it again",
                data={"id": target.id, "current_revision": target.revision},
            )
        if s.op is Op.FORGET:
            self._memories.forget_in(tx, person, target.id, s.note)
            return Decided(s.id, s.op, "adopted", target.id, target.revision + 1)
        if s.op is Op.FEEDBACK:
            return self._adopt_feedback(tx, person, s, target, edits=edits, action=action)
        base = if_revision if if_revision is not None else s.base_revision
        if target.revision != base:
            raise Conflict(
                f"memory {target.id} changed since the proposal was made (it is at revision "
                f"{target.revision}, the proposal at {base}); compare them, then adopt it onto "
                f"revision {target.revision} or reject it",
                data={"id": target.id, "current_revision": target.revision, "proposed_on": base},
            )
        if s.op is Op.UPDATE:
            return self._adopt_update(tx, person, s, target, edits)
        return self._adopt_supersede(tx, person, s, target, edits)

    def _proposed(
        self, s: Suggestion, edits: dict[str, Any]
    ) -> tuple[WriteRequest, tuple[str, ...]]:
        values: dict[str, Any] = {
            "content": s.content,
            "summary": s.summary,
            "kind": s.kind,
            "scope": s.scope,
            "tags": s.tags,
            "importance": s.importance,
            "keywords": s.keywords,
        }
        changes = effective_edits(s, edits)
        values.update(changes)
        edited = list(changes)
        if values["content"] is None or values["kind"] is None or values["scope"] is None:
            raise InvalidInput("this proposal carries no memory to adopt")
        req = WriteRequest(
            content=values["content"],
            kind=values["kind"],
            scope=values["scope"],
            tags=tuple(values["tags"] or ()),
            importance=values["importance"] or 3,
            summary=values["summary"],
            keywords=values["keywords"],
            ttl_seconds=self._time_left(s),
            dedupe_key=s.dedupe_key,
            origin=Origin(s.origin) if s.origin else Origin.EXPLICIT,
            source=s.source,
            pinned=bool(s.pinned),
        )
        return req, tuple(edited)

    def _time_left(self, s: Suggestion) -> int | None:
        """The seconds the proposed memory has left to live (rounded up), counted from the
        proposal; None when the agent gave it no time to live (a new memory never expires; a
        change keeps its memory's expiry, or clears it).

        Raises:
            Conflict: it expired while waiting.
        """
        if s.expires_at is None:
            return None
        left = s.expires_at - self._clock.now_ms()
        if left <= 0:
            raise Conflict(
                f"proposal {s.id} expired while it waited (at {utc_minute(s.expires_at)}: the "
                f"agent gave it "
                f"{s.ttl_seconds} s); reject it - to keep its text, add it as your own memory",
                data={"id": s.id, "expires_at": s.expires_at},
            )
        return -(-left // 1000)

    def _prepare(self, s: Suggestion, req: WriteRequest, person: Caller) -> Memory:
        """The proposal as a memory, bound where the proposing agent was - or, for a scope the
        person's edit chose (a user proposal made project-scope), where the person is."""
        proposer = Caller(
            Surface.AGENT,
            agent=s.agent,
            verified=s.verified,
            workspace_id=person.workspace_id,
            session_id=person.session_id,
        )
        return self._memories.prepare(proposer, req)

    def _checked(self, caller: Caller, memory: Memory) -> Memory:
        """A person's edit passes the scanner like any write: a secret is refused."""
        verdict = self._gate.check(
            caller,
            kind=memory.kind,
            scope=memory.scope,
            origin=None,
            fields=memory_fields(memory),
        )
        if verdict.outcome is Outcome.REFUSE:  # `reason_code` as for a refused write
            raise InvalidInput(
                verdict.message or "refused by the scanner",
                data={"field": "content", "reason_code": verdict.code},
            )
        adopted = replace(memory, flags=tuple(dict.fromkeys((*memory.flags, ADOPTED_FLAG))))
        return flagged(adopted, verdict)

    def _adopted(self, s: Suggestion, memory: Memory, edited: tuple[str, ...]) -> Memory:
        decision = Decision.ADOPTED_EDITED if edited else Decision.ADOPTED
        origin = Origin(s.origin) if s.origin else Origin.EXPLICIT
        return replace(
            memory,
            tier=author_tier(Surface.AGENT, decision, s.verified, origin),
            agent=s.agent,
            origin=origin,
        )

    def _adopt_add(
        self, tx: WriteTx, caller: Caller, person: Caller, s: Suggestion, edits: dict[str, Any]
    ) -> Decided:
        req, edited = self._proposed(s, edits)
        prepared = self._checked(person, self._adopted(s, self._prepare(s, req, person), edited))
        result = self._memories.store_prepared(tx, caller, req, prepared, verdict=None)
        if result.status is not WriteStatus.STORED:
            raise Conflict(result.reason or "the proposal could not be stored")
        return Decided(s.id, s.op, "adopted", result.id, result.revision, edited)

    def _adopt_update(
        self, tx: WriteTx, person: Caller, s: Suggestion, target: Memory, edits: dict[str, Any]
    ) -> Decided:
        req, edited = self._proposed(s, edits)
        if target.expired and s.expires_at is None and not s.clear_expiry:
            # The memory's own expiry passed; the agent set none (until 2026-11-30 this was
            # blamed on the agent, "the agent gave it 60 s", whose proposal copied the expiry).
            raise Conflict(
                f"memory {target.id} expired at {utc_minute(target.expires_at or 0)} (its own "
                "expiry; the proposal sets none), so the change would not be seen; reject the "
                "proposal - or clear the memory's expiry first, then adopt it onto the new "
                "revision",
                data={"id": target.id, "expires_at": target.expires_at},
            )
        # A proposal holds every field as of the revision it was made on. Adopted onto a later
        # one, it changes only what it (or the person) changed: the fields it left alone keep
        # what the memory holds now (a tags-only proposal put back the old text).
        since: Memory | Revision = target
        if s.base_revision is not None and s.base_revision != target.revision:
            row = tx.conn.execute(
                SELECT_REVISION + " WHERE r.memory_id = ? AND r.revision = ?",
                (target.id, s.base_revision),
            ).fetchone()
            if row is not None:
                since = revision_from_row(row)

        def changed(name: str) -> Any:
            value = getattr(req, name)
            proposed = name in edited or value != getattr(since, name)
            if not proposed or value == getattr(target, name):
                return None
            return cleared(name, value)

        # The expiry and the pin as the agent set them; what it left alone stays as the memory
        # holds it now (until 2026-11-30 both were dropped, though the proposal said "adopted").
        change = UpdateRequest(
            id=target.id,
            if_revision=target.revision,
            content=changed("content"),
            summary=changed("summary"),
            kind=changed("kind"),
            scope=changed("scope"),
            tags=changed("tags"),
            keywords=changed("keywords"),
            importance=changed("importance"),
            pinned=s.pinned if s.pinned is not None and s.pinned != target.pinned else None,
            ttl_seconds=req.ttl_seconds if s.expires_at != target.expires_at else None,
            clear_expiry=s.clear_expiry and target.expires_at is not None,
            reason=s.note,
        )
        if not change.changes_anything():
            return Decided(s.id, s.op, "adopted", target.id, target.revision, edited)
        result = self._memories.update_in(
            tx, person, change, adopted=(s.agent, s.verified, bool(edited))
        )
        if result.status is not WriteStatus.STORED:
            raise InvalidInput(result.reason or "the change was refused", data={"field": "content"})
        return Decided(s.id, s.op, "adopted", result.id, result.revision, edited)

    def _adopt_supersede(
        self, tx: WriteTx, person: Caller, s: Suggestion, target: Memory, edits: dict[str, Any]
    ) -> Decided:
        edited: tuple[str, ...] = ()
        if s.replacement_id is not None:
            # The replacement exists: the person's edits are a new revision of it. (Built into
            # a new memory, they were deduplicated onto it and lost, or stored as a copy.)
            edited = self._edit_replacement(tx, person, s, s.replacement_id, edits)
            out = self._memories.supersede_in(
                tx,
                person,
                target.id,
                by_id=s.replacement_id,
                replacement=None,
                prepared=None,
                verdict=None,
                reason=s.note,
            )
        else:
            req, edited = self._proposed(s, edits)
            prepared = self._checked(
                person, self._adopted(s, self._prepare(s, req, person), edited)
            )
            out = self._memories.supersede_in(
                tx,
                person,
                target.id,
                by_id=None,
                replacement=req,
                prepared=prepared,
                verdict=None,
                reason=s.note,
            )
        assert isinstance(out, SupersedeResult)  # a person's supersede is never a proposal
        return Decided(s.id, s.op, "adopted", out.new.id, out.new.revision, edited)

    def _edit_replacement(
        self,
        tx: WriteTx,
        person: Caller,
        s: Suggestion,
        replacement_id: str,
        edits: dict[str, Any],
    ) -> tuple[str, ...]:
        """Store the person's edits of a proposal to supersede by an existing memory as a new
        revision of that memory, adopted (no agent owns it from then on); the fields edited.
        A field the replacement changed since the proposal keeps its new value unless the
        person edited it."""
        changes = effective_edits(s, edits)
        if not changes:
            return ()
        current = fetch_memory(tx.conn, replacement_id, self._clock.now_ms())
        if current is None or current.status is not Status.ACTIVE:
            raise Conflict(
                f"the memory this proposal would supersede by ({replacement_id}) is "
                f"{current.status.value if current else 'gone'}; reject the proposal",
                data={"id": replacement_id},
            )
        change = UpdateRequest(
            id=current.id,
            if_revision=current.revision,
            **{name: cleared(name, value) for name, value in changes.items()},
            reason=s.note,
        )
        if change.changes_anything():
            result = self._memories.update_in(
                tx, person, change, adopted=(current.agent or s.agent, s.verified, True)
            )
            if result.status is not WriteStatus.STORED:
                raise InvalidInput(
                    result.reason or "the edit was refused", data={"field": next(iter(changes))}
                )
        return tuple(changes)

    def _adopt_feedback(
        self,
        tx: WriteTx,
        person: Caller,
        s: Suggestion,
        target: Memory,
        *,
        edits: dict[str, Any],
        action: str | None,
    ) -> Decided:
        chosen = action or ("edit" if edits else "archive")
        if chosen == "forget":
            self._memories.forget_in(tx, person, target.id, f"feedback: {s.verdict}")
            return Decided(s.id, s.op, "adopted", target.id, target.revision + 1)
        if chosen == "archive":
            archived = self._memories.set_state_in(tx, person, target.id, "archive", archived=True)
            return Decided(s.id, s.op, "adopted", archived.id, archived.revision)
        if not edits:
            raise InvalidInput("action 'edit' needs the edits to make", data={"field": "edits"})
        values = {k: cleared(k, edit_value(k, v)) for k, v in edits.items()}
        change = UpdateRequest(
            id=target.id,
            if_revision=target.revision,
            content=values.get("content"),
            summary=values.get("summary"),
            kind=values.get("kind"),
            scope=values.get("scope"),
            tags=values.get("tags"),
            keywords=values.get("keywords"),
            importance=values.get("importance"),
            reason=f"feedback: {s.verdict}",
        )
        result = self._memories.update_in(tx, person, change)
        if result.status is not WriteStatus.STORED:
            raise InvalidInput(
                result.reason or "the edit was refused",
                data={"field": "edits", "reason_code": result.reason_code},
            )
        # Edited: the fields the stored revision really changed, not every field sent (until
        # 2026-11-30 a field sent with the value the memory held was reported as edited).
        stored = result.memory
        if result.duplicate or stored is None:
            names = ", ".join(sorted(edits))
            raise InvalidInput(
                f"the edit changes nothing: memory {target.id} already holds the {names} given; "
                "change a field, or adopt with action archive or forget",
                data={"field": "edits"},
            )
        edited = tuple(k for k in sorted(edits) if getattr(stored, k) != getattr(target, k))
        return Decided(s.id, s.op, "adopted", result.id, result.revision, edited)
