"""Deciding proposals: adopting one (with the person's edits) or rejecting it, each decision
kept, audited and said again to whoever decides the same proposal later."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from core import audit, suggestions
from core.adoption import Adoption, Decided
from core.allowlist import Allowlist
from core.clock import Clock
from core.errors import CairnError, Conflict, InvalidInput, NotFound
from core.governance import Gate, check_note
from core.identity import IdentityService
from core.memory_service import MemoryService
from core.model import Caller, Surface
from core.review_edits import EDITABLE, FEEDBACK_ACTIONS
from core.store import Store
from core.writer import WriteTx

MAX_REASON_CHARS = 500  # a rejection's reason


class ReviewDecisions:
    """Adopt and reject proposals, for a person: `ReviewService` says who may."""

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
        self._store = store
        self._clock = clock
        self._gate = gate
        self._allowlist = allowlist
        self._adoption = Adoption(clock, memories, gate=gate, identity=identity)

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
        """As `ReviewService.adopt`."""
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
                raise gone(tx.conn, suggestion_id)
            if if_content_hash is not None and s.digest != if_content_hash:
                raise Conflict(
                    f"suggestion {s.id} changed since it was shown: the agent proposed it again "
                    "with another text; look at it again",
                    data={"id": s.id, "changed": "proposal"},
                )
            result = self._adoption.apply(
                tx, caller, s, edits=edits, if_revision=if_revision, action=action
            )
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
        """As `ReviewService.reject`."""
        check_reason("reason", reason)
        self._gate.refuse_secret({"reason": reason})

        def job(tx: WriteTx) -> Decided:
            s = suggestions.fetch(tx.conn, suggestion_id)
            if s is None:
                raise gone(tx.conn, suggestion_id)
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
        """As `ReviewService.decide_many`."""
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


def gone(conn: sqlite3.Connection, suggestion_id: str) -> NotFound:
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
