"""The tray, offscreen: its menu, the waiting-proposals count from a real agent's socket write, the
capture policy changed from the menu into the file, throttled notifications - and the real `cairn`
process: one instance per user, a clean quit, a clear refusal when a headless Cairn serves."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QFrame,
    QLabel,
    QMessageBox,
    QPushButton,
    QSystemTrayIcon,
    QWidget,
)
from pytestqt.qtbot import QtBot

from core.app import Cairn
from core.daemon import Runtime, stop_headless
from core.errors import AlreadyRunning, ConfigInvalid, NotRunning
from core.paths import Paths
from core.policy import Mode
from core.runtime import probe, socket_path
from desktop import app as tray_app
from desktop.desk import Desk, ToolWindow
from desktop.single import local_name
from desktop.tray import IDLE, PAUSED, PAUSED_PENDING, PENDING, WINDOWS, Tray, window_class
from desktop.windows.identity import IdentityWindow
from desktop.windows.settings import SettingsWindow
from tests.conftest import ROOT, cairn_env, settle
from tests.serving import RawClient, paths_for, running_daemon, start_daemon, wait_for
from tests.test_story import tell, until

pytestmark = pytest.mark.gui

MENU = [
    "Review queue (0)",
    "Memories",
    "Identity",
    "Capture policy",
    "Agents",
    "Health",
    "Export…",
    "Settings",
    "Quit",
]


@pytest.fixture
def quits() -> list[str]:
    return []


@pytest.fixture
def tray(qtbot: QtBot, desk: Desk, quits: list[str]) -> Iterator[Tray]:
    t = Tray(desk, quit=lambda: quits.append("quit"))
    settle(qtbot, desk)
    try:
        yield t
    finally:
        t.close()


@pytest.fixture
def served_tray(
    qtbot: QtBot, served_desk: tuple[Desk, Runtime], quits: list[str]
) -> Iterator[tuple[Tray, Runtime]]:
    desk, runtime = served_desk
    t = Tray(desk, quit=lambda: quits.append("quit"))
    settle(qtbot, desk)
    try:
        yield t, runtime
    finally:
        t.close()


def menu_texts(tray: Tray) -> list[str]:
    return [a.text() for a in tray.menu.actions() if not a.isSeparator()]


def read_policy(desk: Desk) -> dict[str, object]:
    return tomllib.loads(desk.cairn.policy.path.read_text(encoding="utf-8"))


def agent(runtime: Runtime, workspace: Path, name: str = "agent-a") -> RawClient:
    client = RawClient(socket_path(runtime.paths))
    assert "result" in client.hello(agent=name, workspace=str(workspace))
    return client


def propose(client: RawClient, idea: str) -> None:
    result = client.request("memory.write", {"content": idea, "kind": "idea", "scope": "project"})
    assert result["result"]["status"] == "pending", result


# -- the menu -----------------------------------------------------------------------------------


def test_the_menu_lists_every_window_in_order(tray: Tray, quits: list[str]) -> None:
    assert menu_texts(tray) == MENU
    assert tray.icon.toolTip() == "Cairn — nothing waiting"
    assert tray.variant == IDLE
    quit_action = tray.menu.actions()[-1]
    quit_action.trigger()
    assert quits == ["quit"]


def test_every_entry_opens_its_window(qtbot: QtBot, tray: Tray, desk: Desk) -> None:
    by_name = {a.objectName(): a for a in tray.menu.actions()}
    entries = {
        "trayReview": "review",
        "trayMemories": "memories",
        "trayIdentity": "identity",
        "trayAgents": "agents",
        "trayHealth": "health",
        "trayExport": "archive",
        "traySettings": "settings",
    }
    for action_name, key in entries.items():
        by_name[action_name].trigger()
        window = desk.window(window_class(key))
        assert window is not None and window.isVisible(), key
    tray.policy_window_action.trigger()
    assert desk.window(window_class("policy")) is not None
    assert set(WINDOWS) == {*entries.values(), "policy"}
    settle(qtbot, desk)


def test_the_icon_and_a_clicked_notification_open_the_review_queue(
    qtbot: QtBot, tray: Tray, desk: Desk
) -> None:
    review = window_class("review")
    tray.icon.activated.emit(QSystemTrayIcon.ActivationReason.Context)
    assert desk.window(review) is None  # the context menu is not a click on the icon
    tray.icon.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
    window = desk.window(review)
    assert window is not None and window.isVisible()
    window.close()
    tray.icon.messageClicked.emit()
    assert window.isVisible()
    settle(qtbot, desk)


def test_the_icon_a_notification_and_the_menu_bring_back_a_minimized_window(
    qtbot: QtBot, tray: Tray, desk: Desk
) -> None:
    """A minimized window stayed minimized when the person clicked the tray icon, a
    notification or its menu entry (or launched Cairn again): it was shown and raised, never
    restored."""
    tray.icon.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
    window = desk.window(window_class("review"))
    assert window is not None
    by_name = {a.objectName(): a for a in tray.menu.actions()}

    def click_the_icon() -> None:
        tray.icon.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)

    def click_a_notification() -> None:
        tray.icon.messageClicked.emit()

    for bring_back in (click_the_icon, click_a_notification, by_name["trayReview"].trigger):
        window.showMaximized()
        window.showMinimized()
        assert window.isMinimized()
        bring_back()
        assert not window.isMinimized() and window.isVisible()
        assert window.isMaximized()  # restored as it was before, not resized
    settle(qtbot, desk)


def test_without_a_system_tray_the_review_queue_opens_with_a_note(
    qtbot: QtBot, tray: Tray, desk: Desk
) -> None:
    assert not QSystemTrayIcon.isSystemTrayAvailable()  # offscreen has none
    assert tray.start() is False
    window = desk.window(window_class("review"))
    assert window is not None and window.isVisible()
    note = window.findChild(QLabel, "noTrayNote")
    assert note is not None and note is tray.note
    assert "no system tray" in note.text() and "closing the last one quits" in note.text()
    settle(qtbot, desk)


def strip_buttons(window: QWidget) -> dict[str, QPushButton]:
    strip = window.findChild(QFrame, "noTrayStrip")
    assert strip is not None
    return {
        b.objectName().removeprefix("noTray-"): b
        for b in strip.findChildren(QPushButton)
        if b.objectName().startswith("noTray-")
    }


def test_without_a_system_tray_every_window_offers_what_the_menu_would(
    qtbot: QtBot, tray: Tray, desk: Desk, quits: list[str]
) -> None:
    """With no tray there is no menu: each window carries buttons for the others and Quit, and
    keeps them (in the new language) when the language changes."""
    assert all(window_class(key).name == key for key in WINDOWS)  # how the strip skips its own
    assert tray.start() is False
    review = desk.window(window_class("review"))
    assert review is not None
    buttons = strip_buttons(review)
    assert set(buttons) == {
        "memories", "identity", "policy", "agents", "health", "archive", "settings", "quit"
    }  # fmt: skip
    buttons["memories"].click()
    memories = desk.window(window_class("memories"))
    assert memories is not None and memories.isVisible()
    assert "review" in strip_buttons(memories) and "memories" not in strip_buttons(memories)
    strip_buttons(memories)["settings"].click()
    settings = desk.window(window_class("settings"))
    assert settings is not None and settings.isVisible()
    settle(qtbot, desk)

    try:
        desk.set_language("zh_CN", reopen=window_class("settings"))
        rebuilt = desk.window(window_class("settings"))
        assert rebuilt is not None and rebuilt is not settings and rebuilt.isVisible()
        note = rebuilt.findChild(QLabel, "noTrayNote")
        assert note is not None and "系统托盘" in note.text()
        assert strip_buttons(rebuilt)["review"].text() == "审核队列"
    finally:
        desk.set_language("en")
    settle(qtbot, desk)
    assert not quits
    strip_buttons(desk.open(window_class("review")))["quit"].click()  # rebuilt in English
    assert quits == ["quit"]
    settle(qtbot, desk)


def test_a_tray_that_appears_later_takes_the_no_tray_strip_and_quit_on_close_away(
    qtbot: QtBot, tray: Tray, desk: Desk, quits: list[str]
) -> None:
    """Started before the desktop's panel (at login), Cairn kept its no-tray windows once the
    panel and its tray were up: the note said there was no tray, and closing the last window
    asked to quit. The real panel coming up is in tests/test_tray_xvfb.py; offscreen has no
    tray, so this calls what Cairn does when it sees one."""
    assert tray.start() is False and tray.without_tray
    review = desk.window(window_class("review"))
    assert review is not None
    identity = edit_the_user_profile(qtbot, desk)
    assert identity.findChild(QFrame, "noTrayStrip") is not None

    with qtbot.waitSignal(tray.tray_appeared):
        tray.tray_found()
    assert (tray.without_tray, tray.note) == (False, None)
    assert all(w.findChild(QFrame, "noTrayStrip") is None for w in desk.windows())
    memories = desk.open(window_class("memories"))  # built after: no strip either
    assert memories.findChild(QFrame, "noTrayStrip") is None
    for window in (review, memories, identity):  # the last one holds edits: nothing asks
        window.close()
    assert not identity.isVisible() and tray.quit_guard.question is None and quits == []
    assert identity.unsaved()  # kept for when it opens again, as with a tray
    settle(qtbot, desk)


def edit_the_user_profile(qtbot: QtBot, desk: Desk) -> ToolWindow:
    """The identity window with a half-written user profile, left as a draft for the soul."""
    window = desk.open(IdentityWindow)
    qtbot.waitUntil(lambda: window.documents.count() >= 2)
    window.select_document("user")
    qtbot.waitUntil(lambda: window.doc_editor.base_label.text().startswith("Editing user,"))
    settle(qtbot, desk)
    window.doc_editor.editor.setPlainText("My carefully written profile.\n")
    window.select_document("soul:default")
    qtbot.waitUntil(lambda: window.doc_editor.base_label.text().startswith("Editing soul:"))
    settle(qtbot, desk)
    return window


def quit_question(tray: Tray) -> QMessageBox:
    """The question Quit asked (it is open)."""
    box = tray.quit_guard.question
    assert box is not None and box.isVisible()
    return box


def answer(qtbot: QtBot, tray: Tray, button: str) -> None:
    """Click the question's Cancel or its "Quit and lose them" ("confirmQuit")."""
    box = quit_question(tray)
    if button == "cancel":
        box.button(QMessageBox.StandardButton.Cancel).click()
    else:
        confirm = box.findChild(QPushButton, button)
        assert confirm is not None
        confirm.click()
    qtbot.waitUntil(lambda: tray.quit_guard.question is None)


