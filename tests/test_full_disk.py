"""When the disk is full: every write that cannot be made is a clear `io_error`, nothing half
written stays behind, and Cairn goes on by itself once there is room again.

A full disk is made portably with RLIMIT_FSIZE (SIGXFSZ ignored): a file cannot grow past the
limit, as on a full disk, and the write fails with an OSError (EFBIG) - SQLite's as a disk I/O
error. With a limit of 0 nothing can be written; with a small one small files still can, while
the database's write-ahead log, already larger, cannot grow. The real thing (a full tmpfs) was
run by hand: docs/health.md, "When the disk is full".
"""

from __future__ import annotations

import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.app import Cairn
from core.daemon import Runtime
from core.errors import ErrorCode, IOFault
from core.model import Caller, Scope
from core.paths import Paths
from core.requests import WriteRequest
from core.runtime import socket_path
from core.settings import Settings
from tests.conftest import ROOT, cairn_env, disk_full, open_policy
from tests.serving import RawClient, paths_for, served_in_thread, write_settings
from tests.test_protocol import assert_error

pytestmark = pytest.mark.skipif(
    not hasattr(resource, "RLIMIT_FSIZE"), reason="needs RLIMIT_FSIZE (a POSIX system)"
)


@pytest.fixture
def served(short_tmp: Path) -> Iterator[Runtime]:
    # no backup at start: it would be writing while a test fills the disk
    write_settings(short_tmp / "c", "[backup]\ninterval_hours = 0\n")
    with served_in_thread(paths_for(short_tmp / "c"), confirm_human=lambda _s: None) as runtime:
        yield runtime


def person(paths: Paths) -> RawClient:
    c = RawClient(socket_path(paths))
    assert "result" in c.request("hello", {"protocol_version": 1, "role": "human"})
    return c


def hello(paths: Paths, agent: str, **params: object) -> tuple[RawClient, dict[str, Any]]:
    c = RawClient(socket_path(paths))
    return c, c.hello(agent, **params)


def test_a_policy_change_on_a_full_disk_is_an_io_error_and_changes_nothing(
    served: Runtime,
) -> None:
    """The policy file could not be written: `internal_error` ("see the Cairn log") and a
    traceback in the log; now `io_error` naming the file, and the policy is as it was."""
    paths = served.paths
    policy_file = paths.config / "policy.toml"
    before = policy_file.read_bytes()
    c = person(paths)
    with disk_full():
        reply = c.request("policy.set", {"setting": "kinds.fact", "value": "off"})
    assert_error(reply, ErrorCode.IO, f"could not write the policy file {policy_file}: ")
    assert_error(reply, ErrorCode.IO, "past the largest size this process may write")
    assert_error(reply, ErrorCode.IO, "; the policy in effect is unchanged")
    assert reply["error"]["data"]["step"] == "write"
    assert policy_file.read_bytes() == before
    assert not [p.name for p in policy_file.parent.iterdir() if p.name.endswith(".tmp")]
    assert c.request("policy.get")["result"]["kinds"]["fact"] == "auto"
    # With room again, the same change is made, without a restart.
    assert "result" in c.request("policy.set", {"setting": "kinds.fact", "value": "off"})
    assert c.request("policy.get")["result"]["kinds"]["fact"] == "off"
    c.close()


def test_enrolling_on_a_full_disk_is_answered_and_registers_nothing(served: Runtime) -> None:
    """The token file could not be written: the hello went unanswered, the connection was
    closed (the client said Cairn had closed it) and the log held a traceback. Now the hello
    is answered `io_error`, nothing is registered, and enrolling works once there is room."""
    paths = served.paths
    with disk_full():
        c, reply = hello(paths, "newbot", enroll=True)
    tokens = paths.state / "tokens"
    assert_error(reply, ErrorCode.IO, f"could not write the token file {tokens / 'newbot.token'}")
    assert_error(reply, ErrorCode.IO, "past the largest size this process may write")
    c.close()
    assert [p.name for p in tokens.iterdir() if "newbot" in p.name] == []  # no .newbot...tmp
    p = person(paths)
    names = [a["name"] for a in p.request("agent.list")["result"]["agents"]]
    assert "newbot" not in names
    c, reply = hello(paths, "newbot", enroll=True)
    assert reply["result"]["enrolled"]["token"]
    c.close()
    p.close()


