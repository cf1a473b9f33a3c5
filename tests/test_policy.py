"""The capture policy: its rules, the human-edited file (valid edits apply live, invalid ones keep
the last valid policy and say which line), and changes made through Cairn written back with the
person's comments kept."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from core.app import Cairn
from core.changes import ChangeSet, Topic
from core.errors import Forbidden, InvalidInput
from core.model import BUILTIN_KINDS, Caller, Scope, Surface
from core.paths import Paths
from core.policy import DEFAULT_TEXT, Mode, Policy, PolicyInvalid, parse_policy
from core.policy_file import render_changes
from tests.conftest import FakeClock

pytestmark = pytest.mark.shipped_policy  # `cairn` starts with no policy file


def test_the_default_file_is_the_default_policy() -> None:
    assert parse_policy(DEFAULT_TEXT, BUILTIN_KINDS) == Policy()


def test_the_strictest_rule_wins_and_says_why() -> None:
    policy = Policy()
    ruling = policy.rule(agent="a", verified=True, kind="fact", scope=Scope.USER, extracted=False)
    assert ruling.mode is Mode.ASK and ruling.reasons == ("scope:user",)
    ruling = policy.rule(agent="a", verified=True, kind="idea", scope=Scope.USER, extracted=True)
    assert ruling.mode is Mode.ASK and ruling.reasons == ("kind:idea", "scope:user", "extracted")
    assert (
        policy.rule(
            agent="a", verified=False, kind="fact", scope=Scope.PROJECT, extracted=False
        ).mode
        is Mode.AUTO
    )


def test_a_looser_agent_override_needs_a_token_a_stricter_one_does_not() -> None:
    text = DEFAULT_TEXT + (
        '\n[agents.helper]\nkinds = { idea = "auto", fact = "off" }\nscopes = { user = "auto" }\n'
    )
    policy = parse_policy(text, BUILTIN_KINDS)

    def mode(verified: bool, kind: str, scope: Scope = Scope.PROJECT) -> Mode:
        return policy.rule(
            agent="helper", verified=verified, kind=kind, scope=scope, extracted=False
        ).mode

    assert mode(True, "idea") is Mode.AUTO
    assert mode(False, "idea") is Mode.ASK  # a declared name alone claims nothing
    assert mode(False, "fact") is Mode.OFF  # tightening applies to anyone using the name
    assert mode(True, "preference", Scope.USER) is Mode.AUTO
    assert mode(False, "preference", Scope.USER) is Mode.ASK


@pytest.mark.parametrize(
    ("edit", "line", "needle"),
    [
        (('idea = "ask"', 'idea = "maybe"'), 30, 'kinds.idea: expected "auto", "ask" or "off"'),
        (("fact = ", "facts = "), 22, "kinds.facts: unknown kind"),
        (("paused = false", "paused = fals"), 13, "not valid TOML"),
        (("paused = false", 'paused = "no"'), 13, "paused: expected true or false"),
        (('global = "ask"', 'project = "ask"'), 34, "only the wide scopes"),
    ],
)
def test_an_invalid_file_names_the_line(edit: tuple[str, str], line: int, needle: str) -> None:
    text = DEFAULT_TEXT.replace(*edit)
    with pytest.raises(PolicyInvalid) as caught:
        parse_policy(text, BUILTIN_KINDS)
    assert caught.value.line == line, str(caught.value)
    assert needle in caught.value.reason


def test_writing_back_keeps_the_persons_comments_and_layout() -> None:
    text = DEFAULT_TEXT.replace("[kinds]", "# my own note about kinds\n[kinds]")
    changed = Policy(kinds={**Policy().kinds, "idea": Mode.AUTO}, paused=True)
    out = render_changes(text, changed)
    assert "# my own note about kinds" in out
    assert 'idea = "auto"' in out and "paused = true" in out
    assert parse_policy(out, BUILTIN_KINDS) == changed
    untouched = [line for line in text.splitlines() if "idea" not in line and "paused" not in line]
    assert all(line in out.splitlines() for line in untouched)


# -- the live file -----------------------------------------------------------------------------


def _policy_changes(cairn: Cairn) -> tuple[threading.Event, list[ChangeSet]]:
    seen: list[ChangeSet] = []
    event = threading.Event()

    def listen(change: ChangeSet) -> None:
        if Topic.POLICY in change.topics:
            seen.append(change)
            event.set()

    cairn.bus.subscribe(listen)
    return event, seen


def test_cairn_writes_the_default_file_on_first_start(cairn: Cairn, paths: Paths) -> None:
    path = paths.config / "policy.toml"
    assert path.read_text(encoding="utf-8") == DEFAULT_TEXT
    assert os.stat(path).st_mode & 0o077 == 0
    assert cairn.policy.current() == Policy()


def test_an_editor_save_applies_within_a_second(cairn: Cairn, paths: Paths) -> None:
    cairn.policy.watch()
    event, _ = _policy_changes(cairn)
    path = paths.config / "policy.toml"
    # An editor writes a temporary file and moves it over the original (no modify event).
    tmp = path.with_name(".policy.toml.swp")
    tmp.write_text(DEFAULT_TEXT.replace("paused = false", "paused = true"), encoding="utf-8")
    os.replace(tmp, path)
    assert event.wait(5), "the edit never applied"
    assert cairn.policy.current().paused
    assert "policy_invalid" not in cairn.warnings.snapshot()


def test_a_file_saved_with_a_byte_order_mark_is_read_and_changed(
    cairn: Cairn, paths: Paths
) -> None:
    """A policy.toml saved by an editor that starts files with a byte order mark (Windows
    Notepad) was "not valid TOML" at line 1: the last valid policy stayed, the person's pause
    did not apply, and every change through Cairn was refused until the file was fixed."""
    path = paths.config / "policy.toml"
    path.write_bytes(
        b"\xef\xbb\xbf" + DEFAULT_TEXT.replace("paused = false", "paused = true").encode()
    )
    cairn.policy.reload()
    assert cairn.policy.current().paused
    assert "policy_invalid" not in cairn.warnings.snapshot()
    cairn.policy.set(Caller.human(), "paused", False)
    assert not cairn.policy.current().paused
    assert "paused = false" in path.read_text(encoding="utf-8-sig")


def test_an_invalid_edit_keeps_the_last_valid_policy_and_warns(cairn: Cairn, paths: Paths) -> None:
    cairn.policy.watch()
    path = paths.config / "policy.toml"
    path.write_text(DEFAULT_TEXT.replace('idea = "ask"', 'idea = "auto"'), encoding="utf-8")
    deadline = threading.Event()
    for _ in range(50):
        if cairn.policy.current().kinds["idea"] is Mode.AUTO:
            break
        deadline.wait(0.1)
    assert cairn.policy.current().kinds["idea"] is Mode.AUTO
    path.write_text(DEFAULT_TEXT.replace('idea = "ask"', 'idea = "sometimes"'), encoding="utf-8")
    for _ in range(50):
        # the watcher may read the file while it is still being written ("empty, perhaps still
        # being saved") before the edit's own warning replaces that one
        if "kinds.idea" in cairn.warnings.snapshot().get("policy_invalid", ""):
            break
        deadline.wait(0.1)
    warning = cairn.warnings.snapshot()["policy_invalid"]
    assert "line 30" in warning and "kinds.idea" in warning
    assert cairn.policy.current().kinds["idea"] is Mode.AUTO  # the last valid one stays
    assert cairn.health.snapshot(Caller.human())["warnings"]["policy_invalid"] == warning
    path.write_text(DEFAULT_TEXT, encoding="utf-8")  # fixed: the warning goes
    for _ in range(50):
        if "policy_invalid" not in cairn.warnings.snapshot():
            break
        deadline.wait(0.1)
    assert "policy_invalid" not in cairn.warnings.snapshot()
    assert cairn.policy.current().kinds["idea"] is Mode.ASK


def test_a_file_caught_mid_save_never_resets_the_policy(cairn: Cairn, paths: Paths) -> None:
    """An editor that saves in place truncates the file, then writes it: read in between, the
    file is empty - which must not read as "every rule at its default" (that would lift a
    pause, and keep it lifted if the finished file turned out invalid)."""
    path = paths.config / "policy.toml"
    path.write_text(DEFAULT_TEXT.replace("paused = false", "paused = true"), encoding="utf-8")
    cairn.policy.reload()
    assert cairn.policy.current().paused
    for caught in ("", "\n  \n"):
        path.write_text(caught, encoding="utf-8")  # truncated, nothing written yet
        cairn.policy.reload()
        assert cairn.policy.current().paused
        assert "empty" in cairn.warnings.snapshot()["policy_invalid"]
    path.write_text(DEFAULT_TEXT.replace("paused = false", "paused = maybe"), encoding="utf-8")
    cairn.policy.reload()  # the finished file is invalid: the pause still holds
    assert cairn.policy.current().paused
    path.write_text("", encoding="utf-8")
    cairn.policy.reload()
    # A change made through Cairn meanwhile writes a whole, commented file - not bare keys.
    cairn.policy.set(Caller.human(), "kinds.idea", Mode.AUTO)
    written = path.read_text(encoding="utf-8")
    assert "# Cairn capture policy" in written and "paused = true" in written


def test_an_invalid_file_at_start_falls_back_to_the_last_valid_policy(
    paths: Paths, clock: FakeClock
) -> None:
    first = Cairn.open(paths, clock=clock)
    first.policy.set(Caller.human(), "kinds.fact", Mode.OFF)  # stricter than the default
    first.close()
    path = paths.config / "policy.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n[[broken", encoding="utf-8")
    again = Cairn.open(paths, clock=clock)
    try:
        assert again.policy.current().kinds["fact"] is Mode.OFF  # not the looser default
        assert "not valid TOML" in again.warnings.snapshot()["policy_invalid"]
    finally:
        again.close()


def test_a_policy_file_gone_at_start_is_written_back_not_reset(
    paths: Paths, clock: FakeClock
) -> None:
    """A policy.toml deleted while Cairn was stopped came back as the defaults: a pause was
    lifted and stricter rules loosened, without a warning or an audit event."""
    first = Cairn.open(paths, clock=clock)
    first.policy.set(Caller.human(), "paused", True)
    first.policy.set(Caller.human(), "kinds.fact", Mode.OFF)
    first.close()
    path = paths.config / "policy.toml"
    path.unlink()
    again = Cairn.open(paths, clock=clock)
    try:
        assert again.policy.current().paused and again.policy.current().kinds["fact"] is Mode.OFF
        assert parse_policy(path.read_text(encoding="utf-8"), BUILTIN_KINDS).paused
        assert "was missing" in again.warnings.snapshot()["policy_invalid"]
    finally:
        again.close()


def test_a_policy_file_edited_while_stopped_is_an_audited_change(
    paths: Paths, clock: FakeClock
) -> None:
    first = Cairn.open(paths, clock=clock)
    first.close()
    path = paths.config / "policy.toml"
    path.write_text(DEFAULT_TEXT.replace("paused = false", "paused = true"), encoding="utf-8")
    again = Cairn.open(paths, clock=clock)
    try:
        assert again.policy.current().paused
        changed = [
            c
            for c in again.memories.changes_since(Caller.human(), 0).changes
            if c.action == "policy_changed"
        ]
        assert len(changed) == 1
    finally:
        again.close()


@pytest.mark.parametrize(
    "edit",
    [
        ("[kinds]", '[kinds]\n# my note: keep this\n[scopes]\nglobal = "auto"\n[kinds]'),
        ('fact = "auto"', 'fact = "maybe"'),
    ],
)
def test_a_change_through_cairn_never_overwrites_an_invalid_file(
    cairn: Cairn, paths: Paths, edit: tuple[str, str]
) -> None:
    """`cairn policy set` rebuilt an invalid file from the template (broken TOML) or wrote the
    last valid values over the person's (a bad value): their edits were gone for good."""
    path = paths.config / "policy.toml"
    text = DEFAULT_TEXT.replace("paused = false", "paused = true").replace(*edit)
    path.write_text(text, encoding="utf-8")
    cairn.policy.reload()
    with pytest.raises(InvalidInput, match="fix it first"):
        cairn.policy.set(Caller.human(), "kinds.idea", Mode.AUTO)
    assert path.read_text(encoding="utf-8") == text