def test_quit_asks_before_unsaved_edits_are_lost(
    qtbot: QtBot, tray: Tray, desk: Desk, quits: list[str]
) -> None:
    """Quit in the tray menu stopped Cairn at once, with a half-written identity document in a
    window (closed, or left for another document): the edit was gone without a word."""
    window = edit_the_user_profile(qtbot, desk)
    window.close()  # with a tray, a closed window keeps its edits until Cairn stops
    quit_action = next(a for a in tray.menu.actions() if a.objectName() == "trayQuit")
    quit_action.trigger()
    assert quits == []
    box = quit_question(tray)
    assert "Cairn — Identity" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    answer(qtbot, tray, "cancel")
    assert quits == [] and window.isVisible() and window.unsaved()  # the edits come forward

    quit_action.trigger()
    answer(qtbot, tray, "confirmQuit")
    assert quits == ["quit"]
    settle(qtbot, desk)


def test_cancelling_quit_brings_back_a_minimized_window_with_edits(
    qtbot: QtBot, tray: Tray, desk: Desk, quits: list[str]
) -> None:
    """Cancel in the Quit question is to bring the windows holding edits forward; one the
    person had minimized stayed minimized."""
    window = edit_the_user_profile(qtbot, desk)
    window.showMinimized()
    assert window.isMinimized()
    next(a for a in tray.menu.actions() if a.objectName() == "trayQuit").trigger()
    answer(qtbot, tray, "cancel")
    assert quits == [] and window.isVisible() and not window.isMinimized()
    settle(qtbot, desk)


