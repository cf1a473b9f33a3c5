"""Files Cairn writes outside the database are replaced whole or not at all, with their mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from core.atomic_file import replacing, write_atomically


def test_a_file_gets_exactly_its_mode_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o000)
    try:
        write_atomically(tmp_path / "token", "secret\n")
        write_atomically(tmp_path / "entry.desktop", "[Desktop Entry]\n", mode=0o644)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "token").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "entry.desktop").stat().st_mode) == 0o644
    assert (tmp_path / "token").read_bytes() == b"secret\n"


def test_a_failed_write_leaves_the_old_file_and_no_partial_one(tmp_path: Path) -> None:
    target = tmp_path / "settings.toml"
    write_atomically(target, "old = 1\n")

    def half_written() -> None:
        with replacing(target) as fh:
            fh.write(b"new = ")
            raise RuntimeError("the writer failed half way")

    with pytest.raises(RuntimeError):
        half_written()
    assert target.read_text() == "old = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.toml"]
    write_atomically(target, "new = 2\n")
    assert target.read_text() == "new = 2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.toml"]
