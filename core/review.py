"""The review queue as a service: agents' proposals come in, a person adopts (with edits) or
rejects them. Only a person's caller can decide; every decision runs the write path as the
person's own and is audited with what was changed.

`ReviewService` is the door: it says who may, reads the queue itself and hands each decision to
its parts - deciding (core/review_decisions.py), applying one adoption (core/adoption.py), a
person's edits (core/review_edits.py). Proposals come in through `ReviewQueue`
(core/review_queue.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core import suggestions
from core.adoption import Decided
from core.clock import Clock
from core.errors import CairnError, Forbidden, InvalidInput
from core.identity import current_in
from core.model import Caller
from core.records import fetch_memory
from core.review_decisions import ReviewDecisions, gone
from core.store import Store
from core.suggestions import Op, Suggestion


class ReviewService:
    """List, adopt and reject proposals - a person's work."""

    def __init__(self, store: Store, clock: Clock, decisions: ReviewDecisions) -> None:
        """`decisions` adopts and rejects; this service reads the queue and says who may."""
        self._store = store
        self._clock = clock
        self._decisions = decisions

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
            raise gone(conn, suggestion_id)
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

    # -- deciding (core/review_decisions.py) -------------------------------------------------

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
        return self._decisions.adopt(
            caller,
            suggestion_id,
            edits=edits,
            if_revision=if_revision,
            allow_flags=allow_flags,
            action=action,
            if_content_hash=if_content_hash,
        )

    def reject(self, caller: Caller, suggestion_id: str, reason: str | None = None) -> Decided:
        """Reject a proposal: it is deleted and the decision kept (with `reason`), so the same
        proposal coming back says it was rejected before.

        Raises:
            Forbidden: the caller is not a person.
            NotFound: no such suggestion.
            InvalidInput: the reason is too long, or holds a secret (`reason_code: secret`).
        """
        self._person(caller)
        return self._decisions.reject(caller, suggestion_id, reason)

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
        return self._decisions.decide_many(caller, ids, adopt=adopt, reason=reason, seen=seen)


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
