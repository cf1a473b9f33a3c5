"""Quitting while windows hold edits not yet saved: the person is asked first, whether they chose
Quit (the tray's menu, the Quit button of a desktop without a tray) or closed the last window of
a desktop without a tray, which quits too."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from desktop.desk import Desk, ToolWindow
from desktop.widgets import losing_edits_question


class QuitGuard(QObject):
    """Runs `quit` (which stops Cairn) when nothing would be lost, else asks first, Cancel the
    default; cancelled, the windows holding the edits come forward. Stopping asked for
    elsewhere (`cairn stop`, SIGTERM, another launch) does not ask."""

    def __init__(self, desk: Desk, quit: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.desk = desk
        self._quit = quit
        self.question: QMessageBox | None = None  # open while the person decides
        self._armed = True  # off once Cairn stops: its own closing of the windows is no quit

    def request(self) -> None:
        """The person chose to quit: quit now, or ask first when edits would be lost."""
        unsaved = self.desk.unsaved()
        if not unsaved:
            self._quit()
            return
        if self.question is not None:
            self.question.raise_()
            self.question.activateWindow()
            return
        shown = [w for w in unsaved if w.isVisible()] or [
            w for w in self.desk.windows() if w.isVisible()
        ]
        box, confirm, _cancel = losing_edits_question(
            shown[0] if shown else None,
            "quitConfirm",
            self.tr("Quit Cairn?"),
            self.tr("Quitting closes every window. Unsaved edits in {} would be lost.").format(
                ", ".join(w.windowTitle() for w in unsaved)
            ),
            (self.tr("Quit and lose them"), "confirmQuit"),
        )
        # closed any other way (Esc, the title bar's X): Cairn keeps running, like Cancel
        box.finished.connect(lambda _result: self._answered(box, confirm))
        # deleted unanswered, with the window it was asked over (a language change rebuilds
        # every window): nothing is pending any more, and nothing may touch the box again
        box.destroyed.connect(lambda: self._forget(box))
        self.question = box
        box.open()

    def _forget(self, box: QMessageBox) -> None:
        if self.question is box:
            self.question = None

    def _answered(self, box: QMessageBox, confirm: QPushButton) -> None:
        self._forget(box)
        if not self._armed:
            return
        if box.clickedButton() is confirm:
            self._quit()
            return
        for window in self.desk.unsaved():  # the edits the person chose to keep, in sight
            self.desk.open(type(window))

    def watch(self, window: ToolWindow) -> None:
        """Without a tray: closing the last window quits, so it asks first (`desk.on_open`)."""
        window.installEventFilter(self)

    def unwatch(self, window: ToolWindow) -> None:
        """A tray appeared: closing the last window no longer quits, so nothing to ask."""
        window.removeEventFilter(self)

    def disarm(self) -> None:
        """Cairn is stopping: the windows it closes now close without a question."""
        self._armed = False
        if self.question is not None:
            self.question.close()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if (
            self._armed
            and event.type() == QEvent.Type.Close
            and isinstance(watched, QWidget)
            and not any(w.isVisible() for w in self.desk.windows() if w is not watched)
            and self.desk.unsaved()
        ):
            event.ignore()  # the window stays open while the person decides
            self.request()
            return True
        return super().eventFilter(watched, event)
