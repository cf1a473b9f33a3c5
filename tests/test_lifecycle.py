"""Memories over time: the janitor archives unused project memories (never pinned ones, later
for important ones), ended sessions' scratch memories expire and are purged, and workspaces
move, merge and warn when their folder is gone."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from core.app import Cairn
from core.errors import Conflict, Forbidden, InvalidInput
from core.janitor import Janitor
from core.model import Caller, Scope, Status, Surface, WriteStatus
from core.paths import Paths
from core.requests import WriteRequest
from core.runtime import socket_path
from core.search import SearchRequest
from tests.conftest import FakeClock
from tests.serving import RawClient, paths_for, served_in_thread
from tests.test_cli_serving import at_terminal

DAY = 86_400


def write(app: Cairn, caller: Caller, content: str, **fields: object) -> str:
    params: dict[str, object] = {"content": content, "kind": "fact", "scope": "project", **fields}
    result = app.memories.write(caller, WriteRequest.from_params(params))
    assert result.status is WriteStatus.STORED and result.id is not None, result
    return result.id


def status_of(app: Cairn, mid: str) -> Status:
    return app.memories.get(Caller.human(), mid).memory.status


def janitor(app: Cairn) -> Janitor:
    return Janitor(app.store, app.memories, app.settings, app.paths, lifecycle=app.lifecycle)


def test_unused_project_memories_are_archived_never_deleted(
    cairn: Cairn, agent: Caller, clock: FakeClock
) -> None:
    plain = write(cairn, agent, "the old build used make")
    used = write(cairn, agent, "the heron service listens on 8080")
    pinned = write(cairn, agent, "never force-push main", pinned=True)
    important = write(cairn, agent, "production runs in eu-west-1", importance=5)
    everywhere = write(cairn, agent, "the user prefers metric", scope="user", kind="preference")
    clock.advance(100 * DAY)
    cairn.search.search(agent, SearchRequest(query="heron service"))  # a recall keeps it alive
    cairn.usage.flush()
    clock.advance(90 * DAY)
    report = janitor(cairn).run()
    assert report.lifecycle is not None and report.lifecycle.archived == 1
    assert status_of(cairn, plain) is Status.ARCHIVED
    for kept in (used, pinned, important, everywhere):
        assert status_of(cairn, kept) is Status.ACTIVE
    clock.advance(190 * DAY)
    janitor(cairn).run()
    assert status_of(cairn, important) is Status.ARCHIVED  # twice as long for importance 5
    assert status_of(cairn, pinned) is Status.ACTIVE
    revisions = cairn.memories.get(Caller.human(), plain, history=True).revisions
    assert revisions[-1].action == "archive" and revisions[-1].actor == "system"
    archived = cairn.search.search(
        agent, SearchRequest(query="old build make", include_history=True)
    )
    assert plain in [h.memory.id for h in archived.hits]  # still there when asked for


def test_an_ended_sessions_scratch_memories_expire_then_go(
    cairn: Cairn, agent: Caller, clock: FakeClock
) -> None:
    scratch = write(cairn, agent, "scratch: try the -O2 build", scope="session")
    live = Caller(Surface.AGENT, agent="other", workspace_id=agent.workspace_id, session_id="s-2")
    ongoing = write(cairn, live, "scratch: still working on it", scope="session")
    cairn.lifecycle.session_seen("s-1", agent.workspace_id)
    cairn.lifecycle.session_seen("s-2", agent.workspace_id)
    clock.advance(8 * DAY)
    report = janitor(cairn).run(live_sessions=frozenset({"s-2"}))
    assert report.lifecycle is not None
    assert (report.lifecycle.sessions_ended, report.lifecycle.session_memories_expiring) == (1, 1)
    expired = cairn.memories.get(Caller.human(), scratch).memory
    assert expired.expired and expired.status is Status.ACTIVE
    assert cairn.memories.get(Caller.human(), ongoing).memory.expires_at is None
    assert scratch not in [
        h.memory.id for h in cairn.search.search(agent, SearchRequest(query="scratch build")).hits
    ]
    clock.advance(8 * DAY)  # past lifecycle.expired_retention_days
    assert janitor(cairn).run().purged == 1
    with pytest.raises(Exception, match="not found"):
        cairn.memories.get(Caller.human(), scratch)


def test_a_gone_folder_that_held_no_memory_is_no_warning(
    cairn: Cairn, agent: Caller, short_tmp: Path
) -> None:
    """Every connection registers its folder: an agent that only searched in a temporary clone
    left a standing "workspace folders no longer exist" warning with nothing to move."""
    clone = short_tmp / "tmp-clone"
    clone.mkdir()
    cairn.workspaces.resolve(str(clone))
    clone.rmdir()
    assert cairn.lifecycle.check_workspaces() == 0
    assert "missing_workspaces" not in cairn.warnings.snapshot()


def test_a_moved_project_keeps_its_memories(cairn: Cairn, agent: Caller, short_tmp: Path) -> None:
    old = short_tmp / "proj"  # the `agent` fixture's workspace
    mid = write(cairn, agent, "the repo uses pnpm")
    new = short_tmp / "moved-proj"
    old.rename(new)
    assert cairn.lifecycle.check_workspaces() == 1
    assert "cairn workspace move" in cairn.warnings.snapshot()["missing_workspaces"]
    with pytest.raises(Forbidden):
        cairn.lifecycle.move_workspace(agent, str(old), str(new))
    moved = cairn.lifecycle.move_workspace(Caller.human(), str(old), str(new))
    assert moved["id"] == agent.workspace_id
    assert "missing_workspaces" not in cairn.warnings.snapshot()
    again = cairn.workspaces.resolve(str(new))
    assert again.id == agent.workspace_id
    reader = Caller(Surface.AGENT, agent="a", workspace_id=again.id)
    assert cairn.memories.get(reader, mid).memory.content == "the repo uses pnpm"


def test_merging_workspaces_rebinds_with_a_revision_and_reports_what_stayed(
    cairn: Cairn, agent: Caller, short_tmp: Path
) -> None:
    other_dir = short_tmp / "clone"
    other_dir.mkdir()
    other = cairn.workspaces.resolve(str(other_dir))
    b = Caller(Surface.AGENT, agent="agent-a", verified=True, workspace_id=other.id)
    in_a = write(cairn, agent, "build with make", dedupe_key="build")
    in_b = write(cairn, b, "build with ninja", dedupe_key="build")
    plain = write(cairn, b, "tests live in t/")
    with pytest.raises(Conflict):
        cairn.lifecycle.move_workspace(Caller.human(), str(other_dir), str(short_tmp / "proj"))
    result = cairn.lifecycle.merge_workspaces(
        Caller.human(), str(other_dir), str(short_tmp / "proj")
    )
    assert result["moved"] == 1 and [k["id"] for k in result["kept"]] == [in_b]
    moved = cairn.memories.get(Caller.human(), plain, history=True)
    assert moved.memory.workspace_id == agent.workspace_id
    assert moved.revisions[-1].action == "rebind" and moved.revisions[-2].workspace_id == other.id
    assert cairn.memories.get(Caller.human(), in_a).memory.workspace_id == agent.workspace_id
    listed = {w["id"]: w for w in cairn.lifecycle.workspaces(Caller.human())}
    assert listed[other.id]["memories"] == 1  # the dedupe clash stayed behind


@pytest.mark.parametrize("settled_by", ["forget", "supersede"])
def test_a_kept_memory_settled_by_the_person_moves_at_the_next_merge(
    cairn: Cairn, agent: Caller, short_tmp: Path, settled_by: str
) -> None:
    """A merge keeps a memory whose dedupe key a memory of the target holds (one key, one
    memory, per workspace). The person settled the clash as the report invited - forgot the
    kept one, or superseded it by the target's - and merged again: the merge failed with an
    internal error ("UNIQUE constraint failed: index 'memory_dedupe'": the forgotten shell was
    moved with its key), or reported "moved 0" and kept the superseded memory behind, with the
    workspace, for good. Now a memory that is history gives up its key to the target's memory
    and moves; the report says which memory holds the key and how to settle it."""
    other_dir = short_tmp / "clone"
    other_dir.mkdir()
    other = cairn.workspaces.resolve(str(other_dir))
    b = Caller(Surface.AGENT, agent="agent-a", verified=True, workspace_id=other.id)
    holder = write(cairn, agent, "build with make", dedupe_key="build")
    clash = write(cairn, b, "build with ninja", dedupe_key="build")
    first = cairn.lifecycle.merge_workspaces(
        Caller.human(), str(other_dir), str(short_tmp / "proj")
    )
    assert first["moved"] == 0 and [k["id"] for k in first["kept"]] == [clash]
    assert first["kept"][0]["reason"] == (
        f"memory {holder} there holds the same dedupe key; forget or supersede one of the two, "
        "then merge again"
    )
    if settled_by == "forget":
        cairn.memories.forget(Caller.human(), clash, reason="the make one is right")
    else:
        cairn.memories.supersede(Caller.human(), clash, by_id=holder)
    again = cairn.lifecycle.merge_workspaces(
        Caller.human(), str(other_dir), str(short_tmp / "proj")
    )
    assert (again["moved"], again["kept"]) == (1 if settled_by == "supersede" else 0, [])
    assert [w["id"] for w in cairn.lifecycle.workspaces(Caller.human())] == [agent.workspace_id]
    row = cairn.store.read_db.conn().execute(
        "SELECT workspace_id, dedupe_key FROM memory WHERE id = ?", (clash,)
    )
    assert row.fetchone() == (agent.workspace_id, None)
    keyed = cairn.memories.write(
        agent,
        WriteRequest.from_params(
            {
                "content": "build with bazel",
                "kind": "fact",
                "scope": "project",
                "dedupe_key": "build",
            }
        ),
    )
    assert keyed.id == holder and keyed.status is WriteStatus.STORED  # the key is the holder's


def test_moving_a_workspace_from_inside_its_new_folder(short_tmp: Path) -> None:
    """A person who moved their repository runs `cairn workspace move` from where it is now:
    that folder must not be registered as a workspace of its own on the way."""
    home = short_tmp / "home"
    old, new = short_tmp / "billing", short_tmp / "billing-service"
    old.mkdir()
    paths = paths_for(home)
    app = Cairn.open(paths)
    try:
        ws = app.workspaces.resolve(str(old)).id
        me = Caller(Surface.HUMAN, workspace_id=ws)
        mid = write(app, me, "refunds take five days")
    finally:
        app.close()
    old.rename(new)
    with served_in_thread(paths) as runtime:
        status, shown = at_terminal(home, "workspace", "move", ws, str(new), typed="move", cwd=new)
        assert status == 0, shown
        assert f"{ws} now lives at {new}" in shown
        assert runtime.cairn is not None
        moved = runtime.cairn.memories.get(Caller.human(), mid).memory
        assert moved.workspace_id == ws
        assert [w["path"] for w in runtime.cairn.lifecycle.workspaces(Caller.human())] == [str(new)]


def test_moving_onto_another_workspaces_folder_is_refused_before_asking(short_tmp: Path) -> None:
    """`cairn workspace move a b`, with b a workspace of its own, asked the person to type
    `move` and only then was refused ("b is already a workspace", exit 67); given by its id, a
    workspace moved onto its own folder was refused after asking as "already a workspace; use
    merge" - merge it with itself?"""
    home = short_tmp / "home"
    a_dir, b_dir = short_tmp / "a", short_tmp / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    paths = paths_for(home)
    app = Cairn.open(paths)
    try:
        a = app.workspaces.resolve(str(a_dir)).id
        b = app.workspaces.resolve(str(b_dir)).id
    finally:
        app.close()
    with served_in_thread(paths) as runtime:
        status, shown = at_terminal(home, "workspace", "move", a, str(b_dir), typed="move")
        assert status == 67 and "Type " not in shown, shown
        assert f"{b_dir} is already a workspace ({b}); use `cairn workspace merge`" in shown
        status, shown = at_terminal(home, "workspace", "move", a, str(a_dir), typed="move")
        assert status == 65 and "Type " not in shown, shown
        assert f"workspace {a} is already at {a_dir}: nothing to move" in shown
        assert runtime.cairn is not None
        listed = {w["id"]: w["path"] for w in runtime.cairn.lifecycle.workspaces(Caller.human())}
        assert listed == {a: str(a_dir), b: str(b_dir)}
        with pytest.raises(InvalidInput, match="is already at"):  # the service says the same
            runtime.cairn.lifecycle.move_workspace(Caller.human(), a, str(a_dir))


