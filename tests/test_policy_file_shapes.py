"""The policy file as a person may really leave it: values of the wrong type, a file that goes
away and comes back, a file that is a symbolic link, a file far too big. Each is a clear
warning naming the line (or refused at start as other invalid files are: the last valid policy
kept), never a crash of Cairn or of its watcher."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from core.app import Cairn
from core.errors import InvalidInput, IOFault
from core.model import BUILTIN_KINDS, Caller
from core.paths import Paths
from core.policy import DEFAULT_TEXT, Mode, PolicyInvalid, parse_policy
from core.settings import Settings
from tests.conftest import FakeClock, refusing_writes

pytestmark = pytest.mark.shipped_policy  # `cairn` starts with no policy file

PAUSED = DEFAULT_TEXT.replace("paused = false", "paused = true")


def _until(check: Callable[[], bool], seconds: float = 5.0) -> bool:
    wait = threading.Event()
    for _ in range(int(seconds / 0.05)):
        if check():
            return True
        wait.wait(0.05)
    return check()


def _warning(cairn: Cairn) -> str:
    return cairn.warnings.snapshot().get("policy_invalid", "")


# -- values of the wrong type ------------------------------------------------------------------

_BAD_SHAPES = [
    ('[agents.bot]\nkinds = "auto"\n', "agents.bot.kinds must be a table of kind = mode", 46),
    ('[agents.bot]\nkinds = ["ab"]\n', "agents.bot.kinds must be a table of kind = mode", 46),
    ("[agents.bot]\nscopes = 5\n", "agents.bot.scopes must be a table of scope = mode", 46),
    ('[agents.bot]\nextracted = ["auto"]\n', "agents.bot.extracted: expected", 46),
    ("[agents.bot]\nkinds = { idea = 5 }\n", "agents.bot.kinds.idea: expected", 46),
    ("[agents]\nbot = 5\n", "agents.bot must be a table", 46),
]


@pytest.mark.parametrize(("tail", "needle", "line"), _BAD_SHAPES)
def test_an_agent_override_of_the_wrong_type_names_the_key_and_line(
    tail: str, needle: str, line: int
) -> None:
    text = DEFAULT_TEXT + "\n" + tail
    with pytest.raises(PolicyInvalid) as caught:
        parse_policy(text, BUILTIN_KINDS)
    assert needle in caught.value.reason
    assert caught.value.line == line, str(caught.value)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('kinds = "auto"\n', "[kinds] must be a table"),
        ("scopes = 5\n", "[scopes] must be a table"),
        ('agents = "bot"\n', "[agents] must be a table"),
        ('paused = "yes"\n', "paused: expected true or false"),
        ("other_kinds = 1\n", "other_kinds: expected"),
        ("extracted = []\n", "extracted: expected"),
        ("[kinds]\nidea = { a = 1 }\n", "kinds.idea: expected"),
        ("[scopes]\nuser = true\n", "scopes.user: expected"),
    ],
)
def test_every_top_level_value_of_the_wrong_type_is_invalid(text: str, needle: str) -> None:
    with pytest.raises(PolicyInvalid) as caught:
        parse_policy(text, BUILTIN_KINDS)
    assert needle in caught.value.reason
    assert caught.value.line == 1 + text.count("\n", 0, text.index("=")), str(caught.value)


def test_a_wrong_type_while_running_keeps_the_last_valid_policy(cairn: Cairn, paths: Paths) -> None:
    """Until 2026-11-30 `kinds = "auto"` under `[agents.bot]` raised a ValueError: the watcher's
    read died, health kept the last warning and `policy.set` answered internal_error."""
    cairn.policy.watch()
    path = paths.config / "policy.toml"
    path.write_text(PAUSED, encoding="utf-8")
    assert _until(lambda: cairn.policy.current().paused)
    for tail, needle, _ in _BAD_SHAPES[:3]:
        path.write_text(PAUSED + "\n" + tail, encoding="utf-8")
        assert _until(lambda needle=needle: needle in _warning(cairn)), _warning(cairn)  # type: ignore[misc]
        assert "line 46" in _warning(cairn)
        assert cairn.policy.current().paused  # the last valid policy stays
        with pytest.raises(InvalidInput, match="fix it first"):
            cairn.policy.set(Caller.human(), "kinds.idea", Mode.AUTO)
    path.write_text(DEFAULT_TEXT, encoding="utf-8")  # the watcher still runs: fixed, applied
    assert _until(lambda: not cairn.policy.current().paused)
    assert _until(lambda: _warning(cairn) == "")


def test_a_wrong_type_at_start_falls_back_to_the_last_valid_policy(
    paths: Paths, clock: FakeClock
) -> None:
    first = Cairn.open(paths, clock=clock)
    first.policy.set(Caller.human(), "paused", True)
    first.close()
    path = paths.config / "policy.toml"
    path.write_text(
        path.read_text(encoding="utf-8") + '\n[agents.bot]\nkinds = "auto"\n', encoding="utf-8"
    )
    again = Cairn.open(paths, clock=clock)
    try:
        assert again.policy.current().paused
        assert "agents.bot.kinds must be a table" in _warning(again)
    finally:
        again.close()


# -- a file that goes away and comes back ------------------------------------------------------


def test_the_missing_file_warning_clears_when_the_same_file_comes_back(
    cairn: Cairn, paths: Paths
) -> None:
    """Until 2026-11-30 the warning stayed for good when the file came back unchanged: the text
    read last was still the same, so nothing was read again and nothing cleared."""
    cairn.policy.watch()
    path = paths.config / "policy.toml"
    path.write_text(PAUSED, encoding="utf-8")
    assert _until(lambda: cairn.policy.current().paused)
    aside = path.with_name("policy.toml.bak")
    path.rename(aside)
    assert _until(lambda: "missing" in _warning(cairn)), _warning(cairn)
    aside.rename(path)
    assert _until(lambda: _warning(cairn) == ""), _warning(cairn)
    assert cairn.policy.current().paused


def test_the_unreadable_file_warning_clears_when_it_is_readable_again(
    cairn: Cairn, paths: Paths
) -> None:
    path = paths.config / "policy.toml"
    path.write_text(PAUSED, encoding="utf-8")
    cairn.policy.reload()
    path.write_bytes(b"\xff\xfe not utf-8")
    cairn.policy.reload()
    assert "cannot be read" in _warning(cairn)
    path.write_text(PAUSED, encoding="utf-8")  # the same text as read last
    cairn.policy.reload()
    assert _warning(cairn) == ""
    assert cairn.policy.current().paused


def test_a_policy_file_that_is_not_utf8_is_said_in_the_settings_words(
    cairn: Cairn, paths: Paths
) -> None:
    """The policy file said Python's words ("'utf-8' codec can't decode byte 0xff in position
    0: invalid start byte", "[Errno 13] Permission denied: '...'") where the settings file, read
    the same way, said "it is not UTF-8 text (byte 0xff at offset 0)": one function says both."""
    path = paths.config / "policy.toml"
    path.write_bytes(b"\xff\xfe not utf-8")
    cairn.policy.reload()
    assert _warning(cairn) == (
        f"{path} cannot be read: it is not UTF-8 text (byte 0xff at offset 0); the last valid "
        "policy stays in effect"
    )
    with pytest.raises(InvalidInput) as e:
        cairn.policy.set(Caller.human(), "kinds.idea", Mode.AUTO)
    said = f"{path} cannot be read: it is not UTF-8 text (byte 0xff at offset 0); fix it first"
    assert said in e.value.message, e.value.message


# -- a folder that takes no new file ----------------------------------------------------------


def test_a_change_in_a_folder_that_takes_no_new_file_is_said_and_changes_nothing(
    cairn: Cairn, paths: Paths
) -> None:
    """The policy window's (and `policy set`'s) change through the service: the file is replaced
    by a new one beside it, which the folder refuses. Said with the reason in words (until
    2026-12-01 "Operation not permitted"); the file and the policy in effect stay as they were
    and no temporary file is left."""
    path = paths.config / "policy.toml"
    before = path.read_bytes()
    with refusing_writes(paths.config), pytest.raises(IOFault) as raised:
        cairn.policy.set(Caller.human(), "kinds.fact", Mode.OFF)
    assert raised.value.message == (
        f"could not write the policy file {path}: no new file can be made in {paths.config}: "
        "permission denied; the policy in effect is unchanged"
    )
    assert path.read_bytes() == before
    assert sorted(p.name for p in paths.config.iterdir()) == ["policy.toml"]
    assert cairn.policy.current().kinds["fact"] is Mode.AUTO
    assert cairn.policy.set(Caller.human(), "kinds.fact", Mode.OFF).kinds["fact"] is Mode.OFF


def test_a_policy_file_that_cannot_be_made_at_start_is_said(paths: Paths) -> None:
    """A first start whose config folder takes no new file ended in a PermissionError
    traceback (until 2026-12-01); it is an io_error naming the file and why."""
    paths.config.mkdir(parents=True, mode=0o700)
    with refusing_writes(paths.config), pytest.raises(IOFault) as raised:
        Cairn.open(paths).close()
    assert raised.value.message.startswith(
        f"could not write the policy file {paths.config / 'policy.toml'}: no new file can be "
        f"made in {paths.config}: permission denied"
    )
    assert list(paths.config.iterdir()) == []


# -- a file that is a symbolic link (a dotfile manager's) -------------------------------------


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_a_symlinked_policy_file_is_followed_edited_and_written_through(
    cairn: Cairn, paths: Paths, tmp_path: Path
) -> None:
    """Until 2026-11-30 an edit to the file a symlinked policy.toml points to was never seen:
    only the config folder was watched."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "policy.toml"
    target.write_text(DEFAULT_TEXT, encoding="utf-8")
    path = paths.config / "policy.toml"
    link = path.with_name("policy.toml.link")
    link.symlink_to(target)
    os.replace(link, path)
    cairn.policy.watch()
    assert _until(lambda: _warning(cairn) == "")
    target.write_text(PAUSED, encoding="utf-8")  # edited where it lives, in place
    assert _until(lambda: cairn.policy.current().paused), "an edit to the target was missed"
    saved = dotfiles / ".policy.toml.swp"  # an editor's save: a new file moved over the target
    saved.write_text(PAUSED.replace('idea = "ask"', 'idea = "auto"'), encoding="utf-8")
    os.replace(saved, target)
    assert _until(lambda: cairn.policy.current().kinds["idea"] is Mode.AUTO)
    # A change through Cairn goes into the target; the link stays a link.
    cairn.policy.set(Caller.human(), "paused", False)
    assert path.is_symlink() and "paused = false" in target.read_text(encoding="utf-8")
    # The link pointed elsewhere: the new target is read, and watched from then on.
    other = tmp_path / "elsewhere" / "policy.toml"
    other.parent.mkdir()
    other.write_text(DEFAULT_TEXT, encoding="utf-8")
    link.symlink_to(other)
    os.replace(link, path)
    assert _until(lambda: cairn.policy.current().kinds["idea"] is Mode.ASK)
    other.write_text(PAUSED, encoding="utf-8")
    assert _until(lambda: cairn.policy.current().paused), "an edit to the new target was missed"
    target.write_text(DEFAULT_TEXT.replace('fact = "auto"', 'fact = "off"'), encoding="utf-8")
    threading.Event().wait(0.5)  # the old target is no longer the policy
    assert cairn.policy.current().kinds["fact"] is Mode.AUTO


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_a_policy_link_to_a_file_not_there_yet_stays_a_link(
    paths: Paths, clock: FakeClock, tmp_path: Path
) -> None:
    """A dotfile manager links policy.toml into a dotfiles folder whose file is not there yet.
    Cairn's first start wrote the default policy over the link itself - the person's link was
    gone, a plain file in its place. It writes the file the link points to now."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "policy.toml"
    path = paths.config / "policy.toml"
    paths.config.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    app = Cairn.open(paths, settings=Settings.defaults(), clock=clock)
    try:
        assert path.is_symlink() and os.readlink(path) == str(target)
        assert target.read_text(encoding="utf-8").startswith(DEFAULT_TEXT.splitlines()[0])
        app.policy.set(Caller.human(), "paused", True)
        assert path.is_symlink() and "paused = true" in target.read_text(encoding="utf-8")
    finally:
        app.close()


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_a_policy_link_into_a_folder_not_there_yet_starts_cairn_and_is_read_once_there(
    paths: Paths, clock: FakeClock, tmp_path: Path
) -> None:
    """policy.toml linked into a dotfiles checkout that is not cloned yet: Cairn did not start
    at all (exit 74, "the folder ... does not exist"), though a running Cairn whose folder goes
    warns and watches. A start does the same now: the default policy in effect, health says
    the file is missing, and the file is read once the folder and it are there."""
    target = tmp_path / "dotfiles" / "cairn" / "policy.toml"
    path = paths.config / "policy.toml"
    paths.config.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    app = Cairn.open(paths, settings=Settings.defaults(), clock=clock)
    try:
        assert path.is_symlink() and not target.parent.exists()  # nothing made in its place
        assert app.policy.current().kinds["idea"] is Mode.ASK  # the defaults
        assert "missing" in _warning(app), _warning(app)
        app.policy.watch()
        target.parent.mkdir(parents=True)
        target.write_text(PAUSED, encoding="utf-8")
        assert _until(lambda: app.policy.current().paused), "the file was never read"
        assert _until(lambda: _warning(app) == ""), _warning(app)
    finally:
        app.close()


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_a_link_target_folder_deleted_and_made_again_is_watched_again(
    cairn: Cairn, paths: Paths, tmp_path: Path
) -> None:
    """Until 2026-12-01 the folder a symlinked policy.toml leads into, once deleted and made
    again (a dotfiles checkout cloned afresh), was never watched again: edits were ignored -
    a pause among them - and health said "missing" while the file was there."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "policy.toml"
    target.write_text(DEFAULT_TEXT, encoding="utf-8")
    path = paths.config / "policy.toml"
    link = path.with_name("policy.toml.link")
    link.symlink_to(target)
    os.replace(link, path)
    cairn.policy.watch()
    target.write_text(PAUSED, encoding="utf-8")
    assert _until(lambda: cairn.policy.current().paused)
    shutil.rmtree(dotfiles)
    assert _until(lambda: "missing" in _warning(cairn)), _warning(cairn)
    dotfiles.mkdir()
    target.write_text(DEFAULT_TEXT, encoding="utf-8")
    assert _until(lambda: _warning(cairn) == ""), _warning(cairn)
    assert _until(lambda: not cairn.policy.current().paused)
    target.write_text(PAUSED, encoding="utf-8")  # an edit in the new folder, in place
    assert _until(lambda: cairn.policy.current().paused), "the new folder is not watched"
    saved = dotfiles / ".policy.toml.swp"  # and an editor's save there
    saved.write_text(PAUSED.replace('idea = "ask"', 'idea = "auto"'), encoding="utf-8")
    os.replace(saved, target)
    assert _until(lambda: cairn.policy.current().kinds["idea"] is Mode.AUTO)


