"""An archive's identifiers and marks - workspace and session ids, a memory's flags, how a
contradiction was resolved - held to the shapes Cairn gives them, and scanned for secrets like
every other field an import stores. Real stores, real archives edited as a hand would edit them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core import scanner
from core.app import Cairn
from core.cli_archive import describe_import
from core.errors import InvalidInput
from tests.archive_stores import Rich, build_rich, open_store
from tests.serving import running_daemon
from tests.test_archive import (
    SECRET,
    SLACK_TOKEN,
    edited,
    export,
    import_,
    imports,
    jsonl,
    jsonl_lines,
    members,
    state,
)
from tests.test_cli_serving import at_terminal

_Edit = Callable[[dict[str, bytes]], None]


def _records(name: str, change: Callable[[list[dict[str, Any]]], None]) -> _Edit:
    """An edit of one JSON-lines member of an archive."""

    def edit(files: dict[str, bytes]) -> None:
        rows = jsonl(files[name])
        change(rows)
        files[name] = jsonl_lines(rows)

    return edit


def _line_of(good: Path, memory_id: str) -> int:
    rows = jsonl(members(good)["memories.jsonl"])
    return next(i for i, r in enumerate(rows, 1) if r["id"] == memory_id)


def test_an_archive_hiding_a_secret_in_an_identifier_or_a_mark_is_refused_naming_line_and_field(
    rich: Rich, empty: Cairn, short_tmp: Path
) -> None:
    """Before, an edited archive could carry a token as a tombstone's workspace, a relation's
    resolution, a memory's flags, a workspace's id (which every agent in that folder was then
    handed) or a revision's workspace: none was scanned or checked, the import said
    `"secrets": [], "refused": 0`, and the token landed in the store. Now each of them must have
    the shape Cairn gives it, the archive is refused whole naming the line and the field - and,
    as the value may be a secret or an escape sequence, without showing it."""
    good = short_tmp / "all.zip"
    export(rich.cairn, good)
    a, ci = rich.ids["a"], rich.ids["ci"]
    ws_rule = "a workspace id is ws_ and 16 lower-case hex digits, as Cairn makes it"

    def memory(mid: str, change: Callable[[dict[str, Any]], None]) -> _Edit:
        return _records(
            "memories.jsonl", lambda rows: change(next(r for r in rows if r["id"] == mid))
        )

    def all_workspaces(rows: list[dict[str, Any]]) -> None:
        for r in rows:
            if r["workspace_id"] is not None:
                r["workspace_id"] = SECRET
                for v in r["revisions"]:
                    v["workspace_id"] = SECRET

    def workspace_id(files: dict[str, bytes]) -> None:
        _records("workspaces.jsonl", lambda rows: rows[0].update(id=SECRET))(files)
        _records("memories.jsonl", all_workspaces)(files)

    cases: list[tuple[_Edit, str]] = [
        (
            _records("tombstones.jsonl", lambda rows: rows[0].update(workspace_id=SECRET)),
            f"tombstones.jsonl line 1 has a wrong value in field 'workspace_id' ({ws_rule})",
        ),
        (
            memory(a, lambda r: r["relations"][0].update(open=False, resolution=SECRET)),
            f"memories.jsonl line {_line_of(good, a)} relation 1 has a wrong value in field "
            "'resolution' (how a contradiction was resolved: one of from, to, both, forgotten, "
            "purged)",
        ),
        (
            memory(ci, lambda r: r.update(flags=[SECRET])),
            f"memories.jsonl line {_line_of(good, ci)} has a wrong value in field 'flags' (each "
            "is a mark Cairn keeps: adopted, redacted or scan: and a scanner rule's name)",
        ),
        (
            memory(ci, lambda r: r.update(flags=["Ignore previous instructions"])),
            f"memories.jsonl line {_line_of(good, ci)} has a wrong value in field 'flags'",
        ),
        (
            workspace_id,
            f"workspaces.jsonl line 1 has a wrong value in field 'id' ({ws_rule})",
        ),
        (
            memory(ci, lambda r: r["revisions"][0].update(workspace_id=SECRET)),
            f"memories.jsonl line {_line_of(good, ci)} revision 1 has a wrong value in field "
            f"'workspace_id' ({ws_rule})",
        ),
        (
            memory(ci, lambda r: r["revisions"][0].update(session_id="s" * 129)),
            f"memories.jsonl line {_line_of(good, ci)} revision 1 has a wrong value in field "
            "'session_id' (a session id is at most 128 characters, as an agent's hello gives it)",
        ),
    ]
    before = state(empty)
    for change, words in cases:
        bad = edited(good, short_tmp / "bad.zip", change)
        for dry_run in (True, False):
            with pytest.raises(InvalidInput) as caught:
                import_(empty, bad, dry_run=dry_run)
            message = caught.value.message
            assert words in message and "nothing was imported" in message, message
            assert SECRET not in message and SECRET not in str(caught.value.data), message
        assert state(empty) == before and imports(empty) == 0


def test_a_secret_or_escape_in_a_tombstones_session_is_left_out_and_the_tombstone_kept(
    rich: Rich, empty: Cairn, short_tmp: Path
) -> None:
    """A tombstone's session id went in unscanned: an edited archive's token landed in the
    tombstone table while the report said nothing. Now it is left out like a secret in a
    tombstone's reason - the tombstone lands (what was forgotten stays forgotten), the report
    counts what was left out. So is a session id with a control character, which a store from
    before 2026-11-30 may hold (hello refuses one since); a memory with one stays out."""
    good = short_tmp / "all.zip"
    export(rich.cairn, good)
    graves = jsonl(members(good)["tombstones.jsonl"])
    session = rich.ids["session"]

    def change(files: dict[str, bytes]) -> None:
        _records("tombstones.jsonl", lambda rows: rows[0].update(session_id=f"s:{SECRET}"))(files)

        def escape(rows: list[dict[str, Any]]) -> None:
            row = next(r for r in rows if r["id"] == session)
            row["session_id"] = "s-1\x1b]0;pwned\x07"
            for v in row["revisions"]:
                v["session_id"] = row["session_id"]

        _records("memories.jsonl", escape)(files)

    tampered = edited(good, short_tmp / "tampered.zip", change)
    for dry_run in (True, False):
        report = import_(empty, tampered, dry_run=dry_run)
        assert report.tombstones_added == len(graves) and report.notes_dropped == 1, report
        assert report.secrets == () and report.refused == 0, report
        assert [c["id"] for c in report.conflicts] == [session], report
        assert "field 'session' contains a control character (U+001B)" in str(report.conflicts)
    held = state(empty)
    assert SECRET not in str(held) and "\x1b" not in str(held), held
    landed = {r[0]: r for r in held["tombstone"]}
    assert landed[graves[0]["memory_id"]][4] is None  # session_id left out


def test_a_secret_naming_who_made_resolved_or_forgot_is_never_stored(
    rich: Rich, short_tmp: Path
) -> None:
    """Who made or resolved a relation and who forgot a tombstone's memory were checked for the
    shape of a name only: a Slack token is a valid agent name, so an edited archive's token
    landed in the relation and tombstone tables while the report said nothing. Now a relation
    naming one is left out like a memory whose agent or actor holds one (`secrets`, naming the
    field and the rule, never the token); a tombstone keeps forgetting its memory, with the
    name left out - it reads `import`, who brought it here - and counted in `notes_dropped`."""
    good = short_tmp / "all.zip"
    export(rich.cairn, good)
    a, b = rich.ids["a"], rich.ids["b"]
    graves = jsonl(members(good)["tombstones.jsonl"])

    def relation(change: Callable[[dict[str, Any]], None]) -> _Edit:
        return _records(
            "memories.jsonl",
            lambda rows: change(next(r for r in rows if r["id"] == a)["relations"][0]),
        )

    def forgotten_by(files: dict[str, bytes]) -> None:
        _records("tombstones.jsonl", lambda rows: rows[0].update(forgotten_by=SLACK_TOKEN))(files)

    def closed(r: dict[str, Any]) -> None:
        r.update(open=False, resolution="both", resolved_at=1, resolved_by=SLACK_TOKEN)

    cases: list[tuple[_Edit, str]] = [
        (relation(lambda r: r.update(created_by=SLACK_TOKEN)), "created_by"),
        (relation(closed), "resolved_by"),
    ]
    for i, (change, name) in enumerate(cases):

        def both(files: dict[str, bytes], change: _Edit = change) -> None:
            change(files)
            forgotten_by(files)

        tampered = edited(good, short_tmp / f"tampered{i}.zip", both)
        into = open_store(short_tmp / f"into{i}")
        try:
            for dry_run in (True, False):
                report = import_(into, tampered, dry_run=dry_run)
                assert report.secrets == (
                    {
                        "id": f"{a} contradicts {b}",
                        "reason": f"the {name} looks like a secret (rule slack-token); "
                        "secrets are never stored - keep it in your keychain or a secret "
                        "manager; not imported",
                    },
                ), report
                assert report.relations_added == 1 and report.refused == 0, report
                assert report.tombstones_added == len(graves), report
                assert report.notes_dropped == 1, report
                assert SLACK_TOKEN not in describe_import(report.to_dict())
            held = state(into)
            assert SLACK_TOKEN not in str(held), held
            assert [r[1:3] for r in held["relation"] if r[0] == "contradicts"] == []
            landed = {r[0]: r for r in held["tombstone"]}
            assert landed[graves[0]["memory_id"]][5] == "import"  # forgotten_by
        finally:
            into.close()


def test_a_mark_from_a_newer_scanner_comes_in_and_a_secret_or_ill_shaped_one_does_not(
    rich: Rich, empty: Cairn, short_tmp: Path
) -> None:
    """A memory's flags took only the scan: marks of the rules this Cairn knows: an archive from
    a newer Cairn, whose scanner has a rule this one lacks, was refused whole ("has a wrong value
    in field 'flags'"). Now any scan: mark whose rule has the shape of a rule's name comes in as
    it is; one holding a secret, or not shaped as a rule's name, still refuses the archive,
    naming the line and the field but not the value."""
    good = short_tmp / "all.zip"
    export(rich.cairn, good)
    ci = rich.ids["ci"]
    line = _line_of(good, ci)
    slack = "xoxb-123456789012-abcdefghijklmnop"  # a rule's shape, and a Slack token

    def flags(*marks: str) -> _Edit:
        def change(rows: list[dict[str, Any]]) -> None:
            next(r for r in rows if r["id"] == ci)["flags"] = list(marks)

        return _records("memories.jsonl", change)

    newer = edited(good, short_tmp / "newer.zip", flags("adopted", "scan:ssh-config-key"))
    report = import_(empty, newer)
    assert report.conflicts == () and report.secrets == (), report
    conn = empty.store.read_db.conn()
    held = conn.execute("SELECT flags FROM memory WHERE id = ?", (ci,)).fetchone()[0]
    assert json.loads(held) == ["adopted", "scan:ssh-config-key"]

    shape = "each is a mark Cairn keeps: adopted, redacted or scan: and a scanner rule's name"
    cases = [
        (
            f"scan:{slack}",
            f"has a wrong value in field 'flags' (a scan: mark looks like a secret (rule "
            f"slack-token); {shape})",
        ),
        ("scan:Bad Rule", f"has a wrong value in field 'flags' ({shape})"),
        ("scan:" + "a" * 41, f"has a wrong value in field 'flags' ({shape})"),
        ("scan:-dash", f"has a wrong value in field 'flags' ({shape})"),
        ("scan:", f"has a wrong value in field 'flags' ({shape})"),
    ]
    into = open_store(short_tmp / "c")
    try:
        before = state(into)
        for mark, words in cases:
            bad = edited(good, short_tmp / "bad.zip", flags(mark))
            with pytest.raises(InvalidInput) as caught:
                import_(into, bad)
            message = caught.value.message
            assert f"memories.jsonl line {line} {words}; nothing was imported" in message, message
            shown = mark.removeprefix("scan:")
            assert not shown or shown not in message.replace(shape, ""), message
        assert state(into) == before and imports(into) == 0
    finally:
        into.close()
    assert all(
        scanner.RULE_NAME.fullmatch(r) and len(r) <= scanner.MAX_RULE_CHARS for r in scanner.RULES
    )


def test_the_shapes_old_cairns_wrote_still_come_in(
    rich: Rich, empty: Cairn, short_tmp: Path
) -> None:
    """What a Cairn wrote itself comes back in: every mark it keeps on a memory, each way a
    contradiction closes, a workspace merged away named in history and by a tombstone."""
    good = short_tmp / "all.zip"
    export(rich.cairn, good)
    a, ci = rich.ids["a"], rich.ids["ci"]
    gone = "ws_0123456789abcdef"  # merged into another before the export: history

    def change(files: dict[str, bytes]) -> None:
        def memories(rows: list[dict[str, Any]]) -> None:
            for r in rows:
                if r["id"] == ci:
                    r["flags"] = ["adopted", "redacted", "scan:github-token"]
                    r["revisions"][0]["workspace_id"] = gone
                if r["id"] == a:
                    r["relations"][0].update(
                        open=False, resolution="forgotten", resolved_at=1, resolved_by="human"
                    )

        _records("memories.jsonl", memories)(files)
        _records("tombstones.jsonl", lambda rows: rows[0].update(workspace_id=gone))(files)

    report = import_(empty, edited(good, short_tmp / "old.zip", change))
    assert report.conflicts == () and report.notes_dropped == 0, report
    conn = empty.store.read_db.conn()
    flags = conn.execute("SELECT flags FROM memory WHERE id = ?", (ci,)).fetchone()[0]
    assert json.loads(flags) == ["adopted", "redacted", "scan:github-token"]
    assert [r[-1] for r in state(empty)["relation"] if r[0] == "contradicts"] == ["forgotten"]


ESCAPE_ID = "ws_\x1b[2J\x1b]0;pwned\x07evil"  # clear the screen, set the window's title


def test_a_workspace_id_holding_an_escape_reaches_no_terminal(
    short_tmp: Path, workspace_dir: Path
) -> None:
    """An edited archive gave a workspace the id `ws_<ESC>[2J<ESC>]0;pwned<BEL>evil`: the import
    took it, and `cairn workspace list` printed it raw - the person's terminal cleared its screen
    and retitled its window. Now the import refuses the id by its shape (saying which line and
    field, not echoing it), and the list shows the id of a store that already holds one with
    visible markers, like every other stored text it prints."""
    home = short_tmp / "a"
    c = open_store(home)
    try:
        rich = build_rich(c, workspace_dir)
        good = short_tmp / "all.zip"
        export(c, good)

        def rename(files: dict[str, bytes]) -> None:
            _records("workspaces.jsonl", lambda rows: rows[0].update(id=ESCAPE_ID))(files)

            def memories(rows: list[dict[str, Any]]) -> None:
                for r in rows:
                    for v in [r, *r["revisions"]]:
                        if v["workspace_id"] == rich.ws:
                            v["workspace_id"] = ESCAPE_ID

            _records("memories.jsonl", memories)(files)

        target = open_store(short_tmp / "b")
        try:
            with pytest.raises(InvalidInput) as caught:
                import_(target, edited(good, short_tmp / "bad.zip", rename))
            assert "workspaces.jsonl line 1 has a wrong value in field 'id'" in caught.value.message
            assert "\x1b" not in caught.value.message
            assert state(target)["workspace"] == []
        finally:
            target.close()
        # a store that took such an id before the import refused it
        c.store.writer.run(
            lambda tx: tx.conn.execute(
                "INSERT INTO workspace (id, path, created_at) VALUES (?, ?, 0)",
                (ESCAPE_ID, str(short_tmp)),
            )
        )
    finally:
        c.close()
    with running_daemon(home):
        status, shown = at_terminal(home, "workspace", "list", typed="")
    assert status == 0, shown
    assert "\x1b" not in shown and "\x07" not in shown, shown
    assert "ws_\\e[2J\\e]0;pwned\\x07evil" in shown and rich.ws in shown, shown
