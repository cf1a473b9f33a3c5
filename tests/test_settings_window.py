"""The settings window over a real store: a backup taken now is listed, a changed schedule and
notes folder reach settings.toml, and the notes folder is followed at once."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from core.autostart import Autostart
from core.autostart_entries import Kind
from core.knobs import KNOB_BY_NAME
from core.model import Caller
from desktop.desk import Desk
from desktop.windows.agents import AgentsWindow
from desktop.windows.identity import IdentityWindow
from desktop.windows.settings import SettingsWindow
from tests.conftest import settle

pytestmark = pytest.mark.gui


def off_gui(qtbot: QtBot, desk: Desk, fn: Callable[..., Any], *args: Any) -> Any:
    """A service call made the way the windows make it (the GUI thread is refused)."""
    out: list[Any] = []
    desk.call(fn, *args, on_done=out.append)
    qtbot.waitUntil(lambda: bool(out))
    return out[0]


def settings_file(desk: Desk) -> dict[str, Any]:
    path = desk.cairn.paths.settings_file
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


@pytest.fixture
def window(qtbot: QtBot, desk: Desk) -> SettingsWindow:
    w = desk.open(SettingsWindow)
    qtbot.waitUntil(lambda: w.view is not None)
    settle(qtbot, desk)
    return w


def test_the_data_locations_are_shown(desk: Desk, window: SettingsWindow) -> None:
    assert window.locations["database"].text() == str(desk.cairn.paths.database)
    assert window.locations["backups"].text() == str(desk.cairn.paths.backups)
    assert window.locations["database"].isReadOnly()


def test_the_login_box_writes_and_removes_the_tray_autostart_entry(
    qtbot: QtBot, window: SettingsWindow
) -> None:
    entry = window.autostart_entries.where.tray
    tray = Path(str(entry))
    assert window.autostart.isEnabled() and not window.autostart.isChecked()
    window.autostart.click()
    said = f"It takes effect at your next login. Its entry: {entry}."
    qtbot.waitUntil(lambda: window.autostart_note.text() == said)
    assert window.autostart.isEnabled() and window.autostart.isChecked()
    assert window.autostart_entries.status().enabled[0].current
    window.autostart.click()
    said = "Cairn no longer starts when you log in. This one keeps running."
    qtbot.waitUntil(lambda: window.autostart_note.text() == said)
    assert window.autostart.isEnabled() and not window.autostart.isChecked()
    assert not tray.exists()
    window.refresh()  # what the last click did is said once
    qtbot.waitUntil(lambda: window.autostart_note.text() == "")


def test_an_entry_for_another_installation_is_pointed_out(qtbot: QtBot, desk: Desk) -> None:
    entries = Autostart.here()
    tray = Path(str(entries.where.tray))
    tray.parent.mkdir(parents=True)
    tray.write_text(entries.entry(Kind.TRAY).content.replace("cairn", "old-cairn"))
    w = desk.open(SettingsWindow)
    qtbot.waitUntil(lambda: w.view is not None)
    assert w.autostart.isChecked()
    assert "starts another installation or version of Cairn" in w.autostart_note.text()
    settle(qtbot, desk)


def test_the_login_box_says_the_headless_daemon_starts_instead_and_replaces_it(
    qtbot: QtBot, desk: Desk
) -> None:
    Autostart.here().enable(Kind.HEADLESS)
    w = desk.open(SettingsWindow)
    qtbot.waitUntil(lambda: w.view is not None)
    assert not w.autostart.isChecked()
    assert "The headless daemon starts when you log in" in w.autostart_note.text()
    w.autostart.click()
    qtbot.waitUntil(lambda: w.autostart_note.text().startswith("The headless daemon no longer"))
    assert w.autostart.isEnabled() and w.autostart.isChecked()
    assert [f.kind for f in w.autostart_entries.status().enabled] == [Kind.TRAY]
    settle(qtbot, desk)


def test_back_up_now_adds_a_backup_to_the_list(
    qtbot: QtBot, desk: Desk, window: SettingsWindow
) -> None:
    assert window.backups.rowCount() == 0
    window.backup_now.click()
    qtbot.waitUntil(lambda: window.backups.rowCount() == 1)
    reason = window.backups.item(0, 1)
    assert reason is not None and reason.text() == "by you"  # on disk: Cairn's word, "manual"
    on_disk = off_gui(qtbot, desk, desk.cairn.backups.list)
    assert [b.reason for b in on_disk] == ["manual"]
    settle(qtbot, desk)


def test_a_changed_backup_interval_is_written_to_settings_toml(
    qtbot: QtBot, desk: Desk, window: SettingsWindow
) -> None:
    assert window.interval.value() == 24.0
    window.interval.setFocus()
    window.interval.selectAll()
    QTest.keyClicks(window.interval, "6")
    QTest.keyClick(window.interval, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: settings_file(desk).get("backup", {}).get("interval_hours") == 6.0)
    window.keep_weekly.setValue(2)
    window.keep_weekly.editingFinished.emit()
    qtbot.waitUntil(lambda: settings_file(desk)["backup"].get("keep_weekly") == 2)
    settle(qtbot, desk)
    assert desk.cairn.config.current().number("backup.interval_hours") == 6.0


def test_asking_about_terminal_commands_too_is_a_click(
    qtbot: QtBot, desk: Desk, window: SettingsWindow
) -> None:
    """security.confirm_terminals_in_tray: off by default; ticked, it reaches settings.toml and
    the running Cairn at once (the tray's question reads it for the next command)."""
    assert not window.confirm_terminals.isChecked()
    window.confirm_terminals.click()
    qtbot.waitUntil(
        lambda: settings_file(desk).get("security", {}).get("confirm_terminals_in_tray") is True
    )
    settle(qtbot, desk)
    assert desk.cairn.config.current().flag("security.confirm_terminals_in_tray")
    window.close()
    again = desk.open(SettingsWindow)  # shown as stored
    qtbot.waitUntil(lambda: again.view is not None)
    assert again.confirm_terminals.isChecked()


def test_the_notes_folder_is_written_and_followed(
    qtbot: QtBot, desk: Desk, window: SettingsWindow, short_tmp: Path
) -> None:
    folder = short_tmp / "notes"
    folder.mkdir()
    window.set_notes_folder(str(folder))
    qtbot.waitUntil(lambda: window.notes_folder.text() == str(folder))
    assert settings_file(desk)["notes"]["folder"] == str(folder)
    assert window.notes_off.isEnabled()

    (folder / "deploys.md").write_text("Deploys go out on Tuesdays.\n", encoding="utf-8")

    def landed() -> bool:
        page = off_gui(qtbot, desk, desk.cairn.memories.list, Caller.human())
        return [m.content for m in page.items] == ["Deploys go out on Tuesdays."]

    qtbot.waitUntil(landed, timeout=10_000)

    window.notes_off.click()
    qtbot.waitUntil(lambda: window.notes_folder.text() == "")
    assert settings_file(desk)["notes"]["folder"] == ""
    settle(qtbot, desk)


def test_choosing_a_language_rebuilds_the_windows_in_it(
    qtbot: QtBot, desk: Desk, window: SettingsWindow
) -> None:
    english = window.windowTitle()
    assert window.language.currentData() == "system"
    window.language.setCurrentIndex(window.language.findData("zh_CN"))

    def reopened_in(language: str) -> SettingsWindow | None:
        again = desk.window(SettingsWindow)
        return again if again is not None and desk.language.current == language else None

    qtbot.waitUntil(lambda: reopened_in("zh_CN") is not None)
    chinese = reopened_in("zh_CN")
    assert chinese is not None and chinese.isVisible()
    assert desk.prefs.value("language") == "zh_CN"
    assert chinese.windowTitle() != english  # rebuilt in Chinese
    assert chinese.language.currentData() == "zh_CN"
    chinese.language.setCurrentIndex(chinese.language.findData("en"))
    qtbot.waitUntil(lambda: reopened_in("en") is not None)
    back = reopened_in("en")
    assert back is not None and back.windowTitle() == english
    settle(qtbot, desk)


def test_in_chinese_the_settings_tooltips_are_chinese(qtbot: QtBot, desk: Desk) -> None:
    """The notes folder's and the backup schedule's tooltips are core's help texts of those
    settings: they stayed English in the Chinese window."""
    fields = {  # setting -> the field whose tooltip is its help
        "notes.folder": "notes_folder",
        "backup.interval_hours": "interval",
        "backup.keep_daily": "keep_daily",
        "backup.keep_weekly": "keep_weekly",
    }

    def tooltips(window: SettingsWindow) -> dict[str, str]:
        return {name: getattr(window, field).toolTip() for name, field in fields.items()}

    try:
        desk.set_language("zh_CN", reopen=SettingsWindow)
        chinese = desk.window(SettingsWindow)
        assert chinese is not None and chinese.isVisible()
        settle(qtbot, desk)
        tips = tooltips(chinese)
        assert "自动在线备份" in tips["backup.interval_hours"]
        assert "每日备份" in tips["backup.keep_daily"] and "每周备份" in tips["backup.keep_weekly"]
        assert "Markdown 笔记" in tips["notes.folder"]
        assert all(tip != KNOB_BY_NAME[name].help for name, tip in tips.items())
    finally:
        desk.set_language("en", reopen=SettingsWindow)
    english = desk.window(SettingsWindow)
    assert english is not None
    assert tooltips(english) == {name: KNOB_BY_NAME[name].help for name in fields}
    settle(qtbot, desk)


def test_a_language_change_asks_before_unsaved_edits_are_lost(
    qtbot: QtBot, desk: Desk, window: SettingsWindow
) -> None:
    """Choosing a language closed and rebuilt every window without a word: a half-written
    identity document was gone."""
    identity = desk.open(IdentityWindow)
    qtbot.waitUntil(lambda: identity.doc_editor.editor.toPlainText() != "")
    settle(qtbot, desk)
    identity.doc_editor.editor.setPlainText("Prefers metric units; half written")
    assert identity.unsaved()
    window = desk.open(SettingsWindow)
    window.language.setCurrentIndex(window.language.findData("zh_CN"))
    qtbot.waitUntil(lambda: window.language_question is not None)
    box = window.language_question
    assert box is not None and "Cairn — Identity" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    box.button(QMessageBox.StandardButton.Cancel).click()
    settle(qtbot, desk)
    assert desk.window(IdentityWindow) is identity and desk.language.current != "zh_CN"
    assert identity.doc_editor.editor.toPlainText() == "Prefers metric units; half written"
    assert window.language.currentData() == "system"

    # closed from the title bar (or Alt+F4), not answered: the language stays, and so does the
    # choice shown (it showed the new language, and choosing it again asked nothing)
    window.language.setCurrentIndex(window.language.findData("zh_CN"))
    qtbot.waitUntil(lambda: window.language_question is not None)
    box = window.language_question
    assert box is not None
    box.close()
    qtbot.waitUntil(lambda: window.language_question is None)
    assert window.language.currentData() == "system" and desk.language.current != "zh_CN"


def test_a_token_shown_once_counts_as_unsaved(qtbot: QtBot, desk: Desk) -> None:
    """Switching the language destroyed the dialog showing a new agent's token - shown once,
    never again - without asking."""
    agents = desk.open(AgentsWindow)
    qtbot.waitUntil(lambda: agents.loads >= 1)
    agents.name_input.setText("helper")
    agents.add_button.click()
    qtbot.waitUntil(lambda: agents.token_dialog is not None)
    assert desk.unsaved() == [agents]


def test_in_chinese_qts_own_buttons_are_chinese_too(qtbot: QtBot, desk: Desk) -> None:
    """Every confirmation's default button read "Cancel" (and the token dialog "Close") in the
    Chinese windows: Qt's own translation was never loaded."""
    desk.language.apply("zh_CN")
    try:
        box = QMessageBox()
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        close = box.addButton(QMessageBox.StandardButton.Close)
        assert (cancel.text(), close.text()) == ("取消", "关闭")
    finally:
        desk.language.apply("en")
    assert QMessageBox().addButton(QMessageBox.StandardButton.Cancel).text() == "Cancel"


def test_switching_the_language_never_leaves_no_window_open(
    qtbot: QtBot, desk: Desk, window: SettingsWindow
) -> None:
    """On a desktop without a tray, closing the last window quits Cairn: the rebuilt Settings
    window must be open before the old one closes."""
    others_open: list[int] = []

    class Watch(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Close:
                visible = [
                    w for w in QApplication.topLevelWidgets() if w.isVisible() and w is not watched
                ]
                others_open.append(len(visible))
            return False

    watch = Watch()
    window.installEventFilter(watch)
    try:
        window.language.setCurrentIndex(window.language.findData("zh_CN"))
        qtbot.waitUntil(
            lambda: desk.language.current == "zh_CN" and desk.window(SettingsWindow) is not None
        )
        assert others_open and others_open[0] >= 1  # the new window was already showing
    finally:
        desk.language.apply("en")
    settle(qtbot, desk)


def test_the_backup_interval_is_neither_rounded_off_nor_rewritten(qtbot: QtBot, desk: Desk) -> None:
    """The interval showed one decimal: typing 0.04 hours turned backups off, and leaving the
    field of a file value of 0.25 wrote 0.3 into settings.toml though nothing was typed."""
    off_gui(qtbot, desk, desk.cairn.config.set, Caller.human(), "backup.interval_hours", 0.25)
    w = desk.open(SettingsWindow)
    qtbot.waitUntil(lambda: w.view is not None)
    settle(qtbot, desk)
    assert w.interval.text() == "0.25 h"
    w.interval.editingFinished.emit()  # the person tabbed through it
    settle(qtbot, desk)
    assert settings_file(desk)["backup"]["interval_hours"] == 0.25
    # a value finer than the field shows rounded, and is still not rewritten by leaving it
    off_gui(qtbot, desk, desk.cairn.config.set, Caller.human(), "backup.interval_hours", 0.125)
    w.refresh()
    qtbot.waitUntil(lambda: w.interval.text() == "0.13 h")
    w.interval.editingFinished.emit()
    settle(qtbot, desk)
    assert settings_file(desk)["backup"]["interval_hours"] == 0.125
    w.interval.setFocus()
    w.interval.selectAll()
    QTest.keyClicks(w.interval, "0.04")
    QTest.keyClick(w.interval, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: settings_file(desk)["backup"]["interval_hours"] == 0.04)
    assert w.interval.text() == "0.04 h"
    settle(qtbot, desk)
