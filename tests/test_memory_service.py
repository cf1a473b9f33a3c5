"""The memory service's rules, each checked against a real store on a real SQLite file."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from core.app import Cairn
from core.changes import Change, ChangeSet
from core.errors import (
    Conflict,
    IdempotencyMismatch,
    InvalidInput,
    NotFound,
    ScopeDenied,
    StoreBusy,
    TooLarge,
)
from core.memory_service import SupersedeResult
from core.model import (
    Caller,
    ListFilter,
    Origin,
    Scope,
    Status,
    Surface,
    Tier,
    Tombstone,
    WriteResult,
    WriteStatus,
)
from core.paths import Paths
from core.requests import UpdateRequest, WriteRequest
from core.settings import Settings
from core.writer import WriteTx
from tests.conftest import FakeClock


def write(cairn: Cairn, caller: Caller, content: str, **fields: object) -> str:
    params: dict[str, object] = {"content": content, "kind": "fact", "scope": "global", **fields}
    result = cairn.memories.write(caller, WriteRequest.from_params(params))
    assert result.status is WriteStatus.STORED, result
    assert result.id is not None
    return result.id


# -- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "error", "needle"),
    [
        ({"content": "   \n\t", "kind": "fact", "scope": "global"}, InvalidInput, "empty"),
        ({"content": "x" * 40000, "kind": "fact", "scope": "global"}, TooLarge, "limit is 32768"),
        (
            {"content": "bad \ud800 surrogate", "kind": "fact", "scope": "global"},
            InvalidInput,
            "UTF-8",
        ),
        (
            {"content": "esc \x1b[31m red", "kind": "fact", "scope": "global"},
            InvalidInput,
            "control",
        ),
        ({"content": "ok", "kind": "rumour", "scope": "global"}, InvalidInput, "unknown kind"),
        ({"content": "ok", "kind": "fact", "scope": "team"}, InvalidInput, "unknown scope"),
        (
            {"content": "ok", "kind": "fact", "scope": "global", "importance": 9},
            InvalidInput,
            "between 1 and 5",
        ),
        (
            {
                "content": "ok",
                "kind": "fact",
                "scope": "global",
                "tags": [f"t{i}" for i in range(17)],
            },
            TooLarge,
            "tags",
        ),
        (
            {"content": "ok", "kind": "fact", "scope": "global", "tags": ["x" * 49]},
            TooLarge,
            "limit is 48",
        ),
        (
            {"content": "ok", "kind": "fact", "scope": "global", "tags": "notalist"},
            InvalidInput,
            "list of strings",
        ),
        (
            {"content": "ok", "kind": "fact", "scope": "global", "colour": "red"},
            InvalidInput,
            "unknown field 'colour'",
        ),
        (
            {"content": "ok", "kind": "fact", "scope": "global", "ttl_seconds": 0},
            InvalidInput,
            "positive",
        ),
        ({"kind": "fact", "scope": "global"}, InvalidInput, "'content' is required"),
        ({"content": 42, "kind": "fact", "scope": "global"}, InvalidInput, "must be a string"),
    ],
)
def test_invalid_writes_are_refused_precisely_and_store_nothing(
    cairn: Cairn, agent: Caller, params: dict[str, object], error: type[Exception], needle: str
) -> None:
    with pytest.raises(error, match=needle):
        cairn.memories.write(agent, WriteRequest.from_params(params))
    assert cairn.memories.list(Caller.human()).items == ()


@pytest.mark.parametrize(
    "field", ["author_tier", "agent", "workspace_id", "session_id", "revision"]
)
def test_stamp_fields_cannot_be_supplied(cairn: Cairn, agent: Caller, field: str) -> None:
    params = {"content": "x", "kind": "fact", "scope": "global", field: "human"}
    with pytest.raises(InvalidInput, match=f"'{field}' is set by Cairn"):
        cairn.memories.write(agent, WriteRequest.from_params(params))


def test_extra_kinds_come_from_settings(paths: object, clock: FakeClock) -> None:
    from core.paths import Paths

    assert isinstance(paths, Paths)
    settings = Settings.defaults().with_values(memory__extra_kinds=("decision",))
    app = Cairn.open(paths, settings=settings, clock=clock)
    try:
        mid = write(app, Caller.human(), "We chose SQLite.", kind="decision")
        assert app.memories.get(Caller.human(), mid).memory.kind == "decision"
    finally:
        app.close()


# -- stamps and tiers -----------------------------------------------------------------------


def test_tiers_follow_the_one_table(cairn: Cairn, workspace_dir: Path) -> None:
    ws = cairn.workspaces.resolve(str(workspace_dir)).id
    verified = Caller(Surface.AGENT, agent="v", verified=True, workspace_id=ws)
    unverified = Caller(Surface.AGENT, agent="u", verified=False, workspace_id=ws)
    cases = [
        (verified, {}, Tier.EXPLICIT),
        (unverified, {}, Tier.DERIVED),
        (verified, {"origin": "extracted"}, Tier.LLM),
        (unverified, {"origin": "extracted"}, Tier.LLM),
        (Caller.human(), {}, Tier.HUMAN),
        (Caller(Surface.NOTES), {}, Tier.HUMAN),
    ]
    for i, (caller, extra, tier) in enumerate(cases):
        mid = write(cairn, caller, f"tier case {i}", **extra)
        memory = cairn.memories.get(Caller.human(), mid).memory
        assert memory.tier is tier, (caller, extra)
        assert memory.agent == (caller.agent if caller.surface is Surface.AGENT else None)


def test_explicit_and_extracted_agent_writes_never_share_a_tier(
    cairn: Cairn, agent: Caller
) -> None:
    a = write(cairn, agent, "asked to remember this")
    b = write(cairn, agent, "a model noticed this", origin="extracted")
    tiers = {cairn.memories.get(agent, m).memory.tier for m in (a, b)}
    assert tiers == {Tier.EXPLICIT, Tier.LLM}
    assert cairn.memories.get(agent, b).memory.origin is Origin.EXTRACTED


def test_project_scope_binds_to_the_callers_workspace(cairn: Cairn, agent: Caller) -> None:
    mid = write(cairn, agent, "uses pnpm", scope="project", kind="convention")
    memory = cairn.memories.get(agent, mid).memory
    assert memory.workspace_id == agent.workspace_id
    unbound = Caller(Surface.AGENT, agent="x", verified=True)
    with pytest.raises(ScopeDenied, match="needs a workspace"):
        write(cairn, unbound, "no workspace", scope="project")
    with pytest.raises(ScopeDenied, match="session"):
        write(cairn, Caller(Surface.AGENT, agent="x"), "no session", scope="session")


def test_workspace_spellings_resolve_to_one_id(
    cairn: Cairn, short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = short_tmp / "repo"
    (real / "sub").mkdir(parents=True)
    link = short_tmp / "link"
    link.symlink_to(real)
    monkeypatch.setenv("HOME", str(short_tmp))
    spellings = [
        str(real),
        str(real) + "/",
        str(real / "sub" / ".."),
        str(link),
        "~/repo",
        "~/link/",
    ]
    ids = {cairn.workspaces.resolve(s).id for s in spellings}
    assert len(ids) == 1
    assert cairn.workspaces.resolve(str(link)).path == os.path.realpath(real)


@pytest.mark.parametrize("raw", ["", "relative/dir", "/no/such/dir/anywhere"])
def test_unresolvable_workspaces_are_refused(cairn: Cairn, raw: str) -> None:
    with pytest.raises(InvalidInput):
        cairn.workspaces.resolve(raw)


@pytest.mark.parametrize("name", ["evil\x1b[8mhidden", "two\nlines", "csi\x9b2J"])
def test_a_folder_named_with_a_control_character_is_no_workspace(
    cairn: Cairn, short_tmp: Path, name: str
) -> None:
    """A folder whose name holds an escape sequence or a line break registered as a workspace
    (only NUL was refused), and `cairn workspace list` printed it raw to the person's terminal;
    an export of that store was then refused on import. Now it is refused by name."""
    folder = short_tmp / name
    folder.mkdir()
    with pytest.raises(InvalidInput, match=r"workspace path contains a control character \(U\+"):
        cairn.workspaces.resolve(str(folder))
    assert cairn.workspaces.list() == []


def test_a_clean_link_to_a_folder_named_with_a_control_character_is_no_workspace(
    cairn: Cairn, short_tmp: Path
) -> None:
    """The rule held for the path as given, not the folder it resolves to: a link with a clean
    name registered the escape sequence of the folder behind it (until 2026-11-30)."""
    folder = short_tmp / "evil\x1b[41mRED"
    folder.mkdir()
    link = short_tmp / "clean"
    link.symlink_to(folder)
    with pytest.raises(
        InvalidInput, match=r"workspace path contains a control character \(U\+001B\)"
    ):
        cairn.workspaces.resolve(str(link))
    assert cairn.workspaces.list() == []


# -- revisions ------------------------------------------------------------------------------


def test_update_makes_a_new_revision_and_keeps_the_old_one(
    cairn: Cairn, agent: Caller, clock: FakeClock
) -> None:
    mid = write(cairn, agent, "first words", tags=["a"])
    clock.advance(5)
    res = cairn.memories.update(agent, UpdateRequest(id=mid, if_revision=1, content="second words"))
    assert (res.status, res.revision) == (WriteStatus.STORED, 2)
    detail = cairn.memories.get(agent, mid, history=True)
    assert [(r.revision, r.content, r.action) for r in detail.revisions] == [
        (1, "first words", "write"),
        (2, "second words", "update"),
    ]
    assert detail.memory.updated_at > detail.memory.created_at
    assert detail.memory.tags == ("a",)


def test_stale_if_revision_is_a_conflict_and_never_overwrites(cairn: Cairn, agent: Caller) -> None:
    mid = write(cairn, agent, "v1")
    cairn.memories.update(agent, UpdateRequest(id=mid, if_revision=1, content="v2"))
    with pytest.raises(Conflict, match="revision 2, not 1") as info:
        cairn.memories.update(agent, UpdateRequest(id=mid, if_revision=1, content="v3"))
    assert info.value.data["current_revision"] == 2
    assert cairn.memories.get(agent, mid).memory.content == "v2"


def test_an_update_that_changes_nothing_makes_no_revision(cairn: Cairn, agent: Caller) -> None:
    mid = write(cairn, agent, "same", importance=4)
    res = cairn.memories.update(agent, UpdateRequest(id=mid, if_revision=1, importance=4))
    assert res.revision == 1 and res.duplicate
    with pytest.raises(InvalidInput, match="changes nothing"):
        cairn.memories.update(agent, UpdateRequest(id=mid, if_revision=1))


def test_pin_archive_and_their_reversal_are_revisions(cairn: Cairn, agent: Caller) -> None:
    mid = write(cairn, agent, "pin me")
    assert cairn.memories.set_pinned(agent, mid, True).revision == 2
    assert cairn.memories.set_pinned(agent, mid, True).revision == 2  # already pinned: no-op
    archived = cairn.memories.set_archived(agent, mid, True)
    assert (archived.status, archived.revision) == (Status.ARCHIVED, 3)
    back = cairn.memories.set_archived(agent, mid, False)
    assert (back.status, back.revision, back.pinned) == (Status.ACTIVE, 4, True)
    actions = [r.action for r in cairn.memories.get(agent, mid, history=True).revisions]
    assert actions == ["write", "pin", "archive", "unarchive"]


def test_human_edit_of_an_agent_memory_becomes_human_tier_but_a_pin_does_not(
    cairn: Cairn, agent: Caller
) -> None:
    mid = write(cairn, agent, "agent words")
    cairn.memories.set_pinned(Caller.human(), mid, True)
    assert cairn.memories.get(agent, mid).memory.tier is Tier.EXPLICIT
    cairn.memories.update(
        Caller.human(), UpdateRequest(id=mid, if_revision=2, content="human words")
    )
    memory = cairn.memories.get(agent, mid).memory
    assert memory.tier is Tier.HUMAN and memory.agent == "agent-a"


# -- audit and the change channel ------------------------------------------------------------


def test_every_mutation_is_audited_in_order_and_published_after_commit(
    cairn: Cairn, agent: Caller
) -> None:
    seen: list[ChangeSet] = []
    unsubscribe = cairn.bus.subscribe(seen.append)
    mid = write(cairn, agent, "audited")
    cairn.memories.update(agent, UpdateRequest(id=mid, if_revision=1, content="audited twice"))
    cairn.memories.set_pinned(agent, mid, True)
    cairn.memories.forget(Caller.human(), mid, reason="no longer true")
    unsubscribe()
    feed = cairn.memories.changes_since(Caller.human(), 0)
    actions = [(c.action, c.revision) for c in feed.changes if c.memory_id == mid]
    assert actions == [("write", 1), ("update", 2), ("pin", 3), ("forget", 4)]
    seqs = [c.seq for c in feed.changes]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert [c.action for s in seen for c in s.changes] == ["write", "update", "pin", "forget"]
    assert cairn.store.committed_seq == feed.last_seq
    # changes since the memory's second event only
    mine = [c.seq for c in feed.changes if c.memory_id == mid]
    later = cairn.memories.changes_since(Caller.human(), mine[1])
    assert [c.action for c in later.changes] == ["pin", "forget"]


def test_the_live_push_and_changes_since_describe_each_change_alike(
    cairn: Cairn, agent: Caller
) -> None:
    """A listener that missed the push and reads `changes.since` learns the same thing."""
    start = cairn.store.committed_seq
    seen: list[ChangeSet] = []
    unsubscribe = cairn.bus.subscribe(seen.append)
    a = write(cairn, agent, "the API port is 8080", scope="project")
    b = write(cairn, agent, "the API port is 9090", scope="session")
    cairn.memories.update(agent, UpdateRequest(id=a, if_revision=1, content="port 8080"))
    rel = cairn.memories.mark_contradiction(agent, a, b)
    cairn.memories.resolve_contradiction(Caller.human(), rel.id, "both")
    cairn.memories.feedback(agent, b, "useful")
    cairn.agents.add(Caller.human(), "helper")
    from core.agents import AgentStatus

    cairn.agents.set_status(Caller.human(), "helper", AgentStatus.PAUSED)
    cairn.memories.forget(Caller.human(), b)
    unsubscribe()

    def shape(c: Change) -> tuple[object, ...]:
        return (c.seq, c.action, c.topics, c.memory_id, c.workspace_id, c.scope, c.session_id)

    pushed = [shape(c) for s in seen for c in s.changes]
    rebuilt = [shape(c) for c in cairn.memories.changes_since(Caller.human(), start).changes]
    assert pushed == rebuilt
    assert {"resolve", "agent_add", "agent_paused", "forget"} <= {p[1] for p in pushed}
    # what the agent may see: the same events, live or read back
    from core.subscriptions import visible_change

    live = [c.seq for s in seen for c in s.changes if visible_change(agent, c)]
    read = [c.seq for c in cairn.memories.changes_since(agent, 0).changes]
    assert live == read


def test_a_failed_write_publishes_nothing(cairn: Cairn, agent: Caller) -> None:
    seen: list[ChangeSet] = []
    cairn.bus.subscribe(seen.append)
    mid = write(cairn, agent, "v1")
    seen.clear()
    with pytest.raises(Conflict):
        cairn.memories.update(agent, UpdateRequest(id=mid, if_revision=7, content="v2"))
    assert seen == []


def test_agents_see_only_changes_inside_their_horizon(
    cairn: Cairn, agent: Caller, short_tmp: Path
) -> None:
    other_dir = short_tmp / "other"
    other_dir.mkdir()
    other_ws = cairn.workspaces.resolve(str(other_dir)).id
    other = Caller(Surface.AGENT, agent="b", verified=True, workspace_id=other_ws)
    mine = write(cairn, agent, "mine", scope="project")
    write(cairn, other, "theirs", scope="project")
    shared = write(cairn, other, "shared", scope="user")
    ids = {c.memory_id for c in cairn.memories.changes_since(agent, 0).changes}
    assert ids == {mine, shared}


# -- horizon ---------------------------------------------------------------------------------


def test_another_workspaces_memory_is_not_found_for_every_operation(
    cairn: Cairn, agent: Caller, short_tmp: Path
) -> None:
    other_dir = short_tmp / "elsewhere"
    other_dir.mkdir()
    other = Caller(
        Surface.AGENT,
        agent="b",
        verified=True,
        workspace_id=cairn.workspaces.resolve(str(other_dir)).id,
    )
    mid = write(cairn, agent, "secret plan for project A", scope="project")
    with pytest.raises(NotFound):
        cairn.memories.get(other, mid)
    with pytest.raises(NotFound):
        cairn.memories.update(other, UpdateRequest(id=mid, if_revision=1, content="hijack"))
    with pytest.raises(NotFound):
        cairn.memories.forget(other, mid)
    with pytest.raises(NotFound):
        cairn.memories.set_pinned(other, mid, True)
    assert mid not in {m.id for m in cairn.memories.list(other).items}
    session_mid = write(cairn, agent, "scratch", scope="session")
    other_session = Caller(
        Surface.AGENT, agent="a", verified=True, workspace_id=agent.workspace_id, session_id="s-2"
    )
    with pytest.raises(NotFound):
        cairn.memories.get(other_session, session_mid)


# -- forget ----------------------------------------------------------------------------------


SECRET_TEXT = "the vault combination is marmalade-quokka-7731"


def test_forget_leaves_no_trace_of_the_content_on_disk(cairn: Cairn, agent: Caller) -> None:
    mid = write(
        cairn, agent, SECRET_TEXT, summary="vault combination marmalade", tags=["marmalade"]
    )
    cairn.memories.update(
        agent, UpdateRequest(id=mid, if_revision=1, content=SECRET_TEXT + " (confirmed)")
    )
    for i in range(50):  # other data around it, so pages are shared
        write(cairn, agent, f"unrelated filler memory {i}")
    cairn.store.checkpoint("TRUNCATE")
    db = cairn.store.path
    assert b"marmalade-quokka" in db.read_bytes()  # the check can see the text at all
    tomb = cairn.memories.forget(Caller.human(), mid, reason="leaked")
    assert isinstance(tomb, Tombstone)
    assert tomb.forgotten_by == "human" and tomb.reason == "leaked"
    cairn.store.checkpoint("TRUNCATE")
    for path in (db, db.with_name(db.name + "-wal")):
        data = path.read_bytes() if path.exists() else b""
        for needle in (b"marmalade", b"quokka-7731", "marmalade".encode("utf-16-le")):
            assert needle not in data, f"{needle!r} found in {path.name}"
    detail = cairn.memories.get(Caller.human(), mid, history=True)
    assert detail.memory.status is Status.FORGOTTEN
    assert all(r.content == "" for r in detail.revisions)
    events = cairn.memories.changes_since(Caller.human(), 0)
    assert any(c.action == "forget" for c in events.changes)


def test_forgotten_memories_do_not_come_back(cairn: Cairn, agent: Caller) -> None:
    keyed = write(cairn, agent, "deploy target is blue", dedupe_key="deploy-target")
    plain = write(cairn, agent, "the office plant is a fern")
    cairn.memories.forget(Caller.human(), keyed)
    cairn.memories.forget(Caller.human(), plain)
    again = cairn.memories.write(
        agent,
        WriteRequest.from_params(
            {
                "content": "deploy target is green",
                "kind": "fact",
                "scope": "global",
                "dedupe_key": "deploy-target",
            }
        ),
    )
    assert (again.status, again.reason_code) == (WriteStatus.REFUSED, "forgotten")
    same = cairn.memories.write(
        agent,
        WriteRequest.from_params(
            {"content": "the office plant is a fern", "kind": "fact", "scope": "global"}
        ),
    )
    assert same.status is WriteStatus.REFUSED
    # A person may deliberately write it again.
    assert write(cairn, Caller.human(), "the office plant is a fern") != plain
    # Forgetting twice is harmless; agents no longer see it at all.
    cairn.memories.forget(Caller.human(), plain)
    with pytest.raises(NotFound):
        cairn.memories.get(agent, plain)
    listed = cairn.memories.list(Caller.human(), ListFilter(statuses=frozenset({Status.FORGOTTEN})))
    assert {m.id for m in listed.items} == {keyed, plain}
    assert all(m.content == "" for m in listed.items)


# -- usage -----------------------------------------------------------------------------------


def test_recall_counts_are_not_changes(cairn: Cairn, agent: Caller) -> None:
    mid = write(cairn, agent, "recalled often")
    before = cairn.memories.changes_since(Caller.human(), 0).last_seq
    cairn.memories.record_recall([mid, mid])
    cairn.memories.record_recall([mid])
    assert cairn.usage.flush() == 1
    memory = cairn.memories.get(agent, mid, history=True)
    assert memory.memory.use_count == 3 and memory.memory.last_recalled_at is not None
    assert len(memory.revisions) == 1
    assert cairn.memories.changes_since(Caller.human(), 0).last_seq == before


def test_recall_counts_survive_a_flush_that_fails(paths: Paths, clock: FakeClock) -> None:
    """A flush that failed (the store locked by another program) threw its batch away: the
    recalls counted before it were never written, though failures were said to be retried at
    the next period."""
    settings = Settings.defaults().with_values(
        store__busy_timeout_ms=100, usage__flush_interval_ms=600_000
    )
    app = Cairn.open(paths, settings=settings, clock=clock)
    try:
        mid = write(app, Caller.human(), "the kestrel hovers")
        app.memories.record_recall([mid, mid, mid])
        clock.advance(5)
        blocker = sqlite3.connect(paths.database, isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")
            with pytest.raises(StoreBusy):
                app.usage.flush()
            app.memories.record_recall([mid])  # one more while the batch waits to be retried
            blocker.execute("ROLLBACK")
        finally:
            blocker.close()
        assert app.usage.flush() == 1
        memory = app.memories.get(Caller.human(), mid).memory
        assert memory.use_count == 4
        assert memory.last_recalled_at == clock.now_ms()
    finally:
        app.close()


# -- idempotency, dedupe keys, duplicates ---------------------------------------------------


def test_idempotent_retry_returns_the_first_result_and_creates_nothing(
    cairn: Cairn, agent: Caller
) -> None:
    params = {"content": "retry me", "kind": "fact", "scope": "global", "idempotency_key": "k-1"}
    first = cairn.memories.write(agent, WriteRequest.from_params(params))
    second = cairn.memories.write(agent, WriteRequest.from_params(params))
    assert (second.id, second.revision, second.replayed) == (first.id, first.revision, True)
    assert len(cairn.memories.list(Caller.human()).items) == 1
    with pytest.raises(IdempotencyMismatch, match="k-1"):
        cairn.memories.write(agent, WriteRequest.from_params({**params, "content": "other text"}))
    other_agent = Caller(Surface.AGENT, agent="b", verified=True)
    third = cairn.memories.write(
        other_agent, WriteRequest.from_params({**params, "content": "b's own"})
    )
    assert third.id != first.id


@pytest.mark.parametrize("scope", ["project", "session"])
def test_a_key_retried_from_another_workspace_is_a_mismatch_not_a_phantom_write(
    cairn: Cairn, agent: Caller, short_tmp: Path, scope: str
) -> None:
    """The same agent, key and body from a connection bound elsewhere: answering `stored` with
    the first write's id would tell it a memory it cannot see holds its write."""
    other_dir = short_tmp / "p2"
    other_dir.mkdir()
    here = replace(agent, session_id="s-1")
    there = replace(here, workspace_id=cairn.workspaces.resolve(str(other_dir)).id)
    params = {"content": "Run make test", "kind": "procedure", "scope": scope}
    request = WriteRequest.from_params({**params, "idempotency_key": "retry-42"})
    first = cairn.memories.write(here, request)
    assert cairn.memories.write(here, request).replayed
    with pytest.raises(IdempotencyMismatch, match="retry-42"):
        cairn.memories.write(there, request)
    assert cairn.memories.get(here, str(first.id)).memory.content == "Run make test"


