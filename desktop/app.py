"""The tray application: one process holding Qt, the agent socket server and the store.

Start-up order: one Qt application; a tray already running is asked to come forward (and this
launch ends); a headless Cairn serving the store (an agent's client started it) is asked to stop
cleanly and the tray takes over; then the runtime starts inside Qt's loop (qasync), the tray's
local socket listens, the desk and the tray appear.
It runs until Quit, SIGTERM/SIGINT, `cairn stop`, or - without a tray - the last window closing;
then the windows close, the server stops, the store closes and both sockets are removed.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import qasync
from PySide6.QtWidgets import QApplication, QMessageBox

from core.daemon import Runtime, StoppedBeforeServing, stop_headless
from core.errors import AlreadyRunning, CairnError, ConfigInvalid
from core.paths import Paths, resolve_paths
from core.runtime import prepare_runtime_dir, probe, socket_path
from desktop import single
from desktop.desk import Desk
from desktop.person_check import PersonCheck
from desktop.tray import IDLE, Tray, load_icon
from desktop.widgets import plain_box

log = logging.getLogger("cairn")

DEBUG_ENV = "CAIRN_TRAY_DEBUG"  # set: the tray logs its tooltip, menu and notifications
# How long a launch that finds a serving Cairn keeps asking for a tray that may be starting.
TRAY_GRACE_S = 1.5
# Takeovers tried when an agent's client starts a new headless Cairn between the old one's stop
# and this start (every client starts one when none answers).
TAKEOVER_ATTEMPTS = 3

EXIT_OK = 0


def configure_logging() -> None:
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if os.environ.get(DEBUG_ENV):
        logging.getLogger("desktop.tray").setLevel(logging.DEBUG)


def find_running(paths: Paths, name: str) -> int | None:
    """None when this launch should start Cairn (after taking over from a headless one); else
    its exit status, after saying why not."""
    if single.ask(name, "show"):
        print("Cairn is already running; its window was brought forward")
        return EXIT_OK
    if probe(socket_path(paths)):
        # A tray starting this very moment serves its socket a little before it listens here.
        deadline = time.monotonic() + TRAY_GRACE_S
        while time.monotonic() < deadline:
            time.sleep(0.1)
            if single.ask(name, "show", timeout_ms=300):
                print("Cairn is already running; its window was brought forward")
                return EXIT_OK
        tray = single.holder(name)
        if tray is not None:  # a tray that does not answer is never taken for a headless Cairn
            shown = f" (pid {tray})" if tray > 0 else ""
            tell_person(
                f"Cairn is already running{shown} but its tray does not answer; wait a moment "
                "and start it again"
            )
            return AlreadyRunning.code.exit_status
        return take_over(paths)
    return None


def take_over(paths: Paths) -> int | None:
    """Stop the headless Cairn serving the store (it answers what is in flight and closes the
    store) so that this tray serves it: None when done, else the exit status after saying why
    not. Until 2026-11-30 the tray refused with a line on stderr, unseen from the application
    menu, and the person had no tray."""
    try:
        pid = stop_headless(paths)
    except AlreadyRunning as e:
        tell_person(e.message)
        return e.code.exit_status
    if pid:
        log.info("took over from the headless Cairn (pid %d)", pid)
    return None


def tell_person(message: str) -> None:
    """A refusal to start: on stderr, and in a message box when no terminal shows stderr (Cairn
    started from the application menu or at login)."""
    print(f"cairn: {message}", file=sys.stderr)
    shown = sys.stderr.isatty() or QApplication.platformName() in ("offscreen", "minimal")
    if not shown:
        box = plain_box(None)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Cairn")
        box.setText(message)
        box.exec()


async def start_runtime(runtime: Runtime, paths: Paths, name: str) -> int | None:
    """Start the runtime: None when it serves, else the exit status after saying why not."""
    for attempt in range(1, TAKEOVER_ATTEMPTS + 1):
        try:
            await runtime.start()
        except AlreadyRunning as e:
            # An agent's client may have started a headless Cairn since the look: take over
            # again (or come forward behind a tray that started meanwhile).
            if attempt < TAKEOVER_ATTEMPTS and probe(socket_path(paths)):
                refused = find_running(paths, name)
                if refused is not None:
                    return refused
                continue
            tell_person(e.message)
            return e.code.exit_status
        except CairnError as e:
            tell_person(e.message)
            return e.code.exit_status
        except StoppedBeforeServing:
            return 0  # a SIGTERM while it waited for the store: asked for, nothing to say
        else:
            return None
    raise AssertionError("unreachable: the last attempt returns")


@dataclass
class Running:
    """The running application's parts, for whoever started it (the story test drives them)."""

    runtime: Runtime
    desk: Desk
    tray: Tray
    person_check: PersonCheck


