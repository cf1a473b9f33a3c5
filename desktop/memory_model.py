"""The memories table's model: rows arrive a page at a time through the worker (never on the GUI
thread), so a store of 100k memories opens as fast as one of ten. A listing pages with the
service's cursor; a search shows its ranked hits. Live changes update rows in place, insert new
memories at the top and drop those that no longer match, so the selection survives."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from core.errors import NotFound
from core.model import Caller, ListFilter, Memory, Page, Status
from core.search import Horizon, SearchRequest
from desktop.widgets import plain_tip, when

if TYPE_CHECKING:
    from desktop.desk import Desk

Index = QModelIndex | QPersistentModelIndex
PAGE_SIZE = 200
SEARCH_LIMIT = 100  # a search shows its best this many (the count says more may match)
# How many new memories a live refresh takes in at the top before it starts the listing again.
NEWER_LIMIT = 500


def one_line(text: str, width: int = 140) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def words_and_id(memory_id: str, summary: str | None, content: str | None) -> str:
    """A memory named in a sentence: its first words (its summary, else its content), then its
    id - `“the port is 8080” (m_...)`; its id alone when there are no words to show."""
    words = one_line(summary or content or "", 80)
    return f"“{words}” ({memory_id})" if words else memory_id


@dataclass(frozen=True)
class Filters:
    """What the window asks for. `query` empty: a listing (newest first); else a search."""

    query: str = ""
    listing: ListFilter = field(default_factory=ListFilter)

    def matches(self, m: Memory) -> bool:
        """Whether a memory belongs in the table (for live updates, and the tags, which a
        search does not narrow by)."""
        f = self.listing
        return (
            (not f.statuses or m.status in f.statuses)
            and (not f.scopes or m.scope in f.scopes)
            and (not f.kinds or m.kind in f.kinds)
            and (not f.tiers or m.tier in f.tiers)
            and (not f.agents or m.agent in f.agents)
            and (not f.workspace_ids or m.workspace_id in f.workspace_ids)
            and all(t in m.tags for t in f.tags)
            and (f.include_expired or not m.expired)
        )

    def search_request(self) -> SearchRequest:
        f = self.listing
        return SearchRequest(
            query=self.query,
            limit=SEARCH_LIMIT,
            horizon=Horizon.ALL,
            include_history=Status.SUPERSEDED in f.statuses,
            include_expired=f.include_expired,
            kinds=f.kinds,
            scopes=f.scopes,
            tiers=f.tiers,
            # inside the search: a filter applied to its best 100 hits could leave none
            statuses=f.statuses,
            agents=f.agents,
            workspace_ids=f.workspace_ids,
        )


@dataclass(frozen=True)
class Refreshed:
    """What a live refresh found: memories newer than the top row, and the changed ones (None
    for a memory that is gone)."""

    newer: tuple[Memory, ...]
    overflow: bool  # more new memories than NEWER_LIMIT: start the listing again
    changed: dict[str, Memory | None]


class MemoryTableModel(QAbstractTableModel):
    """Memories as rows, fetched lazily. `loaded` fires after each page or refresh lands."""

    loaded = Signal()

    COLUMNS = ("content", "kind", "scope", "status", "tier", "agent", "importance", "updated")

    def __init__(self, desk: Desk, owner: QWidget, *, page_size: int = PAGE_SIZE) -> None:
        super().__init__(owner)
        self._desk = desk
        self._owner = owner
        self.page_size = page_size
        self._rows: list[Memory] = []
        self._filters = Filters()
        self._cursor: str | None = None
        self._more = False
        self._loading = False
        self._generation = 0
        self.pages = 0  # pages (or searches) landed since the last reset
        self.searching = False
        # The search returned its best `SEARCH_LIMIT`: more memories may match.
        self.more_matched = False
        self._refreshing = False
        self._pending_ids: set[str] | None = None  # changes gathered for the next refresh
        # Changes are gathered this long before a refresh: each refresh repaints the table.
        self.gather_ms = 150
        self.gather = QTimer(self)
        self.gather.setSingleShot(True)
        self.gather.timeout.connect(self._refresh_gathered)
        self._headers = (
            self.tr("Memory"),
            self.tr("Kind"),
            self.tr("Scope"),
            self.tr("Status"),
            self.tr("Tier"),
            self.tr("Agent"),
            self.tr("Importance"),
            self.tr("Updated"),
        )

    # -- what the view reads -------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 - Qt's API
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 - Qt's API
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(  # noqa: N802 - Qt's API
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self._headers[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        m = self._rows[index.row()]
        column = self.COLUMNS[index.column()]
        value: Any = None
        if role == Qt.ItemDataRole.DisplayRole:
            value = self._display(m, column)
        elif role == Qt.ItemDataRole.ToolTipRole and column == "content":
            value = one_line(m.content, 600)
            if m.flags:
                value = self.tr("Flagged: {}").format(", ".join(m.flags)) + "\n" + value
            value = plain_tip(value)
        elif role == Qt.ItemDataRole.ForegroundRole and (
            m.status is not Status.ACTIVE or m.expired
        ):
            value = QColor(Qt.GlobalColor.gray)
        elif role == Qt.ItemDataRole.BackgroundRole and m.flags:
            value = QColor(255, 243, 205)  # flagged: a pale amber, like a warning
        elif role == Qt.ItemDataRole.UserRole:
            value = m.id
        return value

    def _display(self, m: Memory, column: str) -> str:
        if column == "content":
            text = one_line(m.summary or m.content)
            marks = ("📌 " if m.pinned else "") + ("⚠ " if m.flags else "")
            return marks + text
        if column == "importance":
            return str(m.importance)
        if column == "updated":
            return when(m.updated_at)
        if column == "status" and m.expired:  # shown on request until the purge removes it
            return self.tr("{}, expired").format(m.status.value)
        value = getattr(m, column)
        return "" if value is None else str(value)

    def memory_at(self, row: int) -> Memory | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_of(self, memory_id: str) -> int | None:
        for i, m in enumerate(self._rows):
            if m.id == memory_id:
                return i
        return None

    @property
    def filters(self) -> Filters:
        return self._filters

    @property
    def loading(self) -> bool:
        return self._loading

    # -- loading -------------------------------------------------------------------------------

    def show(self, filters: Filters) -> None:
        """Start again with these filters: a fresh listing, or a search."""
        self._generation += 1
        self.beginResetModel()
        self._rows = []
        self._filters = filters
        self._cursor = None
        self._more = True
        self._loading = False
        self.pages = 0
        self.searching = bool(filters.query.strip())
        self.more_matched = False
        self._pending_ids = None
        self._refreshing = False
        self.gather.stop()
        self.endResetModel()
        self.fetchMore(QModelIndex())

    def canFetchMore(self, parent: Index) -> bool:  # noqa: N802 - Qt's API
        return not parent.isValid() and self._more and not self._loading

    def fetchMore(self, parent: Index) -> None:  # noqa: N802 - Qt's API
        if not self.canFetchMore(parent):
            return
        self._loading = True
        generation = self._generation
        person = self._desk.person
        if self.searching:
            self._desk.call(
                _search,
                self._desk,
                person,
                self._filters,
                on_done=lambda hits: self._landed(generation, hits.rows, None, more=hits.more),
                on_error=lambda e: self._failed(generation, e),
                owner=self._owner,
            )
        else:
            self._desk.call(
                _page,
                self._desk,
                person,
                self._filters.listing,
                self.page_size,
                self._cursor,
                on_done=lambda page: self._landed(generation, list(page.items), page),
                on_error=lambda e: self._failed(generation, e),
                owner=self._owner,
            )

    def _landed(
        self, generation: int, rows: list[Memory], page: Page | None, *, more: bool = False
    ) -> None:
        if generation != self._generation:
            return  # the filters changed meanwhile
        self._loading = False
        self.more_matched = more
        known = {m.id for m in self._rows}
        rows = [m for m in rows if m.id not in known]  # a live insert may have shown it
        self._cursor = page.next_cursor if page is not None else None
        self._more = self._cursor is not None
        self.pages += 1
        if rows:
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
            self._rows.extend(rows)
            self.endInsertRows()
        self.loaded.emit()

    def _failed(self, generation: int, error: BaseException) -> None:
        if generation != self._generation:
            return
        self._loading = False
        self._more = False
        self._desk.presenter.show(error)
        self.loaded.emit()

    # -- live changes --------------------------------------------------------------------------

    def changed(self, memory_ids: Iterable[str]) -> None:
        """Memories changed in the store: bring the rows up to date - after `gather_ms`, with
        every change that came meanwhile (one refresh in flight; changes that come while it runs
        wait for the next)."""
        self._pending_ids = (self._pending_ids or set()) | set(memory_ids)
        if not self._refreshing and not self.gather.isActive():
            self.gather.start(self.gather_ms)

    def _refresh_gathered(self) -> None:
        pending, self._pending_ids = self._pending_ids, None
        if pending is not None:
            self._start_refresh(pending)

    def _start_refresh(self, ids: set[str]) -> None:
        """Bring the rows of `ids`, and any newer memories, up to date (one worker call)."""
        if self.searching:
            # A search's ranking may change with any write: run it again (its hits are few).
            self._refreshing = True
            generation = self._generation
            self._desk.call(
                _search,
                self._desk,
                self._desk.person,
                self._filters,
                on_done=lambda hits: self._replace(generation, hits),
                on_error=lambda e: self._refresh_failed(generation, e),
                owner=self._owner,
            )
            return
        if len(ids) > NEWER_LIMIT:  # a bulk change (an import, a merge): start again
            self.show(self._filters)
            return
        self._refreshing = True
        generation = self._generation
        if self._rows:
            top: int | None = self._rows[0].seq
        else:  # empty: everything is newer, unless the first page is still on its way
            top = None if self._loading else 0
        self._desk.call(
            _refresh,
            self._desk,
            self._desk.person,
            self._filters.listing,
            top,
            sorted(ids),
            on_done=lambda r: self._refreshed(generation, r),
            on_error=lambda e: self._refresh_failed(generation, e),
            owner=self._owner,
        )

    def _next_refresh(self) -> None:
        self._refreshing = False
        if self._pending_ids is not None and not self.gather.isActive():
            self.gather.start(self.gather_ms)

    def _refresh_failed(self, generation: int, error: BaseException) -> None:
        if generation == self._generation:
            self._desk.presenter.show(error)
            self._next_refresh()

    def _refreshed(self, generation: int, found: Refreshed) -> None:
        if generation != self._generation:
            return
        if found.overflow:
            self.show(self._filters)
            return
        for memory_id, memory in found.changed.items():
            row = self.row_of(memory_id)
            if row is None:
                if memory is not None and self._filters.matches(memory):
                    self._insert_in_place(memory)  # e.g. restored while "archived" is shown
                continue
            if memory is None or not self._filters.matches(memory):
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._rows[row]
                self.endRemoveRows()
            else:
                self._rows[row] = memory
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))
        known = {m.id for m in self._rows}
        newer = [m for m in found.newer if m.id not in known]
        if newer:
            self.beginInsertRows(QModelIndex(), 0, len(newer) - 1)
            self._rows[0:0] = newer
            self.endInsertRows()
        self.loaded.emit()
        self._next_refresh()

    def _insert_in_place(self, memory: Memory) -> None:
        """Insert a memory where its creation order puts it, if that is inside what is loaded
        (further down, a later page brings it)."""
        at = next((i for i, m in enumerate(self._rows) if m.seq < memory.seq), len(self._rows))
        if at == len(self._rows) and self._more:
            return
        self.beginInsertRows(QModelIndex(), at, at)
        self._rows.insert(at, memory)
        self.endInsertRows()

    def _replace(self, generation: int, hits: Hits) -> None:
        """A search ran again: show its hits. Rows are replaced one by one (not reset), so a
        selected memory that is still a hit stays selected."""
        if generation != self._generation:
            return
        rows, self.more_matched = hits.rows, hits.more
        wanted = {m.id for m in rows}
        for row in range(len(self._rows) - 1, -1, -1):  # drop what left, from the bottom
            if self._rows[row].id not in wanted:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._rows[row]
                self.endRemoveRows()
        for target, memory in enumerate(rows):
            current = self.row_of(memory.id)
            if current is None:
                self.beginInsertRows(QModelIndex(), target, target)
                self._rows.insert(target, memory)
                self.endInsertRows()
                continue
            if current != target:
                self.beginMoveRows(QModelIndex(), current, current, QModelIndex(), target)
                self._rows.insert(target, self._rows.pop(current))
                self.endMoveRows()
            self._rows[target] = memory
            self.dataChanged.emit(self.index(target, 0), self.index(target, len(self.COLUMNS) - 1))
        self.loaded.emit()
        self._next_refresh()


# -- the service calls (each runs on the worker's threads) -------------------------------------


def _page(desk: Desk, person: Caller, flt: ListFilter, limit: int, cursor: str | None) -> Page:
    return desk.cairn.memories.list(person, flt, limit=limit, cursor=cursor)


@dataclass(frozen=True)
class Hits:
    """A search's memories, best first, and whether more may match than it returned."""

    rows: list[Memory]
    more: bool  # it returned as many as it may: more may match (the engine counts no further)


