"""The review queue's rows: proposals waiting for a person, how a proposal seen again is merged
into the one already waiting, the bound on the queue, and the record of past decisions.

A suggestion is not a memory: it is never searched and never reaches a model; it waits until a
person adopts it (through the write path, as the person's decision) or rejects it.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from core.clock import FUTURE_SLACK_MS
from core.database import in_lists
from core.model import Scope
from core.similarity import (
    REOBSERVE_THRESHOLD,
    TermSets,
    best_term_matches,
    is_superset,
    terms_of,
)
from core.validation import content_hash


class Op(StrEnum):
    """What a suggestion would do if a person adopted it."""

    ADD = "add"  # a new memory
    UPDATE = "update"  # change an existing memory (target_id at base_revision)
    SUPERSEDE = "supersede"  # replace target_id with the proposed memory, keeping both
    FORGET = "forget"  # forget target_id
    FEEDBACK = "feedback"  # an agent said target_id is wrong or stale
    IDENTITY = "identity"  # change an identity document (target_id names it)


@dataclass(frozen=True)
class Reason:
    """Why a suggestion waits: `code` is policy, scanner, not_owner, mass_forget, similar,
    feedback or identity; `detail` names the rule (kind:idea, scope:user, a scanner rule, the
    owner...)."""

    code: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "detail": self.detail}


@dataclass(frozen=True)
class Flag:
    """A scanner finding on one field of the proposal (never the matched text itself)."""

    field: str
    family: str
    rule: str
    fingerprint: str

    def to_dict(self) -> dict[str, str]:
        return {
            "field": self.field,
            "family": self.family,
            "rule": self.rule,
            "fingerprint": self.fingerprint,
        }


@dataclass(frozen=True)
class Suggestion:
    id: str
    op: Op
    agent: str
    verified: bool
    target_id: str | None = None
    base_revision: int | None = None
    replacement_id: str | None = None  # supersede by an existing memory: that memory's id
    content: str | None = None
    summary: str | None = None
    kind: str | None = None
    scope: Scope | None = None
    workspace_id: str | None = None
    session_id: str | None = None
    tags: tuple[str, ...] = ()
    keywords: str | None = None
    importance: int | None = None
    # The expiry it sets, counted from the proposal; for a change of a memory None keeps the
    # memory's own, unless `clear_expiry` - then it never expires.
    ttl_seconds: int | None = None
    source: str | None = None
    origin: str | None = None
    dedupe_key: str | None = None
    reasons: tuple[Reason, ...] = ()
    flags: tuple[Flag, ...] = ()
    similar: tuple[str, ...] = ()
    note: str | None = None  # the agent's reason, or its feedback note
    verdict: str | None = None  # for feedback: wrong or stale
    hits: int = 1
    first_seen: int = 0
    last_seen: int = 0
    rejected_before: str | None = None  # the reason a person gave when they rejected it before
    pinned: bool | None = None  # the pin it sets; None leaves a memory's as it is
    clear_expiry: bool = False  # a change that makes its memory never expire

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "op": self.op.value,
            "agent": self.agent,
            "verified": self.verified,
            "target_id": self.target_id,
            "base_revision": self.base_revision,
            "replacement_id": self.replacement_id,
            "content": self.content,
            "summary": self.summary,
            "kind": self.kind,
            "scope": self.scope.value if self.scope else None,
            "workspace_id": self.workspace_id,
            "session_id": self.session_id,
            "tags": list(self.tags),
            "keywords": self.keywords,
            "importance": self.importance,
            "ttl_seconds": self.ttl_seconds,
            "expires_at": self.expires_at,
            "clear_expiry": self.clear_expiry,
            "pinned": self.pinned,
            "source": self.source,
            "origin": self.origin,
            "dedupe_key": self.dedupe_key,
            "reasons": [r.to_dict() for r in self.reasons],
            "flags": [f.to_dict() for f in self.flags],
            "similar": list(self.similar),
            "note": self.note,
            "verdict": self.verdict,
            "hits": self.hits,
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
            "rejected_before": self.rejected_before,
        }

    @property
    def expires_at(self) -> int | None:
        """When the memory this proposes expires (ms): the agent's time to live counts from the
        proposal, not from a person's adoption."""
        return self.first_seen + self.ttl_seconds * 1000 if self.ttl_seconds else None

    @property
    def digest(self) -> str | None:
        """What a past decision is matched on: the content's hash (None without content: it is
        then matched on the target)."""
        if self.content is not None:
            return content_hash(self.content)
        return None


