"""The tray's confirmation of a person's command run without a terminal.

People's commands (`cairn review adopt`, `cairn policy set`, `cairn agent revoke`, ...) need a
person. Typed at a terminal they ask for a typed confirmation there, and the server checks that
the connecting process sits at one - an agent's shell tool does not. Run without a terminal (a
script, a launcher, an agent), they reach the person only while the tray runs: the tray shows
which program asks, with the program that started it, and the person allows it once or refuses.
The headless daemon, with nobody to ask, refuses them.

One question at a time (a second program is refused while one is asked about, so nothing can
queue up dialogs); a question left unanswered for ANSWER_WITHIN_S is a refusal.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStyle,
    QVBoxLayout,
)

from core.errors import NotRunning
from core.protocol import Session
from core.runtime import Process, describe_process, has_terminal
from core.settings_file import SettingsService
from core.terminal import STOPPED_BEFORE_ANSWER
from desktop.widgets import plain_label, plain_tip

log = logging.getLogger(__name__)

ANSWER_WITHIN_S = 60.0
FIELD_CHARS = 90  # how wide a field's value is shown (longer ones are cut in the middle)
ASK_TERMINALS_TOO = "security.confirm_terminals_in_tray"


class PersonCheck(QObject):
    """The server's `confirm_human`: None when a person's connection may go ahead, else why
    not; NotRunning when Cairn stops first (the command is told Cairn stopped, with a stopped
    Cairn's exit status). Called on a server thread; the question is asked on the GUI thread."""

    _ask = Signal(object)  # (Process, Future[bool]): show the question
    _withdraw = Signal(object)  # Future[bool]: the time to answer ran out
    asked = Signal(object)  # the dialog, once shown (tests and screenshots find it here)

    def __init__(self, *, answer_within_s: float = ANSWER_WITHIN_S) -> None:
        super().__init__()
        self._answer_within_s = answer_within_s
        self._ask_terminals_too: Callable[[], bool] = lambda: False  # see follow()
        self._lock = threading.Lock()
        self._pending: Future[bool] | None = None
        self._closed = False
        self._dialog: QDialog | None = None
        self._dialog_answers: Future[bool] | None = None  # the question the dialog asks
        self._ask.connect(self._show)
        self._withdraw.connect(self._close_if_still_asking)

    def __call__(self, session: Session) -> str | None:
        peer = session.peer
        if peer is None or peer.pid is None:
            return "this system does not say which process is connecting"
        if has_terminal(peer.pid) and not self._ask_terminals_too():
            return None  # the command asked for a typed confirmation at its terminal
        answer: Future[bool] = Future()
        with self._lock:
            if self._closed:
                raise NotRunning("Cairn is stopping; nothing was done")
            if self._pending is not None:
                return (
                    "the tray is already asking the person about another program; "
                    "try again once that is answered"
                )
            self._pending = answer
        try:
            return self._ask_and_wait(describe_process(peer.pid), answer)
        finally:
            with self._lock:
                self._pending = None

    def _ask_and_wait(self, process: Process, answer: Future[bool]) -> str | None:
        self._ask.emit((process, answer))
        try:
            allowed = answer.result(timeout=self._answer_within_s)
        except TimeoutError:
            with contextlib.suppress(InvalidStateError):  # unless answered just now
                answer.set_result(False)
            self._withdraw.emit(answer)
            allowed = answer.result()
            if not allowed:
                return (
                    "nobody answered the tray's question within "
                    f"{self._answer_within_s:g} s; nothing was done"
                )
        if allowed:
            return None
        if self._closed:
            # Until 2026-11-30 a refusal ("Cairn is stopping", exit 77), when it got through.
            raise NotRunning(STOPPED_BEFORE_ANSWER)
        return "the person refused it in the tray"

    def follow(self, config: SettingsService) -> None:
        """Take `security.confirm_terminals_in_tray` from the running Cairn's settings, read at
        each question: a change made in Settings applies to the next one."""
        config.follow((ASK_TERMINALS_TOO,), lambda _settings: None)  # nothing to rebuild
        self._ask_terminals_too = lambda: config.current().flag(ASK_TERMINALS_TOO)

    def close(self) -> None:
        """Cairn is stopping: a question still open is answered no."""
        with self._lock:
            self._closed = True
            pending = self._pending
        if pending is not None:
            with contextlib.suppress(InvalidStateError):
                pending.set_result(False)
        if self._dialog is not None:
            self._dialog.close()

    @Slot(object)
    def _show(self, request: tuple[Process, Future[bool]]) -> None:
        process, answer = request
        if answer.done():
            return
        box = self._question(process)
        allow = box.findChild(QPushButton, "personAllow")

        def answered(result: int) -> None:
            with contextlib.suppress(InvalidStateError):
                answer.set_result(result == QDialog.DialogCode.Accepted and allow is not None)
            if self._dialog is box:
                self._dialog, self._dialog_answers = None, None

        box.finished.connect(answered)
        self._dialog, self._dialog_answers = box, answer
        log.info("asking the person about a command run without a terminal (pid %d)", process.pid)
        box.show()  # a new window, on top of the others (WindowStaysOnTopHint)
        box.activateWindow()
        self.asked.emit(box)

    def _question(self, process: Process) -> QDialog:
        """The question, each field (command, parent, pid) in a label of its own beside its
        name: one line of plain text, cut in the middle with "…" where it is long, so a
        command's arguments show (the whole text is its tooltip). Until 2026-11-30 the fields
        were lines of one word-wrapped text, and a command line padded with spaces showed a
        "Started by:" line of its own making."""
        box = QDialog()
        box.setObjectName("personCheck")
        box.setWindowTitle(self.tr("Cairn: act for you?"))
        icon = plain_label()
        size = box.style().pixelMetric(QStyle.PixelMetric.PM_MessageBoxIconSize)
        question = QStyle.StandardPixmap.SP_MessageBoxQuestion
        icon.setPixmap(box.style().standardIcon(question).pixmap(size, size))
        title = plain_label(self.tr("A program asks to act for you in Cairn."))
        bold = title.font()
        bold.setBold(True)
        title.setFont(bold)
        why = plain_label(
            self.tr(
                "It could adopt or reject proposals, change the capture policy or your agents, "
                "and see what only you may see. Allow it only if you started it yourself."
            )
        )
        why.setWordWrap(True)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        parent = process.parent_command or self.tr("(unknown)")
        fields = (
            (self.tr("Command:"), "personCommand", process.command),
            (self.tr("Started by:"), "personParent", parent),
            (self.tr("Process:"), "personPid", str(process.pid)),
        )
        for name, object_name, value in fields:
            label = plain_label(name)
            label.setFont(bold)
            form.addRow(label, _field(value, object_name))
        buttons = QDialogButtonBox()
        allow = buttons.addButton(self.tr("Allow once"), QDialogButtonBox.ButtonRole.AcceptRole)
        refuse = buttons.addButton(self.tr("Refuse"), QDialogButtonBox.ButtonRole.RejectRole)
        allow.setObjectName("personAllow")
        refuse.setObjectName("personRefuse")
        allow.setAutoDefault(False)
        refuse.setDefault(True)  # Enter refuses, as Esc does (QDialog's reject)
        buttons.accepted.connect(box.accept)
        buttons.rejected.connect(box.reject)
        text = QVBoxLayout()
        text.addWidget(title)
        text.addWidget(why)
        text.addLayout(form)
        top = QHBoxLayout()
        top.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        top.addLayout(text, 1)
        layout = QVBoxLayout(box)
        layout.addLayout(top)
        layout.addWidget(buttons)
        refuse.setFocus()
        return box

    @Slot(object)
    def _close_if_still_asking(self, answer: Future[bool]) -> None:
        if self._dialog is not None and self._dialog_answers is answer:
            self._dialog.close()


def _field(value: str, name: str) -> QLabel:
    """One field's value: plain text on one line, at most FIELD_CHARS average characters wide,
    a long one cut in the middle (`cut_middle`); the whole value is its tooltip."""
    label = plain_label()
    label.setObjectName(name)
    label.setWordWrap(False)
    metrics = label.fontMetrics()
    shown = cut_middle(value, metrics, metrics.averageCharWidth() * FIELD_CHARS)
    label.setText(shown)
    label.setMinimumWidth(metrics.horizontalAdvance(shown))
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if shown != value:
        label.setToolTip(plain_tip(value))  # markup in a command line is shown as typed
    return label


def cut_middle(value: str, metrics: QFontMetrics, width: int) -> str:
    """`value` as it is when it fits `width` px, else its start and its end with "…" between,
    the end given two thirds of the room: a command's program is at its start, and what it
    will do (`review adopt s_01a…`, the proposal asked about) at its end - cut at the right
    until 2026-12-02, the proposal's id was lost."""
    if metrics.horizontalAdvance(value) <= width:
        return value
    ellipsis = "…"
    room = width - metrics.horizontalAdvance(ellipsis)
    tail = metrics.elidedText(value, Qt.TextElideMode.ElideLeft, room * 2 // 3)
    tail = tail.removeprefix(ellipsis)
    head_room = room - metrics.horizontalAdvance(tail)
    head = metrics.elidedText(
        value[: len(value) - len(tail)],
        Qt.TextElideMode.ElideRight,
        head_room + metrics.horizontalAdvance(ellipsis),
    )
    return head.removesuffix(ellipsis) + ellipsis + tail
