"""The capture policy window: what agents may remember without asking - a mode per kind, scope
and origin, per-agent overrides, the pause switch - kept in step with the policy file both ways."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QSignalBlocker, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.changes import Topic
from core.policy import Mode, Policy
from core.policy_file import PolicyService
from desktop.desk import Desk, ToolWindow
from desktop.widgets import named, plain_label, tab_order

MODES = (Mode.AUTO, Mode.ASK, Mode.OFF)
RULE_ROLE = Qt.ItemDataRole.UserRole


@dataclass(frozen=True)
class PolicyView:
    """What the window shows, read off the GUI thread."""

    policy: Policy
    path: Path
    error: str | None  # the policy file's problem (line and reason), while it has one


def read_view(service: PolicyService, warnings: dict[str, str]) -> PolicyView:
    return PolicyView(service.current(), service.path, warnings.get(PolicyService.WARNING))


class PolicyWindow(ToolWindow):
    """The capture policy. Every change applies at once and is written into the file; an edit
    of the file shows here as soon as Cairn applies it."""

    name = "policy"
    default_size = (720, 640)

    def __init__(self, desk: Desk) -> None:
        super().__init__(desk)
        self.setWindowTitle(self.tr("Cairn — Capture policy"))
        self.view: PolicyView | None = None
        self.modes: dict[str, QComboBox] = {}  # target ("kinds.fact", "scopes.user"...) -> combo

        self.error = named(plain_label(), "policyError")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.setStyleSheet(
            "QLabel { background: #b3261e; color: white; padding: 8px; border-radius: 4px; }"
        )
        self.error.hide()

        self.pause = named(
            QCheckBox(self.tr("&Pause all capture")),
            "pause",
            self.tr("While paused, every agent write is refused; your own writes still land."),
        )
        self.pause.toggled.connect(self._pause_toggled)

        explain = plain_label(
            self.tr(
                "auto: an agent's write lands at once.\n"
                "ask: it waits in the review queue for you.\n"
                "off: it is refused; nothing is stored.\n"
                "The strictest rule that applies wins."
            )
        )
        explain.setObjectName("modesExplained")
        explain.setWordWrap(True)

        self.kinds_box = QGroupBox(self.tr("Kinds of memory"))
        self.kinds_form = QFormLayout(self.kinds_box)
        columns = QHBoxLayout()
        columns.addWidget(self.kinds_box, 1)
        right = QVBoxLayout()
        right.addWidget(self._general_box())
        right.addWidget(explain)
        right.addStretch(1)
        columns.addLayout(right, 1)

        layout = QVBoxLayout(self)
        layout.addWidget(self.error)
        layout.addWidget(self.pause)
        layout.addLayout(columns)
        layout.addWidget(self._agents_box(), 1)
        layout.addLayout(self._file_row())

        # The one warning shown here (an invalid file) is announced with POLICY too.
        desk.live.on(self, {Topic.POLICY}, self.refresh_if_shown)

    def _general_box(self) -> QGroupBox:
        general = QGroupBox(self.tr("Scope and origin"))
        form = QFormLayout(general)
        form.addRow(
            self.tr("Global memories"),
            self._mode_combo(
                "scopes.global", self.tr("A global memory reaches every project you work on.")
            ),
        )
        form.addRow(
            self.tr("User memories"),
            self._mode_combo("scopes.user", self.tr("A user memory is about you, everywhere.")),
        )
        form.addRow(
            self.tr("Extracted by a model"),
            self._mode_combo(
                "extracted",
                self.tr("Memories a model extracted on its own rather than was asked to keep."),
            ),
        )
        form.addRow(
            self.tr("Other kinds"),
            self._mode_combo(
                "other_kinds", self.tr("Kinds added in settings that are not listed above.")
            ),
        )
        return general

    def _agents_box(self) -> QGroupBox:
        self.overrides = named(
            QTableWidget(0, 3),
            "overrides",
            self.tr(
                "Per-agent overrides. A looser one applies only while the agent shows its "
                "token; a stricter one always applies."
            ),
        )
        self.overrides.setHorizontalHeaderLabels(
            [self.tr("Agent"), self.tr("Kind or scope"), self.tr("Mode")]
        )
        self.overrides.verticalHeader().hide()
        self.overrides.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.overrides.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.overrides.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.overrides.itemSelectionChanged.connect(self._selection_changed)

        self.new_agent = named(
            QLineEdit(), "newAgent", self.tr("The agent's name, as it connects.")
        )
        self.new_agent.setPlaceholderText(self.tr("agent name"))
        self.new_agent.returnPressed.connect(self._add_override)
        self.new_rule = named(QComboBox(), "newRule", self.tr("What the override is about."))
        self.new_mode = named(QComboBox(), "newMode", self.tr("The override's mode."))
        self._fill_modes(self.new_mode)
        self.add_button = named(
            QPushButton(self.tr("&Add")), "addOverride", self.tr("Add or change this override.")
        )
        self.add_button.clicked.connect(self._add_override)
        self.remove_button = named(
            QPushButton(self.tr("&Remove")),
            "removeOverride",
            self.tr("Remove the selected overrides (Delete)."),
        )
        self.remove_button.setEnabled(False)
        self.remove_button.clicked.connect(self._remove_overrides)
        QShortcut(QKeySequence.StandardKey.Delete, self.overrides, self._remove_overrides)

        add_row = QHBoxLayout()
        add_row.addWidget(self.new_agent, 2)
        add_row.addWidget(self.new_rule, 2)
        add_row.addWidget(self.new_mode, 1)
        add_row.addWidget(self.add_button)
        add_row.addWidget(self.remove_button)
        box = QGroupBox(self.tr("Per-agent overrides"))
        layout = QVBoxLayout(box)
        layout.addWidget(self.overrides)
        layout.addLayout(add_row)
        return box

    def _file_row(self) -> QHBoxLayout:
        self.path_label = named(QLineEdit(), "policyPath", self.tr("The policy file."))
        self.path_label.setReadOnly(True)
        self.open_button = named(
            QPushButton(self.tr("&Open file")),
            "openFile",
            self.tr("Open the policy file in your editor; Cairn applies a saved edit at once."),
        )
        self.open_button.clicked.connect(self._open_file)
        row = QHBoxLayout()
        row.addWidget(plain_label(self.tr("Policy file")))
        row.addWidget(self.path_label, 1)
        row.addWidget(self.open_button)
        return row

    # -- loading ---------------------------------------------------------------------------

    def refresh(self) -> None:
        cairn = self.desk.cairn
        self.desk.call(
            lambda: read_view(cairn.policy, cairn.warnings.snapshot()),
            on_done=self._show,
            owner=self,
        )

    def _show(self, view: PolicyView) -> None:
        self.view = view
        policy = view.policy
        if view.error:
            self.error.setText(
                self.tr(
                    "The policy file has an error and was not applied: {}. The policy below "
                    "is the last valid one, still in effect."
                ).format(view.error)
            )
            self.error.show()
        else:
            self.error.hide()
        with QSignalBlocker(self.pause):
            self.pause.setChecked(policy.paused)
        for kind in policy.kinds:
            target = f"kinds.{kind}"
            if target not in self.modes:
                self.kinds_form.addRow(kind, self._mode_combo(target, None))
        values: dict[str, Mode] = {f"kinds.{k}": m for k, m in policy.kinds.items()}
        values |= {f"scopes.{s.value}": m for s, m in policy.scopes.items()}
        values["extracted"] = policy.extracted
        values["other_kinds"] = policy.other_kinds
        for target, combo in self.modes.items():
            mode = values.get(target)
            if mode is not None:
                with QSignalBlocker(combo):
                    combo.setCurrentIndex(MODES.index(mode))
        self._fill_rules(policy)
        self._fill_overrides(policy)
        self.path_label.setText(str(view.path))
        self._order_tabs()

    def _order_tabs(self) -> None:
        """Tab goes as the window is laid out: pause, the kinds, scope and origin, the overrides
        and each one's mode, the fields that add one, the file. The kinds and the overrides'
        modes are built as the policy loads, so left to Qt they came after everything else."""
        kinds = [c for t, c in self.modes.items() if t.startswith("kinds.")]
        general = [c for t, c in self.modes.items() if not t.startswith("kinds.")]
        order: list[QWidget] = [self.pause, *kinds, *general, self.overrides]
        order += [self.overrides.cellWidget(r, 2) for r in range(self.overrides.rowCount())]
        order += [self.new_agent, self.new_rule, self.new_mode, self.add_button]
        order += [self.remove_button, self.path_label, self.open_button]
        tab_order(*order)

    def _rule_text(self, target: str) -> str:
        """A rule as the person reads it, in their language: "kind: idea", "scope: user"."""
        part, _, name = target.partition(".")
        if part == "kinds":
            return self.tr("kind: {}").format(name)
        if part == "scopes":
            return self.tr("scope: {}").format(name)
        return self.tr("extracted by a model")

    def _fill_rules(self, policy: Policy) -> None:
        current = self.new_rule.currentData()
        with QSignalBlocker(self.new_rule):
            self.new_rule.clear()
            for kind in policy.kinds:
                self.new_rule.addItem(self._rule_text(f"kinds.{kind}"), f"kinds.{kind}")
            for scope in ("global", "user"):
                self.new_rule.addItem(self._rule_text(f"scopes.{scope}"), f"scopes.{scope}")
            self.new_rule.addItem(self._rule_text("extracted"), "extracted")
            index = self.new_rule.findData(current)
            self.new_rule.setCurrentIndex(max(index, 0))

    def _fill_overrides(self, policy: Policy) -> None:
        rows: list[tuple[str, str, Mode]] = []
        for agent, rule in sorted(policy.agents.items()):
            rows += [(agent, f"kinds.{k}", m) for k, m in rule.kinds.items()]
            rows += [(agent, f"scopes.{s.value}", m) for s, m in rule.scopes.items()]
            if rule.extracted is not None:
                rows.append((agent, "extracted", rule.extracted))
        selected = set(self._selected_rules())
        current = self._rule_at(self.overrides.currentRow())
        focused = self.overrides.isAncestorOf(self.focusWidget())
        self.overrides.setRowCount(len(rows))
        for row, (agent, target, mode) in enumerate(rows):
            name_item = QTableWidgetItem(agent)
            name_item.setData(RULE_ROLE, (agent, target))
            self.overrides.setItem(row, 0, name_item)
            self.overrides.setItem(row, 1, QTableWidgetItem(self._rule_text(target)))
            # The row's mode keeps its drop-down list while the row stays where it was: a
            # new one in its place took the focus away from a person changing it with keys.
            name = f"override.{agent}.{target}"
            combo = self.overrides.cellWidget(row, 2)
            if not isinstance(combo, QComboBox) or combo.objectName() != name:
                combo = named(QComboBox(), name)
                self._fill_modes(combo)
                combo.currentIndexChanged.connect(
                    lambda _i, a=agent, t=target, c=combo: self._apply(
                        f"agents.{a}.{t}", MODES[c.currentIndex()]
                    )
                )
                self.overrides.setCellWidget(row, 2, combo)
            with QSignalBlocker(combo):
                combo.setCurrentIndex(MODES.index(mode))
            if (agent, target) in selected:
                self.overrides.selectRow(row)
            if (agent, target) == current:
                # the row the person was on stays theirs, and so does the focus in it
                self.overrides.selectionModel().setCurrentIndex(
                    self.overrides.model().index(row, 2), QItemSelectionModel.SelectionFlag.NoUpdate
                )
                if focused and not self.overrides.hasFocus():
                    combo.setFocus()
        self._selection_changed()

    def _rule_at(self, row: int) -> tuple[str, str] | None:
        """The (agent, target) of the override in `row`, if there is one."""
        item = self.overrides.item(row, 0)
        if item is None:
            return None
        agent, target = item.data(RULE_ROLE)
        return str(agent), str(target)

    # -- widgets ---------------------------------------------------------------------------

    def _fill_modes(self, combo: QComboBox) -> None:
        tips = {
            Mode.AUTO: self.tr("An agent's write lands at once."),
            Mode.ASK: self.tr("It waits in the review queue for you."),
            Mode.OFF: self.tr("It is refused; nothing is stored."),
        }
        labels = {Mode.AUTO: self.tr("auto"), Mode.ASK: self.tr("ask"), Mode.OFF: self.tr("off")}
        for i, mode in enumerate(MODES):
            combo.addItem(labels[mode], mode.value)
            combo.setItemData(i, tips[mode], Qt.ItemDataRole.ToolTipRole)

    def _mode_combo(self, target: str, tip: str | None) -> QComboBox:
        combo = named(QComboBox(), f"mode.{target}", tip)
        self._fill_modes(combo)
        combo.currentIndexChanged.connect(
            lambda index: self._apply(target, MODES[index]) if index >= 0 else None
        )
        self.modes[target] = combo
        return combo

    # -- changes ---------------------------------------------------------------------------

    def _apply(
        self, target: str, value: Mode | bool, on_done: Callable[[Any], None] | None = None
    ) -> None:
        self.desk.call(
            self.desk.cairn.policy.set,
            self.desk.person,
            target,
            value,
            on_done=on_done,
            on_error=self._failed,
            owner=self,
        )

    def _failed(self, error: BaseException) -> None:
        self.show_error(error)
        self.refresh()  # show the policy in effect again

    def _pause_toggled(self, paused: bool) -> None:
        self._apply("paused", paused)

    def _add_override(self) -> None:
        agent = self.new_agent.text().strip()
        rule = self.new_rule.currentData()
        if not agent or not isinstance(rule, str):
            self.new_agent.setFocus()
            return
        # cleared once it is in the policy: a refused name stays, to be fixed
        self._apply(
            f"agents.{agent}.{rule}",
            MODES[self.new_mode.currentIndex()],
            on_done=lambda _policy: self.new_agent.clear(),
        )

    def _selected_rules(self) -> list[tuple[str, str]]:
        rows = sorted({i.row() for i in self.overrides.selectedIndexes()})
        return [rule for row in rows if (rule := self._rule_at(row)) is not None]

    def _selection_changed(self) -> None:
        self.remove_button.setEnabled(bool(self._selected_rules()))

    def _remove_overrides(self) -> None:
        chosen = self._selected_rules()
        if not chosen:
            return
        policy = self.desk.cairn.policy
        person = self.desk.person

        def remove() -> None:
            for agent, target in chosen:
                policy.remove_override(person, agent, target)

        self.desk.call(remove, on_error=self._failed, owner=self)

    def _open_file(self) -> None:
        if self.view is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.view.path)))
