"""Cairn's own stamps under a wrong clock: a recall, a hello and a proposal seen while the clock
read 1970 leave no time behind; times after now (the clock ran ahead, then was set right, or was
set back while Cairn was stopped) count as now from the next steady housekeeping round, so they
rank and age from there instead of staying newest for years."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.agents import Identity
from core.app import Cairn
from core.janitor import Janitor
from core.model import Caller, Scope, Status, Surface
from core.paths import Paths
from core.policy import Mode
from core.requests import WriteRequest
from tests.conftest import FakeClock, open_policy
from tests.test_clock import (
    DAY_S,
    DEC_1_2026,
    JAN_2_1970,
    SHORT,
    YEAR_2100,
    FakeBoot,
    Scene,
    acted,
)

HOUR_MS = 3_600_000


@pytest.fixture
def scene(paths: Paths, workspace_dir: Path) -> Iterator[Scene]:
    # a queue of ten proposals at most, the least the settings allow
    settings = SHORT.with_values(review__max_items=10)
    s = Scene(paths, workspace_dir, FakeClock(DEC_1_2026), FakeBoot(), settings)
    try:
        yield s
    finally:
        s.app.close()


def agent_of(s: Scene, workspace_dir: Path) -> Caller:
    ws = s.app.workspaces.resolve(str(workspace_dir))
    return Caller(Surface.AGENT, agent="agent-a", workspace_id=ws.id, session_id="s-1")


def recalled(s: Scene, memory_id: str) -> None:
    s.app.memories.record_recall([memory_id])
    s.app.usage.flush()


def last_used(s: Scene, memory_id: str) -> int | None:
    return s.app.memories.get(Caller.human(), memory_id).memory.last_recalled_at


def agent_seen(s: Scene) -> int | None:
    return next(a.last_seen_at for a in s.app.agents.list() if a.name == "agent-a")


def scratch_expires(s: Scene) -> int | None:
    m = s.app.memories.get(Caller.human(), s.ids[2]).memory
    assert m.scope is Scope.SESSION
    return m.expires_at


def propose(s: Scene, agent: Caller, text: str) -> str:
    result = s.app.memories.write(
        agent, WriteRequest.from_params({"content": text, "kind": "idea", "scope": "project"})
    )
    assert result.suggestion_id is not None, result
    return result.suggestion_id


def test_a_recall_and_a_hello_at_1970_leave_no_time_behind(
    scene: Scene, workspace_dir: Path
) -> None:
    """A recall and a session's and an agent's hello while the clock reads 1970-01-02: the
    memory's "last used" and the agent's "last seen" keep the times they had (the recall still
    counts; one never used before read "last used 1970-01-02" until 2026-12-01), and the
    session, seen an hour before the clock was set right, is not ended by the first steady
    round after it (until 2026-12-01 it was: last seen "in 1970", its scratch expired at
    once)."""
    s = scene
    ws = s.app.workspaces.resolve(str(workspace_dir))
    s.round(60, 60)
    recalled(s, s.ids[1])
    s.app.agents.seen(Identity("agent-a", verified=True))
    used, seen = last_used(s, s.ids[1]), agent_seen(s)
    assert used == seen == DEC_1_2026 + 60_000
    s.clock.now = JAN_2_1970
    recalled(s, s.ids[1])
    recalled(s, s.ids[0])  # never recalled before
    s.app.lifecycle.session_seen("s-1", ws.id)
    s.app.agents.seen(Identity("agent-a", verified=True))
    s.round(0, 60)
    assert last_used(s, s.ids[1]) == used  # not 1970-01-02
    assert last_used(s, s.ids[0]) is None
    assert s.app.memories.get(Caller.human(), s.ids[1]).memory.use_count == 2
    assert agent_seen(s) == seen
    s.clock.now = DEC_1_2026 + 2 * HOUR_MS  # the clock set right
    s.round(0, 3600)
    assert acted(s.round(3600, 3600)) == (0, 0, 0, 0)  # steady: nothing is due yet
    assert scratch_expires(s) is None


def test_times_after_now_count_as_now_from_the_next_steady_round(
    scene: Scene, workspace_dir: Path
) -> None:
    """The clock read 2100 for a while: a memory recalled, the session and the agent seen, an
    idea proposed. Once the clock is set right, the first steady round brings those times back
    to now: the memory reads "last used" then and is archived once unused for the set days, the
    session ends when its retention runs out, and a later proposal ranks above the one "seen in
    2100" and outlives it when the queue is full. Until 2026-12-01 they stayed in 2100: never
    archived, never ended, the proposal on top of the queue and never evicted."""
    s, person = scene, Caller.human()
    agent = agent_of(s, workspace_dir)
    ws = s.app.workspaces.resolve(str(workspace_dir))
    s.app.policy.set(person, "kinds.idea", Mode.ASK)
    s.round(60, 60)
    s.clock.now = YEAR_2100
    s.round(0, 3600)
    recalled(s, s.ids[1])
    s.app.lifecycle.session_seen("s-1", ws.id)
    s.app.agents.seen(Identity("agent-a", verified=True))
    ahead = propose(s, agent, "idea: shard the otter cache by region")
    s.clock.now = DEC_1_2026 + 3 * HOUR_MS  # set right
    s.round(0, 60)
    assert last_used(s, s.ids[1]) == YEAR_2100  # the step's round acts on nothing
    s.round(3600, 3600)  # the first steady round
    now = s.clock.now
    assert last_used(s, s.ids[1]) == now
    assert agent_seen(s) == now
    s.clock.advance(60)
    later = propose(s, agent, "idea: a badger index for the ferret queries")
    ranking = [r.id for r in s.app.review.ranking(person)]
    assert ranking.index(later) < ranking.index(ahead), ranking
    assert [r.last_seen for r in s.app.review.ranking(person) if r.id == ahead] == [now]
    # the queue full (review.max_items, 10): the oldest seen go first, the 2100 one among them
    for i in range(9):
        s.clock.advance(60)
        propose(s, agent, f"idea number {i}: the heron{i} and the osprey{i} caches")
    waiting = {r.id for r in s.app.review.ranking(person)}
    assert later in waiting and ahead not in waiting, waiting
    # three steady days on: the unused memory is archived, the session ended
    s.round(3 * DAY_S, 3 * DAY_S)
    assert s.app.memories.get(person, s.ids[1]).memory.status is Status.ARCHIVED
    assert scratch_expires(s) is not None


def test_a_clock_set_back_while_cairn_was_stopped_is_said_and_its_first_round_waits(
    paths: Paths, workspace_dir: Path
) -> None:
    """Cairn last ran with its clock at 2100; it starts with the clock at 2026-12-01 (set back
    while it was stopped, where the boot clock cannot see it). Health says the store's newest
    event is after now, and the first round brings no time back (the clock may be the wrong
    one); the next steady round does."""
    open_policy(paths.config)
    first = Cairn.open(paths, settings=SHORT, clock=FakeClock(YEAR_2100), boot_clock=FakeBoot())
    try:
        ws = first.workspaces.resolve(str(workspace_dir))
        agent = Caller(Surface.AGENT, agent="agent-a", workspace_id=ws.id, session_id="s-1")
        mid = str(
            first.memories.write(
                agent,
                WriteRequest.from_params(
                    {"content": "the heron service listens on 8080", "kind": "fact"}
                    | {"scope": "project"}
                ),
            ).id
        )
        first.memories.record_recall([mid])
    finally:
        first.close()
    clock, boot = FakeClock(DEC_1_2026), FakeBoot()
    app = Cairn.open(paths, settings=SHORT, clock=clock, boot_clock=boot)
    try:
        warnings = app.health.snapshot(Caller.human())["warnings"]
        said = warnings.get("clock_stepped", "")
        assert "2100-01-01 00:00 UTC" in said and "2026-12-01 00:00 UTC" in said, warnings
        assert "stopped" in said, said
        janitor = Janitor(
            app.store, app.memories, SHORT, paths, lifecycle=app.lifecycle, watch=app.clock_watch
        )
        janitor.run()
        assert app.memories.get(Caller.human(), mid).memory.last_recalled_at == YEAR_2100
        clock.advance(3600)
        boot.advance(3600)
        janitor.run()
        assert app.memories.get(Caller.human(), mid).memory.last_recalled_at == clock.now
    finally:
        app.close()
