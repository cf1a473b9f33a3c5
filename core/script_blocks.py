"""The Unicode blocks the tokenizer reads by script: the letters and marks of the scripts written
without spaces between words, and the combining marks that belong inside an Indic word."""

from __future__ import annotations

import re
import unicodedata


def _block_chars(blocks: tuple[tuple[int, int], ...], categories: str) -> str:
    """A regex class body of the characters in `blocks` whose general category starts with one
    of `categories` (by this Python's Unicode data, like `\\w`), as ranges."""
    points = [
        c
        for first, last in blocks
        for c in range(first, last + 1)
        if unicodedata.category(chr(c))[0] in categories
    ]
    ranges: list[list[int]] = []
    for c in points:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )


# Thai, Lao, Myanmar (and its extensions A and B), Khmer: no spaces between words. Their letters
# and marks make a run; their digits and punctuation do not (`๒๕๖๗` is a number, `។` a full stop).
SPACELESS = _block_chars(
    (
        (0x0E00, 0x0E7F),
        (0x0E80, 0x0EFF),
        (0x1000, 0x109F),
        (0x1780, 0x17FF),
        (0xA9E0, 0xA9FF),
        (0xAA60, 0xAA7F),
    ),
    "LM",
)
# Devanagari to Sinhala, Tibetan, Vedic extensions, Devanagari extended: their combining marks
# (vowel signs, virama, anusvara, subjoined letters) are part of the word. Python's `\w` does
# not match a mark, so every `\w` class of the tokenizer that meets a word's letters carries
# these too.
INDIC = "\u0900-\u0dff\u0f00-\u0fff\u1cd0-\u1cff\ua8e0-\ua8ff"
INDIC_MARKS = _block_chars(
    ((0x0900, 0x0DFF), (0x0F00, 0x0FFF), (0x1CD0, 0x1CFF), (0xA8E0, 0xA8FF)), "M"
)
