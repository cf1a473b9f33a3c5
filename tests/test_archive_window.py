"""The export and import window over a real store: an export writes the archive and says what is
in it; an import is previewed, then confirmed, and lands."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from core.app import Cairn
from core.audit_files import rotated_files
from core.audit_rotation import rotate
from core.model import Caller, Scope, Surface
from core.paths import Paths
from core.requests import WriteRequest
from desktop.desk import Desk
from desktop.windows.archive import ArchiveWindow
from tests.archive_stores import open_store, write
from tests.conftest import desk_on, settle
from tests.test_archive import export

pytestmark = pytest.mark.gui


def off_gui(qtbot: QtBot, desk: Desk, fn: Callable[..., Any], *args: Any) -> Any:
    """A service call made the way the windows make it (the GUI thread is refused)."""
    out: list[Any] = []
    desk.call(fn, *args, on_done=out.append)
    qtbot.waitUntil(lambda: bool(out))
    return out[0]


def contents(qtbot: QtBot, desk: Desk) -> list[str]:
    page = off_gui(qtbot, desk, desk.cairn.memories.list, Caller.human())
    return sorted(m.content for m in page.items)


def remember(qtbot: QtBot, desk: Desk, text: str) -> None:
    req = WriteRequest.from_params({"content": text, "kind": "fact", "scope": "user"})
    off_gui(qtbot, desk, desk.cairn.memories.write, Caller.human(), req)


@pytest.fixture
def window(qtbot: QtBot, desk: Desk) -> ArchiveWindow:
    w = desk.open(ArchiveWindow)
    settle(qtbot, desk)
    return w


def test_export_writes_the_archive_and_shows_what_is_in_it(
    qtbot: QtBot, desk: Desk, window: ArchiveWindow, short_tmp: Path
) -> None:
    assert window.out_path.text().startswith(str(Path.home() / "cairn-export-"))
    remember(qtbot, desk, "The build uses make.")
    remember(qtbot, desk, "Deploys go out on Tuesdays.")
    out = short_tmp / "mine.zip"
    window.out_path.setText(str(out))
    window.export_button.click()
    assert window.busy.isVisible() and not window.export_button.isEnabled()
    qtbot.waitUntil(lambda: window.manifest is not None)
    assert not window.busy.isVisible() and window.export_button.isEnabled()
    assert zipfile.is_zipfile(out)
    summary = window.export_summary.toPlainText()
    assert f"Exported 2 memories (2 revisions) to {out}." in summary
    assert "memories.jsonl: 2" in summary

    window.scopes[Scope.USER].setChecked(False)  # both memories are the user's: left out
    window.export_button.click()
    qtbot.waitUntil(lambda: "Exported 0 memories" in window.export_summary.toPlainText())
    assert "Left out:\n  memories: 2" in window.export_summary.toPlainText()

    for check in window.scopes.values():
        check.setChecked(False)
    assert not window.export_button.isEnabled()  # nothing to export


def test_counts_of_one_are_singular_in_english_and_counted_in_chinese(
    qtbot: QtBot, desk: Desk, window: ArchiveWindow, short_tmp: Path
) -> None:
    remember(qtbot, desk, "The build uses make.")
    out = short_tmp / "one.zip"
    window.out_path.setText(str(out))
    window.export_button.click()
    qtbot.waitUntil(lambda: window.manifest is not None)
    assert f"Exported 1 memory (1 revision) to {out}." in window.export_summary.toPlainText()
    assert window.manifest is not None
    desk.language.apply("zh_CN")
    try:
        text = window.describe_manifest(window.manifest)
        assert f"已导出 1 条记忆（1 个修订版本）到 {out}。" in text
    finally:
        desk.language.apply("en")


def test_an_export_says_what_the_audit_log_could_not_hold(
    qtbot: QtBot, desk: Desk, window: ArchiveWindow, short_tmp: Path
) -> None:
    """A damaged line in a rotated audit file: the window said "Nothing was left out."."""
    for i in range(6):
        remember(qtbot, desk, f"Fact number {i}.")
    archive = desk.cairn.paths.audit_archive
    moved = off_gui(qtbot, desk, desk.cairn.store.writer.run, lambda tx: rotate(tx, 2, archive))
    assert moved > 3
    (rotated,) = rotated_files(archive)
    lines = rotated.read_bytes().splitlines(keepends=True)
    lines[1] = b"{garbage\n"
    rotated.write_bytes(b"".join(lines))
    window.out_path.setText(str(short_tmp / "mine.zip"))
    window.export_button.click()
    qtbot.waitUntil(lambda: window.manifest is not None)
    summary = window.export_summary.toPlainText()
    assert f"Audit log: lines of {rotated.name} that could not be read, left out: 1" in summary
    assert "Audit log: events missing (in no rotated file and not in the database): 1" in summary


def test_an_export_warns_of_a_project_whose_folder_holds_a_control_character(
    qtbot: QtBot, paths: Paths, short_tmp: Path, workspace_dir: Path
) -> None:
    """A store from before 2026-11-30 may hold a project whose folder's name has an escape in
    it. Its export notes the project (manifest `workspaces_not_importable`) and `cairn export`
    warns of it, since an import elsewhere keeps its memories out; the window said only what
    went in and "Nothing was left out.", so the person learnt it at import. Now the window says
    so after the export, the folder shown with the escape as a marker, and what to do."""
    old = Cairn.open(paths)
    try:
        ws = old.workspaces.resolve(str(workspace_dir)).id
        mine = Caller(Surface.HUMAN, workspace_id=ws)
        write(old, mine, "The build uses make.")
        write(old, mine, "Deploys go out on Tuesdays.")
        write(old, mine, "Everything here is mine.", scope="user")
    finally:
        old.close()
    # As a store from before could hold it: no write registers such a folder since.
    with closing(sqlite3.connect(paths.database)) as db, db:
        db.execute("UPDATE workspace SET path = ?", (f"{workspace_dir}\x1b[2Jx",))
    shown = f"{workspace_dir}\\e[2Jx"
    app = Cairn.open(paths)
    try:
        with desk_on(app) as desk:
            window = desk.open(ArchiveWindow)
            settle(qtbot, desk)
            listed = window.workspaces.item(0).text()
            assert "\x1b" not in listed and shown in listed, listed
            out = short_tmp / "old.zip"
            window.out_path.setText(str(out))
            window.export_button.click()
            qtbot.waitUntil(lambda: window.manifest is not None)
            summary = window.export_summary.toPlainText()
            assert "\x1b" not in summary, summary
            assert (
                f"Exported 3 memories (3 revisions) to {out}.\n\n"
                f"Warning: the folder of project {shown} ({ws}) holds a control character in its "
                "name. Another Cairn does not take such a folder, so the 2 memories of this "
                "project are not imported there. Move the project to a clean folder "
                f"(`cairn workspace move {ws} NEW-FOLDER`) and export again.\n"
            ) in summary, summary
            assert window.manifest is not None
            desk.language.apply("zh_CN")
            try:
                text = window.describe_manifest(window.manifest)
                assert f"警告：项目 {shown}（{ws}）的文件夹名称中含有控制字符" in text, text
                assert "该项目的 2 条记忆不会导入到那里。请把该项目移到名称干净的文件夹" in text
                assert f"cairn workspace move {ws} NEW-FOLDER" in text
            finally:
                desk.language.apply("en")
            settle(qtbot, desk)
    finally:
        app.close()


def test_import_is_previewed_then_confirmed(
    qtbot: QtBot, desk: Desk, window: ArchiveWindow, short_tmp: Path
) -> None:
    lines = [
        {"content": "The staging database is reset nightly.", "kind": "fact", "scope": "user"},
        {"content": "Prefer small pull requests.", "kind": "preference", "scope": "user"},
        {"content": "", "kind": "fact", "scope": "user"},
    ]
    source = short_tmp / "notes.jsonl"
    source.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    window.in_path.setText(str(source))

    window.preview_button.click()
    qtbot.waitUntil(lambda: window.report is not None)
    assert window.report is not None and window.report.dry_run
    summary = window.import_summary.toPlainText()
    assert "it would add 2 memories" in summary
    assert "line 3:" in summary
    assert contents(qtbot, desk) == []  # a preview changes nothing

    window.import_button.click()
    box = window.confirmation
    assert box is not None
    assert "lands without review as your own decision" in box.text()
    yes = box.findChild(QPushButton, "yes")
    assert yes is not None
    yes.click()
    qtbot.waitUntil(lambda: window.report is not None and not window.report.dry_run)
    assert "added 2 memories" in window.import_summary.toPlainText()
    assert contents(qtbot, desk) == [
        "Prefer small pull requests.",
        "The staging database is reset nightly.",
    ]
    settle(qtbot, desk)


def test_a_cancelled_import_brings_nothing_in(
    qtbot: QtBot, desk: Desk, window: ArchiveWindow, short_tmp: Path
) -> None:
    source = short_tmp / "one.jsonl"
    source.write_text(
        json.dumps({"content": "Not wanted.", "kind": "fact", "scope": "user"}) + "\n",
        encoding="utf-8",
    )
    window.in_path.setText(str(source))
    window.import_button.click()
    assert window.confirmation is not None
    window.confirmation.reject()
    settle(qtbot, desk)
    assert window.report is None
    assert contents(qtbot, desk) == []


def test_an_import_shows_how_many_memories_it_released(
    qtbot: QtBot, desk: Desk, window: ArchiveWindow, short_tmp: Path
) -> None:
    """An archive whose memory is superseded by one it does not hold (left out by the export's
    filter): the report's `released` - given back its place, no longer hidden behind a memory
    this store lacks - was in no line of the window's summary, which counted everything else.
    Now the preview and the import show it like the other counts."""
    source = open_store(short_tmp / "source")
    try:
        me = Caller.human()
        old = write(source, me, "The staging host is otter.internal", scope="user")
        new = write(source, me, "The staging host is beaver.internal", scope="global")
        assert source.memories.supersede(me, old, by_id=new)
        archive = short_tmp / "user.zip"
        export(source, archive, scopes=frozenset({Scope.USER}))
    finally:
        source.close()
    window.in_path.setText(str(archive))
    window.preview_button.click()
    qtbot.waitUntil(lambda: window.report is not None)
    assert window.report is not None and len(window.report.released) == 1
    assert "  released (what replaced them is not here): 1" in window.import_summary.toPlainText()
    desk.language.apply("zh_CN")
    try:
        assert "  已释放（取代它们的记忆不在本库中）: 1" in window.describe_report(window.report)
    finally:
        desk.language.apply("en")