def test_without_a_system_tray_quitting_asks_before_unsaved_edits_are_lost(
    qtbot: QtBot, tray: Tray, desk: Desk, quits: list[str]
) -> None:
    """Without a tray, the Quit button and closing the last window (which quits) stopped Cairn
    at once, with a half-written identity document in a window."""
    assert tray.start() is False
    review = desk.window(window_class("review"))
    assert review is not None
    window = edit_the_user_profile(qtbot, desk)
    strip_buttons(window)["quit"].click()
    assert quits == []
    answer(qtbot, tray, "cancel")

    review.close()  # another window is open: nothing quits, nothing is asked
    assert not review.isVisible() and tray.quit_guard.question is None
    window.close()  # the last one: Cairn would quit
    assert window.isVisible() and quits == []
    answer(qtbot, tray, "cancel")
    assert window.isVisible() and quits == []
    window.close()
    answer(qtbot, tray, "confirmQuit")
    assert quits == ["quit"]
    settle(qtbot, desk)


def test_stopping_after_a_language_change_under_the_quit_question_stops_cleanly(
    qapp: QApplication, paths: Paths
) -> None:
    """Quit asked over the identity window's draft; meanwhile, in Settings, the person changed
    the language ("Change and lose them"), which deleted that window and the question with it.
    Stopping Cairn then (Quit, `cairn stop`, SIGTERM) raised RuntimeError ("Internal C++ object
    (QMessageBox) already deleted") out of the tray's close: the store was never closed and the
    socket was left behind."""
    seen: dict[str, object] = {}

    async def story(running: tray_app.Running) -> None:
        desk, tray = running.desk, running.tray
        window = desk.open(IdentityWindow)
        await until(lambda: window.documents.count() >= 2)
        window.select_document("user")
        await until(lambda: window.doc_editor.base_label.text().startswith("Editing user,"))
        window.doc_editor.editor.setPlainText("My carefully written profile.\n")
        settings = desk.open(SettingsWindow)
        next(a for a in tray.menu.actions() if a.objectName() == "trayQuit").trigger()
        assert tray.quit_guard.question is not None  # open, modal to the identity window only
        settings.language.setCurrentIndex(settings.language.findData("zh_CN"))
        assert settings.language_question is not None
        confirm = settings.language_question.findChild(QPushButton, "confirmLanguage")
        assert confirm is not None
        try:
            confirm.click()
            await until(lambda: desk.window(SettingsWindow) is not settings)
        finally:
            desk.language.apply("en")  # leave the process's Qt in English for other tests
        seen["runtime"] = running.runtime

    assert tell(qapp, paths, story) == 0
    runtime = seen["runtime"]
    assert isinstance(runtime, Runtime) and runtime.cairn is None  # the store was closed
    assert not socket_path(paths).exists()
    Cairn.open(paths).close()  # and let go of: Cairn starts again


