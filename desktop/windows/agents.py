"""The Agents window: the registered agents with their status, and the person's controls -
register one (its token shown once), pause, resume, revoke (after a confirmation)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.agents import Agent, AgentStatus
from core.changes import Topic
from desktop.desk import ToolWindow
from desktop.widgets import named, plain_box, plain_label, tab_order, when

if TYPE_CHECKING:
    from desktop.desk import Desk


class TokenDialog(QDialog):
    """Shows a new agent's token once. Nothing keeps it after the dialog closes."""

    def __init__(self, agent: str, token: str, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("tokenDialog")
        self.setWindowTitle(self.tr("Token for {}").format(agent))
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        intro = plain_label(
            self.tr(
                "The agent “{}” is registered. Give it this token (for example as CAIRN_TOKEN). "
                "Copy it now: Cairn will not show it again."
            ).format(agent)
        )
        intro.setObjectName("tokenNotice")
        intro.setWordWrap(True)
        self.token = QLineEdit(token)
        self.token.setObjectName("tokenField")
        self.token.setReadOnly(True)
        self.token.selectAll()
        self.copy_button = QPushButton(self.tr("&Copy"))
        self.copy_button.setObjectName("copyToken")
        self.copy_button.setToolTip(self.tr("Put the token on the clipboard"))
        self.copy_button.clicked.connect(self._copy)
        row = QHBoxLayout()
        row.addWidget(self.token, 1)
        row.addWidget(self.copy_button)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(row)
        layout.addWidget(buttons)
        self.resize(560, 160)

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.token.text())
        self.copy_button.setText(self.tr("Copied"))


