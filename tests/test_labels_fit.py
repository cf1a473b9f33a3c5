"""Every window, in English and in Simplified Chinese: each label, button, check box and group
title shows its whole text (no truncated labels), and every string has a translation - the
help text of every setting core declares too."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt, QTranslator
from PySide6.QtWidgets import QAbstractButton, QApplication, QGroupBox, QLabel, QWidget
from pytestqt.qtbot import QtBot

from core.knobs import KNOBS
from desktop import knobs
from desktop.desk import Desk, ToolWindow
from desktop.i18n import I18N_DIR
from desktop.tray import WINDOWS, window_class
from tests.conftest import settle


def window_classes() -> list[type[ToolWindow]]:
    """Every window the tray can open."""
    return [window_class(key) for key in WINDOWS]


def shown_text(text: str) -> str:
    """A button's text as drawn: `&` marks an accelerator, `&&` is a literal ampersand."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def too_narrow(window: QWidget) -> Iterator[str]:
    """Visible widgets whose text is wider than the room they were given."""
    for widget in window.findChildren(QWidget):
        if not widget.isVisibleTo(window) or widget.width() <= 1:
            continue
        name = f"{type(window).__name__}: {type(widget).__name__} {widget.objectName()!r}"
        if isinstance(widget, QAbstractButton):
            text = shown_text(widget.text())
            need = widget.sizeHint().width()
            if text and widget.width() + 1 < need:
                yield f"{name} {text!r}: {widget.width()} px wide, needs {need}"
        elif isinstance(widget, QLabel):
            rich = widget.textFormat() == Qt.TextFormat.RichText or "<" in widget.text()
            if widget.wordWrap() or rich or not widget.text():
                continue
            room = widget.contentsRect().width() - 2 * widget.margin()
            for line in widget.text().splitlines():
                need = widget.fontMetrics().horizontalAdvance(line)
                if need > room + 1:
                    yield f"{name} {line!r}: needs {need} px, has {room}"
        elif isinstance(widget, QGroupBox) and widget.title():
            need = widget.fontMetrics().horizontalAdvance(shown_text(widget.title()))
            if need > widget.width() - 16:
                yield f"{name} {widget.title()!r}: needs {need} px, has {widget.width() - 16}"


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_no_label_is_cut_in_any_window(qtbot: QtBot, desk: Desk, language: str) -> None:
    desk.language.apply(language)
    problems: list[str] = []
    try:
        for kind in window_classes():
            window = desk.open(kind)
            qtbot.waitExposed(window)
            settle(qtbot, desk)
            QApplication.processEvents()
            problems.extend(too_narrow(window))
            window.close()
    finally:
        desk.language.apply("en")
    assert problems == []


def test_every_string_has_a_chinese_translation() -> None:
    root = ET.parse(I18N_DIR / "cairn_zh_CN.ts").getroot()
    missing = []
    for context in root.iter("context"):
        for message in context.iter("message"):
            translation = message.find("translation")
            forms = [] if translation is None else [translation, *translation]
            done = translation is not None and translation.get("type") != "unfinished"
            if not done or not any((f.text or "").strip() for f in forms):
                missing.append(f"{context.findtext('name')}: {message.findtext('source')!r}")
    assert missing == []
    assert (I18N_DIR / "cairn_zh_CN.qm").stat().st_size > 0


def test_every_counted_string_has_its_english_singular_and_plural() -> None:
    """`tr("%n memories", "", n)` says "1 memory" only through the English file's forms:
    `scripts/translations` lists every counted string there, and each needs both."""
    english = ET.parse(I18N_DIR / "cairn_en.ts").getroot()
    forms = {
        (context.findtext("name"), message.findtext("source")): [
            (f.text or "").strip() for f in message.iter("numerusform")
        ]
        for context in english.iter("context")
        for message in context.iter("message")
    }
    chinese = ET.parse(I18N_DIR / "cairn_zh_CN.ts").getroot()
    counted = {
        (context.findtext("name"), message.findtext("source"))
        for context in chinese.iter("context")
        for message in context.iter("message")
        if message.get("numerus") == "yes"
    }
    assert counted and set(forms) == counted, "run scripts/translations"
    unwritten = [key for key, (one, *many) in forms.items() if not one or not all(many)]
    assert unwritten == [], "write the singular and plural of these in cairn_en.ts"
    assert (I18N_DIR / "cairn_en.qm").stat().st_size > 0


def test_every_setting_help_has_a_chinese_translation() -> None:
    """The Settings window's tooltips are core's help texts (core.knobs.KNOBS): each is listed
    in desktop/knobs.py as core words it, so that `scripts/translations` finds it, and has a
    Chinese translation in the .ts and in the built .qm."""
    stale = sorted(k.name for k in KNOBS if knobs.HELP.get(k.name) != k.help) + sorted(
        set(knobs.HELP) - {k.name for k in KNOBS}
    )
    assert stale == [], "copy core's help text of these settings into desktop/knobs.py"
    root = ET.parse(I18N_DIR / "cairn_zh_CN.ts").getroot()
    translated = {
        message.findtext("source"): message.find("translation")
        for context in root.iter("context")
        if context.findtext("name") == knobs.CONTEXT
        for message in context.iter("message")
    }
    built = QTranslator()
    assert built.load(str(I18N_DIR / "cairn_zh_CN.qm"))
    missing = []
    for knob in KNOBS:
        translation = translated.get(knob.help)
        written = translation is not None and translation.get("type") != "unfinished"
        text = (translation.text or "").strip() if translation is not None else ""
        if not written or not text or not built.translate(knobs.CONTEXT, knob.help):
            missing.append(knob.name)
    assert missing == [], "run scripts/translations, translate these, and run it again"
