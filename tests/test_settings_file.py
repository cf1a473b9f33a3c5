"""Changing settings while Cairn runs: validated, written into settings.toml with comments kept,
announced on the change channel, and followed at once by the notes folder and the backups."""

from __future__ import annotations

import re
import shutil
import threading
import time
import tomllib
from pathlib import Path

import pytest

from core.app import Cairn
from core.changes import ChangeSet, Topic
from core.errors import ConfigInvalid, Forbidden, InvalidInput, IOFault
from core.knob import Value
from core.model import Caller, Scope, Surface
from core.notes import SyncReport
from core.paths import Paths
from core.settings import load_settings
from tests.conftest import FakeClock, open_policy, refusing_writes


def _settings_changes(cairn: Cairn) -> list[ChangeSet]:
    seen: list[ChangeSet] = []
    cairn.bus.subscribe(lambda cs: seen.append(cs) if Topic.SETTINGS in cs.topics else None)
    return seen


def test_a_change_is_checked_written_with_comments_and_announced(
    cairn: Cairn, paths: Paths, human: Caller
) -> None:
    paths.settings_file.write_text(
        "# my settings\n[backup]\n# every six hours\ninterval_hours = 6.0\n", encoding="utf-8"
    )
    seen = _settings_changes(cairn)
    settings = cairn.config.set(human, "backup.keep_daily", 3)
    text = paths.settings_file.read_text(encoding="utf-8")
    assert "# my settings" in text and "# every six hours" in text
    assert tomllib.loads(text)["backup"] == {"interval_hours": 6.0, "keep_daily": 3}
    assert settings.integer("backup.keep_daily") == 3
    assert cairn.config.current().number("backup.interval_hours") == 6.0
    assert load_settings(paths.settings_file).integer("backup.keep_daily") == 3
    assert len(seen) == 1

    cairn.config.set(human, "notes.folder", "")
    assert tomllib.loads(paths.settings_file.read_text(encoding="utf-8"))["notes"] == {"folder": ""}


def test_only_a_person_with_a_valid_value_changes_a_setting(
    cairn: Cairn, paths: Paths, human: Caller
) -> None:
    agent = Caller(Surface.AGENT, agent="helper", verified=True)
    with pytest.raises(Forbidden):
        cairn.config.set(agent, "backup.keep_daily", 3)
    with pytest.raises(InvalidInput, match="at least 1"):
        cairn.config.set(human, "backup.keep_daily", 0)
    with pytest.raises(InvalidInput, match="unknown setting"):
        cairn.config.set(human, "backup.turbo", True)
    assert not paths.settings_file.exists()

    paths.settings_file.write_text("[store]\nturbo = 1\n", encoding="utf-8")
    with pytest.raises(ConfigInvalid, match=r"store\.turbo"):
        cairn.config.set(human, "backup.keep_daily", 3)
    assert paths.settings_file.read_text(encoding="utf-8") == "[store]\nturbo = 1\n"


def test_a_change_the_folder_refuses_is_said_and_changes_nothing(
    cairn: Cairn, paths: Paths, human: Caller
) -> None:
    """The Settings window's change, refused by the folder the file is replaced in: said with
    the reason in words (until 2026-12-01 "Operation not permitted"); the file and the setting
    stay as they were and no temporary file is left."""
    paths.settings_file.write_text("# mine\n[backup]\nkeep_daily = 5\n", encoding="utf-8")
    before = sorted(p.name for p in paths.config.iterdir())
    with refusing_writes(paths.config), pytest.raises(IOFault) as raised:
        cairn.config.set(human, "backup.keep_daily", 3)
    assert raised.value.message == (
        f"could not write the settings file {paths.settings_file}: no new file can be made in "
        f"{paths.config}: permission denied; the setting is unchanged"
    )
    assert paths.settings_file.read_text(encoding="utf-8") == "# mine\n[backup]\nkeep_daily = 5\n"
    assert sorted(p.name for p in paths.config.iterdir()) == before
    assert cairn.config.current().integer("backup.keep_daily") == 7  # as the fixture started


def test_the_backup_schedule_follows_at_once(cairn: Cairn, human: Caller) -> None:
    assert cairn.backups.due()  # no backup yet
    cairn.config.set(human, "backup.interval_hours", 0)
    assert not cairn.backups.due()  # 0 turns the schedule off
    assert cairn.config.live("backup.interval_hours")
    assert not cairn.config.live("store.synchronous")


