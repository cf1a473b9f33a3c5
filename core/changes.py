"""The one change channel: every mutation publishes a small typed value saying what changed.

Writes publish after their transaction commits (from the writer thread); watched files publish when
their new content applies. Subscribers must return quickly: the desktop hands the value to the Qt
thread with a signal, the socket server with `call_soon_threadsafe`. Catch-up after a gap is
`changes since seq N`, answered from the audit log.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum

log = logging.getLogger(__name__)


class Topic(StrEnum):
    """What kind of thing changed, so a listener can ignore what it does not show."""

    MEMORIES = "memories"
    REVIEW = "review"
    POLICY = "policy"
    IDENTITY = "identity"
    AGENTS = "agents"
    WORKSPACES = "workspaces"
    HEALTH = "health"
    SETTINGS = "settings"


@dataclass(frozen=True)
class Change:
    """One audited mutation. `seq` is the audit sequence number; 0 for changes outside the store."""

    seq: int
    action: str
    topics: frozenset[Topic]
    memory_id: str | None = None
    revision: int | None = None
    workspace_id: str | None = None
    actor: str | None = None
    scope: str | None = None
    session_id: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "seq": self.seq,
            "action": self.action,
            "topics": sorted(t.value for t in self.topics),
            "memory_id": self.memory_id,
            "revision": self.revision,
            "workspace_id": self.workspace_id,
            "actor": self.actor,
            "scope": self.scope,
        }


@dataclass(frozen=True)
class ChangeSet:
    """Everything one commit (or one file reload) changed."""

    changes: tuple[Change, ...]
    topics: frozenset[Topic] = field(default=frozenset())

    @staticmethod
    def of(changes: Iterable[Change]) -> ChangeSet:
        items = tuple(changes)
        topics: frozenset[Topic] = frozenset().union(*(c.topics for c in items))
        return ChangeSet(items, topics)

    @property
    def last_seq(self) -> int:
        return max((c.seq for c in self.changes), default=0)


Listener = Callable[[ChangeSet], None]


class ChangeBus:
    """Fan-out of ChangeSets to subscribers; thread-safe. A failing listener is logged, counted."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()
        self.listener_failures = 0

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; returns the function that removes it."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def publish(self, change_set: ChangeSet) -> None:
        if not change_set.changes and not change_set.topics:
            return
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(change_set)
            except Exception:
                # A broken window or connection must not stop the others from hearing about it.
                self.listener_failures += 1
                log.exception("a change listener failed")
