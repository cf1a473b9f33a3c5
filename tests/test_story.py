"""The story Cairn exists for, end to end on a fresh CAIRN_HOME through the tray application's
own start-up (`desktop.app.serve`: the socket server, the store and the windows in one Qt
process): agent A proposes, the person edits and adopts in the review queue, agent B - a new
connection for the same workspace - gets the person's text, and the tray's count is back to 0."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import qasync
from PySide6.QtWidgets import QApplication, QLabel, QPushButton
from pytestqt.qtbot import QtBot

from core.app import Cairn
from core.client import Client
from core.model import Caller
from core.paths import Paths
from desktop import app as tray_app
from desktop import single
from desktop.windows.review import ReviewWindow
from tests.conftest import cairn_env

ORIGINAL = "idea: the release checklist lives in docs/release.md"
EDITED = "The release checklist lives in docs/RELEASING.md; follow it for every tag."


def register_agents(paths: Paths) -> None:
    """The person registered both agents earlier (`cairn agent add`): their tokens are kept."""
    cairn = Cairn.open(paths)
    try:
        for name in ("agent-a", "agent-b"):
            cairn.agents.add(Caller.human(), name)
    finally:
        cairn.close()


async def off_thread(fn: Any) -> Any:
    """Run a blocking agent off the GUI thread (a plain thread, as an agent process would be)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = fn()
        except BaseException as e:  # handed back to the story
            box["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    await until(lambda: not thread.is_alive(), timeout=30)
    if "error" in box:
        raise box["error"]
    return box["result"]


async def until(condition: Any, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.02)


def tell(
    qapp: QApplication, paths: Paths, story: Callable[[tray_app.Running], Awaitable[None]]
) -> int:
    """Start the tray application as `cairn` does, run `story` once everything runs, then stop
    it; returns the application's exit status (the story's own failures are raised)."""
    task: list[asyncio.Future[None]] = []

    async def told(running: tray_app.Running) -> None:
        try:
            await story(running)
        finally:
            running.runtime.request_stop("the story is told")

    def started(running: tray_app.Running) -> None:
        task.append(asyncio.ensure_future(told(running)))

    loop = qasync.QEventLoop(qapp, already_running=False)
    asyncio.set_event_loop(loop)
    try:
        status: int = loop.run_until_complete(
            tray_app.serve(qapp, paths, single.local_name(paths), on_started=started)
        )
        task[0].result()
    finally:
        asyncio.set_event_loop(None)
        loop.close()
    return status


def test_an_agents_proposal_edited_and_adopted_reaches_another_agent(
    qtbot: QtBot, qapp: QApplication, paths: Paths, workspace_dir: Path
) -> None:
    register_agents(paths)
    seen: dict[str, Any] = {}

    async def story(running: tray_app.Running) -> None:
        desk, tray = running.desk, running.tray
        assert running.runtime.cairn is not None
        running.runtime.cairn.store.refuse_thread(threading.get_ident())  # the GUI thread

        def agent_a_writes() -> dict[str, Any]:
            with Client.connect(
                paths, agent="agent-a", workspace=str(workspace_dir), autostart=False
            ) as a:
                assert a.hello["verified"] is True
                return a.call(
                    "memory.write", {"content": ORIGINAL, "kind": "idea", "scope": "project"}
                )

        written = await off_thread(agent_a_writes)
        seen["written"] = written
        await until(lambda: tray.count == 1)
        seen["tooltip_waiting"] = tray.icon.toolTip()

        tray.open_review()
        window = desk.window(ReviewWindow)
        assert window is not None
        await until(lambda: window.pending_count() == 1 and window.current() is not None)
        window.detail.content.setPlainText(EDITED)
        window.detail.kind.setCurrentText("convention")
        window.detail.adopt_button.click()
        await until(lambda: window.pending_count() == 0 and tray.count == 0)
        seen["tooltip_after"] = tray.icon.toolTip()

        def agent_b_builds_context() -> dict[str, Any]:
            with Client.connect(
                paths, agent="agent-b", workspace=str(workspace_dir), autostart=False
            ) as b:
                return b.call("context.build", {"query": "where is the release checklist?"})

        seen["context"] = await off_thread(agent_b_builds_context)

    async def told(running: tray_app.Running) -> None:
        try:
            await story(running)
        finally:
            assert running.runtime.cairn is not None
            running.runtime.cairn.store.refuse_thread(None)

    status = tell(qapp, paths, told)

    assert status == 0
    assert seen["written"]["status"] == "pending"  # the default policy sends an idea to review
    assert "1 proposal" in seen["tooltip_waiting"]
    assert "nothing waiting" in seen["tooltip_after"]
    text = str(seen["context"])
    assert EDITED in text and ORIGINAL not in text
    assert not Path(str(paths.runtime)).joinpath("cairn.sock").exists()


def test_the_same_story_told_through_mcp(
    qtbot: QtBot, qapp: QApplication, paths: Paths, workspace_dir: Path
) -> None:
    """Agent A and agent B are two `cairn mcp` processes (the SDK's stdio client) for the same
    workspace; each enrolls on first use, and the person decides in the review window."""
    from tests.test_mcp import bridge, call, data, text

    home = paths.data.parent
    seen: dict[str, Any] = {}

    def through_mcp(agent: str, tool: str, **arguments: Any) -> Any:
        async def go() -> Any:
            args = ("--agent", agent, "--workspace", str(workspace_dir))
            async with bridge(home, *args) as session:
                return await call(session, tool, **arguments)

        return anyio.run(go)

    async def story(running: tray_app.Running) -> None:
        desk, tray = running.desk, running.tray
        written = await off_thread(
            lambda: through_mcp(
                "agent-a", "memory_write", content=ORIGINAL, kind="idea", scope="project"
            )
        )
        seen["written"] = data(written)
        seen["written_text"] = text(written)
        await until(lambda: tray.count == 1)
        tray.open_review()
        window = desk.window(ReviewWindow)
        assert window is not None
        await until(lambda: window.pending_count() == 1 and window.current() is not None)
        seen["agent_shown"] = str(window.queue.table.model().index(0, 0).data() or "")
        window.detail.content.setPlainText(EDITED)
        window.detail.adopt_button.click()
        await until(lambda: window.pending_count() == 0 and tray.count == 0)
        built = await off_thread(
            lambda: through_mcp("agent-b", "context_build", query="the release checklist")
        )
        seen["context"] = text(built)

    status = tell(qapp, paths, story)

    assert status == 0
    assert seen["written"]["status"] == "pending"
    assert "a person will review" in seen["written_text"]
    assert seen["agent_shown"].startswith("agent-a")
    assert EDITED in seen["context"] and ORIGINAL not in seen["context"]


def test_a_language_chosen_in_settings_is_shown_at_the_next_start(
    qtbot: QtBot, qapp: QApplication, paths: Paths
) -> None:
    """Settings stores the choice in desktop.ini; the tray application applies it at start-up,
    before the tray menu and any window are built."""
    from PySide6.QtCore import QSettings

    paths.config.mkdir(parents=True, exist_ok=True)
    prefs = QSettings(str(paths.config / "desktop.ini"), QSettings.Format.IniFormat)
    prefs.setValue("language", "zh_CN")
    prefs.sync()
    seen: dict[str, Any] = {}

    async def look(running: tray_app.Running) -> None:
        seen["language"] = running.desk.language.current
        seen["menu"] = [a.text() for a in running.tray.menu.actions() if not a.isSeparator()]
        running.desk.language.apply("en")  # leave the process's Qt in English for other tests

    assert tell(qapp, paths, look) == 0
    assert seen["language"] == "zh_CN"
    assert "Quit" not in seen["menu"] and "Memories" not in seen["menu"]


def test_a_persons_command_run_without_a_terminal_is_asked_about_in_the_tray(
    qtbot: QtBot, qapp: QApplication, paths: Paths, workspace_dir: Path
) -> None:
    """`cairn review adopt` run by a program with no terminal (pipes for stdin and stdout, as an
    agent's shell tool has) reaches the person as a question in the tray naming the command:
    allowed once, it runs; refused, it fails, says so, and changes nothing."""
    register_agents(paths)
    home = Path(os.environ["CAIRN_HOME"])
    seen: dict[str, Any] = {}

    def cairn_without_terminal(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "core.cli", *args],
            cwd=workspace_dir,
            env=cairn_env(home),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    async def answered(
        running: tray_app.Running, choice: str, *args: str
    ) -> subprocess.CompletedProcess[str]:
        shown: list[Any] = []
        running.person_check.asked.connect(shown.append)
        task = asyncio.ensure_future(off_thread(lambda: cairn_without_terminal(*args)))
        await until(lambda: bool(shown), timeout=30)
        command = shown[0].findChild(QLabel, "personCommand")
        seen.setdefault("questions", []).append(command.toolTip() or command.text())
        shown[0].findChild(QPushButton, choice).click()
        running.person_check.asked.disconnect(shown.append)
        result: subprocess.CompletedProcess[str] = await task
        return result

    def propose(text: str) -> str:
        with Client.connect(
            paths, agent="agent-a", workspace=str(workspace_dir), autostart=False
        ) as a:
            written = a.call("memory.write", {"content": text, "kind": "idea", "scope": "project"})
        assert written["status"] == "pending"
        return str(written["suggestion_id"])

    async def told(running: tray_app.Running) -> None:
        first = await off_thread(lambda: propose(ORIGINAL))
        second = await off_thread(lambda: propose("idea: rerun flaky auth tests twice"))
        seen["allowed"] = await answered(running, "personAllow", "review", "adopt", first)
        seen["refused"] = await answered(running, "personRefuse", "review", "adopt", second)
        cairn = running.runtime.cairn
        assert cairn is not None
        pending = await off_thread(lambda: cairn.review.pending(Caller.human()))
        seen["waiting"] = [p["id"] for p in pending]
        seen["second"] = second

    status = tell(qapp, paths, told)

    assert status == 0
    assert all("core.cli review adopt" in q for q in seen["questions"])
    allowed, refused = seen["allowed"], seen["refused"]
    assert allowed.returncode == 0, allowed.stderr
    assert "adopted" in allowed.stdout
    assert refused.returncode != 0
    assert refused.stderr.strip() == "cairn: the person refused it in the tray"
    assert seen["waiting"] == [seen["second"]]  # the refused proposal still waits
