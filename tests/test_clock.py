"""A clock Cairn cannot trust: one reading before 2026-01-01 (a dead clock battery reads 1970)
refuses the writes agents and people ask for, and housekeeping acts on time only in a round
where the wall clock moved as the boot clock did (a suspend is no step; a clock set is)."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.app import Cairn
from core.client import Client, RemoteError
from core.errors import ClockWrong, ErrorCode
from core.janitor import Janitor, JanitorReport
from core.model import Caller, Scope, Status, Surface
from core.paths import Paths
from core.policy import Mode
from core.requests import WriteRequest
from core.settings import Settings
from tests.conftest import FakeClock, cairn_env, open_policy
from tests.serving import served_in_thread, start_daemon
from tests.test_cli_serving import at_terminal

DAY_S = 86_400
JAN_2_1970 = 86_400_000 + 3_000  # a dead clock battery, three seconds after start
DEC_1_2026 = 1_796_083_200_000  # 2026-12-01 00:00 UTC
YEAR_2100 = 4_102_444_800_000  # 2100-01-01 00:00 UTC


class FakeBoot:
    """A boot clock the test moves by hand (milliseconds since the machine started)."""

    def __init__(self) -> None:
        self.now = 3_600_000

    def boot_ms(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * 1000)


# Short windows, so a few days of clock make every time-based step due.
SHORT = Settings.defaults().with_values(
    lifecycle__expired_retention_days=0,
    lifecycle__archive_unused_days=2,
    lifecycle__session_retention_days=1,
)


class Scene:
    """A Cairn whose wall and boot clocks the test moves, with one agent's three memories: a
    project memory with a day to live, one with no expiry, and a session's scratch."""

    def __init__(
        self,
        paths: Paths,
        workspace_dir: Path,
        clock: FakeClock,
        boot: FakeBoot,
        settings: Settings = SHORT,
    ):
        open_policy(paths.config)
        self.clock, self.boot = clock, boot
        self.app = Cairn.open(paths, settings=settings, clock=clock, boot_clock=boot)
        ws = self.app.workspaces.resolve(str(workspace_dir))
        agent = Caller(Surface.AGENT, agent="agent-a", workspace_id=ws.id, session_id="s-1")
        self.ids = [
            str(self.app.memories.write(agent, WriteRequest.from_params(p)).id)
            for p in (
                {"content": "deploy freeze until friday", "kind": "fact", "ttl_seconds": DAY_S}
                | {"scope": "project"},
                {
                    "content": "the heron service listens on 8080",
                    "kind": "fact",
                    "scope": "project",
                },
                {"content": "scratch: trying O2", "kind": "fact", "scope": "session"},
            )
        ]
        self.app.lifecycle.session_seen("s-1", ws.id)
        self.janitor = Janitor(
            self.app.store,
            self.app.memories,
            settings,
            paths,
            lifecycle=self.app.lifecycle,
            watch=self.app.clock_watch,
        )

    def round(self, wall_s: float, boot_s: float) -> JanitorReport:
        """A janitor round after the wall clock moved `wall_s` and the boot clock `boot_s`."""
        self.clock.advance(wall_s)
        self.boot.advance(boot_s)
        return self.janitor.run()

    def untouched(self) -> bool:
        """Every memory is there (none purged), active (none archived), and the session's
        scratch has no expiry."""
        for mid in self.ids:
            m = self.app.memories.get(Caller.human(), mid).memory
            if m.status is not Status.ACTIVE:
                return False
            if m.scope is Scope.SESSION and m.expires_at is not None:
                return False
        return True

    def warnings(self) -> dict[str, str]:
        warnings: dict[str, str] = self.app.health.snapshot(Caller.human())["warnings"]
        return warnings


@pytest.fixture
def store(paths: Paths, workspace_dir: Path) -> Iterator[Scene]:
    s = Scene(paths, workspace_dir, FakeClock(DEC_1_2026), FakeBoot())
    try:
        yield s
    finally:
        s.app.close()


def acted(report: JanitorReport) -> tuple[int, int, int, int]:
    assert report.lifecycle is not None
    cycle = report.lifecycle
    return report.purged, cycle.archived, cycle.sessions_ended, cycle.session_memories_expiring


def test_a_suspend_of_three_days_is_no_step_and_housekeeping_acts(store: Scene) -> None:
    """A laptop's lid shut for three days: wall and boot clock both advance three days. The
    day-long memory is purged, the unused one archived, the session ended - as ever."""
    assert acted(store.round(60, 60)) == (0, 0, 0, 0)
    assert acted(store.round(3 * DAY_S, 3 * DAY_S)) == (1, 1, 1, 1)
    assert "clock_stepped" not in store.warnings()