def test_dedupe_key_gives_one_memory_per_workspace_and_scope(
    cairn: Cairn, agent: Caller, short_tmp: Path
) -> None:
    a = write(cairn, agent, "node 18", scope="project", dedupe_key="node-version")
    b = write(cairn, agent, "node 20", scope="project", dedupe_key="node-version")
    assert a == b
    memory = cairn.memories.get(agent, a).memory
    assert (memory.content, memory.revision) == ("node 20", 2)
    other_dir = short_tmp / "p2"
    other_dir.mkdir()
    other = Caller(
        Surface.AGENT,
        agent="agent-a",
        verified=True,
        workspace_id=cairn.workspaces.resolve(str(other_dir)).id,
    )
    c = write(cairn, other, "node 22", scope="project", dedupe_key="node-version")
    assert c != a
    g = write(cairn, agent, "node 22", scope="global", dedupe_key="node-version")
    assert g not in (a, c)
    # The same content again under the key is not a new revision.
    assert write(cairn, agent, "node 20", scope="project", dedupe_key="node-version") == a
    assert cairn.memories.get(agent, a).memory.revision == 2


def test_exact_duplicate_content_is_one_memory_per_scope(cairn: Cairn, agent: Caller) -> None:
    a = write(cairn, agent, "Tabs, not spaces.", kind="preference", scope="user")
    res = cairn.memories.write(
        agent,
        WriteRequest.from_params(
            {"content": "  Tabs,   not spaces. ", "kind": "preference", "scope": "user"}
        ),
    )
    assert res.id == a and res.duplicate
    b = write(cairn, agent, "Tabs, not spaces.", kind="preference", scope="project")
    assert b != a