# -- the count, from a real agent's write ---------------------------------------------------------


def test_a_proposal_over_the_socket_shows_in_the_icon_tooltip_and_menu(
    qtbot: QtBot, served_tray: tuple[Tray, Runtime], workspace_dir: Path
) -> None:
    tray, runtime = served_tray
    idle_key = tray.icon.icon().cacheKey()
    client = agent(runtime, workspace_dir)
    with qtbot.waitSignal(tray.count_shown, check_params_cb=lambda n: n == 1, timeout=5000):
        propose(client, "idea: shard the ledger by tenant")
    assert tray.icon.toolTip() == "Cairn — 1 proposal waiting for you"
    assert tray.review_action.text() == "Review queue (1)"
    assert tray.variant == PENDING and tray.icon.icon().cacheKey() != idle_key
    with qtbot.waitSignal(tray.count_shown, check_params_cb=lambda n: n == 2, timeout=5000):
        propose(client, "idea: a nightly job could compact the audit archive")
    assert tray.icon.toolTip() == "Cairn — 2 proposals waiting for you"
    assert tray.review_action.text() == "Review queue (2)"

    # the person rejects both at the desk: the queue empties, the icon goes back
    desk = tray.desk

    def reject_all() -> None:
        for item in desk.cairn.review.pending(desk.person):
            desk.cairn.review.reject(desk.person, item["id"])

    with qtbot.waitSignal(tray.count_shown, check_params_cb=lambda n: n == 0, timeout=5000):
        desk.call(reject_all)
    assert tray.variant == IDLE and tray.icon.toolTip() == "Cairn — nothing waiting"
    assert tray.icon.icon().cacheKey() == idle_key
    client.close()


def test_a_burst_of_proposals_is_one_notification(
    qtbot: QtBot, served_tray: tuple[Tray, Runtime], workspace_dir: Path
) -> None:
    tray, runtime = served_tray
    tray.collect_ms = 1000
    client = agent(runtime, workspace_dir)
    with qtbot.waitSignal(tray.notified, timeout=10_000) as shown:
        propose(client, "idea: shard the ledger by tenant")
        propose(client, "idea: a nightly job could compact the audit archive")
    assert shown.args == ["2 new proposals from agent-a"]
    qtbot.waitUntil(lambda: tray.count == 2)
    assert tray.notifications == ["2 new proposals from agent-a"]
    client.close()


# -- the capture policy from the menu -------------------------------------------------------------


def test_choosing_off_for_a_kind_writes_the_policy_file(
    qtbot: QtBot, tray: Tray, desk: Desk
) -> None:
    titles = [m.title() for m in tray._kind_menus.values()]
    assert "idea: ask" in titles and "fact: auto" in titles
    assert tray.kind_action("idea", Mode.ASK).isChecked()
    tray.kind_action("idea", Mode.OFF).trigger()
    qtbot.waitUntil(lambda: read_policy(desk)["kinds"]["idea"] == "off")  # type: ignore[index]
    settle(qtbot, desk)
    assert tray.kind_action("idea", Mode.OFF).isChecked()
    assert not tray.kind_action("idea", Mode.ASK).isChecked()
    assert tray._kind_menus["idea"].title() == "idea: off"


