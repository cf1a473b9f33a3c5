"""Regression: Qt signals by the ten thousand must not kill the process. PySide6 6.12.0 on Python
3.11 leaked a reference on every `Signal.emit()` (to True) and `QTimer.singleShot(0, fn)` (to
None) and aborted after a few hundred to ~20k events (FACTS.md) - with a socket server inside the
Qt loop, that is an ordinary afternoon. Run in a subprocess, so an abort is a failing exit code."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.gui

EVENTS = 40_000

SCRIPT = textwrap.dedent(
    """
    import sys
    from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal

    N = int(sys.argv[1])
    app = QCoreApplication([])

    class Pinger(QObject):
        ping = Signal(bool)
        note = Signal(object)

    pinger = Pinger()
    heard = {"ping": 0, "note": 0, "timer": 0}
    pinger.ping.connect(lambda flag: heard.__setitem__("ping", heard["ping"] + 1))
    pinger.note.connect(lambda value: heard.__setitem__("note", heard["note"] + 1))
    for i in range(N):
        pinger.ping.emit(i % 2 == 0)
        pinger.note.emit(None)

    def tick():
        heard["timer"] += 1
        if heard["timer"] < N:
            QTimer.singleShot(0, tick)
        else:
            app.quit()

    QTimer.singleShot(0, tick)
    app.exec()
    print(heard["ping"], heard["note"], heard["timer"])
    """
)


def test_tens_of_thousands_of_signals_and_timers_do_not_abort() -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(EVENTS)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert done.returncode == 0, f"the Qt process died ({done.returncode}): {done.stderr[-2000:]}"
    assert done.stdout.split() == [str(EVENTS)] * 3
