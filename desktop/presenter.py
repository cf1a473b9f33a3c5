"""Errors reach the person in one place: a clear sentence, the details on demand."""

from __future__ import annotations

import logging
import traceback

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QMessageBox, QWidget

from core.errors import CairnError
from desktop.widgets import plain_box

log = logging.getLogger(__name__)


def sentence(error: BaseException) -> str:
    """What the person reads first: Cairn's own message, or a plain sentence for a bug."""
    if isinstance(error, CairnError):
        return error.message
    return QCoreApplication.translate(
        "Presenter", "Something went wrong inside Cairn. Your memories are safe."
    )


class Presenter:
    """Shows errors as a non-blocking message box (one at a time; the newest wins)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self._parent = parent
        self._box: QMessageBox | None = None
        self.last: str | None = None  # the last sentence shown (windows' tests read it)

    def show(self, error: BaseException, *, parent: QWidget | None = None) -> None:
        text = sentence(error)
        if not isinstance(error, CairnError):
            log.error("unexpected error in a window", exc_info=error)
        self.last = text
        if self._box is not None:
            self._box.close()
        box = plain_box(parent or self._parent)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(QCoreApplication.translate("Presenter", "Cairn"))
        box.setText(text)
        details = "".join(traceback.format_exception(error)).strip()
        if isinstance(error, CairnError) and error.data:
            details = f"{error.code.name}: {error.data}\n\n{details}"
        box.setDetailedText(details)
        box.open()
        self._box = box