def test_a_token_whose_agent_could_not_be_registered_is_not_kept(served: Runtime) -> None:
    """The token file is written inside the transaction that registers the agent: when the
    commit then failed for a full disk, the file stayed, for a name the store never registered.
    The MCP bridge found it and connected with it, refused as a wrong token at every start -
    locked out until a person removed the file. Now a failed registration takes its token
    back, and enrolling works once there is room."""
    paths = served.paths
    tokens = paths.state / "tokens"
    wal = Path(f"{paths.database}-wal")
    limit = 64 * 1024  # room for a token file, none for the log to grow
    assert wal.stat().st_size > limit
    p = person(paths)
    with disk_full(limit):
        c, reply = hello(paths, "newbot", enroll=True)
        added = p.request("agent.add", {"name": "helper"})
    assert_error(reply, ErrorCode.IO, "could not be written")
    assert_error(added, ErrorCode.IO, "could not be written")
    c.close()
    assert sorted(f.name for f in tokens.iterdir()) == []
    c, reply = hello(paths, "newbot", enroll=True)
    token = reply["result"]["enrolled"]["token"]
    c.close()
    c, reply = hello(paths, "newbot", token=token)
    assert reply["result"]["verified"] is True
    assert "result" in p.request("agent.add", {"name": "helper"})
    c.close()
    p.close()


def test_a_setting_changed_on_a_full_disk_is_an_io_error_and_changes_nothing(
    cairn: Cairn, paths: Paths, human: Caller
) -> None:
    """The Settings window's change could not be written: a bare OSError (an internal error
    in the window); now an IOFault naming the file, and the setting is as it was."""
    with disk_full(), pytest.raises(IOFault) as raised:
        cairn.config.set(human, "backup.keep_daily", 3)
    assert raised.value.message == (
        f"could not write the settings file {paths.settings_file}: the file would grow past "
        "the largest size this process may write (a file-size limit such as ulimit -f, or the "
        "file system's); the setting is unchanged"
    )
    assert not paths.settings_file.exists()
    assert not [p for p in paths.settings_file.parent.iterdir() if p.name.endswith(".tmp")]
    assert cairn.config.current().integer("backup.keep_daily") == 7
    assert cairn.config.set(human, "backup.keep_daily", 3).integer("backup.keep_daily") == 3


def serve_on_a_full_disk(home: Path, limit: int) -> subprocess.CompletedProcess[str]:
    """`cairn serve` in a subprocess none of whose files can grow past `limit` bytes."""

    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return subprocess.run(
        [sys.executable, "-m", "core.cli", "serve"],
        cwd=ROOT,
        env=cairn_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=preexec,
        check=False,
    )


def test_starting_a_new_store_on_a_full_disk_says_so(short_tmp: Path) -> None:
    """The lock file's pid could not be written: a traceback, exit 1. Now one line naming the
    file and the free space, and the I/O exit status."""
    done = serve_on_a_full_disk(short_tmp / "new", 0)
    assert done.returncode == ErrorCode.IO.exit_status, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("cairn: cannot write the memory store's lock file ")
    assert "bytes free on its disk" in done.stderr


def test_opening_a_store_on_a_full_disk_says_so_not_restore_a_backup(short_tmp: Path) -> None:
    """SQLite's "disk I/O error" on opening was said as a damaged file: "restore a backup with
    `cairn restore`" - for a store that only needed room. Now it says the free space and asks
    whether the disk is full; once there is room, the same store opens with what it held."""
    home = short_tmp / "c"
    paths = paths_for(home)
    open_policy(paths.config)
    app = Cairn.open(paths, settings=Settings.defaults())
    stored = app.memories.write(
        Caller.human(), WriteRequest(content="the kingfisher fact", kind="fact", scope=Scope.USER)
    )
    app.close()
    assert stored.id is not None
    done = serve_on_a_full_disk(home, 16)  # the lock file's pid fits, SQLite's files cannot grow
    assert done.returncode == ErrorCode.IO.exit_status, done.stderr
    assert "Is its disk full? Free some space" in done.stderr
    assert "bytes free on its disk" in done.stderr
    assert "restore" not in done.stderr and "Traceback" not in done.stderr
    app = Cairn.open(paths, settings=Settings.defaults())
    try:
        assert app.memories.get(Caller.human(), stored.id).memory.content == "the kingfisher fact"
    finally:
        app.close()


