"""The capture policy window over a real store: a change in the window reaches the file, an edit
of the file reaches the window, an invalid file is named and the last valid policy stays."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox
from pytestqt.qtbot import QtBot

from core.policy import DEFAULT_TEXT, Mode
from desktop.desk import Desk
from desktop.windows.policy import PolicyWindow
from tests.conftest import settle

pytestmark = pytest.mark.gui


def file_of(desk: Desk) -> dict[str, Any]:
    return tomllib.loads(desk.cairn.policy.path.read_text(encoding="utf-8"))


def save_as_editor(path: Path, text: str) -> None:
    """An editor's save: a temporary file moved over the original."""
    tmp = path.with_name(".policy.toml.swp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def shown(combo: QComboBox) -> str:
    return str(combo.currentData())


@pytest.fixture
def window(qtbot: QtBot, desk: Desk) -> PolicyWindow:
    w = desk.open(PolicyWindow)
    qtbot.waitUntil(lambda: w.view is not None)
    settle(qtbot, desk)
    return w


def test_a_change_in_the_window_writes_the_file(
    qtbot: QtBot, desk: Desk, window: PolicyWindow
) -> None:
    assert shown(window.modes["kinds.fact"]) == "auto"
    assert shown(window.modes["kinds.idea"]) == "ask"
    assert window.path_label.text() == str(desk.cairn.policy.path)
    window.modes["kinds.fact"].setCurrentIndex(window.modes["kinds.fact"].findData("off"))
    qtbot.waitUntil(lambda: file_of(desk)["kinds"]["fact"] == "off")
    window.modes["scopes.user"].setCurrentIndex(window.modes["scopes.user"].findData("auto"))
    qtbot.waitUntil(lambda: file_of(desk)["scopes"]["user"] == "auto")
    settle(qtbot, desk)
    text = desk.cairn.policy.path.read_text(encoding="utf-8")
    assert "# Cairn capture policy" in text  # the person's comments are kept
    assert shown(window.modes["kinds.fact"]) == "off"


def test_an_edit_of_the_file_shows_live(qtbot: QtBot, desk: Desk, window: PolicyWindow) -> None:
    desk.cairn.policy.watch()  # the tray watches the file while it runs
    save_as_editor(desk.cairn.policy.path, DEFAULT_TEXT.replace('idea = "ask"', 'idea = "auto"'))
    qtbot.waitUntil(lambda: shown(window.modes["kinds.idea"]) == "auto", timeout=5000)
    settle(qtbot, desk)


def test_an_invalid_file_is_named_and_the_last_valid_policy_stays(
    qtbot: QtBot, desk: Desk, window: PolicyWindow
) -> None:
    desk.cairn.policy.watch()
    path = desk.cairn.policy.path
    save_as_editor(path, DEFAULT_TEXT.replace('fact = "auto"', 'fact = "off"'))
    qtbot.waitUntil(lambda: shown(window.modes["kinds.fact"]) == "off", timeout=5000)

    save_as_editor(path, DEFAULT_TEXT.replace('fact = "auto"', 'fact = "sometimes"'))
    qtbot.waitUntil(lambda: not window.error.isHidden(), timeout=5000)
    line = DEFAULT_TEXT.splitlines().index('fact = "auto"') + 1
    assert f"line {line}" in window.error.text()
    assert "kinds.fact" in window.error.text() and "sometimes" in window.error.text()
    assert shown(window.modes["kinds.fact"]) == "off"  # the last valid value, still in effect

    save_as_editor(path, DEFAULT_TEXT)
    qtbot.waitUntil(window.error.isHidden, timeout=5000)
    qtbot.waitUntil(lambda: shown(window.modes["kinds.fact"]) == "auto", timeout=5000)
    settle(qtbot, desk)


def test_pause_toggles(qtbot: QtBot, desk: Desk, window: PolicyWindow) -> None:
    assert not window.pause.isChecked()
    window.pause.click()
    qtbot.waitUntil(lambda: file_of(desk)["paused"] is True)
    settle(qtbot, desk)
    assert window.pause.isChecked()
    window.pause.click()
    qtbot.waitUntil(lambda: file_of(desk)["paused"] is False)
    settle(qtbot, desk)
    assert not window.pause.isChecked()


def test_an_agent_override_is_added_changed_and_removed(
    qtbot: QtBot, desk: Desk, window: PolicyWindow
) -> None:
    QTest.keyClicks(window.new_agent, "helper")
    window.new_rule.setCurrentIndex(window.new_rule.findData("kinds.idea"))
    window.new_mode.setCurrentIndex(window.new_mode.findData("auto"))
    window.add_button.click()
    qtbot.waitUntil(lambda: window.overrides.rowCount() == 1)
    assert file_of(desk)["agents"]["helper"] == {"kinds": {"idea": "auto"}}
    cells = [window.overrides.item(0, c) for c in (0, 1)]
    # the rule reads as the list of rules to add says it, in the person's language
    assert [c.text() if c else None for c in cells] == ["helper", "kind: idea"]
    # cleared when the change is answered, which may come after the policy's own change
    # reached the table (under load it did)
    qtbot.waitUntil(lambda: window.new_agent.text() == "", timeout=5000)

    mode = window.overrides.cellWidget(0, 2)
    assert isinstance(mode, QComboBox) and shown(mode) == "auto"
    mode.setCurrentIndex(mode.findData("off"))
    qtbot.waitUntil(lambda: file_of(desk)["agents"]["helper"] == {"kinds": {"idea": "off"}})
    settle(qtbot, desk)

    window.overrides.selectRow(0)
    assert window.remove_button.isEnabled()
    window.remove_button.click()
    qtbot.waitUntil(lambda: window.overrides.rowCount() == 0)
    assert "helper" not in file_of(desk).get("agents", {})
    settle(qtbot, desk)


def test_a_refused_agent_name_stays_in_the_field_to_fix(
    qtbot: QtBot, desk: Desk, window: PolicyWindow
) -> None:
    """The field was cleared before the answer came, so a refused name was gone with the
    error that named it."""
    QTest.keyClicks(window.new_agent, "Code Helper")
    window.new_rule.setCurrentIndex(window.new_rule.findData("kinds.idea"))
    window.add_button.click()
    settle(qtbot, desk)
    assert desk.presenter.last is not None and "not a valid agent name" in desk.presenter.last
    assert window.new_agent.text() == "Code Helper" and window.overrides.rowCount() == 0


def test_an_override_for_an_agent_whose_name_has_a_dot_is_added_changed_and_removed(
    qtbot: QtBot, desk: Desk, window: PolicyWindow
) -> None:
    """Agent names may hold dots (`gpt-4.1`), but adding an override for one said "unknown
    policy setting 'agents.gpt-4.1.kinds.idea'", and so did changing one written in the file."""
    QTest.keyClicks(window.new_agent, "gpt-4.1")
    window.new_rule.setCurrentIndex(window.new_rule.findData("kinds.idea"))
    window.new_mode.setCurrentIndex(window.new_mode.findData("auto"))
    window.add_button.click()
    settle(qtbot, desk)
    assert desk.presenter.last is None, desk.presenter.last
    qtbot.waitUntil(lambda: window.overrides.rowCount() == 1)
    assert file_of(desk)["agents"] == {"gpt-4.1": {"kinds": {"idea": "auto"}}}

    mode = window.overrides.cellWidget(0, 2)
    assert isinstance(mode, QComboBox)
    mode.setCurrentIndex(mode.findData("off"))
    qtbot.waitUntil(lambda: file_of(desk)["agents"]["gpt-4.1"] == {"kinds": {"idea": "off"}})
    settle(qtbot, desk)
    assert desk.presenter.last is None, desk.presenter.last

    window.overrides.selectRow(0)
    window.remove_button.click()
    qtbot.waitUntil(lambda: window.overrides.rowCount() == 0)
    assert "agents" not in file_of(desk)
    settle(qtbot, desk)


def test_an_override_for_an_upper_case_agent_name_is_refused(
    qtbot: QtBot, desk: Desk, window: PolicyWindow
) -> None:
    """`Claude-Code` was taken and written to the file without a word, though agent names are
    lower case and no agent could ever be named so: the override never applied."""
    QTest.keyClicks(window.new_agent, "Claude-Code")
    window.new_rule.setCurrentIndex(window.new_rule.findData("kinds.idea"))
    window.add_button.click()
    settle(qtbot, desk)
    assert desk.presenter.last is not None
    assert "'Claude-Code' is not a valid agent name" in desk.presenter.last
    assert "lower-case" in desk.presenter.last
    assert window.new_agent.text() == "Claude-Code" and window.overrides.rowCount() == 0
    assert "agents" not in file_of(desk)


def overridden(qtbot: QtBot, desk: Desk, window: PolicyWindow) -> None:
    """Two per-agent overrides in the table: another's fact (ask), then helper's idea (off)."""
    for target, mode in (("agents.another.kinds.fact", "ask"), ("agents.helper.kinds.idea", "off")):
        window.desk.call(desk.cairn.policy.set, desk.person, target, Mode(mode), owner=window)
    qtbot.waitUntil(lambda: window.overrides.rowCount() == 2)
    settle(qtbot, desk)


def tab_walk(qtbot: QtBot, window: PolicyWindow) -> list[str]:
    """The controls Tab visits from the pause switch until it comes back to it."""
    window.activateWindow()
    qtbot.waitActive(window)
    window.pause.setFocus()
    qtbot.waitUntil(window.pause.hasFocus)
    names: list[str] = []
    for _ in range(60):
        focused = QApplication.focusWidget()
        assert focused is not None
        names.append(focused.objectName())
        QTest.keyClick(focused, Qt.Key.Key_Tab)
        if window.pause.hasFocus():
            return names
    raise AssertionError(f"Tab never came back to the pause switch: {names}")


def test_tab_follows_the_window_from_top_to_bottom(
    qtbot: QtBot, desk: Desk, window: PolicyWindow
) -> None:
    """The pause switch, the kinds, scope and origin, the overrides and the mode of each, the
    fields that add one, then the file - as they are laid out (until 2026-12-02 the kinds,
    built as the policy loads, came last, after Open file)."""
    overridden(qtbot, desk, window)
    kinds = [f"mode.kinds.{k}" for k in desk.cairn.policy.current().kinds]
    general = ["mode.scopes.global", "mode.scopes.user", "mode.extracted", "mode.other_kinds"]
    rows = ["override.another.kinds.fact", "override.helper.kinds.idea"]
    # Remove too: the table, given the focus, selected its first row
    adding = ["newAgent", "newRule", "newMode", "addOverride", "removeOverride"]
    assert tab_walk(qtbot, window) == [
        "pause",
        *kinds,
        *general,
        "overrides",
        *rows,
        *adding,
        "policyPath",
        "openFile",
    ]


def test_changing_a_rows_mode_with_the_keyboard_keeps_the_focus_on_it(
    qtbot: QtBot, desk: Desk, window: PolicyWindow
) -> None:
    """Up on an override's mode changes it; the table is filled again from the policy, and the
    focus stays on that row's mode, for the next key (until 2026-12-02 it fell out of the
    table)."""
    overridden(qtbot, desk, window)
    window.activateWindow()
    qtbot.waitActive(window)
    mode = window.overrides.cellWidget(1, 2)
    assert isinstance(mode, QComboBox) and mode.objectName() == "override.helper.kinds.idea"
    mode.setFocus()
    qtbot.waitUntil(mode.hasFocus)
    QTest.keyClick(mode, Qt.Key.Key_Up)
    qtbot.waitUntil(lambda: file_of(desk)["agents"]["helper"] == {"kinds": {"idea": "ask"}})
    settle(qtbot, desk)
    focused = QApplication.focusWidget()
    assert focused is not None and focused.objectName() == "override.helper.kinds.idea"
    assert isinstance(focused, QComboBox) and shown(focused) == "ask"
    assert window.overrides.currentRow() == 1
    QTest.keyClick(focused, Qt.Key.Key_Up)
    qtbot.waitUntil(lambda: file_of(desk)["agents"]["helper"] == {"kinds": {"idea": "auto"}})
    settle(qtbot, desk)
    assert QApplication.focusWidget() is window.overrides.cellWidget(1, 2)
