"""The Python client (`core/client.py`) against a real Cairn on its socket."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.client import AsyncClient, Client, RemoteError
from tests.serving import paths_for, served_in_thread, write_settings


def test_waiting_for_a_push_that_does_not_come_leaves_the_client_usable(
    short_tmp: Path, workspace_dir: Path
) -> None:
    """After `next_notification(timeout)` gave None, every later read failed for good
    ("cannot read from timed out object"): the socket's file refuses to read after a timeout."""
    paths = paths_for(short_tmp / "c")
    with (
        served_in_thread(paths),
        Client.connect(
            paths, agent="listener", workspace=str(workspace_dir), autostart=False
        ) as listener,
        Client.connect(
            paths, agent="writer", workspace=str(workspace_dir), autostart=False
        ) as writer,
    ):
        assert listener.call("changes.subscribe")["subscribed"]
        assert listener.next_notification(0.2) is None
        assert listener.next_notification(0.1) is None
        assert "methods" in listener.call("capabilities")
        wrote = writer.call(
            "memory.write", {"content": "pushed note", "kind": "fact", "scope": "project"}
        )
        note = listener.next_notification(5)
        assert note is not None and note["method"] == "changes"
        assert note["params"]["changes"][0]["memory_id"] == wrote["id"]


def test_the_async_client_says_why_it_was_refused(short_tmp: Path, workspace_dir: Path) -> None:
    """Over `server.max_connections` the server answers `rate_limited` (id null) and closes:
    the async client dropped that answer and said "Cairn is not running"."""
    home = short_tmp / "a"
    write_settings(home, "[server]\nmax_connections = 1\n")
    paths = paths_for(home)
    with served_in_thread(paths), Client.connect(paths, agent="first", autostart=False):

        async def second() -> None:
            client = await AsyncClient.connect(
                paths, agent="second", workspace=str(workspace_dir), autostart=False
            )
            await client.close()

        with pytest.raises(RemoteError, match="too many connections"):
            asyncio.run(second())
