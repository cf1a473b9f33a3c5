"""The review queue window: agents' proposals waiting for a person, each shown against what it
would change; adopt (after editing, if wanted), reject with a reason, or decide many at once.
The list lives in review_queue.py (its rows in review_rows.py), the detail pane in
review_detail.py."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent, QTextCursor
from PySide6.QtWidgets import (
    QMessageBox,
    QPushButton,
    QSplitter,
    QVBoxLayout,
)

from core.changes import ChangeSet, Topic
from core.errors import CairnError, Conflict
from core.validation import content_hash
from desktop.desk import Desk, ToolWindow
from desktop.memory_model import one_line
from desktop.presenter import sentence
from desktop.widgets import named, plain_box, plain_label, tab_order
from desktop.windows.review_detail import ProposalDetail
from desktop.windows.review_queue import Filters, ProposalList
from desktop.windows.review_rows import Item, Made, row_of

# The window lists the most seen proposals up to this many (a queue may hold up to 100,000);
# its count says how many wait in all.
LISTED = 1000


@dataclass(frozen=True)
class Queue:
    """What the window shows, read in one worker call."""

    items: list[Item]  # the LISTED most seen the filters keep, most seen first
    waiting: int  # how many wait in all
    gone: frozenset[str] = frozenset()  # proposals the window held edits for, decided since
    agents: tuple[str, ...] = ()  # every agent, kind and reason code waiting, listed or not
    kinds: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    filters: Filters = field(default_factory=Filters)  # what the items were read for
    matching: int = 0  # how many of the waiting the filters keep (all, with none chosen)
    read: int = 0  # how many of the items were read anew (the others the window held)
    made: Made | None = None  # the rows of those read anew, made on the worker


def load(
    desk: Desk,
    held: frozenset[str] = frozenset(),
    filters: Filters | None = None,
    known: Mapping[str, Item] | None = None,
    generation: int = 0,
) -> Queue:
    """The most seen proposals the filters keep (read from the whole queue, not from the most
    seen of all), how many wait and match, every agent, kind and reason waiting, and which of
    `held` (the proposals the window holds edits or reasons for) no longer wait (a worker call).
    `known` are the proposals the window holds as last read: those still as they were are not
    read again (a full read of 1,000 took ~200 ms of a worker holding the GIL; the GUI stalled).
    The rows of those read are made here, for the list's texts of `generation`: made on the GUI
    thread, 1,000 rows' texts took it 40-80 ms.
    """
    review, person = desk.cairn.review, desk.person
    filters = filters or Filters()
    known = known or {}
    narrow = {"agent": filters.agent, "kind": filters.kind, "reason": filters.reason}
    ranked = review.ranking(person, limit=LISTED, **narrow)
    stale = {
        r.id
        for r in ranked
        if (k := known.get(r.id)) is None or (k["hits"], k["last_seen"]) != (r.hits, r.last_seen)
    }
    fresh = review.shown(person, [r.id for r in ranked if r.id in stale])
    items = [
        fresh[r.id] if r.id in stale else known[r.id]
        for r in ranked
        if r.id in fresh or r.id not in stale  # one decided between the two reads is left out
    ]
    gone = held - review.waiting_among(person, held) if held else frozenset()
    waiting = review.count()
    choices = review.choices(person)
    return Queue(
        items,
        waiting,
        gone,
        choices.agents,
        choices.kinds,
        choices.reasons,
        filters,
        review.count(**narrow) if filters.narrow() else waiting,
        len(fresh),
        Made({sid: row_of(item) for sid, item in fresh.items()}, generation),
    )


class ReviewWindow(ToolWindow):
    """The queue of proposals. Refreshes from the change channel; never drops an edit."""

    name = "review"
    default_size = (1280, 720)
    # A load reads the order of up to 1,000 proposals, and in full only the ones not held.
    min_interval_ms = 1000

    def __init__(self, desk: Desk) -> None:
        super().__init__(desk)
        self.setWindowTitle(self.tr("Cairn — Review queue"))
        self._items: list[Item] = []
        self._waiting = 0
        self._filters = Filters()  # what `_items` were read for
        self._matching = 0  # how many of the waiting the filters keep
        # Listed proposals to read again in full at the next load, though their place in the
        # queue did not change: what they would change changed. None: every one (the window
        # was hidden, and did not follow the changes meanwhile).
        self._stale: set[str] | None = None
        self._drafts: dict[str, dict[str, Any]] = {}  # unsaved edits of proposals left behind
        self._reasons: dict[str, str] = {}  # reasons typed for rejecting proposals left behind
        self.confirm: QMessageBox | None = None  # the question before forgetting, while open
        # A proposal the agent rewrote while the person edited it: its new text is quoted to
        # them when the reload brings it.
        self._rewritten_under_edits: str | None = None
        self._failed_note: str | None = None  # the status said the last load failed
        self._build()
        desk.live.on(self, {Topic.REVIEW, Topic.MEMORIES, Topic.IDENTITY}, self._on_changes)

    # -- building ---------------------------------------------------------------------------

    def _build(self) -> None:
        self.queue = ProposalList()
        self.detail = ProposalDetail(self.desk.cairn.memories.limits)
        split = named(QSplitter(Qt.Orientation.Horizontal), "queueAndProposal")
        split.addWidget(self.queue)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self.status = named(plain_label(wordWrap=True), "status")
        layout = QVBoxLayout(self)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)

        queue, detail = self.queue, self.detail
        # The filters ask the store for the proposals they keep (which may lie past the most
        # seen LISTED); until 2026-12-01 kind and reason looked only inside the rows listed.
        for combo in queue.filters():
            combo.activated.connect(self.refresh)
        queue.table.currentCellChanged.connect(self._row_changed)
        queue.table.itemSelectionChanged.connect(queue.selection_changed)
        queue.adopt_selected.clicked.connect(self.adopt_many)
        queue.reject_selected.clicked.connect(self.reject_many)
        detail.adopt_current.clicked.connect(self._adopt_onto_current)
        self._key(detail.adopt_button, self.adopt, self.tr("A"))
        self._key(detail.reject_button, self.reject, self.tr("R"))
        self._letter(self.tr("E"), self.edit)
        tab_order(
            *queue.filters(),
            queue.table,
            queue.adopt_selected,
            queue.reject_selected,
            detail.diff,
            *detail.editors(),
            detail.reject_reason,
            detail.reject_button,
        )
        # The window opens with the keys on the list (Up/Down, A, R, E), not in the first
        # filter of the tab order, where Down chose another agent.
        queue.table.setFocus()
        self._show(None)

    def _key(self, button: QPushButton, slot: Any, key: str) -> None:
        """`button` runs `slot`, and so does `key` (see `_letter`)."""
        button.clicked.connect(slot)
        button.setToolTip(self.tr("Shortcut: {}").format(key))
        self._letter(key, slot)

    def _letter(self, key: str, slot: Any) -> None:
        """`key` runs `slot` while the list, the diff or the window itself has the focus. In a
        field, a drop-down list or a check box the letter is the person's typing: a combo box
        jumps to the entry it starts (with a window-wide shortcut, "A" typed in the agent
        filter adopted the proposal shown)."""
        for widget in (self.queue.table, self.detail.diff, self):
            shortcut = QShortcut(QKeySequence(key), widget)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
            shortcut.activated.connect(slot)

    # -- what others read -------------------------------------------------------------------

    def unsaved(self) -> bool:
        """Edits or reasons typed and not yet used (until 2026-11-30 a typed reject reason did
        not count, and Quit lost it without asking)."""
        typed = bool(self.detail.reject_reason.text().strip())
        return self.detail.dirty or bool(self._drafts) or typed or bool(self._reasons)

    def pending_count(self) -> int:
        """How many proposals wait (as of the last refresh), listed or not."""
        return self._waiting

    def current(self) -> Item | None:
        """The proposal in the detail pane, as last loaded."""
        return self.detail.item

    def current_id(self) -> str | None:
        return self.detail.item["id"] if self.detail.item else None

    def selected_ids(self) -> list[str]:
        return self.queue.selected_ids()

    # -- loading ----------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        self._stale = None  # hidden, the window did not follow what proposals would change
        super().showEvent(event)

    def refresh(self) -> None:
        held = frozenset(self._drafts) | frozenset(self._reasons)
        stale = self._stale
        known = {} if stale is None else {i["id"]: i for i in self._items if i["id"] not in stale}
        started = self.fetch(
            load,
            self.desk,
            held,
            self.queue.chosen(),
            known,
            self.queue.rows.generation,
            on_done=self._loaded,
            on_error=functools.partial(self._load_failed, stale),
        )
        if started:  # changes from now on are for the next load to read
            self._stale = set()

    def _load_failed(self, stale: set[str] | None, error: BaseException) -> None:
        """The list stays as last read, and says so: the proposals that load was to read again
        are still to be read (until 2026-12-01 a failed load forgot them, and the next one
        kept showing what they would change as it was), and the filters show what the rows
        were read for."""
        if self._stale is not None:
            self._stale = None if stale is None else self._stale | stale
        self.queue.show_chosen(self._filters)
        self._failed_note = self.tr(
            "The list was not reloaded, so it shows the proposals as last read. Why: {}"
        ).format(sentence(error))
        self.status.setText(self._failed_note)
        self.show_error(error)

    def _on_changes(self, changes: ChangeSet) -> None:
        """Reload for a change of the queue, or of what a listed proposal would change - not for
        every memory agents store meanwhile."""
        aimed = self._aimed_at(changes)
        if aimed and self._stale is not None:
            self._stale |= aimed
        if Topic.REVIEW in changes.topics or aimed:
            self.refresh_if_shown(changes)

    def _aimed_at(self, changes: ChangeSet) -> set[str]:
        """The listed proposals that would change a memory or identity document `changes`
        touch."""
        touched = {c.memory_id for c in changes.changes if c.memory_id}
        identity = Topic.IDENTITY in changes.topics
        return {
            i["id"]
            for i in self._items
            if i.get("target_id") in touched
            or i.get("replacement_id") in touched
            or (identity and i["op"] == "identity")
        }

    def _loaded(self, queue: Queue) -> None:
        if self._failed_note is not None:
            if self.status.text() == self._failed_note:  # the list is read again: no longer so
                self.status.clear()
            self._failed_note = None
        self._items, self._waiting = queue.items, queue.waiting
        self._filters, self._matching = queue.filters, queue.matching
        # Edits of a proposal decided elsewhere (`cairn review adopt`, another window) cannot
        # be kept: held on, Quit asked about them for good (until 2026-11-30).
        for sid in queue.gone:
            self._drafts.pop(sid, None)
            self._reasons.pop(sid, None)
        self.queue.fill_filters(queue.agents, queue.kinds, queue.reasons)
        self._fill_table(queue.made)

    def _fill_table(self, made: Made | None = None) -> None:
        current_id = self.current_id()
        shown, current_row = self.queue.fill(
            self._items,
            current_id,
            waiting=self._waiting,
            matching=self._matching if self._filters.narrow() else None,
            made=made,
        )
        self._follow(current_id, current_row, shown)
        self.queue.selection_changed()

    def _follow(self, current_id: str | None, current_row: int, shown: list[Item]) -> None:
        """After the rows changed: keep the proposal in the detail pane (and the person's edits
        of it), or move on to the first one shown."""
        fresh = self._item(current_id) if current_id is not None else None
        if fresh is not None and current_row >= 0:
            if self.detail.dirty:
                self.detail.follow(fresh)  # the target may have moved on: the edits stay
                if self._rewritten_under_edits == fresh["id"]:
                    # The person has now been told the new text: adopting holds them to it.
                    self._rewritten_under_edits = None
                    self.detail.shown = fresh
                    self.status.setText(
                        self.tr(
                            "The agent changed this proposal; it now reads “{}”. Your edits are "
                            "kept: adopt again to adopt your version over it."
                        ).format(one_line(str(fresh.get("content") or ""), 120))
                    )
            else:
                self._show(fresh)
        else:
            if fresh is not None:  # filtered out, not gone: keep the edits for later
                self._leave()
            elif self.detail.item is not None and self.detail.dirty:
                self.status.setText(
                    self.tr("The proposal you were editing was decided elsewhere or is gone.")
                )
            self._show(None)
            if shown:
                self.queue.table.setCurrentCell(0, 0)
                self._row_changed(0, 0, -1, -1)  # shows the first one

    # -- the detail pane --------------------------------------------------------------------

    def _item(self, sid: str) -> Item | None:
        return next((i for i in self._items if i["id"] == sid), None)

    def _row_changed(self, row: int, _col: int, _prev_row: int, _prev_col: int) -> None:
        sid = self.queue.id_at(row)
        item = self._item(sid) if sid is not None else None
        if item is self.detail.item:
            return
        self._leave()
        self._show(item)

    def _leave(self) -> None:
        """The pane moves from its proposal to another: the person's edits of it stay as a
        draft, and a reason typed for rejecting it stays with it (left in the field, R
        rejected the next proposal with it)."""
        item = self.detail.item
        if item is None:
            return
        if self.detail.dirty:
            self._drafts[item["id"]] = self.detail.snapshot()
        reason = self.detail.reject_reason.text()
        if reason.strip():
            self._reasons[item["id"]] = reason

    def _show(self, item: Item | None) -> None:
        """Fill the detail pane with `item` (its draft and reject reason, if the person left
        them). The same proposal read again keeps the reason in the field."""
        same = item is not None and item["id"] == self.current_id()
        draft = self._drafts.pop(item["id"], None) if item is not None else None
        self.detail.present(item, draft)
        if not same:
            self.detail.reject_reason.setText(
                self._reasons.pop(item["id"], "") if item is not None else ""
            )

    def edit(self) -> None:
        """Put the cursor at the end of the content editor (E): typing adds to the text."""
        if self.detail.content.isEnabled():
            self.detail.content.setFocus()
            self.detail.content.moveCursor(QTextCursor.MoveOperation.End)

    # -- deciding ---------------------------------------------------------------------------

    def adopt(self, *, if_revision: int | None = None, confirmed: str | None = None) -> None:
        """Adopt the proposal in the pane. `confirmed` is the id of the proposal the person
        agreed to forget with: if the pane moved on meanwhile, nothing is adopted."""
        item, shown = self.detail.item, self.detail.shown
        if item is None or shown is None:
            return
        if confirmed is not None and confirmed != item["id"]:
            self.status.setText(
                self.tr("Nothing was forgotten: the proposal you confirmed was decided elsewhere.")
            )
            return
        edits = self.detail.edits()
        if edits is None:
            return
        options = self.detail.options()
        if confirmed is None and (item["op"] == "forget" or options.get("action") == "forget"):
            sid = item["id"]
            self._confirm_forget([item], lambda: self.adopt(if_revision=if_revision, confirmed=sid))
            return
        if item["op"] == "feedback" and if_revision is None:
            # the memory as the person judged it: one changed since is a conflict
            if_revision = (shown.get("target") or {}).get("revision")
        sid = item["id"]
        fn = functools.partial(
            self.desk.cairn.review.adopt,
            self.desk.person,
            sid,
            edits=edits or None,
            if_revision=if_revision,
            if_content_hash=seen_hash(shown),
            **options,
        )
        self.status.setText(self.tr("Adopting…"))
        self.desk.call(
            fn,
            on_done=lambda d: self._decided(sid, self._adopted_text(d.memory_id, d.edited)),
            on_error=lambda e: self._adopt_failed(sid, e),
            owner=self,
        )

    def _adopted_text(self, target: str | None, edited: tuple[str, ...]) -> str:
        if edited:
            return self.tr("Adopted with your edits ({}): {}").format(
                ", ".join(edited), target or ""
            )
        return self.tr("Adopted: {}").format(target or "")

    def _adopt_onto_current(self) -> None:
        conflict = self.detail.conflict_data
        if conflict is not None:
            current = conflict.get("current_revision")
            self.adopt(if_revision=int(current) if current is not None else None)

    def _adopt_failed(self, sid: str, error: BaseException) -> None:
        if not isinstance(error, CairnError):
            self.status.setText(self.tr("Adopting failed."))
            self.show_error(error)
            return
        if self.current_id() != sid:
            self.status.setText(error.message)
            return
        if isinstance(error, Conflict) and self._stale is not None:
            self._stale.add(sid)  # read it, and what it would change, anew
        if isinstance(error, Conflict) and error.data.get("changed") == "proposal":
            # The agent sent another text meanwhile. Untouched, the pane shows it (a reload);
            # edited, the person's edits stay and the status quotes the new text - adopting
            # again adopts their version over it.
            if self.detail.dirty and self.detail.item is not None:
                self._rewritten_under_edits = sid
                self.status.setText(
                    self.tr(
                        "Not adopted: the agent changed this proposal since it was shown. Your "
                        "edits are kept; its new text follows here once loaded."
                    )
                )
            else:
                self.status.setText(
                    self.tr(
                        "Not adopted: the agent changed this proposal since it was shown. "
                        "Look again."
                    )
                )
            self.refresh()
            return
        if isinstance(error, Conflict):
            self.detail.show_conflict(error)
            self.status.setText(self.tr("Not adopted: the target changed."))
            # Show what the target is now; the person's edits stay in the form.
            self.refresh()
            return
        self.detail.show_refusal(error)
        self.status.setText(self.tr("Not adopted."))

    def reject(self) -> None:
        item = self.detail.item
        if item is None:
            return
        sid = item["id"]
        reason = self.detail.reject_reason.text().strip() or None
        self.desk.call(
            self.desk.cairn.review.reject,
            self.desk.person,
            sid,
            reason,
            on_done=lambda _d: self._decided(sid, self.tr("Rejected.")),
            on_error=self._reject_failed,
            owner=self,
        )

    def _reject_failed(self, error: BaseException) -> None:
        self.status.setText(self.tr("Not rejected."))
        self.show_error(error)

    def _decided(self, sid: str, text: str) -> None:
        self.status.setText(text)
        self._drafts.pop(sid, None)
        self._reasons.pop(sid, None)
        if self.current_id() == sid:
            self.detail.dirty = False
            self.detail.reject_reason.clear()
            table = self.queue.table
            row = table.currentRow()
            self._show(None)
            # Move on to the next proposal, the way the arrows would.
            if self._item(sid) is not None:  # listed: the filters kept it
                self._matching -= 1
            self._items = [i for i in self._items if i["id"] != sid]
            self._waiting -= 1
            self._fill_table()  # one row goes (the reload after it adds the next one listed)
            if 0 <= row < table.rowCount():
                table.setCurrentCell(row, 0)
            table.setFocus()  # the arrows and A, R, E go on from the next proposal
        self.refresh_after_write()

    def adopt_many(self) -> None:
        self._decide_many(adopt=True)

    def reject_many(self) -> None:
        self._decide_many(adopt=False)

    def _decide_many(self, *, adopt: bool, confirmed: list[str] | None = None) -> None:
        """Adopt or reject the selected proposals, unedited. `confirmed`: the ids the person
        agreed to decide after the question about forgetting - only those, whatever the
        selection has become meanwhile."""
        ids = confirmed if confirmed is not None else self.selected_ids()
        if not ids:
            return
        items = [i for i in (self._item(sid) for sid in ids) if i is not None]
        if adopt:
            edited = [
                s
                for s in ids
                if s in self._drafts or (s == self.current_id() and self.detail.dirty)
            ]
            if edited:  # adopting them unedited would drop what the person wrote
                self.status.setText(
                    self.tr(
                        "Not adopted: {} of the selected proposals hold your edits ({}). Adopt "
                        "them one by one, or discard the edits first."
                    ).format(len(edited), ", ".join(edited))
                )
                return
        forgets = [i for i in items if i["op"] == "forget"]
        if adopt and forgets and confirmed is None:
            chosen = [i["id"] for i in items]
            self._confirm_forget(forgets, lambda: self._decide_many(adopt=True, confirmed=chosen))
            return
        reason = None if adopt else (self.detail.reject_reason.text().strip() or None)
        fn = functools.partial(
            self.desk.cairn.review.decide_many,
            self.desk.person,
            ids,
            adopt=adopt,
            reason=reason,
            seen={i["id"]: seen_hash(i) for i in items},
        )
        self.desk.call(fn, on_done=lambda out: self._many_done(adopt, ids, out), owner=self)

    def _many_done(self, adopt: bool, ids: list[str], outcomes: list[Any]) -> None:
        failed = [
            (sid, o) for sid, o in zip(ids, outcomes, strict=True) if isinstance(o, CairnError)
        ]
        done = len(outcomes) - len(failed)
        text = (self.tr("Adopted {} of {}.") if adopt else self.tr("Rejected {} of {}.")).format(
            done, len(outcomes)
        )
        if failed:
            # one line per reason, naming the proposals it stopped (not the same words twelve times)
            by_reason: dict[str, list[str]] = {}
            for sid, error in failed:
                by_reason.setdefault(error.message, []).append(sid)
            text += " " + self.tr("Not done: {}").format(
                "; ".join(f"{', '.join(sids)}: {message}" for message, sids in by_reason.items())
            )
        self.status.setText(text)
        decided = {
            sid for sid, o in zip(ids, outcomes, strict=True) if not isinstance(o, CairnError)
        }
        for sid in decided:  # the drafts (and reasons) of proposals still waiting stay
            self._drafts.pop(sid, None)
            self._reasons.pop(sid, None)
        if self.current_id() in decided:
            self.detail.dirty = False
        self.refresh_after_write()

    def _confirm_forget(self, items: list[Item], go: Callable[[], None]) -> None:
        """Ask before adopting proposals that forget memories for good, Cancel the default."""
        box = plain_box(self)
        box.setObjectName("forgetConfirm")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(self.tr("Forget for good?"))
        if len(items) == 1:
            target = (items[0].get("target") or {}).get("content") or items[0].get("target_id")
            box.setText(
                self.tr("Adopting this forgets “{}” for good.").format(one_line(str(target), 80))
            )
        else:
            box.setText(self.tr("Adopting forgets {} memories for good.").format(len(items)))
        box.setInformativeText(
            self.tr(
                "Their words are erased from every revision, from the search index and from the "
                "audit log. This cannot be undone."
            )
        )
        forget = box.addButton(self.tr("Forget"), QMessageBox.ButtonRole.DestructiveRole)
        forget.setObjectName("confirmForget")
        box.setDefaultButton(box.addButton(QMessageBox.StandardButton.Cancel))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        forget.clicked.connect(go)
        box.finished.connect(lambda _r: setattr(self, "confirm", None))
        self.confirm = box
        box.open()


def seen_hash(item: Item) -> str | None:
    """The hash of the proposal's text as the window shows it: adopting checks it is still the
    text waiting (an agent may have sent a fuller one meanwhile)."""
    content = item.get("content")
    return content_hash(content) if content is not None else None
