"""Dedupe and idempotency keys stored before 2026-11-30 with a carriage return or NEL, and their
repair (schema 2.3).

Until then a key was kept as the agent sent it; since then every key is read with its line breaks
as line feeds (`normalize_breaks`), so a key stored as `editor\\r` no longer matched the same key
sent again: the agent got a second memory instead of its first one updated, a second write instead
of its first write's answer. Schema 2.3 stores each such key as it is read now.

Two keys an old Cairn told apart may read the same now (`k\\r` and `k\\n`: two memories). One key
names one memory, so one takes the key and the other keeps its old key as it was - nothing is
lost, the memory stays where a person finds it, and an audit event `dedupe_key_kept` says which
memory holds the key. The one that takes it is the one already holding the key as it reads now
(an agent sending either spelling has reached it since 2026-11-30); else the live memory changed
last, before a superseded one, before a forgotten one. For idempotency keys, the row already
holding the key as it reads now keeps answering; else the oldest (a retry gets the first answer);
an old row left as it was goes when its retention ends.
"""

from __future__ import annotations

import json
import logging
import sqlite3

from core.validation import normalize_breaks

log = logging.getLogger(__name__)

KEPT_ACTION = "dedupe_key_kept"
# the memory that takes a key several old keys read as: live before history before forgotten,
# then the one changed last
_RANK = {"active": 2, "archived": 2, "superseded": 1, "forgotten": 0}


def takes_key(status: str, updated_at: int, made: int) -> tuple[int, int, int]:
    """How a memory ranks for a key several old keys read as, when none spells it as it reads
    now - the highest takes it: live before history before forgotten, then the one changed
    last, then the one made last (`made`: its place in the store, or in an archive)."""
    return (_RANK.get(status, 0), updated_at, made)


def repair_keys(conn: sqlite3.Connection, now: int) -> None:
    """Inside the migration's transaction: store every dedupe key (of memories and waiting
    proposals) and idempotency key holding a CR or NEL as it is read now; what it records is
    stamped `now` (Cairn's clock, ms)."""
    _dedupe_keys(conn, now)
    _idempotency_keys(conn)
    # a carriage return is char(13), NEL (U+0085) char(133)
    for (key,) in conn.execute(
        "SELECT DISTINCT dedupe_key FROM suggestion "
        "WHERE instr(dedupe_key, char(13)) > 0 OR instr(dedupe_key, char(133)) > 0"
    ).fetchall():
        conn.execute(
            "UPDATE suggestion SET dedupe_key = ? WHERE dedupe_key = ?",
            (normalize_breaks(key), key),
        )


def _dedupe_keys(conn: sqlite3.Connection, now: int) -> None:
    groups: dict[tuple[str, str, str, str], list[tuple[str, str, int, int, str]]] = {}
    for mid, scope, ws, session, key, status, updated_at, seq in conn.execute(
        "SELECT id, scope, coalesce(workspace_id, ''), coalesce(session_id, ''), dedupe_key, "
        "status, updated_at, seq FROM memory "
        "WHERE instr(dedupe_key, char(13)) > 0 OR instr(dedupe_key, char(133)) > 0 ORDER BY seq"
    ).fetchall():
        where = (str(scope), str(ws), str(session), normalize_breaks(str(key)))
        groups.setdefault(where, []).append((str(mid), str(key), int(updated_at), int(seq), status))
    for (scope, ws, session, key), old in groups.items():
        row = conn.execute(
            "SELECT id FROM memory WHERE scope = ? AND coalesce(workspace_id, '') = ? "
            "AND coalesce(session_id, '') = ? AND dedupe_key = ?",
            (scope, ws, session, key),
        ).fetchone()
        if row is not None:
            holder = str(row[0])
        else:
            taker = max(old, key=lambda m: takes_key(m[4], m[2], m[3]))
            holder = taker[0]
            conn.execute("UPDATE memory SET dedupe_key = ? WHERE id = ?", (key, holder))
            old.remove(taker)
        for mid, raw, *_ in old:
            if _kept(conn, mid, raw, holder):  # said when the store was repaired before
                continue
            conn.execute(
                "INSERT INTO audit (at, actor_kind, actor, verified, action, memory_id, detail) "
                "VALUES (?, 'system', 'system', 0, ?, ?, ?)",
                (now, KEPT_ACTION, mid, json.dumps({"key": raw, "held_by": holder})),
            )
            log.warning(
                "memory %s keeps its dedupe key %r, stored before 2026-11-30: memory %s holds "
                "that key as it reads now (%r)",
                mid,
                raw,
                holder,
                key,
            )


def _kept(conn: sqlite3.Connection, mid: str, key: str, holder: str) -> bool:
    """Whether memory `mid` was told before that it keeps its old `key` beside `holder` (a repair
    runs again when an older Cairn writes old keys again, `core/old_writes.py`)."""
    row = conn.execute(
        "SELECT 1 FROM audit WHERE memory_id = ? AND action = ? "
        "AND json_extract(detail, '$.key') = ? AND json_extract(detail, '$.held_by') = ?",
        (mid, KEPT_ACTION, key, holder),
    ).fetchone()
    return row is not None


def _idempotency_keys(conn: sqlite3.Connection) -> None:
    groups: dict[tuple[str, str], list[str]] = {}
    for actor, key in conn.execute(
        "SELECT actor, key FROM idempotency WHERE instr(key, char(13)) > 0 "
        "OR instr(key, char(133)) > 0 ORDER BY created_at, key"
    ).fetchall():
        groups.setdefault((str(actor), normalize_breaks(str(key))), []).append(str(key))
    for (actor, key), old in groups.items():
        taken = conn.execute(
            "SELECT 1 FROM idempotency WHERE actor = ? AND key = ?", (actor, key)
        ).fetchone()
        if taken is None:
            conn.execute(
                "UPDATE idempotency SET key = ? WHERE actor = ? AND key = ?", (key, actor, old[0])
            )
