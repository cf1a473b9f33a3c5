"""PyInstaller runtime hook that replaces the stock `pyi_rth_pyside6` (see installer/cairn.spec).

WORKAROUND: the stock hook imports PySide6.QtCore in every process, to register an embedded
qt.conf, so the headless daemon and every CLI command loaded Qt and ICU (~15 MB more idle RSS for
`cairn serve`). Cairn imports Qt only on the tray's path. The bundle keeps the wheel's layout
(PySide6/Qt/lib, PySide6/Qt/plugins) and Qt 6 finds its prefix from libQt6Core's own location, so
only the environment the stock hook sets is kept here, and nothing is imported.
"""

import os
import sys


def _environment() -> None:
    bundle = getattr(sys, "_MEIPASS", "")
    qt = (
        os.path.join(bundle, "PySide6")
        if sys.platform == "win32"
        else os.path.join(bundle, "PySide6", "Qt")
    )
    os.environ["QT_PLUGIN_PATH"] = os.path.join(qt, "plugins")
    if sys.platform == "win32":  # QtNetwork's OpenSSL DLLs may have been collected here
        os.environ["PATH"] = bundle + os.pathsep + os.environ.get("PATH", "")


_environment()
del _environment
