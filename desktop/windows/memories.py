"""The Memories window: search and filter every memory, read one with its history, and edit,
pin, archive or forget it. The table loads lazily (see `desktop.memory_model`); a person's
searches use the agents' engine but never count as a recall."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGridLayout,
    QHeaderView,
    QLineEdit,
    QMessageBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.agents import Agent
from core.changes import ChangeSet, Topic
from core.model import (
    DEFAULT_LIST_STATUSES,
    ListFilter,
    Memory,
    MemoryDetail,
    Scope,
    Status,
    Surface,
    Tier,
    Workspace,
    WriteResult,
)
from core.requests import UpdateRequest
from desktop.desk import ToolWindow
from desktop.memory_model import Filters, MemoryTableModel
from desktop.widgets import named, plain_label, tab_order
from desktop.windows.memory_detail import (
    DetailPanel,
    MemoryEditor,
    Shown,
    fetch_detail,
    forget_confirmation,
)

if TYPE_CHECKING:
    from desktop.desk import Desk

SEARCH_DELAY_MS = 250
FILTERS_PER_ROW = 3  # the filters above the table, in two rows
ALL_STATUSES = "*"  # every status, expired memories included
WITH_EXPIRED = "expired"  # active and archived, with those past their expiry (before the purge)
# Who writes without being an agent (a change's actor): never a choice of the agent filter.
_NOT_AGENTS = frozenset(s.value for s in Surface if s is not Surface.AGENT)


@dataclass(frozen=True)
class Choices:
    """What the filters offer beyond the fixed values: known workspaces and agents."""

    workspaces: tuple[Workspace, ...]
    agents: tuple[Agent, ...]


def _choices(desk: Desk) -> Choices:
    return Choices(tuple(desk.cairn.workspaces.list()), tuple(desk.cairn.agents.list()))


class MemoriesWindow(ToolWindow):
    name = "memories"
    default_size = (1280, 720)

    def unsaved(self) -> bool:
        return self.editor is not None and self.editor.request() is not None

    def __init__(self, desk: Desk) -> None:
        super().__init__(desk)
        self.setWindowTitle(self.tr("Cairn — Memories"))
        self.model = MemoryTableModel(desk, self)
        self.detail: MemoryDetail | None = None
        self.editor: MemoryEditor | None = None
        self.confirm: QMessageBox | None = None
        self._current_id: str | None = None
        # The memories the shown details name (what replaced it, what it contradicts): a change
        # to one of them reloads the details too.
        self._related: frozenset[str] = frozenset()
        self._started = False

        self._build_search()
        self._build_filters()
        self._build_table()
        self.panel = DetailPanel()
        self.panel.edit_button.clicked.connect(self.edit_selected)
        self.panel.pin_button.clicked.connect(self.toggle_pin)
        self.panel.archive_button.clicked.connect(self.toggle_archive)
        self.panel.forget_button.clicked.connect(self.forget_selected)
        self._lay_out()
        self._shortcut("Ctrl+F", self._focus_search)
        self._shortcut("Ctrl+E", self.edit_selected)
        self._shortcut("Del", self.forget_selected)
        desk.live.on(self, {Topic.MEMORIES}, self._on_changes)

    def _build_search(self) -> None:
        self.search = QLineEdit()
        self.search.setObjectName("search")
        self.search.setPlaceholderText(self.tr("Search memories (Ctrl+F)"))
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(
            self.tr(
                "Searches as you type with the agents' engine; your searches do not count as use."
            )
        )
        self.debounce = QTimer(self)
        self.debounce.setSingleShot(True)
        self.debounce.setInterval(SEARCH_DELAY_MS)
        self.debounce.timeout.connect(self.apply_filters)
        self.search.textChanged.connect(lambda _t: self.debounce.start())

    def _build_filters(self) -> None:
        self.scope_filter = self._combo("scopeFilter", self.tr("Scope"), self.tr("Any scope"))
        for scope in Scope:
            self.scope_filter.addItem(scope.value, scope.value)
        self.workspace_filter = self._combo(
            "workspaceFilter", self.tr("Workspace"), self.tr("Any workspace")
        )
        self.kind_filter = self._combo("kindFilter", self.tr("Kind"), self.tr("Any kind"))
        for kind in self.desk.cairn.memories.limits.kinds:
            self.kind_filter.addItem(kind, kind)
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("statusFilter")
        self.status_filter.setToolTip(self.tr("Status"))
        self.status_filter.addItem(self.tr("Active and archived"), None)
        self.status_filter.addItem(self.tr("Active and archived, with expired"), WITH_EXPIRED)
        for status in Status:
            self.status_filter.addItem(status.value, status.value)
        self.status_filter.addItem(self.tr("Every status"), ALL_STATUSES)
        self.status_filter.currentIndexChanged.connect(lambda _i: self.apply_filters())
        self.tier_filter = self._combo("tierFilter", self.tr("Tier"), self.tr("Any tier"))
        for tier in Tier:
            self.tier_filter.addItem(tier.value, tier.value)
        self.agent_filter = self._combo("agentFilter", self.tr("Agent"), self.tr("Any agent"))

    def _build_table(self) -> None:
        self.table = QTableView()
        self.table.setObjectName("memoryTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        # Fixed widths wide enough for a typical value and the (translated) header: fitting
        # columns to their contents would read every row. The memory's text takes the rest.
        typical = (
            "",
            "convention",
            "project",
            "archived",
            "explicit",
            "claude-code",
            "5",
            "11-28 14:05",
        )
        metrics = self.table.fontMetrics()
        for column in range(1, self.model.columnCount()):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            value = metrics.horizontalAdvance(typical[column]) + 16
            header.resizeSection(column, max(value, header.sectionSizeHint(column)))
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)
        self.model.loaded.connect(self._loaded)
        self.model.modelReset.connect(self._count)
        self.count = plain_label()
        self.count.setObjectName("countLabel")

    def _lay_out(self) -> None:
        # Two rows of three: in one row the six filters kept the window 1121 px wide at least,
        # wider than a 1024x768 screen (until 2026-12-02).
        filters = QGridLayout()
        for i, w in enumerate(self._filter_widgets()):
            filters.addWidget(w, i // FILTERS_PER_ROW, i % FILTERS_PER_ROW)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.search)
        left_layout.addLayout(filters)
        left_layout.addWidget(self.table)
        left_layout.addWidget(self.count)
        splitter = named(QSplitter(), "tableAndDetails")
        splitter.addWidget(left)
        splitter.addWidget(self.panel)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([820, 460])  # the table gets the room; the memory column the most
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        # after the table the chosen memory's text, its buttons, its history: as they are laid out
        tab_order(
            self.search,
            *self._filter_widgets(),
            self.table,
            self.panel.content,
            self.panel.edit_button,
        )

    def _filter_widgets(self) -> list[QComboBox]:
        return [
            self.scope_filter,
            self.workspace_filter,
            self.kind_filter,
            self.status_filter,
            self.tier_filter,
            self.agent_filter,
        ]

    def _combo(self, name: str, label: str, anything: str) -> QComboBox:
        combo = QComboBox()
        combo.setObjectName(name)
        combo.setToolTip(label)
        combo.addItem(anything, None)
        combo.currentIndexChanged.connect(lambda _i: self.apply_filters())
        return combo

    def _shortcut(self, keys: str, slot: Any) -> None:
        shortcut = QShortcut(QKeySequence(keys), self)
        shortcut.activated.connect(slot)

    def _focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    # -- loading -------------------------------------------------------------------------------

    def refresh(self) -> None:
        self.desk.call(_choices, self.desk, on_done=self._fill_choices, owner=self)
        if not self._started:
            self._started = True
            self.apply_filters()

    def new_day(self) -> None:
        """The table computes its times as it paints, and the change channel keeps it loaded:
        paint it again, and the chosen memory's history with it."""
        self.table.viewport().update()
        self._load_detail()

    def _fill_choices(self, choices: Choices) -> None:
        workspaces = [(w.path, w.id) for w in choices.workspaces]
        self._refill(self.workspace_filter, workspaces, self.tr("Any workspace"))
        agents = [(a.name, a.name) for a in choices.agents]
        self._refill(self.agent_filter, agents, self.tr("Any agent"))

    def _refill(self, combo: QComboBox, items: list[tuple[str, str]], anything: str) -> None:
        keep = combo.currentData()
        combo.blockSignals(True)
        combo.clear()
        combo.addItem(anything, None)
        for text, value in items:
            combo.addItem(text, value)
        at = combo.findData(keep) if keep is not None else 0
        combo.setCurrentIndex(max(at, 0))
        combo.blockSignals(False)
        if keep is not None and at < 0:
            self.apply_filters()  # the chosen one is gone

    def filters(self) -> Filters:
        def one(combo: QComboBox, as_type: Callable[[str], Any] = str) -> frozenset[Any]:
            value = combo.currentData()  # Qt hands enum values back as plain strings
            return frozenset() if value is None else frozenset({as_type(value)})

        status = self.status_filter.currentData()
        if status is None or status == WITH_EXPIRED:
            statuses = DEFAULT_LIST_STATUSES
        elif status == ALL_STATUSES:
            statuses = frozenset(Status)
        else:
            statuses = frozenset({Status(status)})
        return Filters(
            query=self.search.text().strip(),
            listing=ListFilter(
                scopes=one(self.scope_filter, Scope),
                workspace_ids=one(self.workspace_filter),
                kinds=one(self.kind_filter),
                statuses=statuses,
                tiers=one(self.tier_filter, Tier),
                agents=one(self.agent_filter),
                include_expired=status in (WITH_EXPIRED, ALL_STATUSES),
            ),
        )

    def apply_filters(self) -> None:
        """Show what the search box and the filters ask for (the debounce timer ends here)."""
        self.debounce.stop()
        self.model.show(self.filters())

    def _loaded(self) -> None:
        self._count()
        if self._current_id is not None and not self.table.selectionModel().hasSelection():
            row = self.model.row_of(self._current_id)
            if row is not None:  # the memory shown is still listed: select it again
                self.table.selectionModel().setCurrentIndex(
                    self.model.index(row, 0),
                    QItemSelectionModel.SelectionFlag.ClearAndSelect
                    | QItemSelectionModel.SelectionFlag.Rows,
                )

    def _count(self) -> None:
        n = self.model.rowCount()
        if self.model.loading and n == 0:
            text = self.tr("Loading…")
        elif self.model.searching and self.model.more_matched:
            text = self.tr("The best %n results; more may match: refine the search", "", n)
        elif self.model.searching:
            text = self.tr("%n results", "", n)
        elif self.model.canFetchMore(QModelIndex()):
            text = self.tr("%n memories shown; scroll down for more", "", n)
        else:
            text = self.tr("%n memories", "", n)
        self.count.setText(text)

    # -- the selected memory -------------------------------------------------------------------

    def selected(self) -> Memory | None:
        index = self.table.selectionModel().currentIndex()
        return self.model.memory_at(index.row()) if index.isValid() else None

    def select_id(self, memory_id: str) -> bool:
        row = self.model.row_of(memory_id)
        if row is None:
            return False
        self.table.selectRow(row)
        return True

    def _row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        memory = self.model.memory_at(current.row()) if current.isValid() else None
        if memory is None:
            return  # the selection went with a reset: keep showing it until it is found again
        if memory.id != self._current_id:
            self._current_id = memory.id
            self.detail = None
            self._related = frozenset()
            self.panel.show_nothing()
        self._load_detail()

    def _load_detail(self) -> None:
        memory_id = self._current_id
        if memory_id is None:
            return
        self.desk.call(
            fetch_detail,
            self.desk,
            memory_id,
            on_done=lambda d: self._show_detail(memory_id, d),
            on_error=lambda e: self._detail_failed(memory_id, e),
            owner=self,
        )

    def _show_detail(self, memory_id: str, shown: Shown) -> None:
        if memory_id != self._current_id:
            return
        detail = shown.detail
        self.detail = detail
        self._related = frozenset(shown.others)
        self.panel.show_detail(shown)
        if self.editor is not None and self.editor.memory.id == memory_id:
            self.editor.changed_elsewhere(detail.memory.revision)

    def _detail_failed(self, memory_id: str, error: BaseException) -> None:
        if memory_id == self._current_id:
            self.detail = None
            self.panel.show_nothing()
            self.show_error(error)

    def _on_changes(self, change_set: ChangeSet) -> None:
        if self._new_choices(change_set):
            self.desk.call(_choices, self.desk, on_done=self._fill_choices, owner=self)
        ids = {c.memory_id for c in change_set.changes if c.memory_id}
        if not ids:  # a change without a memory (an allowlist edit): redaction may differ
            self.model.show(self.model.filters)
        else:
            self.model.changed(ids)
        # The details name related memories by their text: a change to one of those shows too
        # (until 2026-12-02 only a change to the memory shown did).
        if self._current_id is not None and (
            not ids or self._current_id in ids or ids & self._related
        ):
            self._load_detail()

    def _new_choices(self, change_set: ChangeSet) -> bool:
        """Whether `change_set` names a workspace or an agent the filters do not offer yet."""

        def offered(combo: QComboBox) -> set[str]:
            return {str(combo.itemData(i)) for i in range(1, combo.count())}

        workspaces, agents = offered(self.workspace_filter), offered(self.agent_filter)
        return any(
            (c.workspace_id is not None and c.workspace_id not in workspaces)
            or (c.actor is not None and c.actor not in agents and c.actor not in _NOT_AGENTS)
            for c in change_set.changes
            if c.memory_id
        )

    # -- actions -------------------------------------------------------------------------------

    def _target(self) -> Memory | None:
        if self.detail is None or self.detail.memory.id != self._current_id:
            return None
        return self.detail.memory

    def edit_selected(self) -> None:
        memory = self._target()
        if memory is None or memory.status is Status.FORGOTTEN:
            return
        editor = MemoryEditor(memory, self.desk.cairn.memories.limits.kinds, self)
        editor.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        editor.save_requested.connect(lambda req: self._save(editor, req))
        editor.finished.connect(lambda _r: self._editor_closed(editor))
        self.editor = editor
        editor.open()

    def _editor_closed(self, editor: MemoryEditor) -> None:
        if self.editor is editor:
            self.editor = None

    def _save(self, editor: MemoryEditor, req: UpdateRequest) -> None:
        def done(result: WriteResult) -> None:
            # Landed, the new revision reaches the details through the change channel.
            editor.landed(result)

        def failed(error: BaseException) -> None:
            editor.save_button.setEnabled(True)
            # The window, not the dialog, owns the message: the dialog may close first.
            self.show_error(error)

        self.desk.call(
            self.desk.cairn.memories.update,
            self.desk.person,
            req,
            on_done=done,
            on_error=failed,
            owner=editor,
        )

    def toggle_pin(self) -> None:
        memory = self._target()
        if memory is not None:
            self._act(self.desk.cairn.memories.set_pinned, memory.id, not memory.pinned)

    def toggle_archive(self) -> None:
        memory = self._target()
        if memory is not None:
            archived = memory.status is Status.ARCHIVED
            self._act(self.desk.cairn.memories.set_archived, memory.id, not archived)

    def _act(self, fn: Any, memory_id: str, value: bool) -> None:
        self.desk.call(fn, self.desk.person, memory_id, value, owner=self)

    def forget_selected(self) -> None:
        memory = self._target()
        if memory is None or memory.status is Status.FORGOTTEN:
            return
        box, forget = forget_confirmation(memory, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        memory_id = memory.id
        forget.clicked.connect(lambda: self._forget(memory_id))
        box.finished.connect(lambda _r: self._confirm_closed(box))
        self.confirm = box
        box.open()

    def _confirm_closed(self, box: QMessageBox) -> None:
        if self.confirm is box:
            self.confirm = None

    def _forget(self, memory_id: str) -> None:
        self.desk.call(self.desk.cairn.memories.forget, self.desk.person, memory_id, owner=self)
