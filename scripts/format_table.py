"""Rewrite the table of format characters (general category Cf) for this Python's Unicode.

    .venv/bin/python scripts/format_table.py          # rewrite core/format_characters.py
    .venv/bin/python scripts/format_table.py --check  # exit 1 when it is stale

Run it when a Python upgrade brings a new Unicode database (tests/test_format_characters.py
fails and says so): it rewrites UNICODE_VERSION and FORMAT_CHARACTERS in
core/format_characters.py, which the scanner and `wording.visible` are both built from.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

MODULE = Path(__file__).resolve().parent.parent / "core" / "format_characters.py"
# From `UNICODE_VERSION = ` to the `)` closing FORMAT_CHARACTERS: the part this script writes.
_GENERATED = re.compile(
    r'^UNICODE_VERSION = "[^"\n]*"\n'
    r"FORMAT_CHARACTERS: [^\n]* = \(\n(?:    \(0x[0-9A-F]+, 0x[0-9A-F]+\),\n)*\)\n",
    re.M,
)


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
    """The Python source of UNICODE_VERSION and FORMAT_CHARACTERS."""
    lines = [f'UNICODE_VERSION = "{unicodedata.unidata_version}"']
    lines.append("FORMAT_CHARACTERS: tuple[tuple[int, int], ...] = (")
    lines += [f"    (0x{lo:04X}, 0x{hi:04X})," for lo, hi in format_ranges()]
    lines.append(")")
    return "\n".join(lines) + "\n"


def rewritten(source: str) -> str:
    """`source` (core/format_characters.py's text) with its table replaced by this Python's.

    Raises:
        ValueError: `source` does not hold the table exactly once.
    """
    found = len(_GENERATED.findall(source))
    if found != 1:
        raise ValueError(f"expected one UNICODE_VERSION/FORMAT_CHARACTERS table, found {found}")
    return _GENERATED.sub(lambda _: table(), source)


def main(argv: list[str]) -> int:
    source = MODULE.read_text(encoding="utf-8")
    new = rewritten(source)
    if new == source:
        print(f"{MODULE}: up to date (Unicode {unicodedata.unidata_version})")
        return 0
    if "--check" in argv:
        print(f"{MODULE}: stale for Unicode {unicodedata.unidata_version}", file=sys.stderr)
        return 1
    MODULE.write_text(new, encoding="utf-8")
    print(f"{MODULE}: rewritten for Unicode {unicodedata.unidata_version}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
