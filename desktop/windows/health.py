"""The Health window: the health snapshot a person sees (docs/health.md), live. Warnings lead in
a red banner; the headline counters, the breakdowns and each agent's activity follow. It fetches
again when the store or the counters change - at most once a second (a snapshot counts the whole
store), one fetch in flight and one queued."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QDateTime, QLocale, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.changes import Topic
from desktop.desk import ToolWindow
from desktop.empty_note import EmptyNote
from desktop.widgets import named, plain_label, plain_tip, when

if TYPE_CHECKING:
    from desktop.desk import Desk

BANNER_STYLE = (
    "background: #b00020; color: white; font-weight: bold; padding: 8px; border-radius: 4px;"
)
# The snapshot's sections shown as breakdowns (the rest are headline figures or the agents).
KEY_ROLE = Qt.ItemDataRole.UserRole  # a breakdown row's key in the health snapshot
BREAKDOWNS = (
    "memories",
    "refusals",
    "held_for_review",
    "review",
    "connections",
    "background_failures",
)


def _banner() -> QLabel:
    """The red banner the warnings lead in (hidden while there are none)."""
    banner = plain_label()
    banner.setObjectName("warningsBanner")
    banner.setWordWrap(True)
    banner.setStyleSheet(BANNER_STYLE)
    banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    banner.hide()
    return banner


class HealthWindow(ToolWindow):
    name = "health"
    default_size = (820, 640)
    min_interval_ms = 1000  # a snapshot counts the whole store (0.1 s at 100k memories)

    def __init__(self, desk: Desk) -> None:
        super().__init__(desk)
        self.setWindowTitle(self.tr("Cairn — Health"))
        self.snapshot: dict[str, Any] | None = None
        self.fetches = 0  # snapshots received (tests count them)

        self.banner = _banner()

        self.figures: dict[str, QLabel] = {}
        form = QFormLayout()
        for key, label in (
            ("total", self.tr("Memories")),
            ("review", self.tr("Waiting for review")),
            ("capture", self.tr("Capture")),
            ("connections", self.tr("Agents connected")),
            ("last_write", self.tr("Last write")),
            ("last_search", self.tr("Last search")),
            ("expired", self.tr("Expired, awaiting purge")),
            ("database", self.tr("Database size")),
            ("audit", self.tr("Audit events")),
        ):
            value = plain_label("—")
            value.setObjectName(f"figure_{key}")
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.figures[key] = value
            form.addRow(label, value)

        self.breakdown = QTreeWidget()
        self.breakdown.setObjectName("breakdown")
        self.breakdown.setHeaderLabels([self.tr("Counter"), self.tr("Value")])
        self.breakdown.setToolTip(self.tr("Counts by scope, kind, status and tier; refusals"))

        self.agents = QTableWidget(0, 6)
        self.agents.setObjectName("agentActivity")
        self.agents.setHorizontalHeaderLabels(
            [
                self.tr("Agent"),
                self.tr("Requests"),
                self.tr("Writes"),
                self.tr("Refusals"),
                self.tr("Last seen"),
                self.tr("Verified"),
            ]
        )
        self.agents.setToolTip(self.tr("Each agent's activity since Cairn started"))
        self.agents.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.agents.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.agents.verticalHeader().hide()
        self.agents.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        EmptyNote(
            self.agents,
            self.tr(
                "No agent has connected since Cairn started. Each agent that connects gets a row "
                "here."
            ),
        )

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addLayout(form)
        top_layout.addWidget(self.breakdown)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(plain_label(self.tr("Agents since Cairn started")))
        lower_layout.addWidget(self.agents)
        splitter = named(QSplitter(Qt.Orientation.Vertical), "countersAndAgents")
        splitter.addWidget(top)
        splitter.addWidget(lower)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(splitter)
        QWidget.setTabOrder(self.breakdown, self.agents)

        desk.live.on(
            self,
            {Topic.MEMORIES, Topic.REVIEW, Topic.HEALTH, Topic.AGENTS},
            self.refresh_if_shown,
        )

    # -- fetching (coalesced by ToolWindow.fetch) ----------------------------------------------

    def refresh(self) -> None:
        self.fetch(self.desk.cairn.health.snapshot, self.desk.person, on_done=self._landed)

    def _landed(self, snapshot: dict[str, Any]) -> None:
        self.fetches += 1
        self.snapshot = snapshot
        self._show(snapshot)

    # -- showing -------------------------------------------------------------------------------

    def _show(self, s: dict[str, Any]) -> None:
        warnings: dict[str, str] = s.get("warnings", {})
        if warnings:
            lines = [self.tr("%n warning(s):", "", len(warnings))]
            lines += [f"• {message}" for _key, message in sorted(warnings.items())]
            self.banner.setText("\n".join(lines))
            self.banner.setToolTip(", ".join(sorted(warnings)))
            self.banner.show()
        else:
            self.banner.hide()
        locale = QLocale()
        review = s.get("review", {})
        connections = s.get("connections", {})
        oldest = review.get("oldest_age_s")
        pending = locale.toString(int(review.get("pending", 0)))
        waiting = (
            self.tr("{} (oldest waiting {})").format(pending, self.duration(int(oldest)))
            if oldest is not None
            else pending
        )
        if review.get("evicted"):
            waiting += "; " + self.tr("{} dropped when the queue was full").format(
                review["evicted"]
            )
        figures = {
            "total": locale.toString(int(s.get("total", 0))),
            "review": waiting,
            "capture": self.tr("Paused") if s.get("capture_paused") else self.tr("Running"),
            "connections": self.tr("{} now, {} since start").format(
                connections.get("now", 0), connections.get("total", 0)
            ),
            "last_write": when(s.get("last_write")) or self.tr("never"),
            "last_search": when(s.get("last_search")) or self.tr("never"),
            "expired": str(s.get("expired_awaiting_purge", 0)),
            "database": self._database(s, locale),
            "audit": locale.toString(int(s.get("audit_events", 0))),
        }
        for key, text in figures.items():
            self.figures[key].setText(text)
        self._show_breakdown(s)
        self._show_agents(s.get("agents", {}))

    def _database(self, s: dict[str, Any], locale: QLocale) -> str:
        text = self.tr("{} (log {})").format(
            locale.formattedDataSize(int(s.get("database_bytes", 0))),
            locale.formattedDataSize(int(s.get("wal_bytes", 0))),
        )
        aside = s.get("set_aside") or {}
        if aside.get("files"):
            text += "\n" + self.tr(
                "%n file(s) kept by restores: {} (remove them when no longer needed)",
                "",
                int(aside["files"]),
            ).format(locale.formattedDataSize(int(aside.get("bytes", 0))))
            self.figures["database"].setToolTip(plain_tip("\n".join(aside.get("paths", []))))
        else:
            self.figures["database"].setToolTip("")
        return text

    def _labels(self) -> dict[str, str]:
        """Counters' names as the person reads them; names that are data (a kind, an agent, a
        rule) are not here and stay as they are."""
        return {
            "memories": self.tr("memories"),
            "refusals": self.tr("refusals"),
            "held_for_review": self.tr("held for review"),
            "review": self.tr("review queue"),
            "connections": self.tr("connections"),
            "background_failures": self.tr("background failures"),
            "scope": self.tr("by scope"),
            "kind": self.tr("by kind"),
            "status": self.tr("by status"),
            "tier": self.tr("by author tier"),
            "pending": self.tr("waiting"),
            "evicted": self.tr("dropped when the queue was full"),
            "oldest_age_s": self.tr("oldest waiting"),
            "now": self.tr("open now"),
            "total": self.tr("since start"),
            "refused_peer_uid": self.tr("refused: another user"),
            "refused_too_many": self.tr("refused: too many connections"),
            "refused_hello": self.tr("refused at hello"),
            "bad_frames": self.tr("malformed frames"),
            "push_overflows": self.tr("pushes dropped (reader too slow)"),
            "stalled_readers": self.tr("cut: answers not read"),
            "count": self.tr("times"),
            "last_error": self.tr("last error"),
            "at": self.tr("last failed"),
        }

    def duration(self, seconds: int) -> str:
        """A duration as a person reads it: "42 s", "2 min", "3 h 5 min", "2 d 4 h" (cut down to
        its two largest units; the exact seconds go in a tooltip)."""
        if seconds < 60:
            return self.tr("{} s").format(seconds)
        minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
        if seconds < 3600:
            return self.tr("{} min").format(minutes)
        if seconds < 86400:
            if minutes % 60:
                return self.tr("{} h {} min").format(hours, minutes % 60)
            return self.tr("{} h").format(hours)
        if hours % 24:
            return self.tr("{} d {} h").format(days, hours % 24)
        return self.tr("{} d").format(days)

    def value_text(self, key: str, value: Any) -> tuple[str, str]:
        """A counter's value as the breakdown shows it and the exact figure for its tooltip
        ('' when the shown one is exact): durations (`*_s`) in s, min, h or d, sizes (`*_bytes`)
        in KiB, MiB or GiB, a time (`at`, ms since the epoch) as the windows show times, counts
        with the locale's thousands separator."""
        locale = QLocale()
        if value is None:
            return "-", ""
        if isinstance(value, bool) or not isinstance(value, int):
            return str(value), ""
        if key.endswith("_s"):
            return self.duration(value), self.tr("{} second(s)", "", value).format(
                locale.toString(value)
            )
        if key.endswith("_bytes"):
            return locale.formattedDataSize(value), self.tr("{} byte(s)", "", value).format(
                locale.toString(value)
            )
        if key == "at":
            moment = QDateTime.fromMSecsSinceEpoch(value)
            return when(value), moment.toString("yyyy-MM-dd HH:mm:ss")
        return locale.toString(value), ""

    def _show_breakdown(self, s: dict[str, Any]) -> None:
        tops = [self.breakdown.topLevelItem(i) for i in range(self.breakdown.topLevelItemCount())]
        # by key: a row's text is a label, in the person's language
        expanded = {t.data(0, KEY_ROLE) for t in tops if t is not None and t.isExpanded()}
        self.breakdown.clear()
        labels = self._labels()  # once per fill, not once per row

        def label(key: str) -> str:
            return labels.get(key, key)

        for section in BREAKDOWNS:
            value = s.get(section)
            if not value:
                continue
            item = QTreeWidgetItem([label(section), ""])
            item.setData(0, KEY_ROLE, section)
            _fill(item, value, label, self.value_text, (section,))
            self.breakdown.addTopLevelItem(item)
            item.setExpanded(section in expanded or not tops)  # all open the first time
        self.breakdown.resizeColumnToContents(0)

    def _show_agents(self, agents: dict[str, dict[str, Any]]) -> None:
        self.agents.setRowCount(len(agents))
        for row, (name, a) in enumerate(sorted(agents.items())):
            cells = [
                name,
                str(a.get("requests", 0)),
                str(a.get("writes", 0)),
                str(a.get("refusals", 0)),
                when(a.get("last_seen")),
                self.tr("yes") if a.get("verified") else self.tr("no"),
            ]
            for column, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if 1 <= column <= 3:
                    cell.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.agents.setItem(row, column, cell)

    def agent_row(self, name: str) -> dict[str, str] | None:
        """The cells of one agent's row, by header (what a person reads; tests use it)."""
        table = self.agents
        headers = [table.horizontalHeaderItem(c) for c in range(table.columnCount())]
        for row in range(table.rowCount()):
            cells = [table.item(row, c) for c in range(table.columnCount())]
            if cells[0] is not None and cells[0].text() == name:
                return {
                    h.text(): cell.text() if cell is not None else ""
                    for h, cell in zip(headers, cells, strict=True)
                    if h is not None
                }
        return None


