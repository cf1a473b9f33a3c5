"""Keys stored before 2026-11-30, when a carriage return or NEL in a dedupe or idempotency key was
kept as sent: since then every key is read with its line breaks as line feeds, so an old key is
found only once schema 2.3 has stored it the same way."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.app import Cairn
from core.dedupe import dedupe_memory_id
from core.idempotency import request_hash
from core.migrations import SchemaVersion, migrate
from core.model import Caller, Scope, Surface, WriteStatus
from core.paths import Paths
from core.requests import WriteRequest
from core.runtime import socket_path
from core.search_index import rebuild
from core.settings import Settings
from core.validation import content_hash
from tests.conftest import FakeClock, open_policy
from tests.serving import RawClient, paths_for, served_in_thread

AGENT = "agent-a"
AGENT_CALLER = Caller(Surface.AGENT, agent=AGENT, verified=False)


@dataclass(frozen=True)
class OldMemory:
    """A global memory agent-a wrote with a dedupe key, as a Cairn before 2026-11-30 stored it."""

    key: str
    content: str
    status: str = "active"
    updated_at: int = 1

    @property
    def id(self) -> str:
        return dedupe_memory_id(Scope.GLOBAL, None, None, self.key)


def old_store(
    paths: Paths,
    memories: Sequence[OldMemory] = (),
    keys: Sequence[tuple[str, WriteRequest, str]] = (),
) -> None:
    """A store of schema 2.2 holding `memories` and, for each (key, request, memory id) of
    `keys`, the idempotency key agent-a's `request` was sent with and the answer it got."""
    paths.data.mkdir(parents=True, exist_ok=True, mode=0o700)
    conn = sqlite3.connect(paths.database, isolation_level=None)
    migrate(conn, target=SchemaVersion(2, 2))
    conn.execute("BEGIN")
    for seq, m in enumerate(memories, 1):
        conn.execute(
            "INSERT INTO memory (id, seq, revision, content, kind, scope, importance, status, "
            "tier, agent, origin, created_at, updated_at, dedupe_key, content_hash) VALUES "
            "(?, ?, 1, ?, 'fact', 'global', 3, ?, 'derived', ?, 'explicit', 1, ?, ?, ?)",
            (m.id, seq, m.content, m.status, AGENT, m.updated_at, m.key, content_hash(m.content)),
        )
        conn.execute(
            "INSERT INTO revision (memory_id, revision, content, kind, scope, tags, importance, "
            "pinned, status, tier, actor, action, created_at) VALUES "
            "(?, 1, ?, 'fact', 'global', '[]', 3, 0, ?, 'derived', ?, 'write', 1)",
            (m.id, m.content, m.status, AGENT),
        )
    conn.execute("UPDATE meta SET value = ? WHERE key = 'memory_seq'", (str(len(memories)),))
    for key, request, mid in keys:
        conn.execute(
            "INSERT INTO idempotency (actor, key, request_hash, response, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (
                AGENT,
                key,
                request_hash(request, AGENT_CALLER),
                json.dumps({"status": "stored", "id": mid, "revision": 1}),
                int(time.time() * 1000),  # within its retention
            ),
        )
    rebuild(conn)
    conn.execute("COMMIT")
    conn.close()


@pytest.fixture
def opened(paths: Paths) -> None:
    """Every agent write lands (the all-auto capture policy)."""
    open_policy(paths.config)


def open_cairn(paths: Paths) -> Cairn:
    return Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock(1_800_000_000_000))


def keyed(content: str, key: str) -> WriteRequest:
    return WriteRequest.from_params(
        {"content": content, "kind": "fact", "scope": "global", "dedupe_key": key}
    )


@pytest.mark.parametrize("key", ["editor\r", "editor\r\nmain", "editor\x85"])
def test_a_dedupe_key_stored_with_a_carriage_return_still_names_its_memory(
    paths: Paths, opened: None, key: str
) -> None:
    """An agent's dedupe key stored before 2026-11-30 with a CR (or CRLF, or NEL) in it: the same
    key sent again is read with a line feed, so it matched nothing and the agent got a second
    memory beside its first instead of a new revision of it."""
    old = OldMemory(key, "the editor is vim")
    old_store(paths, [old])
    app = open_cairn(paths)
    try:
        result = app.memories.write(AGENT_CALLER, keyed("the editor is helix", key))
        assert (result.id, result.revision) == (old.id, 2)
        items = app.memories.list(Caller.human()).items
        assert [(m.id, m.content) for m in items] == [(old.id, "the editor is helix")]
        assert items[0].dedupe_key == key.replace("\r\n", "\n").replace("\r", "\n").replace(
            "\x85", "\n"
        )
        # the same words again change nothing
        again = app.memories.write(AGENT_CALLER, keyed("the editor is helix", key))
        assert (again.id, again.revision, again.duplicate) == (old.id, 2, True)
    finally:
        app.close()


