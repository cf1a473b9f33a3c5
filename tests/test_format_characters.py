"""The one table of format characters (`core/format_characters.py`) is this Python's Unicode, and
scripts/format_table.py rewrites it when it is not."""

from __future__ import annotations

import importlib
import subprocess
import sys
import unicodedata
from types import ModuleType

from core.format_characters import FORMAT_CHARACTERS, LATER_FORMAT_CHARACTERS, UNICODE_VERSION
from tests.conftest import ROOT

MODULE = ROOT / "core" / "format_characters.py"


def _format_table() -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module("format_table")
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def test_the_table_is_this_pythons_unicode() -> None:
    """FORMAT_CHARACTERS is written out (working it out at import cost every command 13 ms); a
    Python with another Unicode database must not leave it stale, for the scanner's folding and
    `visible` alike."""
    assert (UNICODE_VERSION, list(FORMAT_CHARACTERS)) == (
        unicodedata.unidata_version,
        _format_table().format_ranges(),
    ), (
        f"Unicode {unicodedata.unidata_version} has other format characters (Cf) than "
        "core/format_characters.py: rewrite it with `.venv/bin/python scripts/format_table.py`"
    )


def test_the_script_rewrites_a_stale_table_and_nothing_else() -> None:
    """What a Unicode upgrade looks like from here: a table of another version, with a range
    more and one fewer. The script puts back this Python's table and version and leaves every
    comment and the other tables as they were; `--check` says the real file is up to date."""
    source = MODULE.read_text(encoding="utf-8")
    stale = source.replace(f'UNICODE_VERSION = "{UNICODE_VERSION}"', 'UNICODE_VERSION = "13.0.0"')
    stale = stale.replace("    (0x0890, 0x0891),\n", "").replace(
        "    (0x180E, 0x180E),\n", "    (0x180E, 0x180E),\n    (0x1900, 0x1901),\n"
    )
    assert stale != source
    assert _format_table().rewritten(stale) == source
    check = subprocess.run(
        [sys.executable, "scripts/format_table.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert check.returncode == 0, check.stderr
    assert "up to date" in check.stdout
    assert MODULE.read_text(encoding="utf-8") == source


def test_later_format_characters_are_not_yet_in_this_unicode() -> None:
    """LATER_FORMAT_CHARACTERS holds the format characters `visible` marks ahead of this
    Python's Unicode; once an upgrade puts one in FORMAT_CHARACTERS its entry says something
    false and must go."""
    for lo, hi in LATER_FORMAT_CHARACTERS:
        for cp in range(lo, hi + 1):
            assert unicodedata.category(chr(cp)) == "Cn", (
                f"U+{cp:04X} is a format character of Unicode {unicodedata.unidata_version}: "
                "delete it from LATER_FORMAT_CHARACTERS in core/format_characters.py"
            )