def test_health_warns_while_the_store_cannot_be_written(cairn: Cairn) -> None:
    """Agents' writes failing for a full disk showed nowhere in the person's health but as
    requests, unless some background work failed too. Now a standing warning says so until a
    write lands again."""
    human = Caller.human()

    def write(text: str) -> None:
        cairn.memories.write(human, WriteRequest(content=text, kind="fact", scope=Scope.USER))

    write("the first fact")
    assert "store_unwritable" not in cairn.health.snapshot(human)["warnings"]
    with disk_full(), pytest.raises(IOFault):
        write("a fact for a full disk")
    warning = cairn.health.snapshot(human)["warnings"]["store_unwritable"]
    assert warning.startswith(f"the memory database {cairn.store.path} could not be written: ")
    cairn.store.writer.run(lambda tx: None)  # housekeeping with nothing to do proves nothing
    assert "store_unwritable" in cairn.health.snapshot(human)["warnings"]
    write("a fact once there is room")
    assert "store_unwritable" not in cairn.health.snapshot(human)["warnings"]


def test_a_command_that_cannot_start_cairn_on_a_full_disk_says_where_to_look(
    short_tmp: Path,
) -> None:
    """The daemon a command starts could not write its error into its log (on the full disk
    too): the command said only "Cairn could not be started (exit 1): no log". Now it says the
    log is empty and how much room its disk has."""

    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))

    env = cairn_env(short_tmp / "c")
    env.pop("CAIRN_NO_AUTOSTART", None)
    done = subprocess.run(
        [sys.executable, "-m", "core.cli", "add", "--kind", "fact", "a fact for a full disk"],
        cwd=short_tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=preexec,
        check=False,
    )
    assert done.returncode == ErrorCode.NOT_RUNNING.exit_status, done.stderr
    log = paths_for(short_tmp / "c").logs / "daemon.log"
    assert f"wrote nothing to its log {log}" in done.stderr
    assert "bytes free on its disk" in done.stderr and "Is its disk full?" in done.stderr


def test_a_failure_repeating_every_flush_does_not_flood_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Recall counts are flushed every 2 s; on a full disk each flush failed and logged a
    warning: 1,800 lines an hour into a log that is likely on the same full disk. A site's
    failure is logged when it first happens, when its error changes, and then at most every
    ten minutes with how many times it failed meanwhile; health counts every one."""
    from core.failures import BackgroundFailures

    failures = BackgroundFailures()
    full = "the memory database /d/cairn.db could not be written: database or disk is full"
    start = 1_790_000_000_000
    with caplog.at_level("WARNING", logger="core.failures"):
        for i in range(1800):  # an hour of flushes
            failures.record("usage", full, start + i * 2000)
        failures.record("usage", "disk I/O error", start + 3_600_000)
    lines = [r.getMessage() for r in caplog.records]
    assert failures.snapshot()["usage"].count == 1801
    assert lines[0] == f"background work failed at usage: {full}"
    assert 5 <= len(lines) <= 8, lines
    assert lines[1] == (
        f"background work failed at usage: {full} (300 times since 2026-09-21 14:13 UTC)"
    )
    assert lines[-1] == "background work failed at usage: disk I/O error"  # a new error: at once


def test_a_write_the_disk_refuses_names_the_database_file_and_what_to_check(
    cairn: Cairn,
) -> None:
    """An I/O error while writing the store said "the memory store could not be written: disk
    I/O error" - which file, and what to do, unsaid (the damage message beside it names both).
    Now it names the database file and says what to check."""
    db = cairn.store.path
    with disk_full(), pytest.raises(IOFault) as caught:
        cairn.memories.write(
            Caller.human(),
            WriteRequest(content="a fact for a full disk", kind="fact", scope=Scope.USER),
        )
    said = caught.value.message
    assert said.startswith(f"the memory database {db} could not be written: "), said
    assert "Is its disk full" in said and "that you may write the file and its folder" in said
    assert caught.value.data == {"path": str(db)}


def test_a_read_only_database_file_is_named_with_what_to_check(short_tmp: Path) -> None:
    """SQLite's "attempt to write a readonly database" said which file nowhere."""
    from core.db_errors import translate_db_error

    db = short_tmp / "cairn.db"
    sqlite3.connect(db).close()
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        with pytest.raises(sqlite3.OperationalError) as caught:
            conn.execute("CREATE TABLE t (x)")
    finally:
        conn.close()
    error = translate_db_error(caught.value, path=db)
    assert isinstance(error, IOFault)
    assert error.message.startswith(f"the memory database {db} could not be written: "), error
    assert "that you may write the file and its folder" in error.message
    assert error.data == {"path": str(db)}


