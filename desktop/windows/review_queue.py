"""The review window's list of waiting proposals: how one proposal reads (its title, why it
waits), the filters, the table (its rows, flagged ones marked, in review_rows.py) and the
buttons that decide a multi-selection."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QEvent, QItemSelectionModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.memory_model import words_and_id
from desktop.widgets import named, plain_label, when
from desktop.windows.review_rows import Item, Made, ProposalRows, ProposalTable, reasons_of
from desktop.windows.review_words import op_text, reason_code_text

# The strings here belong to the review window's translation context (they were written there).
translate = QCoreApplication.translate

ANY = "*"  # the filters' "everything" entry


def title_of(item: Item) -> str:
    """Who proposes what, in a sentence."""
    who = (
        item["agent"]
        if item["verified"]
        else translate("ReviewWindow", "{} (unverified)").format(item["agent"])
    )
    op = item["op"]
    if op == "identity":
        return translate("ReviewWindow", "{} proposes a new version of {}").format(
            who, item["target_id"]
        )
    target = memory_named(item)
    if op == "add":
        return translate("ReviewWindow", "{} proposes a new memory").format(who)
    sentences = {
        "update": translate("ReviewWindow", "{} proposes to update memory {}"),
        "supersede": translate("ReviewWindow", "{} proposes to supersede memory {}"),
        "forget": translate("ReviewWindow", "{} proposes to forget memory {}"),
        "feedback wrong": translate("ReviewWindow", "{} says memory {} is wrong"),
        "feedback stale": translate("ReviewWindow", "{} says memory {} is stale"),
    }
    said = sentences.get(f"{op} {item.get('verdict')}" if op == "feedback" else op)
    if said is not None:
        return said.format(who, target)
    return translate("ReviewWindow", "{} proposes to {} memory {}").format(who, op_text(op), target)


def memory_named(item: Item) -> str:
    """The memory a proposal is about, by its first words and then its id (until 2026-12-02 by
    its id alone); by its id when it can no longer be read."""
    memory = item.get("target") or {}
    return words_and_id(str(item["target_id"]), memory.get("summary"), memory.get("content"))


def why_of(item: Item, action: str | None) -> str:
    """Why the proposal waits, what the scanner found, the agent's note, an earlier rejection,
    and what adopting does (`action`: what the person chose for feedback)."""
    lines = [translate("ReviewWindow", "Waits because: {}").format(reasons_of(item))]
    if item["flags"]:
        lines.append(
            translate("ReviewWindow", "⚑ Flagged by the scanner: {}").format(
                ", ".join(f"{f['field']} {f['family']}:{f['rule']}" for f in item["flags"])
            )
        )
    if item.get("note"):
        lines.append(translate("ReviewWindow", "The agent's note: {}").format(item["note"]))
    if item.get("rejected_before"):
        lines.append(
            translate("ReviewWindow", "Rejected before, because: {}").format(
                item["rejected_before"]
            )
        )
    if item.get("expires_at"):  # the agent's time to live counts from the proposal
        lines.append(translate("ReviewWindow", "Expires: {}").format(when(item["expires_at"])))
    if action == "archive":
        lines.append(translate("ReviewWindow", "Adopting archives the memory."))
    elif action == "edit":
        lines.append(translate("ReviewWindow", "Adopting stores your edits as a new revision."))
    if item["op"] == "forget" or action == "forget":
        lines.append(translate("ReviewWindow", "Adopting forgets the memory."))
    return "\n".join(lines)


@dataclass(frozen=True)
class Filters:
    """What the filters keep: one agent's proposals, one kind's, one reason code's (None: any).
    The store applies them to the whole queue, not to the rows listed."""

    agent: str | None = None
    kind: str | None = None
    reason: str | None = None

    def narrow(self) -> bool:
        return any(v is not None for v in (self.agent, self.kind, self.reason))


class ProposalList(QWidget):
    """Filters over the proposals, the table of the ones shown, and the bulk buttons. The
    window connects the table's signals and the filters' `activated` to its own slots."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.agent_filter = self._combo(
            "agent_filter", translate("ReviewWindow", "Show proposals of one agent")
        )
        self.kind_filter = self._combo(
            "kind_filter", translate("ReviewWindow", "Show proposals of one kind")
        )
        self.reason_filter = self._combo(
            "reason_filter", translate("ReviewWindow", "Show proposals waiting for one reason")
        )
        self.count_label = named(plain_label(), "count")
        filters = QHBoxLayout()
        for label, combo in (
            (translate("ReviewWindow", "Agent:"), self.agent_filter),
            (translate("ReviewWindow", "Kind:"), self.kind_filter),
            (translate("ReviewWindow", "Why:"), self.reason_filter),
        ):
            filters.addWidget(plain_label(label))
            filters.addWidget(combo)
        filters.addStretch(1)
        filters.addWidget(self.count_label)

        # A model and its view, not a table of 7,000 cell widgets: filling those for 1,000 rows
        # held the GUI thread 200-450 ms (until 2026-12-01).
        self.rows = ProposalRows(
            [
                translate("ReviewWindow", "Agent"),
                translate("ReviewWindow", "Proposal"),
                translate("ReviewWindow", "Scope"),
                translate("ReviewWindow", "Hits"),
                translate("ReviewWindow", "First seen"),
                translate("ReviewWindow", "Last seen"),
                translate("ReviewWindow", "Why it waits"),
            ],
            self,
        )
        self.table = named(ProposalTable(self.rows), "queue")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        # The first six columns fit their contents once per fill: in ResizeToContents mode
        # every cell set re-measured its whole column, and a fill of 1000 rows took a minute.
        self.table.horizontalHeader().setSectionResizeMode(6, QHeaderView.ResizeMode.Stretch)
        self.table.setToolTip(
            translate(
                "ReviewWindow",
                "Up/Down to move, A to adopt, E to edit, R to reject; Shift or Ctrl to select many",
            )
        )
        self.adopt_selected = named(
            QPushButton(translate("ReviewWindow", "Adopt &selected")), "adopt_selected"
        )
        self.reject_selected = named(
            QPushButton(translate("ReviewWindow", "Reject se&lected")), "reject_selected"
        )
        bulk = QHBoxLayout()
        bulk.addStretch(1)
        bulk.addWidget(self.adopt_selected)
        bulk.addWidget(self.reject_selected)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(filters)
        layout.addWidget(self.table)
        layout.addLayout(bulk)

    def _combo(self, name: str, tip: str) -> QComboBox:
        combo = named(QComboBox(), name, tip)
        combo.addItem(translate("ReviewWindow", "All"), ANY)
        return combo

    def filters(self) -> tuple[QComboBox, QComboBox, QComboBox]:
        return self.agent_filter, self.kind_filter, self.reason_filter

    # -- filling ----------------------------------------------------------------------------

    def chosen(self) -> Filters:
        """What the filters keep."""

        def value(combo: QComboBox) -> str | None:
            data = combo.currentData()
            return None if data in (ANY, None) else str(data)

        return Filters(value(self.agent_filter), value(self.kind_filter), value(self.reason_filter))

    def show_chosen(self, filters: Filters) -> None:
        """Show `filters` as chosen (the rows were read for them: a load for another choice
        failed)."""
        for combo, value in (
            (self.agent_filter, filters.agent),
            (self.kind_filter, filters.kind),
            (self.reason_filter, filters.reason),
        ):
            combo.setCurrentIndex(max(0, combo.findData(ANY if value is None else value)))

    def fill_filters(
        self, agents: tuple[str, ...], kinds: tuple[str, ...], reasons: tuple[str, ...]
    ) -> None:
        """Offer every agent, kind and reason code of the whole queue (listed or not), keeping
        each filter's choice."""
        for combo, offered, shown in (
            (self.agent_filter, agents, str),
            (self.kind_filter, kinds, op_text),  # an identity proposal's kind is its operation
            (self.reason_filter, reasons, reason_code_text),
        ):
            values = list(offered)
            chosen = combo.currentData()
            if chosen != ANY and chosen not in values:
                values.append(chosen)  # keep the person's filter even when it matches nothing
            combo.blockSignals(True)
            while combo.count() > 1:
                combo.removeItem(1)
            for value in values:
                combo.addItem(shown(value), value)
            combo.setCurrentIndex(max(0, combo.findData(chosen)))
            combo.blockSignals(False)

    def fill(
        self,
        items: list[Item],
        current_id: str | None,
        *,
        waiting: int,
        matching: int | None = None,
        made: Made | None = None,
    ) -> tuple[list[Item], int]:
        """Show the rows of `items` (the listed ones of the `waiting` proposals; of the
        `matching` ones the filters keep, if any filter is chosen - the store applied them),
        keeping the selection and the current proposal's row; no table signal fires meanwhile.
        Only the rows that differ change: a decided proposal's row goes and the rest stay as
        they are (until 2026-12-01 each decision rebuilt all 1,000 rows twice, a quarter-second
        freeze). `made`: rows the load made off the GUI thread. Returns the proposals shown
        and the current one's row (-1 when it is not shown)."""
        shown = items
        self.table.blockSignals(True)
        first = self.rows.rowCount() == 0
        self.rows.fill(shown, made)
        current_row = next((r for r, i in enumerate(shown) if i["id"] == current_id), -1)
        if current_row >= 0 and self.table.currentRow() != current_row:
            self.table.setCurrentCell(current_row, 0)
        if current_row >= 0:
            self.table.selectionModel().select(
                self.rows.index(current_row, 0),
                QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
            )
        self.table.blockSignals(False)
        if first and shown:
            # Once, when rows first come: columns that jump while the person reads are no
            # help. They stay where the person drags them.
            for col in range(6):
                self.table.resizeColumnToContents(col)
        self.count_label.setText(self._count(len(shown), waiting, matching))
        return shown, current_row

    @staticmethod
    def _count(listed: int, waiting: int, matching: int | None) -> str:
        count = translate("ReviewWindow", "{} of {} waiting").format(listed, waiting)
        if matching is not None and matching > listed:
            # Until 2026-12-01 the kind and reason filters looked only inside the listed ones:
            # "0 of 5000 waiting" for a kind whose proposals all lay past them.
            count += translate(
                "ReviewWindow", " (the {} most seen of the {} that match are listed)"
            ).format(listed, matching)
        elif matching is None and waiting > listed:
            count += translate("ReviewWindow", " (the {} most seen are listed)").format(listed)
        return count

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.LanguageChange:
            self.rows.forget_texts()
        super().changeEvent(event)

    # -- reading ----------------------------------------------------------------------------

    def id_at(self, row: int) -> str | None:
        return self.rows.id_at(row)

    def selected_ids(self) -> list[str]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [sid for sid in map(self.rows.id_at, rows) if sid is not None]

    def selection_changed(self) -> None:
        """The bulk buttons need two or more rows selected."""
        many = len(self.selected_ids())
        self.adopt_selected.setEnabled(many > 1)
        self.reject_selected.setEnabled(many > 1)