def test_an_idempotency_key_stored_with_a_carriage_return_replays_its_first_answer(
    paths: Paths, opened: None
) -> None:
    """An agent's retry of a write whose idempotency key ended in a CR before 2026-11-30 (its
    memory changed since): the key came in as a line feed, matched nothing, and the retry was a
    second write - a second memory holding the old text - instead of the first write's answer
    again. Over the socket, as the agent sends it."""
    first = OldMemory("ignored", "the build runs on port 9090")  # its text since the write
    params = {"content": "the build runs on port 8080", "kind": "fact", "scope": "global"}
    old_store(paths, [first], keys=[("retry-7\r", WriteRequest.from_params(params), first.id)])
    with served_in_thread(paths) as runtime:
        client = RawClient(socket_path(runtime.paths))
        try:
            assert "result" in client.hello(AGENT)
            reply = client.request("memory.write", {**params, "idempotency_key": "retry-7\r"})
            assert reply["result"] == {
                "status": "stored",
                "id": first.id,
                "revision": 1,
                "replayed": True,
            }
            listed = client.request("memory.list", {})["result"]
            assert [m["content"] for m in listed["items"]] == [first.content]
        finally:
            client.close()


@pytest.mark.parametrize(
    ("content", "dedupe_key", "tags"),
    [
        ("line one\r\nline two", None, []),
        ("line one\rline two", None, []),
        ("one line", "editor\r", []),
        ("line one\r\nline two", None, ["two\r\nwords"]),  # tags are read as sent, then and now
    ],
)
def test_a_retry_of_a_write_sent_with_carriage_returns_before_replays_its_first_answer(
    paths: Paths, opened: None, content: str, dedupe_key: str | None, tags: list[str]
) -> None:
    """A request whose text held CRs before 2026-11-30 was hashed as sent; its retry is read
    with line feeds now, so the hashes differed and the agent got `idempotency_mismatch` -
    "already used for a different write", for the very same write - instead of its first
    answer. Over the socket, as the agent sends it."""
    first = OldMemory(dedupe_key or "ignored", content)
    params: dict[str, Any] = {"content": content, "kind": "fact", "scope": "global"}
    if dedupe_key is not None:
        params["dedupe_key"] = dedupe_key
    if tags:
        params["tags"] = tags
    as_sent = dataclasses.replace(
        WriteRequest.from_params(params), content=content, dedupe_key=dedupe_key
    )  # an old Cairn kept the text as sent
    old_store(paths, [first], keys=[("retry-7", as_sent, first.id)])
    with served_in_thread(paths) as runtime:
        client = RawClient(socket_path(runtime.paths))
        try:
            assert "result" in client.hello(AGENT)
            reply = client.request("memory.write", {**params, "idempotency_key": "retry-7"})
            assert reply.get("result", reply)["replayed"] is True, reply
            assert reply["result"]["id"] == first.id
            other = client.request(
                "memory.write", {**params, "content": "another", "idempotency_key": "retry-7"}
            )
            assert other["error"]["data"]["error"] == "idempotency_mismatch"
        finally:
            client.close()


def test_two_old_keys_that_read_the_same_keep_both_memories_the_line_feed_one_answering(
    paths: Paths, opened: None
) -> None:
    """`k\\r` and `k\\n` were two keys before 2026-11-30, so two memories; since then an agent
    sending either reaches the one stored with the line feed. The migration gives the key to that
    one and leaves the other as it was, its key included - nothing is lost, and it says so (at
    the time Cairn's clock reads)."""
    lf = OldMemory("k\n", "stored with a line feed")
    cr = OldMemory("k\r", "stored with a carriage return", updated_at=5)
    old_store(paths, [cr, lf])
    app = open_cairn(paths)
    try:
        conn = app.store.read_db.conn()
        keys = dict(conn.execute("SELECT id, dedupe_key FROM memory"))
        assert keys == {lf.id: "k\n", cr.id: "k\r"}
        result = app.memories.write(AGENT_CALLER, keyed("changed", "k\r"))
        assert result.id == lf.id
        assert app.memories.get(Caller.human(), cr.id).memory.content == cr.content
        ((detail, at),) = [
            (json.loads(r[0]), r[1])
            for r in conn.execute(
                "SELECT detail, at FROM audit WHERE action = 'dedupe_key_kept' AND memory_id = ?",
                (cr.id,),
            )
        ]
        assert detail == {"key": "k\r", "held_by": lf.id}
        assert at == app.clock.now_ms()  # Cairn's clock (until 2026-12-01 the system's)
    finally:
        app.close()


