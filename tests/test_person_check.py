"""The tray's question about a person's command run without a terminal (desktop/person_check.py),
asked about real processes: one with pipes for stdin and stdout, one at a pseudo-terminal."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from core.changes import ChangeBus
from core.errors import CairnError, NotRunning
from core.model import Caller
from core.policy import POLICY_FILE
from core.protocol import Session
from core.runtime import Peer
from core.settings import Settings
from core.settings_file import SettingsService
from desktop.person_check import ASK_TERMINALS_TOO, PersonCheck
from tests.conftest import ROOT, cairn_env
from tests.serving import paths_for, served_in_thread

MARKER = "person-check-probe"


@pytest.fixture
def piped() -> Iterator[subprocess.Popen[bytes]]:
    """A process whose standard input and output are not a terminal, as an agent's tool runs."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", MARKER],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    yield proc
    proc.kill()
    proc.wait()


def session_of(pid: int) -> Session:
    return Session("unix", peer=Peer(pid, os.getuid(), os.getgid()))


def ask_in_thread(check: PersonCheck, session: Session) -> tuple[threading.Thread, list[Any]]:
    """Ask as the server does: on a thread of its own, never the GUI thread. The answer is
    what the check returned, or the CairnError it raised."""
    answer: list[Any] = []

    def ask() -> None:
        try:
            answer.append(check(session))
        except CairnError as e:
            answer.append(e)

    thread = threading.Thread(target=ask)
    thread.start()
    return thread, answer


def finish(qtbot: QtBot, thread: threading.Thread) -> None:
    qtbot.waitUntil(lambda: not thread.is_alive(), timeout=10_000)


def button(box: QWidget, name: str) -> QPushButton:
    found = box.findChild(QPushButton, name)
    assert found is not None
    return found


def test_the_person_is_shown_the_command_and_allows_it_once(
    qtbot: QtBot, piped: subprocess.Popen[bytes]
) -> None:
    check = PersonCheck()
    with qtbot.waitSignal(check.asked, timeout=10_000) as shown:
        thread, answer = ask_in_thread(check, session_of(piped.pid))
    box: QDialog = shown.args[0]
    command = field(box, "personCommand")
    assert MARKER in (command.toolTip() or command.text())  # the asking process's command line
    assert field(box, "personPid").text() == str(piped.pid)
    assert button(box, "personRefuse").isDefault()  # Enter does not allow
    assert not button(box, "personAllow").isDefault()
    button(box, "personAllow").click()
    finish(qtbot, thread)
    assert answer == [None]


def asking(*arguments: str) -> subprocess.Popen[bytes]:
    """A program without a terminal whose command line ends with `arguments`."""
    return subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", *arguments],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )


def field(box: QWidget, name: str) -> QLabel:
    found = box.findChild(QLabel, name)
    assert found is not None, name
    return found


@contextlib.contextmanager
def dialog_about(qtbot: QtBot, *arguments: str) -> Iterator[tuple[QWidget, int]]:
    """The tray's question about a program without a terminal whose command line ends with
    `arguments`: (the dialog, the program's pid). The person refuses it at the end."""
    proc = asking(*arguments)
    try:
        check = PersonCheck()
        with qtbot.waitSignal(check.asked, timeout=10_000) as shown:
            thread, answer = ask_in_thread(check, session_of(proc.pid))
        box: QWidget = shown.args[0]
        qtbot.waitExposed(box)
        yield box, proc.pid
        button(box, "personRefuse").click()
        finish(qtbot, thread)
        assert answer == ["the person refused it in the tray"]
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(
    "argument",
    [" " * 120 + "Started by: /usr/libexec/gnome-terminal-server " + "y" * 40, "x" * 300],
    ids=["padded", "unbroken"],
)
def test_a_program_cannot_pass_its_command_line_off_as_another_field(
    qtbot: QtBot, argument: str
) -> None:
    """The dialog word-wrapped a command line padded with 120 spaces, so that its own
    "Started by: /usr/libexec/gnome-terminal-server" showed as a line of its own above the real
    one; an unbroken 300-character argument was clipped at the dialog's edge with no "…"."""
    with dialog_about(qtbot, argument) as (box, pid):
        command = field(box, "personCommand")
        parent = field(box, "personParent")
        for label in (command, parent, field(box, "personPid")):
            # one line, as plain text, that fits: no wrap to fake a field, no markup
            assert label.textFormat() is Qt.TextFormat.PlainText and not label.wordWrap()
            assert "\n" not in label.text() and "  " not in label.text()
            assert label.fontMetrics().horizontalAdvance(label.text()) <= label.width()
            assert label.mapTo(box, label.rect().topRight()).x() <= box.width()
        assert "…" in command.text()  # cut short, visibly
        assert command.text().endswith(argument[-20:])  # in the middle: its end shows
        full = command.toolTip()
        assert (argument.strip() if argument.startswith(" ") else argument) in full
        assert "Started by:" not in parent.text()  # the real parent: this test's python
        assert field(box, "personPid").text() == str(pid)


