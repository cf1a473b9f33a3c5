"""What every window is given: the open Cairn, the worker that runs its services off the GUI
thread, the change channel, the error presenter - and the windows themselves, one of each."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import shiboken6
from PySide6.QtCore import QByteArray, QDate, QMargins, QRect, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QGuiApplication, QKeyEvent, QShowEvent
from PySide6.QtWidgets import QSplitter, QWidget

from core.changes import ChangeSet
from core.model import Caller
from desktop.i18n import PREF_KEY, Language, chosen, resolve
from desktop.live import LiveChanges
from desktop.presenter import Presenter
from desktop.widgets import tab_moves_on
from desktop.worker import Worker

if TYPE_CHECKING:
    from core.app import Cairn

W = TypeVar("W", bound="ToolWindow")

# Room left free on each side of a window's first size: a title bar and borders a window manager
# adds, and a little of the desktop to see that it is a window.
SCREEN_MARGIN = 32


def fit_first_size(size: QSize, room: QRect, margin: int = SCREEN_MARGIN) -> QSize:
    """A window's first size: `size`, cut to the screen's free `room` less `margin` each side
    (a 1280x720 window on a 1024x768 screen ran off its edge until 2026-12-02)."""
    inner = room.marginsRemoved(QMargins(margin, margin, margin, margin)).size()
    return size.boundedTo(inner).expandedTo(QSize(1, 1))


def fit_on_screen(rect: QRect, room: QRect) -> QRect:
    """A remembered place and size, cut to the screen's free `room` and moved inside it (saved
    on a larger screen, or one unplugged since)."""
    size = rect.size().boundedTo(room.size())
    x = min(max(rect.x(), room.x()), room.x() + room.width() - size.width())
    y = min(max(rect.y(), room.y()), room.y() + room.height() - size.height())
    return QRect(x, y, size.width(), size.height())


class Desk:
    """The windows' shared context. The person at the desk acts as `Caller.human()`."""

    def __init__(self, cairn: Cairn) -> None:
        self.cairn = cairn
        self.person = Caller.human()
        self.presenter = Presenter()
        self.worker = Worker(self.presenter.show)
        self.live = LiveChanges(cairn.bus)
        # Window geometry and the chosen language; under CAIRN_HOME in tests.
        self.prefs = QSettings(str(cairn.paths.config / "desktop.ini"), QSettings.Format.IniFormat)
        self._windows: dict[type[ToolWindow], ToolWindow] = {}
        self.language = Language()
        self._language_listeners: list[Callable[[], None]] = []
        self._open_listeners: list[Callable[[ToolWindow], None]] = []
        # Times are shown as "14:05" on the day they are of (`desktop.widgets.when`): a window
        # open across midnight said "14:05" of yesterday's (until 2026-12-02). A look every
        # minute, not a timer set for midnight: that one runs late by the time the computer
        # slept, and misses a clock that was set.
        self.day = QDate.currentDate()
        self._day_timer = QTimer()
        self._day_timer.setInterval(60_000)
        self._day_timer.timeout.connect(self.check_day)
        self._day_timer.start()

    def check_day(self) -> None:
        """When the day has changed since the last look, each window shows its times again."""
        today = QDate.currentDate()
        if today == self.day:
            return
        self.day = today
        for window in self._windows.values():
            window.new_day()

    def on_language(self, listener: Callable[[], None]) -> None:
        """Call `listener` after the language changed (the tray rebuilds its menu)."""
        self._language_listeners.append(listener)

    def on_open(self, listener: Callable[[ToolWindow], None]) -> None:
        """Call `listener` with each window when it is built (without a tray, the tray gives
        every window its menu)."""
        self._open_listeners.append(listener)

    def start_language(self) -> None:
        """Show the language the person chose (or the system's) - before any window opens."""
        self.language.apply(resolve(chosen(self.prefs)))

    def set_language(self, choice: str, *, reopen: type[ToolWindow] | None = None) -> None:
        """Remember the choice and show it at once: every window is rebuilt in the new
        language the next time it opens (the open ones close, so nothing mixes languages).
        `reopen` (the window the choice was made in) opens again, rebuilt, before the old ones
        close - so a desktop without a tray, where closing the last window quits, keeps running."""
        self.prefs.setValue(PREF_KEY, choice)
        self.language.apply(resolve(choice))
        old = list(self._windows.values())
        self._windows.clear()
        if reopen is not None:
            self.open(reopen)
        for window in old:
            window.close()
            shiboken6.delete(window)
        for listener in self._language_listeners:
            listener()

    def call(
        self,
        fn: Callable[..., Any],
        *args: Any,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        owner: QWidget | None = None,
    ) -> None:
        """Run a service call off the GUI thread (see `Worker.call`)."""
        self.worker.call(fn, *args, on_done=on_done, on_error=on_error, owner=owner)

    def open(self, kind: type[W]) -> W:
        """Show the window of this kind (creating it the first time) and bring it forward."""
        window = self._windows.get(kind)
        if window is None:
            window = kind(self)
            self._windows[kind] = window
            for listener in self._open_listeners:
                listener(window)
        # Minimized, it stays so through show() and raise_() (until 2026-11-30 the tray icon,
        # a notification or a second launch left it there): restored as it was (maximized too).
        window.setWindowState(window.windowState() & ~Qt.WindowState.WindowMinimized)
        window.show()
        window.raise_()
        window.activateWindow()
        return window  # type: ignore[return-value]

    def window(self, kind: type[W]) -> W | None:
        return self._windows.get(kind)  # type: ignore[return-value]

    def windows(self) -> list[ToolWindow]:
        """The windows built so far, shown or hidden."""
        return list(self._windows.values())

    def unsaved(self) -> list[ToolWindow]:
        """The open windows holding edits not yet saved (rebuilding them would lose those)."""
        return [w for w in self._windows.values() if w.unsaved()]

    def close(self) -> None:
        self._day_timer.stop()
        for window in self._windows.values():
            window.close()
            # Destroyed now, on this (the GUI) thread: left to a later garbage collection, a
            # window in a reference cycle could be freed on a worker thread and crash Qt.
            shiboken6.delete(window)
        self._windows.clear()
        # Written now: left to Qt, the windows' sizes were written whenever the desk was freed,
        # after Cairn had closed (into a folder a test had already removed).
        self.prefs.sync()
        self.live.close()
        self.worker.shutdown()


