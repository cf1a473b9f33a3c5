"""The grey sentence an empty list, table or tree shows: what will appear there, and when."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QAbstractItemView, QLabel

NAME = "emptyNote"  # tests find a view's note by it: view.findChild(QLabel, NAME)
MARGIN = 12


class EmptyNote(QLabel):
    """Drawn over `view`'s empty viewport in the placeholder colour (as a line edit's
    placeholder), shown while the view has no rows. Qt's item views have no placeholder of
    their own: without it an empty one is a blank box that says nothing."""

    def __init__(self, view: QAbstractItemView, text: str) -> None:
        super().__init__(text, view.viewport())
        self.setObjectName(NAME)
        self.setTextFormat(Qt.TextFormat.PlainText)  # as every label (desktop/widgets.py)
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        # Inside a view's viewport a label would take the view's Text colour (black)
        self.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self._view = view
        view.viewport().installEventFilter(self)
        model = view.model()
        for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            signal.connect(self.follow)
        self._fit()
        self.follow()

    def follow(self) -> None:
        """Show the note while the view has no rows, hide it when it has."""
        self.setVisible(self._view.model().rowCount() == 0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Resize:
            self._fit()
        return False

    def _fit(self) -> None:
        room = self._view.viewport().rect()
        self.setGeometry(room.adjusted(MARGIN, MARGIN, -MARGIN, -MARGIN))
