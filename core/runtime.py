"""The runtime directory and the agent socket: safe creation, the checks that refuse an unsafe
directory, the one-instance probe, stale-socket cleanup, and who is on the other end.

The directory is created 0700 at creation time (with the umask set for the call, not a chmod
afterwards); the socket is bound under a umask that makes it 0600 whatever the user's umask is.
Start is refused when the directory is a symlink, belongs to another user, or is open to group or
others. A connection from another uid is closed before any request is read (SO_PEERCRED on Linux,
LOCAL_PEERCRED on macOS).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
import struct
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.errors import AlreadyRunning, IOFault, RuntimeUnsafe
from core.paths import Paths, folder_refused, make_folders

SOCKET_NAME = "cairn.sock"
# Read once into a plain variable so every platform branch is type-checked, not only this one.
PLATFORM: str = sys.platform
# sockaddr_un.sun_path is 108 bytes on Linux and 104 on macOS, including the final NUL.
MAX_SOCKET_PATH = 103 if PLATFORM == "darwin" else 107


def socket_path(paths: Paths) -> Path:
    """The agent socket. Raises RuntimeUnsafe when the path is too long for a Unix socket."""
    path = paths.runtime / SOCKET_NAME
    if len(os.fsencode(str(path))) > MAX_SOCKET_PATH:
        raise RuntimeUnsafe(
            f"the socket path {path} is longer than the {MAX_SOCKET_PATH} bytes a Unix socket "
            "allows; set CAIRN_HOME (or XDG_RUNTIME_DIR) to a shorter directory",
            data={"path": str(path)},
        )
    return path


@contextlib.contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def check_private_dir(path: Path, what: str = "runtime directory") -> None:
    """Refuse a private directory that is a symlink, foreign, or open to group/others.

    Raises:
        RuntimeUnsafe: it is a symbolic link, another user's, or open to group or others.
        IOFault: a file is in its place, which the person moves away (until 2026-12-01 this
            was `runtime_unsafe`, exit 77, "exists and is not a directory").
    """
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise RuntimeUnsafe(
            f"the {what} {path} is a symbolic link; Cairn will not keep private files behind a "
            "link it does not own - remove the link",
            data={"path": str(path)},
        )
    if not stat.S_ISDIR(st.st_mode):
        raise IOFault(
            f"the {what} {path} is a file, not a folder; Cairn keeps its files in that folder - "
            "move the file away",
            data={"path": str(path)},
        )
    if st.st_uid != os.getuid():
        raise RuntimeUnsafe(
            f"the {what} {path} belongs to uid {st.st_uid}, not to you "
            f"(uid {os.getuid()}); remove it or point CAIRN_HOME elsewhere",
            data={"path": str(path)},
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        raise RuntimeUnsafe(
            f"the {what} {path} is open to group or others (mode {mode:04o}); "
            f"run `chmod 700 {path}` or remove it",
            data={"path": str(path), "mode": f"{mode:04o}"},
        )


def prepare_runtime_dir(path: Path) -> None:
    """Create the runtime directory 0700 if missing (parents with usual modes), then check it.

    Raises:
        IOFault: it could not be made (a folder the user may not write), or a file is in its
            place.
        RuntimeUnsafe: see `check_private_dir`.
    """
    try:
        make_folders(path.parent)
        with _umask(0o077), contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
    except OSError as e:
        raise folder_refused(path, e) from e
    check_private_dir(path)


def socket_refused(path: Path, error: OSError) -> RuntimeUnsafe:
    """Why the socket at `path` refused this user (EACCES): its folder is another user's, or
    open to others, when that is why (`check_private_dir`), else the socket itself is not the
    user's. Until 2026-12-01 every client command died with a PermissionError traceback."""
    try:
        check_private_dir(path.parent)
    except RuntimeUnsafe as e:
        return e
    except OSError as e:  # a folder above it the user may not look into
        error = e
    return RuntimeUnsafe(
        f"cannot reach the socket {path}: {error.strerror or error}; it is not yours - point "
        "CAIRN_HOME (or XDG_RUNTIME_DIR) at a folder of your own",
        data={"path": str(path)},
    )