def test_writing_an_archived_memorys_text_says_it_is_archived(cairn: Cairn, agent: Caller) -> None:
    """It said "already stored: nothing new" as if the text were live; it stays archived."""
    mid = write(cairn, agent, "The old wiki lives at wiki.example.org")
    cairn.memories.set_archived(Caller.human(), mid, True)
    again = cairn.memories.write(
        Caller.human(),
        WriteRequest.from_params(
            {"content": "The old wiki lives at wiki.example.org", "kind": "fact", "scope": "global"}
        ),
    )
    assert again.duplicate and again.id == mid and again.to_dict()["archived"] is True
    from core.terminal import describe_write

    assert describe_write(again.to_dict()).endswith("(already stored, archived: nothing new)")


def test_an_agents_dedupe_key_write_keeps_what_a_person_archived_archived(
    cairn: Cairn, agent: Caller
) -> None:
    """A person archived an agent's memory; the agent wrote with the memory's dedupe key again
    and the 'upsert' revision made it active - the person's decision undone by an agent, and
    the answer a plain "stored". Now the agent's revision lands and the memory stays archived,
    the answer saying so; a person's write with the key still brings it back."""
    human = Caller.human()
    mid = write(cairn, agent, "the ledger queue is ledger-main", dedupe_key="ledger-queue")
    cairn.memories.set_archived(human, mid, True)

    def keyed(caller: Caller, content: str) -> WriteResult:
        params = {"content": content, "kind": "fact", "scope": "global"}
        return cairn.memories.write(
            caller, WriteRequest.from_params({**params, "dedupe_key": "ledger-queue"})
        )

    same = keyed(agent, "the ledger queue is ledger-main")
    assert same.duplicate and same.to_dict()["archived"] is True
    revised = keyed(agent, "the ledger queue is ledger-main-v2")
    assert (revised.status, revised.id, revised.revision) == (WriteStatus.STORED, mid, 3)
    assert revised.to_dict()["archived"] is True and "duplicate" not in revised.to_dict()
    memory = cairn.memories.get(human, mid).memory
    assert (memory.status, memory.content) == (
        Status.ARCHIVED,
        "the ledger queue is ledger-main-v2",
    )
    restored = keyed(human, "the ledger queue is ledger-main-v3")
    assert "archived" not in restored.to_dict()
    assert cairn.memories.get(human, mid).memory.status is Status.ACTIVE


