"""The Memories window's right-hand side: the detail panel (one memory, its flags, fields,
actions and history), the editor dialog that makes a new revision, and the forget question."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.errors import NotFound
from core.model import (
    Memory,
    MemoryDetail,
    Relation,
    RelationKind,
    Status,
    Workspace,
    WriteResult,
    WriteStatus,
)
from core.requests import UpdateRequest
from core.wording import visible
from desktop.memory_model import one_line, words_and_id
from desktop.widgets import (
    edited_text,
    losing_edits_question,
    named,
    plain_box,
    plain_label,
    plain_tip,
    tab_moves_on,
    when,
)

if TYPE_CHECKING:
    from desktop.desk import Desk

FLAG_STYLE = "background: #fff3cd; color: #664d03; padding: 6px; border-radius: 4px;"


def parse_tags(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))


class MemoryEditor(QDialog):
    """Edits content, summary, tags, importance and kind of one revision of a memory. Saving
    names the revision it started from, so a change made meanwhile is refused, never lost."""

    save_requested = Signal(object)  # UpdateRequest

    def __init__(self, memory: Memory, kinds: tuple[str, ...], parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("memoryEditor")
        self.setWindowTitle(self.tr("Edit memory"))
        self.memory = memory
        self.question: QMessageBox | None = None  # asked before the typed changes go, while open
        self.content = QPlainTextEdit(memory.content)
        self.content.setObjectName("editContent")
        self.summary = QLineEdit(memory.summary or "")
        self.summary.setObjectName("editSummary")
        self.tags = QLineEdit(", ".join(memory.tags))
        self.tags.setObjectName("editTags")
        self.tags.setToolTip(self.tr("Separate tags with commas."))
        self.importance = QSpinBox()
        self.importance.setObjectName("editImportance")
        self.importance.setRange(1, 5)
        self.importance.setValue(memory.importance)
        self.kind = QComboBox()
        self.kind.setObjectName("editKind")
        self.kind.addItems(list(dict.fromkeys((*kinds, memory.kind))))
        self.kind.setCurrentText(memory.kind)
        self.reason = QLineEdit()
        self.reason.setObjectName("editReason")
        self.reason.setPlaceholderText(self.tr("Why (optional, kept in the history)"))
        self.note = plain_label()
        self.note.setObjectName("editNote")
        self.note.setWordWrap(True)
        self.note.hide()
        form = QFormLayout()
        form.addRow(self.tr("Content"), self.content)
        form.addRow(self.tr("Summary"), self.summary)
        form.addRow(self.tr("Tags"), self.tags)
        form.addRow(self.tr("Importance"), self.importance)
        form.addRow(self.tr("Kind"), self.kind)
        form.addRow(self.tr("Reason"), self.reason)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setObjectName("saveEdit")
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(buttons)
        tab_moves_on(self)
        self.resize(560, 420)

    def request(self) -> UpdateRequest | None:
        """The update for what the person changed, or None when nothing changed."""
        m = self.memory
        content = edited_text(self.content.toPlainText(), m.content)
        summary = self.summary.text().strip()
        tags = parse_tags(self.tags.text())
        changes: dict[str, Any] = {}
        if content != m.content:
            changes["content"] = content  # as typed: indentation is part of a memory's text
        if summary != (m.summary or ""):
            changes["summary"] = summary
        if tags != m.tags:
            changes["tags"] = tags
        if self.importance.value() != m.importance:
            changes["importance"] = self.importance.value()
        if self.kind.currentText() != m.kind:
            changes["kind"] = self.kind.currentText()
        if not changes:
            return None
        reason = self.reason.text().strip() or None
        return UpdateRequest(id=m.id, if_revision=m.revision, reason=reason, **changes)

    def reject(self) -> None:
        """Cancel, Escape or the title bar's X: closes at once when nothing was changed, else
        asks first, Cancel the default (until 2026-12-02 the changes were gone unasked)."""
        if self.request() is None:
            super().reject()
            return
        if self.question is not None:
            self.question.raise_()
            return
        box, discard, _cancel = losing_edits_question(
            self,
            "discardEditConfirm",
            self.tr("Discard your changes?"),
            self.tr("Closing the editor loses what you changed in this memory."),
            (self.tr("Discard them"), "confirmDiscardEdit"),
        )
        discard.clicked.connect(lambda: QDialog.reject(self))  # closes, asking nothing more
        box.finished.connect(lambda _r: self._answered(box))
        self.question = box
        box.open()

    def _answered(self, box: QMessageBox) -> None:
        if self.question is box:
            self.question = None

    def say(self, text: str) -> None:
        self.note.setText(text)
        self.note.show()

    def changed_elsewhere(self, revision: int) -> None:
        """The memory moved on while this dialog was open: keep what the person typed, warn."""
        if revision != self.memory.revision:
            self.say(
                self.tr(
                    "This memory changed while you were editing (it is now revision {}). "
                    "Saving will be refused: copy your text, close, and edit again."
                ).format(revision)
            )

    def landed(self, result: WriteResult) -> bool:
        """Close once the new revision is stored; otherwise say why and let the person retry."""
        if result.status is WriteStatus.STORED:
            self.accept()
            return True
        self.save_button.setEnabled(True)
        self.say(result.reason or result.status.value)
        return False

    def _save(self) -> None:
        req = self.request()
        if req is None:
            self.say(self.tr("Nothing has changed."))
            return
        self.save_button.setEnabled(False)
        self.save_requested.emit(req)


@dataclass(frozen=True)
class Shown:
    """One memory as the details show it: with its workspace (its folder, not its id) and the
    memories its relations name (None for one the person can no longer read)."""

    detail: MemoryDetail
    workspace: Workspace | None = None
    others: dict[str, Memory | None] = field(default_factory=dict)


class DetailPanel(QWidget):
    """One memory: its text, its flags, its fields, the actions, and every revision."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = plain_label()
        self.title.setObjectName("detailTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.flag_banner = plain_label()
        self.flag_banner.setObjectName("flagBanner")
        self.flag_banner.setWordWrap(True)
        self.flag_banner.setStyleSheet(FLAG_STYLE)
        self.flag_banner.hide()
        self.content = QTextBrowser()
        self.content.setObjectName("detailContent")
        self.meta = plain_label()
        self.meta.setObjectName("detailMeta")
        self.meta.setWordWrap(True)
        self.meta.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # What replaced this memory, what it replaced, what contradicts it: by their text.
        self.relations = plain_label()
        self.relations.setObjectName("detailRelations")
        self.relations.setWordWrap(True)
        self.relations.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.relations.hide()
        self.edit_button = named(QPushButton(self.tr("&Edit…")), "editButton", self.tr("Ctrl+E"))
        self.pin_button = named(QPushButton(self.tr("&Pin")), "pinButton")
        self.archive_button = named(QPushButton(self.tr("&Archive")), "archiveButton")
        self.forget_button = named(QPushButton(self.tr("&Forget…")), "forgetButton")
        self.forget_button.setToolTip(self.tr("Erase this memory for good (asks first)"))
        actions = QHBoxLayout()
        for b in (self.edit_button, self.pin_button, self.archive_button, self.forget_button):
            actions.addWidget(b)
        actions.addStretch(1)
        self.history = QTreeWidget()
        self.history.setObjectName("history")
        self.history.setRootIsDecorated(False)
        self.history.setHeaderLabels(
            [
                self.tr("Revision"),
                self.tr("Change"),
                self.tr("By"),
                self.tr("When"),
                self.tr("Text"),
            ]
        )
        self.history.setToolTip(self.tr("Every revision of this memory, newest first"))
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.flag_banner)
        layout.addWidget(self.content, 3)
        layout.addWidget(self.meta)
        layout.addWidget(self.relations)
        layout.addLayout(actions)
        layout.addWidget(plain_label(self.tr("History")))
        layout.addWidget(self.history, 2)
        self.show_nothing()

    def show_nothing(self) -> None:
        self.title.setText(self.tr("Select a memory to see it here."))
        self.flag_banner.hide()
        self.content.clear()
        self.meta.clear()
        self.relations.clear()
        self.relations.hide()
        self.history.clear()
        for b in (self.edit_button, self.pin_button, self.archive_button, self.forget_button):
            b.setEnabled(False)

    def show_detail(self, shown: Shown) -> None:
        detail = shown.detail
        m = detail.memory
        self.title.setText(
            self.tr("{id} · revision {rev} · {kind} · {scope} · {status}").format(
                id=m.id, rev=m.revision, kind=m.kind, scope=m.scope.value, status=m.status.value
            )
        )
        if m.flags:
            self.flag_banner.setText(
                self.tr(
                    "Flagged: {}. What the scanner flags is shown as [BLOCKED: rule], "
                    "as agents would read it."
                ).format(", ".join(m.flags))
            )
            self.flag_banner.show()
        else:
            self.flag_banner.hide()
        self.content.setPlainText(m.content)
        lines = [
            self.tr("Summary: {}").format(m.summary or "—"),
            self.tr("Tags: {}").format(", ".join(m.tags) or "—"),
            self.tr("Importance: {} · tier: {} · agent: {}").format(
                m.importance, m.tier.value, m.agent or "—"
            ),
            self.tr("Created {} · updated {}").format(when(m.created_at), when(m.updated_at)),
            self.tr("Recalled %n time(s), last {}", "", m.use_count).format(
                when(m.last_recalled_at) or "—"
            ),
        ]
        if shown.workspace is not None:
            # The folder, as the Workspace filter lists it (until 2026-12-02 its id, ws_…).
            folder = visible(shown.workspace.path)
            if not shown.workspace.path_exists:
                folder += " " + self.tr("(folder missing)")
            lines.append(self.tr("Workspace: {}").format(folder))
        elif m.workspace_id:
            lines.append(self.tr("Workspace: {}").format(m.workspace_id))
        if m.pinned:  # until 2026-12-02 only the button's label (Unpin) said so
            lines.append(
                self.tr(
                    "📌 Pinned: searches rank it higher, and it is never archived for going unused"
                )
            )
        if m.expires_at is not None and m.expired:
            lines.append(self.tr("Expired {}").format(when(m.expires_at)))
        elif m.expires_at is not None:
            lines.append(self.tr("Expires {}").format(when(m.expires_at)))
        self.meta.setText("\n".join(lines))
        related = [self._relation(m.id, r, shown.others) for r in detail.relations]
        self.relations.setText("\n".join(related))
        self.relations.setVisible(bool(related))
        live = m.status is not Status.FORGOTTEN
        self.edit_button.setEnabled(live)
        self.pin_button.setEnabled(live)
        self.pin_button.setText(self.tr("Un&pin") if m.pinned else self.tr("&Pin"))
        self.archive_button.setEnabled(live and m.status is not Status.SUPERSEDED)
        archived = m.status is Status.ARCHIVED
        self.archive_button.setText(self.tr("Rest&ore") if archived else self.tr("&Archive"))
        self.forget_button.setEnabled(live)
        self.history.clear()
        for r in sorted(detail.revisions, key=lambda r: r.revision, reverse=True):
            item = QTreeWidgetItem(
                [str(r.revision), r.action, r.actor, when(r.created_at), one_line(r.content, 90)]
            )
            item.setToolTip(4, plain_tip(r.content + (f"\n\n{r.reason}" if r.reason else "")))
            self.history.addTopLevelItem(item)
        self.history.resizeColumnToContents(0)

    def _relation(self, own_id: str, r: Relation, others: dict[str, Memory | None]) -> str:
        """One line for a relation, naming the other memory by its text (until 2026-12-02 the
        details showed no relation at all)."""
        mine = r.from_id == own_id
        other_id = r.to_id if mine else r.from_id
        other = others.get(other_id)
        if other is None or other.status is Status.FORGOTTEN:
            name = self.tr("a forgotten memory ({})").format(other_id)
        else:
            name = words_and_id(other_id, other.summary, other.content)
        if r.kind is RelationKind.SUPERSEDES:
            line = (self.tr("Replaces {}") if mine else self.tr("Replaced by {}")).format(name)
        else:
            line = self.tr("Contradicts {}").format(name)  # either way round
            if r.open:
                line += " " + self.tr("(open)")
            else:
                line += " " + self.tr("(resolved {})").format(when(r.resolved_at))
        if r.note:
            line += " - " + r.note
        return line


