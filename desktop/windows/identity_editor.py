"""The identity window's editor: the chosen document's text as the person edits it, the version
it started from, and the drafts of documents left with unsaved edits."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.identity import IdentityVersion
from desktop.widgets import named, plain_label


class DocumentEditor(QWidget):
    """The editor, the reason, Save and Discard. `base` is the version the text started from;
    `dirty` says the text holds the person's edits, which a refresh must keep. The window
    connects Save and Discard to its actions."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.base: int | None = None
        self.dirty = False
        # A save is on its way: Save (and Ctrl+S) waits for its answer, so a second press is
        # not a second save still based on the version the first one replaces.
        self.saving = False
        self._drafts: dict[str, tuple[str, int]] = {}  # doc -> (text, base) left unsaved
        self._filling = False  # the window, not the person, is changing the text
        self.editor = named(QPlainTextEdit(), "editor")
        self.editor.textChanged.connect(self._edited)
        self.base_label = named(plain_label(), "base")
        self.reason = named(
            QLineEdit(placeholderText=self.tr("Why you changed it (optional)")), "reason"
        )
        self.save = named(
            QPushButton(self.tr("&Save as a new version")),
            "save",
            self.tr("Writes a new version; every earlier one is kept (Ctrl+S)"),
        )
        # Alt+S is the button's own (its text's &S); Ctrl+S, anywhere in the window, presses
        # it too - set on the button, Ctrl+S would replace its Alt-key.
        QShortcut(QKeySequence(self.tr("Ctrl+S")), self, self.save.animateClick)
        self.discard = named(QPushButton(self.tr("&Discard my changes")), "discard")
        save_row = QHBoxLayout()
        save_row.addWidget(self.reason, 1)
        save_row.addWidget(self.discard)
        save_row.addWidget(self.save)
        layout = QVBoxLayout(self)
        layout.addWidget(self.base_label)
        layout.addWidget(self.editor, 1)
        layout.addLayout(save_row)

    def fill(self, current: IdentityVersion) -> bool:
        """Show `current` (or the draft the person left of it) unless the person is editing.
        Returns True when the document moved on while the person was editing it."""
        moved = False
        if not self.dirty:
            draft = self._drafts.pop(current.doc, None)
            self._filling = True
            self.editor.setPlainText(draft[0] if draft else current.content)
            self._filling = False
            self.base = draft[1] if draft else current.version
            self.dirty = draft is not None
        elif self.base is not None and self.base != current.version:
            moved = True
        self.base_label.setText(
            self.tr("Editing {}, based on version {}").format(current.doc, self.base)
        )
        return moved

    def leave(self, doc: str | None) -> None:
        """Another document is chosen: keep the unsaved text of `doc` as a draft."""
        if doc is not None and self.dirty and self.base is not None:
            self._drafts[doc] = (self.editor.toPlainText(), self.base)
        self.dirty = False

    def saved(self, doc: str, typed: str, version: int, *, shown: bool) -> bool:
        """The person's text of `doc`, `typed` when they pressed Save, is now `version`; `shown`
        says `doc` is in the editor. Text typed since stays an edit (or a draft), now based on
        `version`. Returns True when nothing of `doc` is left unsaved."""
        if shown:
            if self.dirty and self.text() != typed:
                self.base = version
                return False
            self.dirty = False
            return True
        draft = self._drafts.get(doc)
        if draft is not None and draft[0] != typed:
            self._drafts[doc] = (draft[0], version)
            return False
        self._drafts.pop(doc, None)
        return True

    def rebase(self, doc: str, version: int, *, shown: bool) -> None:
        """Base the person's edit of `doc` on `version` (they were told it moved on: a second
        save is deliberate)."""
        if shown:
            self.base = version
        elif doc in self._drafts:
            self._drafts[doc] = (self._drafts[doc][0], version)

    def drop(self, doc: str | None) -> None:
        """Forget the person's edits of `doc` (Discard)."""
        self.dirty = False
        if doc is not None:
            self._drafts.pop(doc, None)

    def unsaved(self) -> bool:
        """Whether the person's edits of any document wait to be saved (shown or drafts)."""
        return self.dirty or bool(self._drafts)

    def text(self) -> str:
        return self.editor.toPlainText()

    def update_buttons(self, has_doc: bool) -> None:
        self.save.setEnabled(has_doc and not self.saving)
        self.discard.setEnabled(self.dirty)

    def _edited(self) -> None:
        if not self._filling:
            self.dirty = True
            self.discard.setEnabled(True)
