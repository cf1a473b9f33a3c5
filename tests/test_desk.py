"""The windows' plumbing: service calls run off the GUI thread and come back on it, the store
refuses the GUI thread in tests, errors reach the presenter, changes arrive as signals."""

from __future__ import annotations

import gc
import shutil
import threading

import pytest
from PySide6.QtCore import QDate, QRect, QSize
from PySide6.QtWidgets import QApplication, QSplitter, QWidget
from pytestqt.qtbot import QtBot

from core.app import Cairn
from core.changes import Topic
from core.model import Caller
from core.paths import Paths
from core.requests import WriteRequest
from desktop.desk import SCREEN_MARGIN, Desk, ToolWindow, fit_first_size, fit_on_screen
from desktop.tray import WINDOWS, window_class
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


# -- a window's first size fits its screen ---------------------------------------------------------


@pytest.mark.parametrize("kind", [ReviewWindow, HealthWindow])
def test_a_window_first_opens_inside_its_screen_and_a_chosen_size_comes_back(
    qtbot: QtBot, paths: Paths, kind: type[ToolWindow]
) -> None:
    """The Memories and Review windows opened at 1280x720 on any screen, so on a small one (the
    offscreen screen here is 800x800, narrower than 1280 and Health's 820) they ran off its
    edge. Now the first size fits the screen's free room with a margin; a size the person
    chose is kept from one Cairn to the next, and one larger than the screen is cut to it."""
    app = Cairn.open(paths)
    try:
        with desk_on(app) as d:
            window = d.open(kind)
            settle(qtbot, d)
            room = window.screen().availableGeometry()
            assert room.width() < kind.default_size[0]  # the case this test is about
            assert room.contains(window.frameGeometry()), (window.frameGeometry(), room)
            assert window.width() <= room.width() - 2 * SCREEN_MARGIN
            window.resize(room.width() - 200, room.height() - 300)  # the person's choice
            chosen = window.size()
        with desk_on(app) as d:
            window = d.open(kind)
            settle(qtbot, d)
            assert window.size() == chosen
            window.setGeometry(room.x() + 300, room.y(), room.width() * 2, room.height())
            assert not room.contains(window.frameGeometry())  # from a larger screen, say
        with desk_on(app) as d:
            window = d.open(kind)
            settle(qtbot, d)
            assert room.contains(window.frameGeometry()), (window.frameGeometry(), room)
    finally:
        app.close()


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_every_window_can_be_laid_out_on_a_1024_by_768_screen(
    qtbot: QtBot, desk: Desk, language: str
) -> None:
    """No window's layout is wider or taller than a 1024x768 screen's room: the Memories
    window's six filters in one row kept it 1121 px wide at least (until 2026-12-02)."""
    room = fit_first_size(QSize(10_000, 10_000), QRect(0, 32, 1024, 736))
    desk.language.apply(language)
    wide = {}
    try:
        for key in WINDOWS:
            window = desk.open(window_class(key))
            settle(qtbot, desk)
            need = window.minimumSizeHint()
            if need.width() > room.width() or need.height() > room.height():
                wide[key] = need
            window.close()
    finally:
        desk.language.apply("en")
    assert wide == {}, room


def test_the_fit_on_a_1024_by_768_screen_with_a_panel() -> None:
    """The sizes, for a screen the offscreen platform does not have: 1024x768 less a 32 px
    panel at the top."""
    room = QRect(0, 32, 1024, 736)
    first = fit_first_size(QSize(1280, 720), room)
    assert first == QSize(1024 - 2 * SCREEN_MARGIN, 736 - 2 * SCREEN_MARGIN)
    assert fit_first_size(QSize(760, 480), room) == QSize(760, 480)  # a small one is kept
    # a remembered place and size: kept when it fits, moved and cut to the screen when not
    assert fit_on_screen(QRect(100, 100, 700, 500), room) == QRect(100, 100, 700, 500)
    assert fit_on_screen(QRect(600, 0, 700, 500), room) == QRect(324, 32, 700, 500)
    assert fit_on_screen(QRect(-50, 400, 1900, 1200), room) == room
