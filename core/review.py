"""The review queue as a service: agents' proposals come in, a person adopts (with edits) or
rejects them. Only a person's caller can decide; every decision runs the write path as the
person's own and is audited with what was changed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core import audit, suggestions
from core.allowlist import Allowlist
from core.clock import Clock, utc_minute
from core.errors import CairnError, Conflict, Forbidden, InvalidInput, NotFound
from core.governance import Gate, Outcome, check_note, flagged, memory_fields
from core.identity import IdentityService, current_in
from core.memory_service import MemoryService, SupersedeResult
from core.model import Caller, Memory, Origin, Revision, Scope, Status, Surface, WriteStatus
from core.ownership import ADOPTED_FLAG
from core.records import SELECT_REVISION, fetch_memory, revision_from_row
from core.requests import UpdateRequest, WriteRequest
from core.settings import Settings
from core.similarity import NearDuplicates, TermSets
from core.store import Store
from core.suggestions import Op, Suggestion
from core.tiers import Decision, author_tier
from core.validation import check_importance
from core.writer import WriteTx

EDITABLE = ("content", "summary", "kind", "scope", "tags", "importance", "keywords")
# The fields an edit may empty: None (or a blank text) clears them. An update leaves a field
# given as None unchanged and clears one given as "".
CLEARABLE = ("summary", "keywords")
FEEDBACK_ACTIONS = ("archive", "forget", "edit")
MAX_REASON_CHARS = 500  # a rejection's reason


class ReviewQueue:
    """Puts proposals in the queue: a proposal seen again bumps the one waiting (a strictly more
    complete text replaces it), and beyond `review.max_items` the least-seen oldest go - each
    eviction recorded and counted, never silent."""

    def __init__(self, settings: Settings, near: NearDuplicates) -> None:
        self._cap = settings.integer("review.max_items")
        self._near = near
        # The waiting texts' term sets: room for the whole queue and as much again.
        self._terms = TermSets(limit=2 * self._cap)

    # As a memory observer: a forgotten memory, or an expired one purged, takes its waiting
    # proposals with it - nothing is left to adopt them onto (until 2026-11-30 a purge left them
    # waiting for good, refused on adoption and counted by health).
    def memories_written(
        self, tx: WriteTx, memories: Sequence[Memory], *, fresh: bool = False
    ) -> None:
        return

    def memories_removed(self, tx: WriteTx, memory_ids: Sequence[str], *, forgotten: bool) -> None:
        tx.conn.executemany(
            "DELETE FROM suggestion WHERE target_id = ? OR replacement_id = ?",
            [(mid, mid) for mid in memory_ids],
        )

    def propose(self, tx: WriteTx, caller: Caller, suggestion: Suggestion) -> Suggestion:
        conn = tx.conn
        now = suggestion.last_seen
        waiting = suggestions.find_same(conn, suggestion, self._near.idf(), self._terms)
        if waiting is not None:
            kept = suggestions.bump(conn, waiting, suggestion, now)
            action = "reobserve"
        else:
            suggestions.insert(conn, suggestion)
            kept = suggestion
            action = "propose"
        evicted = suggestions.evict_over(conn, self._cap, keep=kept.id)
        for gone in evicted:
            suggestions.record_decision(conn, gone, "evicted", by="cairn", at=now)
        audit.record(
            tx,
            caller,
            action,
            detail={"suggestion": kept.id, "op": kept.op.value, "hits": kept.hits},
            at=now,
        )
        if evicted:
            suggestions.bump_counter(conn, "review_evicted", len(evicted))
            audit.record(
                tx,
                Caller.system(),
                "review_evicted",
                detail={"count": len(evicted), "suggestions": [g.id for g in evicted]},
                at=now,
            )
        return suggestions.with_history(conn, kept)


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


class ReviewService:
    """List, adopt and reject proposals - a person's work."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        memories: MemoryService,
        *,
        gate: Gate,
        allowlist: Allowlist,
        identity: IdentityService,
    ) -> None:
        self._identity = identity
        self._store = store
        self._clock = clock
        self._memories = memories
        self._gate = gate
        self._allowlist = allowlist

    @staticmethod
    def _person(caller: Caller) -> None:
        if not caller.is_human:
            raise Forbidden(
                "only a person can look at, adopt or reject proposals: agents propose, humans "
                "decide"
            )

    # -- reading ---------------------------------------------------------------------------

    def pending(
        self,
        caller: Caller,
        *,
        limit: int = 200,
        offset: int = 0,
        op: Op | None = None,
        target_id: str | None = None,
        agent: str | None = None,
        kind: str | None = None,
        reason: str | None = None,
    ) -> list[dict[str, Any]]:
        """Waiting proposals, most seen first, then most recent (then by id: an order that
        pages); each with the memory it would change as it stands now (`target`), so a person
        sees both. `offset` skips that many of them (the next page). `op`, `target_id`,
        `agent`, `kind` and `reason` keep only the proposals of that operation, target, agent,
        kind (see `kinds`) and reason code (the whole queue is searched, not the first `limit`).

        Raises:
            Forbidden: the caller is not a person.
            InvalidInput: `limit` is not 1-1000, or `offset` is negative.
        """
        self._person(caller)
        _check_page(limit, offset)
        where, params = _narrowing(op, target_id, agent, kind, reason)
        conn = self._store.read_db.conn()
        rows = conn.execute(
            f"{suggestions.SELECT} {where} {_ORDER} LIMIT ? OFFSET ?",
            (*params, limit, offset),
        ).fetchall()
        return [self._shown(conn, suggestions.from_row(r)) for r in rows]

    def ranking(
        self,
        caller: Caller,
        *,
        limit: int = 200,
        agent: str | None = None,
        kind: str | None = None,
        reason: str | None = None,
    ) -> list[Ranked]:
        """The proposals `pending` would give, in its order, as their ids and how often and
        when last seen only: a few milliseconds where `pending` reads each proposal and its
        target (~0.2 ms each). A window holding most of them reads only the others (`shown`).

        Raises:
            Forbidden: the caller is not a person.
            InvalidInput: `limit` is not 1-1000.
        """
        self._person(caller)
        _check_page(limit, 0)
        where, params = _narrowing(None, None, agent, kind, reason)
        rows = self._store.read_db.conn().execute(
            f"SELECT id, hits, last_seen FROM suggestion {where} {_ORDER} LIMIT ?",
            (*params, limit),
        )
        return [Ranked(str(r[0]), int(r[1]), int(r[2])) for r in rows]

    def shown(self, caller: Caller, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The proposals `ids` that still wait, as `pending` gives them, by id (one decided
        meanwhile is not among them).

        Raises:
            Forbidden: the caller is not a person.
        """
        self._person(caller)
        conn = self._store.read_db.conn()
        out: dict[str, dict[str, Any]] = {}
        for sid in ids:
            found = suggestions.fetch(conn, sid)
            if found is not None:
                out[sid] = self._shown(conn, found)
        return out

    def get(self, caller: Caller, suggestion_id: str) -> dict[str, Any]:
        self._person(caller)
        conn = self._store.read_db.conn()
        found = suggestions.fetch(conn, suggestion_id)
        if found is None:
            raise _gone(conn, suggestion_id)
        return self._shown(conn, found)

    def reasons_of(self, suggestion_id: str) -> tuple[str, ...]:
        """Why a waiting proposal waits: its reason codes, first to last, each once (health's
        `held_for_review` counts them all - an answer names only the first). Empty once it was
        decided. Codes only, never content."""
        found = suggestions.fetch(self._store.read_db.conn(), suggestion_id)
        return tuple(dict.fromkeys(r.code for r in found.reasons)) if found is not None else ()

    def waiting_among(self, caller: Caller, ids: Iterable[str]) -> frozenset[str]:
        """Which of the proposals `ids` still wait: a window holding a person's unsaved edits
        of proposals learns which were decided elsewhere meanwhile (their edits cannot be kept).

        Raises:
            Forbidden: the caller is not a person.
        """
        self._person(caller)
        return suggestions.waiting_among(self._store.read_db.conn(), ids)

    def count(
        self, *, agent: str | None = None, kind: str | None = None, reason: str | None = None
    ) -> int:
        """How many proposals wait (`agent`, `kind`, `reason`: of those only, as `pending`)."""
        where, params = _narrowing(None, None, agent, kind, reason)
        conn = self._store.read_db.conn()
        return int(conn.execute(f"SELECT count(*) FROM suggestion {where}", params).fetchone()[0])

    def agents(self, caller: Caller) -> list[str]:
        """The agents with proposals waiting, by name (the whole queue, not a page of it).

        Raises:
            Forbidden: the caller is not a person.
        """
        return list(self.choices(caller).agents)

    def choices(self, caller: Caller) -> Choices:
        """Every agent, kind and reason code the proposals waiting have (the whole queue, in
        one scan): what a window's filters offer. A proposal's kind is its own, else the kind
        of the memory it is about (feedback, forget), else its operation (identity).

        Raises:
            Forbidden: the caller is not a person.
        """
        self._person(caller)
        rows = self._store.read_db.conn().execute(
            f"SELECT DISTINCT agent, {_KIND}, reasons FROM suggestion"
        )
        agents: set[str] = set()
        kinds: set[str] = set()
        reasons: set[str] = set()
        for agent, kind, reasons_json in rows:
            agents.add(str(agent))
            kinds.add(str(kind))
            reasons.update(str(r["code"]) for r in json.loads(reasons_json))
        return Choices(tuple(sorted(agents)), tuple(sorted(kinds)), tuple(sorted(reasons)))

    def _shown(self, conn: Any, s: Suggestion) -> dict[str, Any]:
        out = suggestions.with_history(conn, s).to_dict()
        if s.op is Op.IDENTITY and s.target_id is not None:
            current = current_in(conn, s.target_id)
            out["target"] = current.to_dict() if current is not None else None
        elif s.target_id is not None:
            target = fetch_memory(conn, s.target_id, self._clock.now_ms())
            out["target"] = target.to_dict() if target is not None else None
        return out

    # -- deciding --------------------------------------------------------------------------

    def adopt(
        self,
        caller: Caller,
        suggestion_id: str,
        *,
        edits: Mapping[str, Any] | None = None,
        if_revision: int | None = None,
        allow_flags: bool = False,
        action: str | None = None,
        if_content_hash: str | None = None,
    ) -> Decided:
        """Adopt a proposal, optionally edited first ("edit before adopt"), as the person's
        decision. `if_revision` rebases a change onto the target's current revision after the
        person looked at it; without it, a target that moved on since the proposal is a
        conflict (for feedback, `if_revision` is the revision the person judged, and a memory
        changed since is a conflict too). `if_content_hash` is the hash of the proposal's text
        the person saw: an agent's fuller text that replaced it meanwhile is a conflict, never
        adopted unseen. `allow_flags` allowlists the scanner findings the proposal carries. For
        feedback, `action` is archive (the default), forget, or edit (with `edits`). For a
        proposal to forget, `if_revision` is the revision the person judged, as for feedback.

        Raises:
            Forbidden: the caller is not a person.
            NotFound: no such suggestion (already decided, or evicted).
            Conflict: the target changed since the proposal, or is gone.
            InvalidInput, TooLarge, ScopeDenied: an edit is not acceptable; a secret in an edit;
                an option the proposal does not take (`action` on one that is not feedback,
                `if_revision` on an add, `edits` on a forget or with action archive or forget).
        """
        self._person(caller)
        edits = dict(edits or {})
        unknown = sorted(set(edits) - set(EDITABLE))
        if unknown:
            raise InvalidInput(
                f"cannot edit {', '.join(unknown)} (editable: {', '.join(EDITABLE)})",
                data={"field": unknown[0]},
            )
        if action is not None and action not in FEEDBACK_ACTIONS:
            raise InvalidInput(
                f"action must be one of {', '.join(FEEDBACK_ACTIONS)}", data={"field": "action"}
            )

        def job(tx: WriteTx) -> Decided:
            s = suggestions.fetch(tx.conn, suggestion_id)
            if s is None:
                raise _gone(tx.conn, suggestion_id)
            if if_content_hash is not None and s.digest != if_content_hash:
                raise Conflict(
                    f"suggestion {s.id} changed since it was shown: the agent proposed it again "
                    "with another text; look at it again",
                    data={"id": s.id, "changed": "proposal"},
                )
            result = self._apply(tx, caller, s, edits=edits, if_revision=if_revision, action=action)
            now = self._clock.now_ms()
            if allow_flags:
                for flag in s.flags:
                    if flag.family != "secret":
                        self._allowlist.allow_in(tx, caller, flag.fingerprint, flag.rule, now=now)
            tx.conn.execute("DELETE FROM suggestion WHERE id = ?", (s.id,))
            suggestions.record_decision(
                tx.conn,
                s,
                "adopted",
                by=caller.actor,
                at=now,
                memory_id=result.memory_id,
                edited=result.edited,
            )
            audit.record(
                tx,
                caller,
                "adopt",
                memory_id=result.memory_id,
                revision=result.revision,
                detail={
                    "suggestion": s.id,
                    "op": s.op.value,
                    "agent": s.agent,
                    "edited": list(result.edited),
                },
                at=now,
            )
            return result

        return self._store.writer.run(job)

    def reject(self, caller: Caller, suggestion_id: str, reason: str | None = None) -> Decided:
        """Reject a proposal: it is deleted and the decision kept (with `reason`), so the same
        proposal coming back says it was rejected before.

        Raises:
            Forbidden: the caller is not a person.
            NotFound: no such suggestion.
            InvalidInput: the reason is too long, or holds a secret (`reason_code: secret`).
        """
        self._person(caller)
        check_reason("reason", reason)
        self._gate.refuse_secret({"reason": reason})

        def job(tx: WriteTx) -> Decided:
            s = suggestions.fetch(tx.conn, suggestion_id)
            if s is None:
                raise _gone(tx.conn, suggestion_id)
            now = self._clock.now_ms()
            tx.conn.execute("DELETE FROM suggestion WHERE id = ?", (s.id,))
            suggestions.record_decision(
                tx.conn, s, "rejected", by=caller.actor, at=now, reason=reason
            )
            audit.record(
                tx,
                caller,
                "reject",
                detail={"suggestion": s.id, "op": s.op.value, "agent": s.agent},
                at=now,
            )
            return Decided(s.id, s.op, "rejected", s.target_id)

        return self._store.writer.run(job)

    def decide_many(
        self,
        caller: Caller,
        ids: Sequence[str],
        *,
        adopt: bool,
        reason: str | None = None,
        seen: Mapping[str, str | None] | None = None,
    ) -> list[Decided | CairnError]:
        """Adopt (unedited) or reject several proposals; each succeeds or fails on its own.
        `seen` maps a proposal to the hash of the text the person saw (see `adopt`)."""
        self._person(caller)
        seen = seen or {}
        out: list[Decided | CairnError] = []
        for sid in ids:
            try:
                out.append(
                    self.adopt(caller, sid, if_content_hash=seen.get(sid))
                    if adopt
                    else self.reject(caller, sid, reason)
                )
            except CairnError as e:
                out.append(e)
        return out

    # -- applying one adoption -------------------------------------------------------------

    def _apply(
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
        _refuse_what_does_not_apply(s, edits=edits, if_revision=if_revision, action=action)
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
        if s.op is Op.FORGET:
            if if_revision is not None and target.revision != if_revision:
                raise Conflict(
                    f"memory {target.id} changed since you looked at it (it is at revision "
                    f"{target.revision}, you saw {if_revision}); look at it again",
                    data={"id": target.id, "current_revision": target.revision},
                )
            self._memories.forget_in(tx, person, target.id, s.note)
            return Decided(s.id, s.op, "adopted", target.id, target.revision + 1)
        if s.op is Op.FEEDBACK:
            if if_revision is not None and target.revision != if_revision:
                raise Conflict(
                    f"memory {target.id} changed since you looked at it (it is at revision "
                    f"{target.revision}, you saw {if_revision}); look at it again",
                    data={"id": target.id, "current_revision": target.revision},
                )
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
        changes = self._changes(s, edits)
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

    @staticmethod
    def _changes(s: Suggestion, edits: dict[str, Any]) -> dict[str, Any]:
        """The person's edits that change the proposal, in the shape the memory keeps, in the
        order given."""
        changes: dict[str, Any] = {}
        for name, raw in edits.items():
            value = _edit_value(name, raw)
            if value != getattr(s, name):
                changes[name] = value
        return changes

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
            return _cleared(name, value)

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
        changes = self._changes(s, edits)
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
            **{name: _cleared(name, value) for name, value in changes.items()},
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
        values = {k: _cleared(k, _edit_value(k, v)) for k, v in edits.items()}
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


@dataclass(frozen=True)
class Choices:
    """What the proposals waiting have to filter by, each sorted."""

    agents: tuple[str, ...]
    kinds: tuple[str, ...]
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Ranked:
    """A waiting proposal's place in the queue: a window that holds it as read at these `hits`
    and `last_seen` holds it as it is (an agent proposing it again changes both)."""

    id: str
    hits: int
    last_seen: int


# The queue's order: most seen, then most recent, then by id (an order that pages).
_ORDER = "ORDER BY hits DESC, last_seen DESC, id ASC"
# A proposal's kind as the window files it: its own, else its memory's, else its operation.
_KIND = (
    "coalesce(suggestion.kind, (SELECT m.kind FROM memory m WHERE m.id = suggestion.target_id "
    "AND suggestion.op != 'identity'), suggestion.op)"
)


def _check_page(limit: int, offset: int) -> None:
    if not 1 <= limit <= 1000:
        raise InvalidInput("limit must be between 1 and 1000", data={"field": "limit"})
    if offset < 0:
        raise InvalidInput("offset must be 0 or more", data={"field": "offset"})


def _narrowing(
    op: Op | None,
    target_id: str | None,
    agent: str | None,
    kind: str | None = None,
    reason: str | None = None,
) -> tuple[str, list[str]]:
    """The WHERE clause (empty for none) and its parameters keeping the proposals of `op`,
    `target_id`, `agent`, `kind` (as `_KIND` files it) and `reason` (a reason code)."""
    where, params = [], []
    for test, value in (
        ("op = ?", op.value if op is not None else None),
        ("target_id = ?", target_id),
        ("agent = ?", agent),
        (f"{_KIND} = ?", kind),
        (
            "EXISTS (SELECT 1 FROM json_each(suggestion.reasons) AS r "
            "WHERE json_extract(r.value, '$.code') = ?)",
            reason,
        ),
    ):
        if value is not None:
            where.append(test)
            params.append(value)
    return ("WHERE " + " AND ".join(where) if where else ""), params


def check_reason(name: str, reason: str | None) -> None:
    """A rejection's reason fits what is kept; `name` is what the caller called it (the CLI's
    `--reason`), so it is checked the same way before a confirmation as after it.

    Raises:
        InvalidInput: the reason is longer than `MAX_REASON_CHARS`, naming its length.
    """
    check_note(
        name,
        reason,
        limit=MAX_REASON_CHARS,
        too_long=InvalidInput,
        limit_words="at most {limit} are kept",
        field="reason",
        controls=False,
    )


def _refuse_what_does_not_apply(
    s: Suggestion, *, edits: Mapping[str, Any], if_revision: int | None, action: str | None
) -> None:
    """An option the proposal does not take is refused, never dropped: until 2026-11-30 an add
    proposal adopted with action 'forget' was stored, and feedback adopted with edits and action
    'archive' was archived without them.

    Raises:
        InvalidInput: naming the option (`action`, `if_revision`, `edits`) and the proposal.
    """
    kind = f"{s.id} is {_a(s.op.value)} proposal"
    if action is not None and s.op is not Op.FEEDBACK:
        raise InvalidInput(
            f"action applies to feedback proposals only; {kind}", data={"field": "action"}
        )
    if if_revision is not None and s.op is Op.ADD:
        raise InvalidInput(
            f"if_revision applies to a proposal about a memory or an identity document; {kind} "
            "(a new memory has no revision yet)",
            data={"field": "if_revision"},
        )
    if edits and s.op is Op.FORGET:
        raise InvalidInput(
            f"edits do not apply to a proposal to forget ({s.id}): adopt or reject it as it is",
            data={"field": next(iter(edits))},
        )
    if edits and s.op is Op.FEEDBACK and action in ("archive", "forget"):
        raise InvalidInput(
            f"edits are not applied with action {action!r}; to change the memory, adopt "
            f"{s.id} with action 'edit'",
            data={"field": "edits"},
        )


def _a(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _gone(conn: sqlite3.Connection, suggestion_id: str) -> NotFound:
    """The error for a suggestion that does not wait: one decided already says how, by whom
    and when (in `data`), so a second person or window deciding it learns why it is gone."""
    known = suggestions.decision_of(conn, suggestion_id)
    if known is None:
        return NotFound(f"suggestion {suggestion_id} not found", data={"id": suggestion_id})
    decision, by, at = known
    data = {"id": suggestion_id, "decision": decision, "decided_by": by, "decided_at": at}
    if decision == "evicted":
        return NotFound(
            f"suggestion {suggestion_id} was dropped when the review queue was full", data=data
        )
    who = "the person" if by == Surface.HUMAN.value else by
    return NotFound(f"suggestion {suggestion_id} was already {decision} by {who}", data=data)


def _edit_value(name: str, raw: Any) -> Any:
    """A person's edit in the shape the memory keeps (a Scope, a tuple of tags).

    Raises:
        InvalidInput: an unknown scope; an importance that is not a whole number from 1 to 5
            (until 2026-11-30 an emptied one was stored as the default 3 or dropped, and "4"
            crashed).
    """
    if name == "importance":
        return check_importance(
            raw, f"importance takes a whole number from 1 to 5 and cannot be emptied, not {raw!r}"
        )
    if name == "scope" and raw is not None and not isinstance(raw, Scope):
        try:
            return Scope(raw)
        except ValueError as e:
            raise InvalidInput(f"unknown scope {raw!r}", data={"field": "scope"}) from e
    if name == "tags" and raw is not None:
        return tuple(raw)
    if name in CLEARABLE and isinstance(raw, str) and not raw.strip():
        return None  # emptied: the same edit as None
    return raw


def _cleared(name: str, value: Any) -> Any:
    """An edited value as an update takes it: an emptied summary or keywords is "" (cleared),
    not None (which an update reads as "unchanged")."""
    return "" if value is None and name in CLEARABLE else value