def new_suggestion_id(now_ms: int) -> str:
    return f"s_{now_ms:012x}{secrets.token_hex(6)}"


_COLUMNS = (
    "id",
    "op",
    "target_id",
    "base_revision",
    "replacement_id",
    "content",
    "summary",
    "kind",
    "scope",
    "workspace_id",
    "session_id",
    "tags",
    "keywords",
    "importance",
    "ttl_seconds",
    "source",
    "origin",
    "dedupe_key",
    "agent",
    "verified",
    "reasons",
    "findings",
    "similar",
    "note",
    "verdict",
    "content_hash",
    "hits",
    "first_seen",
    "last_seen",
    "pinned",
    "clear_expiry",
)
SELECT = f"SELECT {', '.join(_COLUMNS)} FROM suggestion"


def _values(s: Suggestion) -> tuple[Any, ...]:
    return (
        s.id,
        s.op.value,
        s.target_id,
        s.base_revision,
        s.replacement_id,
        s.content,
        s.summary,
        s.kind,
        s.scope.value if s.scope else None,
        s.workspace_id,
        s.session_id,
        json.dumps(list(s.tags), ensure_ascii=False),
        s.keywords,
        s.importance,
        s.ttl_seconds,
        s.source,
        s.origin,
        s.dedupe_key,
        s.agent,
        int(s.verified),
        json.dumps([r.to_dict() for r in s.reasons]),
        json.dumps([f.to_dict() for f in s.flags]),
        json.dumps(list(s.similar)),
        s.note,
        s.verdict,
        s.digest,
        s.hits,
        s.first_seen,
        s.last_seen,
        None if s.pinned is None else int(s.pinned),
        int(s.clear_expiry),
    )


def from_row(row: Sequence[Any]) -> Suggestion:
    r = dict(zip(_COLUMNS, row, strict=True))
    return Suggestion(
        id=r["id"],
        op=Op(r["op"]),
        agent=r["agent"],
        verified=bool(r["verified"]),
        target_id=r["target_id"],
        base_revision=r["base_revision"],
        replacement_id=r["replacement_id"],
        content=r["content"],
        summary=r["summary"],
        kind=r["kind"],
        scope=Scope(r["scope"]) if r["scope"] else None,
        workspace_id=r["workspace_id"],
        session_id=r["session_id"],
        tags=tuple(json.loads(r["tags"])),
        keywords=r["keywords"],
        importance=r["importance"],
        ttl_seconds=r["ttl_seconds"],
        source=r["source"],
        origin=r["origin"],
        dedupe_key=r["dedupe_key"],
        reasons=tuple(Reason(x["code"], x["detail"]) for x in json.loads(r["reasons"])),
        flags=tuple(Flag(**x) for x in json.loads(r["findings"])),
        similar=tuple(json.loads(r["similar"])),
        note=r["note"],
        verdict=r["verdict"],
        hits=int(r["hits"]),
        first_seen=int(r["first_seen"]),
        last_seen=int(r["last_seen"]),
        pinned=None if r["pinned"] is None else bool(r["pinned"]),
        clear_expiry=bool(r["clear_expiry"]),
    )


def fetch(conn: sqlite3.Connection, suggestion_id: str) -> Suggestion | None:
    """The waiting suggestion (without `rejected_before`: `with_history` adds it for showing)."""
    row = conn.execute(f"{SELECT} WHERE id = ?", (suggestion_id,)).fetchone()
    return from_row(row) if row else None


def waiting_among(conn: sqlite3.Connection, ids: Iterable[str]) -> frozenset[str]:
    """Which of `ids` are suggestions still waiting (the others were decided or dropped)."""
    found: set[str] = set()
    for chunk, marks in in_lists(list(ids)):
        rows = conn.execute(f"SELECT id FROM suggestion WHERE id IN ({marks})", chunk)
        found.update(str(r[0]) for r in rows)
    return frozenset(found)


def decision_of(conn: sqlite3.Connection, suggestion_id: str) -> tuple[str, str, int] | None:
    """How a suggestion no longer waiting was decided: (decision, decided_by, decided_at)."""
    row = conn.execute(
        "SELECT decision, decided_by, decided_at FROM review_decision WHERE suggestion_id = ? "
        "ORDER BY id DESC LIMIT 1",
        (suggestion_id,),
    ).fetchone()
    return (str(row[0]), str(row[1]), int(row[2])) if row else None


