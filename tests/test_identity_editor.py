"""The identity window's editor over a real store: what Save writes (nothing when the text was
not changed), what happens to text typed while a save is on its way, and drafts left when
another document is chosen."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from core.model import Caller
from desktop.desk import Desk
from tests.conftest import settle
from tests.test_identity_window import history, open_on, read

pytestmark = [pytest.mark.gui, pytest.mark.timeout(60)]


def test_saving_an_unchanged_document_with_crlf_and_no_break_spaces_writes_nothing(
    qtbot: QtBot, desk: Desk
) -> None:
    """Version 2 was 'Line one\\r\\nLine\\xa0two\\r\\n' (written through the CLI, say); Save
    without touching the editor wrote version 3, 'Line one\\nLine two\\n': the editor's
    newlines and spaces replaced the stored ones."""
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
    assert [(v.version, v.content) for v in history(qtbot, desk)][:1] == [(2, stored)]
