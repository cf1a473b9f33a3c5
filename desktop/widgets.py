"""Small pieces every window uses: naming a widget, showing a time, telling a text the person
edited from one a plain-text editor only displayed, asking before edits are lost, letting Tab
move on from tables and texts, and setting the order Tab goes in."""

from __future__ import annotations

import itertools
from typing import TypeVar

from PySide6.QtCore import QDateTime, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QWidget,
)

W = TypeVar("W", bound=QWidget)


def named(widget: W, name: str, tip: str | None = None) -> W:
    """`widget` with its object name (tests and style sheets find it by that) and tooltip."""
    widget.setObjectName(name)
    if tip:
        widget.setToolTip(tip)
    return widget


def when(ms: int | None) -> str:
    """A stored time (ms since the epoch) to the minute, as short as it can be: today's as
    14:05, this year's as 11-28 14:05, older ones with the year; '' for none."""
    if ms is None:
        return ""
    moment = QDateTime.fromMSecsSinceEpoch(ms)
    today = QDateTime.currentDateTime().date()
    if moment.date() == today:
        return moment.toString("HH:mm")
    if moment.date().year() == today.year():
        return moment.toString("MM-dd HH:mm")
    return moment.toString("yyyy-MM-dd HH:mm")


def as_displayed(text: str) -> str:
    """`text` as a plain-text editor gives it back untouched: Qt turns CRLF, line and paragraph
    separators into newlines and no-break spaces into spaces. An editor whose text equals this
    was not edited, and the original text is kept as it was."""
    document = QTextDocument()
    document.setPlainText(text)
    return document.toPlainText()


def edited_text(typed: str, original: str) -> str:
    """What an editor that displayed `original` now holds, as it should be stored: `original`
    itself when the person did not change it."""
    return original if typed == as_displayed(original) else typed


def losing_edits_question(
    parent: QWidget | None, name: str, title: str, text: str, go_on: tuple[str, str]
) -> tuple[QMessageBox, QPushButton, QPushButton]:
    """A warning that going on loses edits: the button that goes on (`go_on`: its words and its
    object name) and Cancel, the default. The box deletes itself when closed; the caller
    connects the buttons and opens it."""
    box = QMessageBox(parent)
    box.setObjectName(name)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(title)
    box.setText(text)
    confirm = box.addButton(go_on[0], QMessageBox.ButtonRole.DestructiveRole)
    confirm.setObjectName(go_on[1])
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return box, confirm, cancel


def tab_moves_on(root: QWidget) -> None:
    """Tab and Shift+Tab move to the next and previous control from every table, list, tree and
    multi-line text in `root`: left to Qt, a table moves between its cells and a text editor types
    a tab, and a person without a mouse could not get out. Cairn's texts are prose (memories,
    identity documents, summaries), where a typed tab means nothing; arrow keys still move
    inside a table."""
    for view in root.findChildren(QAbstractItemView):
        view.setTabKeyNavigation(False)
    for plain in root.findChildren(QPlainTextEdit):
        plain.setTabChangesFocus(True)
    for rich in root.findChildren(QTextEdit):  # QTextBrowser too
        rich.setTabChangesFocus(True)


def tab_order(*widgets: QWidget) -> None:
    """Tab goes from each of `widgets` to the next, Shift+Tab back (PySide6 has no overload of
    `QWidget.setTabOrder` that takes a list)."""
    for first, second in itertools.pairwise(widgets):
        QWidget.setTabOrder(first, second)
