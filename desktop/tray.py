"""The tray icon: how many proposals wait (icon, tooltip, a throttled notification), the menu that
opens every window, the capture policy at a glance - and, on a desktop without a tray, the review
queue window instead."""

from __future__ import annotations

import importlib
import logging
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import shiboken6
from PySide6.QtCore import QObject, QSize, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QActionGroup, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QBoxLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSystemTrayIcon,
    QVBoxLayout,
)

from core.changes import ChangeSet, Topic
from core.model import BUILTIN_KINDS
from core.policy import Mode, Policy
from desktop.desk import Desk, ToolWindow
from desktop.quit_guard import QuitGuard
from desktop.widgets import plain_label

log = logging.getLogger(__name__)

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
ICON_SIZES = (16, 32, 64, 128, 256)
IDLE, PENDING = "cairn", "cairn-pending"
# Capture paused: a pause mark on the glyph, with the pending badge too when proposals wait.
PAUSED, PAUSED_PENDING = "cairn-paused", "cairn-paused-pending"
VARIANTS = (IDLE, PENDING, PAUSED, PAUSED_PENDING)

# The windows the menu opens, in its order: key -> (module, class). Imported when first opened,
# so the tray starts without loading every window. Without a tray, Ctrl and a window's number in
# this order (Ctrl+1 the review queue ... Ctrl+8 Settings) opens it from any other window.
WINDOWS: dict[str, tuple[str, str]] = {
    "review": ("desktop.windows.review", "ReviewWindow"),
    "memories": ("desktop.windows.memories", "MemoriesWindow"),
    "identity": ("desktop.windows.identity", "IdentityWindow"),
    "policy": ("desktop.windows.policy", "PolicyWindow"),
    "agents": ("desktop.windows.agents", "AgentsWindow"),
    "health": ("desktop.windows.health", "HealthWindow"),
    "archive": ("desktop.windows.archive", "ArchiveWindow"),
    "settings": ("desktop.windows.settings", "SettingsWindow"),
}
QUIT_KEY = "Ctrl+Q"  # without a tray, Quit from any window
MODES = (Mode.AUTO, Mode.ASK, Mode.OFF)
# Without a tray at start, how often to look for one appearing (the desktop's panel starting after
# Cairn at login): Qt docks the icon by itself but says nothing (see Tray.start).
TRAY_LOOK_MS = 1000
COLLECT_MS = 1500  # proposals arriving this close together make one notification
COOLDOWN_S = 5.0  # and notifications come at most this often
MESSAGE_MS = 8000


def load_icon(name: str) -> QIcon:
    """The rendered PNGs of one icon variant (scripts/render_icons.py), else its SVG."""
    icon = QIcon()
    for size in ICON_SIZES:
        png = ICONS / f"{name}-{size}.png"
        if png.exists():
            icon.addFile(str(png), QSize(size, size))
    return icon if not icon.isNull() else QIcon(str(ICONS / f"{name}.svg"))


def window_class(key: str) -> type[ToolWindow]:
    module, name = WINDOWS[key]
    kind = getattr(importlib.import_module(module), name)
    if not (isinstance(kind, type) and issubclass(kind, ToolWindow)):
        raise TypeError(f"{module}.{name} is not a ToolWindow")
    return kind


