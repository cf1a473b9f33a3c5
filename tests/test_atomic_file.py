"""Files Cairn writes outside the database are replaced whole or not at all, with their mode; a
write that cannot be made says which file, which step failed and why, in words to act on."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from core.atomic_file import FileNotWritten, Step, reason_for, replacing, write_atomically
from core.errors import ErrorCode, IOFault
from tests.conftest import disk_full, refusing_writes


def test_a_file_gets_exactly_its_mode_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o000)
    try:
        write_atomically(tmp_path / "token", "secret\n", what="token file")
        write_atomically(
            tmp_path / "entry.desktop", "[Desktop Entry]\n", what="autostart entry", mode=0o644
        )
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "token").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "entry.desktop").stat().st_mode) == 0o644
    assert (tmp_path / "token").read_bytes() == b"secret\n"


def test_a_failed_write_leaves_the_old_file_and_no_partial_one(tmp_path: Path) -> None:
    target = tmp_path / "settings.toml"
    write_atomically(target, "old = 1\n", what="settings file")

    def half_written() -> None:
        with replacing(target, what="settings file") as fh:
            fh.write(b"new = ")
            raise RuntimeError("the writer failed half way")

    with pytest.raises(RuntimeError):
        half_written()
    assert target.read_text() == "old = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.toml"]
    write_atomically(target, "new = 2\n", what="settings file")
    assert target.read_text() == "new = 2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.toml"]


def refused(target: Path, *, folder_mode: int | None = None) -> FileNotWritten:
    """What writing `target` (a settings file, say) raises; the caller's outcome said after."""
    with pytest.raises(FileNotWritten) as raised:
        write_atomically(
            target,
            "new = 2\n",
            what="settings file",
            folder_mode=folder_mode,
            outcome="the setting is unchanged",
        )
    error = raised.value
    assert isinstance(error, IOFault) and error.code is ErrorCode.IO
    assert error.message.startswith(f"could not write the settings file {target}: "), error
    assert error.data["path"] == str(target)
    return error


def test_a_file_the_disk_cannot_hold_is_said_and_the_old_one_kept(tmp_path: Path) -> None:
    """Until 2026-12-01 each caller said the OSError its own way ("File too large"), and one
    that forgot answered internal_error with no path."""
    target = tmp_path / "settings.toml"
    target.write_text("old = 1\n")
    with disk_full():
        error = refused(target)
    assert error.step is Step.WRITE and error.data["step"] == "write"
    assert "past the largest size this process may write" in error.message
    assert error.message.endswith("; the setting is unchanged")
    assert target.read_text() == "old = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.toml"]


def test_a_folder_that_refuses_new_files_is_permission_denied(tmp_path: Path) -> None:
    folder = tmp_path / "config"
    folder.mkdir()
    target = folder / "settings.toml"
    target.write_text("old = 1\n")
    with refusing_writes(folder):
        error = refused(target)
    assert error.step is Step.CREATE
    assert f"no new file can be made in {folder}: permission denied" in error.message
    assert target.read_text() == "old = 1\n"
    assert sorted(p.name for p in folder.iterdir()) == ["settings.toml"]


def test_a_folder_in_the_files_place_is_named(tmp_path: Path) -> None:
    target = tmp_path / "cairn.pid"
    target.mkdir()
    error = refused(target)
    assert error.step is Step.RENAME
    assert "a folder is in its place; move it away" in error.message
    assert target.is_dir() and list(target.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cairn.pid"]


def test_a_file_in_the_folders_place_is_named(tmp_path: Path) -> None:
    (tmp_path / "config").write_text("not a folder\n")
    target = tmp_path / "config" / "settings.toml"
    error = refused(target)
    assert error.step is Step.CREATE
    assert f"{tmp_path / 'config'} is a file, not a folder" in error.message
    made = refused(target, folder_mode=0o700)  # asked to make the folder: the same words
    assert made.step is Step.FOLDER
    assert f"{tmp_path / 'config'} is a file, not a folder" in made.message
    assert (tmp_path / "config").read_text() == "not a folder\n"


def test_a_missing_folder_is_made_with_its_mode_when_asked(tmp_path: Path) -> None:
    target = tmp_path / "config" / "cairn" / "settings.toml"
    error = refused(target)
    assert f"the folder {target.parent} does not exist" in error.message
    write_atomically(target, "new = 2\n", what="settings file", folder_mode=0o700)
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700
    assert target.read_text() == "new = 2\n"


def test_a_name_too_long_for_the_file_system_is_said(tmp_path: Path) -> None:
    error = refused(tmp_path / ("n" * 300))
    assert "the name is too long for the file system" in error.message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.ENOSPC, "the disk is full ("),
        (errno.EACCES, "permission denied"),
        (errno.EPERM, "permission denied"),
        (errno.EROFS, "the file system is read-only"),
        (errno.ENAMETOOLONG, "the name is too long for the file system"),
        (errno.EIO, "the disk reported an input/output error"),
        (errno.EFBIG, "the file would grow past the largest size this process may write"),
    ],
)
def test_each_reason_is_said_in_words_to_act_on(tmp_path: Path, code: int, words: str) -> None:
    """Failures no test can make portably (a full disk, a read-only file system, a quota) are
    said from their errno alike."""
    said = reason_for(OSError(code, os.strerror(code)), tmp_path)
    assert said.startswith(words), said


def test_a_full_disk_says_its_free_space_and_a_quota_is_named(tmp_path: Path) -> None:
    assert "bytes free on its disk" in reason_for(OSError(errno.ENOSPC, "No space"), tmp_path)
    if hasattr(errno, "EDQUOT"):
        quota = reason_for(OSError(errno.EDQUOT, "Disk quota exceeded"), tmp_path)
        assert quota.startswith("your disk quota is used up"), quota
    busy = os.strerror(errno.ETXTBSY)  # any other reason: the system's words, mid-sentence
    odd = reason_for(OSError(errno.ETXTBSY, busy), tmp_path)
    assert odd == busy[:1].lower() + busy[1:]