# -- expiry ----------------------------------------------------------------------------------


def test_expired_memories_hide_then_show_flagged_then_purge(
    cairn: Cairn, agent: Caller, clock: FakeClock
) -> None:
    mid = write(cairn, agent, "temporary build flag", ttl_seconds=60)
    keep = write(cairn, agent, "permanent fact")
    clock.advance(61)
    assert [m.id for m in cairn.memories.list(agent).items] == [keep]
    flagged = cairn.memories.list(agent, ListFilter(include_expired=True)).items
    assert {m.id: m.expired for m in flagged} == {mid: True, keep: False}
    assert cairn.memories.purge_expired() == 0  # inside the retention window (7 days)
    clock.advance(7 * 86400)
    assert cairn.memories.purge_expired() == 1
    assert [
        m.id for m in cairn.memories.list(Caller.human(), ListFilter(include_expired=True)).items
    ] == [keep]
    again = cairn.memories.write(
        agent,
        WriteRequest.from_params(
            {"content": "temporary build flag", "kind": "fact", "scope": "global"}
        ),
    )
    # The purge left a tombstone, but an expiry is not a decision against the text: it may
    # be written again (until 2026-11-30 it was refused for good, for every agent).
    assert again.status is WriteStatus.STORED and again.id != mid


def test_the_text_of_an_expired_memory_is_stored_again_not_called_a_duplicate(
    cairn: Cairn, agent: Caller, clock: FakeClock
) -> None:
    """Writing the text of an expired memory answered "already stored: nothing new" with the
    expired one: the fact the agent meant to keep stayed hidden, then was purged."""
    old = write(cairn, agent, "Zebra firmware cache lives in /var/zebra", ttl_seconds=2)
    clock.advance(3)
    params = {"content": "Zebra firmware cache lives in /var/zebra", "kind": "fact"}
    for caller in (agent, Caller.human()):
        result = cairn.memories.write(
            caller, WriteRequest.from_params({**params, "scope": "global"})
        )
        assert result.status is WriteStatus.STORED and not result.duplicate, result
        assert result.memory is not None and result.memory.expires_at is None
        assert result.id is not None and result.id != old
        assert [m.id for m in cairn.memories.list(caller).items] == [result.id]
        # the same text once more is now a duplicate of the live one
        again = cairn.memories.write(
            caller, WriteRequest.from_params({**params, "scope": "global"})
        )
        assert again.duplicate and again.id == result.id
        cairn.memories.forget(Caller.human(), result.id)


