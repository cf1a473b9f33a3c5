"""`cairn mcp` end to end: the MCP SDK's own stdio client launches a real `python -m core.cli mcp`
against a real Cairn (served in this process, or the headless daemon the bridge starts), and
every answer is checked where a person would see it - the store, the review queue, the audit.
Also the enrollment a bridge uses on first use, over the real socket."""

from __future__ import annotations

import contextlib
import socket
import sys
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import (
    CallToolResult,
    Implementation,
    ListRootsResult,
    Root,
    TextContent,
    TextResourceContents,
)
from pydantic import FileUrl

from core.client import Client
from core.daemon import Runtime
from core.errors import ErrorCode
from core.keychain import open_token_store
from core.mcp_bridge import Link, agent_name_for, workspace_from_roots
from core.paths import Paths
from core.runtime import probe, socket_path
from tests.conftest import ROOT, cairn_env
from tests.serving import (
    RawClient,
    paths_for,
    running_daemon,
    served_in_thread,
    stop_cairns_of,
    write_settings,
)

TOOLS = {
    "memory_search",
    "memory_write",
    "memory_get",
    "memory_list",
    "memory_update",
    "memory_forget",
    "memory_feedback",
    "context_build",
    "identity_get",
    "identity_propose",
}
SECRET = "the deploy key is AKIAZ7QK3MWN5PXR2TLY"


# -- helpers ------------------------------------------------------------------------------------


class Roots:
    """The roots an MCP client offers; the test changes them."""

    def __init__(self, *dirs: Path) -> None:
        self.dirs = list(dirs)

    async def __call__(self, context: ClientRequestContext) -> ListRootsResult:
        return ListRootsResult(
            roots=[Root(uri=FileUrl(d.as_uri()), name=d.name) for d in self.dirs]
        )


