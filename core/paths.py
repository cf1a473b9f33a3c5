"""Where Cairn keeps its files: platformdirs locations, or everything under `CAIRN_HOME`."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from core.errors import ConfigInvalid, IOFault

APP_NAME = "cairn"
HOME_ENV = "CAIRN_HOME"


@dataclass(frozen=True)
class Paths:
    """The four per-user directories Cairn uses, and the files inside them.

    data     the memory database and its backups (the user's data: never deleted by uninstall)
    config   settings.toml and the capture-policy file (human-editable)
    state    logs, rotated audit files, token files when no keychain exists
    runtime  the agent socket and the pid file of the running instance (short path, owner-only);
             the store's lock is in data, next to the database
    """

    data: Path
    config: Path
    state: Path
    runtime: Path

    @property
    def database(self) -> Path:
        return self.data / "cairn.db"

    @property
    def backups(self) -> Path:
        return self.data / "backups"

    @property
    def settings_file(self) -> Path:
        return self.config / "settings.toml"

    @property
    def audit_archive(self) -> Path:
        return self.state / "audit"

    @property
    def logs(self) -> Path:
        return self.state / "logs"

    @property
    def store_lock(self) -> Path:
        return self.data / "cairn.lock"

    def as_dict(self) -> dict[str, str]:
        return {
            "data": str(self.data),
            "config": str(self.config),
            "state": str(self.state),
            "runtime": str(self.runtime),
            "database": str(self.database),
            "settings": str(self.settings_file),
        }


def cairn_home(environ: Mapping[str, str] | None = None) -> Path | None:
    """The absolute directory `CAIRN_HOME` names (`~` expanded, a relative one against the
    working directory), or None when it is unset or empty (as for the XDG variables).

    Raises:
        ConfigInvalid: it is set but blank (only spaces or tabs): a value that came out empty in
            a script, which until 2026-11-30 opened the person's own store instead.
    """
    env = os.environ if environ is None else environ
    raw = env.get(HOME_ENV, "")
    home = raw.strip()
    if raw and not home:
        raise ConfigInvalid(
            f"{HOME_ENV} is set but blank ({raw!r}); name a folder, or unset it for your own "
            "directories"
        )
    return Path(os.path.abspath(os.path.expanduser(home))) if home else None


def _refuse_files_in_the_way(root: Path, paths: Paths) -> None:
    """A file where CAIRN_HOME, a folder above it, or one of Cairn's folders in it should be
    made every command die with a traceback (NotADirectoryError, FileExistsError). A folder the
    user may not look into tells nothing (until 2026-12-01 a traceback for every command,
    `cairn paths` too): making Cairn's folders says why they cannot be there."""
    with contextlib.suppress(PermissionError):
        above = root
        while not above.exists() and above.parent != above:
            above = above.parent
        if not above.is_dir():
            where = "" if above == root else f" (a folder of {HOME_ENV}={root} would go under it)"
            raise ConfigInvalid(
                f"{above} is a file, not a folder{where}; point {HOME_ENV} at a folder "
                "(Cairn creates one that does not exist)"
            )
        for folder in (paths.data, paths.config, paths.state, paths.runtime):
            if folder.exists() and not folder.is_dir():
                # in the way, as everywhere (until 2026-12-02 config_invalid, exit 78, here)
                raise IOFault(
                    f"{folder} is a file, not a folder; Cairn keeps its files in that folder - "
                    "move the file away",
                    data={"path": str(folder)},
                )


def _own_private_folder(path: str) -> bool:
    """True when `path` is an absolute path to a folder (not a link) of this user that no one
    else may write: one where Cairn's runtime folder cannot be made or replaced by another."""
    if not os.path.isabs(path):
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def resolve_paths(environ: Mapping[str, str] | None = None) -> Paths:
    """Resolve Cairn's directories for the current user.

    When `CAIRN_HOME` is set, every directory lives under it (`data`, `config`, `state`, `run`),
    so a test or a second, independent Cairn can run side by side with the user's own.

    Raises:
        ConfigInvalid: `CAIRN_HOME` names a file, or is set but blank.
        IOFault: a file is where one of its four folders goes.
    """
    env = os.environ if environ is None else environ
    root = cairn_home(env)
    if root is not None:
        paths = Paths(
            data=root / "data", config=root / "config", state=root / "state", runtime=root / "run"
        )
        _refuse_files_in_the_way(root, paths)
        return paths
    state = Path(platformdirs.user_state_dir(APP_NAME, appauthor=False))
    if sys.platform.startswith("linux"):
        # Without an XDG_RUNTIME_DIR of the user's own, platformdirs falls back to
        # /tmp/runtime-<uid>, a shared directory another user could create first (and warns on
        # every command); a directory under the user's own state directory cannot be. Until
        # 2026-12-01 that held only when the variable was unset, not when it named another
        # user's folder (kept by `su`) or one open to others.
        xdg = env.get("XDG_RUNTIME_DIR", "")
        runtime = Path(xdg) / APP_NAME if _own_private_folder(xdg) else state / "run"
    else:
        runtime = Path(platformdirs.user_runtime_dir(APP_NAME, appauthor=False))
    return Paths(
        data=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
        config=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
        state=state,
        runtime=runtime,
    )


def free_space(folder: Path) -> str:
    """How much room the disk holding `folder` has left, said for a message."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return "its free space could not be read"
    return f"{free:,} bytes free on its disk"


def file_identity(path: Path | str) -> tuple[int, int] | None:
    """What tells the file or folder at `path` (a link followed) from another put at the same
    path since: its device and inode; None when there is none (or it cannot be looked at)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def make_folders(path: Path, mode: int = 0o700) -> None:
    """Make the folder `path` and the missing folders above it, each new one with `mode` (by
    default 0700, as XDG asks of a folder an application makes) less the umask: a CAIRN_HOME
    Cairn made was 0777 under umask 000 until 2026-12-01, as `mkdir -p` makes the folders above
    the last. A folder that is there already is left as it is.

    Raises:
        OSError: as `os.mkdir` raises it; FileExistsError when a file is at `path`.
    """
    try:
        os.mkdir(path, mode)
    except FileNotFoundError:
        if path.parent == path:
            raise
        make_folders(path.parent, mode)
        with contextlib.suppress(FileExistsError):  # made meanwhile: checked below
            os.mkdir(path, mode)
    except FileExistsError:
        pass
    if not path.is_dir():
        raise FileExistsError(errno.EEXIST, "a file is in the place of a folder", str(path))


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) owner-only; each folder made is 0700.

    Raises:
        IOFault: a folder could not be made (one the user may not write or look into, a
            read-only or full disk): until 2026-12-01 a traceback for every command.
    """
    try:
        make_folders(path.parent)
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
    except OSError as e:
        raise folder_refused(path, e) from e
    return path


def folder_refused(path: Path, error: OSError) -> IOFault:
    """The error for a folder of Cairn's that could not be made: which folder refused, why, and
    what to do."""
    where = error.filename or path
    return IOFault(
        f"cannot create the folder {where}: {error.strerror or error}; Cairn keeps its files in "
        f"{path} - make that writable for you, or set {HOME_ENV} to a folder you can write",
        data={"path": str(path)},
    )
