"""Text that agents wrote is shown as typed in every window: a memory, a summary, a relation's
note or a proposal's note holding `<b>` or `<img>` is shown with its angle brackets, never
rendered. Qt's labels, message boxes and tooltips take any text that looks like HTML as HTML
(`Qt.mightBeRichText`), so an agent could make a window say what its text does not (hide words,
style them as Cairn's own)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from PySide6 import QtGui
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from core.daemon import Runtime
from core.model import Caller
from core.requests import WriteRequest
from core.supersession import SupersedeResult
from desktop.desk import Desk
from tests.conftest import ROOT, off_gui, settle
from tests.serving import RawClient
from tests.test_identity_window import open_on
from tests.test_memories_window import note, opened, seed, select
from tests.test_review_window import connect, show_row_of, window_for

pytestmark = pytest.mark.gui

MARKUP = "<b>BOLD</b> and <img src='x.png'>"


def rendered(text: str, text_format: Qt.TextFormat) -> bool:
    """Whether Qt draws `text` as HTML in a widget of that text format."""
    if text_format is Qt.TextFormat.RichText:
        return True
    return text_format is Qt.TextFormat.AutoText and QtGui.Qt.mightBeRichText(text)


def markup_rendered(root: QWidget) -> list[str]:
    """The labels under `root` (message boxes included) that would draw MARKUP as HTML."""
    labels = root.findChildren(QLabel)
    if isinstance(root, QLabel):
        labels.append(root)
    return [
        f"{label.objectName() or type(label).__name__}: {label.text()!r}"
        for label in labels
        if "<b>BOLD" in label.text() and rendered(label.text(), label.textFormat())
    ]


def tip_rendered(tip: str) -> bool:
    """A tooltip is drawn as HTML when it looks like HTML: MARKUP must arrive escaped."""
    return "<b>BOLD" in tip and QtGui.Qt.mightBeRichText(tip)


def test_the_memories_window_shows_an_agents_markup_as_typed(qtbot: QtBot, desk: Desk) -> None:
    (old,) = seed(desk, [note(f"the port was 8080 {MARKUP}", summary=f"port {MARKUP}")])
    replacement = WriteRequest.from_params(
        {"content": f"the port is 9090 {MARKUP}", "kind": "fact", "scope": "user"}
    )
    result = off_gui(
        lambda: desk.cairn.memories.supersede(
            Caller.human(), old, replacement=replacement, reason=f"moved {MARKUP}"
        )
    )
    assert isinstance(result, SupersedeResult)
    new_id = result.new.id
    window = opened(qtbot, desk)
    select(qtbot, window, new_id)
    panel = window.panel
    assert "Replaces" in panel.relations.text() and "<b>BOLD" in panel.relations.text()
    assert markup_rendered(window) == []
    history = panel.history
    items = [history.topLevelItem(i) for i in range(history.topLevelItemCount())]
    tips = [item.toolTip(4) for item in items if item is not None]
    assert tips and not any(tip_rendered(t) for t in tips), tips
    model = window.model
    row = model.row_of(new_id)
    assert row is not None
    content_tip = model.index(row, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "BOLD" in content_tip and not tip_rendered(content_tip), content_tip

    window.panel.forget_button.click()
    qtbot.waitUntil(lambda: window.confirm is not None)
    box = window.confirm
    assert isinstance(box, QMessageBox) and "<b>BOLD" in box.text() + box.informativeText()
    assert markup_rendered(box) == []
    box.reject()
    window.close()


def test_the_review_queue_shows_an_agents_markup_as_typed(
    qtbot: QtBot, served_desk: tuple[Desk, Runtime], workspace_dir: Path
) -> None:
    desk, runtime = served_desk
    agent = connect(runtime, workspace_dir, "helper")
    try:
        stored = agent.request(
            "memory.write",
            {"content": f"the port is 8080 {MARKUP}", "kind": "fact", "scope": "project"},
        )["result"]
        other = connect(runtime, workspace_dir, "other")
        answer = other.request(
            "memory.update",
            {"id": stored["id"], "if_revision": 1, "content": f"the port is 9090 {MARKUP}"},
        )["result"]
        assert answer["status"] == "pending", answer
        other.close()
        window = window_for(qtbot, desk, 1)
        show_row_of(window, "the port is 8080")
        assert "<b>BOLD" in window.detail.title.text()
        assert markup_rendered(window) == []
        window.close()
    finally:
        agent.close()


def test_an_identity_proposals_note_is_shown_as_typed(
    qtbot: QtBot, served_desk: tuple[Desk, Runtime], workspace_dir: Path
) -> None:
    desk, runtime = served_desk
    agent: RawClient = connect(runtime, workspace_dir, "helper")
    try:
        answer = agent.request(
            "identity.propose",
            {"doc": "user", "content": "Works in Rust.\n", "reason": f"saw {MARKUP}"},
        )
        assert "result" in answer, answer
        window = open_on(qtbot, desk)
        qtbot.waitUntil(lambda: window.side.proposals.count() > 0)
        proposals = window.side.proposals
        tips = [proposals.item(i).toolTip() for i in range(proposals.count())]
        assert any("BOLD" in t for t in tips), tips
        assert not any(tip_rendered(t) for t in tips), tips
        proposals.setCurrentRow(0)
        settle(qtbot, desk)
        assert markup_rendered(window) == []
        window.close()
    finally:
        agent.close()


def test_every_label_and_message_box_in_the_windows_is_made_plain() -> None:
    """The windows make their labels and message boxes with `desktop.widgets.plain_label` and
    `plain_box`, which show text as typed: one made directly with Qt's constructor (or
    QMessageBox.warning and its kin) would draw an agent's markup again."""
    made_directly = []
    for path in sorted((ROOT / "desktop").rglob("*.py")):
        if path.name == "widgets.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            direct = isinstance(func, ast.Name) and func.id in ("QLabel", "QMessageBox")
            static = (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "QMessageBox"
                and func.attr in ("warning", "question", "information", "critical", "about")
            )
            if direct or static:
                made_directly.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert made_directly == []
