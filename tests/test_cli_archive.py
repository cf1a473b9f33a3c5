"""`cairn export` and `cairn import` as a person runs them: the folder the command runs in is not
the command's business (only a JSON-lines file's lines without a workspace land there), and a
dry run changes nothing - not even by creating the store. Real stores, the real command line
under a pseudo-terminal, with and without a running Cairn."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from core.app import Cairn
from core.model import Caller, Surface
from core.requests import WriteRequest
from core.settings import Settings
from tests.conftest import FakeClock
from tests.serving import paths_for, served_in_thread
from tests.test_cli_serving import at_terminal


def workspace_paths(home: Path) -> set[str]:
    with closing(sqlite3.connect(paths_for(home).database)) as db:
        return {row[0] for row in db.execute("SELECT path FROM workspace")}


def archive_of_two_workspaces(tmp: Path) -> Path:
    """An export of a store holding one project memory in each of two folders."""
    source = Cairn.open(paths_for(tmp / "source"), settings=Settings.defaults(), clock=FakeClock())
    try:
        for name in ("billing", "ledger"):
            folder = tmp / name
            folder.mkdir()
            ws = source.workspaces.resolve(str(folder)).id
            req = {"content": f"the {name} service is in Go", "kind": "fact", "scope": "project"}
            source.memories.write(
                Caller(Surface.HUMAN, workspace_id=ws), WriteRequest.from_params(req)
            )
        out = tmp / "two.zip"
        source.archive.export(Caller(Surface.HUMAN), out)
    finally:
        source.close()
    return out


def test_a_dry_run_with_no_store_creates_none(short_tmp: Path) -> None:
    """`cairn import --dry-run` with no Cairn running and no store created the store (and
    registered the folder it ran in), then previewed against the store it had just made. It
    refuses now and says how to get a store; nothing is created."""
    archive = archive_of_two_workspaces(short_tmp)
    here = short_tmp / "new-folder"
    here.mkdir()
    home = short_tmp / "fresh"
    status, shown = at_terminal(home, "import", str(archive), "--dry-run", typed="", cwd=here)
    assert status == 66, shown
    assert "a dry run creates nothing" in shown
    assert not paths_for(home).database.exists()
    assert not paths_for(home).data.exists()


def test_export_backup_and_reindex_with_no_store_say_so_and_create_nothing(
    short_tmp: Path,
) -> None:
    """With Cairn stopped and no store at the paths (a mistyped CAIRN_HOME, a new machine),
    `cairn export`, `cairn backup` and `cairn reindex` created an empty store, its folders and
    policy file, then exported, backed up or reindexed nothing and exited 0 - the person took
    an empty archive or backup for their memories. Each now names the store that does not
    exist, exits 66 (not found) and leaves nothing behind."""
    home = short_tmp / "nothing-here"
    database = paths_for(home).database
    for command, why in (
        (("export", "--out", str(short_tmp / "out.zip")), "nothing to export"),
        (("backup",), "nothing to back up"),
        (("reindex",), "nothing to reindex"),
    ):
        status, shown = at_terminal(home, *command, typed="")
        assert status == 66, (command, shown)
        assert f"cairn: there is no store at {database} yet; {why}" in shown, shown
        assert not home.exists(), (command, sorted(map(str, home.rglob("*"))))
    assert not (short_tmp / "out.zip").exists()
    # the commands that start from no store still do: `backup --list` lists none, a restore
    # of no backup says so
    status, shown = at_terminal(home, "backup", "--list", typed="")
    assert status == 0 and "no backups yet" in shown, shown
    assert not home.exists()


def test_import_does_not_register_the_folder_it_runs_in(short_tmp: Path) -> None:
    """Opening the store itself, `cairn import` (dry run or not) recorded the current folder as
    a workspace: the preview then said "workspaces: 1 added" of a two-workspace archive, and
    the folder stayed a workspace of the store. An archive brings its own workspaces only."""
    archive = archive_of_two_workspaces(short_tmp)
    here = short_tmp / "elsewhere"
    here.mkdir()
    home = short_tmp / "target"
    Cairn.open(paths_for(home), settings=Settings.defaults(), clock=FakeClock()).close()
    before = workspace_paths(home)

    status, shown = at_terminal(home, "import", str(archive), "--dry-run", typed="", cwd=here)
    assert status == 0, shown
    assert "workspaces: 2 added" in shown
    assert workspace_paths(home) == before

    status, shown = at_terminal(home, "import", str(archive), typed="import", cwd=here)
    assert status == 0, shown
    assert "workspaces: 2 added" in shown
    assert workspace_paths(home) == before | {str(short_tmp / "billing"), str(short_tmp / "ledger")}


def test_a_served_import_registers_the_folder_only_for_lines_that_land_there(
    short_tmp: Path,
) -> None:
    """With Cairn running the person's connection bound the current folder, so any import,
    export or dry run registered it. Now only a JSON-lines import's project line without a
    `workspace` lands in the folder (and registers it) - and its dry run registers nothing."""
    archive = archive_of_two_workspaces(short_tmp)
    here = short_tmp / "project"
    here.mkdir()
    home = short_tmp / "served"
    lines = short_tmp / "more.jsonl"
    lines.write_text(
        json.dumps({"content": "refunds take five days", "kind": "fact", "scope": "project"})
        + "\n"
        + json.dumps({"content": "I like short answers", "kind": "preference", "scope": "user"})
        + "\n",
        encoding="utf-8",
    )
    with served_in_thread(paths_for(home), confirm_human=lambda _s: None) as runtime:
        assert runtime.cairn is not None
        names = {w.path for w in runtime.cairn.workspaces.list()}
        for args in (
            ("import", str(archive), "--dry-run"),
            ("export", "--out", str(short_tmp / "back.zip")),
            ("import", str(lines), "--dry-run"),
        ):
            status, shown = at_terminal(home, *args, typed="", cwd=here)
            assert status == 0, shown
            assert {w.path for w in runtime.cairn.workspaces.list()} == names, args
        status, shown = at_terminal(home, "import", str(lines), "--json", typed="import", cwd=here)
        assert status == 0, shown
        report = json.loads(shown[shown.index("{") :])
        assert [line["result"] for line in report["lines"]] == ["added", "added"]
        landed = runtime.cairn.memories.get(Caller.human(), report["lines"][0]["id"]).memory
        assert landed.workspace_id == runtime.cairn.workspaces.resolve(str(here)).id


def test_export_takes_the_archive_as_import_and_restore_do(short_tmp: Path) -> None:
    """`cairn import FILE` and `cairn restore FILE` take the file as they are told; `cairn
    export FILE` was a usage error ("the following arguments are required: --out"). It writes
    FILE; --out FILE still works; two different files are one too many."""
    home = short_tmp / "h"
    Cairn.open(paths_for(home), settings=Settings.defaults(), clock=FakeClock()).close()
    status, shown = at_terminal(home, "export", str(short_tmp / "a.zip"), typed="")
    assert status == 0, shown
    assert (short_tmp / "a.zip").is_file()
    status, shown = at_terminal(home, "export", "--out", str(short_tmp / "b.zip"), typed="")
    assert status == 0, shown
    assert (short_tmp / "b.zip").is_file()
    status, shown = at_terminal(
        home, "export", str(short_tmp / "c.zip"), "--out", str(short_tmp / "d.zip"), typed=""
    )
    assert status == 2, shown
    assert "give the archive once" in shown
    assert not (short_tmp / "c.zip").exists() and not (short_tmp / "d.zip").exists()
    for nothing in ((), ("",), ("--out", "")):
        status, shown = at_terminal(home, "export", *nothing, typed="")
        assert status == 2 and "Traceback" not in shown, shown
        assert "cairn export FILE" in shown