def test_a_refusal_over_an_invalid_file_names_the_line_once(cairn: Cairn, paths: Paths) -> None:
    """The refusal read "line 31: policy.toml is not valid (line 31: kinds.my_edit: unknown
    kind ...)": the file's own error, line and all, wrapped in one that named the line again."""
    path = paths.config / "policy.toml"
    text = DEFAULT_TEXT.replace('idea = "ask"', 'idea = "ask"\nmy_edit = "off"')
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index('my_edit = "off"') + 1
    cairn.policy.reload()
    with pytest.raises(InvalidInput) as caught:
        cairn.policy.set(Caller.human(), "paused", True)
    message = str(caught.value)
    assert message.startswith(f"line {line}: policy.toml is not valid (kinds.my_edit: "), message
    assert message.count(f"line {line}") == 1, message
    assert path.read_text(encoding="utf-8") == text


def test_removing_an_override_over_an_invalid_file_is_refused_naming_the_line(
    cairn: Cairn, paths: Paths
) -> None:
    """Removing an agent's override (the Policy window's Remove) over a policy file the person
    had broken raised the parser's own exception - an internal error at the surface - where
    `set` says which line is wrong. Now both refuse alike, and the file is left as it is."""
    path = paths.config / "policy.toml"
    cairn.policy.set(Caller.human(), "agents.helper.kinds.idea", Mode.AUTO)
    text = path.read_text(encoding="utf-8").replace('idea = "ask"', 'idea = "sometimes"', 1)
    path.write_text(text, encoding="utf-8")
    cairn.policy.reload()
    with pytest.raises(InvalidInput) as caught:
        cairn.policy.remove_override(Caller.human(), "helper", "kinds.idea")
    assert "policy.toml is not valid" in str(caught.value), str(caught.value)
    assert path.read_text(encoding="utf-8") == text


