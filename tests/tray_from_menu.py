"""The tray as started from the application menu, run as a program by tests/test_tray.py: no
terminal on standard error and a real platform's name, so `tell_person` shows a message box where
a person would see one. Each box is read out on standard error (`BOX: <text>`) and accepted a
second after it opens, as a person would click OK."""

from __future__ import annotations

import sys
import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

QApplication.platformName = staticmethod(lambda: "xcb")  # type: ignore[method-assign]
sys.stderr.isatty = lambda: False  # type: ignore[method-assign]

_opened: dict[int, float] = {}


def _person() -> None:
    box = QApplication.activeModalWidget()
    if isinstance(box, QMessageBox):
        first = _opened.setdefault(id(box), time.monotonic())
        if time.monotonic() - first > 1.0:
            print(f"BOX: {box.text()}", file=sys.stderr, flush=True)
            box.accept()


_init = QApplication.__init__


def _init_with_a_person(self: QApplication, *args: object) -> None:
    _init(self, *args)
    timer = QTimer(self)
    timer.timeout.connect(_person)
    timer.start(200)


QApplication.__init__ = _init_with_a_person  # type: ignore[method-assign,assignment]

if __name__ == "__main__":
    from desktop.main import main

    sys.exit(main([]))