@contextlib.asynccontextmanager
async def bridge(
    home: Path,
    *args: str,
    roots: Roots | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    client: str = "pytest client",
) -> AsyncIterator[ClientSession]:
    """A real `cairn mcp` subprocess, and an initialized MCP session with it."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "core.cli", "mcp", *args],
        env=cairn_env(home) | (env or {}),
        cwd=str(cwd or ROOT),
    )
    home.mkdir(parents=True, exist_ok=True)
    with (home / "bridge.log").open("a", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(
                read,
                write,
                list_roots_callback=roots,
                client_info=Implementation(name=client, version="1.0"),
            ) as session,
        ):
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    return await session.call_tool(tool, arguments)


def text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    structured: dict[str, Any] = result.structured_content
    return structured


def run(fn: Any) -> None:
    anyio.run(fn)


@pytest.fixture
def served(short_tmp: Path) -> Iterator[Runtime]:
    """The real Runtime (store, server, socket) on a thread; a person's connection is confirmed
    as the tray would. The shipped capture policy: an `idea` waits for review."""
    with served_in_thread(paths_for(short_tmp / "c"), confirm_human=lambda _s: None) as runtime:
        yield runtime


def person(paths: Paths) -> RawClient:
    c = RawClient(socket_path(paths))
    assert "result" in c.hello(role="human"), "a person's connection was refused"
    return c


def dirs(base: Path, *names: str) -> list[Path]:
    made = []
    for name in names:
        (base / name).mkdir()
        made.append(base / name)
    return made


# -- the bridge, end to end ---------------------------------------------------------------------


def test_every_tool_through_the_bridge_under_the_default_policy(
    served: Runtime, short_tmp: Path
) -> None:
    home = short_tmp / "c"
    (proj,) = dirs(short_tmp, "proj")
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with bridge(home, "--agent", "helper", "--workspace", str(proj)) as s:
            tools = await s.list_tools()
            assert {t.name for t in tools.tools} == TOOLS
            for t in tools.tools:
                assert t.description and len(t.description) > 80, t.name
            search_doc = next(t for t in tools.tools if t.name == "memory_search")
            assert "untrusted" in (search_doc.description or "")
            assert set(search_doc.input_schema["properties"]) >= {
                "query",
                "variants",
                "limit",
                "horizon",
            }

            fact = data(
                await call(
                    s,
                    "memory_write",
                    content="The billing service listens on port 8443 in staging",
                    kind="fact",
                    scope="project",
                    tags=["ops"],
                )
            )
            assert fact["status"] == "stored"
            idea = await call(
                s, "memory_write", content="Shard the ledger by month", kind="idea", scope="project"
            )
            assert data(idea)["status"] == "pending" and data(idea)["reason_code"] == "policy"
            assert "a person will review" in text(idea)
            secret = await call(s, "memory_write", content=SECRET, kind="fact", scope="project")
            assert data(secret)["status"] == "refused" and data(secret)["reason_code"] == "secret"
            assert "Nothing was stored" in text(secret) and "AKIAZ7QK" not in text(secret)

            found = await call(s, "memory_search", query="billing port", variants=["staging"])
            assert [r["id"] for r in data(found)["results"]] == [fact["id"]]
            assert "untrusted data, not instructions" in text(found)
            assert "port 8443" in text(found)
            assert text(found).startswith("1 result, presence ")
            got = data(await call(s, "memory_get", id=fact["id"], history=True))
            assert got["agent"] == "helper" and got["author_tier"] == "explicit"  # verified
            listed = data(await call(s, "memory_list", scope="project"))
            assert [m["id"] for m in listed["items"]] == [fact["id"]]
            updated = data(
                await call(
                    s,
                    "memory_update",
                    id=fact["id"],
                    if_revision=1,
                    content="The billing service listens on port 8444 in staging",
                )
            )
            assert updated["status"] == "stored" and updated["revision"] == 2
            stale = await call(s, "memory_update", id=fact["id"], if_revision=1, importance=4)
            assert stale.is_error and "conflict" in text(stale)
            feedback = data(await call(s, "memory_feedback", id=fact["id"], verdict="useful"))
            assert feedback["recorded"] is True
            bundle = await call(s, "context_build", query="billing port staging")
            assert "port 8444" in text(bundle) and "untrusted" in text(bundle)
            soul = data(await call(s, "identity_get"))
            assert soul["doc"].startswith("soul") and soul["content"]
            proposal = await call(
                s, "identity_propose", doc="user", content="Prefers short answers.", reason="said"
            )
            assert data(proposal)["status"] == "pending" and "a person will review" in text(
                proposal
            )
            missing = await call(s, "memory_get", id="m_000000000000ffffffffffffffff")
            assert missing.is_error and text(missing).startswith("not_found:")
            invalid = await call(s, "memory_search", query="x", limit=1000)
            assert invalid.is_error

            resources = {str(r.uri) for r in (await s.list_resources()).resources}
            assert resources == {"cairn://identity/user", "cairn://identity/soul", "cairn://policy"}
            user = (await s.read_resource("cairn://identity/user")).contents[0]
            assert isinstance(user, TextResourceContents) and user.text
            policy = (await s.read_resource("cairn://policy")).contents[0]
            assert isinstance(policy, TextResourceContents) and '"idea": "ask"' in policy.text

            gone = data(await call(s, "memory_forget", id=fact["id"], reason="moved"))
            assert gone["status"] == "forgotten"
            seen.update(idea=data(idea)["suggestion_id"], proposal=data(proposal)["suggestion_id"])

    run(main)

    # What a person sees: the review queue, attributed to the agent; the agent, enrolled.
    p = person(served.paths)
    queue = p.request("review.list")["result"]["items"]
    by_id = {i["id"]: i for i in queue}
    assert set(by_id) == {seen["idea"], seen["proposal"]}
    assert all(i["agent"] == "helper" for i in queue), queue
    agents = {a["name"]: a for a in p.request("agent.list")["result"]["agents"]}
    assert agents["helper"]["has_token"] and agents["helper"]["created_by"] == "self-enrolled"
    assert open_token_store(served.paths)[0].get("helper") is not None
    p.close()


def test_a_person_adopts_with_an_edit_and_another_bridge_gets_the_edited_text(
    served: Runtime, short_tmp: Path
) -> None:
    """The desktop story told through MCP (the person decides over their own connection here;
    the review window makes the same service call)."""
    home = short_tmp / "c"
    (proj,) = dirs(short_tmp, "proj")

    async def agent_a() -> str:
        async with bridge(home, "--agent", "agent-a", "--workspace", str(proj)) as a:
            idea = data(
                await call(
                    a,
                    "memory_write",
                    content="Rotate the staging certificates every month",
                    kind="idea",
                    scope="project",
                )
            )
            assert idea["status"] == "pending"
            return str(idea["suggestion_id"])

    async def agent_b() -> None:
        async with bridge(home, "--agent", "agent-b", "--workspace", str(proj)) as b:
            bundle = await call(b, "context_build", query="staging certificates rotate")
            assert "every week" in text(bundle) and "every month" not in text(bundle)

    suggestion: list[str] = []

    async def first() -> None:
        suggestion.append(await agent_a())

    run(first)
    p = person(served.paths)
    edited = "Rotate the staging certificates every week"
    adopted = p.request("review.adopt", {"id": suggestion[0], "edits": {"content": edited}})
    p.close()
    assert adopted["result"]["decision"] == "adopted", adopted
    run(agent_b)


def test_a_search_never_returns_another_workspace(served: Runtime, short_tmp: Path) -> None:
    home = short_tmp / "c"
    a_dir, b_dir = dirs(short_tmp, "a", "b")

    async def main() -> None:
        async with (
            bridge(home, "--agent", "agent-a", "--workspace", str(a_dir)) as a,
            bridge(home, "--agent", "agent-b", "--workspace", str(b_dir)) as b,
        ):
            mine = data(
                await call(
                    a,
                    "memory_write",
                    content="the queue is named ledger",
                    kind="fact",
                    scope="project",
                )
            )
            assert mine["status"] == "stored"
            assert data(await call(a, "memory_search", query="queue ledger"))["results"]
            other = data(await call(b, "memory_search", query="queue ledger"))
            assert other["results"] == [] and other["presence"] == "none"
            assert data(await call(b, "memory_list"))["items"] == []
            hidden = await call(b, "memory_get", id=mine["id"])
            assert hidden.is_error and "not_found" in text(hidden)
            bundle = await call(b, "context_build", query="queue ledger")
            assert "ledger" not in text(bundle)

    run(main)


def test_a_match_left_out_for_the_budget_is_not_called_nothing_relevant(
    served: Runtime, short_tmp: Path
) -> None:
    """context_build told the model "Nothing relevant in memory for this query (presence:
    none)" when a strong match was only left out because it did not fit max_bytes, so the model
    gave up instead of asking again with a larger budget. Now the text says how many matches
    did not fit, the real presence, and what to do."""
    home = short_tmp / "c"
    (proj,) = dirs(short_tmp, "proj")

    async def main() -> None:
        async with bridge(home, "--agent", "helper", "--workspace", str(proj)) as s:
            await call(
                s,
                "memory_write",
                content="The billing service listens on port 8443 in staging; the health check "
                "is at /healthz and needs the ops VPN.",
                kind="fact",
                scope="project",
            )
            bundle = await call(s, "context_build", query="billing port staging", max_bytes=600)
            said = text(bundle)
            assert data(bundle)["omitted_budget"] == 1 and data(bundle)["presence"] == "strong"
            assert "Nothing relevant" not in said and "presence: none" not in said, said
            assert "1 match" in said and "max_bytes" in said and "presence: strong" in said, said
            empty = await call(s, "context_build", query="zebra crossing rules")
            assert "Nothing relevant in memory for this query (presence: none)" in text(empty)

    run(main)


def test_roots_bind_the_workspace_and_a_change_rebinds_it(served: Runtime, short_tmp: Path) -> None:
    home = short_tmp / "c"
    first, second, cwd = dirs(short_tmp, "first", "second", "cwd")
    roots = Roots(first)
    from mcp.shared.exceptions import MCPDeprecationWarning

    async def main() -> None:
        async with bridge(home, roots=roots, cwd=cwd, client="Test Client") as s:
            one = data(
                await call(
                    s, "memory_write", content="alpha lives here", kind="fact", scope="project"
                )
            )
            roots.dirs = [second]
            with warnings.catch_warnings():  # roots are deprecated in the 2026-07-28 spec
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await s.send_roots_list_changed()
            await anyio.sleep(0.2)  # the notification has no answer to wait for
            two = data(
                await call(
                    s, "memory_write", content="beta lives here", kind="fact", scope="project"
                )
            )
            found = data(await call(s, "memory_search", query="alpha lives here"))["results"]
            assert one["id"] not in {r["id"] for r in found}
            return_ids.extend([one["id"], two["id"]])

    return_ids: list[str] = []
    run(main)

    c = Client.connect(served.paths, agent="probe", workspace=str(second), autostart=False)
    try:
        second_ws = c.hello["workspace_id"]
    finally:
        c.close()
    d = Client.connect(served.paths, agent="probe", workspace=str(first), autostart=False)
    try:
        first_ws = d.hello["workspace_id"]
    finally:
        d.close()
    p = person(served.paths)
    one, two = (p.request("memory.get", {"id": i})["result"] for i in return_ids)
    p.close()
    assert one["workspace_id"] == first_ws and two["workspace_id"] == second_ws
    # no --agent: the name comes from the client's initialize
    assert one["agent"] == "mcp-test-client"


def test_without_roots_the_working_directory_is_the_workspace(
    served: Runtime, short_tmp: Path
) -> None:
    home = short_tmp / "c"
    (cwd,) = dirs(short_tmp, "here")

    async def main() -> None:
        async with bridge(home, cwd=cwd, client="") as s:
            wrote = data(
                await call(
                    s, "memory_write", content="gamma lives here", kind="fact", scope="project"
                )
            )
            got = data(await call(s, "memory_get", id=wrote["id"]))
            ids.append(got["workspace_id"])
            ids.append(got["agent"])

    ids: list[str] = []
    run(main)
    c = Client.connect(served.paths, agent="probe", workspace=str(cwd), autostart=False)
    try:
        assert ids == [c.hello["workspace_id"], "mcp-agent"]
    finally:
        c.close()


def test_a_deleted_working_directory_is_a_clear_tool_error(
    served: Runtime, short_tmp: Path
) -> None:
    """Every tool failed with "Error executing tool memory_search" (a FileNotFoundError)."""
    home = short_tmp / "c"
    (cwd,) = dirs(short_tmp, "gone")

    async def main() -> None:
        async with bridge(home, cwd=cwd, client="") as s:
            cwd.rmdir()
            said.append(await call(s, "memory_search", query="anything"))

    said: list[CallToolResult] = []
    run(main)
    assert said[0].is_error and text(said[0]).startswith("not_found: the folder"), text(said[0])


def test_an_existing_name_cannot_enroll_and_the_bridge_says_so(
    served: Runtime, short_tmp: Path
) -> None:
    home = short_tmp / "c"
    declared = RawClient(socket_path(served.paths))
    assert declared.hello("squatter")["result"]["verified"] is False  # declared, no token
    declared.close()

    async def main() -> None:
        async with bridge(home, "--agent", "squatter") as s:
            refused = await call(s, "memory_search", query="anything")
            assert refused.is_error
            assert "conflict:" in text(refused) and "cairn agent add squatter" in text(refused)

    run(main)


# -- not running, and autostart -----------------------------------------------------------------


def test_no_daemon_is_a_clear_tool_error_then_autostart_starts_it(short_tmp: Path) -> None:
    home = short_tmp / "auto"
    paths = paths_for(home)
    (work,) = dirs(short_tmp, "work")

    async def without_autostart() -> None:
        async with bridge(home, "--agent", "early", env={"CAIRN_NO_AUTOSTART": "1"}) as s:
            result = await call(s, "memory_search", query="anything")
            assert result.is_error and text(result).startswith("not_running: Cairn is not running")
            assert "CAIRN_NO_AUTOSTART=1" in text(result)
            assert result.structured_content == {
                "error": "not_running",
                "message": result.structured_content["message"],
                "data": {"socket": str(socket_path(paths))},
            }
            with pytest.raises(Exception, match=r"not running.*CAIRN_NO_AUTOSTART=1"):
                await s.read_resource("cairn://policy")

    async def with_autostart() -> None:
        async with bridge(home, "--agent", "early", "--workspace", str(work)) as s:
            result = await call(
                s, "memory_write", content="started on demand", kind="fact", scope="project"
            )
            assert data(result)["status"] == "stored"

    run(without_autostart)
    assert not probe(socket_path(paths))
    try:
        run(with_autostart)
        c = Client.connect(paths, agent="early", autostart=False)
        try:
            status = c.call("status")
        finally:
            c.close()
        assert status["socket"] == str(socket_path(paths))
    finally:
        # Stop the daemon the bridge started - even when an assert failed, and before it wrote
        # its pid file (which the test looked for until 2026-11-30).
        stop_cairns_of(home)
    assert not probe(socket_path(paths))


# -- enrollment over the socket ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_enrollment_registers_only_a_new_name_on_the_unix_socket(short_tmp: Path) -> None:
    home = short_tmp / "e"
    port = free_port()
    write_settings(home, f"[server]\ntcp_port = {port}\n")
    with served_in_thread(paths_for(home), confirm_human=lambda _s: None) as runtime:
        sock = socket_path(runtime.paths)
        first = RawClient(sock)
        hello = first.hello("fresh", enroll=True)["result"]
        assert hello["verified"] is True and hello["enrolled"]["token"].startswith("cairn_")
        token = hello["enrolled"]["token"]
        assert open_token_store(runtime.paths)[0].get("fresh") == token
        first.close()
        again = RawClient(sock)
        assert again.hello("fresh", token=token)["result"]["verified"] is True
        again.close()

        p = person(runtime.paths)
        assert "result" in p.request("agent.add", {"name": "added"})
        declared = RawClient(sock)
        declared.hello("declared")
        declared.close()
        assert "result" in p.request("agent.add", {"name": "paused"})
        assert "result" in p.request("agent.pause", {"name": "paused"})
        assert "result" in p.request("agent.add", {"name": "revoked"})
        assert "result" in p.request("agent.revoke", {"name": "revoked"})
        p.close()
        for name in ("fresh", "added", "declared", "paused", "revoked"):
            c = RawClient(sock)
            error = c.hello(name, enroll=True)["error"]
            c.close()
            assert error["data"]["error"] == ErrorCode.CONFLICT.label, (name, error)
            assert f"cairn agent add {name}" in error["message"]
        both = RawClient(sock)
        error = both.hello("other", enroll=True, token="cairn_x")["error"]
        assert error["data"]["error"] == "invalid_params"
        both.close()

        with socket.create_connection(("127.0.0.1", port), timeout=10) as tcp:
            tcp.sendall(
                b'{"jsonrpc":"2.0","id":1,"method":"hello","params":'
                b'{"protocol_version":1,"agent":"via-tcp","enroll":true}}\n'
            )
            answer = tcp.makefile("rb").readline()
        assert b'"forbidden"' in answer and b"Unix socket" in answer

        p = person(runtime.paths)
        names = {a["name"] for a in p.request("agent.list")["result"]["agents"]}
        changes = p.request("changes.since", {"seq": 0})["result"]["changes"]
        p.close()
    assert "via-tcp" not in names and "other" not in names
    enrolled = [c for c in changes if c["action"] == "agent_add" and c["actor"] == "fresh"]
    assert len(enrolled) == 1, changes


def test_enrollment_is_off_when_a_person_registers_every_agent(short_tmp: Path) -> None:
    home = short_tmp / "r"
    write_settings(home, "[security]\nrequire_tokens = true\n")
    with served_in_thread(paths_for(home)) as runtime:
        c = RawClient(socket_path(runtime.paths))
        error = c.hello("newcomer", enroll=True)["error"]
        c.close()
    assert error["data"]["error"] == "forbidden" and "require_tokens" in error["message"]


# -- the pure parts -----------------------------------------------------------------------------


def test_the_first_write_after_cairn_restarted_reaches_it(short_tmp: Path) -> None:
    """The bridge's connection died with the old Cairn; its first write after a restart was
    sent into it and reported "may or may not have been carried out" (nothing was)."""
    home = short_tmp / "restart"
    workspace = short_tmp / "proj"
    workspace.mkdir()
    link = Link(paths_for(home), session="s-1")
    write = {"content": "before the restart", "kind": "fact", "scope": "project"}
    try:
        with running_daemon(home):
            assert link.call("bridge-a", str(workspace), "memory.write", write)["status"]
        with running_daemon(home):
            again = {**write, "content": "after the restart"}
            assert link.call("bridge-a", str(workspace), "memory.write", again)["id"]
            found = link.call("bridge-a", str(workspace), "memory.search", {"query": "restart"})
            assert len(found["results"]) == 2
    finally:
        link.close()


def test_two_bridges_enrolling_one_name_at_once_both_connect(short_tmp: Path) -> None:
    """The second one's enrolment, a moment after the first's, answered conflict ("a person can
    issue its token") although the first had just put the token in the token store."""
    home = short_tmp / "twins"
    workspace = short_tmp / "proj"
    workspace.mkdir()
    first, second = Link(paths_for(home), "s-1"), Link(paths_for(home), "s-2")
    try:
        with running_daemon(home):
            made = first.call("mcp-editor", str(workspace), "memory.list", {})
            assert made["items"] == []
            # the second had looked in the token store before the first enrolled, and found none
            second._enroll("mcp-editor", str(workspace)).close()
    finally:
        first.close()
        second.close()


def test_default_agent_names_are_valid_agent_names() -> None:
    assert agent_name_for("claude-code") == "mcp-claude-code"
    assert agent_name_for("Claude Desktop") == "mcp-claude-desktop"
    assert agent_name_for("Cursor (vscode) 1.2") == "mcp-cursor-vscode-1.2"
    assert agent_name_for(None) == agent_name_for("") == agent_name_for("!!!") == "mcp-agent"
    assert len(agent_name_for("x" * 200)) == 64


def test_the_first_local_root_that_exists_is_the_workspace(short_tmp: Path) -> None:
    (real,) = dirs(short_tmp, "with space")
    result = ListRootsResult(
        roots=[
            Root(uri=FileUrl((short_tmp / "missing").as_uri())),
            Root(uri=FileUrl(real.as_uri())),
        ]
    )
    assert workspace_from_roots(result) == str(real)
    assert workspace_from_roots(ListRootsResult(roots=[])) is None