def test_an_agent_catching_up_sees_a_purge(
    cairn: Cairn, agent: Caller, clock: FakeClock, workspace_dir: Path
) -> None:
    """`changes.since` joined the memory table, which a purge deletes from: an agent catching
    up never saw the purge (nor the memory's earlier events), and kept serving it from a cache."""
    mine = write(cairn, agent, "staging is frozen", scope="project", ttl_seconds=1)
    clock.advance(8 * 86400)
    assert cairn.memories.purge_expired() == 1
    seen = [(c.action, c.memory_id) for c in cairn.memories.changes_since(agent, 0).changes]
    assert ("write", mine) in seen and ("purge", mine) in seen, seen
    # another workspace's agent sees neither
    elsewhere = workspace_dir.parent / "other-project"
    elsewhere.mkdir()
    other = replace(agent, workspace_id=cairn.workspaces.resolve(str(elsewhere)).id)
    assert mine not in {c.memory_id for c in cairn.memories.changes_since(other, 0).changes}


def test_last_seq_never_goes_back_from_a_change_a_reader_has_seen(
    cairn: Cairn, agent: Caller
) -> None:
    """A read can see a commit before the writer has counted it (`committed_seq` is set just
    after the commit): `changes.since {seq: 62}` then answered `last_seq: 61`, and a client
    resuming from it got change 62 twice; a search waiting for 62 was told it is not ready."""
    from core.search import SearchRequest

    write(cairn, agent, "the queue is called ledger")
    seen = cairn.memories.changes_since(agent, 0).last_seq
    cairn.store.writer.committed_seq = seen - 1  # the moment between the commit and its count
    assert cairn.memories.changes_since(agent, seen).last_seq == seen
    cairn.search.search(agent, SearchRequest(query="ledger", min_commit_seq=seen))


def test_an_agent_whose_view_holds_nothing_new_moves_its_cursor_on(
    cairn: Cairn, agent: Caller, workspace_dir: Path
) -> None:
    """An agent that sees none of the changes after its cursor was answered its own cursor:
    it never moved on, and every call scanned the whole audit again."""
    elsewhere = workspace_dir.parent / "other"
    elsewhere.mkdir()
    other = replace(agent, workspace_id=cairn.workspaces.resolve(str(elsewhere)).id)
    for i in range(3):
        write(cairn, other, f"other project note {i}", scope="project")
    last = cairn.memories.changes_since(Caller.human(), 0).last_seq
    feed = cairn.memories.changes_since(agent, 0)
    assert feed.changes == () and feed.last_seq == last
    mine = write(cairn, agent, "mine", scope="project")
    write(cairn, other, "other project note 4", scope="project")
    feed = cairn.memories.changes_since(agent, last)
    assert [c.memory_id for c in feed.changes] == [mine]
    assert feed.last_seq == cairn.memories.changes_since(Caller.human(), 0).last_seq


def test_an_expired_and_purged_text_or_key_can_be_written_again(
    cairn: Cairn, agent: Caller, clock: FakeClock
) -> None:
    """A session's note, once its session ended and it was purged, barred that text from every
    later session of every agent; a dedupe key whose memory expired was refused for good."""
    write(cairn, agent, "CI pipeline is red today", ttl_seconds=1)
    keyed = write(cairn, agent, "deploys frozen", ttl_seconds=1, dedupe_key="deploy-freeze")
    clock.advance(8 * 86400)
    assert cairn.memories.purge_expired() == 2
    other = replace(agent, agent="helper-2")
    text = cairn.memories.write(
        other,
        WriteRequest.from_params(
            {"content": "CI pipeline is red today", "kind": "fact", "scope": "global"}
        ),
    )
    assert text.status is WriteStatus.STORED, text
    again = cairn.memories.write(
        agent,
        WriteRequest.from_params(
            {
                "content": "deploys frozen again",
                "kind": "fact",
                "scope": "global",
                "dedupe_key": "deploy-freeze",
            }
        ),
    )
    assert again.status is WriteStatus.STORED and again.id == keyed, again
    assert cairn.memories.get(agent, keyed).memory.content == "deploys frozen again"
    # a text a person forgot stays forgotten
    gone = write(cairn, agent, "the old staging password rotation")
    cairn.memories.forget(Caller.human(), gone)
    refused = cairn.memories.write(
        agent,
        WriteRequest.from_params(
            {"content": "the old staging password rotation", "kind": "fact", "scope": "global"}
        ),
    )
    assert refused.status is WriteStatus.REFUSED and refused.reason_code == "forgotten"


# -- supersede and contradictions ------------------------------------------------------------


def test_supersede_keeps_both_and_links_them(cairn: Cairn, agent: Caller) -> None:
    old = write(cairn, agent, "CI runs on Travis")
    result = cairn.memories.supersede(
        agent,
        old,
        replacement=WriteRequest.from_params(
            {"content": "CI runs on GitHub Actions", "kind": "fact", "scope": "global"}
        ),
        reason="migrated",
    )
    assert isinstance(result, SupersedeResult)
    assert result.old.status is Status.SUPERSEDED and result.old.superseded_by == result.new.id
    assert [m.id for m in cairn.memories.list(agent).items] == [result.new.id]
    history = cairn.memories.list(
        agent, ListFilter(statuses=frozenset(Status) - {Status.FORGOTTEN})
    )
    assert {m.id for m in history.items} == {old, result.new.id}
    for mid in (old, result.new.id):
        rels = cairn.memories.relations(agent, mid)
        assert [(r.kind.value, r.from_id, r.to_id) for r in rels] == [
            ("supersedes", result.new.id, old)
        ]
    with pytest.raises(Conflict, match="already superseded"):
        cairn.memories.supersede(agent, old, by_id=result.new.id)


def test_contradictions_stay_open_until_a_person_resolves_them(cairn: Cairn, agent: Caller) -> None:
    a = write(cairn, agent, "the API port is 8080")
    b = write(cairn, agent, "the API port is 9090")
    rel = cairn.memories.mark_contradiction(agent, a, b, note="which one?")
    assert rel.open and cairn.memories.relations(agent, b)[0].id == rel.id
    from core.errors import Forbidden

    with pytest.raises(Forbidden):
        cairn.memories.resolve_contradiction(agent, rel.id, "from")
    closed = cairn.memories.resolve_contradiction(
        Caller.human(), rel.id, "to", note="9090 is right"
    )
    assert not closed.open and closed.resolution == "to"
    assert cairn.memories.get(agent, a).memory.status is Status.SUPERSEDED
    assert cairn.memories.get(agent, b).memory.status is Status.ACTIVE


