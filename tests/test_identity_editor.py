"""The identity window's editor over a real store: what Save writes (nothing when the text was
not changed), what happens to text typed while a save is on its way, and drafts left when
another document is chosen."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from core.app import Cairn
from core.model import Caller
from core.paths import Paths
from core.validation import content_hash
from core.writer import WriteTx
from desktop.desk import Desk
from desktop.windows.identity import IdentityWindow
from desktop.windows.settings import SettingsWindow
from tests.conftest import desk_on, settle
from tests.test_identity_window import history, open_on, read

pytestmark = [pytest.mark.gui, pytest.mark.timeout(60)]


def test_saving_an_unchanged_document_with_crlf_and_no_break_spaces_writes_nothing(
    qtbot: QtBot, desk: Desk
) -> None:
    """Version 2 was 'Line one\\r\\nLine\\xa0two\\r\\n' (written through the CLI, say); Save
    without touching the editor wrote version 3, 'Line one\\nLine two\\n': the editor's
    newlines and spaces replaced the stored ones. (Since 2026-11-30 every write stores the CRLF
    as LF; the no-break space stays, and an unchanged Save still writes nothing.)"""
    window = open_on(qtbot, desk)
    stored = "Line one\r\nLine\u00a0two\r\n"
    read(
        qtbot,
        desk,
        desk.cairn.identity.edit,
        Caller.human(),
        "user",
        stored,
        if_version=1,
        reason=None,
    )
    qtbot.waitUntil(lambda: window.doc_editor.base_label.text().endswith("version 2"))
    settle(qtbot, desk)
    assert not window.unsaved()
    window.doc_editor.save.click()
    qtbot.waitUntil(lambda: window.status.text() != "")
    settle(qtbot, desk)
    assert window.status.text() == "Nothing to save: the text is version 2's."
    kept = "Line one\nLine\u00a0two\n"
    assert [(v.version, v.content) for v in history(qtbot, desk)][:1] == [(2, kept)]


def test_saving_an_unchanged_document_stored_with_crlf_before_writes_nothing(
    qtbot: QtBot, paths: Paths
) -> None:
    """A document stored before 2026-11-30 may hold CRLF line breaks (every write stores LF
    since). Save without touching the editor handed the service that text, which stored it as
    LF - not the stored text, so a version 3 was written that changed nothing the person saw.
    Now an unchanged text, its line breaks taken as the service stores them, writes nothing."""
    Cairn.open(paths).close()  # the store, with the seeded version 1 of each document
    stored = "Line one\r\nLine\u00a0two\r\n"
    # As a store from before could hold it: no write stores a CRLF since.
    with closing(sqlite3.connect(paths.database)) as db, db:
        db.execute(
            "INSERT INTO identity_version (doc, version, content, author_kind, author, reason, "
            "parent, created_at, content_hash) VALUES ('user', 2, ?, 'human', 'human', NULL, 1, "
            "1, ?)",
            (stored, content_hash(stored)),
        )
    app = Cairn.open(paths)
    try:
        with desk_on(app) as desk:
            window = desk.open(IdentityWindow)  # the desk closes it (not qtbot: after the desk)
            qtbot.waitUntil(lambda: window.documents.count() >= 2)
            window.select_document("user")
            qtbot.waitUntil(
                lambda: window.doc_editor.base_label.text() == "Editing user, based on version 2"
            )
            settle(qtbot, desk)
            assert not window.unsaved()
            window.doc_editor.save.click()
            qtbot.waitUntil(lambda: window.status.text() != "")
            settle(qtbot, desk)
            assert window.status.text() == "Nothing to save: the text is version 2's."
            assert [(v.version, v.content) for v in history(qtbot, desk)][:1] == [(2, stored)]
            assert not window.unsaved()

            # A change is saved as before, its line breaks as line feeds.
            window.doc_editor.editor.appendPlainText("Line three")
            window.doc_editor.save.click()
            qtbot.waitUntil(lambda: window.side.versions.rowCount() == 3)
            settle(qtbot, desk)
            assert window.status.text() == "Saved user as version 3."
            assert history(qtbot, desk)[0].content == "Line one\nLine two\n\nLine three"
    finally:
        app.close()


def test_text_typed_while_a_save_is_on_its_way_stays_an_edit_of_the_saved_version(
    qtbot: QtBot, desk: Desk
) -> None:
    """The person pressed Save and typed on before the answer came: the answer cleared the
    edit and the reload put the saved text back, so what they typed meanwhile was gone."""
    window = open_on(qtbot, desk)
    editor = window.doc_editor
    editor.editor.setPlainText("Prefers short answers.\n")
    editor.save.click()  # the save runs on the worker; its answer comes through the event loop
    editor.editor.appendPlainText("Also: uses metric units.")
    typed = editor.text()
    qtbot.waitUntil(lambda: window.side.versions.rowCount() == 2)
    settle(qtbot, desk)
    assert window.status.text() == "Saved user as version 2."
    assert history(qtbot, desk)[0].content == "Prefers short answers.\n"
    assert editor.text() == typed and window.unsaved()
    assert editor.base_label.text() == "Editing user, based on version 2"
    editor.save.click()
    qtbot.waitUntil(lambda: window.side.versions.rowCount() == 3)
    settle(qtbot, desk)
    assert window.status.text() == "Saved user as version 3."
    assert history(qtbot, desk)[0].content == typed and not window.unsaved()


@pytest.mark.parametrize("typed_on", [False, True])
def test_a_document_left_before_its_save_answered_keeps_no_stale_draft(
    qtbot: QtBot, desk: Desk, typed_on: bool
) -> None:
    """Saved, then another document chosen before the answer: the saved text stayed behind as a
    draft based on version 1, came back as an unsaved edit, and the next save was refused as a
    conflict with the person's own save."""
    window = open_on(qtbot, desk)
    editor = window.doc_editor
    editor.editor.setPlainText("Prefers short answers.\n")
    editor.save.click()
    if typed_on:
        editor.editor.appendPlainText("Also: uses metric units.")
    left = editor.text()
    window.select_document("soul:default")
    qtbot.waitUntil(lambda: editor.base_label.text().startswith("Editing soul:default,"))
    settle(qtbot, desk)
    assert window.status.text() == "Saved user as version 2."
    window.select_document("user")
    qtbot.waitUntil(lambda: editor.base_label.text() == "Editing user, based on version 2")
    settle(qtbot, desk)
    # untouched since the save, the document is the saved version; typed on, the rest waits
    assert editor.text() == left and window.unsaved() is typed_on
    editor.editor.appendPlainText("Writes in English.")
    editor.save.click()
    qtbot.waitUntil(lambda: window.side.versions.rowCount() == 3)
    settle(qtbot, desk)
    assert window.status.text() == "Saved user as version 3."
    assert history(qtbot, desk)[0].content == editor.text()