async def serve(
    app: QApplication,
    paths: Paths,
    name: str,
    on_started: Callable[[Running], None] | None = None,
    on_lost: Callable[[str], None] | None = None,
) -> int:
    """Run the runtime, the local listener and the tray until asked to stop. `on_started` is
    called once everything runs; `on_lost` with why, when Cairn stopped on its own because its
    socket file or database went."""
    person_check = PersonCheck()  # asks the person about their commands run without a terminal
    runtime = Runtime(paths, confirm_human=person_check)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):  # before starting: see core.daemon
        loop.add_signal_handler(sig, runtime.request_stop, f"received {signal.Signals(sig).name}")
    refused = await start_runtime(runtime, paths, name)
    if refused is not None:
        return refused
    assert runtime.cairn is not None
    person_check.follow(runtime.cairn.config)
    listener = single.Listener(name)
    desk: Desk | None = None
    tray: Tray | None = None

    def request_quit() -> None:
        runtime.request_stop("Quit chosen in the tray")

    def command(what: str) -> None:
        if what == "quit":
            runtime.request_stop("asked to quit by another launch")
        elif tray is not None:
            log.info("brought the review queue forward for another launch")
            tray.open_review()

    listener.command.connect(command)
    stop_quitting_on_last_close: Callable[[], None] | None = None  # without a tray
    try:
        listener.listen()
        desk = Desk(runtime.cairn)
        desk.start_language()  # the saved choice, or the system's, before anything is built
        tray = Tray(desk, quit=request_quit)
        if not tray.start():
            stop_quitting_on_last_close = quit_on_last_close(app, tray, runtime)
        freeze_heap()
        if on_started is not None:
            on_started(Running(runtime, desk, tray, person_check))
        await runtime.wait()
    finally:
        # The store closes and the socket goes whatever the windows' teardown does: a failure
        # there (a Qt object already deleted) left both behind until 2026-11-30.
        try:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)
            if stop_quitting_on_last_close is not None:
                stop_quitting_on_last_close()
            _close_windows(person_check, listener, tray, desk)
        finally:
            await runtime.stop()
    # After the stop: it says what was kept of a store whose file was replaced.
    if runtime.lost is not None and on_lost is not None:
        on_lost(f"Cairn stopped: {runtime.lost}")
    return EXIT_OK


def quit_on_last_close(app: QApplication, tray: Tray, runtime: Runtime) -> Callable[[], None]:
    """Without a tray, closing the last window stops Cairn - until a tray appears (the panel
    starting after Cairn at login), from then on the icon stays. Returns what undoes it (once
    undone, calling it again does nothing)."""

    def last_window_closed() -> None:
        runtime.request_stop("the last window was closed (no system tray)")

    connected = True

    def undo() -> None:
        nonlocal connected
        if connected:
            connected = False
            app.lastWindowClosed.disconnect(last_window_closed)

    app.lastWindowClosed.connect(last_window_closed)
    tray.tray_appeared.connect(undo)
    return undo


def freeze_heap() -> None:
    """Once the application has started (store open, tray and desk built), move what exists to
    the collector's permanent generation, so full collections no longer walk it: walking its
    ~63,000 objects held the GUI thread 26-77 ms at a time, as the review window's rows landed
    say (until 2026-12-01; docs/performance.md). The garbage there is collected first, so none
    of it is kept for good; `_close_windows` undoes the freeze."""
    gc.collect()
    gc.freeze()


def _close_windows(
    person_check: PersonCheck, listener: single.Listener, tray: Tray | None, desk: Desk | None
) -> None:
    person_check.close()
    listener.close()
    if tray is not None:
        tray.close()
    if desk is not None:
        desk.close()
    # Windows the desk let go of that sit in reference cycles are freed now, on this (the GUI)
    # thread: a collection that ran later on a server thread, or after the QApplication is
    # gone, would crash Qt. What `freeze_heap` set aside at the start is collected again too.
    gc.unfreeze()
    gc.collect()


def no_display() -> bool:
    """True on a Linux session with no graphical display, where Qt could only abort."""
    return sys.platform.startswith("linux") and not any(
        os.environ.get(var) for var in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    )


def run(argv: Sequence[str] = ()) -> int:
    """The tray application's entry: returns the exit status."""
    configure_logging()
    if no_display():
        print(
            "cairn: there is no graphical display here (DISPLAY and WAYLAND_DISPLAY are unset), "
            "so the tray cannot start; run `cairn serve` for Cairn without windows",
            file=sys.stderr,
        )
        return ConfigInvalid.code.exit_status
    app = QApplication([sys.argv[0] if sys.argv else "cairn", *argv])
    app.setApplicationName("Cairn")
    app.setQuitOnLastWindowClosed(False)  # the tray keeps running with every window closed
    app.setWindowIcon(load_icon(IDLE))
    try:
        paths = resolve_paths()
        prepare_runtime_dir(paths.runtime)
        name = single.local_name(paths)
        socket_path(paths)  # a path too long for a socket is refused before anything starts
    except CairnError as e:
        print(f"cairn: {e.message}", file=sys.stderr)
        return e.code.exit_status
    refused = find_running(paths, name)
    if refused is not None:
        return refused
    # FACTS.md: on Python 3.11 the qasync loop is created by hand (no asyncio.run loop_factory).
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    lost: list[str] = []
    try:
        status: int = loop.run_until_complete(serve(app, paths, name, on_lost=lost.append))
    finally:
        asyncio.set_event_loop(None)
        loop.close()
    # Told once everything has stopped and the store is free: a message box waits for the
    # person, and shown from inside the loop it held the store and hung the stop for good.
    for message in lost:
        tell_person(message)
    return status