def test_forgetting_or_purging_a_memory_closes_its_contradictions(
    cairn: Cairn, agent: Caller, clock: FakeClock
) -> None:
    """A contradiction stayed open after one side was forgotten (and a purge deleted it without
    a word): the live side was still offered for resolving against the gone one."""
    human = Caller.human()
    a = write(cairn, agent, "deploys are allowed on Fridays")
    b = write(cairn, agent, "never deploy on a Friday")
    rel = cairn.memories.mark_contradiction(agent, a, b, note="which one?")
    cairn.memories.forget(human, a, reason="wrong")
    (closed,) = cairn.memories.relations(human, b)
    assert (closed.id, closed.open, closed.resolution) == (rel.id, False, "forgotten")
    assert closed.resolved_by == human.actor
    assert cairn.memories.get(human, b).memory.status is Status.ACTIVE
    events = cairn.memories.changes_since(human, 0).changes
    assert ("resolve", b) in [(c.action, c.memory_id) for c in events]
    # an expired side, once purged, closes its contradictions the same way, on the record
    c = write(cairn, agent, "the release branch is frozen", ttl_seconds=60)
    d = write(cairn, agent, "the release branch is open for fixes")
    cairn.memories.mark_contradiction(agent, c, d)
    clock.advance(8 * 86400)
    assert cairn.memories.purge_expired() == 1
    assert cairn.memories.relations(human, d) == ()
    events = cairn.memories.changes_since(human, 0).changes
    assert [(e.action, e.memory_id) for e in events][-2:] == [("resolve", d), ("purge", c)]


def test_a_contradiction_keeps_only_an_active_memory_over_the_other(
    cairn: Cairn, agent: Caller
) -> None:
    """Resolving a contradiction in favour of a forgotten (or superseded) memory marked the live
    other side superseded by it: the live fact left search for good, and nothing showed why."""
    human = Caller.human()
    a = write(cairn, agent, "deploys are allowed on Fridays")
    b = write(cairn, agent, "never deploy on a Friday")
    rel = cairn.memories.mark_contradiction(agent, a, b)
    cairn.memories.forget(human, a)
    # a store from before 2026-11-30 still holds such a contradiction open
    cairn.store.writer.run(
        lambda tx: tx.conn.execute("UPDATE relation SET open = 1 WHERE id = ?", (rel.id,))
    )
    with pytest.raises(Conflict, match=f"memory {a} is forgotten") as refused:
        cairn.memories.resolve_contradiction(human, rel.id, "from")
    assert refused.value.data == {"id": a, "status": "forgotten", "field": "keep"}
    assert cairn.memories.get(human, b).memory.status is Status.ACTIVE
    assert cairn.memories.relations(human, b)[0].open
    c = write(cairn, agent, "the cache lives in /var/cache/app")
    d = write(cairn, agent, "the cache lives in /srv/cache")
    rel2 = cairn.memories.mark_contradiction(agent, c, d)
    cairn.memories.supersede(human, c, by_id=write(cairn, agent, "the cache lives in /tmp/app"))
    with pytest.raises(Conflict, match=f"memory {c} is superseded"):
        cairn.memories.resolve_contradiction(human, rel2.id, "from")
    assert cairn.memories.get(human, d).memory.status is Status.ACTIVE
    # keeping both (or the live side) still closes it
    assert cairn.memories.resolve_contradiction(human, rel.id, "both").resolution == "both"
    assert cairn.memories.resolve_contradiction(human, rel2.id, "to").resolution == "to"
    assert cairn.memories.get(human, d).memory.status is Status.ACTIVE


def test_a_memory_comes_back_when_its_replacement_expires_and_is_purged(
    cairn: Cairn, agent: Caller, clock: FakeClock
) -> None:
    """A memory superseded by a replacement with an expiry stayed superseded - by an id that no
    longer existed - once the replacement was purged: the fact left search for good, and nothing
    (archive, unarchive, supersede) could bring it back."""
    from core.search import SearchRequest

    human = Caller.human()
    old = write(cairn, agent, "the staging host is otter.internal")
    params = {"content": "staging is beaver.internal", "kind": "fact", "scope": "global"}
    replacement = WriteRequest.from_params({**params, "ttl_seconds": 3600})
    result = cairn.memories.supersede(human, old, replacement=replacement)
    assert isinstance(result, SupersedeResult)
    clock.advance(3600 + 8 * 86400)
    assert cairn.memories.purge_expired() == 1
    detail = cairn.memories.get(human, old, history=True)
    assert (detail.memory.status, detail.memory.superseded_by) == (Status.ACTIVE, None)
    last = detail.revisions[-1]
    assert last.action == "unsupersede" and result.new.id in (last.reason or ""), last
    assert cairn.memories.relations(human, old) == ()
    hits = cairn.search.search(agent, SearchRequest(query="staging host otter")).hits
    assert [h.memory.id for h in hits] == [old]


def test_a_memory_is_not_left_behind_a_forgotten_replacement(cairn: Cairn, agent: Caller) -> None:
    """Forgetting a replacement left what it had replaced superseded by the forgotten shell,
    hidden for good; a purge and a forget of a replacement should agree."""
    human = Caller.human()

    def supersede(old: str, by: str) -> None:
        assert isinstance(cairn.memories.supersede(human, old, by_id=by), SupersedeResult)

    # it comes back as it was before it was superseded: here archived
    old = write(cairn, agent, "the wiki is on Confluence")
    cairn.memories.set_archived(human, old, True)
    new = write(cairn, agent, "the wiki is on Notion")
    supersede(old, new)
    cairn.memories.forget(human, new, reason="wrong")
    memory = cairn.memories.get(human, old).memory
    assert (memory.status, memory.superseded_by) == (Status.ARCHIVED, None)
    # a replacement that was itself replaced hands what it superseded on to its own replacement
    a = write(cairn, agent, "builds use make")
    b = write(cairn, agent, "builds use cmake")
    c = write(cairn, agent, "builds use bazel")
    supersede(a, b)
    supersede(b, c)
    cairn.memories.forget(human, b)
    assert cairn.memories.get(human, a).memory.superseded_by == c
    assert [(r.kind.value, r.from_id) for r in cairn.memories.relations(human, a)] == [
        ("supersedes", c)
    ]
    # and a memory whose text was written again since stays superseded by that live copy
    x = write(cairn, agent, "lint with flake8")
    supersede(x, write(cairn, agent, "lint with ruff"))
    copy = write(cairn, agent, "lint with flake8")
    assert copy != x
    cairn.memories.forget(human, cairn.memories.get(human, x).memory.superseded_by or "")
    assert cairn.memories.get(human, x).memory.superseded_by == copy
    assert [m.id for m in cairn.memories.list(human).items if m.content == "lint with flake8"] == [
        copy
    ]


def test_a_purge_of_two_links_of_a_chain_hands_on_to_its_live_end(
    cairn: Cairn, agent: Caller, clock: FakeClock
) -> None:
    """A replaced by B, B by C, C by D; B and C expire and go in one purge. The purge looked one
    step ahead only: A's heir C was going too, so A came back active beside D, its current
    replacement, and search found both. Now A moves on to D, whatever order the purge took."""
    from core.search import SearchRequest

    human = Caller.human()
    for turn in ("first", "second"):
        a = write(cairn, agent, f"the {turn} build uses make")
        one = write(cairn, agent, f"the {turn} build uses cmake", ttl_seconds=60)
        two = write(cairn, agent, f"the {turn} build uses meson", ttl_seconds=60)
        d = write(cairn, agent, f"the {turn} build uses bazel")
        b, c = (one, two) if turn == "first" else (two, one)  # the purge meets B or C first
        for old, new in ((a, b), (b, c), (c, d)):
            assert isinstance(cairn.memories.supersede(human, old, by_id=new), SupersedeResult)
        clock.advance(60 + 8 * 86400)
        assert cairn.memories.purge_expired() == 2
        memory = cairn.memories.get(human, a).memory
        assert (memory.status, memory.superseded_by) == (Status.SUPERSEDED, d), turn
        assert [(r.kind.value, r.from_id) for r in cairn.memories.relations(human, a)] == [
            ("supersedes", d)
        ]
        hits = cairn.search.search(agent, SearchRequest(query=f"the {turn} build uses")).hits
        assert d in [h.memory.id for h in hits] and a not in [h.memory.id for h in hits], turn


