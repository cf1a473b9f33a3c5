"""The Agents window over a real store and socket: registering shows the token once and the
agent appears; pause, resume and revoke reach the store; a revoked agent's hello is refused."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from core.agents import AgentStatus
from core.daemon import Runtime
from core.runtime import socket_path
from desktop.desk import Desk
from desktop.windows.agents import AgentsWindow
from tests.conftest import off_gui, settle
from tests.serving import RawClient
from tests.test_memories_window import click

pytestmark = pytest.mark.gui


def opened(qtbot: QtBot, desk: Desk) -> AgentsWindow:
    window = desk.open(AgentsWindow)
    qtbot.waitUntil(lambda: window.loads >= 1)
    settle(qtbot, desk)
    return window


def add(qtbot: QtBot, window: AgentsWindow, name: str) -> str:
    window.name_input.setText(name)
    click(window.add_button)
    qtbot.waitUntil(lambda: window.token_dialog is not None)
    dialog = window.token_dialog
    assert dialog is not None and dialog.isVisible()
    return dialog.token.text()


def status_cell(window: AgentsWindow, name: str) -> str | None:
    for row, a in enumerate(window.agents):
        if a.name == name:
            item = window.table.item(row, 1)
            return item.text() if item is not None else None
    return None


def test_adding_an_agent_shows_its_token_once(qtbot: QtBot, desk: Desk) -> None:
    window = opened(qtbot, desk)
    assert window.agents == []
    token = add(qtbot, window, "claude-code")
    dialog = window.token_dialog
    assert dialog is not None
    assert token.startswith("cairn_") and len(token) > 30
    notice = dialog.findChild(QLabel, "tokenNotice")
    assert notice is not None and "will not show it again" in notice.text()
    click(dialog.copy_button)
    assert QGuiApplication.clipboard().text() == token
    qtbot.waitUntil(lambda: status_cell(window, "claude-code") == "active")
    assert window.name_input.text() == ""
    dialog.reject()
    qtbot.waitUntil(lambda: window.token_dialog is None)
    # Nothing in the window keeps the token once the dialog is gone.
    texts = [
        window.table.item(r, c).text()  # type: ignore[union-attr]
        for r in range(window.table.rowCount())
        for c in range(window.table.columnCount())
    ]
    assert all(token not in t for t in texts)
    # The store kept only its hash: the name works with the token, and nothing shows it again.
    assert off_gui(lambda: desk.cairn.agents.authenticate("claude-code", token, require_token=True))
    # A second registration of the same name is refused with a clear sentence.
    window.name_input.setText("claude-code")
    click(window.add_button)
    settle(qtbot, desk)
    assert window.token_dialog is None
    assert desk.presenter.last is not None and "already has a token" in desk.presenter.last


def test_pause_resume_and_revoke(qtbot: QtBot, served_desk: tuple[Desk, Runtime]) -> None:
    desk, runtime = served_desk
    window = opened(qtbot, desk)
    token = add(qtbot, window, "helper")
    assert window.token_dialog is not None
    window.token_dialog.reject()
    qtbot.waitUntil(lambda: window.select("helper"))
    assert window.pause_button.isEnabled() and not window.resume_button.isEnabled()

    click(window.pause_button)
    qtbot.waitUntil(lambda: status_cell(window, "helper") == "paused")
    assert off_gui(lambda: desk.cairn.agents.get("helper")).status is AgentStatus.PAUSED
    selected = window.selected()
    assert selected is not None and selected.name == "helper"  # kept across the refresh
    assert window.resume_button.isEnabled() and not window.pause_button.isEnabled()
    click(window.resume_button)
    qtbot.waitUntil(lambda: status_cell(window, "helper") == "active")

    client = RawClient(socket_path(runtime.paths))
    try:
        assert "result" in client.hello(agent="helper", token=token)
    finally:
        client.close()

    click(window.revoke_button)
    box = window.confirm
    assert box is not None and box.isVisible() and "helper" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    settle(qtbot, desk)
    assert off_gui(lambda: desk.cairn.agents.get("helper")).status is AgentStatus.ACTIVE

    click(window.revoke_button)
    box = window.confirm
    assert box is not None
    confirm = box.findChild(QPushButton, "confirmRevoke")
    assert confirm is not None
    confirm.click()
    qtbot.waitUntil(lambda: status_cell(window, "helper") == "revoked")
    assert not window.revoke_button.isEnabled()
    row = next(r for r, a in enumerate(window.agents) if a.name == "helper")
    proof = window.table.item(row, 2)
    assert proof is not None and proof.text() == "none (revoked)"  # it said "declared only"

    client = RawClient(socket_path(runtime.paths))
    try:
        answer = client.hello(agent="helper", token=token)
        assert "error" in answer and "revoked" in answer["error"]["message"]
    finally:
        client.close()