def test_the_file_is_checked_once_a_day_not_again_right_after_opening(
    paths: Paths, clock: FakeClock
) -> None:
    """Opening a store runs quick_check; housekeeping repeats it daily, not at its first round
    (on a large store that is a second full read at every start)."""
    Cairn.open(paths, clock=clock).close()  # a store that exists: the next open checks it
    cairn = Cairn.open(paths, clock=clock)
    try:
        checks: list[str] = []
        cairn.store.read_db.conn().set_trace_callback(
            lambda sql: checks.append(sql) if "quick_check" in sql else None
        )
        janitor(cairn).run()
        assert checks == []
        clock.advance(DAY + 1)
        janitor(cairn).run()
        assert len(checks) == 1
        assert "integrity" not in cairn.warnings.snapshot()
    finally:
        cairn.close()


def test_the_daily_check_runs_after_the_clock_was_set_back(paths: Paths, clock: FakeClock) -> None:
    """Cairn started while the clock read 2100 (a wrong clock battery), then the clock was set
    right. Until 2026-12-01 the daily quick_check waited for the clock to reach 2100 again: a
    damaged file was never reported while that Cairn ran. A check dated in the future now counts
    as due."""
    Cairn.open(paths, clock=clock).close()
    right = clock.now
    clock.now = 4_102_444_800_000  # 2100-01-01
    cairn = Cairn.open(paths, clock=clock)  # checks the file, at "2100"
    try:
        checks: list[str] = []
        cairn.store.read_db.conn().set_trace_callback(
            lambda sql: checks.append(sql) if "quick_check" in sql else None
        )
        clock.now = right + 3600_000  # set right
        janitor(cairn).run()
        assert len(checks) == 1
        clock.advance(3600)
        janitor(cairn).run()
        assert len(checks) == 1  # once: then daily again
        clock.advance(DAY)
        janitor(cairn).run()
        assert len(checks) == 2
    finally:
        cairn.close()


