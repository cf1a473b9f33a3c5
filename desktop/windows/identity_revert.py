"""What leaves the identity window in a careful way: the revert preview (step two of a revert,
the only place a revert is confirmed) and the export of a document with its whole history."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from core.identity import IdentityService, RevertPreview
from core.model import Caller
from desktop.diff import diff_html
from desktop.widgets import named, plain_label, tab_moves_on


def _fenced(text: str) -> str:
    """`text` in a fenced block whose fence no run of backticks inside it can close."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}markdown\n{text.rstrip()}\n{fence}\n"


def export_history(identity: IdentityService, person: Caller, doc: str, path: Path) -> Path:
    """Write `doc` with every version to a markdown file at `path` (a worker call)."""
    history = identity.history(person, doc)
    current = history[0]

    def stamp(ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")

    parts = [
        f"# {doc}\n",
        f"Exported from Cairn on {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}. "
        f"Current version: {current.version}; {len(history)} versions in all, newest first.\n",
        "## Current content\n",
        _fenced(current.content),
        "## History\n",
    ]
    for v in history:
        parts.append(
            f"### Version {v.version}\n\n"
            f"- written: {stamp(v.created_at)}\n"
            f"- author: {v.author} ({v.author_kind})\n"
            f"- reason: {v.reason or '-'}\n"
        )
        parts.append(_fenced(v.content))
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


class RevertDialog(QDialog):
    """Step two of a revert: what will happen, the diff, and the button that does it."""

    def __init__(self, parent: QWidget, preview: RevertPreview, current: str, target: str) -> None:
        super().__init__(parent)
        self.preview = preview
        self.setObjectName("revert_dialog")
        self.setWindowTitle(self.tr("Revert {}").format(preview.doc))
        self.explanation = named(plain_label(wordWrap=True), "revert_explanation")
        self.explanation.setText(
            self.tr(
                "A new version {} will be written with the content of version {}; nothing is "
                "deleted. Below: what changes from the current version {} (red: removed, green: "
                "added)."
            ).format(preview.current_version + 1, preview.target_version, preview.current_version)
        )
        self.diff = named(QTextBrowser(), "revert_diff")
        self.diff.setHtml(diff_html(current, target))
        buttons = QDialogButtonBox()
        self.confirm = named(
            buttons.addButton(
                self.tr("Write version {}").format(preview.current_version + 1),
                QDialogButtonBox.ButtonRole.AcceptRole,
            ),
            "confirm_revert",
        )
        self.cancel = named(
            buttons.addButton(QDialogButtonBox.StandardButton.Cancel), "cancel_revert"
        )
        # Enter alone never reverts: an auto-default button takes Enter when it has the focus,
        # and a shown dialog gives it to the first one, so only Cancel may be auto-default.
        self.confirm.setAutoDefault(False)
        self.cancel.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.explanation)
        layout.addWidget(self.diff, 1)
        layout.addWidget(buttons)
        tab_moves_on(self)
        self.resize(640, 440)
