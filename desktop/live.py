"""The change channel, brought to the GUI thread: every committed change set (and every change
outside the store: policy file, settings, health) reaches the windows as a Qt signal. Windows
refresh from here, never by polling."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

from core.changes import ChangeBus, ChangeSet, Topic


class LiveChanges(QObject):
    """Re-emits the bus's change sets on the GUI thread (the bus calls from the writer's)."""

    changed = Signal(object)  # ChangeSet

    def __init__(self, bus: ChangeBus, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # Emitted on the publishing thread; Qt queues it to this object's (the GUI) thread.
        self._unsubscribe: Callable[[], None] | None = bus.subscribe(self.changed.emit)

    def on(self, owner: QObject, topics: set[Topic], slot: Callable[[ChangeSet], None]) -> None:
        """Call `slot` on the GUI thread for change sets touching any of `topics`, for as long
        as `owner` (a window) lives."""
        self.changed.connect(_Filter(owner, frozenset(topics), slot).deliver)

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None


class _Filter(QObject):
    """A child of the window: destroyed with it, which disconnects it."""

    def __init__(
        self, owner: QObject, topics: frozenset[Topic], slot: Callable[[ChangeSet], None]
    ) -> None:
        super().__init__(owner)
        self._topics = topics
        self._slot = slot

    @Slot(object)
    def deliver(self, change_set: ChangeSet) -> None:
        if change_set.topics & self._topics:
            self._slot(change_set)
