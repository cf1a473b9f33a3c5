"""What every surface says alike (`core/wording.py`): stored text shown with markers."""

from __future__ import annotations

import subprocess
import sys
import unicodedata

from core.wording import visible
from tests.conftest import ROOT


def _spans(codepoints: set[int]) -> str:
    """`U+2028-U+2029, U+FFA0`: a set of code points short enough for a failure message."""
    runs: list[list[int]] = []
    for cp in sorted(codepoints):
        if runs and runs[-1][1] == cp - 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp])
    return ", ".join(f"U+{lo:04X}" + (f"-U+{hi:04X}" if hi > lo else "") for lo, hi in runs)


def test_visible_marks_exactly_what_a_terminal_would_obey_or_show_as_nothing() -> None:
    """Over every code point: `visible` marks each format character (category Cf) of the running
    Python's Unicode but those scripts use in place (the soft hyphen, ZWNJ, ZWJ), the controls
    but tab and line feed, the line and paragraph separators, the letters that show as nothing,
    the reserved U+FFF0-U+FFF8, the whole tag block and the Egyptian hieroglyph format controls
    (U+13439-U+1343F are Cf from Unicode 15.0 on, unassigned in Python 3.11's 14.0.0) - and
    nothing else: a variation selector, a letter or an ideograph prints as itself."""
    in_place = {0x00AD, 0x200C, 0x200D}
    controls = {*range(0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)}
    separators = {0x2028, 0x2029}
    blank_letters = {0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0}
    reserved = set(range(0xFFF0, 0xFFF9))
    tags = set(range(0xE0000, 0xE0080))
    hieroglyph_controls = set(range(0x13430, 0x13440))
    every = range(sys.maxunicode + 1)
    format_chars = {cp for cp in every if unicodedata.category(chr(cp)) == "Cf"}
    expected = (format_chars - in_place) | controls | separators | blank_letters | reserved
    expected |= tags | hieroglyph_controls
    marked = {cp for cp in every if visible(chr(cp)) != chr(cp)}
    assert not marked - expected, f"marked, but shows as itself: {_spans(marked - expected)}"
    assert not expected - marked, f"prints raw: {_spans(expected - marked)}"
    for kept in ("\t", "\n", "\u00ad", "\u200c", "\u200d", "\ufe0f", "\U000e0100", "a", "中"):
        assert visible(kept) == kept
    assert visible("a\u202eb\u2800c\x1b") == "a\\u202eb\\u2800c\\e"


def test_wording_stays_light_to_import() -> None:
    """Every `cairn` command imports `core.wording`: it takes its table from
    core/format_characters.py, not from the scanner (~90 ms to import) or `unicodedata`."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, core.wording; print(*sorted(m for m in sys.modules"
            " if m.startswith(('core', 'unicodedata'))))",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert loaded.stdout.split() == ["core", "core.format_characters", "core.wording"]
