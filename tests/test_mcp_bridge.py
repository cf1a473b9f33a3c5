"""The bridge's link to Cairn through what a person does meanwhile and what goes wrong: an agent
added again with a new token, a Cairn that stops answering, roots that change mid-question."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientRequestContext
from mcp.types import CallToolResult, ListRootsResult, Root
from pydantic import FileUrl

from core import mcp_stdio, mcp_tools
from core.client import Client
from core.daemon import Runtime
from core.keychain import open_token_store
from core.mcp_bridge import Bridge
from core.runtime import bind_unix, prepare_runtime_dir, socket_path
from tests.conftest import ROOT, cairn_env, disk_full
from tests.serving import paths_for, running_daemon, served_in_thread, stop_cairns_of
from tests.test_mcp import Roots, bridge, call, data, dirs, person, run, text


@pytest.fixture
def served(short_tmp: Path) -> Iterator[Runtime]:
    """The real Runtime (store, server, socket) on a thread; a person's connection is confirmed
    as the tray would."""
    with served_in_thread(paths_for(short_tmp / "c"), confirm_human=lambda _s: None) as runtime:
        yield runtime


def test_a_running_bridge_works_on_after_its_agent_is_revoked_and_added_again(
    served: Runtime, short_tmp: Path
) -> None:
    """Revoking an agent and adding it again is how a person gives it a new token; the running
    bridge kept its connection proven with the old one and failed every call "agent 'helper'
    is revoked" until it was restarted. It now reconnects once with the token stored now."""
    home = short_tmp / "c"
    (proj,) = dirs(short_tmp, "proj")

    async def main() -> None:
        async with bridge(home, "--agent", "helper", "--workspace", str(proj)) as s:
            first = data(
                await call(
                    s, "memory_write", content="the first memory", kind="fact", scope="project"
                )
            )
            p = person(served.paths)
            assert "result" in p.request("agent.revoke", {"name": "helper"})
            revoked = await call(s, "memory_search", query="first memory")
            assert revoked.is_error and text(revoked).startswith("agent_revoked:"), text(revoked)
            assert "result" in p.request("agent.add", {"name": "helper"})
            p.close()
            found = data(await call(s, "memory_search", query="first memory"))
            assert [m["id"] for m in found["results"]] == [first["id"]]
            second = data(
                await call(
                    s, "memory_write", content="the second memory", kind="fact", scope="project"
                )
            )
            got = data(await call(s, "memory_get", id=second["id"]))
            assert got["agent"] == "helper" and got["author_tier"] == "explicit"  # verified

    run(main)


def test_a_bridge_whose_folder_could_not_be_registered_registers_it_once_there_is_room(
    served: Runtime, short_tmp: Path
) -> None:
    """On a full disk the bridge's hello from a folder Cairn had never seen is served without a
    workspace id: searches work, a project write is refused (connect again once there is
    room). The bridge does that itself: while its connection has no workspace id it connects
    again before each call, so once there is room the folder is registered and the write
    lands - the agent cannot reconnect the bridge by itself."""
    home = short_tmp / "c"
    (fresh,) = dirs(short_tmp, "fresh")
    p = person(served.paths)
    assert "result" in p.request("agent.add", {"name": "helper"})  # no token file to write later
    mine = p.request(
        "memory.write",
        {"content": "the kingfisher dives for minnows", "kind": "fact", "scope": "user"},
    )["result"]["id"]
    p.close()

    async def main() -> None:
        async with bridge(home, "--agent", "helper", "--workspace", str(fresh)) as s:
            with disk_full():
                found = data(await call(s, "memory_search", query="kingfisher"))
                refused = await call(
                    s,
                    "memory_write",
                    content="the kingfisher perches",
                    kind="fact",
                    scope="project",
                )
            assert [m["id"] for m in found["results"]] == [mine]
            assert refused.is_error and text(refused).startswith("io_error:"), text(refused)
            assert "connect again once the database can be written" in text(refused)
            stored = data(
                await call(
                    s,
                    "memory_write",
                    content="the kingfisher perches",
                    kind="fact",
                    scope="project",
                )
            )
            assert stored["status"] == "stored", stored

    run(main)


