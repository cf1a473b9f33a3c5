"""A policy file that is no file, far too big, nested past reason or very long: each is a clear
warning (or a clear refusal of `policy set`) in about the time a valid file takes, never a hang,
a memory blow-up or a traceback - Cairn reads it while holding the lock every edit and every
`policy set` waits on."""

from __future__ import annotations

import contextlib
import os
import resource
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.app import Cairn
from core.errors import InvalidInput
from core.model import BUILTIN_KINDS, Caller
from core.paths import Paths
from core.policy import DEFAULT_TEXT, Mode, PolicyInvalid, parse_policy
from tests.conftest import FakeClock
from tests.test_policy_file_shapes import PAUSED, _warning

pytestmark = [
    pytest.mark.skipif(os.name == "nt", reason="FIFOs and /dev files are POSIX's"),
    pytest.mark.shipped_policy,
]


def _point_at(path: Path, target: Path | str) -> None:
    """Make the policy file a symbolic link to `target` (as a dotfile manager does)."""
    link = path.with_name("policy.toml.link")
    link.symlink_to(target)
    os.replace(link, path)


def _within(seconds: float, call: Callable[[], Any], unblock: Callable[[], None]) -> Any:
    """`call()`'s result (or the exception it raised), which must come within `seconds`;
    `unblock` then frees a call still waiting, so a failing test does not hang the run."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(call())
        except Exception as e:
            out.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    hung = thread.is_alive()
    if hung:
        unblock()
        thread.join(10)
    assert not hung, f"still waiting after {seconds} s"
    return out[0]


def _unblock_reader(fifo: Path) -> Callable[[], None]:
    def unblock() -> None:  # a writer that opens and closes: the blocked reader reads nothing
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    return unblock


# -- a file that is no file --------------------------------------------------------------------


def test_a_policy_file_leading_to_a_fifo_is_refused_not_waited_on(
    cairn: Cairn, paths: Paths, tmp_path: Path
) -> None:
    """Until 2026-12-01 Cairn opened a FIFO and waited for a writer, holding the policy lock:
    no warning, `policy set` timed out, and SIGTERM no longer stopped it."""
    path = paths.config / "policy.toml"
    path.write_text(PAUSED, encoding="utf-8")
    cairn.policy.reload()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _point_at(path, fifo)
    _within(5, cairn.policy.reload, _unblock_reader(fifo))
    assert "is not a regular file" in _warning(cairn) and "FIFO" in _warning(cairn)
    assert cairn.policy.current().paused  # the last valid policy stays
    refused = _within(
        5,
        lambda: cairn.policy.set(Caller.human(), "kinds.idea", Mode.AUTO),
        _unblock_reader(fifo),
    )
    assert isinstance(refused, InvalidInput) and "is not a regular file" in refused.message
    assert cairn.policy.current().kinds["idea"] is Mode.ASK
    _point_at(path, paths.config / "real.toml")
    (paths.config / "real.toml").write_text(PAUSED, encoding="utf-8")
    cairn.policy.reload()
    assert _warning(cairn) == ""


def test_a_fifo_in_place_of_the_policy_file_at_start_is_a_warning(
    paths: Paths, clock: FakeClock
) -> None:
    """Until 2026-12-01 Cairn never started, logged nothing and ignored SIGTERM."""
    first = Cairn.open(paths, clock=clock)
    first.policy.set(Caller.human(), "paused", True)
    first.close()
    path = paths.config / "policy.toml"
    path.unlink()
    os.mkfifo(path)
    again = _within(10, lambda: Cairn.open(paths, clock=clock), _unblock_reader(path))
    assert isinstance(again, Cairn), again
    try:
        assert "is not a regular file" in _warning(again)
        assert again.policy.current().paused  # what the person last had, not the defaults
    finally:
        again.close()


def test_a_policy_file_leading_to_a_device_is_refused(cairn: Cairn, paths: Paths) -> None:
    """Until 2026-12-01 a link to /dev/zero held the lock for good and one to /dev/urandom
    grew Cairn's memory without limit (1.1 GB in 8 s)."""
    path = paths.config / "policy.toml"
    for device in ("/dev/zero", "/dev/urandom", "/dev/null"):
        _point_at(path, device)
        _within(5, cairn.policy.reload, lambda: None)
        assert "is not a regular file" in _warning(cairn), _warning(cairn)
        assert "device" in _warning(cairn)
        with pytest.raises(InvalidInput, match="is not a regular file"):
            cairn.policy.set(Caller.human(), "kinds.idea", Mode.AUTO)