def test_a_round_after_the_clock_stepped_acts_on_nothing_the_next_steady_one_does(
    store: Scene,
) -> None:
    """The same three days, but as a clock set forward within an hour of boot time: that round
    purges, archives and ends nothing (until 2026-12-01 it did all three). The clock then runs
    steadily from where it was set, and the next round acts on it."""
    assert acted(store.round(60, 60)) == (0, 0, 0, 0)
    assert acted(store.round(3 * DAY_S, 3600)) == (0, 0, 0, 0)
    assert store.untouched()
    stepped = store.warnings()["clock_stepped"]
    assert "set from 2026-12-01 01:01 UTC to 2026-12-04 00:01 UTC" in stepped, stepped
    assert acted(store.round(3600, 3600)) == (1, 1, 1, 1)


def test_a_clock_reading_2100_for_one_round_purges_archives_and_ends_nothing(
    store: Scene,
) -> None:
    """The mirror: a clock that read 2100 for one round, then was set right. Until 2026-12-01
    that round purged a memory with time left, archived every unused project memory and ended
    the session."""
    store.round(60, 60)
    ahead = store.clock.now
    store.clock.now = YEAR_2100
    assert acted(store.round(0, 3600)) == (0, 0, 0, 0)
    store.clock.now = ahead
    assert acted(store.round(7200, 3600)) == (0, 0, 0, 0)  # set back: a step too
    assert acted(store.round(3600, 3600)) == (0, 0, 0, 0)  # steady, nothing due yet
    assert store.untouched()
    stepped = store.warnings()["clock_stepped"]
    assert "set from 2100-01-01 01:00 UTC to 2026-12-01 02:01 UTC" in stepped, stepped


def test_a_clock_before_2026_refuses_writes_and_health_says_so(
    paths: Paths, workspace_dir: Path
) -> None:
    """A clock reading 1970-01-02: a write, an update, a forget, feedback and a policy change
    are refused with `clock_wrong` (nothing stored) while reads go on, and health says what the
    clock reads and what to do. Once the clock is set, `clock_wrong` goes and `clock_stepped`
    says from what to what; writes land again."""
    clock, boot = FakeClock(DEC_1_2026), FakeBoot()
    s = Scene(paths, workspace_dir, clock, boot)
    try:
        app, person = s.app, Caller.human()
        ws = app.workspaces.resolve(str(workspace_dir))
        agent = Caller(Surface.AGENT, agent="agent-a", workspace_id=ws.id, session_id="s-1")
        s.round(60, 60)
        clock.now = JAN_2_1970
        before = app.store.committed_seq
        refused: list[Callable[[], object]] = [
            lambda: app.memories.write(
                agent,
                WriteRequest.from_params(
                    {"content": "a new fact", "kind": "fact", "scope": "project"}
                ),
            ),
            lambda: app.memories.write(
                person,
                WriteRequest.from_params(
                    {"content": "mine", "kind": "preference", "scope": "user"}
                ),
            ),
            lambda: app.memories.forget(person, s.ids[1]),
            lambda: app.memories.feedback(agent, s.ids[1], "useful"),
            lambda: app.policy.set(person, "kinds.idea", Mode.AUTO),
        ]
        policy_text = app.policy.path.read_bytes()
        for attempt in refused:
            with pytest.raises(ClockWrong) as caught:
                attempt()
            assert caught.value.code is ErrorCode.CLOCK_WRONG
            message = caught.value.message
            assert "1970-01-02 00:00 UTC" in message and "nothing was stored" in message, message
            assert "set" in message and "clock" in message, message
        assert app.store.committed_seq == before  # nothing at all landed
        assert app.policy.path.read_bytes() == policy_text  # the policy file neither
        assert len(app.memories.list(agent).items) == 3  # reads go on
        assert acted(s.round(3600, 3600)) == (0, 0, 0, 0)  # steady, but before the floor
        warnings = s.warnings()
        assert "reads 1970-01-02 01:00 UTC" in warnings["clock_wrong"], warnings
        assert "2026-01-01" in warnings["clock_wrong"], warnings
        assert "warnings" not in app.health.snapshot(agent)
        clock.now = DEC_1_2026 + 3 * 3600_000
        s.round(0, 60)
        warnings = s.warnings()
        assert "clock_wrong" not in warnings, warnings
        assert "1970-01-02" in warnings["clock_stepped"], warnings
        written = app.memories.write(
            agent,
            WriteRequest.from_params({"content": "a new fact", "kind": "fact", "scope": "project"}),
        )
        assert written.id is not None
    finally:
        s.app.close()