def test_the_notes_folder_follows_at_once(cairn: Cairn, short_tmp: Path, human: Caller) -> None:
    folder = short_tmp / "notes"
    folder.mkdir()
    (folder / "first.md").write_text("The build uses make.\n", encoding="utf-8")
    landed = threading.Event()
    cairn.bus.subscribe(lambda cs: landed.set() if Topic.MEMORIES in cs.topics else None)

    cairn.config.set(human, "notes.folder", str(folder))
    watched = cairn.notes.folder
    assert watched == folder.resolve()
    assert landed.wait(10), "the new folder was never read"
    contents = [m.content for m in cairn.memories.list(human).items]
    assert contents == ["The build uses make."]

    # The watch is live: a file dropped in now becomes a memory too.
    landed.clear()
    (folder / "second.md").write_text("Deploys go out on Tuesdays.\n", encoding="utf-8")
    assert landed.wait(10), "the folder is not watched"
    deadline = time.monotonic() + 5
    while len(cairn.memories.list(human).items) < 2 and time.monotonic() < deadline:
        landed.wait(0.1)
    assert {m.scope for m in cairn.memories.list(human).items} == {Scope.USER}
    assert len(cairn.memories.list(human).items) == 2

    cairn.config.set(human, "notes.folder", "")
    off = cairn.notes.folder
    assert off is None
    (folder / "third.md").write_text("Not read any more.\n", encoding="utf-8")
    assert cairn.notes.sync().to_dict() == SyncReport().to_dict()
    assert len(cairn.memories.list(human).items) == 2  # turning it off archives nothing


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinity_are_refused_and_nothing_is_written(
    cairn: Cairn, paths: Paths, human: Caller, value: float
) -> None:
    """`config.set` took a NaN for `backup.interval_hours` and stopped scheduled backups."""
    paths.settings_file.write_text("[backup]\ninterval_hours = 6.0\n", encoding="utf-8")
    for name in ("backup.interval_hours", "lifecycle.session_retention_days"):
        with pytest.raises(InvalidInput, match=f"{name}: expected a finite number"):
            cairn.config.set(human, name, value)
    assert paths.settings_file.read_text(encoding="utf-8") == "[backup]\ninterval_hours = 6.0\n"
    assert cairn.config.current().number("backup.interval_hours") == 24.0  # as started


def test_a_backup_interval_below_what_the_window_shows_is_refused(
    cairn: Cairn, paths: Paths, human: Caller
) -> None:
    """0.004 h (14 s between backups) was taken, and the Settings window, showing hundredths,
    called it "Off"."""
    with pytest.raises(InvalidInput, match=r"must be 0 \(off\) or at least 0\.01, got 0\.004"):
        cairn.config.set(human, "backup.interval_hours", 0.004)
    assert not paths.settings_file.exists()
    cairn.config.set(human, "backup.interval_hours", 0.01)
    cairn.config.set(human, "backup.interval_hours", 0)
    assert cairn.config.current().number("backup.interval_hours") == 0


def test_a_hand_written_nan_in_the_file_is_named_before_another_change(
    cairn: Cairn, paths: Paths, human: Caller
) -> None:
    paths.settings_file.write_text("[lifecycle]\narchive_unused_days = nan\n", encoding="utf-8")
    with pytest.raises(ConfigInvalid, match=r"lifecycle\.archive_unused_days: expected a finite"):
        cairn.config.set(human, "backup.keep_daily", 3)
    text = paths.settings_file.read_text(encoding="utf-8")
    assert text == "[lifecycle]\narchive_unused_days = nan\n"


@pytest.mark.parametrize(
    "text",
    [
        "backup.keep_daily = 30   # a month of daily backups\nbackup.keep_weekly = 12\n",
        "backup = { keep_daily = 30, keep_weekly = 12 }  # a month\n",
        "backup.keep_daily = 30 # a month\nbackup.keep_weekly = 12\n[store]\nbusy_timeout_ms = 9\n",
        "[store]\nsynchronous = 'FULL'\n\n[backup]  # a month\nkeep_daily = 30\nkeep_weekly = 12\n",
    ],
    ids=["dotted keys", "inline table", "dotted keys then a table", "table"],
)
def test_a_change_keeps_the_other_keys_of_a_section_in_any_toml_shape(
    cairn: Cairn, paths: Paths, human: Caller, text: str
) -> None:
    """A section written as dotted keys (`backup.keep_daily = 30`) or as an inline table was
    replaced by a new `[backup]` table holding only the changed key: keep_daily fell back to 7."""
    paths.settings_file.write_text(text, encoding="utf-8")
    cairn.config.set(human, "backup.interval_hours", 12.0)
    after = paths.settings_file.read_text(encoding="utf-8")
    assert "# a month" in after
    backup = tomllib.loads(after)["backup"]
    assert backup == {"keep_daily": 30, "keep_weekly": 12, "interval_hours": 12.0}
    cairn.config.set(human, "backup.keep_daily", 31)
    assert load_settings(paths.settings_file).integer("backup.keep_daily") == 31
    assert load_settings(paths.settings_file).integer("backup.keep_weekly") == 12