def test_a_duplicated_table_is_named_at_its_own_line() -> None:
    text = DEFAULT_TEXT + '\n[scopes]\nglobal = "auto"\n\n# the end\n'
    with pytest.raises(PolicyInvalid) as caught:
        parse_policy(text, BUILTIN_KINDS)
    assert caught.value.line == DEFAULT_TEXT.count("\n") + 2, str(caught.value)


@pytest.mark.parametrize(
    ("name", "needle"),
    [("ghp_Z8b2kQ9xLm4Pw7Rt1Vy3Nc6Hd0Fg5Js2Ak9Q", "looks like a secret"), ("human", "reserved")],
)
def test_a_hand_written_agent_name_is_checked_like_any_other(name: str, needle: str) -> None:
    """`policy set` refused these names, but the file took them, and policy.get showed them to
    every agent."""
    text = DEFAULT_TEXT + f'\n[agents.{name}]\nkinds = {{ idea = "auto" }}\n'
    with pytest.raises(PolicyInvalid, match=needle):
        parse_policy(text, BUILTIN_KINDS)


def test_changes_through_cairn_are_a_persons_and_reach_the_file(cairn: Cairn, paths: Paths) -> None:
    event, seen = _policy_changes(cairn)
    with pytest.raises(Forbidden):
        cairn.policy.set(Caller(Surface.AGENT, agent="a"), "paused", True)
    with pytest.raises(InvalidInput, match="unknown policy setting"):
        cairn.policy.set(Caller.human(), "kinds", Mode.AUTO)
    with pytest.raises(InvalidInput, match="unknown kind"):
        cairn.policy.set(Caller.human(), "kinds.facts", Mode.AUTO)
    cairn.policy.set(Caller.human(), "agents.helper.kinds.idea", Mode.AUTO)
    assert event.wait(5) and seen
    text = (paths.config / "policy.toml").read_text(encoding="utf-8")
    assert "[agents.helper]" in text and "# Cairn capture policy" in text
    assert parse_policy(text, BUILTIN_KINDS) == cairn.policy.current()
    feed = cairn.memories.changes_since(Caller.human(), 0).changes
    assert [c.action for c in feed if c.action == "policy_changed"] == ["policy_changed"]


