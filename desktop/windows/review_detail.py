"""The review window's detail pane: one proposal against what it would change, its fields to
edit before adopting (checked before anything is sent), the choice of what adopting feedback
does, allowing a scanner finding, and the conflict box."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.errors import CairnError, Conflict
from core.model import Scope
from core.review_decisions import MAX_REASON_CHARS

# FEEDBACK_ACTIONS: what adopting feedback may do (the first is the default)
from core.review_edits import FEEDBACK_ACTIONS
from core.validation import Limits
from desktop.diff import diff_html, plain_html
from desktop.widgets import edited_text, named, plain_label
from desktop.windows.review_expiry_pin import changes_html, settings_of, value_text
from desktop.windows.review_queue import title_of, why_of
from desktop.windows.review_rows import Item

# The strings here belong to the review window's translation context (they were written there).
translate = QCoreApplication.translate

# Which proposals carry memory fields a person can edit before adopting.
MEMORY_OPS = ("add", "update", "supersede")


def flagged_allowable(item: Item) -> bool:
    """Whether the proposal carries a scanner finding a person may allow (secrets never)."""
    return any(f["family"] != "secret" for f in item["flags"])


class ProposalDetail(QWidget):
    """The pane on the right. `item` is the proposal shown; `dirty` says the fields hold the
    person's edits (or choices), which a refresh must keep."""

    def __init__(self, limits: Limits, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("detail")
        self._limits = limits
        self.item: Item | None = None
        # The proposal as the fields were filled from it - its text and its target's revision
        # are what adopting holds the person to, however often the list reloads meanwhile.
        self.shown: Item | None = None
        self.dirty = False
        self.conflict_data: dict[str, Any] | None = None
        self._filling = False  # the pane, not the person, is changing the editors
        self.title = named(plain_label(wordWrap=True), "title")
        self.why = named(plain_label(wordWrap=True), "why")
        self.diff = named(QTextBrowser(), "diff")
        self.diff.setToolTip(
            translate("ReviewWindow", "Red: removed by the proposal. Green: added by it.")
        )
        self.form_error = named(plain_label(wordWrap=True), "form_error")
        self.form_error.setStyleSheet("color:#b3261e;")
        self.conflict = named(plain_label(wordWrap=True), "conflict")
        self.conflict.setStyleSheet(
            "background:#fff4d6;color:#6b4a00;border:1px solid #e0b84a;padding:4px;"
        )
        self.conflict.hide()
        self.adopt_current = named(
            QPushButton(translate("ReviewWindow", "Adopt onto the current &version")),
            "adopt_current",
            translate(
                "ReviewWindow",
                "You have compared them: adopt the proposal over what the memory is now",
            ),
        )
        self.adopt_current.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.why)
        layout.addWidget(self.diff, 2)
        layout.addLayout(self._build_form(), 3)
        layout.addWidget(self.allow_flags)
        layout.addWidget(self.form_error)
        layout.addWidget(self.conflict)
        layout.addWidget(self.adopt_current)
        layout.addLayout(self._build_buttons())

    def _build_form(self) -> QFormLayout:
        self.feedback_action = named(
            QComboBox(),
            "feedback_action",
            translate(
                "ReviewWindow", "The agent says this memory is wrong or stale: what adopting does"
            ),
        )
        for action, text in zip(  # strict: an action core adds needs its words here
            FEEDBACK_ACTIONS,
            (
                translate("ReviewWindow", "Archive the memory"),
                translate("ReviewWindow", "Forget the memory"),
                translate("ReviewWindow", "Edit the memory"),
            ),
            strict=True,
        ):
            self.feedback_action.addItem(text, action)
        self.content = named(QPlainTextEdit(), "content")
        self.summary = named(QLineEdit(), "summary")
        self.kind = named(QComboBox(), "kind")
        self.kind.addItems(list(self._limits.kinds))
        self.scope = named(QComboBox(), "scope")
        for scope in Scope:
            self.scope.addItem(scope.value, scope.value)
        self.tags = named(
            QLineEdit(placeholderText=translate("ReviewWindow", "comma, separated")), "tags"
        )
        self.importance = named(
            QLineEdit(placeholderText=translate("ReviewWindow", "1 to 5")), "importance"
        )
        # Shown, not edited: core's adopt takes no edit of either (reject what you do not want)
        settings_tip = translate(
            "ReviewWindow",
            "Set by the proposal; adopting makes it. It cannot be edited here: reject the "
            "proposal if you do not want it",
        )
        self.expiry = named(plain_label(), "expiry", settings_tip)
        self.pin = named(plain_label(), "pin", settings_tip)
        self.allow_flags = named(
            QCheckBox(translate("ReviewWindow", "Also allo&w this finding from now on")),
            "allow_flags",
            translate(
                "ReviewWindow",
                "The scanner lets this finding through everywhere from now on (secrets are never "
                "allowed); the policy window lists what is allowed",
            ),
        )
        self.form = QFormLayout()
        self.form.addRow(translate("ReviewWindow", "On adopting"), self.feedback_action)
        self.form.addRow(translate("ReviewWindow", "Content"), self.content)
        self.form.addRow(translate("ReviewWindow", "Summary"), self.summary)
        self.form.addRow(translate("ReviewWindow", "Kind"), self.kind)
        self.form.addRow(translate("ReviewWindow", "Scope"), self.scope)
        self.form.addRow(translate("ReviewWindow", "Tags"), self.tags)
        self.form.addRow(translate("ReviewWindow", "Importance"), self.importance)
        self.form.addRow(translate("ReviewWindow", "Expiry"), self.expiry)
        self.form.addRow(translate("ReviewWindow", "Pinned"), self.pin)
        for editor in (self.summary, self.tags, self.importance):
            editor.textEdited.connect(self._edited)
        self.content.textChanged.connect(self._edited)
        self.kind.activated.connect(self._edited)
        self.scope.activated.connect(self._edited)
        self.feedback_action.activated.connect(self._action_chosen)
        self.allow_flags.toggled.connect(self._edited)
        return self.form

    def _build_buttons(self) -> QHBoxLayout:
        self.reject_reason = named(
            QLineEdit(placeholderText=translate("ReviewWindow", "Reason for rejecting (optional)")),
            "reject_reason",
        )
        self.reject_reason.setMaxLength(MAX_REASON_CHARS)
        self.adopt_button = named(QPushButton(translate("ReviewWindow", "&Adopt")), "adopt")
        self.reject_button = named(QPushButton(translate("ReviewWindow", "&Reject")), "reject")
        buttons = QHBoxLayout()
        buttons.addWidget(self.adopt_button)
        buttons.addWidget(self.reject_reason, 1)
        buttons.addWidget(self.reject_button)
        return buttons

    def editors(self) -> list[QWidget]:
        """The pane's fields in tab order, up to the adopt button."""
        return [
            self.feedback_action,
            self.content,
            self.summary,
            self.kind,
            self.scope,
            self.tags,
            self.importance,
            self.allow_flags,
            self.adopt_button,
        ]

    # -- showing ----------------------------------------------------------------------------

    def present(self, item: Item | None, draft: dict[str, Any] | None = None) -> None:
        """Fill the pane with `item`, or with `draft` (the person's edits left earlier, with
        the proposal as they edited it: one the agent rewrote meanwhile is not adopted unseen)."""
        self.item = item
        # What the person judged: a refresh while they edit does not move it.
        self.shown = draft["shown"] if draft is not None else item
        self.conflict_data = None
        self.conflict.hide()
        self.adopt_current.hide()
        self.form_error.clear()
        self._filling = True
        feedback = item is not None and item["op"] == "feedback"
        self.form.setRowVisible(self.feedback_action, feedback)
        self.allow_flags.setVisible(item is not None and flagged_allowable(item))
        self.adopt_button.setEnabled(item is not None)
        self.reject_button.setEnabled(item is not None)
        self.reject_reason.setEnabled(item is not None)
        if item is None:
            self.title.setText(translate("ReviewWindow", "Nothing selected."))
            self.why.clear()
            self.diff.clear()
            self._set_fields({})
        else:
            self.title.setText(title_of(item))
            self._set_fields(draft or self._base(item))
            self.why.setText(why_of(item, self._action()))
        self._enable()
        self._filling = False
        self.dirty = draft is not None
        self.render_diff()

    def follow(self, fresh: Item) -> None:
        """The shown proposal as read again, the person's edits kept: the target may have moved
        on, so the diff is drawn again."""
        self.item = fresh
        self.render_diff()

    def _enable(self) -> None:
        op = self.item["op"] if self.item is not None else None
        memory_fields = op in MEMORY_OPS or self._action() == "edit"
        self.content.setEnabled(memory_fields or op == "identity")
        for w in (self.summary, self.kind, self.scope, self.tags, self.importance):
            w.setEnabled(memory_fields)

    def _action(self) -> str | None:
        """What adopting feedback does; None for any other proposal."""
        if self.item is None or self.item["op"] != "feedback":
            return None
        return str(self.feedback_action.currentData())

    @staticmethod
    def _source(item: Item) -> dict[str, Any]:
        """What the fields start from: the proposal, or for feedback the memory as it is (what
        an edit changes), for forget the memory it forgets (the proposal carries no kind or
        scope of its own: until 2026-11-30 the pane showed the first of each, "global")."""
        return (item.get("target") or {}) if item["op"] in ("feedback", "forget") else item

    def _base(self, item: Item) -> dict[str, Any]:
        source = self._source(item)
        importance = source.get("importance")
        return {
            "content": source.get("content") or "",
            "summary": source.get("summary") or "",
            "kind": source.get("kind") or "",
            "scope": source.get("scope") or "",
            "tags": ", ".join(source.get("tags") or ()),
            "importance": "" if importance is None else str(importance),
        }

    def _set_fields(self, values: dict[str, Any]) -> None:
        self.content.setPlainText(values.get("content", ""))
        self.summary.setText(values.get("summary", ""))
        self.kind.setCurrentIndex(max(0, self.kind.findText(values.get("kind", ""))))
        self.scope.setCurrentIndex(max(0, self.scope.findData(values.get("scope", ""))))
        self.tags.setText(values.get("tags", ""))
        self.importance.setText(values.get("importance", ""))
        action = values.get("action", FEEDBACK_ACTIONS[0])
        self.feedback_action.setCurrentIndex(max(0, self.feedback_action.findData(action)))
        self.allow_flags.setChecked(bool(values.get("allow", False)))

    def snapshot(self) -> dict[str, Any]:
        """The fields as the person left them and the proposal they edited (kept as a draft)."""
        return {
            "shown": self.shown,
            "content": self.content.toPlainText(),
            "summary": self.summary.text(),
            "kind": self.kind.currentText(),
            "scope": self.scope.currentData(),
            "tags": self.tags.text(),
            "importance": self.importance.text(),
            "action": self.feedback_action.currentData(),
            "allow": self.allow_flags.isChecked(),
        }

    def _edited(self, *_args: object) -> None:
        if self._filling or self.item is None:
            return
        self.dirty = True
        self.form_error.clear()
        self.render_diff()

    def _action_chosen(self, _index: int) -> None:
        if self.item is None:
            return
        self._enable()
        self.why.setText(why_of(self.item, self._action()))
        self._edited()

    def render_diff(self) -> None:
        """The text's diff, then the expiry and the pin the proposal changes (also in the form)."""
        item = self.item
        settings = settings_of(item) if item is not None else None
        for row, setting in zip((self.expiry, self.pin), settings or (None, None), strict=True):
            self.form.setRowVisible(row, setting is not None)
            row.setText(value_text(setting) if setting is not None else "")
        if item is None:
            self.diff.clear()
            return
        target = item.get("target") or {}
        before = target.get("content")
        after = self.content.toPlainText() if self.content.isEnabled() else None
        if after is None:
            after = item.get("content") or ""
        changes = item["op"] in ("update", "supersede", "identity") or self._action() == "edit"
        if changes and before is not None:
            text = diff_html(str(before), after)
        elif item["op"] in ("forget", "feedback") and before is not None:
            text = plain_html(str(before))
        else:
            text = plain_html(after)
        self.diff.setHtml(text + changes_html(settings))

    # -- what adopting sends ----------------------------------------------------------------

    def edits(self) -> dict[str, Any] | None:
        """What the person changed, checked; None (with a message shown in the form) when a
        value is not acceptable."""
        item = self.item
        if item is None or not self.content.isEnabled():
            return {}
        problem: str | None = None
        limits = self._limits
        source = self._source(item)
        # Untouched, the proposal's own text (the editor shows CRLF or a no-break space changed)
        typed = edited_text(self.content.toPlainText(), source.get("content") or "")
        values: dict[str, Any] = {"content": typed}
        if not values["content"].strip():
            problem = translate("ReviewWindow", "The content cannot be empty.")
        if item["op"] != "identity":
            values["summary"] = self.summary.text().strip() or None
            values["kind"] = self.kind.currentText()
            values["scope"] = self.scope.currentData()
            tags = [t.strip().lower() for t in self.tags.text().split(",") if t.strip()]
            values["tags"] = list(dict.fromkeys(tags))
            long_tag = next((t for t in tags if len(t) > limits.max_tag_chars), None)
            raw = self.importance.text().strip()
            if long_tag is not None:
                problem = translate(
                    "ReviewWindow", "The tag “{}” is longer than {} characters."
                ).format(long_tag, limits.max_tag_chars)
            elif len(values["tags"]) > limits.max_tags:
                problem = translate(
                    "ReviewWindow", "There are {} tags; at most {} are allowed."
                ).format(len(values["tags"]), limits.max_tags)
            elif not raw and source.get("importance") is not None:
                # Importance is required: emptied, it was sent as "no change" without a word
                # (until 2026-11-30), though the person meant to clear it.
                problem = translate(
                    "ReviewWindow", "Importance cannot be empty: give a whole number from 1 to 5."
                )
            elif raw and raw not in ("1", "2", "3", "4", "5"):
                problem = translate(
                    "ReviewWindow", "Importance must be a whole number from 1 to 5."
                )
            values["importance"] = int(raw) if raw in ("1", "2", "3", "4", "5") else None
        before: dict[str, Any] = {
            "content": source.get("content") or "",
            "summary": source.get("summary"),
            "kind": source.get("kind"),
            "scope": source.get("scope"),
            "tags": list(source.get("tags") or ()),
            "importance": source.get("importance"),
        }
        changed = {k: v for k, v in values.items() if v != before[k]}
        if problem is None and self._action() == "edit" and not changed:
            problem = translate(
                "ReviewWindow", "Change the memory to edit it, or choose another action."
            )
        if problem is not None:
            self.form_error.setText(problem)
            return None
        return changed

    def options(self) -> dict[str, Any]:
        """The adopt call's choices beside the edits: what feedback does, allowing findings."""
        out: dict[str, Any] = {}
        action = self._action()
        if action is not None:
            out["action"] = action
        if self.item is not None and flagged_allowable(self.item) and self.allow_flags.isChecked():
            out["allow_flags"] = True
        return out

    # -- after a decision -------------------------------------------------------------------

    def show_conflict(self, error: Conflict) -> None:
        """The target moved on: say so, offer adopting onto it; the edits stay."""
        self.conflict_data = dict(error.data or {})
        self.conflict.setText(
            translate(
                "ReviewWindow", "Not adopted — the target changed since the proposal. {}"
            ).format(error.message)
        )
        self.conflict.show()
        self.adopt_current.setVisible("current_revision" in self.conflict_data)
        self.dirty = True

    def show_refusal(self, error: CairnError) -> None:
        field = (error.data or {}).get("field")
        self.form_error.setText(
            translate("ReviewWindow", "{} (field: {})").format(error.message, field)
            if field
            else error.message
        )
