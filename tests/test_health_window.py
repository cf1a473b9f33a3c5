"""The Health window over a real serving Cairn: its counters move as a real socket client writes,
is refused or searches (nothing stored, yet shown at once), its fetches are coalesced, and a
standing warning (an invalid policy file) leads in red."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from PySide6 import QtGui
from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from core.app import Cairn
from core.daemon import Runtime
from core.model import Caller, Scope, Surface
from core.paths import Paths
from core.policy import POLICY_FILE
from core.requests import WriteRequest
from core.runtime import socket_path
from core.settings import Settings
from desktop.desk import Desk
from desktop.empty_note import NAME as EMPTY_NOTE
from desktop.windows.health import KEY_ROLE, HealthWindow
from tests.conftest import FakeClock, desk_on, made_up_word, off_gui, settle
from tests.serving import RawClient

pytestmark = pytest.mark.gui


def opened(qtbot: QtBot, desk: Desk) -> HealthWindow:
    window = desk.open(HealthWindow)
    qtbot.waitUntil(lambda: window.snapshot is not None)
    settle(qtbot, desk)
    return window


def test_counters_move_as_an_agent_writes_over_the_socket(
    qtbot: QtBot, served_desk: tuple[Desk, Runtime], workspace_dir: Path
) -> None:
    desk, runtime = served_desk
    window = opened(qtbot, desk)
    assert window.figures["total"].text() == "0"
    assert window.agent_row("scribe") is None
    client = RawClient(socket_path(runtime.paths))
    try:
        assert "result" in client.hello(agent="scribe", workspace=str(workspace_dir))
        for text in ("the build uses make", "the linter is ruff"):
            answer = client.request(
                "memory.write", {"content": text, "kind": "fact", "scope": "project"}
            )
            assert answer["result"]["status"] == "stored", answer
        qtbot.waitUntil(lambda: window.figures["total"].text() == "2")
        row = window.agent_row("scribe")
        assert row is not None
        assert row["Writes"] == "2" and row["Verified"] == "no"
        assert row["Requests"] == "2" and row["Last seen"]
        assert window.figures["connections"].text().startswith("1 now")
        assert window.figures["last_write"].text() != "never"
    finally:
        client.close()
    settle(qtbot, desk)


def test_the_agents_table_says_what_comes_there_until_an_agent_connects(
    qtbot: QtBot, served_desk: tuple[Desk, Runtime], workspace_dir: Path
) -> None:
    """The table was an empty box without a word until an agent connected."""
    desk, runtime = served_desk
    window = opened(qtbot, desk)
    note = window.agents.findChild(QLabel, EMPTY_NOTE)
    assert note is not None and note.isVisible()
    assert note.text() == (
        "No agent has connected since Cairn started. Each agent that connects gets a row here."
    )
    client = RawClient(socket_path(runtime.paths))
    try:
        assert "result" in client.hello(agent="scribe", workspace=str(workspace_dir))
        answer = client.request(
            "memory.write", {"content": "the build uses make", "kind": "fact", "scope": "project"}
        )
        assert answer["result"]["status"] == "stored", answer
        qtbot.waitUntil(lambda: window.agent_row("scribe") is not None)
        assert not note.isVisible()
    finally:
        client.close()
    settle(qtbot, desk)


def rows_of(window: HealthWindow, section: str) -> dict[str, Any]:
    """A breakdown section's rows by their label: the value as shown, and its tooltip."""
    tops = [window.breakdown.topLevelItem(i) for i in range(window.breakdown.topLevelItemCount())]
    top = next(t for t in tops if t is not None and t.data(0, KEY_ROLE) == section)
    children = [top.child(i) for i in range(top.childCount())]
    return {c.text(0): (c.text(1), tip_as_read(c.toolTip(1))) for c in children if c is not None}


def tip_as_read(tip: str) -> str:
    """A tooltip's words as the person reads them (the windows' tooltips of figures are HTML
    that shows the text as typed: `desktop.widgets.plain_tip`)."""
    if not QtGui.Qt.mightBeRichText(tip):
        return tip
    document = QtGui.QTextDocument()
    document.setHtml(tip)
    return document.toPlainText()


def grouped(n: int) -> str:
    """`n` as the locale writes it (with its thousands separator; none in the C locale)."""
    return QLocale().toString(n)


