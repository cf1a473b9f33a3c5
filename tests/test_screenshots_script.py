"""scripts/screenshots.py run as its own process, on a machine whose fonts draw no Chinese."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

LATIN_ONLY = Path("/usr/share/fonts/truetype/dejavu")


@pytest.mark.gui
def test_screenshots_refuse_to_draw_chinese_without_a_font_for_it(short_tmp: Path) -> None:
    """Without a CJK font (`.ci/run` installs fonts-wqy-microhei) the Chinese review queue was
    saved as a screenshot of empty boxes, and the script said nothing. It now refuses before
    taking any, naming the package to install."""
    if not LATIN_ONLY.is_dir():
        pytest.skip(f"{LATIN_ONLY} (fonts-dejavu-core) is absent")
    config = short_tmp / "fonts.conf"
    config.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n'
        f"  <dir>{LATIN_ONLY}</dir>\n  <cachedir>{short_tmp / 'fc-cache'}</cachedir>\n"
        "</fontconfig>\n",
        encoding="utf-8",
    )
    out = short_tmp / "shots"
    proc = subprocess.run(
        [sys.executable, "scripts/screenshots.py", "--out", str(out), "--only", "review-zh_CN"],
        cwd=ROOT,
        env=os.environ | {"FONTCONFIG_FILE": str(config), "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 69, (proc.stdout, proc.stderr)
    assert "fonts-wqy-microhei" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not out.exists() or not list(out.iterdir())