def _search(desk: Desk, person: Caller, filters: Filters) -> Hits:
    # A person looking is not a recall: `count_recall=False` keeps use counts for agents' use.
    result = desk.cairn.search.search(person, filters.search_request(), count_recall=False)
    rows = [h.memory for h in result.hits if filters.matches(h.memory)]
    full = len(result.hits) >= SEARCH_LIMIT or result.matched > len(result.hits)
    return Hits(rows, more=full)


def _refresh(
    desk: Desk, person: Caller, flt: ListFilter, top_seq: int | None, ids: list[str]
) -> Refreshed:
    memories = desk.cairn.memories
    newer: list[Memory] = []
    overflow = False
    if top_seq is not None:
        cursor: str | None = None
        while True:
            page = memories.list(person, flt, limit=min(NEWER_LIMIT, 200), cursor=cursor)
            fresh = [m for m in page.items if m.seq > top_seq]
            newer.extend(fresh)
            if len(fresh) < len(page.items) or page.next_cursor is None:
                break
            if len(newer) >= NEWER_LIMIT:
                overflow = True
                break
            cursor = page.next_cursor
    changed: dict[str, Memory | None] = {}
    for memory_id in ids:
        try:
            changed[memory_id] = memories.get(person, memory_id).memory
        except NotFound:
            changed[memory_id] = None
    return Refreshed(tuple(newer), overflow, changed)
