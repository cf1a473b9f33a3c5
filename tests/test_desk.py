"""The windows' plumbing: service calls run off the GUI thread and come back on it, the store
refuses the GUI thread in tests, errors reach the presenter, changes arrive as signals."""

from __future__ import annotations

import gc
import shutil
import threading

import pytest
from PySide6.QtCore import QDate
from PySide6.QtWidgets import QApplication, QSplitter, QWidget
from pytestqt.qtbot import QtBot

from core.app import Cairn
from core.changes import Topic
from core.model import Caller
from core.paths import Paths
from core.requests import WriteRequest
from desktop.desk import Desk, ToolWindow
from desktop.windows.agents import AgentsWindow
from desktop.windows.health import HealthWindow
from desktop.windows.identity import IdentityWindow
from desktop.windows.memories import MemoriesWindow
from desktop.windows.review import ReviewWindow
from tests.conftest import desk_on, settle


def note(text: str) -> WriteRequest:
    return WriteRequest.from_params({"content": text, "kind": "fact", "scope": "user"})


def test_the_store_refuses_the_gui_thread(desk: Desk) -> None:
    with pytest.raises(RuntimeError, match="GUI thread"):
        desk.cairn.memories.list(Caller.human())
    with pytest.raises(RuntimeError, match="GUI thread"):
        desk.cairn.memories.write(
            Caller.human(),
            WriteRequest.from_params({"content": "x", "kind": "fact", "scope": "user"}),
        )


def test_a_call_runs_off_the_gui_thread_and_answers_on_it(qtbot: QtBot, desk: Desk) -> None:
    gui = threading.get_ident()
    seen: dict[str, int] = {}

    def work() -> int:
        seen["ran_on"] = threading.get_ident()
        return len(desk.cairn.memories.list(Caller.human()).items)

    def done(count: int) -> None:
        seen["answered_on"] = threading.get_ident()
        seen["count"] = count

    desk.call(work, on_done=done)
    settle(qtbot, desk)
    assert seen == {"ran_on": seen["ran_on"], "answered_on": gui, "count": 0}
    assert seen["ran_on"] != gui


def test_an_error_reaches_the_presenter_and_a_dead_owner_hears_nothing(
    qtbot: QtBot, desk: Desk
) -> None:
    desk.call(desk.cairn.memories.get, Caller.human(), "m_missing")
    settle(qtbot, desk)
    assert desk.presenter.last == "memory m_missing not found"

    owner = QWidget()
    heard: list[object] = []
    desk.call(lambda: 1, on_done=heard.append, owner=owner)
    owner.deleteLater()
    qtbot.waitUntil(lambda: desk.worker.in_flight == 0)
    assert heard == []


def test_changes_arrive_on_the_gui_thread(qtbot: QtBot, desk: Desk) -> None:
    owner = QWidget()
    got: list[tuple[frozenset[Topic], int]] = []
    desk.live.on(owner, {Topic.MEMORIES}, lambda cs: got.append((cs.topics, threading.get_ident())))
    desk.call(desk.cairn.memories.write, Caller.human(), note("the build uses make"))
    qtbot.waitUntil(lambda: bool(got))
    assert Topic.MEMORIES in got[0][0] and got[0][1] == threading.get_ident()
    owner.deleteLater()
    qtbot.wait(10)
    got.clear()
    desk.call(desk.cairn.memories.write, Caller.human(), note("the tests use pytest"))
    settle(qtbot, desk)
    qtbot.wait(50)
    assert got == []  # the owner is gone: so is its subscription


def test_windows_on_screen_load_again_when_the_day_turns(qtbot: QtBot, desk: Desk) -> None:
    """Times are shown as "14:05" on their own day: a window open across midnight said "14:05"
    of yesterday (until 2026-12-02). When the day turns, a window on screen loads again; a
    hidden one loads when it shows, as always."""
    health = desk.open(HealthWindow)
    agents = desk.open(AgentsWindow)
    settle(qtbot, desk)
    agents.hide()
    loaded = (health._fetched_at, agents._fetched_at)
    desk.check_day()  # the same day
    settle(qtbot, desk)
    assert (health._fetched_at, agents._fetched_at) == loaded
    desk.day = desk.day.addDays(-1)  # open since yesterday
    desk.check_day()
    settle(qtbot, desk)
    assert health._fetched_at != loaded[0] and agents._fetched_at == loaded[1]
    assert desk.day == QDate.currentDate()


def test_the_windows_preferences_are_written_when_the_desk_closes_not_later(
    qtbot: QtBot, paths: Paths
) -> None:
    """A window's size and place were left unwritten at close, so Qt wrote desktop.ini whenever
    the desk was finally freed - after Cairn had closed, into a folder that might be gone (every
    window test left a /tmp/cz*/c/config/desktop.ini behind, until 2026-12-02)."""
    app = Cairn.open(paths)
    try:
        with desk_on(app) as d:
            window = d.open(HealthWindow)
            settle(qtbot, d)
            window.resize(700, 500)
    finally:
        app.close()
    ini = paths.config / "desktop.ini"
    assert "geometry" in ini.read_text(encoding="utf-8")
    shutil.rmtree(paths.config)
    del d, window
    gc.collect()
    QApplication.processEvents()
    assert not paths.config.exists()


def shares(splitter: QSplitter) -> list[float]:
    """Each pane's share of the room: a window's content (a warning banner, Chinese text) may
    leave its panes more or less room in all from one opening to the next."""
    sizes = splitter.sizes()
    return [size / sum(sizes) for size in sizes]


@pytest.mark.parametrize("kind", [MemoriesWindow, ReviewWindow, IdentityWindow, HealthWindow])
def test_a_window_keeps_where_the_person_put_its_dividers(
    qtbot: QtBot, paths: Paths, kind: type[ToolWindow]
) -> None:
    """A window kept its size and place from one Cairn to the next, but the divider between its
    panes - dragged to give a memory's details more room, say - was back where it started each
    time Cairn started (and each time another language rebuilt the window)."""
    app = Cairn.open(paths)
    try:
        with desk_on(app) as d:
            window = d.open(kind)
            window.resize(*kind.default_size)  # offscreen, a restored one comes back narrower
            settle(qtbot, d)
            (splitter,) = window.findChildren(QSplitter)
            first, second, *rest = put = splitter.sizes()
            splitter.setSizes([first + 60, second - 60, *rest])
            chosen = splitter.sizes()
            assert chosen != put  # not where the window puts it
            shares_chosen = shares(splitter)
        with desk_on(app) as d:
            window = d.open(kind)
            window.resize(*kind.default_size)
            settle(qtbot, d)
            (splitter,) = window.findChildren(QSplitter)
            assert shares(splitter) == pytest.approx(shares_chosen, abs=0.02)
            d.set_language("zh_CN", reopen=kind)
            rebuilt = d.window(kind)
            assert rebuilt is not None and rebuilt is not window
            rebuilt.resize(*kind.default_size)
            settle(qtbot, d)
            (splitter,) = rebuilt.findChildren(QSplitter)
            assert shares(splitter) == pytest.approx(shares_chosen, abs=0.02)
            d.set_language("en", reopen=kind)
    finally:
        app.close()
