"""The format characters (Unicode category Cf) and the letters that show as nothing: the one table
the scanner's folding and `wording.visible` are both built from."""

from __future__ import annotations

from collections.abc import Sequence

# Every format character (general category Cf) of Unicode UNICODE_VERSION, the running Python's
# `unicodedata` (3.11's), written out: working it out at import walked 135k code points, 13 ms on
# every command's start until 2026-11-30. tests/test_format_characters.py recomputes it; when a
# Python upgrade brings another Unicode, `.venv/bin/python scripts/format_table.py` rewrites
# these two names.
UNICODE_VERSION = "14.0.0"
FORMAT_CHARACTERS: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)

# Format characters of a Unicode later than UNICODE_VERSION: the Egyptian hieroglyph format
# controls U+13439-U+1343F (Cf since Unicode 15.0, unassigned in 14.0.0). Text written where a
# newer Unicode runs may hold them, so `visible` marks them already; the scanner does not fold
# them, since it goes by this Python's Unicode. Delete an entry once FORMAT_CHARACTERS holds it
# (tests/test_format_characters.py says when).
LATER_FORMAT_CHARACTERS: tuple[tuple[int, int], ...] = ((0x13439, 0x1343F),)

# Characters that show as nothing and are no format characters: the Hangul fillers (U+115F,
# U+1160, U+3164, U+FFA0), the Khmer inherent vowels (U+17B4, U+17B5) and the Braille pattern
# blank (U+2800). `visible` marks them. The scanner drops all but the Braille blank (they are
# Default_Ignorable_Code_Point, its own table) and folds the blank to a space.
BLANK_LETTERS: tuple[tuple[int, int], ...] = (
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFFA0, 0xFFA0),
)


def char_class(ranges: Sequence[tuple[int, int]]) -> str:
    """The inside of a regular expression's character class holding `ranges` (code points,
    written raw: none may be `-`, `]`, `^` or a backslash)."""
    return "".join(chr(lo) if lo == hi else f"{chr(lo)}-{chr(hi)}" for lo, hi in ranges)