def test_changing_the_backup_interval_keeps_a_dotted_keep_daily_and_its_backups(
    paths: Paths, clock: FakeClock, human: Caller
) -> None:
    """With `backup.keep_daily = 30` as a dotted key, changing the interval in the Settings
    window wrote the file without it, and the next backup deleted all but 7 daily backups."""
    open_policy(paths.config)
    paths.settings_file.write_text(
        "backup.keep_daily = 30   # a month\nbackup.keep_weekly = 8\n", encoding="utf-8"
    )
    cairn = Cairn.open(paths, clock=clock)
    try:
        first = cairn.backups.backup("manual").path
        older = []
        for day in range(1, 21):  # twenty older daily backups, one a day
            when = time.gmtime(clock.now / 1000 - day * 86_400)
            stamp = time.strftime("%Y%m%dT%H%M%SZ", when)
            older.append(paths.backups / f"cairn-{stamp}-scheduled.db")
            shutil.copy(first, older[-1])
        cairn.config.set(human, "backup.interval_hours", 12.0)
        clock.advance(60)
        cairn.backups.backup("manual")  # today's newest replaces today's first
        assert [p for p in older if not p.exists()] == []
        assert cairn.config.current().integer("backup.keep_daily") == 30
    finally:
        cairn.close()


def test_a_section_that_is_not_a_table_is_named_and_kept(
    cairn: Cairn, paths: Paths, human: Caller
) -> None:
    """`backup = 5` was replaced by a new [backup] table without a word."""
    paths.settings_file.write_text("backup = 5  # oops\n", encoding="utf-8")
    with pytest.raises(ConfigInvalid, match=r"backup: expected a \[backup\] table, got int 5"):
        cairn.config.set(human, "backup.keep_daily", 3)
    assert paths.settings_file.read_text(encoding="utf-8") == "backup = 5  # oops\n"


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("context.tiers", ("robot",), "expected each of human, explicit, derived, llm"),
        ("context.tiers", (), "expected at least one of human"),
        ("memory.extra_kinds", ("Decision", "two words"), "expected lowercase words"),
        ("notes.kind", "nonsense", "expected a built-in kind"),
    ],
)
def test_a_value_cairn_cannot_use_is_refused_and_nothing_is_written(
    cairn: Cairn, paths: Paths, human: Caller, name: str, value: Value, reason: str
) -> None:
    """The Settings window's path took `context.tiers = ["robot"]` (Cairn then could not start),
    "Decision" as an extra kind (dropped at start) and a note kind no memory may have."""
    paths.settings_file.write_text("# mine\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=f"{re.escape(name)}: {reason}"):
        cairn.config.set(human, name, value)
    assert paths.settings_file.read_text(encoding="utf-8") == "# mine\n"


def test_taking_away_the_kind_notes_use_is_refused(
    cairn: Cairn, paths: Paths, human: Caller
) -> None:
    """Removing a kind from memory.extra_kinds while notes.kind names it is a new problem this
    change makes: refused, naming notes.kind, and the file is kept."""
    text = '[memory]\nextra_kinds = ["decision"]\n[notes]\nkind = "decision"\n'
    paths.settings_file.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"notes\.kind: expected a built-in kind .*'decision'"):
        cairn.config.set(human, "memory.extra_kinds", ())
    assert paths.settings_file.read_text(encoding="utf-8") == text
    cairn.config.set(human, "notes.kind", "fact")
    cairn.config.set(human, "memory.extra_kinds", ())
    assert load_settings(paths.settings_file).strings("memory.extra_kinds") == ()


def test_a_note_kind_the_running_cairn_does_not_know_yet_is_refused(
    cairn: Cairn, paths: Paths, human: Caller
) -> None:
    """memory.extra_kinds takes effect at the next start and notes.kind at once: a kind just
    added there was taken for the notes, and every note then failed "unknown kind"."""
    cairn.config.set(human, "memory.extra_kinds", ("decision",))
    assert not cairn.config.live("memory.extra_kinds") and cairn.config.live("notes.kind")
    with pytest.raises(InvalidInput, match=r"restart Cairn, then set notes\.kind"):
        cairn.config.set(human, "notes.kind", "decision")
    assert load_settings(paths.settings_file).text("notes.kind") == "fact"  # the default
    cairn.config.set(human, "notes.kind", "Fact")
    # nor by way of another notes setting, over notes.kind written into the file by hand
    text = paths.settings_file.read_text(encoding="utf-8").replace('"Fact"', '"decision"')
    paths.settings_file.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"'decision' is not a kind the running Cairn knows"):
        cairn.config.set(human, "notes.scope", "global")
    assert paths.settings_file.read_text(encoding="utf-8") == text


def test_a_change_to_a_file_with_a_byte_order_mark_keeps_its_settings(
    cairn: Cairn, paths: Paths, human: Caller
) -> None:
    """A settings file starting with a UTF-8 byte order mark could not be changed ("not valid
    TOML ... fix it first")."""
    paths.settings_file.write_bytes(b"\xef\xbb\xbf# mine\n[backup]\nkeep_daily = 30\n")
    cairn.config.set(human, "backup.keep_weekly", 9)
    settings = load_settings(paths.settings_file)
    assert settings.integer("backup.keep_daily") == 30
    assert settings.integer("backup.keep_weekly") == 9
    assert "# mine" in paths.settings_file.read_text(encoding="utf-8")