def test_pause_all_capture_toggles(qtbot: QtBot, tray: Tray, desk: Desk) -> None:
    assert not tray.pause_action.isChecked()
    tray.pause_action.trigger()
    qtbot.waitUntil(lambda: read_policy(desk)["paused"] is True)
    settle(qtbot, desk)
    assert tray.pause_action.isChecked()
    tray.pause_action.trigger()
    qtbot.waitUntil(lambda: read_policy(desk)["paused"] is False)
    settle(qtbot, desk)
    assert not tray.pause_action.isChecked()


def test_paused_capture_shows_in_the_icon_and_tooltip(
    qtbot: QtBot, served_tray: tuple[Tray, Runtime], workspace_dir: Path
) -> None:
    """Paused from the menu or the Capture policy window, the icon and its tooltip say so - a
    person who forgot would otherwise see agents refused for days - and say so no more after."""
    tray, runtime = served_tray
    desk = tray.desk
    idle_key = tray.icon.icon().cacheKey()
    tray.pause_action.trigger()
    qtbot.waitUntil(lambda: tray.variant == PAUSED)
    assert tray.icon.toolTip() == "Cairn — capture paused; nothing waiting"
    paused_key = tray.icon.icon().cacheKey()
    assert paused_key != idle_key
    tray.pause_action.trigger()
    qtbot.waitUntil(lambda: tray.variant == IDLE)
    assert tray.icon.toolTip() == "Cairn — nothing waiting"
    assert tray.icon.icon().cacheKey() == idle_key

    client = agent(runtime, workspace_dir)
    with qtbot.waitSignal(tray.count_shown, check_params_cb=lambda n: n == 2, timeout=5000):
        propose(client, "idea: shard the ledger by tenant")
        propose(client, "idea: a nightly job could compact the audit archive")
    pending_key = tray.icon.icon().cacheKey()

    # paused and resumed from the Capture policy window: the tray hears it on the change channel
    window = tray.open_window("policy")
    settle(qtbot, desk)
    pause = window.findChild(QCheckBox, "pause")
    assert pause is not None and not pause.isChecked()
    pause.click()
    qtbot.waitUntil(lambda: tray.variant == PAUSED_PENDING)
    assert tray.icon.toolTip() == "Cairn — capture paused; 2 proposals waiting for you"
    assert tray.icon.icon().cacheKey() not in (idle_key, paused_key, pending_key)
    assert tray.pause_action.isChecked()
    refused = client.request(
        "memory.write", {"content": "idea: one more", "kind": "idea", "scope": "project"}
    )
    assert refused["result"]["reason_code"] == "capture_paused", refused  # what the icon warns of
    pause.click()
    qtbot.waitUntil(lambda: tray.variant == PENDING)
    assert tray.icon.toolTip() == "Cairn — 2 proposals waiting for you"
    assert tray.icon.icon().cacheKey() == pending_key
    client.close()
    settle(qtbot, desk)


def test_an_edit_of_the_policy_file_shows_in_the_menu(qtbot: QtBot, tray: Tray, desk: Desk) -> None:
    path = desk.cairn.policy.path
    text = path.read_text(encoding="utf-8").replace("paused = false", "paused = true")
    path.write_text(text, encoding="utf-8")
    with qtbot.waitSignal(tray.policy_shown, timeout=5000):
        desk.call(desk.cairn.policy.reload)
    assert tray.pause_action.isChecked()
    settle(qtbot, desk)


# -- the real process -----------------------------------------------------------------------------


def cairn_command() -> list[str]:
    """The installed `cairn` next to this interpreter, else the same entry point by module."""
    script = Path(sys.executable).parent / "cairn"
    return [str(script)] if script.exists() else [sys.executable, "-m", "desktop.main"]


def tray_env(home: Path) -> dict[str, str]:
    return cairn_env(home) | {
        "QT_QPA_PLATFORM": "offscreen",
        "CAIRN_TRAY_DEBUG": "1",
        "PYTHONFAULTHANDLER": "1",  # a crash prints where it happened
    }


