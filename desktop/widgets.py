"""Small pieces every window uses: naming a widget, and showing a time."""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import QDateTime
from PySide6.QtWidgets import QWidget

W = TypeVar("W", bound=QWidget)


def named(widget: W, name: str, tip: str | None = None) -> W:
    """`widget` with its object name (tests and style sheets find it by that) and tooltip."""
    widget.setObjectName(name)
    if tip:
        widget.setToolTip(tip)
    return widget


def when(ms: int | None) -> str:
    """A stored time (ms since the epoch) to the minute, as short as it can be: today's as
    14:05, this year's as 11-28 14:05, older ones with the year; '' for none."""
    if ms is None:
        return ""
    moment = QDateTime.fromMSecsSinceEpoch(ms)
    today = QDateTime.currentDateTime().date()
    if moment.date() == today:
        return moment.toString("HH:mm")
    if moment.date().year() == today.year():
        return moment.toString("MM-dd HH:mm")
    return moment.toString("yyyy-MM-dd HH:mm")