def test_an_expired_memory_is_neither_kept_over_another_nor_a_replacement(
    cairn: Cairn, agent: Caller, clock: FakeClock
) -> None:
    """An expired memory (hidden, waiting for its purge) was accepted as the side to keep of a
    contradiction and as a replacement: the live memory became superseded by it, and search
    found neither. Now each is a conflict naming the expired memory, and nothing changes."""
    from core.search import SearchRequest

    human = Caller.human()
    a = write(cairn, agent, "standup is at nine", ttl_seconds=60)
    b = write(cairn, agent, "standup is at ten")
    rel = cairn.memories.mark_contradiction(human, a, b)
    x = write(cairn, agent, "lunch is at noon", ttl_seconds=60)
    y = write(cairn, agent, "lunch is at one")
    clock.advance(120)
    with pytest.raises(Conflict, match=f"memory {a} has expired") as refused:
        cairn.memories.resolve_contradiction(human, rel.id, "from")
    assert refused.value.data == {"id": a, "status": "active", "expired": True, "field": "keep"}
    assert cairn.memories.get(human, b).memory.status is Status.ACTIVE
    assert cairn.memories.relations(human, b)[0].open
    with pytest.raises(Conflict, match=f"memory {x} has expired") as refused:
        cairn.memories.supersede(human, y, by_id=x)
    assert refused.value.data == {"id": x, "status": "active", "expired": True, "field": "by"}
    assert cairn.memories.get(human, y).memory.status is Status.ACTIVE
    hits = cairn.search.search(agent, SearchRequest(query="standup lunch")).hits
    assert {h.memory.id for h in hits} == {b, y}
    # keeping the live side still closes it
    assert cairn.memories.resolve_contradiction(human, rel.id, "to").resolution == "to"


def test_an_expired_replacement_hides_nothing(
    cairn: Cairn, agent: Caller, clock: FakeClock, paths: Paths
) -> None:
    """A replacement that expired kept what it replaced hidden until its purge a week later, and
    forgetting B (which replaced A) handed A on to B's replacement C though C had expired: A
    stayed hidden behind a memory search does not find. Now an expired memory is never the heir
    (A comes back), and the janitor's round brings back what an expired replacement hides."""
    from core.janitor import Janitor
    from core.search import SearchRequest

    human = Caller.human()

    def supersede(old: str, by: str) -> None:
        assert isinstance(cairn.memories.supersede(human, old, by_id=by), SupersedeResult)

    def found(query: str) -> list[str]:
        return [h.memory.id for h in cairn.search.search(agent, SearchRequest(query=query)).hits]

    a = write(cairn, agent, "the office wifi is guestnet")
    b = write(cairn, agent, "the office wifi is staffnet")
    c = write(cairn, agent, "the office wifi is tempnet", ttl_seconds=60)
    supersede(a, b)
    supersede(b, c)
    old = write(cairn, agent, "the printer is on floor two")
    gone = write(cairn, agent, "the printer is on floor three", ttl_seconds=60)
    live = write(cairn, agent, "the printer is on floor four")
    replaced = write(cairn, agent, "the badge reader is at the west door")
    supersede(old, gone)
    supersede(replaced, gone)  # both replaced by one that expires...
    supersede(gone, live)  # ...and was itself replaced: what it replaced moves on to `live`
    lone = write(cairn, agent, "the kettle is in the kitchen")
    supersede(lone, write(cairn, agent, "the kettle is in room 4", ttl_seconds=60))
    clock.advance(120)
    cairn.memories.forget(human, b, reason="wrong")
    memory = cairn.memories.get(human, a).memory
    assert (memory.status, memory.superseded_by) == (Status.ACTIVE, None)
    assert found("office wifi") == [a]
    report = Janitor(cairn.store, cairn.memories, cairn.settings, paths).run()
    assert report.released == 3
    for mid in (old, replaced):
        assert cairn.memories.get(human, mid).memory.superseded_by == live
    detail = cairn.memories.get(human, lone, history=True)
    assert (detail.memory.status, detail.memory.superseded_by) == (Status.ACTIVE, None)
    assert detail.revisions[-1].action == "unsupersede"
    assert "expired" in (detail.revisions[-1].reason or "")
    assert found("kettle") == [lone]
    assert Janitor(cairn.store, cairn.memories, cairn.settings, paths).run().released == 0
    clock.advance(8 * 86400)
    assert cairn.memories.purge_expired() == 3
    assert cairn.memories.get(human, lone).memory.status is Status.ACTIVE


# -- listing ---------------------------------------------------------------------------------


def test_list_filters(cairn: Cairn, agent: Caller) -> None:
    human = Caller.human()
    p = write(cairn, agent, "project fact", scope="project", kind="fact", tags=["db"])
    u = write(cairn, agent, "user pref", scope="user", kind="preference")
    h = write(cairn, human, "human convention", kind="convention", tags=["db", "style"])
    x = write(cairn, agent, "extracted insight", kind="insight", origin="extracted")

    def ids(**kw: object) -> set[str]:
        return {m.id for m in cairn.memories.list(human, ListFilter(**kw)).items}  # type: ignore[arg-type]

    assert ids(scopes=frozenset({Scope.PROJECT})) == {p}
    assert ids(kinds=frozenset({"preference", "convention"})) == {u, h}
    assert ids(tiers=frozenset({Tier.HUMAN})) == {h}
    assert ids(tiers=frozenset({Tier.LLM})) == {x}
    assert ids(agents=frozenset({"agent-a"})) == {p, u, x}
    assert ids(tags=frozenset({"db"})) == {p, h}
    assert ids(tags=frozenset({"db", "style"})) == {h}
    assert ids(workspace_ids=frozenset({agent.workspace_id or ""})) == {p}


def test_list_pages_and_rejects_foreign_cursors(cairn: Cairn, agent: Caller) -> None:
    made = [write(cairn, agent, f"item {i}") for i in range(7)]
    first = cairn.memories.list(agent, limit=3)
    second = cairn.memories.list(agent, limit=3, cursor=first.next_cursor)
    third = cairn.memories.list(agent, limit=3, cursor=second.next_cursor)
    walked = [m.id for page in (first, second, third) for m in page.items]
    assert walked == list(reversed(made)) and third.next_cursor is None
    with pytest.raises(InvalidInput, match="different filters"):
        cairn.memories.list(agent, ListFilter(kinds=frozenset({"fact"})), cursor=first.next_cursor)
    with pytest.raises(InvalidInput, match="not one Cairn issued"):
        cairn.memories.list(agent, cursor="garbage!")
    with pytest.raises(InvalidInput, match="limit"):
        cairn.memories.list(agent, limit=0)