def test_a_keyed_memory_merged_in_is_updated_by_its_key_afterwards(
    cairn: Cairn, agent: Caller, short_tmp: Path
) -> None:
    """A memory with a dedupe key, merged into another workspace, is that workspace's memory for
    the key: the next write with the key is a new revision of it, not a second memory (or an
    error from the key's uniqueness)."""
    other_dir = short_tmp / "clone"
    other_dir.mkdir()
    other = cairn.workspaces.resolve(str(other_dir))
    b = Caller(Surface.AGENT, agent="agent-a", verified=True, workspace_id=other.id)
    keyed = write(cairn, b, "deploy target is blue", dedupe_key="deploy-target")
    cairn.lifecycle.merge_workspaces(Caller.human(), str(other_dir), str(short_tmp / "proj"))
    again = cairn.memories.write(
        agent,
        WriteRequest.from_params(
            {
                "content": "deploy target is green",
                "kind": "fact",
                "scope": "project",
                "dedupe_key": "deploy-target",
            }
        ),
    )
    assert again.status is WriteStatus.STORED and again.id == keyed and again.revision == 3


def test_what_was_forgotten_in_a_merged_workspace_stays_forgotten_in_the_one_it_joined(
    cairn: Cairn, agent: Caller, short_tmp: Path
) -> None:
    """The merge moves forgotten memories' shells along; their tombstones follow them, so an
    agent cannot write the forgotten text again into the workspace it was merged into."""
    other_dir = short_tmp / "clone"
    other_dir.mkdir()
    other = cairn.workspaces.resolve(str(other_dir))
    b = Caller(Surface.AGENT, agent="agent-a", verified=True, workspace_id=other.id)
    gone = write(cairn, b, "the staging password is on the whiteboard")
    cairn.memories.forget(Caller.human(), gone, reason="not ours to keep")
    cairn.lifecycle.merge_workspaces(Caller.human(), str(other_dir), str(short_tmp / "proj"))
    again = cairn.memories.write(
        agent,
        WriteRequest.from_params(
            {
                "content": "the staging password is on the whiteboard",
                "kind": "fact",
                "scope": "project",
            }
        ),
    )
    assert again.status is WriteStatus.REFUSED and again.reason_code == "forgotten", again
    row = cairn.store.read_db.conn().execute(
        "SELECT workspace_id FROM tombstone WHERE memory_id = ?", (gone,)
    )
    assert row.fetchone()[0] == agent.workspace_id


