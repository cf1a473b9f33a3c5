"""The expiry and the pin a proposal sets, in the person's words: what its memory has now and
what adopting makes (a proposal may change only these; until 2026-11-30 the review window
showed no difference then, and the person adopted it blind)."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, QDateTime

from desktop.diff import DELETED_STYLE, INSERTED_STYLE

# The strings here belong to the review window's translation context.
translate = QCoreApplication.translate

# The proposals whose adoption stores a memory with an expiry and a pin of its own.
SETTING_OPS = ("add", "update", "supersede")


@dataclass(frozen=True)
class Setting:
    """One of the two, as words: `before` is the memory's now (None for a new memory)."""

    label: str
    before: str | None
    after: str

    @property
    def changed(self) -> bool:
        return self.before is not None and self.before != self.after


def expiry_words(expires_at: int | None) -> str:
    """'expires 2026-12-01 14:00' (local time, the year always), 'expired 2026-11-30 09:00'
    for a time already past (an agent's time to live counts from the proposal: adopted now, the
    memory goes at the next housekeeping; until 2026-12-01 it read 'expires' too), or 'never
    expires'."""
    if expires_at is None:
        return translate("ReviewWindow", "never expires")
    moment = QDateTime.fromMSecsSinceEpoch(expires_at).toString("yyyy-MM-dd HH:mm")
    if expires_at <= QDateTime.currentMSecsSinceEpoch():
        return translate("ReviewWindow", "expired {}").format(moment)
    return translate("ReviewWindow", "expires {}").format(moment)


def pin_words(pinned: bool) -> str:
    return translate("ReviewWindow", "yes") if pinned else translate("ReviewWindow", "no")


def settings_of(item: dict[str, Any]) -> tuple[Setting, Setting] | None:
    """The expiry and the pin of the memory `item` proposes, as adopting it makes them (the
    rules of core's review service); None for a proposal that stores no memory of its own."""
    op = item["op"]
    if op not in SETTING_OPS:
        return None
    target = item.get("target") or {}
    had_expiry: int | None = target.get("expires_at")
    had_pin = bool(target.get("pinned"))
    if op == "update":  # a change of the memory itself: what it leaves alone stays
        if item.get("clear_expiry"):
            expires_at = None
        elif item.get("expires_at") is not None:
            expires_at = item["expires_at"]
        else:
            expires_at = had_expiry
        pinned = had_pin if item.get("pinned") is None else bool(item["pinned"])
    else:  # a memory of its own: what the agent gave it, or none
        expires_at, pinned = item.get("expires_at"), bool(item.get("pinned"))
    new = op == "add"
    return (
        Setting(
            translate("ReviewWindow", "Expiry"),
            None if new else expiry_words(had_expiry),
            expiry_words(expires_at),
        ),
        Setting(
            translate("ReviewWindow", "Pinned"),
            None if new else pin_words(had_pin),
            pin_words(pinned),
        ),
    )


def value_text(setting: Setting) -> str:
    """What the form shows: 'old → new' for a setting the proposal changes, else its value."""
    return f"{setting.before} → {setting.after}" if setting.changed else setting.after


def changes_html(settings: tuple[Setting, ...] | None) -> str:
    """A paragraph per setting the proposal changes, for below the text's diff - 'Expiry:', the
    old value struck out in red, '→', the new one in green, as the diff colours words; '' for
    none."""
    lines = [
        translate("ReviewWindow", "{}: {}").format(
            html.escape(s.label),
            f'<span style="{DELETED_STYLE}">{html.escape(s.before or "")}</span> → '
            f'<span style="{INSERTED_STYLE}">{html.escape(s.after)}</span>',
        )
        for s in settings or ()
        if s.changed
    ]
    return "".join(f"<p>{line}</p>" for line in lines)
