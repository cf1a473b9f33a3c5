"""Every window with the keyboard alone, over a real store: Tab and Shift+Tab move on from
tables and texts, Escape closes a window (asking first when closing would lose edits), and each
window's Alt-key accelerators are its own."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractItemView,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from core.model import Caller
from core.policy import Mode
from core.requests import WriteRequest
from desktop.desk import Desk, ToolWindow
from desktop.tray import WINDOWS, window_class
from tests.conftest import settle

pytestmark = pytest.mark.gui
T = TypeVar("T")


def off_gui(fn: Callable[[], T]) -> T:
    """Run a service call on a plain thread (the store refuses the GUI thread) and wait."""
    out: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as e:
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    if errors:
        raise errors[0]
    return out[0]


def filled(desk: Desk) -> None:
    """Rows in the tables: memories, and a per-agent override of the capture policy."""
    person = Caller.human()
    notes = [
        WriteRequest.from_params({"content": f"note {n}", "kind": "fact", "scope": "user"})
        for n in range(3)
    ]
    off_gui(lambda: desk.cairn.memories.write_many(person, notes))
    off_gui(lambda: desk.cairn.policy.set(person, "agents.helper.kinds.idea", Mode.OFF))


def opened(qtbot: QtBot, desk: Desk, kind: type[ToolWindow]) -> ToolWindow:
    window = desk.open(kind)
    qtbot.waitExposed(window)
    settle(qtbot, desk)
    window.activateWindow()
    qtbot.waitActive(window)
    return window


def traps(window: QWidget) -> list[str]:
    """The tables, lists, trees and texts of `window` that keep Tab or Shift+Tab to themselves."""
    kept: list[str] = []
    boxes = (QAbstractItemView, QPlainTextEdit, QTextEdit)
    for widget in window.findChildren(QWidget):
        if not isinstance(widget, boxes) or not widget.isVisibleTo(window):
            continue
        if not widget.isEnabled() or widget.focusPolicy() == Qt.FocusPolicy.NoFocus:
            continue
        for key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
            widget.setFocus(Qt.FocusReason.OtherFocusReason)
            if not widget.hasFocus():
                break
            if isinstance(widget, QAbstractItemView) and widget.model().rowCount() > 1:
                widget.setCurrentIndex(widget.model().index(0, 0))
            QTest.keyClick(widget, key)
            if widget.hasFocus():
                kept.append(f"{type(window).__name__}: {widget.objectName()!r} keeps {key.name}")
    return kept


def test_tab_moves_on_from_every_table_and_text(qtbot: QtBot, desk: Desk) -> None:
    filled(desk)
    kept: list[str] = []
    for key in WINDOWS:
        window = opened(qtbot, desk, window_class(key))
        kept += traps(window)
        window.close()
    assert not kept, "\n".join(kept)