@pytest.mark.parametrize(
    "config",
    [
        "--config=/home/someone/" + "very-long-folder/" * 8 + "cairn.toml",
        "--config=/home/" + "x" * 3000 + ".toml",  # longer than the 2,000 characters Cairn reads
    ],
    ids=["long", "longer-than-read"],
)
def test_a_long_command_shows_its_end_the_arguments_asked_about(qtbot: QtBot, config: str) -> None:
    """A long command line was cut at the right, so "review adopt s_01a2373546eb98ac35b9…" lost
    the proposal the person was asked about (only the tooltip had it); and Cairn reads 2,000
    characters of a command line and cut the rest, so 2,000 characters of padding before
    "review adopt ..." hid it from the tooltip too. Now both cut in the middle: the program at
    the start and the arguments at the end show, on one line."""
    proposal = "s_01a2373546eb98ac35b9f0c1d2e3"
    with dialog_about(qtbot, config, "review", "adopt", proposal) as (box, _):
        command = field(box, "personCommand")
        shown_text = command.text()
        assert "…" in shown_text  # cut short, visibly
        assert shown_text.endswith(f"review adopt {proposal}"), shown_text
        assert shown_text.startswith(sys.executable[:10]), shown_text  # the program too
        assert command.textFormat() is Qt.TextFormat.PlainText and not command.wordWrap()
        assert command.fontMetrics().horizontalAdvance(shown_text) <= command.width()
        assert command.mapTo(box, command.rect().topRight()).x() <= box.width()
        assert f"review adopt {proposal}" in command.toolTip()  # and the whole of it there
        assert len(command.toolTip()) < 2_200  # no more than Cairn reads (and the markup)


def test_refused_unanswered_and_one_at_a_time(qtbot: QtBot, piped: subprocess.Popen[bytes]) -> None:
    check = PersonCheck(answer_within_s=1.0)
    with qtbot.waitSignal(check.asked, timeout=10_000) as shown:
        first, first_answer = ask_in_thread(check, session_of(piped.pid))
    # While the person is asked about one program, another is refused at once: nothing can pile
    # dialogs up on the person's screen.
    assert "already asking" in str(check(session_of(piped.pid)))
    button(shown.args[0], "personRefuse").click()
    finish(qtbot, first)
    assert first_answer == ["the person refused it in the tray"]

    with qtbot.waitSignal(check.asked, timeout=10_000) as shown:
        late, late_answer = ask_in_thread(check, session_of(piped.pid))
    box = shown.args[0]
    finish(qtbot, late)  # nobody answers within the second
    assert "nobody answered" in late_answer[0]
    # The question is withdrawn: the dialog closes (and, closed, is deleted).
    qtbot.waitUntil(lambda: not shiboken6.isValid(box) or not box.isVisible(), timeout=5_000)


def test_a_command_at_a_terminal_is_asked_about_only_when_the_person_wants(
    qtbot: QtBot, tmp_path: Path
) -> None:
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        stdin=slave,
        stdout=slave,
        start_new_session=True,
    )
    os.close(slave)
    try:
        check = PersonCheck()
        shown: list[QDialog] = []
        check.asked.connect(shown.append)
        # It asked for a typed confirmation at its terminal already (core/terminal.py).
        assert check(session_of(proc.pid)) is None
        assert shown == []

        # security.confirm_terminals_in_tray: a program that fakes a terminal still needs a
        # click. Changed in Settings while Cairn runs, it applies to the next question.
        config = SettingsService(tmp_path / "settings.toml", Settings.defaults(), ChangeBus())
        check.follow(config)
        assert config.live(ASK_TERMINALS_TOO)
        config.set(Caller.human(), ASK_TERMINALS_TOO, True)
        with qtbot.waitSignal(check.asked, timeout=10_000) as asked:
            thread, answer = ask_in_thread(check, session_of(proc.pid))
        button(asked.args[0], "personRefuse").click()
        finish(qtbot, thread)
        assert answer == ["the person refused it in the tray"]
    finally:
        proc.kill()
        proc.wait()
        os.close(master)


def test_stopping_cairn_answers_an_open_question_no(
    qtbot: QtBot, piped: subprocess.Popen[bytes]
) -> None:
    check = PersonCheck()
    with qtbot.waitSignal(check.asked, timeout=10_000):
        thread, answer = ask_in_thread(check, session_of(piped.pid))
    check.close()  # Quit chosen while the question is on screen
    finish(qtbot, thread)
    [stopped] = answer
    assert isinstance(stopped, NotRunning)
    assert stopped.message == "Cairn stopped before the person answered; nothing was done"
    with pytest.raises(NotRunning, match="Cairn is stopping"):  # and nothing new is asked
        check(session_of(piped.pid))


def test_a_command_waiting_for_the_person_is_told_cairn_stopped(
    qtbot: QtBot, short_tmp: Path
) -> None:
    """Cairn stopping while the tray asked about `cairn policy set` run without a terminal
    told the command "this command is for a person: run it yourself in an interactive
    terminal" (exit 77), as if no Cairn had been there to ask."""
    home = short_tmp / "q"
    paths = paths_for(home)
    check = PersonCheck()
    with served_in_thread(paths, confirm_human=check):
        policy = (paths.config / POLICY_FILE).read_text(encoding="utf-8")
        command = subprocess.Popen(
            [sys.executable, "-m", "core.cli", "policy", "set", "kinds.idea", "auto"],
            cwd=ROOT,
            env=cairn_env(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            with qtbot.waitSignal(check.asked, timeout=30_000):
                pass
            check.close()  # the tray stops (SIGTERM, Quit): first the question, then the server
        except BaseException:
            command.kill()
            raise
    _out, err = command.communicate(timeout=60)
    assert err.strip() == "cairn: Cairn stopped before the person answered; nothing was done"
    assert command.returncode == NotRunning.code.exit_status
    assert (paths.config / POLICY_FILE).read_text(encoding="utf-8") == policy
