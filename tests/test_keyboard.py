"""Every window with the keyboard alone, over a real store: Tab and Shift+Tab move on from
tables and texts, Escape closes a window (asking first when closing would lose edits), and each
window's keys are its own - with the strip of a desktop without a system tray too."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import TypeVar

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QShortcut
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QFrame,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from core.model import Caller
from core.policy import Mode
from core.requests import WriteRequest
from desktop.desk import Desk, ToolWindow
from desktop.quit_guard import QuitGuard
from desktop.tray import WINDOWS, Tray, window_class
from desktop.windows.identity import IdentityWindow
from desktop.windows.memories import MemoriesWindow
from desktop.windows.memory_detail import MemoryEditor
from tests.conftest import off_gui, settle

pytestmark = pytest.mark.gui
W = TypeVar("W", bound=ToolWindow)


def filled(desk: Desk) -> None:
    """Rows in the tables: memories, and a per-agent override of the capture policy."""
    person = Caller.human()
    notes = [
        WriteRequest.from_params({"content": f"note {n}", "kind": "fact", "scope": "user"})
        for n in range(3)
    ]
    off_gui(lambda: desk.cairn.memories.write_many(person, notes))
    off_gui(lambda: desk.cairn.policy.set(person, "agents.helper.kinds.idea", Mode.OFF))


def opened(qtbot: QtBot, desk: Desk, kind: type[W]) -> W:
    window = desk.open(kind)
    qtbot.waitExposed(window)
    settle(qtbot, desk)
    QApplication.processEvents()  # what the load added to a shown window shows next turn
    window.activateWindow()
    qtbot.waitActive(window)
    return window


def focused_on(qtbot: QtBot, widget: QWidget) -> None:
    widget.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(widget.hasFocus)


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


def test_escape_closes_every_window_from_any_control(qtbot: QtBot, desk: Desk) -> None:
    """From the control a window opens on, and from its first drop-down list, field, table and
    text: none of them uses Escape, so it closes the window as its title bar's X does."""
    filled(desk)
    kinds = (QComboBox, QLineEdit, QAbstractItemView, QPlainTextEdit, QTextEdit)
    stayed: list[str] = []
    for key in WINDOWS:
        kind = window_class(key)
        window = opened(qtbot, desk, kind)
        controls: list[QWidget] = [window.focusWidget() or window]
        for control_kind in kinds:
            controls += [
                w
                for w in window.findChildren(control_kind)
                if w.isVisibleTo(window) and w.isEnabled()
            ][:1]
        for control in controls:
            window = opened(qtbot, desk, kind)
            focused_on(qtbot, control)
            QTest.keyClick(control, Qt.Key.Key_Escape)
            if window.isVisible():
                stayed.append(f"{kind.__name__}: {type(control).__name__} {control.objectName()!r}")
    assert not stayed, "\n".join(stayed)


def test_escape_asks_before_a_last_window_quits_with_edits(qtbot: QtBot, desk: Desk) -> None:
    """Without a tray, closing the last window quits: Escape asks first when edits would be lost,
    as the title bar's X does, and the window stays with the person's text."""
    quits: list[bool] = []
    guard = QuitGuard(desk, lambda: quits.append(True))
    desk.on_open(guard.watch)
    window = opened(qtbot, desk, IdentityWindow)
    editor = window.doc_editor.editor
    qtbot.waitUntil(lambda: bool(editor.toPlainText()))
    focused_on(qtbot, editor)
    QTest.keyClicks(editor, "typed, not saved")
    QTest.keyClick(editor, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: guard.question is not None)
    assert window.isVisible() and quits == []
    assert "typed, not saved" in editor.toPlainText()
    assert guard.question is not None
    guard.question.reject()  # Cancel: nothing is lost, Cairn keeps running
    qtbot.waitUntil(lambda: guard.question is None)
    assert window.isVisible() and quits == []
    assert window.unsaved()


def mnemonic(text: str) -> str | None:
    """The letter `&` marks in a button's or label's text (Alt plus it), `&&` being an `&`."""
    found = re.search(r"(?<!&)&([^&\s])", text.replace("&&", ""))
    return found.group(1).lower() if found else None


def window_keys(window: QWidget) -> dict[str, list[str]]:
    """Each key that acts anywhere in `window`, and what carries it: Alt and the letter a
    button's, group box's or label's text marks; a button's own shortcut; a shortcut of the
    window's (not those of one widget: the review queue's A, R and E on its list)."""
    keys: dict[str, list[str]] = {}
    for widget in window.findChildren(QWidget):
        if isinstance(widget, QAbstractButton):
            text = widget.text()
            letter = mnemonic(text)
            own = widget.shortcut().toString()
            if own and (letter is None or own.lower() != f"alt+{letter}"):
                keys.setdefault(own, []).append(f"{type(widget).__name__} {text!r}")
        elif isinstance(widget, QGroupBox):
            text = widget.title()
        elif isinstance(widget, QLabel) and widget.buddy() is not None:
            text = widget.text()
        else:
            continue
        letter = mnemonic(text)
        if letter is not None:
            keys.setdefault(f"Alt+{letter}", []).append(f"{type(widget).__name__} {text!r}")
    for shortcut in window.findChildren(QShortcut):
        if shortcut.context() is not Qt.ShortcutContext.WidgetShortcut:
            keys.setdefault(shortcut.key().toString(), []).append("a shortcut")
    return keys


