"""The review list's rows: what one proposal's row shows (made off the GUI thread with the load
that read it), the model the list's view reads them from, and that view."""

from __future__ import annotations

import difflib
import heapq
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QCoreApplication,
    QDate,
    QItemSelection,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QStyleOptionViewItem, QTableView, QWidget

from desktop.widgets import when
from desktop.windows.review_words import op_text, reasons_text

# The strings here belong to the review window's translation context (they were written there).
translate = QCoreApplication.translate

Item = dict[str, Any]
FLAGGED = QColor("#fde3e1")
ID_ROLE = Qt.ItemDataRole.UserRole
Index = QModelIndex | QPersistentModelIndex
# The candidates for a column's widest text, by their width in the view's font, that are
# measured as the view measures a cell (its margins too): every text of 1,000 rows measured so
# took 90 ms of the GUI thread (`resizeColumnToContents`).
WIDEST = 3


def reasons_of(item: Item) -> str:
    """Why the proposal waits, in the person's language."""
    return reasons_text(item["reasons"])


def kind_of(item: Item) -> str:
    """The filterable kind: the memory kind, or the operation when there is none."""
    return str(item["kind"] or (item.get("target") or {}).get("kind") or item["op"])


@dataclass(frozen=True)
class Row:
    """What one row of the table shows."""

    id: str
    cells: tuple[str, ...]
    flags: str  # the scanner's findings, for the tooltip ("" when none)


def row_of(item: Item) -> Row:
    """What a proposal's row shows: its id, the cells' texts and the flags' tooltip, in the
    language and on the day it is made (times read "14:05" only today). Made on a worker
    thread too: Qt's translation and date formatting may run there."""
    flagged = bool(item["flags"])
    op = op_text(item["op"])
    what = op if item["op"] == kind_of(item) else f"{op} · {kind_of(item)}"
    cells = (
        ("⚑ " if flagged else "") + item["agent"],
        what,
        item["scope"] or (item.get("target") or {}).get("scope") or "",
        str(item["hits"]),
        when(item["first_seen"]),
        when(item["last_seen"]),
        reasons_of(item),
    )
    tip = ", ".join(f"{f['family']}:{f['rule']}" for f in item["flags"]) if flagged else ""
    return Row(item["id"], cells, tip)


@dataclass(frozen=True)
class Made:
    """Rows made with a load, off the GUI thread, for the list's texts of `generation`: rows
    made before the language or the day changed are not used (the list makes its own)."""

    rows: Mapping[str, Row]
    generation: int