def test_merging_by_relative_folder_names_acts_on_the_persons_folder(short_tmp: Path) -> None:
    """`cairn workspace merge a b` typed in a project folder folds that folder's `a` into its
    `b`. Before, the names went to the running Cairn as typed and were read from the folder it
    was started in: another project's `a` and `b` were merged, or (Cairn started elsewhere) the
    command failed after the typed confirmation with "no workspace 'a'"."""
    home = short_tmp / "home"
    here = short_tmp / "here"
    for name in ("a", "b"):
        (here / name).mkdir(parents=True)
    paths = paths_for(home)
    app = Cairn.open(paths)
    try:
        a = app.workspaces.resolve(str(here / "a")).id
        b = app.workspaces.resolve(str(here / "b")).id
        mid = write(app, Caller(Surface.HUMAN, workspace_id=a), "the a service owns refunds")
    finally:
        app.close()
    with served_in_thread(paths) as runtime:  # started in the test's folder, not in `here`
        status, shown = at_terminal(home, "workspace", "merge", "a", "b", typed="merge", cwd=here)
        assert status == 0, shown
        assert f"Merge workspace {here / 'a'} into {here / 'b'}?" in shown
        assert f"moved 1 memory from {here / 'a'} into {here / 'b'}" in shown
        assert runtime.cairn is not None
        assert runtime.cairn.memories.get(Caller.human(), mid).memory.workspace_id == b
        # a move onto itself is refused before the confirmation (it was after it, exit 67)
        status, shown = at_terminal(home, "workspace", "move", "b", "b/", typed="", cwd=here)
        assert status == 65 and "Type " not in shown, shown
        assert f"workspace {here / 'b'} is already at {here / 'b'}: nothing to move" in shown