def test_of_two_old_keys_that_read_the_same_the_live_newest_memory_takes_the_key(
    paths: Paths, opened: None
) -> None:
    """With no memory holding the key as it reads now, the live one most recently changed takes it
    (a superseded one is history); the other keeps its old key."""
    newer = OldMemory("k\r\n", "changed last", updated_at=9)
    older = OldMemory("k\r", "changed first", updated_at=5)
    history = OldMemory("k\x85", "replaced", status="superseded", updated_at=20)
    old_store(paths, [older, newer, history])
    app = open_cairn(paths)
    try:
        conn = app.store.read_db.conn()
        keys = dict(conn.execute("SELECT id, dedupe_key FROM memory"))
        assert keys == {newer.id: "k\n", older.id: "k\r", history.id: "k\x85"}
        assert app.memories.write(AGENT_CALLER, keyed("again", "k\r")).id == newer.id
    finally:
        app.close()


def test_two_old_idempotency_keys_that_read_the_same_keep_the_line_feed_ones_answer(
    paths: Paths, opened: None
) -> None:
    """The idempotency key `r\\n` answered a retry of `r\\r` since 2026-11-30; it still does,
    and the old row stays until its retention ends."""
    a, b = OldMemory("a", "first text"), OldMemory("b", "second text")
    req_a = WriteRequest.from_params({"content": a.content, "kind": "fact", "scope": "global"})
    req_b = WriteRequest.from_params({"content": b.content, "kind": "fact", "scope": "global"})
    old_store(paths, [a, b], keys=[("r\r", req_a, a.id), ("r\n", req_b, b.id)])
    app = open_cairn(paths)
    try:
        conn = app.store.read_db.conn()
        rows = sorted(conn.execute("SELECT key, json_extract(response, '$.id') FROM idempotency"))
        assert rows == [("r\n", b.id), ("r\r", a.id)]
        retry = WriteRequest.from_params(
            {"content": b.content, "kind": "fact", "scope": "global", "idempotency_key": "r\r"}
        )
        result = app.memories.write(AGENT_CALLER, retry)
        assert (result.id, result.replayed) == (b.id, True)
    finally:
        app.close()


def test_a_waiting_proposal_with_an_old_key_adopted_names_the_key_as_it_reads_now(
    paths: Paths, opened: None
) -> None:
    """A keyed write queued for review before 2026-11-30 kept its key `editor\\r` as sent;
    adopted after the upgrade it made a memory holding that key, which the agent's next write
    with the same key (read as `editor\\n`) did not find: a second memory instead of a change
    proposed for the adopted one."""
    old_store(paths)
    conn = sqlite3.connect(paths.database, isolation_level=None)
    conn.execute(
        "INSERT INTO suggestion (id, op, content, kind, scope, dedupe_key, agent, verified, "
        "first_seen, last_seen) VALUES ('s_1', 'add', 'the editor is vim', 'fact', 'global', "
        "'editor\r', ?, 0, 1, 1)",
        (AGENT,),
    )
    conn.close()
    app = open_cairn(paths)
    try:
        adopted = app.review.adopt(Caller.human(), "s_1")
        result = app.memories.write(AGENT_CALLER, keyed("the editor is helix", "editor\r"))
        # a person adopted it, so the agent's change waits for them - as a change of that memory
        assert result.status is WriteStatus.PENDING
        items = app.memories.list(Caller.human()).items
        assert [(m.id, m.dedupe_key) for m in items] == [(adopted.memory_id, "editor\n")]
        waiting = app.review.get(Caller.human(), str(result.suggestion_id))
        assert (waiting["op"], waiting["target_id"]) == ("update", adopted.memory_id)
    finally:
        app.close()


def test_keys_without_old_line_breaks_are_left_as_they_are(short_tmp: Path) -> None:
    """The migration touches only keys holding a CR or NEL."""
    paths = paths_for(short_tmp / "home")
    plain = OldMemory("plain-key", "text")
    old_store(paths, [plain])
    conn = sqlite3.connect(paths.database, isolation_level=None)
    migrate(conn)
    assert conn.execute("SELECT id, dedupe_key FROM memory").fetchall() == [(plain.id, plain.key)]
    assert conn.execute("SELECT count(*) FROM audit").fetchone() == (0,)
    conn.close()