@pytest.fixture
def quits() -> list[str]:
    return []


@pytest.fixture
def tray(qtbot: QtBot, desk: Desk, quits: list[str]) -> Iterator[Tray]:
    """A tray over `desk`, not started: offscreen there is no system tray, so once started every
    window carries the strip with the menu's entries. Its quit adds to `quits`."""
    t = Tray(desk, quit=lambda: quits.append("quit"))
    settle(qtbot, desk)
    try:
        yield t
    finally:
        t.close()


def strip_of(window: QWidget) -> list[QPushButton]:
    strip = window.findChild(QFrame, "noTrayStrip")
    assert strip is not None, f"{type(window).__name__} has no strip"
    return strip.findChildren(QPushButton)


@pytest.mark.parametrize("with_tray", [True, False], ids=["tray", "no-tray"])
@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_each_windows_keys_are_its_own(
    qtbot: QtBot, desk: Desk, tray: Tray, language: str, with_tray: bool
) -> None:
    """No key of a window means two things there, in either language - without a system tray
    too, where the strip's buttons each have a key of their own."""
    filled(desk)
    desk.language.apply(language)
    clashes: list[str] = []
    keyless: list[str] = []
    try:
        if not with_tray:
            assert tray.start() is False
        for key in WINDOWS:
            window = opened(qtbot, desk, window_class(key))
            for shortcut, owners in window_keys(window).items():
                if len(owners) > 1:
                    clashes.append(f"{type(window).__name__} {shortcut}: {owners}")
            if not with_tray:
                keyless += [
                    f"{type(window).__name__}: {b.text()!r}"
                    for b in strip_of(window)
                    if b.shortcut().isEmpty()
                ]
            window.close()
    finally:
        desk.language.apply("en")
    assert not clashes, "\n".join(clashes)
    assert not keyless, "\n".join(keyless)


def ctrl_pressed(qtbot: QtBot, window: QWidget, key: Qt.Key) -> None:
    """Ctrl and `key` pressed in `window`, the active window first, as a person's would be."""
    window.activateWindow()
    qtbot.waitActive(window)
    QTest.keyClick(window.focusWidget() or window, key, Qt.KeyboardModifier.ControlModifier)


def is_active(desk: Desk, kind: type[ToolWindow]) -> bool:
    window = desk.window(kind)
    return window is not None and window.isActiveWindow()


def test_without_a_tray_ctrl_and_a_number_opens_a_window(
    qtbot: QtBot, desk: Desk, tray: Tray, quits: list[str]
) -> None:
    """Without a system tray, Ctrl+1 to Ctrl+8 open the windows in the menu's order from any
    window, each strip button's tooltip says its key, and Ctrl+Q is Quit."""
    assert tray.start() is False
    review = opened(qtbot, desk, window_class("review"))
    for number, key in enumerate(WINDOWS, start=1):
        source = review if key != "review" else opened(qtbot, desk, window_class("memories"))
        button = source.findChild(QPushButton, f"noTray-{key}")
        assert button is not None and f"Ctrl+{number}" in button.toolTip()
        ctrl_pressed(qtbot, source, Qt.Key(Qt.Key.Key_0.value + number))
        qtbot.waitUntil(functools.partial(is_active, desk, window_class(key)))
        settle(qtbot, desk)
    quit_button = review.findChild(QPushButton, "noTray-quit")
    assert quit_button is not None and "Ctrl+Q" in quit_button.toolTip()
    ctrl_pressed(qtbot, review, Qt.Key.Key_Q)
    qtbot.waitUntil(lambda: quits == ["quit"])
    settle(qtbot, desk)


def test_every_identity_button_has_an_alt_key(qtbot: QtBot, desk: Desk) -> None:
    """The identity window's buttons, and the labels of its two lists, each take Alt and a
    letter; Ctrl+S still saves."""
    window = opened(qtbot, desk, IdentityWindow)
    editor = window.doc_editor
    side = window.side
    buttons = [editor.save, editor.discard, side.export, side.revert, side.reject, side.adopt]
    assert [b.text() for b in buttons if mnemonic(b.text()) is None] == []
    labelled = {label.buddy() for label in window.findChildren(QLabel) if mnemonic(label.text())}
    assert {side.versions, side.proposals} <= labelled
    qtbot.waitUntil(lambda: bool(editor.editor.toPlainText()))
    focused_on(qtbot, editor.editor)
    QTest.keyClicks(editor.editor, " More.")
    QTest.keyClick(editor.editor, Qt.Key.Key_V, Qt.KeyboardModifier.AltModifier)
    assert side.versions.hasFocus()
    QTest.keyClick(side.versions, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not window.unsaved())
    settle(qtbot, desk)


