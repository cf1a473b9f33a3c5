"""The bridge's link to Cairn through what a person does meanwhile and what goes wrong: an agent
added again with a new token, a Cairn that stops answering, roots that change mid-question."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.daemon import Runtime
from tests.serving import paths_for, served_in_thread
from tests.test_mcp import bridge, call, data, dirs, person, run, text


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