def test_the_service_refuses_a_relative_workspace_path(
    cairn: Cairn, agent: Caller, short_tmp: Path
) -> None:
    """The socket is a door besides the CLI: a relative path sent to workspace.merge or
    workspace.move is refused, naming it, rather than read from the folder Cairn was started
    in (before, `proj` merged whatever `./proj` was there, or was "no workspace")."""
    other_dir = short_tmp / "clone"
    other_dir.mkdir()
    cairn.workspaces.resolve(str(other_dir))
    with pytest.raises(InvalidInput, match="'clone' is a relative path") as refused:
        cairn.lifecycle.merge_workspaces(Caller.human(), "clone", str(short_tmp / "proj"))
    assert refused.value.data == {"field": "workspace", "ref": "clone"}
    with pytest.raises(InvalidInput, match="'proj' is a relative path"):
        cairn.lifecycle.merge_workspaces(Caller.human(), str(other_dir), "proj")
    with pytest.raises(InvalidInput, match=r"'\./proj' is a relative path"):
        cairn.lifecycle.move_workspace(Caller.human(), "./proj", str(other_dir))


def test_after_a_merge_a_memorys_events_are_caught_up_where_it_lives_now(
    cairn: Cairn, agent: Caller, short_tmp: Path
) -> None:
    """docs/protocol.md: `changes.since` reads where each memory lives now, a push where it lived
    when it was sent; after a merge the two differ for the moved memory's earlier events."""
    from core.changes import ChangeSet
    from core.subscriptions import visible_change

    other_dir = short_tmp / "clone"
    other_dir.mkdir()
    other = cairn.workspaces.resolve(str(other_dir))
    b = Caller(Surface.AGENT, agent="agent-a", verified=True, workspace_id=other.id)
    seen: list[ChangeSet] = []
    cairn.bus.subscribe(seen.append)
    start = cairn.store.committed_seq
    moved = write(cairn, b, "tests live in t/")
    cairn.lifecycle.merge_workspaces(Caller.human(), str(other_dir), str(short_tmp / "proj"))

    def seen_by(caller: Caller) -> list[tuple[str, str | None]]:
        return [
            (c.action, c.memory_id) for s in seen for c in s.changes if visible_change(caller, c)
        ]

    def caught_up(caller: Caller) -> list[tuple[str, str | None]]:
        return [
            (c.action, c.memory_id) for c in cairn.memories.changes_since(caller, start).changes
        ]

    assert seen_by(b) == [("write", moved)]  # live, the write was in b's workspace
    assert seen_by(agent) == [("rebind", moved)]  # the move was pushed where it went
    assert caught_up(agent) == [("write", moved), ("rebind", moved)]
    assert caught_up(b) == []


def test_after_a_scope_is_widened_its_earlier_events_are_caught_up_by_who_sees_it_now(
    cairn: Cairn, agent: Caller, short_tmp: Path
) -> None:
    """docs/protocol.md: a project memory widened to user scope by a person - an agent of
    another workspace was pushed none of its earlier events, and catches them up now (it can
    read the memory and its history)."""
    from core.changes import ChangeSet
    from core.requests import UpdateRequest
    from core.subscriptions import visible_change

    other_dir = short_tmp / "other"
    other_dir.mkdir()
    other = cairn.workspaces.resolve(str(other_dir))
    b = Caller(Surface.AGENT, agent="agent-b", verified=True, workspace_id=other.id)
    seen: list[ChangeSet] = []
    cairn.bus.subscribe(seen.append)
    start = cairn.store.committed_seq
    mid = write(cairn, agent, "deploys go through the staging cluster first")
    cairn.memories.update(Caller.human(), UpdateRequest(id=mid, if_revision=1, scope=Scope.USER))
    pushed = [(c.action, c.memory_id) for s in seen for c in s.changes if visible_change(b, c)]
    caught_up = [(c.action, c.memory_id) for c in cairn.memories.changes_since(b, start).changes]
    assert pushed == [("update", mid)]
    assert caught_up == [("write", mid), ("update", mid)]
    history = cairn.memories.get(b, mid, history=True).revisions
    assert [r.revision for r in history] == [1, 2]