def test_write_many_lands_the_valid_and_reports_the_invalid(cairn: Cairn, agent: Caller) -> None:
    reqs = [
        WriteRequest(content="one", kind="fact", scope=Scope.GLOBAL),
        WriteRequest(content="", kind="fact", scope=Scope.GLOBAL),
        WriteRequest(content="three", kind="fact", scope=Scope.GLOBAL),
    ]
    out = cairn.memories.write_many(agent, reqs)
    assert isinstance(out[1], InvalidInput)
    assert [getattr(o, "status", None) for o in (out[0], out[2])] == [WriteStatus.STORED] * 2
    assert {m.content for m in cairn.memories.list(agent).items} == {"one", "three"}


def test_agents_cannot_change_or_forget_a_persons_words(cairn: Cairn, agent: Caller) -> None:
    """Whatever the capture policy: an agent's change to a person's memory waits for the person
    (the review queue is tested in test_governance.py); pinning and archiving are refused."""
    from core.errors import Forbidden

    mine = cairn.memories.write(
        Caller.human(), WriteRequest(content="my own note", kind="fact", scope=Scope.GLOBAL)
    )
    assert mine.id is not None
    mid = mine.id
    theirs = write(cairn, agent, "the agent's note")
    attempts: list[Callable[[], object]] = [
        lambda: cairn.memories.update(agent, UpdateRequest(id=mid, if_revision=1, content="x")),
        lambda: cairn.memories.supersede(agent, mid, by_id=theirs),
        lambda: cairn.memories.forget(agent, mid),
    ]
    for attempt in attempts:
        result = attempt()
        assert getattr(result, "status", None) is WriteStatus.PENDING, result
    refusals: list[Callable[[], object]] = [
        lambda: cairn.memories.set_pinned(agent, mid, True),
        lambda: cairn.memories.set_archived(agent, mid, True),
    ]
    for refused in refusals:
        with pytest.raises(Forbidden, match="only a person can pin or archive"):
            refused()
    after = cairn.memories.get(Caller.human(), mid)
    assert (after.memory.revision, after.memory.content) == (1, "my own note")
    # flagging stays open to agents, and a person's memory can supersede an agent's
    cairn.memories.feedback(agent, mid, "stale")
    cairn.memories.mark_contradiction(agent, theirs, mid)
    cairn.memories.supersede(agent, theirs, by_id=mid)


def test_the_refusal_of_forgotten_text_names_who_forgot_it(cairn: Cairn, agent: Caller) -> None:
    """An agent that forgot its own memory and writes the text again is refused - but not with
    "a person forgot this memory": the tombstone says who did."""
    plain = write(cairn, agent, "the build cache lives in /var/cache/ci")
    keyed = write(cairn, agent, "deploy target is blue", dedupe_key="deploy-target")
    theirs = write(cairn, agent, "the office plant is a fern")
    for mid in (plain, keyed):
        gone = cairn.memories.forget(agent, mid)
        assert isinstance(gone, Tombstone) and gone.forgotten_by == "agent-a", gone
    cairn.memories.forget(Caller.human(), theirs)

    def refusal(content: str, **fields: object) -> str:
        params = {"content": content, "kind": "fact", "scope": "global", **fields}
        req = WriteRequest.from_params(params)
        one = cairn.memories.write(agent, req)
        [many] = cairn.memories.write_many(agent, [req])
        for result in (one, many):
            assert isinstance(result, WriteResult), result
            assert (result.status, result.reason_code) == (WriteStatus.REFUSED, "forgotten")
        assert isinstance(many, WriteResult) and many.reason == one.reason
        assert one.reason is not None
        return one.reason

    mine = refusal("the build cache lives in /var/cache/ci")
    assert "person" not in mine and "agent-a forgot this memory" in mine, mine
    assert "agent-a forgot" in refusal("deploy target is green", dedupe_key="deploy-target")
    assert refusal("the office plant is a fern").startswith("a person forgot this memory")


def test_housekeeping_frees_what_a_store_from_before_left_stranded(
    cairn: Cairn, agent: Caller, paths: Paths
) -> None:
    """Before 2026-11-30 a purge or a forget of a replacement left what it replaced superseded
    by an id that was gone or forgotten (hidden for good), and a forget left contradictions
    open against the forgotten side. The janitor's round frees them, as forget and purge now
    do themselves; a second round finds nothing."""
    from core.janitor import Janitor

    human = Caller.human()
    purged_one = write(cairn, agent, "the staging host is otter.internal")
    gone = write(cairn, agent, "staging is beaver.internal")
    kept_copy = write(cairn, agent, "the build cache is on nfs")
    forgotten_one = write(cairn, agent, "the build cache is in s3")
    for old, new in ((purged_one, gone), (kept_copy, forgotten_one)):
        assert isinstance(cairn.memories.supersede(human, old, by_id=new), SupersedeResult)
    disputed = write(cairn, agent, "deploys are allowed on Fridays")
    rel = cairn.memories.mark_contradiction(agent, disputed, forgotten_one)

    def as_before(tx: WriteTx) -> None:  # what the old purge and forget left behind
        tx.conn.execute("DELETE FROM relation WHERE from_id = ? OR to_id = ?", (gone, gone))
        tx.conn.execute("DELETE FROM memory WHERE id = ?", (gone,))
        tx.conn.execute(
            "UPDATE memory SET status = 'forgotten', content = '' WHERE id = ?", (forgotten_one,)
        )

    cairn.store.writer.run(as_before)
    report = Janitor(cairn.store, cairn.memories, cairn.settings, paths).run()
    assert report.released == 3  # two memories back, one contradiction closed
    for mid in (purged_one, kept_copy):
        detail = cairn.memories.get(human, mid, history=True)
        assert (detail.memory.status, detail.memory.superseded_by) == (Status.ACTIVE, None)
        assert detail.revisions[-1].action == "unsupersede"
    (closed,) = cairn.memories.relations(human, disputed)
    assert closed.id == rel.id and not closed.open and closed.resolution == "forgotten"
    again = Janitor(cairn.store, cairn.memories, cairn.settings, paths).run()
    assert again.released == 0


def test_a_reason_or_note_with_an_escape_sequence_is_refused(cairn: Cairn, agent: Caller) -> None:
    """Reasons and notes are shown to the person at a terminal: one holding `\\x1b[2J` cleared
    the screen there (text fields of a memory already refused control characters)."""
    mid = write(cairn, agent, "the build uses make")
    other = write(cairn, agent, "the build uses bazel")
    with pytest.raises(InvalidInput, match=r"field 'reason' contains a control character"):
        cairn.memories.forget(Caller.human(), mid, reason="old \x1b[2J")
    with pytest.raises(InvalidInput, match=r"field 'note' contains a control character"):
        cairn.memories.mark_contradiction(agent, mid, other, note="see \x07")
    assert cairn.memories.get(Caller.human(), mid).memory.status is Status.ACTIVE
    assert cairn.memories.relations(Caller.human(), mid) == ()


def test_an_expired_memory_cannot_be_marked_as_contradicting(
    cairn: Cairn, agent: Caller, clock: FakeClock
) -> None:
    """A contradiction with an expired side was taken: hidden already, it stayed open until
    the purge, and marked the live side disputed meanwhile."""
    live = write(cairn, agent, "deploys go out on tuesdays")
    going = write(cairn, agent, "deploys go out on fridays", ttl_seconds=60)
    clock.advance(120)
    with pytest.raises(Conflict, match=f"memory {going} has expired") as caught:
        cairn.memories.mark_contradiction(agent, live, going)
    assert caught.value.data == {"id": going, "expired": True}
    assert cairn.memories.relations(Caller.human(), live) == ()