# Counters whose keys are names people chose, not Cairn's words: a kind may be called `at` or
# `deploy_s`, and it must show as it is called, its count as a count - not as "last failed" at a
# moment of 1970, or "3 s", as Cairn's own `at` and `*_s` read (until 2026-12-02).
NAMED_BY_PEOPLE = {("memories", "kind")}


def _fill(
    parent: QTreeWidgetItem,
    value: Any,
    label: Callable[[str], str],
    shown: Callable[[str, Any], tuple[str, str]],
    path: tuple[str, ...] = (),
) -> None:
    """Nested counters as tree rows: a dict becomes children (named in the person's language
    where the name is Cairn's, the key kept as data), anything else the value column, as
    `shown` words it for its key (a duration, a size), the exact figure in its tooltip. `path`
    is the keys down to `parent`, the section's first."""
    if isinstance(value, dict):
        named = str if path in NAMED_BY_PEOPLE else label  # people's names shown as they are
        for key, inner in sorted(value.items(), key=lambda item: named(str(item[0]))):
            child = QTreeWidgetItem([named(str(key)), ""])
            child.setData(0, KEY_ROLE, str(key))
            parent.addChild(child)
            _fill(child, inner, label, shown, (*path, str(key)))
    else:
        key = "" if path[:-1] in NAMED_BY_PEOPLE else str(parent.data(0, KEY_ROLE))
        text, exact = shown(key, value)
        parent.setText(1, text)
        parent.setToolTip(1, plain_tip(exact))
