"""One health snapshot, cheap to compute: counts, sizes, activity, failures and warnings.

Health never carries memory content or query text. A person sees everything; an agent sees only
what concerns its own workspace and itself.
"""

from __future__ import annotations

import glob
import json
import os
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core import audit_actions, audit_files
from core.activity import Activity
from core.clock import Clock
from core.failures import BackgroundFailures
from core.horizon import horizon_sql
from core.model import Caller
from core.paths import Paths
from core.store import Store


@dataclass
class Warnings:
    """Standing conditions a person should know about (no keychain, an invalid policy file...)."""

    items: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def set(self, key: str, message: str) -> None:
        with self._lock:
            self.items[key] = message

    def clear(self, key: str) -> None:
        with self._lock:
            self.items.pop(key, None)

    def snapshot(self) -> dict[str, str]:
        with self._lock:
            return dict(self.items)


class HealthService:
    def __init__(
        self,
        store: Store,
        *,
        paths: Paths,
        clock: Clock,
        activity: Activity,
        failures: BackgroundFailures,
        warnings: Warnings,
        notes_errors: Callable[[], list[dict[str, str]]] = list,
        clock_warnings: Callable[[], dict[str, str]] = dict,
    ) -> None:
        """`clock_warnings`: `clock_wrong` and `clock_stepped` (`core.clock.ClockWatch`)."""
        self.notes_errors = notes_errors
        self._clock_warnings = clock_warnings
        self._store = store
        self._paths = paths
        self._clock = clock
        self.activity = activity
        self._failures = failures
        self.warnings = warnings

    def snapshot(self, caller: Caller) -> dict[str, Any]:
        conn = self._store.read_db.conn()
        now = self._clock.now_ms()
        where, params = horizon_sql(caller)
        columns = ("scope", "kind", "status", "tier")
        counts: dict[str, Counter[str]] = {c: Counter() for c in columns}
        expired = 0
        with self._store.read_db.atomic():
            # One pass over the memories (not one per breakdown): a few hundred groups at most.
            for *values, n, gone in conn.execute(
                "SELECT m.scope, m.kind, m.status, m.tier, count(*), "
                "sum(m.expires_at IS NOT NULL AND m.expires_at <= ?) "
                f"FROM memory m WHERE {where} AND m.status != 'forgotten' "
                "GROUP BY m.scope, m.kind, m.status, m.tier",
                [now, *params],
            ):
                for column, value in zip(columns, values, strict=True):
                    counts[column][str(value)] += int(n)
                expired += int(gone)
            # The store-wide figures only a person sees, read in the same snapshot.
            store_wide = _store_wide(conn, now) if caller.is_human else {}
        memories = {c: dict(sorted(counts[c].items())) for c in columns}
        act = self.activity
        # An agent learns when it wrote and searched last, not when the others did.
        me = None if caller.is_human else act.agents.get(caller.actor)
        last = act if caller.is_human else me
        out: dict[str, Any] = {
            "memories": memories,
            "total": sum(memories.get("status", {}).values()),
            "expired_awaiting_purge": int(expired),
            "last_write": last.last_write_ms if last else None,
            "last_search": last.last_search_ms if last else None,
            "committed_seq": self._store.committed_seq,
            "index_lag": 0,  # the index is written in the memory's own transaction
        }
        if not caller.is_human:
            out["agent"] = {"name": caller.actor, "verified": caller.verified} | (
                me.to_dict() if me else {}
            )
            return out
        # The person's last write is read from the store too, so a restart does not forget it
        # (until 2026-11-30 it was only the writes served since Cairn started).
        served = [t for t in (out["last_write"], store_wide.pop("last_write_stored")) if t]
        out["last_write"] = max(served, default=None)
        out.update(store_wide)
        out.update(
            {
                "database_bytes": _size(self._paths.database),
                "wal_bytes": _size(
                    self._paths.database.with_name(self._paths.database.name + "-wal")
                ),
                "connections": {
                    "now": act.connections_now,
                    "total": act.connections_total,
                    "refused_peer_uid": act.refused_peer_uid,
                    "refused_too_many": act.refused_too_many,
                    "refused_hello": act.refused_hello,
                    "bad_frames": act.bad_frames,
                    "push_overflows": act.push_overflows,
                    "stalled_readers": act.stalled_readers,
                },
                "agents": {name: a.to_dict() for name, a in sorted(act.agents.items())},
                "refusals": dict(act.refusals),
                "held_for_review": dict(act.held),
                "background_failures": {
                    site: {"count": f.count, "last_error": f.last_error, "at": f.last_at_ms}
                    for site, f in self._failures.snapshot().items()
                },
                "warnings": self._warnings(),
                "notes_errors": self.notes_errors()[:50],
                "set_aside": set_aside(self._paths),
            }
        )
        return out

    def _warnings(self) -> dict[str, str]:
        """The standing warnings, `store_unwritable` while the last write that failed for the
        store (a full disk) is not followed by one that landed (since 2026-12-01), the clock's
        (since 2026-12-01), and `integrity` once a read or a write found the file damaged, even
        if the agent that met it said nothing (since 2026-12-02; the daily check's own words
        come first)."""
        out = self.warnings.snapshot() | self._clock_warnings()
        why = self._store.writer.unwritable
        if why is not None:
            out["store_unwritable"] = _unwritable_warning(why)
        damage = self._store.damage
        if damage is not None:
            out.setdefault("integrity", damage)
        return out