def test_a_cairn_that_stops_answering_is_a_tool_error_naming_the_timeout(short_tmp: Path) -> None:
    """A daemon that stopped answering (SIGSTOP): a read failed after twice the timeout with
    "Error executing tool memory_search" and a TimeoutError traceback in the bridge's log (the
    retry was outside the try), and a write said "not_running: Cairn closed the connection" of a
    Cairn that was running. Both are now a tool error saying Cairn did not answer in time, and a
    write that it may or may not have been carried out."""
    home = short_tmp / "d"
    (proj,) = dirs(short_tmp, "proj")
    with running_daemon(home) as daemon:
        link = Bridge(daemon.paths, agent="helper", workspace=str(proj), timeout=1.0)
        write = {"content": "written before Cairn froze", "kind": "fact", "scope": "project"}
        said: dict[str, CallToolResult] = {}

        async def main() -> None:
            stored = await link.invoke("memory.write", write, mcp_tools.render_write)
            assert not stored.is_error, text(stored)
            daemon.proc.send_signal(signal.SIGSTOP)
            try:
                said["read"] = await link.invoke(
                    "memory.search", {"query": "froze"}, mcp_tools.render_search
                )
                said["write"] = await link.invoke(
                    "memory.write",
                    write | {"content": "written while frozen"},
                    mcp_tools.render_write,
                )
            finally:
                daemon.proc.send_signal(signal.SIGCONT)
            after = await link.invoke("memory.search", {"query": "froze"}, mcp_tools.render_search)
            assert not after.is_error, text(after)  # the next call connects again

        run(main)
        link.link.close()
    read, write_said = said["read"], said["write"]
    assert read.is_error and text(read).startswith("not_running: Cairn did not answer within 1 s")
    assert "CAIRN_NO_AUTOSTART" not in text(read)
    assert write_said.is_error and "did not answer within 1 s" in text(write_said)
    assert "may or may not have been carried out" in text(write_said)
    assert write_said.structured_content is not None
    assert write_said.structured_content["data"] == {"timeout_s": 1.0}


class SlowRoots(Roots):
    """A client whose roots change while the bridge waits for its first answer about them."""

    def __init__(self, first: Path) -> None:
        super().__init__(first)
        self.calls = 0
        self.asked = anyio.Event()
        self.answer = anyio.Event()

    async def __call__(self, context: ClientRequestContext) -> ListRootsResult:
        self.calls += 1
        snapshot = list(self.dirs)  # the roots when asked
        if self.calls == 1:
            self.asked.set()
            await self.answer.wait()
        return ListRootsResult(roots=[Root(uri=FileUrl(d.as_uri()), name=d.name) for d in snapshot])


