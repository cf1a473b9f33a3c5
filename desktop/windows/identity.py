"""The identity window: the `user` profile and each agent's `soul`, edited by the person as new
versions; every version listed, viewed and compared; a revert previewed before it is written;
agents' proposed versions adopted or rejected; a document exported with its whole history.
The editor lives in identity_editor.py, the versions side in identity_versions.py, the revert
preview and the export in identity_revert.py."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QVBoxLayout,
)

from core.changes import Topic
from core.errors import CairnError, Conflict
from core.identity import IdentityVersion, RevertPreview
from core.suggestions import Op
from desktop.desk import Desk, ToolWindow
from desktop.widgets import edited_text, named, plain_label, tab_order
from desktop.windows.identity_editor import DocumentEditor
from desktop.windows.identity_revert import RevertDialog, export_history
from desktop.windows.identity_versions import ID_ROLE, VersionsPane


@dataclass(frozen=True)
class Loaded:
    """What the window shows, read in one worker call."""

    documents: list[IdentityVersion]
    doc: str | None
    history: list[IdentityVersion]  # newest first
    proposals: list[dict[str, Any]]  # pending identity proposals for `doc`


def load(desk: Desk, doc: str | None) -> Loaded:
    """Read the documents, the chosen one's history and its waiting proposals (a worker call)."""
    person = desk.person
    documents = desk.cairn.identity.documents(person)
    names = [d.doc for d in documents]
    chosen = doc if doc in names else (names[0] if names else None)
    if chosen is None:
        return Loaded(documents, None, [], [])
    history = desk.cairn.identity.history(person, chosen)
    proposals = desk.cairn.review.pending(person, limit=1000, op=Op.IDENTITY, target_id=chosen)
    return Loaded(documents, chosen, history, proposals)