def fetch_detail(desk: Desk, memory_id: str) -> Shown:
    """One memory with its history, its workspace and the memories its relations name, as the
    person sees them (run off the GUI thread)."""
    memories = desk.cairn.memories
    detail = memories.get(desk.person, memory_id, history=True)
    workspace = None
    if detail.memory.workspace_id:
        try:
            workspace = desk.cairn.workspaces.get(detail.memory.workspace_id)
        except NotFound:
            workspace = None  # the id is all there is to show
    others: dict[str, Memory | None] = {}
    for r in detail.relations:
        for other_id in {r.from_id, r.to_id} - {memory_id}:
            try:
                others[other_id] = memories.get(desk.person, other_id).memory
            except NotFound:
                others[other_id] = None
    return Shown(detail, workspace, others)


def forget_confirmation(memory: Memory, parent: QWidget) -> tuple[QMessageBox, QPushButton]:
    """The question asked before forgetting `memory`, naming it, with Cancel as the default.

    Its words stay in the Memories window's translation context, where they always were."""
    box = plain_box(parent)
    box.setObjectName("forgetConfirm")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(QCoreApplication.translate("MemoriesWindow", "Forget this memory?"))
    box.setText(
        QCoreApplication.translate("MemoriesWindow", "Forget “{}” for good?").format(
            one_line(memory.content, 80)
        )
    )
    box.setInformativeText(
        QCoreApplication.translate(
            "MemoriesWindow",
            "Its words are erased from every revision, from the search index and from the "
            "audit log. Only a tombstone stays - its id, a hash of the text, who forgot it "
            "and when - so no agent can write it back. This cannot be undone.",
        )
    )
    forget = box.addButton(
        QCoreApplication.translate("MemoriesWindow", "Forget"),
        QMessageBox.ButtonRole.DestructiveRole,
    )
    forget.setObjectName("confirmForget")
    box.setDefaultButton(box.addButton(QMessageBox.StandardButton.Cancel))
    return box, forget