def test_roots_that_change_while_the_bridge_asks_for_them_rebind_the_next_call(
    served: Runtime, short_tmp: Path
) -> None:
    """A roots/list_changed that arrived while the bridge awaited the client's roots was lost:
    the bridge marked the roots fresh after the answer came, over the change, and stayed bound
    to the old folder. The next call asks again and lands in the new one."""
    home = short_tmp / "c"
    first, second = dirs(short_tmp, "first", "second")
    roots = SlowRoots(first)

    async def main() -> None:
        async with bridge(home, roots=roots, client="Race Client") as s:

            async def change_roots() -> None:
                await roots.asked.wait()
                roots.dirs = [second]
                with warnings.catch_warnings():  # roots are deprecated in the 2026-07-28 spec
                    warnings.simplefilter("ignore")
                    await s.send_roots_list_changed()
                roots.answer.set()

            write = {"kind": "fact", "scope": "project"}
            async with anyio.create_task_group() as tg:
                tg.start_soon(change_roots)
                written.append(data(await call(s, "memory_write", content="first", **write)))
            written.append(data(await call(s, "memory_write", content="after", **write)))
            assert roots.calls == 2, "the change was lost: the roots were not asked again"

    written: list[dict[str, Any]] = []
    run(main)
    p = person(served.paths)
    bound = [p.request("memory.get", {"id": w["id"]})["result"]["workspace_id"] for w in written]
    p.close()
    folders = []
    for folder in (first, second):
        probe = Client.connect(served.paths, agent="probe", workspace=str(folder), autostart=False)
        folders.append(probe.hello["workspace_id"])
        probe.close()
    assert bound == folders


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def test_the_bridge_exits_at_once_when_its_client_goes_away_mid_call(short_tmp: Path) -> None:
    """The agent host went away (the bridge's stdin and stdout closed) while a tool call waited
    on a Cairn that had stopped answering: the bridge stayed on for the whole 30 s answer
    timeout, a process with nobody to answer, before it exited. It exits at once now, with
    status 0 and no traceback. (A client that only closes stdin still reads: the bridge then
    answers what it read - see the tests of the end of input below.)"""
    home = short_tmp / "d"
    (proj,) = dirs(short_tmp, "proj")
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
    hello["clientInfo"] = {"name": "host", "version": "1"}
    search = {"name": "memory_search", "arguments": {"query": "ledger"}}
    with running_daemon(home) as daemon:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "core.cli",
                "mcp",
                "--agent",
                "helper",
                "--workspace",
                str(proj),
            ],
            cwd=ROOT,
            env=cairn_env(home),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(
                _line({"jsonrpc": "2.0", "id": 1, "method": "initialize"} | {"params": hello})
            )
            proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            proc.stdin.write(
                _line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": search})
            )
            proc.stdin.flush()
            assert b'"id":1' in proc.stdout.readline()
            assert b'"id":2' in proc.stdout.readline()  # connected: Cairn answered once
            daemon.proc.send_signal(signal.SIGSTOP)
            try:
                proc.stdin.write(
                    _line({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": search})
                )
                proc.stdin.close()  # the host went away: both its ends of the pipes close
                proc.stdout.close()
                closed = time.monotonic()
                try:
                    status: int | None = proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    status = None  # still running 20 s after its client went away
                took = time.monotonic() - closed
            finally:
                daemon.proc.send_signal(signal.SIGCONT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.stderr is not None
        log = proc.stderr.read().decode()
        proc.stdout.close()
        proc.stderr.close()
    assert status == 0, log
    assert took < 5, f"the bridge took {took:.1f} s to exit\n{log}"
    assert "Traceback" not in log, log


def test_the_bridge_exits_at_once_when_its_client_goes_away_while_it_connects(
    short_tmp: Path,
) -> None:
    """The agent host went away (the bridge's stdin and stdout closed) while the bridge was
    still saying hello to a stuck Cairn - a process that took the connection and never
    answered: the bridge stayed on for the whole 30 s answer timeout before it exited
    (`Link.abort` woke only a connection already made). It exits at once now, with status 0
    and no traceback."""
    home = short_tmp / "d"
    (proj,) = dirs(short_tmp, "proj")
    paths = paths_for(home)
    prepare_runtime_dir(paths.runtime)
    stuck = bind_unix(socket_path(paths))  # listens (the kernel takes connections), never reads
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
    hello["clientInfo"] = {"name": "host", "version": "1"}
    search = {"name": "memory_search", "arguments": {"query": "ledger"}}
    proc = subprocess.Popen(
        [sys.executable, "-m", "core.cli", "mcp", "--agent", "helper", "--workspace", str(proj)],
        cwd=ROOT,
        env=cairn_env(home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(
            _line({"jsonrpc": "2.0", "id": 1, "method": "initialize"} | {"params": hello})
        )
        proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write(
            _line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": search})
        )
        proc.stdin.flush()
        assert b'"id":1' in proc.stdout.readline()
        # The bridge's hello is on its way: the stuck Cairn has a connection waiting.
        stuck.settimeout(20)
        taken, _ = stuck.accept()
        proc.stdin.close()  # the host went away: both its ends of the pipes close
        proc.stdout.close()
        closed = time.monotonic()
        try:
            status: int | None = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            status = None  # still running 20 s after its client went away
        took = time.monotonic() - closed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        stuck.close()
    log = proc.stderr.read().decode()
    proc.stdout.close()
    proc.stderr.close()
    taken.close()
    assert status == 0, log
    assert took < 5, f"the bridge took {took:.1f} s to exit\n{log}"
    assert "Traceback" not in log, log


# -- the end of the bridge's input ---------------------------------------------------------------

HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "script", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _tool(request_id: int, tool: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _piped(home: Path, messages: list[bytes], *args: str) -> tuple[int, list[dict[str, Any]], str]:
    """`cairn mcp` fed `messages` on a standard input closed right after them, as a script that
    pipes into it does, and read to the end of its output: its exit status, every message it
    wrote and its log."""
    done = subprocess.run(
        [sys.executable, "-m", "core.cli", "mcp", *args],
        input=b"".join(messages),
        capture_output=True,
        cwd=ROOT,
        env=cairn_env(home),
        timeout=90,
    )
    said = [json.loads(line) for line in done.stdout.decode().splitlines()]
    return done.returncode, said, done.stderr.decode()


def _answers(said: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    answers: dict[Any, dict[str, Any]] = {}
    for message in said:
        assert message["id"] not in answers, f"id {message['id']} answered twice: {said}"
        answers[message["id"]] = message
    return answers


@pytest.mark.parametrize("tool", ["honours", "ignores"])
def test_a_call_cairn_never_answers_does_not_hold_the_bridge_past_its_bound(tool: str) -> None:
    """The end of input waits for the answers still owed, but not for good: past the answer
    timeout (30 s in `cairn mcp`, 0.5 s here) the calls still waiting are cut off. A call that
    then fails is answered with its error at once; one that never returns is given up after
    the grace for such answers (`GRACE`) - either way the bridge ends, exit 0."""
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    call["params"] = {"name": "wait_for_cairn", "arguments": {}}
    done = subprocess.run(
        [sys.executable, "-m", "tests.mcp_unanswered", tool, "0.5"],
        input=_line(HELLO) + _line(INITIALIZED) + _line(call),
        capture_output=True,
        cwd=ROOT,
        timeout=60,  # a bound that does not hold ends here
    )
    log = done.stderr.decode()
    assert done.returncode == 0, log
    answers = _answers([json.loads(line) for line in done.stdout.decode().splitlines()])
    assert set(answers) == {1, 2}, log
    answer = answers[2]
    assert answer.get("error") or answer["result"]["isError"], answer
    assert "cut off: the bridge's input ended and Cairn did not answer within 0.5 s" in log
    took = float(log.rsplit("ended after ", 1)[1].split(" s")[0])
    bound = 0.5 + (mcp_stdio.GRACE if tool == "ignores" else 0)
    assert bound <= took + 0.05 and took < bound + 2, log


def test_a_write_whose_input_ends_at_once_is_answered_when_the_bridge_starts_cairn(
    short_tmp: Path,
) -> None:
    """A script wrote initialize, initialized and a `memory_write`, then closed the bridge's
    input, with no Cairn running: the MCP SDK ended the session at the end of input, while the
    bridge was still starting Cairn, and the write was answered `Connection closed` (or not at
    all) - though it may have been carried out. The bridge now answers every request it read
    before it exits: the write's answer comes, and the memory is in the store."""
    home = short_tmp / "h"
    (proj,) = dirs(short_tmp, "proj")
    paths = paths_for(home)
    write = _tool(
        2, "memory_write", content="the ledger closes at 18:00", kind="fact", scope="project"
    )
    try:
        status, said, log = _piped(
            home,
            [_line(HELLO), _line(INITIALIZED), _line(write)],
            "--agent",
            "helper",
            "--workspace",
            str(proj),
        )
        answers = _answers(said)
        assert status == 0, log
        assert set(answers) == {1, 2}, f"{said}\n{log}"
        result = answers[2].get("result")
        assert result is not None and not result["isError"], f"{answers[2]}\n{log}"
        stored = result["structuredContent"]
        assert stored["status"] == "stored", stored
        token = open_token_store(paths)[0].get("helper")
        c = Client.connect(paths, agent="helper", token=token, workspace=str(proj), autostart=False)
        try:
            got = c.call("memory.get", {"id": stored["id"]})
        finally:
            c.close()
        assert got["content"] == "the ledger closes at 18:00"
    finally:
        stop_cairns_of(home)  # the daemon the bridge started


def test_every_request_read_before_the_end_of_input_is_answered_once(short_tmp: Path) -> None:
    """Several calls, then the end of input, to a running Cairn: the calls still in flight at
    the end lost their answers (each a `Connection closed` error, or none). Each is answered
    now, exactly once - the one the client cancelled and the line that is not JSON get no
    answer, and do not hold the bridge up."""
    home = short_tmp / "d"
    (proj,) = dirs(short_tmp, "proj")
    calls = [
        _tool(
            2, "memory_write", content="the ledger closes at 18:00", kind="fact", scope="project"
        ),
        _tool(3, "memory_search", query="ledger"),
        _tool(
            4, "memory_write", content="invoices go out on Mondays", kind="fact", scope="project"
        ),
        _tool(5, "memory_list"),
        _tool(6, "memory_write", content="idea: batch the invoices", kind="idea", scope="project"),
        _tool(7, "memory_search", query="invoices"),
    ]
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}}
    with running_daemon(home):
        started = time.monotonic()
        status, said, log = _piped(
            home,
            [
                _line(HELLO),
                _line(INITIALIZED),
                *map(_line, calls[:3]),
                b"this is not JSON\n",
                *map(_line, calls[3:]),
                _line(_tool(8, "memory_search", query="cancelled")),
                _line(cancel),
            ],
            "--agent",
            "helper",
            "--workspace",
            str(proj),
        )
        took = time.monotonic() - started
    answers = _answers(said)
    assert status == 0, log
    assert set(answers) - {8} == {1, 2, 3, 4, 5, 6, 7}, f"{said}\n{log}"
    for request_id in range(2, 8):
        result = answers[request_id].get("result")
        assert result is not None and not result["isError"], f"{answers[request_id]}\n{log}"
    assert answers[6]["result"]["structuredContent"]["status"] == "pending"
    assert took < 20, f"the bridge took {took:.1f} s\n{log}"


def test_the_end_of_input_with_nothing_in_flight_ends_the_bridge_at_once(short_tmp: Path) -> None:
    """Holding back the end of input until every request is answered must not keep a bridge
    with nothing left to answer: a client that closes the input after its answers came (the
    usual case), even after a line that is not JSON and a notification, sees the bridge exit
    at once."""
    home = short_tmp / "d"
    (proj,) = dirs(short_tmp, "proj")
    with running_daemon(home):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "core.cli",
                "mcp",
                "--agent",
                "helper",
                "--workspace",
                str(proj),
            ],
            cwd=ROOT,
            env=cairn_env(home),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        try:
            proc.stdin.write(_line(HELLO) + _line(INITIALIZED))
            proc.stdin.write(_line(_tool(2, "memory_search", query="ledger")))
            proc.stdin.flush()
            assert b'"id":1' in proc.stdout.readline()
            assert b'"id":2' in proc.stdout.readline()
            proc.stdin.write(b"this is not JSON\n")
            proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/progress"}))
            proc.stdin.close()
            closed = time.monotonic()
            try:
                status: int | None = proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                status = None
            took = time.monotonic() - closed
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        log = proc.stderr.read().decode()
        rest = proc.stdout.read()
        proc.stdout.close()
        proc.stderr.close()
    assert status == 0, log
    assert took < 5, f"the bridge took {took:.1f} s to exit\n{log}"
    assert rest == b"", rest