def test_a_config_folder_deleted_and_made_again_is_watched_again(
    cairn: Cairn, paths: Paths
) -> None:
    """The same for the config folder itself: put back from a backup, its policy.toml is
    read, and edits to it apply."""
    cairn.policy.watch()
    path = paths.config / "policy.toml"
    kept = {f.name: f.read_bytes() for f in paths.config.iterdir() if f.is_file()}
    shutil.rmtree(paths.config)
    assert _until(lambda: "missing" in _warning(cairn)), _warning(cairn)
    paths.config.mkdir()
    for name, data in kept.items():
        (paths.config / name).write_bytes(data)
    path.write_text(PAUSED, encoding="utf-8")
    assert _until(lambda: cairn.policy.current().paused), "the folder made again is not watched"
    assert _until(lambda: _warning(cairn) == ""), _warning(cairn)
    path.write_text(DEFAULT_TEXT, encoding="utf-8")
    assert _until(lambda: not cairn.policy.current().paused)


def test_an_edit_made_before_the_watch_began_applies_when_it_begins(
    cairn: Cairn, paths: Paths
) -> None:
    """Cairn reads the file as it opens the store and starts watching it only once it
    listens: until 2026-12-01 an edit saved in between (an agent's first request can come in
    that moment) was not applied until the file changed again."""
    (paths.config / "policy.toml").write_text(PAUSED, encoding="utf-8")
    assert not cairn.policy.current().paused  # read before this edit
    cairn.policy.watch()
    assert _until(lambda: cairn.policy.current().paused, seconds=2)