def test_the_file_left_by_a_crash_is_never_half_written(cairn: Cairn, paths: Paths) -> None:
    path = paths.config / "policy.toml"
    before = path.stat().st_ino
    cairn.policy.set(Caller.human(), "paused", True)
    assert path.stat().st_ino != before  # replaced by rename, not rewritten in place
    assert not list(Path(paths.config).glob(".policy.toml.*.tmp"))


def test_one_override_of_an_agent_can_be_removed(cairn: Cairn, paths: Paths) -> None:
    person = Caller.human()
    cairn.policy.set(person, "agents.helper.kinds.idea", Mode.AUTO)
    cairn.policy.set(person, "agents.helper.scopes.user", Mode.OFF)
    with pytest.raises(Forbidden):
        cairn.policy.remove_override(Caller(Surface.AGENT, agent="a"), "helper", "kinds.idea")
    policy = cairn.policy.remove_override(person, "helper", "kinds.idea")
    assert policy.agents["helper"].to_dict() == {"scopes": {"user": "off"}}
    text = (paths.config / "policy.toml").read_text(encoding="utf-8")
    assert parse_policy(text, BUILTIN_KINDS) == policy
    policy = cairn.policy.remove_override(person, "helper", "scopes.user")
    assert "helper" not in policy.agents
    text = (paths.config / "policy.toml").read_text(encoding="utf-8")
    assert "[agents.helper]" not in text and "# Cairn capture policy" in text


