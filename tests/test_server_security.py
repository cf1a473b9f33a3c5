"""Server security against a real `cairn serve`: runtime dir, peers, instances, TCP, tokens."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.app import Cairn
from core.daemon import Runtime
from core.errors import ErrorCode
from core.model import Caller
from core.runtime import probe
from tests.serving import (
    Daemon,
    RawClient,
    paths_for,
    running_daemon,
    served_in_thread,
    start_daemon,
    wait_for,
    write_settings,
)

NOBODY = 65534
LOOPBACK = {"127.0.0.1", "::1"}


# -- helpers ------------------------------------------------------------------------------------


def cairn_home(short_tmp: Path) -> Path:
    return short_tmp / "c"


def run_dir(home: Path) -> Path:
    return home / "run"


def sock_path(home: Path) -> Path:
    return run_dir(home) / "cairn.sock"


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def register_agent(home: Path, name: str) -> str:
    """Register `name` with the real service (as a person, in-process) and return its token."""
    cairn = Cairn.open(paths_for(home))
    try:
        _agent, token = cairn.agents.add(Caller.human(), name)
    finally:
        cairn.close()
    return token


def finish(daemon: Daemon, timeout: float = 15.0) -> tuple[int, str]:
    """Wait for a daemon that should refuse to start: (exit status, stderr)."""
    try:
        _out, err = daemon.proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        daemon.stop()
        pytest.fail(f"the daemon was still running after {timeout} s instead of refusing to start")
    finally:
        daemon.stop()
    return daemon.proc.returncode, err


def assert_refused(reply: dict[str, Any], code: ErrorCode, needle: str = "") -> None:
    assert "result" not in reply, reply
    assert reply["error"]["code"] == code.rpc_code, reply
    assert reply["error"]["data"]["error"] == code.label, reply
    assert needle.lower() in reply["error"]["message"].lower(), reply


def closed_by_server(c: RawClient, timeout: float = 5.0) -> bool:
    """True when the server closes the connection within `timeout` and sends nothing more;
    False when it is still open then (unlike RawClient.closed, a timeout is not a close)."""
    c.sock.settimeout(timeout)
    try:
        return c.file.readline() == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def need_second_uid() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to act as a second user (uid 65534)")
    try:
        pwd.getpwuid(NOBODY)
    except KeyError:
        pytest.skip("this machine has no uid 65534 to act as a second user")


class TcpClient(RawClient):
    """RawClient over loopback TCP."""

    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 10.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.file = self.sock.makefile("rb")
        self._ids = 0

    def read_all(self, timeout: float = 10.0) -> bytes:
        """Everything the server sends until it closes the connection."""
        self.sock.settimeout(timeout)
        chunks = []
        while chunk := self.sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def tcp_accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


# A person's connection: the server accepts role=human only from a process at a terminal, so
# this child runs with a pseudo-terminal as its standard input and output and reports on stderr.
PERSON = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
f = s.makefile("rb")
out = []
for i, (method, params) in enumerate(
    [("hello", {"protocol_version": 1, "role": "human"}), (sys.argv[2], {})], start=1
):
    s.sendall((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
               + "\n").encode())
    out.append(json.loads(f.readline()))
f.close()
s.close()
sys.stderr.write(json.dumps(out))
"""

# Another user: drops to uid/gid 65534, then connects and says hello; prints what came back.
STRANGER = r"""
import json, os, socket, sys
os.setgroups([])
os.setgid(65534)
os.setuid(65534)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
try:
    s.connect(sys.argv[1])
except OSError as e:
    outcome = "connect failed: %r" % e
else:
    try:
        s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"hello",'
                  b'"params":{"protocol_version":1,"agent":"intruder"}}\n')
        data = s.recv(65536)
        outcome = "closed" if data == b"" else "answered: %r" % data
    except (BrokenPipeError, ConnectionResetError):
        outcome = "closed"
    except TimeoutError:
        outcome = "still open after 10 s"
s.close()
print(json.dumps({"uid": os.getuid(), "outcome": outcome}))
"""


def person_call(socket_file: Path, method: str) -> dict[str, Any]:
    """`method` called on a person's connection from a process sitting at a (pseudo-)terminal."""
    master, slave = os.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-c", PERSON, str(socket_file), method],
            stdin=slave,
            stdout=slave,
            stderr=subprocess.PIPE,
            text=True,
            timeout=30,
        )
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    hello, answer = json.loads(done.stderr)
    assert hello.get("result", {}).get("role") == "human", hello
    assert "result" in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