# -- a file far too big ------------------------------------------------------------------------


def test_a_huge_policy_file_is_refused_before_it_is_parsed(cairn: Cairn, paths: Paths) -> None:
    """Until 2026-11-30 there was no cap: an 8 MB file (a log written into it by mistake) took
    seconds to parse, holding up every later edit and every `policy.set` behind it."""
    huge = PAUSED + "\n" + "# filler comment line\n" * 400_000
    with pytest.raises(PolicyInvalid, match="too big") as caught:
        parse_policy(huge, BUILTIN_KINDS)
    assert "1 MiB" in caught.value.reason
    cairn.policy.watch()
    path = paths.config / "policy.toml"
    path.write_text(huge, encoding="utf-8")
    assert _until(lambda: "too big" in _warning(cairn)), _warning(cairn)
    assert not cairn.policy.current().paused  # the last valid policy stays
    with pytest.raises(InvalidInput, match="too big"):
        cairn.policy.set(Caller.human(), "kinds.idea", Mode.AUTO)
    path.write_text(PAUSED, encoding="utf-8")
    assert _until(lambda: cairn.policy.current().paused, seconds=1.5)
    assert _warning(cairn) == ""
    # A file just under the cap is still read.
    near = PAUSED + "#" * (1024 * 1024 - len(PAUSED) - 1) + "\n"
    assert parse_policy(near, BUILTIN_KINDS).paused