@pytest.mark.parametrize("press", ["click", "ctrl+s"])
def test_save_pressed_twice_before_the_answer_saves_once_and_says_so(
    qtbot: QtBot, desk: Desk, press: str
) -> None:
    """Save pressed twice (a double click, Ctrl+S twice) before the first answer came: the text
    was saved as version 2, but the second save, still based on version 1, ended the window on
    "Not saved: user is at version 2, not 1 ..." - about text that was saved."""
    window = open_on(qtbot, desk)
    window.activateWindow()
    editor = window.doc_editor
    editor.editor.setPlainText("Prefers short answers.\n")
    editor.editor.setFocus()
    # The writer is busy a moment (the janitor, a backup): the first answer is slow to come.
    busy, free = threading.Event(), threading.Event()

    def hold(_tx: WriteTx) -> None:
        busy.set()
        free.wait(30)

    holder = threading.Thread(target=desk.cairn.store.writer.run, args=(hold,))
    holder.start()
    try:
        assert busy.wait(10)
        for _ in range(2):
            if press == "click":
                editor.save.click()
            else:  # a shortcut holds the button down a moment, then clicks it
                QTest.keyClick(editor.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
                qtbot.waitUntil(lambda: not editor.save.isDown())
    finally:
        free.set()
        holder.join(30)
    qtbot.waitUntil(lambda: window.status.text() != "")
    qtbot.waitUntil(lambda: window.side.versions.rowCount() == 2)
    settle(qtbot, desk)
    assert window.status.text() == "Saved user as version 2."
    assert [(v.version, v.content) for v in history(qtbot, desk)][:1] == [
        (2, "Prefers short answers.\n")
    ]
    assert not window.unsaved() and editor.save.isEnabled()
    assert editor.base_label.text() == "Editing user, based on version 2"


def test_a_refused_save_says_why_in_whole_sentences(qtbot: QtBot, desk: Desk) -> None:
    """The refusal ran two sentences together: "...read it again Your text is kept..."."""
    window = open_on(qtbot, desk)
    window.doc_editor.editor.setPlainText("Mine.\n")
    read(
        qtbot,
        desk,
        desk.cairn.identity.edit,
        Caller.human(),
        "user",
        "Elsewhere.\n",
        if_version=1,
        reason=None,
    )
    qtbot.waitUntil(lambda: window.side.versions.rowCount() == 2)
    settle(qtbot, desk)
    window.doc_editor.save.click()
    qtbot.waitUntil(lambda: "Not saved" in window.status.text())
    settle(qtbot, desk)
    assert window.status.text() == (
        "Not saved: user is at version 2, not 1; read it again. Your text is kept; save again "
        "to write it over version 2, or discard your changes."
    )
    assert window.doc_editor.text() == "Mine.\n"


def test_a_draft_left_in_another_document_counts_as_unsaved(qtbot: QtBot, desk: Desk) -> None:
    """The person edited the user profile and chose the soul: the window said nothing was
    unsaved, so a language change rebuilt it without asking and the profile's draft was gone."""
    window = open_on(qtbot, desk, "user")
    window.doc_editor.editor.setPlainText("My carefully written profile.\n")
    window.select_document("soul:default")
    qtbot.waitUntil(lambda: window.doc_editor.base_label.text().startswith("Editing soul:"))
    settle(qtbot, desk)
    assert not window.doc_editor.dirty and window.unsaved() and desk.unsaved() == [window]
    settings = desk.open(SettingsWindow)
    qtbot.addWidget(settings)
    settle(qtbot, desk)
    settings.language.setCurrentIndex(settings.language.findData("zh_CN"))
    qtbot.waitUntil(lambda: settings.language_question is not None)
    box = settings.language_question
    assert box is not None and "Cairn — Identity" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    settle(qtbot, desk)
    assert desk.window(IdentityWindow) is window and desk.language.current != "zh_CN"
    window.select_document("user")
    qtbot.waitUntil(lambda: window.doc_editor.text() == "My carefully written profile.\n")
    assert window.doc_editor.dirty