# -- 1. the runtime directory and the socket are private whatever the umask --------------------


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077], ids=["000", "022", "077"])
def test_runtime_dir_is_0700_and_socket_0600_whatever_the_umask(
    short_tmp: Path, umask: int
) -> None:
    home = cairn_home(short_tmp)
    with running_daemon(home, umask=umask) as daemon:
        assert daemon.socket == sock_path(home)
        run = os.lstat(run_dir(home))
        sock = os.lstat(sock_path(home))
        assert stat.S_ISDIR(run.st_mode)
        assert f"{stat.S_IMODE(run.st_mode):04o}" == "0700"
        assert run.st_uid == os.getuid()
        assert stat.S_ISSOCK(sock.st_mode)
        assert f"{stat.S_IMODE(sock.st_mode):04o}" == "0600"
        assert sock.st_uid == os.getuid()
        c = RawClient(daemon.socket)
        try:
            assert "result" in c.hello("umask-check")
        finally:
            c.close()


def test_a_cairn_home_cairn_makes_is_owner_only_under_umask_000(short_tmp: Path) -> None:
    """CAIRN_HOME (and the folder above it) that Cairn makes under umask 000: they were 0777,
    anyone's to rename or fill, while the folders in them were 0700 (until 2026-12-01). Each
    folder Cairn makes is 0700 now; a folder the person made keeps the mode they gave it."""
    made = short_tmp / "new" / "cairn"
    theirs = short_tmp / "theirs"
    theirs.mkdir()
    theirs.chmod(0o755)
    for home in (made, theirs):
        with running_daemon(home, umask=0o000):
            pass
    modes = {
        str(folder.relative_to(short_tmp)): f"{stat.S_IMODE(folder.stat().st_mode):04o}"
        for folder in (short_tmp / "new", *sorted(p for p in made.rglob("*") if p.is_dir()))
    }
    assert modes == dict.fromkeys(modes, "0700") and "new/cairn/data" in modes, modes
    assert f"{stat.S_IMODE(made.stat().st_mode):04o}" == "0700"
    assert f"{stat.S_IMODE(theirs.stat().st_mode):04o}" == "0755"
    assert (theirs / "data" / "cairn.db").exists()


def test_pid_file_is_0600_whatever_the_umask_and_never_follows_a_link(short_tmp: Path) -> None:
    """The pid file is owner-only and replaces a link at its path instead of writing through
    it. Until 2026-11-30 it was written with the umask's mode (0666 under umask 000), through
    whatever link was already at its path."""
    home = cairn_home(short_tmp)
    run_dir(home).mkdir(parents=True)
    run_dir(home).chmod(0o700)
    target = short_tmp / "elsewhere.txt"
    target.write_text("untouched\n", encoding="utf-8")
    pid_file = run_dir(home) / "cairn.pid"
    pid_file.symlink_to(target)
    with running_daemon(home, umask=0o000) as daemon:
        # the pid file is written just after the socket answers
        wait_for(lambda: str(daemon.proc.pid) in pid_file.read_text(encoding="utf-8"))
        st = os.lstat(pid_file)
        assert stat.S_ISREG(st.st_mode), "the pid file is still a link"
        assert f"{stat.S_IMODE(st.st_mode):04o}" == "0600"
        assert pid_file.read_text(encoding="utf-8").strip() == str(daemon.proc.pid)
        assert target.read_text(encoding="utf-8") == "untouched\n"
        c = RawClient(daemon.socket)
        try:
            assert "result" in c.hello("pid-check")
        finally:
            c.close()


# -- 2. an unsafe runtime directory refuses the start -------------------------------------------