class ProposalRows(QAbstractTableModel):
    """The proposals listed, top to bottom. A row's texts are made once from the item it holds
    (by the load that read it, or when first shown): a fill makes none for proposals held as
    they were, and tells the view only about the rows that differ."""

    def __init__(self, headers: list[str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._headers = headers
        self._items: list[Item] = []
        self._rows: list[Row | None] = []  # None: not made yet (made when the view asks)
        self._day = QDate.currentDate()
        # Counts the changes of language and day: rows made for another count are not used.
        self.generation = 0
        self._flagged = QBrush(FLAGGED)

    # -- Qt's model interface -----------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 - Qt's name
        return 0 if parent.isValid() else len(self._items)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 - Qt's name
        return 0 if parent.isValid() else len(self._headers)

    def headerData(  # noqa: N802 - Qt's name
        self,
        section: int,
        orientation: Qt.Orientation,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self._headers[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.row(index.row())
        if role == Qt.ItemDataRole.DisplayRole:
            return row.cells[index.column()]
        if role == ID_ROLE:
            return row.id
        if row.flags and role == Qt.ItemDataRole.BackgroundRole:
            return self._flagged
        if row.flags and role == Qt.ItemDataRole.ToolTipRole:
            return translate("ReviewWindow", "Flagged by the scanner: {}").format(row.flags)
        return None

    # -- reading ------------------------------------------------------------------------------

    def row(self, r: int) -> Row:
        made = self._rows[r]
        if made is None:
            made = self._rows[r] = row_of(self._items[r])
        return made

    def item(self, r: int) -> Item:
        return self._items[r]

    def id_at(self, r: int) -> str | None:
        return str(self._items[r]["id"]) if 0 <= r < len(self._items) else None

    def widest(self, column: int, width: Any) -> list[int]:
        """The rows whose texts in `column` are the widest by `width` (a text's advance in the
        view's font), each text measured once."""
        texts: dict[str, int] = {}
        for r in range(len(self._items)):
            texts.setdefault(self.row(r).cells[column], r)
        top = heapq.nlargest(WIDEST, texts, key=width)
        return [texts[t] for t in top]

    # -- filling ------------------------------------------------------------------------------

    def fill(self, items: list[Item], made: Made | None = None) -> None:
        """Show `items`, in their order. A proposal held as it was keeps its row; one read
        again keeps it while it shows the same (else the view is told its cells changed); the
        rows of proposals that go, come or move are removed and inserted - no reset, so the
        selection and the scrolling stay where they were. The rows `made` are used when made in
        the language and on the day the rows show (their generation)."""
        if self._day != QDate.currentDate():
            self.forget_texts()
        rows = made.rows if made is not None and made.generation == self.generation else {}
        old_ids = [str(i["id"]) for i in self._items]
        new_ids = [str(i["id"]) for i in items]
        matcher = difflib.SequenceMatcher(None, old_ids, new_ids, autojunk=False)
        # from the last change to the first: the rows before each change keep their numbers
        for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
            if tag == "equal":
                self._follow(items, rows, i1, j1, i2 - i1)
                continue
            if i2 > i1:
                self.beginRemoveRows(QModelIndex(), i1, i2 - 1)
                del self._items[i1:i2], self._rows[i1:i2]
                self.endRemoveRows()
            if j2 > j1:
                self.beginInsertRows(QModelIndex(), i1, i1 + j2 - j1 - 1)
                self._items[i1:i1] = items[j1:j2]
                self._rows[i1:i1] = [rows.get(i) for i in new_ids[j1:j2]]
                self.endInsertRows()

    def _follow(self, items: list[Item], rows: Mapping[str, Row], at: int, j: int, n: int) -> None:
        """The rows `at`..`at + n` hold the same proposals as `items[j:j + n]`: take those read
        again, telling the view about the rows that now show something else."""
        for k in range(n):
            item = items[j + k]
            if item is self._items[at + k]:
                continue
            before = self._rows[at + k]
            self._items[at + k] = item
            after = self._rows[at + k] = rows.get(str(item["id"]))
            if before is not None and before != after:  # shown before: shown anew
                self.dataChanged.emit(
                    self.index(at + k, 0), self.index(at + k, self.columnCount() - 1)
                )

    def forget_texts(self) -> None:
        """Make every row's texts again when next shown (another language, another day)."""
        self._day = QDate.currentDate()
        self.generation += 1
        self._rows = [None] * len(self._items)
        if self._items:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self._items) - 1, self.columnCount() - 1)
            )


class ProposalTable(QTableView):
    """The list's view over `ProposalRows`, with the signals and calls of a `QTableWidget` the
    window uses (signals blocked while the list fills, as the widget's were). A column is fitted
    to its widest text alone, not by measuring every cell."""

    currentCellChanged = Signal(int, int, int, int)  # noqa: N815 - QTableWidget's name
    itemSelectionChanged = Signal()  # noqa: N815 - QTableWidget's name

    def __init__(self, rows: ProposalRows, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows = rows
        self.setModel(rows)

    def rowCount(self) -> int:  # noqa: N802 - QTableWidget's name
        return self.rows.rowCount()

    def currentRow(self) -> int:  # noqa: N802 - QTableWidget's name
        return self.currentIndex().row()

    def setCurrentCell(self, row: int, column: int) -> None:  # noqa: N802 - QTableWidget's name
        self.setCurrentIndex(self.rows.index(row, column))

    def currentChanged(self, current: Index, previous: Index) -> None:  # noqa: N802 - Qt's name
        super().currentChanged(current, previous)
        self.currentCellChanged.emit(
            current.row(), current.column(), previous.row(), previous.column()
        )

    def selectionChanged(  # noqa: N802 - Qt's name
        self, selected: QItemSelection, deselected: QItemSelection
    ) -> None:
        super().selectionChanged(selected, deselected)
        self.itemSelectionChanged.emit()

    def sizeHintForColumn(self, column: int) -> int:  # noqa: N802 - Qt's name
        """As wide as the cell of the column's widest text, as the view measures one."""
        if self.rows.rowCount() == 0:
            return -1
        self.ensurePolished()
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        metrics = self.fontMetrics()
        hint = 0
        for r in self.rows.widest(column, metrics.horizontalAdvance):
            index = self.rows.index(r, column)
            hint = max(hint, self.itemDelegateForIndex(index).sizeHint(option, index).width())
        return hint + 1 if self.showGrid() else hint