class Tray(QObject):
    """The tray over one Desk. `quit` asks the application to stop (the runtime closes cleanly);
    the person's Quit runs it through `quit_guard`, which asks first when edits would be lost.

    `notifications` records every notification text shown, in order (tests and the log read it).
    """

    notified = Signal(str)
    count_shown = Signal(int)
    policy_shown = Signal()
    tray_appeared = Signal()  # a tray came up after a start without one (see `start`)

    def __init__(
        self, desk: Desk, *, quit: Callable[[], None], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.desk = desk
        self.quit_guard = QuitGuard(desk, quit, self)  # asks before edits not saved are lost
        self.count = 0
        self.paused = False  # capture paused, as the last policy read says
        self.variant = IDLE
        self.notifications: list[str] = []
        self.collect_ms = COLLECT_MS
        self.cooldown_s = COOLDOWN_S
        self.note: QLabel | None = None  # without a tray: the note of the last window built
        self.without_tray = False  # started without a tray and none has appeared since
        self._tray_look = QTimer(self)
        self._tray_look.setInterval(TRAY_LOOK_MS)
        self._tray_look.timeout.connect(self._look_for_tray)
        self._icons = {variant: load_icon(variant) for variant in VARIANTS}
        self._counting = False
        self._count_again = False
        self._burst: Counter[str] = Counter()
        self._last_notified: float | None = None  # time.monotonic() of the last one
        self._burst_timer = QTimer(self)
        self._burst_timer.setSingleShot(True)
        self._burst_timer.timeout.connect(self._notify)

        self.icon = QSystemTrayIcon(self._icons[IDLE], self)
        self.icon.setObjectName("cairnTray")
        self.icon.activated.connect(self._activated)
        self.icon.messageClicked.connect(self.open_review)
        self.menu = QMenu()
        self.menu.setObjectName("trayMenu")
        self.menu.aboutToShow.connect(lambda: log.debug("tray menu shown"))
        self._kind_menus: dict[str, QMenu] = {}
        self._kind_groups: dict[str, QActionGroup] = {}
        self._build_menu()
        self.icon.setContextMenu(self.menu)
        self._set_tooltip()

        desk.on_language(self.retranslate)
        desk.live.on(self, {Topic.REVIEW}, self._review_changed)
        desk.live.on(self, {Topic.POLICY}, lambda _cs: self.load_policy())
        self.load_count()
        self.load_policy()

    # -- the menu ----------------------------------------------------------------------------

    def _action(self, text: str, name: str, slot: Callable[[], None], tip: str = "") -> QAction:
        action = QAction(text, self.menu)
        action.setObjectName(name)
        if tip:
            action.setToolTip(tip)
        action.triggered.connect(slot)
        self.menu.addAction(action)
        return action

    def _opener(self, key: str) -> Callable[[], None]:
        def open_it() -> None:
            self.open_window(key)

        return open_it

    def _build_menu(self) -> None:
        self.menu.setToolTipsVisible(True)
        self.review_action = self._action(
            self.tr("Review queue ({})").format(0),
            "trayReview",
            self.open_review,
            self.tr("Proposals from agents that wait for your decision"),
        )
        self._action(self.tr("Memories"), "trayMemories", self._opener("memories"))
        self._action(self.tr("Identity"), "trayIdentity", self._opener("identity"))
        self.policy_menu = self.menu.addMenu(self.tr("Capture policy"))
        self.policy_menu.setObjectName("trayPolicy")
        self.policy_menu.setToolTipsVisible(True)
        self.pause_action = QAction(self.tr("Pause all capture"), self.policy_menu)
        self.pause_action.setObjectName("trayPause")
        self.pause_action.setCheckable(True)
        self.pause_action.setToolTip(self.tr("While paused, Cairn refuses every agent's write"))
        self.pause_action.triggered.connect(self._pause_triggered)
        self.policy_menu.addAction(self.pause_action)
        self.policy_menu.addSeparator()
        self.policy_window_action = QAction(self.tr("Open the capture policy…"), self.policy_menu)
        self.policy_window_action.setObjectName("trayPolicyWindow")
        self.policy_window_action.triggered.connect(self._opener("policy"))
        self._kinds_separator = self.policy_menu.addSeparator()
        self.policy_menu.addAction(self.policy_window_action)
        self._action(self.tr("Agents"), "trayAgents", self._opener("agents"))
        self._action(self.tr("Health"), "trayHealth", self._opener("health"))
        self._action(
            self.tr("Export…"),
            "trayExport",
            self._opener("archive"),
            self.tr("Export your memories to a file, or import an export"),
        )
        self._action(self.tr("Settings"), "traySettings", self._opener("settings"))
        self.menu.addSeparator()
        self._action(
            self.tr("Quit"),
            "trayQuit",
            self.quit_guard.request,
            self.tr("Stop Cairn: agents lose their connection until it starts again"),
        )

    def retranslate(self) -> None:
        """Rebuild the menu in the language just chosen."""
        self.menu.clear()
        self._kind_menus.clear()
        self._kind_groups.clear()
        self._build_menu()
        self.show_count(self.count)
        self.load_policy()

    def open_window(self, key: str) -> ToolWindow:
        return self.desk.open(window_class(key))

    @Slot()
    def open_review(self) -> None:
        self.open_window("review")

    @Slot(QSystemTrayIcon.ActivationReason)
    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        log.debug("tray icon activated (%s)", reason.name)
        if reason is QSystemTrayIcon.ActivationReason.Trigger:
            self.open_review()

    # -- starting ----------------------------------------------------------------------------

    def start(self) -> bool:
        """Show the icon; on a desktop without a tray, open the review queue instead: every
        window then carries a note saying why (closing the last window quits) and buttons for
        what the menu would offer - until a tray appears (a panel that starts after Cairn at
        login), when the icon docks there, the notes and buttons go and closing the windows no
        longer quits (`tray_appeared`). Returns whether a tray is there."""
        available = QSystemTrayIcon.isSystemTrayAvailable()
        # Shown without a tray too: Qt docks the icon when one appears (and again when a tray
        # that went away comes back).
        self.icon.show()
        if available:
            log.info("tray icon shown (system tray available: %s)", available)
            return True
        log.info("no system tray on this desktop: showing the review queue window instead")
        self.without_tray = True
        self.desk.on_open(self._dress_without_tray)
        self.open_window("review")
        # WORKAROUND: Qt says nothing when a tray appears (QSystemTrayIcon has no signal for
        # it), so look once a second, and only while there is none.
        self._tray_look.start()
        return False

    def _dress_without_tray(self, window: ToolWindow) -> None:
        if self.without_tray:
            self._add_menu_strip(window)
            self.quit_guard.watch(window)  # closing the last window quits: ask first

    @Slot()
    def _look_for_tray(self) -> None:
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.tray_found()

    def tray_found(self) -> None:
        """A tray appeared after a start without one: the icon is there now, so the windows
        lose the no-tray note and buttons, and closing them no longer quits Cairn."""
        self._tray_look.stop()
        if not self.without_tray:
            return
        self.without_tray = False
        for window in self.desk.windows():
            strip = window.findChild(QFrame, "noTrayStrip")
            if strip is not None:
                shiboken6.delete(strip)  # its buttons' Ctrl+number keys go with it
            self.quit_guard.unwatch(window)
        self.note = None
        log.info(
            "a system tray appeared: the tray icon is shown there, and closing the windows no "
            "longer quits Cairn"
        )
        self.tray_appeared.emit()

    def _add_menu_strip(self, window: ToolWindow) -> None:
        """Without a tray: the note and the menu's entries (each other window, and Quit) across
        the top of `window`, in the language it is built in. The buttons' keys are Ctrl and the
        window's number in the menu's order, and Ctrl+Q: every Alt-letter of "Health" is some
        window's own, and one letter per entry, the same in every window, is what a person can
        learn. Each button's tooltip shows its key."""
        layout = window.layout()
        if not isinstance(layout, QBoxLayout):  # every ToolWindow lays out in a box
            log.warning("%s has no box layout: no menu strip", type(window).__name__)
            return
        strip = QFrame(window)
        strip.setObjectName("noTrayStrip")
        strip.setStyleSheet("QFrame#noTrayStrip { background: #fff4d6; }")
        note = plain_label(
            self.tr(
                "Your desktop has no system tray, so Cairn opened its window. Cairn keeps "
                "running while a Cairn window is open; closing the last one quits Cairn."
            ),
            strip,
        )
        note.setObjectName("noTrayNote")
        note.setWordWrap(True)
        buttons = QHBoxLayout()
        entries = [
            ("review", self.tr("Review queue")),
            ("memories", self.tr("Memories")),
            ("identity", self.tr("Identity")),
            ("policy", self.tr("Capture policy")),
            ("agents", self.tr("Agents")),
            ("health", self.tr("Health")),
            ("archive", self.tr("Export…")),
            ("settings", self.tr("Settings")),
        ]
        for number, (key, text) in enumerate(entries, start=1):
            if window.name == key:  # (each window's name is its key here: no module to import)
                continue
            button = QPushButton(text, strip)
            button.setObjectName(f"noTray-{key}")
            shortcut = QKeySequence(f"Ctrl+{number}")
            button.setShortcut(shortcut)  # after the text, which would set its Alt-letter
            button.setToolTip(shortcut.toString(QKeySequence.SequenceFormat.NativeText))
            button.clicked.connect(self._opener(key))
            buttons.addWidget(button)
        buttons.addStretch(1)
        quit_button = QPushButton(self.tr("Quit"), strip)
        quit_button.setObjectName("noTray-quit")
        quit_key = QKeySequence(QUIT_KEY)
        quit_button.setShortcut(quit_key)
        quit_button.setToolTip(
            self.tr("Stop Cairn: agents lose their connection until it starts again")
            + "\n"
            + quit_key.toString(QKeySequence.SequenceFormat.NativeText)
        )
        quit_button.clicked.connect(self.quit_guard.request)
        buttons.addWidget(quit_button)
        column = QVBoxLayout(strip)
        column.addWidget(note)
        column.addLayout(buttons)
        layout.insertWidget(0, strip)
        self.note = note

    def hide(self) -> None:
        self._burst_timer.stop()
        self._tray_look.stop()
        self.icon.hide()

    # -- the count ---------------------------------------------------------------------------

    def load_count(self) -> None:
        """Ask for the number of waiting proposals (one call in flight at a time)."""
        if self._counting:
            self._count_again = True
            return
        self._counting = True
        self.desk.call(self.desk.cairn.review.count, on_done=self._counted, on_error=self._failed)

    def _counted(self, count: int) -> None:
        self._counting = False
        if self._count_again:
            self._count_again = False
            self.load_count()
            return
        self.show_count(count)

    def _failed(self, error: BaseException) -> None:
        self._counting = False
        self._count_again = False
        self.desk.presenter.show(error)

    def show_count(self, count: int) -> None:
        self.count = count
        self.review_action.setText(self.tr("Review queue ({})").format(count))
        self._set_icon()
        self._set_tooltip()
        self.count_shown.emit(count)

    def _set_icon(self) -> None:
        """The icon variant for the count and the pause: a paused capture shows a pause mark,
        so a person who forgot sees why agents' writes are refused."""
        if self.paused:
            variant = PAUSED_PENDING if self.count else PAUSED
        else:
            variant = PENDING if self.count else IDLE
        if variant != self.variant:
            self.variant = variant
            self.icon.setIcon(self._icons[variant])
            log.debug("tray icon: %s", variant)

    def _set_tooltip(self) -> None:
        if self.paused:
            if self.count == 0:
                text = self.tr("Cairn — capture paused; nothing waiting")
            elif self.count == 1:
                text = self.tr("Cairn — capture paused; 1 proposal waiting for you")
            else:
                text = self.tr("Cairn — capture paused; {} proposals waiting for you").format(
                    self.count
                )
        elif self.count == 0:
            text = self.tr("Cairn — nothing waiting")
        elif self.count == 1:
            text = self.tr("Cairn — 1 proposal waiting for you")
        else:
            text = self.tr("Cairn — {} proposals waiting for you").format(self.count)
        if text != self.icon.toolTip():
            self.icon.setToolTip(text)
            log.debug("tray tooltip: %s", text)

    # -- notifications -------------------------------------------------------------------------

    def _review_changed(self, change_set: ChangeSet) -> None:
        self.load_count()
        arrived = [c.actor or "?" for c in change_set.changes if c.action == "propose"]
        if not arrived:
            return
        self._burst.update(arrived)
        if not self._burst_timer.isActive():
            wait_ms = self.collect_ms
            if self._last_notified is not None:
                since = time.monotonic() - self._last_notified
                wait_ms = max(wait_ms, int((self.cooldown_s - since) * 1000))
            self._burst_timer.start(wait_ms)

    @Slot()
    def _notify(self) -> None:
        burst, self._burst = self._burst, Counter()
        total = sum(burst.values())
        if not total:
            return
        agents = ", ".join(sorted(burst))
        if total == 1:
            text = self.tr("1 new proposal from {}").format(agents)
        else:
            text = self.tr("{} new proposals from {}").format(total, agents)
        self._last_notified = time.monotonic()
        self.notifications.append(text)
        log.debug("tray notification: %s", text)
        self.icon.showMessage(
            self.tr("Cairn"), text, self._icons[PENDING], MESSAGE_MS
        )  # clicking it opens the queue (messageClicked)
        self.notified.emit(text)

    # -- the capture policy ------------------------------------------------------------------

    def load_policy(self) -> None:
        self.desk.call(self.desk.cairn.policy.current, on_done=self.show_policy)

    def show_policy(self, policy: Policy) -> None:
        self.pause_action.setChecked(policy.paused)
        self.paused = policy.paused
        self._set_icon()
        self._set_tooltip()
        kinds = [*BUILTIN_KINDS, *(k for k in policy.kinds if k not in BUILTIN_KINDS)]
        for kind in kinds:
            if kind not in self._kind_menus:
                self._add_kind(kind)
            mode = policy.kinds.get(kind, policy.other_kinds)
            for action in self._kind_groups[kind].actions():
                action.setChecked(action.data() == mode.value)
            self._kind_menus[kind].setTitle(
                self.tr("{kind}: {mode}").format(kind=kind, mode=self._mode_label(mode))
            )
        self.policy_shown.emit()

    def _mode_label(self, mode: Mode) -> str:
        return {Mode.AUTO: self.tr("auto"), Mode.ASK: self.tr("ask"), Mode.OFF: self.tr("off")}[
            mode
        ]

    def _add_kind(self, kind: str) -> None:
        menu = QMenu(kind, self.policy_menu)
        menu.setObjectName(f"trayPolicy_{kind}")
        menu.setToolTipsVisible(True)
        group = QActionGroup(menu)
        group.setExclusive(True)
        tips = {
            Mode.AUTO: self.tr("An agent's {} is stored at once"),
            Mode.ASK: self.tr("An agent's {} waits in the review queue for you"),
            Mode.OFF: self.tr("An agent's {} is refused"),
        }
        for mode in MODES:
            action = QAction(self._mode_label(mode), menu)
            action.setObjectName(f"trayPolicy_{kind}_{mode.value}")
            action.setCheckable(True)
            action.setData(mode.value)
            action.setToolTip(tips[mode].format(kind))
            group.addAction(action)
            menu.addAction(action)
        group.triggered.connect(lambda action, k=kind: self._mode_triggered(k, action))
        self.policy_menu.insertMenu(self._kinds_separator, menu)
        self._kind_menus[kind] = menu
        self._kind_groups[kind] = group

    def kind_action(self, kind: str, mode: Mode) -> QAction:
        """The menu entry that sets `kind` to `mode` (tests and the xvfb check use it)."""
        for action in self._kind_groups[kind].actions():
            if action.data() == mode.value:
                return action
        raise KeyError(mode)

    def _mode_triggered(self, kind: str, action: QAction) -> None:
        self._set_policy(f"kinds.{kind}", Mode(str(action.data())))

    def _pause_triggered(self, checked: bool) -> None:
        self._set_policy("paused", checked)

    def _set_policy(self, target: str, value: Mode | bool) -> None:
        def failed(error: BaseException) -> None:
            self.desk.presenter.show(error)
            self.load_policy()  # the menu shows what is in effect again

        self.desk.call(
            self.desk.cairn.policy.set,
            self.desk.person,
            target,
            value,
            on_done=self.show_policy,
            on_error=failed,
        )

    def close(self) -> None:
        """Hide the icon and free the menu now (it has no parent; the loop may be ending)."""
        self.quit_guard.disarm()
        self.hide()
        self.icon.setContextMenu(None)  # type: ignore[arg-type]  # Qt accepts none
        shiboken6.delete(self.menu)
        self.note = None
