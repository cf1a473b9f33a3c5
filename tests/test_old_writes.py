"""An older Cairn of this major on a newer store: a Cairn of schema 2.0-2.2 opens a store of a
later minor and writes what schemas 2.1 and 2.3 repaired (dedupe and idempotency keys with a
carriage return or NEL, names ending in a line break). When this Cairn opens the store again,
those rows are repaired as the migrations repaired them.

Each test writes the old shapes with raw SQL, as the older code's statements did: the older
Cairn itself is not at hand, and what matters is what it leaves in the file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from core.agents import AgentStatus
from core.app import Cairn
from core.dedupe import dedupe_memory_id
from core.errors import InvalidInput
from core.idempotency import request_hash
from core.migrations import CURRENT, SchemaVersion, migrate, read_version
from core.model import Caller, Scope, Surface
from core.paths import Paths
from core.requests import WriteRequest
from core.runtime import socket_path
from core.settings import Settings
from core.validation import content_hash
from tests.conftest import FakeClock, open_policy
from tests.serving import RawClient, served_in_thread

AGENT = "agent-a"
AGENT_CALLER = Caller(Surface.AGENT, agent=AGENT, verified=False)
HUMAN = Caller.human()


def open_cairn(paths: Paths) -> Cairn:
    return Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock(1_800_000_000_000))


@pytest.fixture
def store(paths: Paths) -> Paths:
    """A store of the current schema, written by this Cairn (every agent write lands)."""
    open_policy(paths.config)
    open_cairn(paths).close()
    return paths


def old_cairn(paths: Paths) -> sqlite3.Connection:
    """A connection writing as an older Cairn of this major wrote: raw statements, no repair."""
    return sqlite3.connect(paths.database, isolation_level=None)


def old_memory(
    conn: sqlite3.Connection,
    content: str,
    *,
    key: str | None = None,
    agent: str = AGENT,
    kind: str = "fact",
    updated_at: int = 1,
) -> str:
    """A global memory (and its first revision) as an older Cairn stored it: the key and the
    names as the agent sent them."""
    mid = dedupe_memory_id(Scope.GLOBAL, None, None, key) if key else f"m_old{content[:8]}"
    seq = int(conn.execute("SELECT value FROM meta WHERE key = 'memory_seq'").fetchone()[0]) + 1
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO memory (id, seq, revision, content, kind, scope, importance, status, tier, "
        "agent, origin, created_at, updated_at, dedupe_key, content_hash) VALUES "
        "(?, ?, 1, ?, ?, 'global', 3, 'active', 'derived', ?, 'explicit', 1, ?, ?, ?)",
        (mid, seq, content, kind, agent, updated_at, key, content_hash(content)),
    )
    conn.execute(
        "INSERT INTO revision (memory_id, revision, content, kind, scope, tags, importance, "
        "pinned, status, tier, actor, action, created_at) VALUES "
        "(?, 1, ?, ?, 'global', '[]', 3, 0, 'active', 'derived', ?, 'write', 1)",
        (mid, content, kind, agent),
    )
    conn.execute("UPDATE meta SET value = ? WHERE key = 'memory_seq'", (str(seq),))
    conn.execute("COMMIT")
    return mid


def events(conn: sqlite3.Connection, action: str) -> list[dict[str, Any]]:
    return [
        {"memory_id": r[0], **json.loads(r[1])}
        for r in conn.execute(
            "SELECT memory_id, detail FROM audit WHERE action = ? ORDER BY seq", (action,)
        )
    ]


def snapshot(path: Path) -> dict[str, Any]:
    """What the store holds, for "nothing lost" and "a second open does nothing"."""
    conn = sqlite3.connect(path)
    try:
        return {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("memory", "revision", "agent", "idempotency", "suggestion", "audit")
        }
    finally:
        conn.close()


def test_a_key_an_older_cairn_stored_with_a_carriage_return_names_its_memory_again(
    store: Paths,
) -> None:
    """An agent on an older Cairn wrote with the dedupe key `editor\\r\\n` (kept as sent) and an
    idempotency key `retry\\r`. Back on this Cairn, the same keys are read with line feeds: they
    matched nothing, so the agent's next write made a second memory and its retry a second
    write. Over the socket, as the agent sends them."""
    conn = old_cairn(store)
    mid = old_memory(conn, "the editor is vim", key="editor\r\n")
    params = {"content": "the build runs on port 8080", "kind": "fact", "scope": "global"}
    first = old_memory(conn, params["content"])
    conn.execute(
        "INSERT INTO idempotency (actor, key, request_hash, response, created_at) "
        "VALUES (?, 'retry\r', ?, ?, 1799999999000)",
        (
            AGENT,
            request_hash(WriteRequest.from_params(params), AGENT_CALLER),
            json.dumps({"status": "stored", "id": first, "revision": 1}),
        ),
    )
    conn.close()
    before = snapshot(store.database)
    with served_in_thread(store) as runtime:
        client = RawClient(socket_path(runtime.paths))
        try:
            assert "result" in client.hello(AGENT)
            write = {"content": "the editor is helix", "kind": "fact", "scope": "global"}
            reply = client.request("memory.write", {**write, "dedupe_key": "editor\r\n"})
            assert (reply["result"]["id"], reply["result"]["revision"]) == (mid, 2), reply
            retry = client.request("memory.write", {**params, "idempotency_key": "retry\r"})
            assert retry["result"] == {"status": "stored", "id": first, "revision": 1} | {
                "replayed": True
            }, retry
            listed = client.request("memory.list", {})["result"]["items"]
            assert sorted(m["content"] for m in listed) == [params["content"], write["content"]]
        finally:
            client.close()
    after = snapshot(store.database)
    assert len(after["memory"]) == len(before["memory"]) == 2
    assert len(after["revision"]) == len(before["revision"]) + 1  # the agent's change, no more


def test_an_agent_an_older_cairn_named_with_a_line_break_can_be_paused_by_its_name(
    store: Paths,
) -> None:
    """An older Cairn took a hello from `helper\\n` (its pattern's `$` matched before the line
    break): an agent no command could name. Back on this Cairn it is renamed `helper` with its
    memories, revisions and document, as schema 2.1 renamed such names, and a person can pause
    it and revoke it by that name; nothing is lost."""
    conn = old_cairn(store)
    conn.execute(
        "INSERT INTO agent (name, status, created_at, created_by) "
        "VALUES ('helper\n', 'active', 1, 'self-declared')"
    )
    mid = old_memory(conn, "the deploy needs the vpn", agent="helper\n", kind="decision\n")
    conn.execute(
        "INSERT INTO identity_version (doc, version, content, author_kind, author, created_at, "
        "content_hash) VALUES ('soul:helper\n', 1, 'I help', 'agent', 'helper\n', 1, 'h')"
    )
    conn.close()
    app = open_cairn(store)
    try:
        assert app.agents.set_status(HUMAN, "helper", AgentStatus.PAUSED).status == "paused"
        got = app.memories.get(HUMAN, mid)
        assert (got.memory.agent, got.memory.kind, got.memory.content) == (
            "helper",
            "decision",
            "the deploy needs the vpn",
        )
        assert app.identity.get(HUMAN, "soul:helper").content == "I help"
        assert app.agents.set_status(HUMAN, "helper", AgentStatus.REVOKED).status == "revoked"
        conn = app.store.read_db.conn()
        assert conn.execute(
            "SELECT actor FROM revision WHERE memory_id = ?", (mid,)
        ).fetchall() == [("helper",)]
        assert [(e["what"], e["was"], e["now"]) for e in events(conn, "name_renamed")] == [
            ("agent", "helper\n", "helper"),
            ("kind", "decision\n", "decision"),
        ]
        with pytest.raises(InvalidInput):  # the old name is no name any door takes
            app.agents.get("helper\n")
    finally:
        app.close()


def test_a_key_an_older_cairn_spelt_beside_the_same_key_keeps_both_memories_said_once(
    store: Paths,
) -> None:
    """The agent's key `k` is held as `k\\n`; an older Cairn did not find it under `k\\r` and
    made a second memory. The one already holding the key keeps it, the other keeps everything
    and its old key, with one `dedupe_key_kept` event - and no second one at later opens, even
    when an older Cairn writes again."""
    conn = old_cairn(store)
    held = old_memory(conn, "stored by this cairn", key="k\n")
    second = old_memory(conn, "stored by an older cairn", key="k\r", updated_at=9)
    conn.close()
    app = open_cairn(store)
    try:
        assert app.memories.write(AGENT_CALLER, keyed("changed", "k\r")).id == held
        assert app.memories.get(HUMAN, second).memory.content == "stored by an older cairn"
        kept = events(app.store.read_db.conn(), "dedupe_key_kept")
        assert kept == [{"memory_id": second, "key": "k\r", "held_by": held}]
    finally:
        app.close()
    conn = old_cairn(store)
    old_memory(conn, "another old write", key="other\r")  # the older Cairn again, elsewhere
    conn.close()
    app = open_cairn(store)
    try:
        assert events(app.store.read_db.conn(), "dedupe_key_kept") == kept
    finally:
        app.close()


def keyed(content: str, key: str) -> WriteRequest:
    return WriteRequest.from_params(
        {"content": content, "kind": "fact", "scope": "global", "dedupe_key": key}
    )


def test_an_old_name_renamed_before_and_written_again_by_an_older_cairn_opens(
    store: Paths,
) -> None:
    """Schema 2.1 renamed `helper\\n` to `helper`; the agent, still configured as `helper\\n`,
    reached an older Cairn, which enrolled it again. The store then holds both names, and the
    recorded rename would put the old one onto `helper`'s row: opening failed on the agent's
    key. It takes the first free name, as any old name does whose name is held."""
    conn = old_cairn(store)
    conn.execute(
        "INSERT INTO agent (name, status, created_at, created_by) "
        "VALUES ('helper', 'active', 1, 'self-declared')"
    )
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('renamed_names', ?)",
        (json.dumps({"agents": {"helper\n": "helper"}, "kinds": {}}),),
    )
    conn.execute(
        "INSERT INTO agent (name, status, created_at, created_by) "
        "VALUES ('helper\n', 'active', 2, 'self-declared')"
    )
    mid = old_memory(conn, "written on the older cairn", agent="helper\n")
    conn.close()
    app = open_cairn(store)
    try:
        assert [a.name for a in app.agents.list()] == ["helper", "helper-2"]
        assert app.memories.get(HUMAN, mid).memory.agent == "helper-2"
        app.agents.set_status(HUMAN, "helper-2", AgentStatus.PAUSED)
    finally:
        app.close()


def test_a_second_open_repairs_nothing_and_this_cairns_own_writes_mark_nothing(
    store: Paths,
) -> None:
    """Once repaired, opening again changes nothing; and what this Cairn writes itself - keys
    sent with carriage returns are read with line feeds - never asks for a repair."""
    conn = old_cairn(store)
    mid = old_memory(conn, "old key", key="wiki\r")
    conn.close()
    open_cairn(store).close()
    repaired = snapshot(store.database)
    assert [(r[0], r[-4]) for r in repaired["memory"] if r[0] == mid] == [(mid, "wiki\n")]
    open_cairn(store).close()
    assert snapshot(store.database) == repaired
    app = open_cairn(store)
    try:
        app.memories.write(AGENT_CALLER, keyed("new key", "notes\r\n"))
        flag = app.store.read_db.conn().execute("SELECT 1 FROM meta WHERE key = 'old_writes'")
        assert flag.fetchone() is None
    finally:
        app.close()


def test_opening_a_store_with_nothing_to_repair_reads_one_row_of_meta(store: Paths) -> None:
    """Opening must not read the memory table to find an older Cairn's writes: SQLite marks them
    as they are written (triggers of schema 2.4), and opening looks up that one mark."""
    from core.old_writes import FLAGGED

    conn = old_cairn(store)
    plan = [r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {FLAGGED}")]
    conn.close()
    assert len(plan) == 1 and plan[0].startswith("SEARCH meta USING INDEX"), plan


def test_statements_an_older_cairn_runs_still_work_on_a_store_of_this_schema(
    store: Paths,
) -> None:
    """A minor step only adds what older code keeps up: its inserts, replaces and upserts of
    old shapes succeed (the mark is set once, whatever the statement's conflict clause)."""
    conn = old_cairn(store)
    for verb in ("INSERT", "INSERT OR REPLACE", "INSERT OR ABORT", "INSERT OR IGNORE"):
        conn.execute(
            f"{verb} INTO idempotency (actor, key, request_hash, response, created_at) "
            "VALUES ('helper\n', ?, 'h', '{}', 1)",
            (f"{verb}\r",),
        )
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('policy', ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (json.dumps({"agents": {"bot\n": {}}}),),
    )
    assert conn.execute("SELECT count(*) FROM idempotency").fetchone() == (4,)
    assert conn.execute("SELECT count(*) FROM meta WHERE key = 'old_writes'").fetchone() == (1,)
    conn.close()


def test_a_store_an_older_cairn_wrote_before_this_schema_is_repaired_by_the_migration(
    short_tmp: Path,
) -> None:
    """A 2.3 store (no marks yet) that an older Cairn wrote to: the 2.4 migration repairs what
    it finds, as the open after a mark does."""
    conn = sqlite3.connect(short_tmp / "s.db", isolation_level=None)
    migrate(conn, target=SchemaVersion(2, 3))
    conn.execute(
        "INSERT INTO agent (name, status, created_at, created_by) "
        "VALUES ('helper\n', 'active', 1, 'self-declared')"
    )
    conn.execute(
        "INSERT INTO idempotency (actor, key, request_hash, response, created_at) "
        "VALUES ('helper\n', 'retry\r', 'h', '{}', 1)"
    )
    migrate(conn)
    assert read_version(conn) == CURRENT
    assert conn.execute("SELECT name FROM agent").fetchall() == [("helper",)]
    assert conn.execute("SELECT actor, key FROM idempotency").fetchall() == [("helper", "retry\n")]
    conn.close()


def test_the_triggers_watch_every_column_the_repairs_repair() -> None:
    """A column the repairs learn (`old_names.AGENT_COLUMNS`...) that no trigger watches would
    let an older Cairn's write there go unrepaired: such a change needs a migration of its own."""
    from core.old_names import AGENT_COLUMNS, KIND_COLUMNS
    from core.old_writes import KEY_COLUMNS, NAME_COLUMNS

    repaired = {*AGENT_COLUMNS, *KIND_COLUMNS, ("identity_version", "doc")}
    repaired |= {("memory", "dedupe_key"), ("suggestion", "dedupe_key"), ("idempotency", "key")}
    assert {*NAME_COLUMNS, *KEY_COLUMNS} == repaired
