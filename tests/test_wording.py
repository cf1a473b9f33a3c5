"""What every surface says alike (`core/wording.py`): stored text shown with markers."""

from __future__ import annotations

import itertools
import unicodedata

from core.wording import visible


def test_visible_marks_every_format_character_but_those_used_in_place() -> None:
    """`visible`'s class is written out (walking every code point at import would cost every
    `cairn` command): it must hold every format character (category Cf) of the running
    Python's Unicode but the joiners and the soft hyphen, and nothing that shows as itself."""
    in_place = {0x00AD, 0x200C, 0x200D}
    blank = {0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0}
    planes = itertools.chain(range(0x20000), range(0xE0000, 0xE1000))
    for cp in planes:
        ch = chr(cp)
        category = unicodedata.category(ch)
        shown = visible(ch) == ch
        if (category == "Cf" and cp not in in_place) or cp in blank:
            assert not shown, f"U+{cp:04X} ({category}) prints raw"
        elif not shown:
            # marked: a control, a separator, or a code point unassigned in this Python
            assert category in ("Cc", "Cf", "Zl", "Zp", "Cn") or cp in blank, f"U+{cp:04X}"
    for kept in ("\u00ad", "\u200c", "\u200d", "\ufe0f", "\U000e0100", "a", "\u00e9", "中"):
        assert visible(kept) == kept
