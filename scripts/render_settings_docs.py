"""Rewrite the settings reference table in docs/settings.md from `core.knobs.KNOBS`.

.venv/bin/python scripts/render_settings_docs.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.knobs import render_reference

START, END = "<!-- settings-reference:start -->", "<!-- settings-reference:end -->"
DOC = Path(__file__).resolve().parent.parent / "docs" / "settings.md"


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    block = f"{START}\n{render_reference()}{END}"
    new, count = re.subn(
        re.escape(START) + ".*?" + re.escape(END), lambda _: block, text, flags=re.S
    )
    if count != 1:
        print(f"{DOC}: markers not found", file=sys.stderr)
        return 1
    DOC.write_text(new, encoding="utf-8")
    print(f"rewrote the settings reference in {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
