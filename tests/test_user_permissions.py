"""What a person who is not root meets: folders they may not write or look into, a runtime folder
of another user, an XDG_RUNTIME_DIR that is not theirs. Each is one line and an exit status, never
a traceback, and nothing is lost.

The suite runs as root here and in CI, and modes do not stop root. So `cairn` runs through
`as_a_user`: as root, `setpriv` drops the capabilities that let root past a folder's mode
(CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER), and the kernel then checks every folder as
it does for a user; as a user, it runs as it is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.app import Cairn
from core.paths import resolve_paths
from tests.conftest import ROOT, cairn_env
from tests.serving import paths_for, running_daemon
from tests.test_cli_serving import at_terminal

NOBODY = 65534


@pytest.fixture(scope="module")
def as_a_user() -> tuple[str, ...]:
    """The launcher that makes `cairn` meet folder modes as a user does (see the module)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    launcher = (setpriv or "setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner")
    if setpriv is None or subprocess.run([*launcher, "true"], capture_output=True).returncode:
        pytest.skip(
            "root is stopped by a folder's mode only without CAP_DAC_OVERRIDE, and setpriv "
            "(util-linux) cannot drop it here"
        )
    return (*launcher, "--")


def cairn(
    launcher: tuple[str, ...], env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*launcher, sys.executable, "-m", "core.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_line(out: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command printed (it printed no traceback, and nothing else)."""
    assert "Traceback" not in out.stderr, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cairn: "), out.stderr
    return lines[0]


@pytest.fixture
def read_only(short_tmp: Path) -> Iterator[Path]:
    """A folder the user may look into but not write (mode 0555, as a home that is not theirs)."""
    folder = short_tmp / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        yield folder
    finally:
        folder.chmod(0o755)


@pytest.fixture
def shut(short_tmp: Path) -> Iterator[Path]:
    """A folder the user may not even look into (mode 0000, as another user's home)."""
    folder = short_tmp / "shut"
    folder.mkdir()
    folder.chmod(0o000)
    try:
        yield folder
    finally:
        folder.chmod(0o755)


def without_cairn_home(home: Path) -> dict[str, str]:
    """The environment of a person with this HOME and no CAIRN_HOME: platformdirs' folders."""
    env = cairn_env(home)
    del env["CAIRN_HOME"]
    env["HOME"] = str(home)
    return env


COMMANDS = (
    ("add", "The staging database runs on port 5433", "--kind", "fact"),
    ("search", "staging"),
    ("list",),
    ("serve",),
)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_cairn_home_in_a_folder_the_user_cannot_write_is_one_line(
    as_a_user: tuple[str, ...], read_only: Path, args: tuple[str, ...]
) -> None:
    """CAIRN_HOME in a folder the user may not write: every command that needs the store died
    with a PermissionError traceback (mkdir), `cairn serve` and the daemon a command starts
    alike. Exit 74 now, naming the folder."""
    out = cairn(as_a_user, cairn_env(read_only / "cairn"), *args)
    line = one_line(out)
    assert out.returncode == 74, out.stderr
    assert f"cannot create the folder {read_only / 'cairn'}" in line, line
    assert "Permission denied" in line and "CAIRN_HOME" in line, line
    assert os.listdir(read_only) == []


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_home_the_user_cannot_write_is_one_line(
    as_a_user: tuple[str, ...], read_only: Path, args: tuple[str, ...]
) -> None:
    """A home folder that is not writable (no CAIRN_HOME: platformdirs' ~/.local, ~/.config):
    a traceback, as above."""
    out = cairn(as_a_user, without_cairn_home(read_only), *args)
    line = one_line(out)
    assert out.returncode == 74, out.stderr
    assert f"cannot create the folder {read_only / '.local'}" in line, line
    assert os.listdir(read_only) == []


def test_a_cairn_home_under_a_folder_the_user_cannot_look_into(
    as_a_user: tuple[str, ...], shut: Path
) -> None:
    """CAIRN_HOME below a folder the user may not enter: even `cairn paths` and `cairn status`
    died with a traceback (looking for a file in the way). `paths` says where the files would be;
    the rest say why they cannot be there."""
    env = cairn_env(shut / "cairn")
    shown = cairn(as_a_user, env, "paths")
    assert shown.returncode == 0, shown.stderr
    assert f"database  {shut / 'cairn' / 'data' / 'cairn.db'}" in shown.stdout
    for args in (("status",), COMMANDS[0], ("serve",)):
        out = cairn(as_a_user, env, *args)
        line = one_line(out)
        assert out.returncode in (74, 77), (args, out.stderr)
        assert str(shut) in line and "Permission denied" in line, (args, line)


def test_a_settings_file_the_user_may_not_read_is_said_in_words(
    as_a_user: tuple[str, ...], short_tmp: Path
) -> None:
    """settings.toml made unreadable (mode 000, as one a Cairn run with sudo leaves): the line
    said "[Errno 13] Permission denied: '...'" (until 2026-12-01). Now it says why in words, and
    the file is as it was."""
    home = short_tmp / "c"
    settings = home / "config" / "settings.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text("[backup]\ninterval_hours = 12\n", encoding="utf-8")
    settings.chmod(0o000)
    out = cairn(as_a_user, cairn_env(home), "serve")
    line = one_line(out)
    assert out.returncode == 78, out.stderr
    assert line == f"cairn: cannot read settings file {settings}: permission denied", line
    assert settings.read_text(encoding="utf-8") == "[backup]\ninterval_hours = 12\n"


@pytest.mark.parametrize("where", ["out", "in"])
def test_an_archive_path_the_user_cannot_look_into_is_one_line(
    as_a_user: tuple[str, ...], shut: Path, short_tmp: Path, where: str
) -> None:
    """`cairn export --out` or `cairn import` of a file in a folder the user may not enter died
    with a PermissionError traceback (looking whether it is a folder); an import asked to be
    confirmed first. Now one line before any question: exit 65 for the archive to write (as for
    any path that cannot be checked), 74 for one to read (as for a file that cannot be read)."""
    home = short_tmp / "c"
    Cairn.open(paths_for(home)).close()  # a store to export
    args = (
        ("export", "--out", str(shut / "x.zip"))
        if where == "out"
        else ("import", str(shut / "x.zip"))
    )
    status, shown = at_terminal(home, *args, typed="import", launcher=as_a_user)
    assert "Traceback" not in shown and "to confirm" not in shown, shown
    said = "cannot be checked" if where == "out" else "could not be read"
    assert status == (65 if where == "out" else 74), shown
    assert f"cairn: {shut / 'x.zip'} {said}: Permission denied" in shown, shown


def test_an_import_of_a_file_the_user_cannot_read_asks_nothing(
    as_a_user: tuple[str, ...], short_tmp: Path
) -> None:
    """An unreadable file to import was found unreadable only after the person typed 'import'."""
    locked = short_tmp / "memories.jsonl"
    locked.write_text('{"content": "x", "kind": "fact", "scope": "user"}\n', encoding="utf-8")
    locked.chmod(0o000)
    status, shown = at_terminal(short_tmp / "c", "import", str(locked), typed="import",
                                launcher=as_a_user)  # fmt: skip
    assert "to confirm" not in shown and "Traceback" not in shown, shown
    assert status == 74, shown
    assert f"{locked} could not be read: Permission denied" in shown, shown
    assert not paths_for(short_tmp / "c").database.exists()


def test_a_runtime_folder_of_another_user_is_one_line(
    as_a_user: tuple[str, ...], short_tmp: Path
) -> None:
    """The runtime folder (the socket's) owned by another user, owner-only: `cairn serve` said
    so, but every client command died with a PermissionError traceback on connecting."""
    if os.geteuid() != 0:
        pytest.skip("only root can give a folder to another user")
    home = short_tmp / "c"
    runtime = paths_for(home).runtime
    runtime.mkdir(parents=True)
    runtime.chmod(0o700)
    os.chown(runtime, NOBODY, NOBODY)
    for args in (("status",), COMMANDS[0], ("list",), ("serve",)):
        out = cairn(as_a_user, cairn_env(home), *args)
        line = one_line(out)
        assert out.returncode == 77, (args, out.stderr)
        assert f"the runtime directory {runtime} belongs to uid {NOBODY}" in line, (args, line)
    assert not paths_for(home).database.exists()


def test_an_xdg_runtime_dir_that_is_not_the_users_is_not_used(
    short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """XDG_RUNTIME_DIR naming a folder others may write (or, after `su`, another user's): the
    socket went to platformdirs' fallback, /tmp/runtime-<uid> - a shared folder another user can
    make first - and every command printed platformdirs' warning with its source line. It goes
    under the state folder, as with no XDG_RUNTIME_DIR, and nothing is printed."""
    home = short_tmp / "h"
    monkeypatch.delenv("CAIRN_HOME")
    monkeypatch.setenv("HOME", str(home))
    open_to_all = short_tmp / "xdg"
    open_to_all.mkdir()
    open_to_all.chmod(0o777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(open_to_all))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paths = resolve_paths()
    assert paths.runtime == home / ".local" / "state" / "cairn" / "run"
    own = short_tmp / "own"
    own.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(own))
    assert resolve_paths().runtime == own / "cairn"
    if os.geteuid() == 0:
        own.chmod(0o700)
        os.chown(own, NOBODY, NOBODY)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert resolve_paths().runtime == home / ".local" / "state" / "cairn" / "run"


def test_files_left_by_another_user_are_one_line(
    as_a_user: tuple[str, ...], short_tmp: Path
) -> None:
    """Files a Cairn run with sudo leaves behind, which the user may not read or write: the log
    a command's daemon writes to, an agent's token file. Each was a PermissionError traceback;
    now one line, exit 74, naming the file."""
    home = short_tmp / "c"
    paths = paths_for(home)
    Cairn.open(paths).close()
    log = paths.logs / "daemon.log"
    paths.logs.mkdir(mode=0o700)
    log.write_text("", encoding="utf-8")
    log.chmod(0o000)
    out = cairn(as_a_user, cairn_env(home), *COMMANDS[0])
    line = one_line(out)
    assert out.returncode == 74, out.stderr
    assert line.startswith(f"cairn: cannot open Cairn's log {log}: Permission denied"), line
    log.chmod(0o600)
    token = paths.state / "tokens" / "cli.token"
    token.parent.mkdir(mode=0o700)
    token.write_text("cairn_not-a-real-token\n", encoding="utf-8")
    token.chmod(0o000)
    with running_daemon(home):
        out = cairn(as_a_user, cairn_env(home), *COMMANDS[0])
    line = one_line(out)
    assert out.returncode == 74, out.stderr
    assert line.startswith(f"cairn: the token file {token} cannot be read: Permission denied"), line


def test_a_database_of_another_user_says_whose_it_is(
    as_a_user: tuple[str, ...], short_tmp: Path
) -> None:
    """cairn.db of another user (left by a Cairn run with sudo): Cairn said to chmod u+w it,
    which only its owner may do. It says whose it is and how to give it back."""
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    home = short_tmp / "c"
    paths = paths_for(home)
    Cairn.open(paths).close()
    os.chown(paths.database, NOBODY, NOBODY)
    out = cairn(as_a_user, cairn_env(home), "serve")
    line = one_line(out)
    assert out.returncode == 74, out.stderr
    assert f"its file {paths.database} belongs to uid {NOBODY}, not to you (uid 0)" in line, line
    assert f"`sudo chown -R 0 {paths.data}`" in line and "chmod" not in line, line