class AgentsWindow(ToolWindow):
    name = "agents"
    default_size = (760, 480)

    def __init__(self, desk: Desk) -> None:
        super().__init__(desk)
        self.setWindowTitle(self.tr("Cairn — Agents"))
        self.agents: list[Agent] = []
        self.token_dialog: TokenDialog | None = None
        self.confirm: QMessageBox | None = None
        self.loads = 0  # lists received (tests count them)

        self.table = QTableWidget(0, 5)
        self.table.setObjectName("agentTable")
        self.table.setHorizontalHeaderLabels(
            [
                self.tr("Name"),
                self.tr("Status"),
                self.tr("Verified"),
                self.tr("Created"),
                self.tr("Last seen"),
            ]
        )
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._enable)

        self.name_input = QLineEdit()
        self.name_input.setObjectName("agentName")
        self.name_input.setPlaceholderText(self.tr("New agent name, e.g. claude-code"))
        self.name_input.setToolTip(
            self.tr("Lower-case letters, digits, '.', '_' or '-', up to 64 characters")
        )
        self.name_input.returnPressed.connect(self.add)
        self.add_button = named(
            QPushButton(self.tr("&Add")), "addAgent", self.tr("Register the agent")
        )
        self.add_button.clicked.connect(self.add)
        self.pause_button = named(
            QPushButton(self.tr("&Pause")),
            "pauseAgent",
            self.tr("Refuse its requests until resumed"),
        )
        self.pause_button.clicked.connect(lambda: self._set(AgentStatus.PAUSED))
        self.resume_button = named(
            QPushButton(self.tr("&Resume")), "resumeAgent", self.tr("Let it work again")
        )
        self.resume_button.clicked.connect(lambda: self._set(AgentStatus.ACTIVE))
        self.revoke_button = named(
            QPushButton(self.tr("Re&voke…")),
            "revokeAgent",
            self.tr("Withdraw its token for good (asks first)"),
        )
        self.revoke_button.clicked.connect(self.revoke)

        adding = QHBoxLayout()
        adding.addWidget(self.name_input, 1)
        adding.addWidget(self.add_button)
        actions = QHBoxLayout()
        for b in (self.pause_button, self.resume_button, self.revoke_button):
            actions.addWidget(b)
        actions.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(adding)
        layout.addWidget(self.table)
        layout.addLayout(actions)
        tab_order(
            self.name_input,
            self.add_button,
            self.table,
            self.pause_button,
            self.resume_button,
            self.revoke_button,
        )
        QShortcut(QKeySequence("Ctrl+N"), self).activated.connect(self.name_input.setFocus)
        self._enable()
        desk.live.on(self, {Topic.AGENTS}, self.refresh_if_shown)

    # -- the list (coalesced fetches) ----------------------------------------------------------

    def _proof(self, a: Agent) -> str:
        """How the agent proves who it is: a revoked one's token no longer works (it had one;
        "declared only" said it never had)."""
        if a.has_token:
            return self.tr("token")
        if a.status is AgentStatus.REVOKED:
            return self.tr("none (revoked)")
        return self.tr("declared only")

    def unsaved(self) -> bool:
        """A token shown once, its dialog still open: rebuilding the window would lose it."""
        return self.token_dialog is not None

    def refresh(self) -> None:
        self.fetch(self.desk.cairn.agents.list, on_done=self._landed)

    def _landed(self, agents: list[Agent]) -> None:
        self.loads += 1
        keep = self.selected()
        self.agents = agents
        self.table.setRowCount(len(agents))
        for row, a in enumerate(agents):
            cells = [
                a.name,
                self._status(a.status),
                self._proof(a),
                when(a.created_at),
                when(a.last_seen_at) or self.tr("never"),
            ]
            for column, text in enumerate(cells):
                self.table.setItem(row, column, QTableWidgetItem(text))
        if keep is not None:
            self.select(keep.name)
        self._enable()

    def _status(self, status: AgentStatus) -> str:
        return {
            AgentStatus.ACTIVE: self.tr("active"),
            AgentStatus.PAUSED: self.tr("paused"),
            AgentStatus.REVOKED: self.tr("revoked"),
        }[status]

    def selected(self) -> Agent | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or rows[0].row() >= len(self.agents):
            return None
        return self.agents[rows[0].row()]

    def select(self, name: str) -> bool:
        for row, a in enumerate(self.agents):
            if a.name == name:
                self.table.selectRow(row)
                return True
        return False

    def _enable(self) -> None:
        a = self.selected()
        self.pause_button.setEnabled(a is not None and a.status is AgentStatus.ACTIVE)
        self.resume_button.setEnabled(a is not None and a.status is AgentStatus.PAUSED)
        self.revoke_button.setEnabled(a is not None and a.status is not AgentStatus.REVOKED)

    # -- actions -------------------------------------------------------------------------------

    def add(self) -> None:
        name = self.name_input.text().strip()
        if not name:
            self.name_input.setFocus()
            return
        self.add_button.setEnabled(False)

        def done(result: tuple[Agent, str]) -> None:
            self.add_button.setEnabled(True)
            agent, token = result
            self.name_input.clear()
            self._show_token(agent.name, token)

        def failed(error: BaseException) -> None:
            self.add_button.setEnabled(True)
            self.show_error(error)

        self.desk.call(
            self.desk.cairn.agents.add,
            self.desk.person,
            name,
            on_done=done,
            on_error=failed,
            owner=self,
        )

    def _show_token(self, agent: str, token: str) -> None:
        dialog = TokenDialog(agent, token, self)
        dialog.finished.connect(lambda _r: self._token_closed(dialog))
        self.token_dialog = dialog
        dialog.open()

    def _token_closed(self, dialog: TokenDialog) -> None:
        if self.token_dialog is dialog:
            self.token_dialog = None

    def _set(self, status: AgentStatus) -> None:
        a = self.selected()
        if a is not None:
            self.desk.call(
                self.desk.cairn.agents.set_status, self.desk.person, a.name, status, owner=self
            )

    def revoke(self) -> None:
        a = self.selected()
        if a is None or a.status is AgentStatus.REVOKED:
            return
        box = plain_box(self)
        box.setObjectName("revokeConfirm")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(self.tr("Revoke this agent?"))
        box.setText(self.tr("Revoke “{}”?").format(a.name))
        box.setInformativeText(
            self.tr(
                "Its token stops working at once and cannot be restored; its memories stay. "
                "To let it work again you register it anew and give it the new token."
            )
        )
        revoke = box.addButton(self.tr("Revoke"), QMessageBox.ButtonRole.DestructiveRole)
        revoke.setObjectName("confirmRevoke")
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        name = a.name
        revoke.clicked.connect(
            lambda: self.desk.call(
                self.desk.cairn.agents.set_status,
                self.desk.person,
                name,
                AgentStatus.REVOKED,
                owner=self,
            )
        )
        box.finished.connect(lambda _r: self._confirm_closed(box))
        self.confirm = box
        box.open()

    def _confirm_closed(self, box: QMessageBox) -> None:
        if self.confirm is box:
            self.confirm = None