def test_every_button_has_an_alt_key(qtbot: QtBot, desk: Desk) -> None:
    """Each window's buttons take Alt and a letter - but for the Settings window's three Copy
    buttons, the same word beside each path, which one letter cannot tell apart."""
    filled(desk)
    missing: list[str] = []
    for key in WINDOWS:
        window = opened(qtbot, desk, window_class(key))
        buttons = [
            b for b in window.findChildren(QPushButton) if b.text() and b.isVisibleTo(window)
        ]
        texts = [b.text() for b in buttons]
        missing += [
            f"{type(window).__name__}: {b.objectName()!r} {b.text()!r}"
            for b in buttons
            if mnemonic(b.text()) is None and texts.count(b.text()) == 1
        ]
        window.close()
    assert not missing, "\n".join(missing)


def first_memory_chosen(qtbot: QtBot, desk: Desk) -> MemoriesWindow:
    """The Memories window over `filled`, its first memory chosen and the table focused."""
    filled(desk)
    window = opened(qtbot, desk, MemoriesWindow)
    qtbot.waitUntil(lambda: window.model.rowCount() > 0)
    window.table.selectRow(0)
    qtbot.waitUntil(window.panel.edit_button.isEnabled)
    focused_on(qtbot, window.table)
    return window


def test_tab_in_the_memories_window_goes_down_the_chosen_memory(qtbot: QtBot, desk: Desk) -> None:
    """From the table Tab goes to the memory's text, its buttons, then its history, as they are
    laid out (until 2026-12-02 Edit came before the text it edits)."""
    window = first_memory_chosen(qtbot, desk)
    names: list[str] = []
    for _ in range(6):
        QTest.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_Tab)
        names.append((QApplication.focusWidget() or window).objectName())
    assert names == [
        "detailContent",
        "editButton",
        "pinButton",
        "archiveButton",
        "forgetButton",
        "history",
    ]


def editing(qtbot: QtBot, desk: Desk) -> tuple[MemoriesWindow, MemoryEditor]:
    """The Memories window with its first memory open in the edit dialog, the content focused."""
    window = first_memory_chosen(qtbot, desk)
    QTest.keyClick(window.table, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.editor is not None and window.editor.isVisible())
    assert window.editor is not None
    qtbot.waitUntil(window.editor.content.hasFocus)
    return window, window.editor


def test_escape_in_the_memory_editor_asks_before_losing_what_was_typed(
    qtbot: QtBot, desk: Desk
) -> None:
    """Escape is the edit dialog's Cancel: with changes typed it asks first, Cancel the default,
    and cancelling keeps the dialog and the text (until 2026-12-02 the edit was gone unasked)."""
    window, editor = editing(qtbot, desk)
    QTest.keyClicks(editor.content, " and more")
    QTest.keyClick(editor.content, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: editor.question is not None)
    assert editor.question is not None
    assert editor.isVisible() and window.unsaved()
    editor.question.reject()  # the question's Cancel (its Escape too)
    qtbot.waitUntil(lambda: editor.question is None)
    assert editor.isVisible() and " and more" in editor.content.toPlainText()

    QTest.keyClick(editor.content, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: editor.question is not None)
    discard = editor.question.findChild(QPushButton, "confirmDiscardEdit")
    assert discard is not None
    discard.click()
    qtbot.waitUntil(lambda: window.editor is None)
    assert not window.unsaved() and window.isVisible()


def test_escape_in_an_unchanged_memory_editor_closes_it(qtbot: QtBot, desk: Desk) -> None:
    window, editor = editing(qtbot, desk)
    QTest.keyClick(editor.content, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: window.editor is None)
    assert window.isVisible()


def tab_walk(qtbot: QtBot, start: QWidget, stop: QWidget) -> list[str]:
    """The controls Tab visits from `start` up to `stop`."""
    focused_on(qtbot, start)
    names: list[str] = []
    for _ in range(40):
        focused = QApplication.focusWidget()
        assert focused is not None
        names.append(focused.objectName())
        if focused is stop:
            return names
        QTest.keyClick(focused, Qt.Key.Key_Tab)
    raise AssertionError(f"Tab never reached {stop.objectName()!r}: {names}")


def test_tab_in_the_identity_window_goes_as_it_is_laid_out(qtbot: QtBot, desk: Desk) -> None:
    """Left to right, top to bottom: the documents, the editor and its row (reason, Discard,
    Save), the versions and their row (Export, Revert), the proposals and theirs (Reject, Adopt),
    the viewer (until 2026-12-02 Export came after the proposals, Reject after Adopt)."""
    window = opened(qtbot, desk, IdentityWindow)
    editor, side = window.doc_editor, window.side
    qtbot.waitUntil(lambda: side.versions.rowCount() > 0)
    focused_on(qtbot, editor.editor)
    QTest.keyClicks(editor.editor, "typed ")  # Discard is enabled
    assert editor.discard.isEnabled()
    assert tab_walk(qtbot, window.documents, side.viewer) == [
        "documents",
        "editor",
        "reason",
        "discard",
        "save",
        "versions",
        "export",  # Revert waits for an earlier version to be chosen
        "proposals",
        "viewer",  # Reject and Adopt for a proposal
    ]
