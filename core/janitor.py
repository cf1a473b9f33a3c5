"""Housekeeping that runs on start and periodically: purge expired memories, rotate the audit log.

Each run reports what it did; nothing here deletes a memory that has not expired.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from core import audit
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

    def to_dict(self) -> dict[str, int]:
        return {"purged": self.purged, "audit_rotated": self.audit_rotated}


class Janitor:
    def __init__(
        self, store: Store, memories: MemoryService, settings: Settings, paths: Paths
    ) -> None:
        self._store = store
        self._memories = memories
        self._max_audit = settings.integer("audit.max_events")
        self._archive = paths.audit_archive

    def run(self) -> JanitorReport:
        purged = self._memories.purge_expired()
        rotated = self.rotate_audit()
        report = JanitorReport(purged, rotated)
        if purged or rotated:
            log.info(
                "janitor: purged %d expired memories, rotated %d audit events", purged, rotated
            )
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