def test_the_oldest_proposals_wait_reads_in_minutes_its_seconds_in_the_tooltip(
    qtbot: QtBot, paths: Paths, clock: FakeClock
) -> None:
    """The breakdown read "oldest waiting (seconds) 125", the headline "1 (oldest waiting 2
    min)" but "0 min" for anything under a minute."""
    app = Cairn.open(paths, clock=clock)
    try:
        with desk_on(app) as desk:
            agent = Caller(Surface.AGENT, agent="scribe", verified=True)
            request = WriteRequest(content="an idea to try", kind="idea", scope=Scope.USER)
            off_gui(functools.partial(desk.cairn.memories.write, agent, request))
            clock.advance(42)
            window = opened(qtbot, desk)
            assert rows_of(window, "review")["oldest waiting"] == ("42 s", "42 seconds")
            assert window.figures["review"].text() == "1 (oldest waiting 42 s)"
            window.close()
            clock.advance(3 * 3600 + 5 * 60)
            window = opened(qtbot, desk)
            exact = f"{grouped(11142)} seconds"
            assert rows_of(window, "review")["oldest waiting"] == ("3 h 5 min", exact)
            window.close()
    finally:
        app.close()


def test_a_kind_named_like_a_duration_or_a_time_counts_as_a_count(
    qtbot: QtBot, paths: Paths
) -> None:
    """The breakdown chose how to show a figure by its key's name alone (`*_s` a duration,
    `*_bytes` a size, `at` a time), and a kind is a name people choose: 5 memories of a kind
    called `at` would have read as a moment of 1970, of `deploy_s` as "5 s"."""
    settings = Settings.defaults().with_values(memory__extra_kinds=("at", "deploy_s"))
    app = Cairn.open(paths, settings=settings)
    try:
        with desk_on(app) as desk:
            requests = [
                WriteRequest(content=f"note {made_up_word(i)}", kind=kind, scope=Scope.USER)
                for i, kind in enumerate(["at"] * 5 + ["deploy_s"] * 3)
            ]
            off_gui(lambda: desk.cairn.memories.write_many(Caller.human(), requests))
            window = opened(qtbot, desk)
            tops = [window.breakdown.topLevelItem(i) for i in range(3)]
            memories = next(t for t in tops if t is not None and t.data(0, KEY_ROLE) == "memories")
            by_kind = next(
                c
                for i in range(memories.childCount())
                if (c := memories.child(i)) is not None and c.data(0, KEY_ROLE) == "kind"
            )
            counts = {
                c.text(0): c.text(1)
                for i in range(by_kind.childCount())
                if (c := by_kind.child(i)) is not None
            }
            assert counts == {"at": "5", "deploy_s": "3"}, counts
            window.close()
    finally:
        app.close()


def test_durations_and_sizes_read_as_a_person_reads_them(qtbot: QtBot, desk: Desk) -> None:
    window = desk.open(HealthWindow)
    assert [window.duration(s) for s in (0, 1, 59, 60, 125, 3600, 3660, 86399, 90000)] == [
        "0 s",
        "1 s",
        "59 s",
        "1 min",
        "2 min",
        "1 h",
        "1 h 1 min",
        "23 h 59 min",
        "1 d 1 h",
    ]
    assert window.value_text("wal_bytes", 1_234_567) == ("1.18 MiB", f"{grouped(1_234_567)} bytes")
    assert window.value_text("pending", 12345) == (grouped(12345), "")
    settle(qtbot, desk)


def test_a_refusal_and_a_search_show_at_once_though_nothing_is_stored(
    qtbot: QtBot, served_desk: tuple[Desk, Runtime], workspace_dir: Path
) -> None:
    desk, runtime = served_desk
    window = opened(qtbot, desk)
    client = RawClient(socket_path(runtime.paths))
    try:
        assert "result" in client.hello(agent="scribe", workspace=str(workspace_dir))
        qtbot.waitUntil(lambda: window.figures["connections"].text().startswith("1 now"))
        settle(qtbot, desk)
        assert window.snapshot is not None
        committed = window.snapshot["committed_seq"]
        refused = client.request(
            "memory.write",
            {"content": "key AKIAZ7QK3MWN5PXR2TLY", "kind": "fact", "scope": "project"},
        )
        assert refused["result"]["status"] == "refused", refused
        # Nothing was stored, so no commit announces it: the counters announce themselves.
        qtbot.waitUntil(lambda: (window.agent_row("scribe") or {}).get("Refusals") == "1")
        assert window.snapshot["refusals"] == {refused["result"]["reason_code"]: 1}
        assert window.snapshot["committed_seq"] == committed
        assert window.figures["total"].text() == "0"
        assert window.figures["last_search"].text() == "never"
        found = client.request("memory.search", {"query": "deploy key"})
        assert "result" in found, found
        qtbot.waitUntil(lambda: window.figures["last_search"].text() != "never")
        row = window.agent_row("scribe")
        # a refused write is no write served (docs/health.md; until 2026-12-01 it counted)
        assert row is not None and row["Requests"] == "2" and row["Writes"] == "0"
        assert window.snapshot["committed_seq"] == committed
    finally:
        client.close()
    qtbot.waitUntil(lambda: window.figures["connections"].text().startswith("0 now"))
    settle(qtbot, desk)