def with_history(conn: sqlite3.Connection, s: Suggestion) -> Suggestion:
    """`s` with `rejected_before` filled from past decisions on the same proposal."""
    digest = s.digest
    if digest is not None:
        row = conn.execute(
            "SELECT coalesce(reason, '') FROM review_decision WHERE decision = 'rejected' AND "
            "content_hash = ? AND op = ? AND coalesce(target_id, '') = ? "
            "ORDER BY decided_at DESC LIMIT 1",
            (digest, s.op.value, s.target_id or ""),
        ).fetchone()
    elif s.target_id is not None:
        row = conn.execute(
            "SELECT coalesce(reason, '') FROM review_decision WHERE decision = 'rejected' AND "
            "op = ? AND target_id = ? AND content_hash IS NULL ORDER BY decided_at DESC LIMIT 1",
            (s.op.value, s.target_id),
        ).fetchone()
    else:
        row = None
    if row is None:
        return s
    return replace(s, rejected_before=row[0] or "rejected without a reason")


def _merge_key(s: Suggestion) -> tuple[str, str, str, str]:
    return (s.op.value, s.scope.value if s.scope else "", s.workspace_id or "", s.session_id or "")


def find_same(
    conn: sqlite3.Connection, s: Suggestion, idf: Callable[[str], float], terms: TermSets
) -> Suggestion | None:
    """The waiting suggestion that `s` is a re-observation of: the same target (for changes of
    an existing memory or document), or for a new memory the same scope and workspace with
    content at least REOBSERVE_THRESHOLD alike whose terms hold all of the other's, or all of
    whose terms the other holds. `terms` keeps the waiting texts' term sets from one proposal
    to the next."""
    if s.target_id is not None:
        for row in conn.execute(
            f"{SELECT} WHERE op = ? AND target_id = ? ORDER BY last_seen DESC",
            (s.op.value, s.target_id),
        ):
            candidate = from_row(row)
            if _same_change(candidate, s):
                return candidate
        return None
    if s.content is None:
        return None
    key = (
        "op = ? AND target_id IS NULL AND coalesce(scope, '') = ? "
        "AND coalesce(workspace_id, '') = ? AND coalesce(session_id, '') = ?"
    )
    waiting = conn.execute(
        # every suggestion with content has its hash (see _values)
        f"SELECT id, content_hash FROM suggestion WHERE {key} AND content_hash IS NOT NULL",
        _merge_key(s),
    ).fetchall()
    mine = s.digest
    for sid, digest in waiting:
        if digest == mine:
            return fetch(conn, sid)
    missing = terms.missing(digest for _, digest in waiting)
    for chunk, marks in in_lists(missing):
        for digest, content in conn.execute(
            f"SELECT content_hash, content FROM suggestion WHERE content_hash IN ({marks})", chunk
        ):
            terms.add(digest, content)
    mine_terms = terms_of(s.content)
    held = {sid: terms[digest] for sid, digest in waiting}
    found = best_term_matches(mine_terms, held.items(), idf, threshold=REOBSERVE_THRESHOLD)
    # Alike is not the same: only a text saying no more than the other, or all of it and more
    # (which then replaces it), is the same proposal. "... in Redis" and "... in S3" are two
    # (until 2026-11-30 the second was merged into the first and its text lost).
    for sid, _ in found:
        if mine_terms <= held[sid] or held[sid] <= mine_terms:
            return fetch(conn, sid)
    return None


def _same_change(waiting: Suggestion, seen: Suggestion) -> bool:
    """Whether two proposals for one target propose the same thing: the same fields, and the
    same text or one saying all the other says and more. A different change (another agent's
    other wording of the memory) is a proposal of its own - merging it would drop its text and
    count the two as agreeing."""
    same_fields = (
        waiting.replacement_id == seen.replacement_id
        and waiting.verdict == seen.verdict
        and waiting.kind == seen.kind
        and waiting.scope == seen.scope
        and waiting.importance == seen.importance
        # until 2026-11-30 a change of only these merged into another agent's proposal for the
        # same memory, and was lost
        and waiting.summary == seen.summary
        and waiting.tags == seen.tags
        and waiting.keywords == seen.keywords
        and waiting.source == seen.source
        and waiting.pinned == seen.pinned
    )
    if not same_fields:
        return False
    if waiting.content is None or seen.content is None:
        return waiting.content is None and seen.content is None
    if waiting.digest == seen.digest:
        return True
    mine, theirs = terms_of(seen.content), terms_of(waiting.content)
    return is_superset(mine, theirs) or is_superset(theirs, mine)