def test_a_write_at_1970_through_the_socket_and_the_cli_is_refused_clock_wrong(
    paths: Paths, workspace_dir: Path, isolated_home: Path
) -> None:
    """The real socket: an agent's write with a day to live, while the clock reads 1970, is
    answered `clock_wrong` saying what the clock reads, that nothing was stored and what to do;
    `cairn add` prints that and exits 75. A search is still served."""
    open_policy(paths.config)
    with served_in_thread(paths, clock=FakeClock(JAN_2_1970)):
        client = Client.connect(
            paths, agent="agent-a", workspace=str(workspace_dir), autostart=False
        )
        try:
            with pytest.raises(RemoteError) as caught:
                client.call(
                    "memory.write",
                    {"content": "deploy freeze", "kind": "fact", "scope": "project"}
                    | {"ttl_seconds": DAY_S},
                )
            assert caught.value.code is ErrorCode.CLOCK_WRONG
            assert caught.value.data.get("error") == "clock_wrong"
            assert "1970-01-02 00:00 UTC" in caught.value.message
            found = client.call("memory.search", {"query": "deploy freeze"})
            assert "results" in found, found
        finally:
            client.close()
        out = subprocess.run(
            [sys.executable, "-m", "core.cli", "add", "deploy freeze until friday"],
            cwd=workspace_dir,
            env=cairn_env(isolated_home / "c") | {"CAIRN_NO_AUTOSTART": "1"},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert out.returncode == ErrorCode.CLOCK_WRONG.exit_status == 75, out.stderr
    line = out.stderr.strip()
    assert line.startswith("cairn: ") and "1970-01-02 00:00 UTC" in line, line
    assert "nothing was stored" in line and "then try again" in line, line


# -- the real daemon under libfaketime (the Debian package `faketime`) ---------------------------

FAKETIME = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))


def set_clock(timestamp_file: Path, spec: str) -> None:
    """Set the faked clock at once: libfaketime reading the file while it is being rewritten
    (empty) gives the real time, a step the test did not make."""
    ready = timestamp_file.with_suffix(".new")
    ready.write_text(spec + "\n", encoding="utf-8")
    os.replace(ready, timestamp_file)


@pytest.mark.skipif(not FAKETIME, reason="libfaketime is not installed (Debian: faketime)")
def test_the_real_daemon_started_on_a_1970_clock_then_set_right(short_tmp: Path) -> None:
    """The tester's run: `cairn serve` started while the clock read 1970-01-02 (its boot clock
    true), the janitor every second. `cairn add --ttl 86400` is refused (until 2026-12-01 it
    was stored with a day to live, and purged once the clock was set), health says the clock is
    wrong; once the clock reads 2026-12-01, health says it was set, and a write lands."""
    home = short_tmp / "ft"
    work = short_tmp / "proj"
    work.mkdir()
    fake = short_tmp / "faketime"
    set_clock(fake, "@1970-01-02 00:00:00")
    env = {
        "LD_PRELOAD": FAKETIME[0],
        "FAKETIME_TIMESTAMP_FILE": str(fake),
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }

    def cairn(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "core.cli", *args],
            cwd=work,
            env=cairn_env(home) | {"CAIRN_NO_AUTOSTART": "1"},
            capture_output=True,
            text=True,
            timeout=60,
        )

    daemon = start_daemon(home, extra_env=env, args=("--janitor-interval", "1"))
    try:
        added = cairn("add", "deploy freeze until friday", "--ttl", "86400")
        assert added.returncode == 75, added.stdout + added.stderr
        assert "1970-01-02" in added.stderr and "nothing was stored" in added.stderr
        status, shown = at_terminal(home, "health", "--json", typed="")
        assert status == 0, shown
        assert "clock_wrong" in shown and "1970-01-02" in shown, shown
        set_clock(fake, "@2026-12-01 05:00:00")
        deadline = time.monotonic() + 30
        warnings: dict[str, str] = {}
        while time.monotonic() < deadline and "clock_stepped" not in warnings:
            time.sleep(0.5)
            status, shown = at_terminal(home, "health", "--json", typed="")
            warnings = json.loads(shown[shown.index("{") :])["warnings"]
        assert "clock_stepped" in warnings and "clock_wrong" not in warnings, warnings
        assert "1970-01-02" in warnings["clock_stepped"], warnings
        added = cairn("add", "deploy freeze until friday", "--ttl", "86400", "--json")
        assert added.returncode == 0, added.stderr
        assert json.loads(added.stdout)["status"] == "stored"
    finally:
        daemon.stop()
    assert daemon.proc.returncode == 0