def test_a_merge_leaves_a_sessions_scratch_with_its_session(short_tmp: Path) -> None:
    """docs/protocol.md: the same session id in another workspace is another session. A merge
    moved session memories too, keeping their session id: agent `bb`, in the target's session
    "default", could then read and find what agent `aa` had noted in the merged workspace's
    session "default". Now a session memory stays with its session (reported as kept) and its
    agent still sees it; the rest moves."""
    home, a_dir, b_dir = short_tmp / "h", short_tmp / "a", short_tmp / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    with (
        served_in_thread(paths_for(home), confirm_human=lambda _s: None) as runtime,
        contextlib.ExitStack() as clients,
    ):

        def connect(**hello: Any) -> RawClient:
            c = RawClient(socket_path(runtime.paths))
            clients.callback(c.close)
            assert "result" in c.hello(**hello)
            return c

        aa = connect(agent="aa", workspace=str(a_dir), session="default")
        bb = connect(agent="bb", workspace=str(b_dir), session="default")
        scratch_text = "aa private scratch: the staging password rotation is tomorrow"
        scratch = aa.request(
            "memory.write", {"content": scratch_text, "kind": "fact", "scope": "session"}
        )["result"]["id"]
        shared = aa.request(
            "memory.write",
            {"content": "the a service owns refunds", "kind": "fact", "scope": "project"},
        )["result"]["id"]
        person = connect(role="human")
        merged = person.request("workspace.merge", {"workspace": str(a_dir), "into": str(b_dir)})

        assert bb.request("memory.get", {"id": shared})["result"]["content"]  # the project's
        refused = bb.request("memory.get", {"id": scratch})
        assert refused.get("error", {}).get("data", {}).get("error") == "not_found", refused
        found = bb.request("memory.search", {"query": "staging password rotation"})["result"]
        assert scratch not in json.dumps(found)

        result = merged["result"]
        assert result["moved"] == 1, result
        assert [k["id"] for k in result["kept"]] == [scratch], result
        assert "stays with its session" in result["kept"][0]["reason"]
        assert aa.request("memory.get", {"id": scratch})["result"]["content"] == scratch_text
        again = connect(agent="aa", workspace=str(a_dir), session="default")
        assert again.request("memory.get", {"id": scratch})["result"]["content"] == scratch_text


def test_a_merged_workspace_goes_once_its_sessions_scratch_has(
    cairn: Cairn, agent: Caller, short_tmp: Path, clock: FakeClock
) -> None:
    """A session memory kept behind by a merge expires with its session and is purged; the next
    merge then finds the workspace empty and removes it."""
    other_dir = short_tmp / "clone"
    other_dir.mkdir()
    other = cairn.workspaces.resolve(str(other_dir))
    b = Caller(Surface.AGENT, agent="agent-a", workspace_id=other.id, session_id="s-1")
    scratch = write(cairn, b, "scratch: try the -O2 build", scope="session")
    cairn.lifecycle.session_seen("s-1", other.id)
    first = cairn.lifecycle.merge_workspaces(
        Caller.human(), str(other_dir), str(short_tmp / "proj")
    )
    assert (first["moved"], [k["id"] for k in first["kept"]]) == (0, [scratch])
    assert cairn.memories.get(Caller.human(), scratch).memory.workspace_id == other.id
    clock.advance(8 * DAY)
    janitor(cairn).run()  # the session ended: its scratch expires
    clock.advance(8 * DAY)
    assert janitor(cairn).run().purged == 1
    again = cairn.lifecycle.merge_workspaces(
        Caller.human(), str(other_dir), str(short_tmp / "proj")
    )
    assert (again["moved"], again["kept"]) == (0, [])
    assert [w["id"] for w in cairn.lifecycle.workspaces(Caller.human())] == [agent.workspace_id]