def probe(path: Path, timeout: float = 1.0) -> bool:
    """True when a live server listens on the socket at `path` (one too busy to accept - its
    queue of waiting connections full - included: it is alive, and its socket is not stale).

    Raises:
        RuntimeUnsafe: the socket refuses this user (`socket_refused`).
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        return False
    except BlockingIOError:
        return True  # EAGAIN: the listen queue is full (until 2026-11-30 this raised)
    except PermissionError as e:
        raise socket_refused(path, e) from e
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTSOCK):
            return False
        raise
    finally:
        sock.close()
    return True


def refuse_if_serving(path: Path, pid_file: Path) -> None:
    """Raise AlreadyRunning, naming the pid, when a live server answers at `path`."""
    if probe(path):
        holder = pid_file.read_text(encoding="utf-8").strip() if pid_file.exists() else "?"
        raise AlreadyRunning(
            f"Cairn is already running (pid {holder}) and serving {path}",
            data={"pid": holder, "socket": str(path)},
        )


def claim_socket_path(path: Path, pid_file: Path) -> None:
    """Make sure no live Cairn uses `path`; remove a stale socket left by a dead one. Call it
    while holding the store's lock.

    Raises:
        AlreadyRunning: a live server answers there (it is never unlinked).
        RuntimeUnsafe: something other than a socket sits at the path.
    """
    refuse_if_serving(path, pid_file)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise RuntimeUnsafe(
            f"{path} exists and is not a socket; Cairn leaves it alone: move it away and "
            "start again",
            data={"path": str(path)},
        )
    os.unlink(path)


def bind_unix(path: Path) -> socket.socket:
    """A listening socket at `path`, mode 0600 whatever the umask."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with _umask(0o177):
            sock.bind(str(path))
        os.chmod(path, 0o600)  # belt and braces: the umask above already gave 0600
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


@dataclass(frozen=True)
class Peer:
    pid: int | None
    uid: int
    gid: int | None


def peer_credentials(sock: socket.socket) -> Peer | None:
    """The uid (and pid) of the process on the other end of a Unix socket, or None if unknown."""
    if PLATFORM.startswith("linux"):
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid, uid, gid = struct.unpack("3i", raw)
        return Peer(pid, uid, gid)
    if PLATFORM == "darwin":  # pragma: no cover - exercised on macOS
        sol_local, local_peercred, local_peerpid = 0, 0x001, 0x002
        raw = sock.getsockopt(sol_local, local_peercred, struct.calcsize("iih16i"))
        _version, uid, _ngroups, *groups = struct.unpack("iih16i", raw)
        try:
            peer_pid: int | None = sock.getsockopt(sol_local, local_peerpid)
        except OSError:
            peer_pid = None  # older macOS: no pid, so no person's connection without the tray
        return Peer(peer_pid, uid, groups[0] if groups else None)
    return None


def socket_peer(path: str | Path, *, timeout_s: float) -> Peer | None:
    """The credentials of the process listening on the Unix socket at `path` - from a
    connection made and closed at once, never a pid read from a file - or None when the system
    does not say (`peer_credentials`).

    Raises:
        BlockingIOError: its queue of waiting connections is full (it is busy or stuck: alive).
        OSError: nothing listens there (a socket file left by a process that died refuses the
            connection), or it did not answer within `timeout_s` seconds.
    """
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(str(path))
        return peer_credentials(sock)


def has_terminal(pid: int) -> bool:
    """True when the process's standard input and output are both terminals."""
    if PLATFORM.startswith("linux"):
        try:
            targets = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in (0, 1)]
        except OSError:
            return False
        return all(t.startswith(("/dev/pts/", "/dev/tty")) for t in targets)
    out = _ps(pid, "tty=")  # pragma: no cover - other POSIX systems
    return bool(out) and out not in ("?", "??")


@dataclass(frozen=True)
class Process:
    """A process as a person would recognise it: its command line and its parent's."""

    pid: int
    command: str
    parent_pid: int | None
    parent_command: str | None


def describe_process(pid: int, *, width: int = 2000) -> Process:
    """The command line of `pid` and of its parent, each as one line with runs of whitespace
    made one space, cut to `width` characters ("?" when the system does not say)."""

    def command_of(p: int) -> str:
        if PLATFORM.startswith("linux"):
            try:
                raw = Path(f"/proc/{p}/cmdline").read_bytes()
            except OSError:
                return "?"
            text = " ".join(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)
        else:  # pragma: no cover - other POSIX systems
            text = _ps(p, "command=")
        return _cut(text or "?", width)

    parent: int | None = None
    if PLATFORM.startswith("linux"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat_line = Path(f"/proc/{pid}/stat").read_text()
            parent = int(stat_line.rsplit(")", 1)[1].split()[1])
    else:  # pragma: no cover - other POSIX systems
        with contextlib.suppress(ValueError):
            parent = int(_ps(pid, "ppid="))
    return Process(
        pid, command_of(pid), parent, command_of(parent) if parent and parent > 1 else None
    )


def _ps(pid: int, field: str) -> str:  # pragma: no cover - other POSIX systems
    """One field of `ps` for `pid` ("" when `ps` cannot say)."""
    try:
        return subprocess.run(
            ["ps", "-o", field, "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=2,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _cut(text: str, width: int) -> str:
    """`text` as one line: whatever is not printable (line breaks, tabs, direction marks) a
    space, each run of spaces one (padding cannot push words onto a line of their own where
    the text is shown), cut to `width` characters with "…" in the middle - the program at the
    start, its arguments, which say what it asks for, at the end (until 2026-12-02 the end was
    cut, and padding before "review adopt ..." hid what a program asked the person to allow)."""
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if len(text) <= width:
        return text
    head = (width - 1) // 3
    tail = width - 1 - head
    return text[:head] + "…" + text[-tail:]