def _unwritable_warning(why: str) -> str:
    # `why` names the database file and what to check (`db_errors.unusable_message`)
    return (
        f"{why}. Writes fail until that is fixed; Cairn carries on by itself once it can write "
        "again, without a restart"
    )


def _store_wide(conn: sqlite3.Connection, now: int) -> dict[str, Any]:
    """The audit log's size, the review queue and whether capture is paused."""
    audit_events = conn.execute("SELECT count(*) FROM audit").fetchone()[0]
    pending, oldest = conn.execute("SELECT count(*), min(first_seen) FROM suggestion").fetchone()
    evicted = conn.execute(
        "SELECT coalesce(max(value), 0) FROM counter WHERE name = 'review_evicted'"
    ).fetchone()[0]
    saved_policy = conn.execute("SELECT value FROM meta WHERE key = 'policy'").fetchone()
    # The newest event of a write served to an agent or a person (newest first, so the scan
    # stops at the first: housekeeping and raw reads in between are few).
    actions, surfaces = sorted(audit_actions.WRITE_ACTIONS), sorted(audit_actions.WRITE_SURFACES)
    last_write = conn.execute(
        f"SELECT at FROM audit WHERE action IN ({', '.join('?' * len(actions))}) "
        f"AND actor_kind IN ({', '.join('?' * len(surfaces))}) ORDER BY seq DESC LIMIT 1",
        [*actions, *surfaces],
    ).fetchone()
    return {
        "last_write_stored": int(last_write[0]) if last_write else None,
        "audit_events": int(audit_events),
        "review": {
            "pending": int(pending),
            "evicted": int(evicted),
            # not below 0: a proposal seen "after now" was seen before the clock was set back
            "oldest_age_s": max(0, now - int(oldest)) // 1000 if oldest is not None else None,
        },
        "capture_paused": bool(saved_policy and json.loads(saved_policy[0]).get("paused", False)),
    }


def set_aside(paths: Paths) -> dict[str, Any]:
    """What restores kept and nothing deletes: replaced databases (`cairn.db.replaced-<time>`,
    with their -wal and -shm) and the other history's rotated audit files
    (`<state>/audit/replaced-<time>/`). A person removes them when no longer needed."""
    database = paths.database
    files = sorted(database.parent.glob(f"{glob.escape(database.name)}.replaced-*"))
    files += audit_files.set_aside_files(paths.audit_archive)
    return {
        "files": len(files),
        "bytes": sum(_size(f) for f in files),
        "paths": [str(f) for f in files[:20]],
    }


def _size(path: os.PathLike[str]) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0