def insert(conn: sqlite3.Connection, s: Suggestion) -> None:
    marks = ", ".join("?" for _ in _COLUMNS)
    conn.execute(f"INSERT INTO suggestion ({', '.join(_COLUMNS)}) VALUES ({marks})", _values(s))


def bump(conn: sqlite3.Connection, waiting: Suggestion, seen: Suggestion, now: int) -> Suggestion:
    """Count a re-observation; a strictly more complete text replaces the waiting one, and the
    newest sighting's time to live decides when it expires."""
    # The newest sighting decides when it expires (counted from its own time): a fact seen
    # again with a new time to live - or with none - is not kept to the first one's; for a
    # change, whether it clears the memory's expiry too.
    ttl = (
        None
        if seen.expires_at is None
        else max(1, -((waiting.first_seen - seen.expires_at) // 1000))
    )
    merged = replace(
        waiting,
        hits=waiting.hits + 1,
        last_seen=now,
        ttl_seconds=ttl,
        clear_expiry=seen.clear_expiry,
        reasons=tuple(dict.fromkeys((*waiting.reasons, *seen.reasons))),
        flags=tuple(dict.fromkeys((*waiting.flags, *seen.flags))),
        similar=tuple(dict.fromkeys((*waiting.similar, *seen.similar))),
    )
    if (
        seen.content is not None
        and waiting.content is not None
        and seen.content != waiting.content
        and is_superset(terms_of(seen.content), terms_of(waiting.content))
    ):
        merged = replace(
            merged,
            content=seen.content,
            summary=seen.summary or waiting.summary,
            tags=tuple(dict.fromkeys((*waiting.tags, *seen.tags))),
            keywords=seen.keywords or waiting.keywords,
            base_revision=seen.base_revision or waiting.base_revision,
        )
    if seen.op is Op.FEEDBACK:
        merged = replace(merged, verdict=seen.verdict, note=seen.note or waiting.note)
    conn.execute("DELETE FROM suggestion WHERE id = ?", (waiting.id,))
    insert(conn, merged)
    return merged


def bring_back(conn: sqlite3.Connection, now_ms: int) -> int:
    """Set the times waiting proposals were first and last seen that are after now
    (`core.clock.after_now`) to now: one seen while the clock read 2100 would otherwise top the
    queue (most recent first) and be the last evicted for good. Returns how many it set."""
    return conn.execute(
        "UPDATE suggestion SET first_seen = min(first_seen, ?), last_seen = ? WHERE last_seen > ?",
        (now_ms, now_ms, now_ms + FUTURE_SLACK_MS),
    ).rowcount


def evict_over(conn: sqlite3.Connection, cap: int, *, keep: str) -> list[Suggestion]:
    """Remove the suggestions beyond `cap`: fewest hits first, then the longest unseen - never
    `keep` (the one just proposed, whose id the agent is being told)."""
    total = int(conn.execute("SELECT count(*) FROM suggestion").fetchone()[0])
    if total <= cap:
        return []
    rows = conn.execute(
        f"{SELECT} WHERE id != ? ORDER BY hits ASC, last_seen ASC, id ASC LIMIT ?",
        (keep, total - cap),
    ).fetchall()
    gone = [from_row(r) for r in rows]
    conn.executemany("DELETE FROM suggestion WHERE id = ?", [(g.id,) for g in gone])
    return gone


def record_decision(
    conn: sqlite3.Connection,
    s: Suggestion,
    decision: str,
    *,
    by: str,
    at: int,
    reason: str | None = None,
    memory_id: str | None = None,
    edited: Sequence[str] = (),
) -> None:
    """Keep what was decided (never the content: a hash to recognise the proposal again)."""
    conn.execute(
        "INSERT INTO review_decision (suggestion_id, op, target_id, content_hash, scope, "
        "workspace_id, agent, decision, reason, decided_by, decided_at, memory_id, edited) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            s.id,
            s.op.value,
            s.target_id,
            s.digest,
            s.scope.value if s.scope else None,
            s.workspace_id,
            s.agent,
            decision,
            reason,
            by,
            at,
            memory_id,
            json.dumps(list(edited)) if edited else None,
        ),
    )


def bump_counter(conn: sqlite3.Connection, name: str, by: int = 1) -> None:
    conn.execute(
        "INSERT INTO counter (name, value) VALUES (?, ?) "
        "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
        (name, by),
    )


def counter(conn: sqlite3.Connection, name: str) -> int:
    row = conn.execute("SELECT value FROM counter WHERE name = ?", (name,)).fetchone()
    return int(row[0]) if row else 0