def test_a_folder_in_place_of_the_policy_file_is_named_as_one(cairn: Cairn, paths: Paths) -> None:
    path = paths.config / "policy.toml"
    path.unlink()
    path.mkdir()
    cairn.policy.reload()
    assert "is not a regular file (a folder)" in _warning(cairn), _warning(cairn)


# -- a file far too big ------------------------------------------------------------------------


def test_a_huge_policy_file_is_refused_without_reading_it_whole(
    cairn: Cairn, paths: Paths, tmp_path: Path
) -> None:
    """Until 2026-12-01 a 512 MiB file was read whole (622 MB of memory at its peak) before the
    1 MiB cap was checked on its text."""
    huge = tmp_path / "huge.toml"
    with huge.open("wb") as f:
        f.truncate(256 * 1024 * 1024)  # sparse: no disk used, every byte read costs memory
    path = paths.config / "policy.toml"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    _point_at(path, huge)
    cairn.policy.reload()
    grew_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grew_mib < 64, f"reading the file grew memory by {grew_mib:.0f} MiB"
    assert "too big" in _warning(cairn) and "1 MiB" in _warning(cairn), _warning(cairn)
    assert "268,435,456 bytes" in _warning(cairn)
    with pytest.raises(InvalidInput, match="too big"):
        cairn.policy.set(Caller.human(), "kinds.idea", Mode.AUTO)


# -- a file nested past reason -----------------------------------------------------------------

_DEEP = {
    "a dotted key": "kinds." + ".".join(["a"] * 10_000) + ' = "auto"',
    "a table header": "[" + ".".join(["a"] * 10_000) + "]",
    "arrays": "x = " + "[" * 3000 + "]" * 3000,
    "inline tables": "x = " + "{ a = " * 3000 + "1" + " }" * 3000,
    "an array of inline tables": "x = " + "[{ a = " * 1500 + "1" + " }]" * 1500,
}


@pytest.mark.parametrize("shape", list(_DEEP))
def test_a_file_nested_past_reason_is_refused_before_it_is_parsed(shape: str) -> None:
    """Until 2026-12-01 a dotted key 50,000 levels deep (100 KB) took the parser 95 s, and
    arrays or inline tables 3,000 deep (6 KB) raised RecursionError, with no line."""
    text = DEFAULT_TEXT + "\n" + _DEEP[shape] + "\n"
    with pytest.raises(PolicyInvalid) as caught:
        parse_policy(text, BUILTIN_KINDS)
    assert "nested more than 32 levels deep" in caught.value.reason, caught.value.reason
    assert caught.value.line == 45


def test_nesting_a_person_writes_is_taken() -> None:
    text = DEFAULT_TEXT + (
        '\n[agents."gpt-4.1"]\nkinds = { idea = "auto" }\n'
        '[agents.b.c.d]\n# "[[[[[[" in a comment, and in a string:\n'
        'x = "[[[[{{{{ a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h"\n'
    )
    with pytest.raises(PolicyInvalid) as caught:  # a valid depth: read on to what is wrong
        parse_policy(text, BUILTIN_KINDS)
    assert "nested" not in caught.value.reason, caught.value.reason
    fine = DEFAULT_TEXT + '\n[agents."gpt-4.1"]\nkinds = { idea = "auto" }\nextracted = "off"\n'
    assert parse_policy(fine, BUILTIN_KINDS).agents["gpt-4.1"].extracted is Mode.OFF


def test_a_deeply_nested_edit_is_a_warning_naming_its_line(cairn: Cairn, paths: Paths) -> None:
    """Until 2026-12-01 health said "could not be applied (RecursionError: ...)" with no line,
    the log had a traceback of about 1,000 frames, and `policy set` answered internal_error."""
    path = paths.config / "policy.toml"
    path.write_text(PAUSED + "\n" + _DEEP["arrays"] + "\n", encoding="utf-8")
    cairn.policy.reload()
    assert "line 45: nested more than 32 levels deep" in _warning(cairn), _warning(cairn)
    assert "RecursionError" not in _warning(cairn)
    with pytest.raises(InvalidInput, match="fix it first"):
        cairn.policy.set(Caller.human(), "kinds.idea", Mode.AUTO)


# -- many agents -------------------------------------------------------------------------------


