"""The real tray on a real X server: Xvfb, a tray host (trayer), the real `cairn` process on the
xcb platform, clicks from xdotool. The icon docks, a right click opens the menu, an agent's
proposal over the socket changes the icon and tooltip, a left click opens the review queue.

The app logs what it does with CAIRN_TRAY_DEBUG=1; this test reads that log. Without Xvfb,
trayer or xdotool it is skipped - except under CI, where a skip would hide a broken tray."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.runtime import socket_path
from tests.conftest import ROOT, cairn_env
from tests.serving import RawClient, paths_for
from tests.test_tray import cairn_command

pytestmark = pytest.mark.gui

TOOLS = ("Xvfb", "trayer", "xdotool")
TRAYER = ("trayer", "--edge", "top", "--align", "right", "--widthtype", "request")


def require_tools() -> None:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if not missing:
        return
    why = f"the real tray test needs {', '.join(missing)} (Debian: xvfb trayer xdotool)"
    if os.environ.get("CI"):
        pytest.fail(f"{why}; under CI this is a failure, not a skip")
    pytest.skip(why)


def wait(what: str, check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.fixture
def display() -> Iterator[str]:
    """A fresh Xvfb on a free display number (Xvfb picks it and tells us)."""
    require_tools()
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    try:
        with os.fdopen(read_fd, "rb") as pipe:
            number = pipe.readline().strip().decode()
        assert number.isdigit(), "Xvfb did not report its display"
        yield f":{number}"
    finally:
        stop(proc)


def xdotool(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["xdotool", *args], env=env, capture_output=True, text=True, timeout=10)
    return done.stdout if done.returncode == 0 else ""


def start_trayer(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """trayer docked at the top right of `env`'s display, once its panel is there."""
    proc = subprocess.Popen(
        [*TRAYER, "--height", "32", "--expand", "false", "--transparent", "false"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait("trayer's panel", lambda: bool(xdotool(env, "search", "--name", "^panel$")))
    except BaseException:
        stop(proc)
        raise
    return proc


@pytest.fixture
def tray_host(display: str) -> Iterator[dict[str, str]]:
    """trayer docked at the top right; yields the environment for programs on this display."""
    env = dict(os.environ, DISPLAY=display)
    proc = start_trayer(env)
    try:
        yield env
    finally:
        stop(proc)


def icon_center(env: dict[str, str]) -> tuple[int, int]:
    """Where Cairn's docked icon is: the Cairn-class window on screen that is icon-sized (not a
    window, nor Qt's hidden helper windows)."""
    for window in xdotool(env, "search", "--onlyvisible", "--class", "^Cairn$").split():
        shell = xdotool(env, "getwindowgeometry", "--shell", window)
        geo = dict(line.split("=", 1) for line in shell.split())
        if 4 < int(geo.get("WIDTH", 0)) <= 64 and 4 < int(geo.get("HEIGHT", 0)) <= 64:
            return int(geo["X"]) + int(geo["WIDTH"]) // 2, int(geo["Y"]) + int(geo["HEIGHT"]) // 2
    raise AssertionError("Cairn's tray icon window was not found")


def start_cairn(
    home: Path, display: str, log_path: Path
) -> tuple[subprocess.Popen[bytes], Callable[[str], Callable[[], bool]]]:
    """The real `cairn` on the X server `display`, its store in `home`, logging what the tray
    does into `log_path`: the process, and `logged(line)` - a check that the log holds it."""
    env = cairn_env(home) | {
        "DISPLAY": display,
        "QT_QPA_PLATFORM": "xcb",
        "CAIRN_TRAY_DEBUG": "1",
        "PYTHONFAULTHANDLER": "1",
    }

    def logged(line: str) -> Callable[[], bool]:
        return lambda: line in log_path.read_text(encoding="utf-8", errors="replace")

    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            cairn_command(), cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT
        )
    return proc, logged


def test_the_real_tray_docks_opens_its_menu_and_shows_a_proposal(
    tray_host: dict[str, str], short_tmp: Path, workspace_dir: Path
) -> None:
    home = short_tmp / "x"
    log_path = short_tmp / "tray.log"
    proc, logged = start_cairn(home, tray_host["DISPLAY"], log_path)
    try:
        wait("the docked icon", logged("tray icon shown (system tray available: True)"))
        x, y = icon_center(tray_host)

        # a right click opens the menu (before any window could cover the icon)
        xdotool(tray_host, "mousemove", str(x), str(y), "click", "3")
        wait("the menu", logged("tray menu shown"))
        xdotool(tray_host, "key", "Escape")
        assert not logged("tray icon: cairn-pending")()

        # an agent's proposal over the socket changes the icon and the tooltip
        agent = RawClient(socket_path(paths_for(home)))
        assert "result" in agent.hello(agent="agent-a", workspace=str(workspace_dir))
        written = agent.request(
            "memory.write",
            {"content": "idea: shard the ledger by tenant", "kind": "idea", "scope": "project"},
        )
        assert written["result"]["status"] == "pending", written
        wait("the pending icon", logged("tray icon: cairn-pending"))
        wait("the tooltip", logged("tray tooltip: Cairn — 1 proposal waiting for you"))
        wait("the notification", logged("tray notification: 1 new proposal from agent-a"))
        agent.close()

        # a left click on the icon opens the review queue
        xdotool(tray_host, "mousemove", str(x), str(y), "click", "1")
        wait("the click", logged("tray icon activated (Trigger)"))
        wait(
            "the review queue window",
            lambda: bool(xdotool(tray_host, "search", "--onlyvisible", "--name", "Review queue")),
        )

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log_path.read_text(encoding="utf-8", errors="replace")
        assert logged("Cairn stopped")()
    finally:
        stop(proc)


def test_a_tray_host_that_starts_after_cairn_gets_the_icon_and_closing_no_longer_quits(
    display: str, short_tmp: Path
) -> None:
    """Started at login before the desktop's panel (autostart often wins that race), Cairn found
    no tray, opened the review queue with the no-tray strip - and stayed so once the panel was
    up: no icon, and closing the window, as anyone would, quit Cairn."""
    home = short_tmp / "x"
    x_env = dict(os.environ, DISPLAY=display)
    log_path = short_tmp / "tray.log"
    proc, logged = start_cairn(home, display, log_path)
    trayer: subprocess.Popen[bytes] | None = None
    try:
        wait("the no-tray window", logged("no system tray on this desktop"))
        wait(
            "the review queue window",
            lambda: bool(xdotool(x_env, "search", "--onlyvisible", "--name", "Review queue")),
        )
        review = xdotool(x_env, "search", "--onlyvisible", "--name", "Review queue").split()[0]

        trayer = start_trayer(x_env)  # the panel comes up
        wait("the tray noticed", logged("a system tray appeared"))
        x, y = icon_center(x_env)

        # the person closes the window (Esc, as its title bar's X): Cairn keeps running
        xdotool(x_env, "windowfocus", "--sync", review, "key", "Escape")
        wait(
            "the window closed",
            lambda: not xdotool(x_env, "search", "--onlyvisible", "--name", "Review queue"),
        )
        assert proc.poll() is None, log_path.read_text(encoding="utf-8", errors="replace")
        xdotool(x_env, "mousemove", str(x), str(y), "click", "3")
        wait("the menu", logged("tray menu shown"))

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log_path.read_text(encoding="utf-8", errors="replace")
    finally:
        stop(proc)
        if trayer is not None:
            stop(trayer)