class IdentityWindow(ToolWindow):
    """Identity documents and their versions. Refreshes live; never drops an edit."""

    name = "identity"
    default_size = (1080, 720)

    def unsaved(self) -> bool:
        return self.doc_editor.unsaved()

    def __init__(self, desk: Desk) -> None:
        super().__init__(desk)
        self.setWindowTitle(self.tr("Cairn — Identity"))
        self._doc: str | None = None
        self.revert_dialog: RevertDialog | None = None
        self._build()
        desk.live.on(self, {Topic.IDENTITY, Topic.REVIEW}, self.refresh_if_shown)

    # -- building ---------------------------------------------------------------------------

    def _build(self) -> None:
        self.documents = named(QListWidget(), "documents", self.tr("The identity documents"))
        self.documents.currentItemChanged.connect(self._doc_chosen)
        self.doc_editor = editing = DocumentEditor()
        editing.save.clicked.connect(self.save_edit)
        editing.discard.clicked.connect(self._discard)
        self.side = side = VersionsPane()
        side.chosen.connect(self._buttons)
        side.revert.clicked.connect(self.preview_revert)
        side.export.clicked.connect(self._export_clicked)
        side.adopt.clicked.connect(self.adopt_proposal)
        side.reject.clicked.connect(self.reject_proposal)
        split = named(QSplitter(Qt.Orientation.Horizontal), "editorAndVersions")
        split.addWidget(self.documents)
        split.addWidget(editing)
        split.addWidget(side)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        split.setStretchFactor(2, 3)
        split.setSizes([200, 440, 440])
        self.status = named(plain_label(wordWrap=True), "status")
        layout = QVBoxLayout(self)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        tab_order(  # as laid out: left to right, each row after what it acts on
            self.documents,
            editing.editor,
            editing.reason,
            editing.discard,
            editing.save,
            side.versions,
            side.export,
            side.revert,
            side.proposals,
            side.reject,
            side.adopt,
            side.viewer,
        )
        self._buttons()

    # -- loading ----------------------------------------------------------------------------

    def refresh(self) -> None:
        asked = self._doc
        self.fetch(load, self.desk, asked, on_done=lambda got: self._loaded(asked, got))

    def _loaded(self, asked: str | None, got: Loaded) -> None:
        if asked == self._doc:  # else the person chose another document meanwhile
            if got.doc != self._doc:
                self._leave_doc()
            self._doc = got.doc
            self._fill_documents(got)
            self.side.fill_versions(got.history)
            self.side.fill_proposals(got.proposals)
            self._fill_editor()
            self._buttons()

    def _fill_documents(self, got: Loaded) -> None:
        self.documents.blockSignals(True)
        self.documents.clear()
        for d in got.documents:
            item = QListWidgetItem(self._doc_title(d.doc))
            item.setData(ID_ROLE, d.doc)
            item.setToolTip(self.tr("{}: version {}").format(d.doc, d.version))
            self.documents.addItem(item)
            if d.doc == got.doc:
                self.documents.setCurrentItem(item)
        self.documents.blockSignals(False)

    def _doc_title(self, doc: str) -> str:
        if doc == "user":
            return self.tr("User profile")
        if doc == "soul:default":
            return self.tr("Soul (shared default)")
        return self.tr("Soul of {}").format(doc.removeprefix("soul:"))

    def _fill_editor(self) -> None:
        current = self.side.history[0] if self.side.history else None
        if current is not None and self.doc_editor.fill(current):
            self.status.setText(
                self.tr(
                    "{} changed while you were editing (it is now at version {}). Your text is "
                    "kept; compare, then save again or discard your changes."
                ).format(current.doc, current.version)
            )

    def _leave_doc(self) -> None:
        self.doc_editor.leave(self._doc)

    # -- choosing ---------------------------------------------------------------------------

    def _doc_chosen(self, item: QListWidgetItem | None, _previous: object) -> None:
        if item is None:
            return
        doc = str(item.data(ID_ROLE))
        if doc != self._doc:
            self._leave_doc()
            self._doc = doc
            self.side.history = []
            self.refresh()

    def select_document(self, doc: str) -> None:
        for row in range(self.documents.count()):
            item = self.documents.item(row)
            if item is not None and item.data(ID_ROLE) == doc:
                self.documents.setCurrentItem(item)

    def _buttons(self) -> None:
        self.side.update_buttons(self._doc is not None)
        self.doc_editor.update_buttons(self._doc is not None)

    # -- editing ----------------------------------------------------------------------------

    def _discard(self) -> None:
        self.doc_editor.drop(self._doc)
        self.status.clear()
        self._fill_editor()
        self._buttons()

    def save_edit(self) -> None:
        if self._doc is None or self.doc_editor.base is None or self.doc_editor.saving:
            return
        doc, base = self._doc, self.doc_editor.base
        started = self.side.version(base)
        # Untouched, the editor gives back CRLF as LF and no-break spaces as spaces: the text
        # it started from is what is meant (the service then finds nothing to save - line
        # breaks taken as it stores them, for a version stored with CRLF before 2026-11-30).
        typed = self.doc_editor.text()  # what the person may type on from while it saves
        text = typed if started is None else edited_text(typed, started.content)
        fn = functools.partial(
            self.desk.cairn.identity.edit,
            self.desk.person,
            doc,
            text,
            if_version=base,
            reason=self.doc_editor.reason.text().strip() or None,
        )
        self.doc_editor.saving = True
        self._buttons()
        self.desk.call(
            fn,
            on_done=functools.partial(self._saved, base=base, typed=typed),
            on_error=functools.partial(self._save_failed, doc=doc),
            owner=self,
        )

    def _saved(self, version: IdentityVersion, *, base: int, typed: str) -> None:
        """The save of `typed` (the editor's text when Save was pressed), based on version
        `base`, wrote `version` (or found nothing to write)."""
        self._save_answered()
        if version.version == base:
            self.status.setText(
                self.tr("Nothing to save: the text is version {}'s.").format(version.version)
            )
        else:
            self.status.setText(
                self.tr("Saved {} as version {}.").format(version.doc, version.version)
            )
        shown = version.doc == self._doc
        self.doc_editor.saved(version.doc, typed, version.version, shown=shown)
        if shown:
            self.doc_editor.reason.clear()
            history = self.side.history
            if history and history[0].version >= version.version:
                # The reload landed before this answer and kept the text as an edit: the editor
                # shows what is stored now, or what was typed since on top of it (a later
                # reload would find nothing new).
                self._fill_editor()
            self._buttons()
        self.refresh_after_write()

    def _save_answered(self) -> None:
        self.doc_editor.saving = False
        self._buttons()

    def _save_failed(self, error: BaseException, doc: str | None = None) -> None:
        self._save_answered()
        if not isinstance(error, CairnError):
            self.show_error(error)
            return
        if isinstance(error, Conflict):
            now = (error.data or {}).get("current_version")
            self.status.setText(
                self.tr(
                    "Not saved: {}. Your text is kept; save again to write it over version {}, "
                    "or discard your changes."
                ).format(error.message, now)
            )
            if isinstance(now, int) and doc is not None:
                # the person has now been told; a second save is deliberate
                self.doc_editor.rebase(doc, now, shown=doc == self._doc)
            self.refresh()
            return
        self.status.setText(self.tr("Not saved: {}").format(error.message))

    # -- reverting --------------------------------------------------------------------------

    def preview_revert(self) -> None:
        chosen = self.side.selected_versions()
        if self._doc is None or len(chosen) != 1:
            return
        fn = functools.partial(
            self.desk.cairn.identity.revert_preview, self.desk.person, self._doc, chosen[0]
        )
        self.desk.call(fn, on_done=self._previewed, owner=self)

    def _previewed(self, preview: RevertPreview) -> None:
        current = self.side.version(preview.current_version)
        target = self.side.version(preview.target_version)
        if current is None or target is None:  # the list is behind the store: catch up first
            self.status.setText(self.tr("The document changed; preview the revert again."))
            self.refresh()
            return
        dialog = RevertDialog(self, preview, current.content, target.content)
        dialog.accepted.connect(lambda: self._apply_revert(preview))
        dialog.finished.connect(lambda _result: self._dialog_closed(dialog))
        self.revert_dialog = dialog
        dialog.open()

    def _dialog_closed(self, dialog: RevertDialog) -> None:
        if self.revert_dialog is dialog:
            self.revert_dialog = None
        dialog.deleteLater()

    def _apply_revert(self, preview: RevertPreview) -> None:
        fn = functools.partial(
            self.desk.cairn.identity.revert_apply, self.desk.person, preview.token
        )
        self.desk.call(
            fn,
            on_done=lambda v: self._reverted(v, preview),
            on_error=self._revert_failed,
            owner=self,
        )

    def _reverted(self, version: IdentityVersion, preview: RevertPreview) -> None:
        self.status.setText(
            self.tr("Reverted: version {} was written with the content of version {}.").format(
                version.version, preview.target_version
            )
        )
        self.refresh_after_write()

    def _revert_failed(self, error: BaseException) -> None:
        if not isinstance(error, CairnError):
            self.show_error(error)
            return
        self.status.setText(self.tr("Not reverted: {}").format(error.message))
        self.refresh()

    # -- proposals --------------------------------------------------------------------------

    def adopt_proposal(self) -> None:
        sid = self.side.proposal_id()
        if sid is None:
            return
        fn = functools.partial(
            self.desk.cairn.review.adopt,
            self.desk.person,
            sid,
            # the text the viewer showed: one the agent sent since is refused, never adopted
            if_content_hash=self.side.shown_hash(),
        )
        self.desk.call(
            fn,
            on_done=lambda d: self._decided(
                self.tr("Adopted: version {} written.").format(d.revision)
            ),
            on_error=self._decision_failed,
            owner=self,
        )

    def reject_proposal(self) -> None:
        sid = self.side.proposal_id()
        if sid is None:
            return
        self.desk.call(
            self.desk.cairn.review.reject,
            self.desk.person,
            sid,
            None,
            on_done=lambda _d: self._decided(self.tr("Proposal rejected.")),
            on_error=self._decision_failed,
            owner=self,
        )

    def _decided(self, text: str) -> None:
        self.status.setText(text)
        self.refresh_after_write()

    def _decision_failed(self, error: BaseException) -> None:
        if not isinstance(error, CairnError):
            self.show_error(error)
            return
        current = error.data.get("current_revision") if isinstance(error, Conflict) else None
        if isinstance(error, Conflict) and error.data.get("changed") == "proposal":
            self.status.setText(
                self.tr(
                    "Not adopted: the agent changed this proposal since it was shown; its new "
                    "text is shown once loaded. Look again."
                )
            )
        elif current is not None and "doc" in error.data:
            # this window has no "adopt onto the current version": say where it is
            self.status.setText(
                self.tr(
                    "Not adopted: {} changed since this proposal was made (it is now at version "
                    "{}). Compare them in the Review queue, which can adopt it onto the current "
                    "version, or reject it here."
                ).format(error.data["doc"], current)
            )
        else:
            self.status.setText(self.tr("Not done: {}").format(error.message))
        self.refresh()

    # -- exporting --------------------------------------------------------------------------

    def _export_clicked(self) -> None:
        if self._doc is None:
            return
        suggested = Path.home() / f"{self._doc.replace(':', '-')}-history.md"
        path, _ = QFileDialog.getSaveFileName(
            self, self.tr("Export {}").format(self._doc), str(suggested), self.tr("Markdown (*.md)")
        )
        if path:
            self.export_to(Path(path))

    def export_to(self, path: Path) -> None:
        """Write the chosen document and its history to `path` (off the GUI thread)."""
        if self._doc is None:
            return
        fn = functools.partial(
            export_history, self.desk.cairn.identity, self.desk.person, self._doc, path
        )
        self.desk.call(
            fn,
            on_done=lambda p: self.status.setText(self.tr("Exported to {}.").format(p)),
            on_error=self._export_failed,
            owner=self,
        )

    def _export_failed(self, error: BaseException) -> None:
        if isinstance(error, OSError):
            self.status.setText(self.tr("Not exported: {}").format(error.strerror or error))
            return
        self.show_error(error)