class ToolWindow(QWidget):
    """A top-level window opened from the tray: one instance, remembers its geometry."""

    name = "window"  # the key its geometry is kept under
    default_size = (760, 520)
    min_interval_ms = 0  # change-channel reloads at most this often (0: as changes come)

    def __init__(self, desk: Desk) -> None:
        super().__init__()
        self.desk = desk
        self.resize(*self.default_size)
        saved = desk.prefs.value(f"geometry/{self.name}")
        # The size the person left it at, else the default: either fits the screen at first show.
        self._remembered = isinstance(saved, QByteArray) and self.restoreGeometry(saved)
        self._fitted = False
        self._panes_restored = False  # the dividers, once the subclass has built them
        self._fetching = False
        self._fetch_again = False
        # The store's committed sequence when the last load started (-1: none, or it failed):
        # a load that started at or after a change already shows it.
        self._fetch_seq = -1
        self._fetched_at: float | None = None  # when the last load started (monotonic)
        self.reload_timer = QTimer(self)
        self.reload_timer.setSingleShot(True)
        self.reload_timer.timeout.connect(self._reload_when_shown)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        tab_moves_on(self)  # at each showing: a window may have built more since the last
        if not self._fitted:
            self._fitted = True
            self._fit_screen()
        if not self._panes_restored:
            self._panes_restored = True
            for key, splitter in self._splitters():
                saved = self.desk.prefs.value(key)
                if isinstance(saved, QByteArray):
                    splitter.restoreState(saved)
        super().showEvent(event)
        self.refresh()

    def _fit_screen(self) -> None:
        """Fit the window to the free room of its screen, at its first showing (its native
        window exists then, so the frame's margins are known where the platform tells them):
        the default size less a margin, or the remembered place and size cut to the screen."""
        if self.windowState() & (Qt.WindowState.WindowMaximized | Qt.WindowState.WindowFullScreen):
            return
        screen = QGuiApplication.screenAt(self.geometry().center()) or self.screen()
        handle = self.windowHandle()
        frame = handle.frameMargins() if handle is not None else QMargins()
        room = screen.availableGeometry().marginsRemoved(frame)  # for the inside of the frame
        if self._remembered:
            self.setGeometry(fit_on_screen(self.geometry(), room))
        else:
            self.resize(fit_first_size(self.size(), room))

    def refresh(self) -> None:
        """Load what the window shows (off the GUI thread, through `desk.call` or `fetch`)."""

    def new_day(self) -> None:
        """The day turned (`Desk.check_day`): show the times again, as "14:05" is today's. A
        window on screen loads again; a hidden one loads when it shows."""
        if self.isVisible():
            self.refresh()

    def unsaved(self) -> bool:
        """Whether the window holds the person's edits not yet saved or decided."""
        return False

    def refresh_if_shown(self, changes: ChangeSet) -> None:
        """A change-channel slot: reload if shown (a hidden window reloads when it shows),
        unless a load that started after these changes committed is on its way or done. A
        window whose load is costly sets `min_interval_ms`: changes that come sooner after the
        last load started wait for one reload when that time has passed."""
        if not self.isVisible() or 0 < changes.last_seq <= self._fetch_seq:
            return
        if self.reload_timer.isActive():
            return
        if self.min_interval_ms and self._fetched_at is not None:
            since_ms = (time.monotonic() - self._fetched_at) * 1000
            if since_ms < self.min_interval_ms:
                self.reload_timer.start(int(self.min_interval_ms - since_ms))
                return
        self.refresh()

    def _reload_when_shown(self) -> None:
        if self.isVisible():
            self.refresh()

    def refresh_after_write(self) -> None:
        """After this window's own write landed: reload, unless the change channel already
        started a load after the write committed - one load per write, not two."""
        if self._fetch_seq < self.desk.cairn.committed_seq:
            self.refresh()

    def fetch(
        self,
        fn: Callable[..., Any],
        *args: Any,
        on_done: Callable[[Any], None],
        on_error: Callable[[BaseException], None] | None = None,
    ) -> bool:
        """Run the window's load `fn(*args)` off the GUI thread, one at a time: asked for while
        one runs (changes arrived meanwhile), `refresh` runs once more after it lands. A failure
        goes to `on_error`, else is shown over the window. Returns whether the load started
        now (False: `refresh` runs after the one on its way, `fn` is not called)."""
        self.reload_timer.stop()  # this load (or the one queued) shows every change so far
        if self._fetching:
            self._fetch_again = True
            return False
        self._fetching = True
        self._fetch_seq = self.desk.cairn.committed_seq
        self._fetched_at = time.monotonic()
        self.desk.call(
            fn,
            *args,
            on_done=lambda result: self._fetched(on_done, result),
            on_error=lambda error: self._fetch_failed(on_error or self.show_error, error),
            owner=self,
        )
        return True

    def _fetched(self, on_done: Callable[[Any], None], result: Any) -> None:
        self._fetching = False
        on_done(result)
        if self._fetch_again:
            self._fetch_again = False
            self.refresh()

    def _fetch_failed(
        self, on_error: Callable[[BaseException], None], error: BaseException
    ) -> None:
        self._fetching = False
        self._fetch_seq = -1
        on_error(error)
        if self._fetch_again:  # changes arrived meanwhile: they may load now
            self._fetch_again = False
            self.refresh()

    def show_error(self, error: BaseException) -> None:
        """Tell the person about `error` (the presenter's message box, over this window)."""
        self.desk.presenter.show(error, parent=self)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        """Escape closes the window, as its title bar's X does: edits not yet saved stay in it
        for when it opens again, and the last window of a desktop without a tray asks before
        it quits (QuitGuard). Escape reaches the window only when the control with the focus
        has no use for it: an open drop-down list, a table's cell editor or a dialog takes it
        first."""
        if event.key() == Qt.Key.Key_Escape and not event.modifiers():
            event.accept()
            self.close()
            return
        super().keyPressEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        self.desk.prefs.setValue(f"geometry/{self.name}", self.saveGeometry())
        # Where the person dragged the dividers between panes, kept like the window's size
        # (until 2026-12-02 they were back where the window puts them at each start).
        for key, splitter in self._splitters():
            self.desk.prefs.setValue(key, splitter.saveState())
        super().closeEvent(event)

    def _splitters(self) -> list[tuple[str, QSplitter]]:
        """The window's named dividers, each with the key it is kept under: by name, not by
        place among the window's children, so a divider added later (a dialog's, say) never
        gets another's state - which holds its orientation too. An unnamed one is not kept."""
        found = self.findChildren(QSplitter)
        return [(f"panes/{self.name}/{s.objectName()}", s) for s in found if s.objectName()]