def test_one_write_is_judged_by_one_policy() -> None:
    """The gate read the policy once for the pause and again for the rules: a change between
    the two judged a write by neither (paused, then `fact` off: the write was stored)."""
    from core.governance import Gate, Outcome
    from core.model import Origin

    paused = replace(Policy(), paused=True)
    fact_off = replace(Policy(), kinds={**Policy().kinds, "fact": Mode.OFF})
    policies = iter([paused, fact_off, fact_off])
    gate = Gate(lambda: next(policies), frozenset)
    verdict = gate.check(
        Caller(Surface.AGENT, agent="a", verified=True),
        kind="fact",
        scope=Scope.USER,
        origin=Origin.EXPLICIT,
        fields={"content": "the queue is called ledger"},
    )
    assert verdict.outcome is not Outcome.STORE and verdict.code == "capture_paused"


def test_an_upper_case_agent_name_in_the_file_is_reported_and_the_rest_kept(
    paths: Paths, clock: FakeClock
) -> None:
    """`[agents.Claude-Code]` was taken, from the file and from the window alike: an override no
    agent (names are lower case) could ever meet, with no word in the health warnings. A store
    whose last valid policy still holds one keeps the rest of it (here, the pause)."""
    first = Cairn.open(paths, clock=clock)
    first.policy.set(Caller.human(), "paused", True)
    first.close()
    path = paths.config / "policy.toml"
    path.write_text(
        path.read_text(encoding="utf-8") + '\n[agents.Claude-Code]\nkinds = { idea = "auto" }\n',
        encoding="utf-8",
    )
    upper = {"agents": {"Claude-Code": {"kinds": {"idea": "auto"}}}}
    saved = first.policy.current().to_dict() | upper
    con = sqlite3.connect(paths.database)  # as the window saved it before the name was refused
    con.execute("UPDATE meta SET value = ? WHERE key = 'policy'", (json.dumps(saved),))
    con.commit()
    con.close()
    again = Cairn.open(paths, clock=clock)
    try:
        warning = again.warnings.snapshot()["policy_invalid"]
        assert "agents.Claude-Code: not a valid agent name" in warning
        assert "lower-case" in warning
        assert again.policy.current().paused
        assert again.policy.current().agents == {}
    finally:
        again.close()


def test_an_agent_whose_name_has_dots_gets_overrides_through_cairn(
    cairn: Cairn, paths: Paths
) -> None:
    """`policy set agents.gpt-4.1.kinds.idea auto` said "unknown policy setting"."""
    person = Caller.human()
    cairn.policy.set(person, "agents.gpt-4.1.kinds.idea", Mode.AUTO)
    cairn.policy.set(person, "agents.gpt-4.1.scopes.user", Mode.OFF)
    cairn.policy.set(person, "agents.v1.2.extracted", Mode.ASK)
    policy = cairn.policy.current()
    both = {"kinds": {"idea": "auto"}, "scopes": {"user": "off"}}
    assert policy.agents["gpt-4.1"].to_dict() == both
    assert policy.agents["v1.2"].to_dict() == {"extracted": "ask"}
    text = (paths.config / "policy.toml").read_text(encoding="utf-8")
    assert parse_policy(text, BUILTIN_KINDS) == policy
    with pytest.raises(InvalidInput, match=r"unknown policy setting 'agents\.gpt-4\.1\.kinds'"):
        cairn.policy.set(person, "agents.gpt-4.1.kinds", Mode.AUTO)
    with pytest.raises(InvalidInput, match=r"unknown policy setting 'agents\.\.kinds\.idea'"):
        cairn.policy.set(person, "agents..kinds.idea", Mode.AUTO)
