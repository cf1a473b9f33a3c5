"""Small pieces every window uses: naming a widget, labels, message boxes and tooltips that show
their text as typed, showing a time, telling a text the person edited from one a plain-text
editor only displayed, asking before edits are lost, letting Tab move on from tables and texts,
and setting the order Tab goes in."""

from __future__ import annotations

import html
import itertools
from typing import Any, TypeVar

from PySide6.QtCore import QDateTime, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
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


# Qt draws a label's, a message box's or a tooltip's text as HTML when it looks like HTML
# (`Qt.mightBeRichText`: a tag near the start). Windows show what agents wrote - a memory, its
# summary, a relation's or a proposal's note - so an agent's `<b>`, `<img>` or
# `<span style="font-size:0">` would draw as it says, not as typed, and could make a window say
# what the text does not (until 2026-12-02: the review queue's title, the memories' details, and
# the tooltips of the memories table and of a memory's history). Every label and message box in
# desktop/ is made here, plain (a test checks), and a tooltip that holds such text goes through
# `plain_tip`.


def plain_label(text: str = "", parent: QWidget | None = None, **properties: Any) -> QLabel:
    """A label that shows its text as typed (Qt properties as keywords: `wordWrap=True`)."""
    label = QLabel(text, parent, **properties)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def plain_box(parent: QWidget | None) -> QMessageBox:
    """A message box whose text and informative text show as typed."""
    box = QMessageBox(parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    return box


def plain_tip(text: str) -> str:
    """A tooltip that shows `text` as typed, line breaks kept ('' stays '': no tooltip)."""
    if not text:
        return ""
    return f'<p style="white-space: pre-wrap">{html.escape(text)}</p>'


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
    box = plain_box(parent)
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
