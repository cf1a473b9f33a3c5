"""The settings window: where Cairn keeps your data, the notes folder, the backup schedule and its
backups, the language of the windows, and starting with the system."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QDateTime, QLocale, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from core.autostart import Autostart, Found, Report
from core.autostart_entries import Kind
from core.backup_folder import PRE_MIGRATION, BackupInfo
from core.changes import Topic
from core.knob import Value
from core.knobs import KNOB_BY_NAME
from core.settings import Settings
from desktop.desk import Desk, ToolWindow
from desktop.i18n import LANGUAGES, SYSTEM, chosen
from desktop.knobs import knob_help
from desktop.person_check import ASK_TERMINALS_TOO
from desktop.widgets import losing_edits_question, named, plain_label, plain_tip


@dataclass(frozen=True)
class SettingsView:
    """What the window shows, read off the GUI thread."""

    settings: Settings
    backups: list[BackupInfo]
    autostart: Report


class SettingsWindow(ToolWindow):
    """Settings a person changes here are written into settings.toml and apply at once."""

    name = "settings"
    default_size = (720, 700)

    def __init__(self, desk: Desk) -> None:
        super().__init__(desk)
        self.language_question: QMessageBox | None = None  # asked before unsaved edits go
        self.setWindowTitle(self.tr("Cairn — Settings"))
        self.view: SettingsView | None = None
        self.autostart_entries = Autostart.here()
        self._autostart_said = ""  # what the last tick or untick did, until the next load
        layout = QVBoxLayout(self)
        layout.addWidget(self._location_box())
        layout.addWidget(self._notes_box())
        layout.addWidget(self._backup_box(), 1)
        layout.addWidget(self._desktop_box())
        desk.live.on(self, {Topic.SETTINGS}, self.refresh_if_shown)

    # -- building --------------------------------------------------------------------------

    def _location_box(self) -> QGroupBox:
        box = QGroupBox(self.tr("Where your data is"))
        form = QFormLayout(box)
        paths = self.desk.cairn.paths
        self.locations: dict[str, QLineEdit] = {}
        for key, label, path in (
            ("database", self.tr("Database"), paths.database),
            ("config", self.tr("Settings and policy"), paths.config),
            ("backups", self.tr("Backups"), paths.backups),
        ):
            field = named(QLineEdit(str(path)), f"path.{key}")
            field.setReadOnly(True)
            copy = named(QPushButton(self.tr("Copy")), f"copy.{key}", self.tr("Copy the path."))
            copy.clicked.connect(functools.partial(self._copy, field))
            row = QHBoxLayout()
            row.addWidget(field, 1)
            row.addWidget(copy)
            form.addRow(label, row)
            self.locations[key] = field
        return box

    def _notes_box(self) -> QGroupBox:
        box = QGroupBox(self.tr("Notes folder"))
        self.notes_folder = named(QLineEdit(), "notesFolder", knob_help("notes.folder"))
        self.notes_folder.setReadOnly(True)
        self.notes_folder.setPlaceholderText(self.tr("Off"))
        choose = named(
            QPushButton(self.tr("Choose &folder…")),
            "chooseNotes",
            self.tr("Keep the markdown notes in a folder as memories."),
        )
        choose.clicked.connect(self._choose_notes)
        self.notes_off = named(
            QPushButton(self.tr("&Turn off")),
            "notesOff",
            self.tr("Stop following the folder. Its notes' memories stay as they are."),
        )
        self.notes_off.clicked.connect(lambda: self.set_notes_folder(""))
        row = QHBoxLayout()
        row.addWidget(self.notes_folder, 1)
        row.addWidget(choose)
        row.addWidget(self.notes_off)
        layout = QVBoxLayout(box)
        layout.addLayout(row)
        return box

    def _backup_box(self) -> QGroupBox:
        box = QGroupBox(self.tr("Backups"))
        form = QFormLayout()
        interval = KNOB_BY_NAME["backup.interval_hours"]
        self.interval = named(QDoubleSpinBox(), "backupInterval", knob_help(interval.name))
        self.interval.setRange(interval.minimum or 0, interval.maximum or 8760)
        self.interval.setDecimals(2)  # 36 s steps: one decimal made 0.04 h "Off"
        self.interval.setSuffix(self.tr(" h"))
        self.interval.setSpecialValueText(self.tr("Off"))
        self.keep_daily = self._count_box("backup.keep_daily", "keepDaily")
        self.keep_weekly = self._count_box("backup.keep_weekly", "keepWeekly")
        self.spins: dict[str, QAbstractSpinBox] = {
            "backup.interval_hours": self.interval,
            "backup.keep_daily": self.keep_daily,
            "backup.keep_weekly": self.keep_weekly,
        }
        for name, spin in self.spins.items():
            spin.setKeyboardTracking(False)  # typing applies on Enter or leaving the field
            spin.editingFinished.connect(functools.partial(self._spin_done, name))
        form.addRow(self.tr("Back up every"), self.interval)
        form.addRow(self.tr("Daily backups kept"), self.keep_daily)
        form.addRow(self.tr("Weekly backups kept"), self.keep_weekly)
        self.backup_now = named(
            QPushButton(self.tr("&Back up now")),
            "backupNow",
            self.tr("Copy the database now, into the backups folder."),
        )
        self.backup_now.clicked.connect(self._back_up)
        self.backups = named(QTableWidget(0, 3), "backupList", self.tr("Backups, newest first."))
        self.backups.setHorizontalHeaderLabels([self.tr("Taken"), self.tr("Why"), self.tr("Size")])
        self.backups.verticalHeader().hide()
        self.backups.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.backups.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.backups.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        layout = QVBoxLayout(box)
        layout.addLayout(form)
        layout.addWidget(self.backup_now)
        layout.addWidget(self.backups, 1)
        return box

    def _count_box(self, name: str, object_name: str) -> QSpinBox:
        knob = KNOB_BY_NAME[name]
        spin = named(QSpinBox(), object_name, knob_help(name))
        spin.setRange(int(knob.minimum or 0), int(knob.maximum or 1000))
        return spin

    def _desktop_box(self) -> QGroupBox:
        box = QGroupBox(self.tr("This computer"))
        form = QFormLayout(box)
        self.language = named(
            QComboBox(), "language", self.tr("The language of Cairn's windows and tray menu.")
        )
        self.language.addItem(self.tr("System"), SYSTEM)
        for code, label in LANGUAGES.items():  # each named in its own language
            self.language.addItem(label, code)
        self.language.setCurrentIndex(max(self.language.findData(chosen(self.desk.prefs)), 0))
        self.language.currentIndexChanged.connect(self._language_chosen)
        self.autostart = named(
            QCheckBox(self.tr("Start Cairn when I log in")),
            "autostart",
            self.tr(
                "The tray starts with your desktop session, from this installation. Nothing "
                "starts or stops now. The same as `cairn autostart enable` and `disable`."
            ),
        )
        self.autostart.clicked.connect(self._autostart_clicked)
        self.autostart_note = named(plain_label(), "autostartNote")
        self.autostart_note.setWordWrap(True)
        self.confirm_terminals = named(
            QCheckBox(self.tr("Ask me here about my commands typed at a terminal too")),
            "confirmTerminals",
            self.tr(
                "Commands for you (adopting proposals, changing the policy or agents) run "
                "without a terminal are always asked about here. Ticked, those typed at a "
                "terminal are too, so a program that fakes a terminal still needs your click."
            ),
        )
        self.confirm_terminals.clicked.connect(self._confirm_terminals_clicked)
        language_row = QHBoxLayout()
        language_row.addWidget(self.language)
        language_row.addStretch(1)
        form.addRow(self.tr("Language"), language_row)
        form.addRow(self.autostart)
        form.addRow(self.autostart_note)
        form.addRow(self.confirm_terminals)
        return box

    # -- loading ---------------------------------------------------------------------------

    def refresh(self) -> None:
        cairn, entries = self.desk.cairn, self.autostart_entries
        self.desk.call(
            lambda: SettingsView(cairn.config.current(), cairn.backups.list(), entries.status()),
            on_done=self._show,
            owner=self,
        )

    def _show(self, view: SettingsView) -> None:
        self.view = view
        settings = view.settings
        self.notes_folder.setText(settings.text("notes.folder"))
        self.notes_off.setEnabled(bool(settings.text("notes.folder")))
        self.confirm_terminals.setChecked(settings.flag(ASK_TERMINALS_TOO))
        for name, spin in self.spins.items():
            if spin.hasFocus():
                continue  # the person is typing here: never overwrite an edit in progress
            spin.blockSignals(True)
            if isinstance(spin, QDoubleSpinBox):
                spin.setValue(settings.number(name))
            elif isinstance(spin, QSpinBox):
                spin.setValue(settings.integer(name))
            spin.blockSignals(False)
        self._show_backups(view.backups)
        self._show_autostart(view.autostart)

    def _why(self, reason: str) -> str:
        """Why a backup was taken, in the person's language (its file name keeps Cairn's word)."""
        if reason == "scheduled":
            return self.tr("scheduled")
        if reason == "manual":
            return self.tr("by you")
        if reason.startswith(PRE_MIGRATION):
            step = reason.removeprefix(PRE_MIGRATION).strip("-").replace("-to-", " → ")
            return self.tr("before an upgrade {}").format(step).strip()
        return reason

    def _show_backups(self, backups: list[BackupInfo]) -> None:
        locale = QLocale()
        self.backups.setRowCount(len(backups))
        for row, info in enumerate(backups):
            taken = QDateTime.fromMSecsSinceEpoch(info.created_at_ms).toString(
                "yyyy-MM-dd HH:mm:ss"
            )
            cells = (taken, self._why(info.reason), locale.formattedDataSize(info.size))
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(plain_tip(str(info.path)))
                self.backups.setItem(row, column, item)

    def _show_autostart(self, report: Report) -> None:
        tray = next((f for f in report.enabled if f.kind is Kind.TRAY), None)
        headless = next((f for f in report.enabled if f.kind is Kind.HEADLESS), None)
        self.autostart.setChecked(tray is not None)
        notes = [self._autostart_said] if self._autostart_said else []
        self._autostart_said = ""
        if tray is not None and headless is not None:
            notes.append(
                self.tr(
                    "The headless daemon starts when you log in too: whichever starts first "
                    "holds your memories. Untick and tick the box to keep only the tray."
                )
            )
        elif headless is not None:
            notes.append(
                self.tr(
                    "The headless daemon starts when you log in (`cairn autostart enable "
                    "--headless`). Ticking the box starts the tray instead."
                )
            )
        if tray is not None:
            notes.append(self._tray_note(tray))
        self.autostart_note.setText(" ".join(notes))
        self.autostart_note.setVisible(bool(notes))

    def _tray_note(self, tray: Found) -> str:
        if not tray.current:
            return self.tr(
                "Its entry (%1) starts another installation or version of Cairn. Untick and "
                "tick the box to start this one."
            ).replace("%1", tray.path)
        return self.tr("Its entry: %1.").replace("%1", tray.path)

    # -- changes ---------------------------------------------------------------------------

    def change(self, name: str, value: Value) -> None:
        """Write one setting (off the GUI thread); the window refreshes from the change."""
        self.desk.call(
            self.desk.cairn.config.set,
            self.desk.person,
            name,
            value,
            on_error=self._failed,
            owner=self,
        )

    def _failed(self, error: BaseException) -> None:
        self.show_error(error)
        self.refresh()

    def _spin_done(self, name: str) -> None:
        spin = self.spins[name]
        if self.view is None:
            return
        if isinstance(spin, QDoubleSpinBox):
            typed, stored = spin.value(), self.view.settings.number(name)
            # a finer value from the file shows rounded: leaving the field must not write that
            if spin.textFromValue(typed) == spin.textFromValue(stored):
                return
            value: Value = typed
            current: Value = stored
        elif isinstance(spin, QSpinBox):
            value = spin.value()
            current = self.view.settings.integer(name)
        else:
            return
        if value != current:
            self.change(name, value)

    def _confirm_terminals_clicked(self, checked: bool) -> None:
        self.change(ASK_TERMINALS_TOO, checked)

    def _autostart_clicked(self, checked: bool) -> None:
        """Write the tray's autostart entry (removing the headless daemon's: never both), or
        remove every entry - off the GUI thread (on Windows a shortcut is made by PowerShell)."""
        entries = self.autostart_entries
        self.autostart.setEnabled(False)
        self.desk.call(
            (lambda: entries.enable(Kind.TRAY)) if checked else entries.disable,
            on_done=self._autostart_done,
            on_error=self._autostart_failed,
            owner=self,
        )

    def _autostart_done(self, report: Report) -> None:
        if report.written is None:
            said = [self.tr("Cairn no longer starts when you log in. This one keeps running.")]
        else:
            said = [self.tr("It takes effect at your next login.")]
            if any(f.kind is Kind.HEADLESS for f in report.removed):
                said.insert(
                    0,
                    self.tr(
                        "The headless daemon no longer starts when you log in: only one of the "
                        "two can."
                    ),
                )
        self._autostart_said = " ".join(said)
        self.autostart.setEnabled(True)
        self.refresh()

    def _autostart_failed(self, error: BaseException) -> None:
        self.autostart.setEnabled(True)
        self._failed(error)

    def _choose_notes(self) -> None:
        start = self.notes_folder.text() or str(Path.home())
        folder = QFileDialog.getExistingDirectory(self, self.tr("Notes folder"), start)
        if folder:
            self.set_notes_folder(folder)

    def set_notes_folder(self, folder: str) -> None:
        """Follow this folder from now on ("" turns the notes folder off)."""
        self.change("notes.folder", folder)

    def _back_up(self) -> None:
        self.backup_now.setEnabled(False)
        self.desk.call(
            self.desk.cairn.backups.backup,
            "manual",
            on_done=lambda _info: self._backed_up(),
            on_error=self._backup_failed,
            owner=self,
        )

    def _backed_up(self) -> None:
        self.backup_now.setEnabled(True)
        self.refresh()

    def _backup_failed(self, error: BaseException) -> None:
        self.backup_now.setEnabled(True)
        self.show_error(error)

    def _language_chosen(self) -> None:
        choice = str(self.language.currentData())
        desk, kind = self.desk, type(self)

        def switch() -> None:  # after this slot returns: switching rebuilds this window too
            desk.set_language(choice, reopen=kind)

        unsaved = desk.unsaved()
        if not unsaved:
            QTimer.singleShot(0, switch)
            return
        # Rebuilding the windows would lose what the person typed: ask, Cancel the default.
        box, change, cancel = losing_edits_question(
            self,
            "languageConfirm",
            self.tr("Change the language?"),
            self.tr(
                "Changing the language reopens every window. Unsaved edits in {} would be lost."
            ).format(", ".join(w.windowTitle() for w in unsaved)),
            (self.tr("Change and lose them"), "confirmLanguage"),
        )
        change.clicked.connect(lambda: QTimer.singleShot(0, switch))
        cancel.clicked.connect(self._keep_language)
        # closed any other way (the title bar's X, Alt+F4): the language stays as well
        box.finished.connect(lambda _r: self._language_question_closed(box, change))
        self.language_question = box
        box.open()

    def _language_question_closed(self, box: QMessageBox, change: QPushButton) -> None:
        if box.clickedButton() is not change:
            self._keep_language()
        if self.language_question is box:
            self.language_question = None

    def _keep_language(self) -> None:
        """The person kept their edits: the choice shows the language still in use."""
        self.language.blockSignals(True)
        self.language.setCurrentIndex(max(self.language.findData(chosen(self.desk.prefs)), 0))
        self.language.blockSignals(False)

    @staticmethod
    def _copy(field: QLineEdit) -> None:
        clipboard = QGuiApplication.clipboard()
        clipboard.setText(field.text())
