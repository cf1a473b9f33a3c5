"""The identity window's right side: a document's versions (one read, two compared), the
versions agents proposed for it, and the viewer that shows either."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.identity import IdentityVersion
from core.validation import content_hash
from desktop.diff import diff_html, plain_html
from desktop.empty_note import EmptyNote
from desktop.widgets import named, plain_label, plain_tip, when

ID_ROLE = Qt.ItemDataRole.UserRole


class VersionsPane(QWidget):
    """Versions and proposals of the chosen document. Emits `chosen` when what is selected
    changes; the window connects the buttons (revert, export, adopt, reject) to its actions."""

    chosen = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history: list[IdentityVersion] = []  # newest first
        self._proposals: list[dict[str, Any]] = []
        # The proposal as the viewer last drew it: Adopt holds the store to that text.
        self._drawn: dict[str, Any] | None = None
        self.versions = named(
            QTableWidget(0, 4),
            "versions",
            self.tr("Select one version to view it, two to compare them"),
        )
        self.versions.setHorizontalHeaderLabels(
            [self.tr("Version"), self.tr("Time"), self.tr("Author"), self.tr("Reason")]
        )
        self.versions.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.versions.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.versions.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.versions.verticalHeader().setVisible(False)
        self.versions.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.versions.itemSelectionChanged.connect(self._versions_chosen)
        self.revert = named(QPushButton(self.tr("&Revert to this version…")), "revert")
        self.export = named(QPushButton(self.tr("&Export with history…")), "export")
        history_row = QHBoxLayout()
        history_row.addStretch(1)
        history_row.addWidget(self.export)
        history_row.addWidget(self.revert)

        self.proposals = named(
            QListWidget(), "proposals", self.tr("Versions agents proposed for this document")
        )
        self.proposals.currentItemChanged.connect(self._proposal_chosen)
        EmptyNote(
            self.proposals,
            self.tr(
                "Nothing proposed for this document. When an agent proposes a new version of it, "
                "the proposal waits here for you."
            ),
        )
        self.adopt = named(QPushButton(self.tr("&Adopt proposal")), "adopt_proposal")
        self.reject = named(QPushButton(self.tr("Re&ject proposal")), "reject_proposal")
        proposal_row = QHBoxLayout()
        proposal_row.addStretch(1)
        proposal_row.addWidget(self.reject)
        proposal_row.addWidget(self.adopt)

        self.viewer_title = named(plain_label(wordWrap=True), "viewer_title")
        self.viewer = named(QTextBrowser(), "viewer")
        self.viewer.setPlaceholderText(
            # one short line: Qt draws a text editor's placeholder unwrapped, up to its first break
            self.tr("Select a version, two versions or a proposal to see it here.")
        )
        layout = QVBoxLayout(self)
        # Alt and the label's letter puts the focus in its list
        layout.addWidget(self._label(self.tr("&Versions"), self.versions))
        layout.addWidget(self.versions, 2)
        layout.addLayout(history_row)
        layout.addWidget(self._label(self.tr("&Proposed by agents"), self.proposals))
        layout.addWidget(self.proposals, 1)
        layout.addLayout(proposal_row)
        layout.addWidget(self.viewer_title)
        layout.addWidget(self.viewer, 3)

    @staticmethod
    def _label(text: str, buddy: QWidget) -> QLabel:
        label = plain_label(text)
        label.setBuddy(buddy)
        return label

    # -- filling ----------------------------------------------------------------------------

    def fill_versions(self, history: list[IdentityVersion]) -> None:
        """Show `history` (newest first), keeping the versions the person selected."""
        chosen = set(self.selected_versions())
        self.history = history
        self.versions.blockSignals(True)
        self.versions.clearSelection()
        self.versions.setRowCount(len(history))
        for row, v in enumerate(history):
            for col, text in enumerate(
                (str(v.version), when(v.created_at), self._author(v), v.reason)
            ):
                cell = QTableWidgetItem(text or "")
                cell.setData(ID_ROLE, v.version)
                self.versions.setItem(row, col, cell)
        for row, v in enumerate(history):
            if v.version in chosen:
                self.versions.selectRow(row)
        self.versions.blockSignals(False)
        self._versions_chosen()

    def _author(self, v: IdentityVersion) -> str:
        if v.author == v.author_kind:
            return v.author
        return self.tr("{} ({})").format(v.author, v.author_kind)

    def fill_proposals(self, proposals: list[dict[str, Any]]) -> None:
        """Show the waiting proposals, keeping the one the person chose; when its agent sent
        another text for it (or the document moved), the viewer shows it again."""
        chosen = self.proposal_id()
        self._proposals = proposals
        self.proposals.blockSignals(True)
        self.proposals.clear()
        for p in proposals:
            first = (p["content"] or "").strip().splitlines()
            head = first[0] if first else ""
            if p["hits"] == 1:
                text = self.tr("{}, on version {}: {}").format(p["agent"], p["base_revision"], head)
            else:
                text = self.tr("{}, on version {}, proposed {} times: {}").format(
                    p["agent"], p["base_revision"], p["hits"], head
                )
            item = QListWidgetItem(text)
            item.setData(ID_ROLE, p["id"])
            item.setToolTip(plain_tip(p.get("note") or ""))
            self.proposals.addItem(item)
            if p["id"] == chosen:
                self.proposals.setCurrentItem(item)
        self.proposals.blockSignals(False)
        fresh = next((p for p in proposals if p["id"] == chosen), None)
        drawn = self._drawn
        if (
            fresh is not None
            and drawn is not None
            and drawn["id"] == fresh["id"]
            and _shown_text(fresh) != _shown_text(drawn)
        ):
            self._draw_proposal(fresh)

    # -- choosing ---------------------------------------------------------------------------

    def selected_versions(self) -> list[int]:
        """The chosen versions, oldest first."""
        rows = {i.row() for i in self.versions.selectionModel().selectedRows()}
        return sorted(self.history[r].version for r in rows if r < len(self.history))

    def version(self, number: int) -> IdentityVersion | None:
        return next((v for v in self.history if v.version == number), None)

    def _versions_chosen(self) -> None:
        chosen = [v for v in map(self.version, self.selected_versions()) if v is not None]
        if len(chosen) == 1:
            v = chosen[0]
            self.viewer_title.setText(
                self.tr("Version {}, by {}: {}").format(v.version, v.author, v.reason or "")
            )
            self.viewer.setHtml(plain_html(v.content))
        elif len(chosen) == 2:
            old, new = chosen
            self.viewer_title.setText(
                self.tr(
                    "Changes from version {} to version {} (red: removed, green: added)"
                ).format(old.version, new.version)
            )
            self.viewer.setHtml(diff_html(old.content, new.content))
        elif chosen:
            self.viewer_title.setText(self.tr("Select one version to view or two to compare."))
            self.viewer.clear()
        self.chosen.emit()

    def proposal_id(self) -> str | None:
        item = self.proposals.currentItem()
        return str(item.data(ID_ROLE)) if item is not None else None

    def shown_hash(self) -> str | None:
        """The hash of the chosen proposal's text as the viewer last showed it (None: not
        shown): adopting is refused if the agent sent another text since."""
        drawn = self._drawn
        if drawn is None or drawn["id"] != self.proposal_id() or drawn["content"] is None:
            return None
        return content_hash(drawn["content"])

    def _proposal_chosen(self, item: QListWidgetItem | None, _previous: object) -> None:
        proposal = next(
            (p for p in self._proposals if item and p["id"] == item.data(ID_ROLE)), None
        )
        if proposal is not None:
            self._draw_proposal(proposal)
        self.chosen.emit()

    def _draw_proposal(self, proposal: dict[str, Any]) -> None:
        current = (proposal.get("target") or {}).get("content") or ""
        self.viewer_title.setText(
            self.tr("{} proposes (red: removed from the current version, green: added)").format(
                proposal["agent"]
            )
        )
        self.viewer.setHtml(diff_html(current, proposal["content"] or ""))
        self._drawn = proposal

    def update_buttons(self, has_doc: bool) -> None:
        chosen = self.selected_versions()
        current = self.history[0].version if self.history else None
        self.revert.setEnabled(len(chosen) == 1 and chosen[0] != current)
        self.export.setEnabled(has_doc)
        has = self.proposal_id() is not None
        self.adopt.setEnabled(has)
        self.reject.setEnabled(has)


def _shown_text(proposal: dict[str, Any]) -> tuple[str, str]:
    """What the viewer draws of a proposal: the current version's text and the proposed one."""
    current = (proposal.get("target") or {}).get("content") or ""
    return current, proposal["content"] or ""