def test_an_agent_in_a_new_folder_reads_on_a_full_disk_and_registers_it_once_there_is_room(
    served: Runtime, short_tmp: Path
) -> None:
    """A hello from a folder Cairn had never seen must register it, a write: on a full disk the
    hello answered `io_error`, and an agent starting in a new project could not even search the
    person's memories. Now the hello is served unbound to any workspace id (`workspace_id:
    null`, a `warning` naming the disk); it reads global and user memories - never another
    workspace's - and a project or session write is refused in words saying why and what to do.
    Once there is room, a new connection registers the folder and project writes land."""
    paths = served.paths
    other, fresh = short_tmp / "other", short_tmp / "fresh"
    other.mkdir()
    fresh.mkdir()
    p = person(paths)
    mine = p.request(
        "memory.write",
        {"content": "the kingfisher dives for minnows", "kind": "fact", "scope": "user"},
    )["result"]["id"]
    o, reply = hello(paths, "helper", workspace=str(other), session="s-1")
    assert "result" in reply
    for scope in ("project", "session"):
        assert "result" in o.request(
            "memory.write",
            {
                "content": f"the kingfisher nests in the bank ({scope})",
                "kind": "fact",
                "scope": scope,
            },
        )
    o.close()
    n, reply = hello(paths, "helper", session="s-1")  # no workspace: a session of its own
    assert "result" in n.request(
        "memory.write",
        {"content": "the kingfisher is blue (no folder)", "kind": "fact", "scope": "session"},
    )
    n.close()

    with disk_full():
        c, reply = hello(paths, "helper", workspace=str(fresh), session="s-1")
        result = reply["result"]
        assert result["workspace"] == str(fresh.resolve())
        assert result["workspace_id"] is None
        assert result["session"] is None  # asked for, but not bound: none to see or write
        warning = result["warning"]
        assert warning.startswith(f"the folder {fresh.resolve()} could not be registered as a ")
        assert f"the memory database {paths.database} could not be written: " in warning
        assert "it sees global and user memories" in warning
        found = c.request("memory.search", {"query": "kingfisher"})["result"]["results"]
        assert [m["id"] for m in found] == [mine]
        listed = c.request("memory.list")["result"]["items"]
        assert [m["id"] for m in listed] == [mine]
        bundle = c.request("context.build", {"query": "kingfisher"})["result"]
        assert [m["id"] for m in bundle["items"]] == [mine]
        for scope in ("project", "session"):
            refused = c.request(
                "memory.write", {"content": "the kingfisher", "kind": "fact", "scope": scope}
            )
            assert_error(
                refused,
                ErrorCode.IO,
                f"scope '{scope}' needs a workspace id for the folder {fresh.resolve()}",
            )
            assert_error(refused, ErrorCode.IO, "could not be registered as a workspace")
            assert_error(refused, ErrorCode.IO, "connect again once the database can be written")
    # With room again the connection stays as it was bound (no workspace id)...
    refused = c.request(
        "memory.write", {"content": "the kingfisher", "kind": "fact", "scope": "project"}
    )
    assert_error(refused, ErrorCode.IO, "connect again once the database can be written")
    c.close()
    # ...and a new one registers the folder, as any hello does.
    c, reply = hello(paths, "helper", workspace=str(fresh), session="s-1")
    assert reply["result"]["workspace_id"].startswith("ws_")
    assert "warning" not in reply["result"]
    stored = c.request(
        "memory.write",
        {"content": "the kingfisher perches here", "kind": "fact", "scope": "project"},
    )["result"]
    assert stored["status"] == "stored", stored
    found = c.request("memory.search", {"query": "kingfisher"})["result"]["results"]
    assert sorted(m["id"] for m in found) == sorted([mine, stored["id"]])
    c.close()
    p.close()
