"""Memories over time: unused project memories archived, sessions that ended letting their
scratch notes expire, workspaces that moved or were merged, and paths that disappeared.

Nothing here deletes: archiving is a revision (searchable on request, reversible), an ended
session's memories get an expiry (the janitor purges them only after the expired-retention
window), and a merge re-binds memories with a revision each.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

from core import audit
from core.clock import FUTURE_SLACK_MS, Clock, before_floor
from core.dedupe import dedupe_holder
from core.errors import Forbidden, InvalidInput, NotFound
from core.health import Warnings
from core.memory_service import MemoryService
from core.model import Caller, Memory, Scope, Status
from core.ownership import NOTES_SOURCE
from core.records import fetch_memories
from core.settings import Settings
from core.store import Store
from core.wording import plural
from core.workspace import (
    WORKSPACE_ID_PREFIX,
    WorkspaceRegistry,
    canonical_path,
    refuse_move_onto,
)
from core.writer import WriteTx

_BATCH = 500
_DAY_MS = 86_400_000
_SESSION_STAYS = (
    "a session's scratch memory: it stays with its session here (a session of the same id "
    "there is another session) and expires when the session ends; merge again once it is gone"
)


@dataclass(frozen=True)
class LifecycleReport:
    archived: int
    sessions_ended: int
    session_memories_expiring: int
    missing_workspaces: int

    def to_dict(self) -> dict[str, int]:
        return {
            "archived": self.archived,
            "sessions_ended": self.sessions_ended,
            "session_memories_expiring": self.session_memories_expiring,
            "missing_workspaces": self.missing_workspaces,
        }


class Lifecycle:
    """The passes below, each run on its own by the janitor (`core/janitor.py`), so that one
    failing does not stop the others."""

    def __init__(
        self,
        store: Store,
        memories: MemoryService,
        workspaces: WorkspaceRegistry,
        *,
        settings: Settings,
        clock: Clock,
        warnings: Warnings,
    ) -> None:
        self._store = store
        self._memories = memories
        self._workspaces = workspaces
        self._clock = clock
        self._warnings = warnings
        self._archive_days = settings.number("lifecycle.archive_unused_days")
        self._session_days = settings.number("lifecycle.session_retention_days")
        # Opening the store ran quick_check already (unless turned off): the next is a day on.
        self._checked_at: int | None = (
            clock.now_ms() if settings.flag("store.quick_check_on_open") else None
        )

    def check_integrity(self) -> None:
        """SQLite's quick_check, at most once a day while running (opening the store checks
        too); a problem becomes the `integrity` health warning. A last check dated after now
        (the clock was set back) counts as a day ago: how long it has been is unknown."""
        now = self._clock.now_ms()
        if self._checked_at is not None and 0 <= now - self._checked_at < _DAY_MS:
            return
        self._checked_at = now
        rows = [r[0] for r in self._store.read_db.conn().execute("PRAGMA quick_check(5)")]
        if rows == ["ok"]:
            self._warnings.clear("integrity")
            return
        self._warnings.set(
            "integrity",
            f"the database reports damage ({'; '.join(rows)}); stop Cairn and restore the "
            "latest backup (`cairn restore --latest`)",
        )

    # -- archiving ---------------------------------------------------------------------------

    def archive_unused(self) -> int:
        """Archive active project memories not used (recalled or changed) for
        `lifecycle.archive_unused_days` - twice that for importance 4 and 5; never pinned ones,
        never the notes folder's (the file decides)."""
        if self._archive_days <= 0:
            return 0
        total = 0
        system = Caller.system()
        while True:
            now = self._clock.now_ms()
            cutoff = now - int(self._archive_days * _DAY_MS)
            long_cutoff = now - int(2 * self._archive_days * _DAY_MS)
            ids = [
                r[0]
                for r in self._store.read_db.conn().execute(
                    "SELECT m.id FROM memory m LEFT JOIN usage u ON u.memory_id = m.id "
                    "WHERE m.scope = 'project' AND m.status = 'active' AND m.pinned = 0 "
                    "AND (m.source IS NULL OR m.source NOT LIKE ?) "
                    "AND max(m.updated_at, coalesce(u.last_recalled_at, 0)) < "
                    "CASE WHEN m.importance >= 4 THEN ? ELSE ? END "
                    "ORDER BY m.seq LIMIT ?",
                    (NOTES_SOURCE + "%", long_cutoff, cutoff, _BATCH),
                )
            ]
            if not ids:
                return total

            def job(tx: WriteTx, batch: list[str] = ids) -> int:
                for mid in batch:
                    self._memories.set_state_in(tx, system, mid, "archive", archived=True)
                return len(batch)

            total += self._store.writer.run(job)

    # -- sessions ----------------------------------------------------------------------------

    def session_seen(self, session_id: str, workspace_id: str | None) -> None:
        """A connection bound to `session_id` said hello, or closed: the session is alive now.
        Not while the clock reads before 2026 (`core.clock.FLOOR_MS`): a session "last seen in
        1970" would be ended by the first round after the clock is set."""
        now = self._clock.now_ms()
        if before_floor(now):
            return

        def job(tx: WriteTx) -> None:
            tx.conn.execute(
                "INSERT INTO session (id, workspace_id, first_seen, last_seen) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET last_seen = excluded.last_seen",
                (session_id, workspace_id, now, now),
            )

        self._store.writer.run(job)

    def end_sessions(self, live: frozenset[str]) -> tuple[int, int]:
        """Sessions last seen more than `lifecycle.session_retention_days` ago (and with no open
        connection) have ended: their session-scope memories get an expiry of now, so they hide
        and are purged after the expired-retention window. Returns (sessions, memories)."""
        if self._session_days <= 0:
            return 0, 0
        now = self._clock.now_ms()
        cutoff = now - int(self._session_days * _DAY_MS)
        conn = self._store.read_db.conn()
        ended = [
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT m.session_id FROM memory m LEFT JOIN session s "
                "ON s.id = m.session_id WHERE m.scope = 'session' AND m.expires_at IS NULL "
                "AND m.status IN ('active', 'archived') "
                "AND coalesce(s.last_seen, m.updated_at) < ?",
                (cutoff,),
            )
            if r[0] not in live
        ]
        expiring = 0
        system = Caller.system()
        for session in ended:

            def job(tx: WriteTx, sid: str = session) -> int:
                ids = [
                    r[0]
                    for r in tx.conn.execute(
                        "SELECT id FROM memory WHERE scope = 'session' AND session_id = ? "
                        "AND expires_at IS NULL AND status IN ('active', 'archived') ORDER BY seq",
                        (sid,),
                    )
                ]
                found = fetch_memories(tx.conn, ids, now)
                for mid in ids:
                    self._expire(tx, system, found[mid], now)
                return len(ids)

            expiring += self._store.writer.run(job)
        return len(ended), expiring

    @staticmethod
    def bring_back_sessions(tx: WriteTx, now_ms: int) -> int:
        """Set sessions' last-seen times after now (`core.clock.after_now`) to now: a session
        seen while the clock read 2100 would otherwise never end. Returns how many it set."""
        return tx.conn.execute(
            "UPDATE session SET last_seen = ? WHERE last_seen > ?",
            (now_ms, now_ms + FUTURE_SLACK_MS),
        ).rowcount

    def _expire(self, tx: WriteTx, caller: Caller, memory: Memory, now: int) -> None:
        updated = replace(
            memory, expires_at=now, revision=memory.revision + 1, updated_at=now, expired=True
        )
        self._memories.save_revision_in(tx, caller, updated, "expire", "its session ended", now=now)

    # -- workspaces --------------------------------------------------------------------------

    def check_workspaces(self) -> int:
        """Warn (in health) about workspaces whose directory no longer exists and that hold
        memories (one that holds none - a clone an agent only searched in - has nothing to
        move)."""
        holding = {
            str(wid)
            for (wid,) in self._store.read_db.conn().execute(
                "SELECT DISTINCT workspace_id FROM memory "
                "WHERE workspace_id IS NOT NULL AND status != 'forgotten'"
            )
        }
        missing = [w for w in self._workspaces.list() if not w.path_exists and w.id in holding]
        if missing:
            paths = ", ".join(w.path for w in missing[:5]) + (" ..." if len(missing) > 5 else "")
            self._warnings.set(
                "missing_workspaces",
                f"{plural(len(missing), 'workspace folder')} no longer "
                f"{'exists' if len(missing) == 1 else 'exist'} ({paths}); if a project "
                "moved, run `cairn workspace move OLD NEW`",
            )
        else:
            self._warnings.clear("missing_workspaces")
        return len(missing)

    def move_workspace(self, caller: Caller, old: str, new_path: str) -> dict[str, Any]:
        """A project moved: the workspace keeps its id (and its memories) under the new path."""
        _person(caller)
        ws = self._find(old)
        path = canonical_path(new_path)
        holder = next(((w.id, w.path) for w in self._workspaces.list() if w.path == path), None)
        refuse_move_onto(old, ws.id, path, holder)
        now = self._clock.now_ms()

        def job(tx: WriteTx) -> None:
            tx.conn.execute("UPDATE workspace SET path = ? WHERE id = ?", (path, ws.id))
            audit.record(
                tx,
                caller,
                "workspace_moved",
                workspace_id=ws.id,
                detail={"from": ws.path, "to": path},
                at=now,
            )

        self._store.writer.run(job)
        self._workspaces.forget_cache()
        self.check_workspaces()
        return {"id": ws.id, "from": ws.path, "to": path}

    def merge_workspaces(self, caller: Caller, source: str, into: str) -> dict[str, Any]:
        """Fold `source` into `into`: each memory is re-bound with a revision (reversible).

        A dedupe key names one memory per workspace. A memory whose key a memory of `into`
        holds stays behind and is reported as kept, naming the holder, while it is active or
        archived: a person settles which of the two is right (forgets or supersedes one). A
        superseded or forgotten one - history, or the clash settled - moves and leaves the key
        to the holder (its `rebind` revision says so; until 2026-11-30 a superseded one stayed
        behind for good, and a forgotten one failed the merge on the key's unique index).

        A session memory stays too, reported as kept: the same session id in `into` is another
        session, whose agents must not read it, and its own agent, bound to `source`, still
        does. It expires with its session; once it is purged, the next merge removes `source`
        (until 2026-12-01 it moved with its session id, into the other workspace's session of
        that id)."""
        _person(caller)
        src, dst = self._find(source), self._find(into)
        if src.id == dst.id:
            raise InvalidInput("a workspace cannot be merged into itself")
        now = self._clock.now_ms()

        def job(tx: WriteTx) -> dict[str, Any]:
            moved, kept = 0, []
            ids = [
                r[0]
                for r in tx.conn.execute(
                    "SELECT id FROM memory WHERE workspace_id = ? AND status != 'forgotten' "
                    "ORDER BY seq",
                    (src.id,),
                )
            ]
            found = fetch_memories(tx.conn, ids, now)
            for mid in ids:
                memory = found[mid]
                if memory.scope is Scope.SESSION:
                    kept.append({"id": mid, "reason": _SESSION_STAYS})
                    continue
                reason = f"merged into {dst.path}"
                holder = _key_holder(tx, memory, dst.id)
                if holder is not None and memory.status in (Status.ACTIVE, Status.ARCHIVED):
                    kept.append(
                        {
                            "id": mid,
                            "reason": f"memory {holder} there holds the same dedupe key; forget "
                            "or supersede one of the two, then merge again",
                        }
                    )
                    continue
                if holder is not None:
                    reason += f"; its dedupe key {memory.dedupe_key!r} stays with {holder}"
                    memory = replace(memory, dedupe_key=None)
                self._memories.rebind_in(tx, caller, memory, dst.id, reason)
                moved += 1
            # Forgotten memories' shells move along, and their tombstones with them: what was
            # forgotten there stays forgotten here. A shell's dedupe key that a memory there
            # holds stays with that memory (the shell's words are gone; nothing else reads it).
            tx.conn.execute(
                "UPDATE memory SET dedupe_key = NULL WHERE workspace_id = ? AND status = "
                "'forgotten' AND dedupe_key IS NOT NULL AND EXISTS (SELECT 1 FROM memory h "
                "WHERE h.workspace_id = ? AND h.scope = memory.scope AND coalesce(h.session_id, "
                "'') = coalesce(memory.session_id, '') AND h.dedupe_key = memory.dedupe_key)",
                (src.id, dst.id),
            )
            tx.conn.execute(
                "UPDATE memory SET workspace_id = ? WHERE workspace_id = ? AND status = "
                "'forgotten'",
                (dst.id, src.id),
            )
            tx.conn.execute(
                "UPDATE tombstone SET workspace_id = ? WHERE workspace_id = ?", (dst.id, src.id)
            )
            left = tx.conn.execute(
                "SELECT count(*) FROM memory WHERE workspace_id = ?", (src.id,)
            ).fetchone()[0]
            if not left:
                tx.conn.execute(
                    "UPDATE session SET workspace_id = ? WHERE workspace_id = ?", (dst.id, src.id)
                )
                tx.conn.execute("DELETE FROM workspace WHERE id = ?", (src.id,))
            audit.record(
                tx,
                caller,
                "workspace_merged",
                workspace_id=dst.id,
                detail={"from": src.path, "into": dst.path, "moved": moved, "kept": len(kept)},
                at=now,
            )
            return {"from": src.path, "into": dst.path, "moved": moved, "kept": kept}

        result = self._store.writer.run(job)
        self._workspaces.forget_cache()
        self.check_workspaces()
        return result

    def _find(self, ref: str) -> Any:
        """A workspace by id, by its (possibly vanished) path, or by a path that resolves.

        Raises:
            InvalidInput: `ref` is a relative path (read from the folder Cairn was started in,
                it would name another project's folder: the caller resolves it first).
            NotFound: no such workspace.
        """
        known = self._workspaces.list()  # once: each listing looks whether every folder exists
        for ws in known:
            if ref in (ws.id, ws.path):
                return ws
        if not ref.startswith(WORKSPACE_ID_PREFIX) and not os.path.isabs(os.path.expanduser(ref)):
            raise InvalidInput(
                f"workspace {ref!r} is a relative path; send the workspace's id (ws_...) or its "
                "absolute path",
                data={"field": "workspace", "ref": ref},
            )
        for ws in known:
            if os.path.normcase(os.path.abspath(os.path.expanduser(ref))) == ws.path:
                return ws
        try:
            path = canonical_path(ref)
        except InvalidInput:
            path = None
        for ws in known:
            if ws.path == path:
                return ws
        raise NotFound(f"no workspace {ref!r} (see `cairn workspace list`)", data={"ref": ref})

    def workspaces(self, caller: Caller) -> list[dict[str, Any]]:
        """Every workspace with its memory count and whether its folder still exists."""
        _person(caller)
        counts = dict(
            self._store.read_db.conn().execute(
                "SELECT workspace_id, count(*) FROM memory WHERE workspace_id IS NOT NULL "
                "AND status IN ('active', 'archived') GROUP BY workspace_id"
            )
        )
        return [
            {
                "id": w.id,
                "path": w.path,
                "exists": w.path_exists,
                "memories": int(counts.get(w.id, 0)),
                "created_at": w.created_at,
            }
            for w in self._workspaces.list()
        ]


def _key_holder(tx: WriteTx, memory: Memory, workspace_id: str) -> str | None:
    """The memory of `workspace_id` holding `memory`'s dedupe key (in its scope and session)."""
    if memory.dedupe_key is None:
        return None
    return dedupe_holder(tx.conn, replace(memory, workspace_id=workspace_id))


def _person(caller: Caller) -> None:
    if not caller.is_human:
        raise Forbidden("only a person can move or merge workspaces")