@contextlib.contextmanager
def running_tray(home: Path, command: list[str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """The tray application as a real process (`command`, or `cairn`); waits for both of its
    sockets."""
    paths = paths_for(home)
    proc = subprocess.Popen(
        command or cairn_command(),
        cwd=ROOT,
        env=tray_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (Path(local_name(paths)).exists() and probe(socket_path(paths), timeout=0.2)):
            if proc.poll() is not None:
                err = proc.stderr.read() if proc.stderr else ""
                raise AssertionError(f"cairn exited {proc.returncode}: {err}")
            assert time.monotonic() < deadline, "the tray did not start"
            time.sleep(0.05)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def launch(home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cairn_command(),
        cwd=ROOT,
        env=tray_env(home),
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_stopped_cleanly(proc: subprocess.Popen[str], home: Path) -> str:
    status = proc.wait(30)
    err = proc.stderr.read() if proc.stderr else ""
    assert status == 0, err
    assert "Cairn stopped" in err, err
    run_dir = paths_for(home).runtime
    assert sorted(p.name for p in run_dir.iterdir()) == []  # both sockets and the pid file gone
    return err


def test_a_tray_whose_socket_file_is_removed_stops_and_tells_the_person(short_tmp: Path) -> None:
    """A Cairn whose socket file was removed can be reached by no agent, so it stops; the tray
    vanished with the reason only in its log (a message box tells a person who started it from
    the application menu; offscreen, the line on stderr stands for it)."""
    home = short_tmp / "t"
    with running_tray(home) as proc:
        socket_path(paths_for(home)).unlink()
        status = proc.wait(30)
        err = proc.stderr.read() if proc.stderr else ""
        assert status == 0, err
        assert "cairn: Cairn stopped: its socket file" in err, err
        assert "no client can reach this Cairn any more" in err


def test_a_tray_started_from_the_menu_stops_then_shows_why_its_socket_went(
    short_tmp: Path,
) -> None:
    """Started from the application menu, the tray showed its message box from inside the
    running loop, before stopping: an agent's connection hung there, the stop never finished
    and the store stayed locked - agents' own Cairn refused - until the process was killed."""
    home = short_tmp / "t"
    paths = paths_for(home)
    menu = [sys.executable, str(ROOT / "tests" / "tray_from_menu.py")]
    with running_tray(home, menu) as proc:
        agent = RawClient(socket_path(paths))
        try:
            assert "result" in agent.hello("agent-a")
            socket_path(paths).unlink()
            # the stop closes the agent's connection (the box came first and the stop never
            # finished, the connection held open)
            assert agent.closed(timeout=30)
        finally:
            agent.close()
        status = proc.wait(30)
        err = proc.stderr.read() if proc.stderr else ""
    assert status == 0, err
    assert "BOX: Cairn stopped: its socket file" in err, err
    assert err.index("Cairn stopped\n") < err.index("BOX: Cairn stopped"), err  # stopped first
    assert sorted(p.name for p in paths.runtime.iterdir()) == []


def test_a_second_launch_brings_the_first_forward_then_quit_stops_it(short_tmp: Path) -> None:
    home = short_tmp / "t"
    with running_tray(home) as proc:
        second = launch(home)
        assert second.returncode == 0, second.stderr
        assert second.stdout.strip() == "Cairn is already running; its window was brought forward"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(local_name(paths_for(home)))
            s.sendall(b"quit\n")
            assert s.recv(16) == b"ok\n"
        err = assert_stopped_cleanly(proc, home)
        assert "brought the review queue forward for another launch" in err
        assert "asked to quit by another launch" in err


def test_two_launches_at_once_make_one_tray_and_bring_it_forward(short_tmp: Path) -> None:
    """`cairn` clicked twice: the second launch found the store taken by the first, which did
    not listen yet, and refused with "the memory store ... is already open in another Cairn
    process" (exit 69, a warning box from the menu) - 4 launches in 6 here. The first launch's
    slow start is played by pausing it (SIGSTOP) once it holds the store and before it listens,
    until the second has found the store taken. The second now waits for the first and brings
    it forward."""
    home = short_tmp / "t"
    paths = paths_for(home)
    first = subprocess.Popen(
        cairn_command(), cwd=ROOT, env=tray_env(home), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    second: subprocess.Popen[str] | None = None
    try:
        pid, lock = str(first.pid), paths.store_lock
        deadline = time.monotonic() + 60
        while not (lock.exists() and lock.read_text(encoding="utf-8") == pid):
            assert first.poll() is None and time.monotonic() < deadline, "no tray took the store"
            time.sleep(0.001)  # the pause must come before it listens
        first.send_signal(signal.SIGSTOP)
        if probe(socket_path(paths)):
            pytest.skip("the first tray was already listening when it was paused")
        second = subprocess.Popen(
            cairn_command(), cwd=ROOT, env=tray_env(home), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        said: list[str] = []
        reading = threading.Thread(target=lambda: said.extend(second.stderr or ()), daemon=True)
        reading.start()
        assert wait_for(
            lambda: any("waiting up to" in line for line in said) or second.poll() is not None,
            60,
        )
        first.send_signal(signal.SIGCONT)
        out = second.stdout.read() if second.stdout else ""
        assert second.wait(60) == 0, "".join(said)
        reading.join(10)
        assert out.strip() == "Cairn is already running; its window was brought forward"
        assert first.poll() is None, "the first tray stopped"
        first.send_signal(signal.SIGTERM)
        assert_stopped_cleanly(first, home)
    finally:
        first.send_signal(signal.SIGCONT)
        for proc in (first, second):
            if proc is not None:
                if proc.poll() is None:
                    proc.kill()
                proc.wait(10)
                for pipe in (proc.stdout, proc.stderr):
                    if pipe is not None:
                        pipe.close()


def test_sigterm_stops_the_tray_cleanly(short_tmp: Path) -> None:
    home = short_tmp / "t"
    with running_tray(home) as proc:
        proc.send_signal(signal.SIGTERM)
        err = assert_stopped_cleanly(proc, home)
        assert "received SIGTERM" in err


def test_a_command_waiting_for_the_persons_answer_is_told_when_the_tray_stops(
    short_tmp: Path,
) -> None:
    """SIGTERM to the tray while it asked about `cairn policy set` run without a terminal told
    the command "this command is for a person: run it yourself in an interactive terminal"
    (exit 77), as if no Cairn had been there to ask."""
    home = short_tmp / "t"
    paths = paths_for(home)
    log_path = short_tmp / "tray.log"
    with log_path.open("wb") as log_file:
        tray = subprocess.Popen(
            cairn_command(), cwd=ROOT, env=tray_env(home), stdout=log_file, stderr=log_file
        )
    command: subprocess.Popen[str] | None = None
    try:
        assert wait_for(lambda: probe(socket_path(paths), timeout=0.2), 30), "the tray serves"
        policy = (paths.config / "policy.toml").read_text(encoding="utf-8")
        command = subprocess.Popen(
            [sys.executable, "-m", "core.cli", "policy", "set", "kinds.idea", "auto"],
            cwd=ROOT,
            env=cairn_env(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        asked = f"asking the person about a command run without a terminal (pid {command.pid})"
        assert wait_for(lambda: asked in log_path.read_text(errors="replace"), 30), asked
        tray.send_signal(signal.SIGTERM)
        assert tray.wait(30) == 0, log_path.read_text(errors="replace")
        _out, err = command.communicate(timeout=60)
        assert err.strip() == "cairn: Cairn stopped before the person answered; nothing was done"
        assert command.returncode == NotRunning.code.exit_status
        assert (paths.config / "policy.toml").read_text(encoding="utf-8") == policy
    finally:
        for proc in (tray, command):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)


def test_the_tray_takes_over_from_a_headless_cairn(short_tmp: Path) -> None:
    """An agent's first call starts the headless daemon; the person then starts the tray. The
    tray asks the daemon to stop cleanly and serves the store itself: the agent's memory is
    there, and agents connect to the tray. Until 2026-11-30 the tray refused (exit 69) with a
    line on stderr, which nobody sees when Cairn starts from the application menu."""
    home = short_tmp / "t"
    project = short_tmp / "p"
    project.mkdir()
    bound = {"protocol_version": 1, "agent": "early", "workspace": str(project)}
    daemon = start_daemon(home)
    agent = RawClient(daemon.socket)
    try:
        assert "result" in agent.request("hello", bound)
        wrote = agent.request(
            "memory.write", {"content": "The build uses make", "kind": "fact", "scope": "project"}
        )
        assert wrote["result"]["status"] == "stored", wrote
        with running_tray(home) as proc:
            assert daemon.proc.wait(30) == 0
            daemon_err = daemon.proc.stderr.read() if daemon.proc.stderr else ""
            assert "stopping: received SIGTERM" in daemon_err
            assert "Cairn stopped" in daemon_err
            again = RawClient(socket_path(paths_for(home)))
            try:
                assert "result" in again.request("hello", bound)
                found = again.request("memory.get", {"id": wrote["result"]["id"]})
            finally:
                again.close()
            assert found["result"]["content"] == "The build uses make"
            assert agent.closed()  # the daemon closed its agents' connections as it stopped
            proc.send_signal(signal.SIGTERM)
            err = assert_stopped_cleanly(proc, home)
        assert f"took over from the headless Cairn (pid {daemon.proc.pid})" in err
    finally:
        agent.close()
        daemon.stop()


def test_a_headless_cairn_that_does_not_stop_is_named_and_left_running(short_tmp: Path) -> None:
    """A daemon that cannot answer the stop (here: suspended) is not killed: the takeover
    gives up after its wait and names the process and what to do. Until 2026-11-30 the wait
    probed the socket every 50 ms, filled its listen queue after about 5 s and crashed."""
    home = short_tmp / "t"
    with running_daemon(home) as daemon:
        daemon.proc.send_signal(signal.SIGSTOP)
        try:
            with pytest.raises(AlreadyRunning) as refused:
                stop_headless(daemon.paths, wait_s=7.0)
            assert refused.value.message == (
                f"the headless Cairn (pid {daemon.proc.pid}) was asked to stop and still runs "
                "after 7 s; stop it with `cairn stop` (or end that process), then start the tray "
                "again"
            )
        finally:
            daemon.proc.send_signal(signal.SIGCONT)
        assert daemon.proc.wait(30) == 0  # the stop asked is still honoured once it runs


def test_a_headless_cairn_whose_queue_is_full_is_named_not_taken_for_gone(
    short_tmp: Path,
) -> None:
    """A stuck daemon whose queue of waiting connections is full refuses a new one at once
    (EAGAIN): the takeover took that for "it stopped on its own" and went on to fail its start
    three times over. Now it says which process does not accept connections."""
    home = short_tmp / "t"
    with running_daemon(home) as daemon:
        daemon.proc.send_signal(signal.SIGSTOP)
        waiting: list[socket.socket] = []
        try:
            while True:  # fill its listen queue
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.setblocking(False)
                try:
                    sock.connect(str(daemon.socket))
                except BlockingIOError:
                    sock.close()
                    break
                waiting.append(sock)
                assert len(waiting) < 10_000
            with pytest.raises(AlreadyRunning) as refused:
                stop_headless(daemon.paths, wait_s=1.0)
            assert refused.value.message == (
                f"the headless Cairn serving {daemon.socket} does not accept connections (it is "
                "busy or stuck); stop it with `cairn stop` (or end that process), then start the "
                "tray again"
            )
        finally:
            for sock in waiting:
                sock.close()
            daemon.proc.send_signal(signal.SIGCONT)


def test_a_tray_that_does_not_answer_is_never_taken_for_a_headless_cairn(short_tmp: Path) -> None:
    """A second launch while the tray is busy (here: suspended) says so and leaves it running;
    until 2026-11-30 it took the tray for a headless Cairn and stopped it."""
    home = short_tmp / "t"
    with running_tray(home) as proc:
        proc.send_signal(signal.SIGSTOP)
        try:
            second = launch(home)
        finally:
            proc.send_signal(signal.SIGCONT)
        assert second.returncode == AlreadyRunning.code.exit_status, second.stderr
        assert (
            f"cairn: Cairn is already running (pid {proc.pid}) but its tray does not answer; "
            "wait a moment and start it again"
        ) in second.stderr
        assert "take over" not in second.stderr
        assert probe(socket_path(paths_for(home)))
        proc.send_signal(signal.SIGTERM)
        err = assert_stopped_cleanly(proc, home)
    assert "asked to stop" not in err


def test_without_a_display_the_tray_says_to_use_serve(short_tmp: Path) -> None:
    env = {k: v for k, v in tray_env(short_tmp / "t").items() if "DISPLAY" not in k}
    del env["QT_QPA_PLATFORM"]
    done = subprocess.run(
        cairn_command(), cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == ConfigInvalid.code.exit_status
    assert "no graphical display" in done.stderr and "cairn serve" in done.stderr
    assert not (short_tmp / "t").exists()  # nothing was started or created


def test_the_command_line_still_runs_without_qt(short_tmp: Path) -> None:
    """`cairn <command>` goes to the CLI, and never imports Qt on the way."""
    code = (
        "import sys; from desktop.main import main; rc = main(['paths']); "
        "sys.exit(rc if 'PySide6' not in sys.modules else 99)"
    )
    env = cairn_env(short_tmp / "t") | {"QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert str(short_tmp / "t") in done.stdout
    assert os.environ.get("QT_QPA_PLATFORM") == "offscreen"