def test_folders_deleted_and_made_again_while_edits_arrive_never_lock_the_watch(
    cairn: Cairn, paths: Paths
) -> None:
    """Re-watching a folder (stopping watchdog's old watch) while watchdog delivered an event
    took the two locks in opposite orders: the reload held the policy's lock and waited for
    the observer's, the observer's thread held its own and waited for the policy's to schedule
    the next read. Cairn then hung at its stop, for good (seen: a daemon whose folder was
    deleted never ended). The folder is deleted and made again until the two meet."""
    cairn.policy.watch()
    path = paths.config / "policy.toml"
    kept = {f.name: f.read_bytes() for f in paths.config.iterdir() if f.is_file()}
    pause = threading.Event()
    for i in range(40):
        shutil.rmtree(paths.config, ignore_errors=True)
        paths.config.mkdir(exist_ok=True)
        for name, data in kept.items():
            (paths.config / name).write_bytes(data)
        path.write_text(PAUSED if i % 2 else DEFAULT_TEXT, encoding="utf-8")
        pause.wait(0.1 + (i % 4) * 0.01)  # about when the 0.1 s timer's reload runs
    path.write_text(PAUSED, encoding="utf-8")
    assert _until(lambda: cairn.policy.current().paused, 10), "the watch no longer applies edits"
    closing = threading.Thread(target=cairn.policy.close, daemon=True)
    closing.start()
    closing.join(30)
    assert not closing.is_alive(), "closing the policy hangs: its watch is locked"
