"""Print the scanner's table of format characters (general category Cf) for this Python's Unicode.

    .venv/bin/python scripts/format_table.py

Paste the table over FORMAT_CHARACTERS in core/scanner/text.py (and the version into the
comment above it) when a Python upgrade brings a new Unicode database (tests/test_scanner.py
fails and says so).
"""

from __future__ import annotations

import sys
import unicodedata


def format_ranges() -> list[tuple[int, int]]:
    """Every run of consecutive format characters, as (first, last) code points."""
    out: list[tuple[int, int]] = []
    for cp in range(sys.maxunicode + 1):
        if unicodedata.category(chr(cp)) != "Cf":
            continue
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def table() -> str:
    """The Python source of FORMAT_CHARACTERS."""
    lines = [
        f"# General category Cf, Unicode {unicodedata.unidata_version}: scripts/format_table.py"
    ]
    lines.append("FORMAT_CHARACTERS: tuple[tuple[int, int], ...] = (")
    lines += [f"    (0x{lo:04X}, 0x{hi:04X})," for lo, hi in format_ranges()]
    lines.append(")")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