def test_proposals_dropped_from_a_full_queue_are_shown(qtbot: QtBot, desk: Desk) -> None:
    """`cairn health` said `evicted: 3`; the window showed the waiting count only, and nothing
    anywhere in it said proposals had been dropped."""
    agent = Caller(Surface.AGENT, agent="scribe", verified=True)
    cap = desk.cairn.settings.integer("review.max_items")
    for n in range(cap + 2):
        words = " ".join(made_up_word(4 * n + k) for k in range(4))
        request = WriteRequest(content=f"idea {words}", kind="idea", scope=Scope.USER)
        off_gui(functools.partial(desk.cairn.memories.write, agent, request))
    window = opened(qtbot, desk)
    assert window.snapshot is not None and window.snapshot["review"]["evicted"] == 2
    sections = {
        item.data(0, KEY_ROLE): item
        for i in range(window.breakdown.topLevelItemCount())
        if (item := window.breakdown.topLevelItem(i)) is not None
    }
    review = sections["review"]
    children = [review.child(i) for i in range(review.childCount())]
    rows = {c.text(0): c.text(1) for c in children if c is not None}
    assert rows["dropped when the queue was full"] == "2" and rows["waiting"] == str(cap)
    assert "2 dropped" in window.figures["review"].text()


def test_sections_keep_their_folding_when_the_counters_move(qtbot: QtBot, desk: Desk) -> None:
    """Rows came to read labels, while the open sections were looked up by key: a reload
    folded every section whose label is not its key ("review queue")."""
    window = opened(qtbot, desk)

    def section(key: str) -> Any:
        items = [
            window.breakdown.topLevelItem(i) for i in range(window.breakdown.topLevelItemCount())
        ]
        return next(i for i in items if i is not None and i.data(0, KEY_ROLE) == key)

    section("connections").setExpanded(False)
    loads = window.snapshot
    off_gui(
        functools.partial(
            desk.cairn.memories.write,
            Caller.human(),
            WriteRequest(content="the build uses make", kind="fact", scope=Scope.USER),
        )
    )
    qtbot.waitUntil(lambda: window.snapshot is not loads and window.figures["total"].text() == "1")
    settle(qtbot, desk)
    assert not section("connections").isExpanded()
    assert section("review").isExpanded()  # its row reads "review queue"


def test_fetches_are_coalesced(qtbot: QtBot, desk: Desk) -> None:
    window = opened(qtbot, desk)
    before = window.fetches
    for _ in range(20):  # a burst of changes while one fetch is in flight
        window.refresh()
    settle(qtbot, desk)
    assert window.fetches - before == 2  # the one in flight and one more, not twenty


def test_a_burst_of_writes_reloads_the_window_once_a_second_at_most(
    qtbot: QtBot, desk: Desk
) -> None:
    """A snapshot counts the whole store (0.1 s at 100k memories): changes arriving faster
    than `min_interval_ms` wait for one reload at its end."""
    window = opened(qtbot, desk)
    window.min_interval_ms = 60_000  # the burst below ends well inside it, however slow the host
    before = window.fetches
    human = Caller.human()

    def burst() -> None:
        for n in range(20):
            desk.cairn.memories.write(
                human,
                WriteRequest(
                    content=f"the build takes {n} minutes", kind="fact", scope=Scope.GLOBAL
                ),
            )

    off_gui(burst)
    qtbot.wait(200)
    settle(qtbot, desk)
    assert window.fetches - before <= 1  # the first change at once (if none was recent)
    assert window.reload_timer.isActive()  # the rest: one reload when the interval ends
    window.reload_timer.start(0)
    qtbot.waitUntil(lambda: window.figures["total"].text() == "20")
    settle(qtbot, desk)
    assert window.fetches - before <= 2


def test_an_invalid_policy_file_shows_a_warning_banner(qtbot: QtBot, desk: Desk) -> None:
    window = opened(qtbot, desk)
    standing = window.snapshot["warnings"] if window.snapshot else {}
    assert "policy_invalid" not in standing and "policy.toml" not in window.banner.text()
    policy = desk.cairn.paths.config / POLICY_FILE
    good = policy.read_text(encoding="utf-8")
    policy.write_text("paused = maybe\n[kinds\n", encoding="utf-8")
    off_gui(desk.cairn.policy.reload)
    qtbot.waitUntil(lambda: "policy.toml" in window.banner.text())
    assert "policy.toml" in window.banner.text()
    assert "last valid policy stays in effect" in window.banner.text()
    assert window.banner.text().startswith(f"{len(standing) + 1} warnings:")
    policy.write_text(good, encoding="utf-8")
    off_gui(desk.cairn.policy.reload)
    qtbot.waitUntil(lambda: "policy.toml" not in window.banner.text())
    assert window.banner.isVisible() == bool(standing)