def test_a_policy_of_thousands_of_agents_is_read_and_its_faults_placed() -> None:
    """Until 2026-12-01 every agent's line was looked up by reading the file from its start,
    several times: 1,000 agents took 3.2 s, 4,000 took 55 s (a daemon with 1,500 could not
    start within 30 s). The file is scanned once now: `scripts/bench_policy.py` times it (3,000
    agents, 88 KB: 0.1-0.3 s, growing with the file - docs/performance.md); here, that every
    agent is read and a fault among them is placed on its line."""
    agents = "".join(f'a{i} = {{ extracted = "off" }}\n' for i in range(3000))
    text = DEFAULT_TEXT + "\n[agents]\n" + agents
    policy = parse_policy(text, BUILTIN_KINDS)
    assert len(policy.agents) == 3000 and policy.agents["a2999"].extracted is Mode.OFF
    with pytest.raises(PolicyInvalid) as caught:  # and the line of a fault among them
        parse_policy(text + 'a3000 = { extracted = "maybe" }\n', BUILTIN_KINDS)
    assert caught.value.line == 3046, str(caught.value)


# -- the line of every fault -------------------------------------------------------------------

_NO_LINE_BEFORE = [
    ("paused = true\nkinds.idea = 5\n", "kinds.idea: expected", 2),
    ("paused = true\nkinds = { idea = 5 }\n", "kinds.idea: expected", 2),
    ('paused = true\nagents.bot.kinds = "auto"\n', "agents.bot.kinds must be a table", 2),
    ("paused = true\n[agents.bot.kinds]\n\nidea = 3\n", "agents.bot.kinds.idea: expected", 4),
    ('[agents.bot]\nextracted = "ask"\n[agents.bot.kinds]\nidea = "?"\n', "kinds.idea", 4),
    ("paused = true\n\n[[agents]]\nx = 1\n", "[agents] must be a table", 3),
    ('[[agents.bot.kinds]]\nidea = "auto"\n', "agents.bot.kinds must be a table", 1),
    ("paused = true\n\npaused = false", "Cannot overwrite a value", 3),
    ('[agents."gpt-4.1"]\nextracted = "ask"\n[agents."Bad"]\n', "not a valid agent name", 3),
    ('[kinds]\n"id\\u0065a" = 7\n', "kinds.idea: expected", 2),
]


@pytest.mark.parametrize(("text", "needle", "line"), _NO_LINE_BEFORE)
def test_a_fault_written_in_any_toml_shape_names_its_line(
    text: str, needle: str, line: int
) -> None:
    """Until 2026-12-01 these named no line: the lookup knew `key =` under `[table]` only, not
    dotted keys, inline tables, sub-tables or arrays of tables, and a duplicate key on the
    last line was 'at end of document'."""
    with pytest.raises(PolicyInvalid) as caught:
        parse_policy(text, BUILTIN_KINDS)
    assert needle in caught.value.reason, caught.value.reason
    assert caught.value.line == line, str(caught.value)


# -- very long names ---------------------------------------------------------------------------

_LONG = "k" * 500_000


@pytest.mark.parametrize(
    "text",
    [
        f'[kinds]\n"{_LONG}" = "auto"\n',
        f'[agents.{_LONG}]\nextracted = "ask"\n',
        f'[agents.bot]\nkinds = {{ "{_LONG}" = "auto" }}\n',
        f'[agents.bot]\n"{_LONG}" = "auto"\n',
        f'"{_LONG}" = 1\n',
        f'[kinds]\nidea = "{_LONG}"\n',
        f"paused = [{', '.join(['1'] * 100_000)}]\n",
    ],
)
def test_a_very_long_name_or_value_is_shown_cut(text: str) -> None:
    """Until 2026-12-01 a 500,000-character key put a 500 KB message into health and the log."""
    with pytest.raises(PolicyInvalid) as caught:
        parse_policy(text, BUILTIN_KINDS)
    message = str(caught.value)
    assert len(message) < 400, f"{len(message):,} characters: {message[:200]}"
    assert "kkkkkkkkkk…" in message or "1, 1, 1…" in message, message


def test_a_very_long_setting_asked_of_cairn_is_shown_cut(cairn: Cairn) -> None:
    for target in (f"agents.{_LONG}.extracted", f"kinds.{_LONG}", _LONG):
        with pytest.raises(InvalidInput) as caught:
            cairn.policy.set(Caller.human(), target, Mode.AUTO)
        assert len(caught.value.message) < 400, caught.value.message[:200]
