"""Render the tray icons (resources/icons/*.svg) to PNGs at 16-256 px.

QtSvg ships with PySide6-Essentials, so the SVGs are the source of truth; should a build lack it,
the same glyph is drawn with QPainter instead. Run: `.venv/bin/python scripts/render_icons.py`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPen

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
NAMES = ("cairn", "cairn-pending", "cairn-paused", "cairn-paused-pending")
SIZES = (16, 32, 64, 128, 256)
# The glyph on a 64-unit square, as in the SVGs: (cx, cy, rx, ry, fill), bottom stone first.
STONES = (
    (32.0, 50.0, 24.0, 9.5, "#7d8f99"),
    (30.5, 34.0, 17.0, 7.5, "#9aabb4"),
    (33.0, 20.0, 11.0, 6.0, "#b7c5cc"),
    (31.5, 9.0, 5.5, 4.0, "#d3dde2"),
)
BADGE = (50.0, 14.0, 12.0, "#e8590c")
# Capture paused: a dark disk top left with two white bars, (cx, cy, r, fill) and bars (x, y, w, h).
PAUSE = (14.0, 14.0, 12.0, "#3b4a54")
PAUSE_BARS = ((8.5, 8.0, 4.0, 12.0), (15.5, 8.0, 4.0, 12.0))


def render_svg(svg: Path, size: int) -> QImage | None:
    """The SVG at `size` px, or None when QtSvg is missing."""
    try:
        from PySide6.QtSvg import QSvgRenderer
    except ImportError:
        return None
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icons: {svg} is not a valid SVG")
    image = blank(size)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image


def blank(size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    return image


def draw(size: int, *, pending: bool, paused: bool) -> QImage:
    """The same glyph drawn directly (the fallback without QtSvg)."""
    image = blank(size)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.scale(size / 64, size / 64)
    painter.setPen(QPen(QColor("#26323a"), 2.5))
    for cx, cy, rx, ry, fill in STONES:
        painter.setBrush(QColor(fill))
        painter.drawEllipse(QPointF(cx, cy), rx, ry)
    if paused:
        cx, cy, r, fill = PAUSE
        painter.setPen(QPen(QColor("#ffffff"), 3))
        painter.setBrush(QColor(fill))
        painter.drawEllipse(QPointF(cx, cy), r, r)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor("#ffffff"))
        for x, y, w, h in PAUSE_BARS:
            painter.drawRect(QRectF(x, y, w, h))
    if pending:
        cx, cy, r, fill = BADGE
        painter.setPen(QPen(QColor("#ffffff"), 3))
        painter.setBrush(QColor(fill))
        painter.drawEllipse(QPointF(cx, cy), r, r)
    painter.end()
    return image


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    for name in NAMES:
        for size in SIZES:
            image = render_svg(ICONS / f"{name}.svg", size)
            if image is None:
                image = draw(size, pending=name.endswith("pending"), paused="paused" in name)
            out = ICONS / f"{name}-{size}.png"
            if not image.save(str(out)):
                raise SystemExit(f"render_icons: could not write {out}")
            print(out.relative_to(ICONS.parent.parent))
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
