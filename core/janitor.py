"""Housekeeping that runs on start and periodically: purge expired memories, rotate the audit log,
and the lifecycle pass (archive unused project memories, end stale sessions, check workspaces).

Each run reports what it did; nothing here deletes a memory that has not expired.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from core import audit
from core.lifecycle import Lifecycle, LifecycleReport
from core.memory_service import MemoryService
from core.model import Caller
from core.paths import Paths
from core.settings import Settings
from core.store import Store
from core.writer import WriteTx

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JanitorReport:
    purged: int
    audit_rotated: int
    lifecycle: LifecycleReport | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"purged": self.purged, "audit_rotated": self.audit_rotated}
        if self.lifecycle is not None:
            out.update(self.lifecycle.to_dict())
        return out


class Janitor:
    def __init__(
        self,
        store: Store,
        memories: MemoryService,
        settings: Settings,
        paths: Paths,
        *,
        lifecycle: Lifecycle | None = None,
    ) -> None:
        self._lifecycle = lifecycle
        self._store = store
        self._memories = memories
        self._max_audit = settings.integer("audit.max_events")
        self._archive = paths.audit_archive

    def run(self, *, live_sessions: frozenset[str] = frozenset()) -> JanitorReport:
        purged = self._memories.purge_expired()
        rotated = self.rotate_audit()
        cycle = self._lifecycle.run(live_sessions=live_sessions) if self._lifecycle else None
        report = JanitorReport(purged, rotated, cycle)
        if purged or rotated or (cycle and (cycle.archived or cycle.session_memories_expiring)):
            log.info("janitor: %s", report.to_dict())
        return report

    def rotate_audit(self) -> int:
        def job(tx: WriteTx) -> int:
            moved = audit.rotate(tx, self._max_audit, self._archive)
            if moved:
                audit.record(
                    tx,
                    Caller.system(),
                    "audit_rotated",
                    detail={"events": moved, "directory": str(self._archive)},
                    at=self._store.clock.now_ms(),
                )
            return moved

        return self._store.writer.run(job)
