"""Stores for the archive tests, on real SQLite files: `rich`, a store with a bit of everything
(memories with histories, a supersession, a contradiction, an archived, a keyed, a session and a
forgotten memory, an idea waiting for review, identity documents), and `empty`, a store with
nothing in it yet - each a fixture every test module can ask for (tests/conftest.py registers
this module), and the helpers that build them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.app import Cairn
from core.model import Caller, Surface, WriteStatus
from core.requests import UpdateRequest, WriteRequest
from core.settings import Settings
from core.validation import content_hash
from core.writer import WriteTx
from tests.conftest import FakeClock
from tests.serving import paths_for


def open_store(home: Path) -> Cairn:
    """A Cairn under `home` with the shipped capture policy (an agent's idea waits for review).
    Every store's clock starts at the same instant, so their seeded identity versions agree."""
    return Cairn.open(paths_for(home), settings=Settings.defaults(), clock=FakeClock())


def person(c: Cairn, ws: str | None = None) -> Caller:
    return Caller(Surface.HUMAN, workspace_id=ws)


def write(c: Cairn, caller: Caller, content: str, **fields: Any) -> str:
    params = {"content": content, "kind": "fact", "scope": "project", **fields}
    result = c.memories.write(caller, WriteRequest.from_params(params))
    assert result.status is WriteStatus.STORED, result
    assert result.id is not None
    return result.id


def update(c: Cairn, caller: Caller, memory_id: str, **fields: Any) -> None:
    current = c.memories.get(caller, memory_id).memory.revision
    params = {"id": memory_id, "if_revision": current, **fields}
    result = c.memories.update(caller, UpdateRequest.from_params(params))
    assert result.status is WriteStatus.STORED, result


def add_identity(c: Cairn, doc: str, content: str, author: str = "human") -> int:
    """A new version of an identity document, straight into its table (the identity service
    keeps its own tests; here only its rows matter)."""

    def job(tx: WriteTx) -> int:
        last = tx.conn.execute(
            "SELECT coalesce(max(version), 0) FROM identity_version WHERE doc = ?", (doc,)
        ).fetchone()[0]
        version = int(last) + 1
        tx.conn.execute(
            "INSERT INTO identity_version (doc, version, content, author_kind, author, reason, "
            "parent, created_at, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                doc,
                version,
                content,
                "human" if author == "human" else "agent",
                author,
                "written in a test",
                version - 1 or None,
                c.clock.now_ms(),
                content_hash(content),
            ),
        )
        return version

    return c.store.writer.run(job)


@dataclass
class Rich:
    """A store with a bit of everything, and the ids of what matters."""

    cairn: Cairn
    clock: FakeClock
    workspace: Path
    ws: str
    ids: dict[str, str]

    @property
    def me(self) -> Caller:
        return person(self.cairn, self.ws)


def build_rich(c: Cairn, workspace: Path) -> Rich:
    clock = c.clock
    assert isinstance(clock, FakeClock)
    ws = c.workspaces.resolve(str(workspace)).id
    me = person(c, ws)
    agent = Caller(Surface.AGENT, agent="helper", verified=True, workspace_id=ws, session_id="s-1")
    ids: dict[str, str] = {}
    ids["ci"] = write(c, me, "The CI runs on buildkite", tags=["ci", "build"])
    clock.advance(60)
    update(c, me, ids["ci"], content="The CI runs on buildkite agents in eu-west", reason="moved")
    clock.advance(60)
    update(c, me, ids["ci"], importance=5, pinned=True)
    ids["metric"] = write(c, me, "The user prefers metric units", kind="preference", scope="user")
    ids["python"] = write(c, me, "Python 3.11 on every build machine", scope="global")
    ids["old"] = write(c, me, "Deploys go out on Fridays")
    clock.advance(1)
    ids["new"] = write(c, me, "Deploys go out on Tuesdays after the freeze")
    c.memories.supersede(me, ids["old"], by_id=ids["new"], reason="the freeze moved them")
    ids["a"] = write(c, agent, "The staging database is postgres 15", summary="staging pg 15")
    ids["b"] = write(c, me, "The staging database is postgres 16")
    c.memories.mark_contradiction(me, ids["a"], ids["b"], note="which one?")
    ids["archived"] = write(c, me, "The old wiki lives at wiki.example.org")
    c.memories.set_archived(me, ids["archived"], True)
    ids["keyed"] = write(c, me, "Build status: green", dedupe_key="build-status")
    clock.advance(1)
    assert write(c, me, "Build status: red since Monday", dedupe_key="build-status") == ids["keyed"]
    ids["session"] = write(c, agent, "Scratch: bisecting the flaky test", scope="session")
    ids["gone"] = write(c, me, "The intern's phone number is in the drawer")
    c.memories.forget(me, ids["gone"], reason="not ours to keep")
    idea = c.memories.write(
        agent,
        WriteRequest.from_params(
            {"content": "Cache the wheels", "kind": "idea", "scope": "project"}
        ),
    )
    assert idea.status is WriteStatus.PENDING  # the shipped policy asks about ideas
    add_identity(c, "soul:default", "# Soul\n\nCurious, careful, brief.\n")
    add_identity(c, "soul:helper", "# Helper\n\nReads the CI logs first.\n", author="helper")
    add_identity(c, "user", "# User\n\nPrefers metric units.\n")
    add_identity(c, "user", "# User\n\nPrefers metric units and short answers.\n")
    return Rich(c, clock, workspace, ws, ids)


@pytest.fixture
def rich(short_tmp: Path) -> Iterator[Rich]:
    """A store with a bit of everything (`build_rich`), its workspace the folder `billing`."""
    folder = short_tmp / "billing"
    folder.mkdir()
    c = open_store(short_tmp / "a")
    try:
        yield build_rich(c, folder)
    finally:
        c.close()


@pytest.fixture
def empty(short_tmp: Path) -> Iterator[Cairn]:
    """A store with nothing in it yet, beside `rich`'s."""
    c = open_store(short_tmp / "b")
    try:
        yield c
    finally:
        c.close()