@pytest.mark.parametrize("problem", ["symlink", "open", "foreign"])
def test_unsafe_runtime_dir_refuses_start(short_tmp: Path, problem: str) -> None:
    home = cairn_home(short_tmp)
    home.mkdir()
    run = run_dir(home)
    elsewhere = short_tmp / "elsewhere"
    if problem == "symlink":
        elsewhere.mkdir(mode=0o700)
        run.symlink_to(elsewhere, target_is_directory=True)
        needle = "symbolic link"
    elif problem == "open":
        run.mkdir()
        run.chmod(0o755)
        needle = "open to group or others (mode 0755)"
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root to create a directory owned by another user")
        run.mkdir(mode=0o700)
        os.chown(run, NOBODY, NOBODY)
        needle = f"belongs to uid {NOBODY}"

    status, err = finish(start_daemon(home, wait=False))

    assert status == ErrorCode.RUNTIME_UNSAFE.exit_status == 77, err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("cairn: "), err
    assert needle in lines[0], err
    assert str(run) in lines[0], err
    assert not os.path.lexists(sock_path(home))
    assert not os.path.lexists(elsewhere / "cairn.sock")
    assert not probe(sock_path(home))


# -- 3. another uid is closed out before any request is read ------------------------------------


def test_connection_from_another_uid_is_closed_unanswered(short_tmp: Path) -> None:
    need_second_uid()
    home = cairn_home(short_tmp)
    with running_daemon(home) as daemon:
        # Loosen everything the filesystem would otherwise stop the stranger with, so that only
        # the server's peer-credential check is left between them and the store.
        short_tmp.chmod(0o711)
        home.chmod(0o711)
        run_dir(home).chmod(0o755)
        daemon.socket.chmod(0o777)

        stranger = subprocess.run(
            [sys.executable, "-c", STRANGER, str(daemon.socket)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert stranger.returncode == 0, stranger.stderr
        report = json.loads(stranger.stdout)
        assert report["uid"] == NOBODY
        assert report["outcome"] == "closed", report

        health = person_call(daemon.socket, "health.get")
        assert health["connections"]["refused_peer_uid"] >= 1, health["connections"]
        assert daemon.proc.poll() is None, "the daemon must keep serving"


# -- 4. a second instance leaves the first alone ------------------------------------------------


def test_a_stop_signal_as_the_socket_appears_stops_cairn_cleanly(short_tmp: Path) -> None:
    """The signal handlers came after the socket: a SIGTERM in between killed the process
    (exit 143) and left its socket and pid file behind."""
    for attempt in range(4):
        daemon = start_daemon(short_tmp / f"sig{attempt}", wait=False)
        deadline = time.monotonic() + 30
        while not daemon.socket.exists() and daemon.proc.poll() is None:
            assert time.monotonic() < deadline, "the socket never appeared"
            time.sleep(0.001)
        daemon.proc.send_signal(signal.SIGTERM)
        assert daemon.proc.wait(30) == 0, daemon.proc.stderr.read() if daemon.proc.stderr else ""
        assert not daemon.socket.exists()
        assert not (daemon.paths.runtime / "cairn.pid").exists()
        daemon.stop()


def test_stopping_waits_for_a_housekeeping_round_in_progress(
    short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A round runs on a pool thread, which cancelling its task does not stop: a Cairn stopped
    during one closed the store under it - a segfault in SQLite, seen once in CI."""
    finished: list[float] = []
    real = Runtime._housekeeping_round

    def slow_round(cairn: Any, janitor: Any, live: frozenset[str], stopping: Any) -> None:
        time.sleep(0.5)  # still running when the test stops Cairn, at once
        real(cairn, janitor, live, stopping)
        finished.append(time.monotonic())

    monkeypatch.setattr(Runtime, "_housekeeping_round", staticmethod(slow_round))
    with served_in_thread(paths_for(short_tmp / "hk")):
        pass
    stopped = time.monotonic()
    assert finished and finished[0] <= stopped


def test_second_instance_exits_already_running_and_first_keeps_serving(short_tmp: Path) -> None:
    home = cairn_home(short_tmp)
    with running_daemon(home) as first:
        inode = os.lstat(first.socket).st_ino

        status, err = finish(start_daemon(home, wait=False))

        assert status == ErrorCode.ALREADY_RUNNING.exit_status == 69, err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert "already running" in lines[0].lower(), err
        assert os.lstat(first.socket).st_ino == inode
        c = RawClient(first.socket)
        try:
            reply = c.hello("after-second")
        finally:
            c.close()
        assert reply["result"]["agent"] == "after-second", reply
        assert first.proc.poll() is None


# -- 5. a stale socket file is cleaned up ---------------------------------------------------------


def test_stale_socket_is_removed_and_daemon_starts(short_tmp: Path) -> None:
    home = cairn_home(short_tmp)
    run_dir(home).mkdir(parents=True)
    run_dir(home).chmod(0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(sock_path(home)))
    stale.close()
    assert stat.S_ISSOCK(os.lstat(sock_path(home)).st_mode)
    assert not probe(sock_path(home))

    with running_daemon(home) as daemon:
        c = RawClient(daemon.socket)
        try:
            reply = c.hello("after-stale")
        finally:
            c.close()
        assert reply["result"]["agent"] == "after-stale", reply
        assert mode_of(daemon.socket) == 0o600


def test_non_socket_file_at_socket_path_is_refused_clearly(short_tmp: Path) -> None:
    home = cairn_home(short_tmp)
    run_dir(home).mkdir(parents=True)
    run_dir(home).chmod(0o700)
    sock_path(home).write_text("not a socket\n", encoding="utf-8")

    status, err = finish(start_daemon(home, wait=False))

    assert sock_path(home).read_text(encoding="utf-8") == "not a socket\n"
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("cairn: ") and str(sock_path(home)) in last, err
    assert status not in (0, 1), err


# -- 6. loopback TCP ------------------------------------------------------------------------------


@dataclass
class TcpCairn:
    daemon: Daemon
    port: int
    token: str


@pytest.fixture
def tcp_cairn(short_tmp: Path) -> Iterator[TcpCairn]:
    home = cairn_home(short_tmp)
    port = free_port()
    write_settings(home, f"[server]\ntcp_port = {port}\nhello_timeout_s = 1\n")
    token = register_agent(home, "tcp-agent")
    with running_daemon(home) as daemon:
        assert wait_for(lambda: tcp_accepts("127.0.0.1", port)), "TCP never started"
        yield TcpCairn(daemon, port, token)


def non_loopback_addresses() -> list[str]:
    if shutil.which("ip") is None:
        return []
    out = subprocess.run(
        ["ip", "-o", "addr", "show", "scope", "global"], capture_output=True, text=True
    ).stdout
    addresses = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) > 3 and fields[2] in ("inet", "inet6"):
            addresses.append(fields[3].split("/")[0])
    return addresses


def test_tcp_listens_on_loopback_only(tcp_cairn: TcpCairn) -> None:
    port = tcp_cairn.port
    if shutil.which("ss") is not None:
        out = subprocess.run(
            ["ss", "-Hltnp", f"sport = :{port}"], capture_output=True, text=True, check=True
        ).stdout
        local = [line.split()[3].rsplit(":", 1)[0].strip("[]") for line in out.splitlines()]
        assert "127.0.0.1" in local, out
        assert set(local) <= LOOPBACK, out
        assert f"pid={tcp_cairn.daemon.proc.pid}," in out, out
    others = non_loopback_addresses()
    if not others:
        pytest.skip("this machine has no non-loopback address to try")
    for address in others:
        assert not tcp_accepts(address, port), f"TCP port {port} answers on {address}"


@pytest.mark.parametrize("agent", ["tcp-agent", "declared-agent"], ids=["registered", "declared"])
def test_tcp_hello_without_token_is_refused(tcp_cairn: TcpCairn, agent: str) -> None:
    c = TcpClient(tcp_cairn.port)
    try:
        assert_refused(c.hello(agent), ErrorCode.UNAUTHENTICATED, "token")
        assert closed_by_server(c)
    finally:
        c.close()


def test_tcp_silence_is_closed_after_hello_timeout(tcp_cairn: TcpCairn) -> None:
    c = TcpClient(tcp_cairn.port)
    try:
        opened = time.monotonic()
        assert closed_by_server(c, 5), "a silent TCP connection was still open after 5 s"
        assert 0.8 <= time.monotonic() - opened < 4
    finally:
        c.close()


def test_tcp_partial_frame_is_closed_after_hello_timeout(tcp_cairn: TcpCairn) -> None:
    c = TcpClient(tcp_cairn.port)
    try:
        c.send(b'{"jsonrpc": "2.0", ')
        opened = time.monotonic()
        closed = closed_by_server(c, 4)
        waited = time.monotonic() - opened
        assert closed, (
            f"a TCP connection that never finished its hello was open after {waited:.1f} s"
        )
    finally:
        c.close()


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nOrigin: http://evil.example\r\n"
        b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    ],
    ids=["get", "post-with-origin"],
)
def test_tcp_http_request_gets_403_and_close(tcp_cairn: TcpCairn, request_bytes: bytes) -> None:
    c = TcpClient(tcp_cairn.port)
    try:
        c.send(request_bytes)
        answer = c.read_all(timeout=5)
    finally:
        c.close()
    assert answer.startswith(b"HTTP/1.1 403"), answer
    assert b"jsonrpc" not in answer


def test_tcp_port_in_use_is_refused_clearly_without_leftovers(short_tmp: Path) -> None:
    home = cairn_home(short_tmp)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        write_settings(home, f"[server]\ntcp_port = {port}\n")
        status, err = finish(start_daemon(home, wait=False))
    assert not os.path.lexists(sock_path(home))
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("cairn: ") and str(port) in last, err
    assert status not in (0, 1), err


def test_tcp_hello_with_valid_token_works(tcp_cairn: TcpCairn) -> None:
    c = TcpClient(tcp_cairn.port)
    try:
        hello = c.hello("tcp-agent", token=tcp_cairn.token)
        assert hello["result"]["agent"] == "tcp-agent", hello
        assert hello["result"]["verified"] is True, hello
        health = c.request("health.get")
        assert health["result"]["agent"]["verified"] is True, health
    finally:
        c.close()


def test_tcp_wrong_token_learns_nothing_about_workspace_or_session(
    tcp_cairn: TcpCairn, short_tmp: Path
) -> None:
    """A TCP hello with a wrong token gets the same answer whatever workspace or session it
    carries. Until 2026-11-30 the workspace path (and the session id) were checked before the
    token, so a wrong token told an existing private folder ("the token does not belong to this
    agent") from a missing one ("... is not an existing directory")."""
    existing = short_tmp / "private" / "project-x"
    existing.mkdir(parents=True)
    a_file = short_tmp / "private" / "notes.txt"
    a_file.write_text("x\n", encoding="utf-8")
    variants: list[dict[str, Any]] = [
        {},
        {"workspace": str(existing)},
        {"workspace": str(short_tmp / "private" / "project-y")},
        {"workspace": str(a_file)},
        {"workspace": "relative/path"},
        {"session": "s\x1b"},
        {"session": "x" * 10_000},
    ]
    answers = []
    for agent in ("tcp-agent", "unknown-agent"):
        for extra in variants:
            c = TcpClient(tcp_cairn.port)
            try:
                reply = c.hello(agent, token="cairn_wrong", **extra)
            finally:
                c.close()
            assert_refused(reply, ErrorCode.UNAUTHENTICATED, "cairn agent list")
            answers.append(json.dumps(reply["error"], sort_keys=True))
    assert len(set(answers)) == 1, answers
    # the right token still gets the workspace checked
    c = TcpClient(tcp_cairn.port)
    try:
        reply = c.hello(
            "tcp-agent", token=tcp_cairn.token, workspace=str(short_tmp / "private" / "nope")
        )
    finally:
        c.close()
    assert_refused(reply, ErrorCode.INVALID_PARAMS, "workspace")


def test_silent_tcp_connections_do_not_take_the_unix_sockets_slots(short_tmp: Path) -> None:
    """Many TCP connections that never say hello leave the Unix socket served. Until
    2026-11-30 one `server.max_connections` count covered both, so anyone on the machine could
    hold every slot with silent TCP connections and the owner's agents on the Unix socket were
    refused "too many connections"."""
    home = cairn_home(short_tmp)
    port = free_port()
    write_settings(
        home,
        f"[server]\ntcp_port = {port}\nmax_connections = 8\nmax_tcp_unauthenticated = 12\n",
    )
    held: list[socket.socket] = []
    try:
        with running_daemon(home) as daemon:
            assert wait_for(lambda: tcp_accepts("127.0.0.1", port)), "TCP never started"
            held.extend(socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(12))
            # every silent one counted: one more is refused (a probe let in leaves at once)
            assert wait_for(lambda: _tcp_refused(port)), "the silent connections never counted"
            c = RawClient(daemon.socket)
            try:
                reply = c.hello("owner-agent")
            finally:
                c.close()
            assert reply.get("result", {}).get("agent") == "owner-agent", reply
    finally:
        for s in held:
            s.close()


def _tcp_refused(port: int) -> bool:
    """Whether a new TCP connection saying hello is refused as one too many."""
    t = TcpClient(port, timeout=5)
    try:
        answer = t.hello("probe")
    except (OSError, ValueError):
        return False
    finally:
        t.close()
    message: object = answer.get("error", {}).get("message")
    return message == "too many connections"


def test_tcp_connections_saying_hello_never_serve_beyond_max_connections(short_tmp: Path) -> None:
    """TCP connections admitted while silent (they count against their own cap) could all say
    hello and be served: five connections with `max_connections = 3`, and the Unix socket then
    refused "too many connections" (until 2026-11-30). A hello that would go beyond the limit is
    refused; the limit holds for both transports together."""
    home = cairn_home(short_tmp)
    port = free_port()
    write_settings(
        home,
        f"[server]\ntcp_port = {port}\nmax_connections = 3\nmax_tcp_unauthenticated = 4\n",
    )
    token = register_agent(home, "tcp-agent")
    with running_daemon(home) as daemon:
        assert wait_for(lambda: tcp_accepts("127.0.0.1", port)), "TCP never started"
        unix = RawClient(daemon.socket)
        tcps = [TcpClient(port, timeout=5) for _ in range(4)]
        try:
            assert "result" in unix.hello("owner-agent")
            answers = [t.hello("tcp-agent", token=token) for t in tcps]
            served = [a for a in answers if "result" in a]
            refused = [a["error"] for a in answers if "error" in a]
            assert len(served) == 2, answers  # 1 + 2 = max_connections
            assert [e["data"]["error"] for e in refused] == ["rate_limited"] * 2, refused
            assert all(e["message"] == "too many connections" for e in refused)
        finally:
            unix.close()
            for t in tcps:
                t.close()


# -- 7. agent tokens on the Unix socket -----------------------------------------------------------


@dataclass
class UnixCairn:
    daemon: Daemon
    token: str


@pytest.fixture
def unix_cairn(short_tmp: Path) -> Iterator[UnixCairn]:
    home = cairn_home(short_tmp)
    token = register_agent(home, "known-agent")
    with running_daemon(home) as daemon:
        yield UnixCairn(daemon, token)


@pytest.mark.parametrize(
    ("agent", "token"),
    [("known-agent", "cairn_not-the-token"), ("unknown-agent", "cairn_made-up")],
    ids=["registered-name", "unknown-name"],
)
def test_wrong_token_is_refused(unix_cairn: UnixCairn, agent: str, token: str) -> None:
    c = RawClient(unix_cairn.daemon.socket)
    try:
        # the same words for any wrong pair, saying what to check (it said nothing more)
        assert_refused(c.hello(agent, token=token), ErrorCode.UNAUTHENTICATED, "cairn agent list")
        assert closed_by_server(c)
    finally:
        c.close()


def test_declared_name_without_token_connects_unverified(unix_cairn: UnixCairn) -> None:
    c = RawClient(unix_cairn.daemon.socket)
    try:
        hello = c.hello("just-declared")
        assert hello["result"]["agent"] == "just-declared", hello
        assert hello["result"]["verified"] is False, hello
        health = c.request("health.get")
        assert health["result"]["agent"]["name"] == "just-declared", health
        assert health["result"]["agent"]["verified"] is False, health
    finally:
        c.close()


def test_registered_name_without_its_token_is_refused(unix_cairn: UnixCairn) -> None:
    c = RawClient(unix_cairn.daemon.socket)
    try:
        assert_refused(c.hello("known-agent"), ErrorCode.UNAUTHENTICATED, "registered")
        assert closed_by_server(c)
    finally:
        c.close()
    ok = RawClient(unix_cairn.daemon.socket)
    try:
        hello = ok.hello("known-agent", token=unix_cairn.token)
    finally:
        ok.close()
    assert hello["result"]["verified"] is True, hello


def test_require_tokens_refuses_tokenless_hello_on_unix_socket(short_tmp: Path) -> None:
    home = cairn_home(short_tmp)
    write_settings(home, "[security]\nrequire_tokens = true\n")
    token = register_agent(home, "known-agent")
    with running_daemon(home) as daemon:
        c = RawClient(daemon.socket)
        try:
            assert_refused(c.hello("free-agent"), ErrorCode.UNAUTHENTICATED, "token")
            assert closed_by_server(c)
        finally:
            c.close()
        ok = RawClient(daemon.socket)
        try:
            hello = ok.hello("known-agent", token=token)
        finally:
            ok.close()
        assert hello["result"]["verified"] is True, hello
