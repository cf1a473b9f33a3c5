"""The export and import window: write your memories into one archive file (all of them, or some
scopes and projects), and bring an archive or a JSON-lines file in - previewed first, then
confirmed, because what it brings in lands as your own decision."""

from __future__ import annotations

import functools
from datetime import date
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from core.archive import ImportReport, Manifest
from core.changes import Topic
from core.model import Scope
from core.wording import visible
from desktop.desk import Desk, ToolWindow
from desktop.presenter import sentence
from desktop.widgets import named, plain_box, plain_label

ID_ROLE = Qt.ItemDataRole.UserRole
SHOWN_PROBLEMS = 50  # lines of an import report's problems; the rest are counted


def default_export_path(today: date | None = None) -> Path:
    return Path.home() / f"cairn-export-{(today or date.today()).isoformat()}.zip"


class ArchiveWindow(ToolWindow):
    """Export and import, a person's actions; each runs off the GUI thread with a busy bar."""

    name = "archive"
    default_size = (720, 720)

    def __init__(self, desk: Desk) -> None:
        super().__init__(desk)
        self.setWindowTitle(self.tr("Cairn — Export and import"))
        self.manifest: Manifest | None = None  # the last export's
        self.report: ImportReport | None = None  # the last preview's or import's
        self.confirmation: QMessageBox | None = None
        self.busy = named(QProgressBar(), "busy", self.tr("Working…"))
        self.busy.setRange(0, 0)  # indeterminate: the service reports no progress
        self.busy.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self._export_box(), 3)
        layout.addWidget(self._import_box(), 2)
        layout.addWidget(self.busy)
        desk.live.on(self, {Topic.WORKSPACES}, self.refresh_if_shown)

    # -- building --------------------------------------------------------------------------

    def _export_box(self) -> QGroupBox:
        box = QGroupBox(self.tr("Export"))
        scopes_row = QHBoxLayout()
        scopes_row.addWidget(plain_label(self.tr("Scopes:")))
        self.scopes: dict[Scope, QCheckBox] = {}
        labels = {
            Scope.GLOBAL: self.tr("Global"),
            Scope.USER: self.tr("User"),
            Scope.PROJECT: self.tr("Project"),
            Scope.SESSION: self.tr("Session"),
        }
        for scope in Scope:
            check = named(QCheckBox(labels[scope]), f"scope.{scope.value}")
            check.setChecked(True)
            check.toggled.connect(self._export_ready)
            self.scopes[scope] = check
            scopes_row.addWidget(check)
        scopes_row.addStretch(1)
        self.workspaces = named(
            QListWidget(),
            "workspaces",
            self.tr(
                "Projects whose memories to include. Select none to include every project; "
                "global and user memories are not affected."
            ),
        )
        self.workspaces.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        self.out_path = named(QLineEdit(str(default_export_path())), "exportPath")
        self.out_path.textChanged.connect(self._export_ready)
        choose = named(
            QPushButton(self.tr("&Choose…")), "chooseExport", self.tr("Where to save the archive.")
        )
        choose.clicked.connect(self._choose_export)
        where = QHBoxLayout()
        where.addWidget(plain_label(self.tr("Save to:")))
        where.addWidget(self.out_path, 1)
        where.addWidget(choose)
        self.export_button = named(
            QPushButton(self.tr("&Export")),
            "export",
            self.tr("Write the archive. It holds your memories' full text: keep it private."),
        )
        self.export_button.clicked.connect(self.export)
        self.export_summary = named(QPlainTextEdit(), "exportSummary")
        self.export_summary.setReadOnly(True)
        layout = QVBoxLayout(box)
        layout.addLayout(scopes_row)
        layout.addWidget(plain_label(self.tr("Projects (none selected: all of them):")))
        layout.addWidget(self.workspaces, 1)
        layout.addLayout(where)
        layout.addWidget(self.export_button, 0, Qt.AlignmentFlag.AlignRight)
        layout.addWidget(self.export_summary, 1)
        return box

    def _import_box(self) -> QGroupBox:
        box = QGroupBox(self.tr("Import"))
        self.in_path = named(
            QLineEdit(),
            "importPath",
            self.tr("A Cairn archive (.zip) or a JSON-lines file of memories (.jsonl)."),
        )
        self.in_path.textChanged.connect(self._import_ready)
        choose = named(QPushButton(self.tr("C&hoose…")), "chooseImport")
        choose.clicked.connect(self._choose_import)
        self.preview_button = named(
            QPushButton(self.tr("&Preview (dry run)")),
            "preview",
            self.tr("Show what the import would do, changing nothing."),
        )
        self.preview_button.clicked.connect(self.preview)
        self.import_button = named(
            QPushButton(self.tr("&Import…")),
            "import",
            self.tr("Bring the file in, after you confirm."),
        )
        self.import_button.clicked.connect(self.ask_to_import)
        row = QHBoxLayout()
        row.addWidget(plain_label(self.tr("File:")))
        row.addWidget(self.in_path, 1)
        row.addWidget(choose)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.preview_button)
        buttons.addWidget(self.import_button)
        self.import_summary = named(QPlainTextEdit(), "importSummary")
        self.import_summary.setReadOnly(True)
        layout = QVBoxLayout(box)
        layout.addLayout(row)
        layout.addLayout(buttons)
        layout.addWidget(self.import_summary, 1)
        self._import_ready()
        return box

    # -- loading ---------------------------------------------------------------------------

    def refresh(self) -> None:
        lifecycle, person = self.desk.cairn.lifecycle, self.desk.person
        self.desk.call(lifecycle.workspaces, person, on_done=self._show_workspaces, owner=self)

    def _show_workspaces(self, workspaces: list[dict[str, Any]]) -> None:
        chosen = {item.data(ID_ROLE) for item in self.workspaces.selectedItems()}
        self.workspaces.clear()
        for w in workspaces:
            # A folder's name from before 2026-11-30 may hold a control character: as a marker.
            text = self.tr("{} (%n memories)", "", w["memories"]).format(visible(w["path"]))
            if not w["exists"]:
                text += " " + self.tr("— folder missing")
            item = QListWidgetItem(text)
            item.setData(ID_ROLE, w["id"])
            self.workspaces.addItem(item)
            item.setSelected(w["id"] in chosen)

    # -- export ----------------------------------------------------------------------------

    def _chosen_scopes(self) -> frozenset[Scope]:
        return frozenset(s for s, check in self.scopes.items() if check.isChecked())

    def _export_ready(self) -> None:
        self.export_button.setEnabled(
            bool(self._chosen_scopes()) and bool(self.out_path.text().strip()) and not self._busy()
        )

    def _choose_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, self.tr("Export to"), self.out_path.text(), self.tr("Cairn archives (*.zip)")
        )
        if path:
            self.out_path.setText(path)

    def export(self) -> None:
        scopes = self._chosen_scopes()
        if not scopes:
            return
        every = scopes == frozenset(Scope)
        ids = frozenset(str(i.data(ID_ROLE)) for i in self.workspaces.selectedItems())
        out = Path(self.out_path.text().strip()).expanduser()
        self._start()
        self.export_summary.setPlainText(self.tr("Exporting…"))
        work = functools.partial(
            self.desk.cairn.archive.export,
            self.desk.person,
            out,
            scopes=frozenset() if every else scopes,
            workspace_ids=ids,
        )
        self.desk.call(
            work,
            on_done=self._exported,
            on_error=self._export_failed,
            owner=self,
        )

    def _exported(self, manifest: Manifest) -> None:
        self._stop()
        self.manifest = manifest
        self.export_summary.setPlainText(self.describe_manifest(manifest))

    def describe_manifest(self, manifest: Manifest) -> str:
        counts = manifest.counts
        lines = [
            self.tr("Exported {} ({}) to {}.").format(
                self.tr("%n memories", "", counts["memories"]),
                self.tr("%n revisions", "", counts["revisions"]),
                visible(self.out_path.text().strip()),
            ),
            *self._not_importable(manifest),
            "",
            self.tr("Records per file:"),
        ]
        lines += [f"  {name}: {n}" for name, n in counts["files"].items()]
        left = {k: v for k, v in manifest.left_out.items() if v}
        lines.append("")
        if left:
            lines.append(self.tr("Left out:"))
            lines += [f"  {name}: {n}" for name, n in left.items()]
        else:
            lines.append(self.tr("Nothing was left out."))
        lines += self._audit_problems(manifest.audit)
        return "\n".join(lines)

    def _not_importable(self, manifest: Manifest) -> list[str]:
        """A warning for each project another Cairn will not import (an old store's folder whose
        name holds a control character), first, so the archive is not taken for whole."""
        lines = [
            self.tr(
                "Warning: the folder of project {0} ({1}) holds a control character in its "
                "name. Another Cairn does not take such a folder, so the %n memories of this "
                "project are not imported there. Move the project to a clean folder "
                "(`cairn workspace move {1} NEW-FOLDER`) and export again.",
                "",
                int(w["memories"]),
            ).format(visible(str(w["path"])), w["id"])
            for w in manifest.workspaces_not_importable
        ]
        return ["", *lines] if lines else []

    def _audit_problems(self, audit: dict[str, Any]) -> list[str]:
        """What the archive's audit log could not hold (the manifest's `audit`), never silent."""
        lines = [
            self.tr("Audit log: lines of {} that could not be read, left out: {}").format(
                bad["file"], bad["count"]
            )
            for bad in audit.get("unreadable_lines", [])
        ]
        missing = (audit.get("missing_seqs") or {}).get("count", 0)
        if missing:
            lines.append(
                self.tr(
                    "Audit log: events missing (in no rotated file and not in the database): {}"
                ).format(missing)
            )
        other = sum(int(f["events"]) for f in audit.get("other_history", []))
        if other:
            lines.append(
                self.tr(
                    "Audit log: events of another history (a replaced database) not included: {} "
                    "(kept in the state directory's audit/ folder)"
                ).format(other)
            )
        return ["", *lines] if lines else []

    # -- import ----------------------------------------------------------------------------

    def _import_ready(self) -> None:
        ready = bool(self.in_path.text().strip()) and not self._busy()
        self.preview_button.setEnabled(ready)
        self.import_button.setEnabled(ready)

    def _choose_import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            self.tr("Import from"),
            str(Path.home()),
            self.tr("Cairn archives and JSON lines (*.zip *.jsonl);;All files (*)"),
        )
        if path:
            self.in_path.setText(path)

    def _import_path(self) -> Path:
        return Path(self.in_path.text().strip()).expanduser()

    def preview(self) -> None:
        self._run_import(dry_run=True)

    def ask_to_import(self) -> None:
        """Ask before importing: nothing an import brings in goes through review."""
        box = named(plain_box(self), "confirmImport")
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(self.tr("Import memories?"))
        box.setText(
            self.tr(
                "Import {}? What it brings in lands without review as your own decision."
            ).format(self._import_path())
        )
        box.setInformativeText(self.tr("Preview it first if you are not sure what it holds."))
        yes = named(box.addButton(self.tr("Import"), QMessageBox.ButtonRole.AcceptRole), "yes")
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(lambda _r: self._confirmed(box.clickedButton() is yes))
        self.confirmation = box
        box.open()

    def _confirmed(self, yes: bool) -> None:
        self.confirmation = None
        if yes:
            self._run_import(dry_run=False)

    def _run_import(self, *, dry_run: bool) -> None:
        path = self._import_path()
        self._start()
        self.import_summary.setPlainText(
            self.tr("Reading the file…") if dry_run else self.tr("Importing…")
        )
        work = functools.partial(
            self.desk.cairn.archive.import_, self.desk.person, path, dry_run=dry_run
        )
        self.desk.call(
            work,
            on_done=self._imported,
            on_error=self._import_failed,
            owner=self,
        )

    def _imported(self, report: ImportReport) -> None:
        self._stop()
        self.report = report
        self.import_summary.setPlainText(self.describe_report(report))

    def describe_report(self, report: ImportReport) -> str:
        if report.dry_run:
            head = self.tr(
                "Preview of {} (nothing was changed): it would add %n memories.", "", report.added
            )
        else:
            head = self.tr("Imported {}: added %n memories.", "", report.added)
        lines = [head.format(report.path)]
        counts = {
            self.tr("updated"): report.updated,
            self.tr("revisions added to memories already here"): report.updated_revisions,
            self.tr("unchanged (already here)"): report.unchanged,
            self.tr("skipped: you forgot them"): report.skipped_forgotten,
            self.tr("refused (a secret)"): report.refused,
            self.tr("lines that are not a valid memory"): report.errors,
            self.tr("conflicts (this store's copy kept)"): len(report.conflicts),
            self.tr("released (what replaced them is not here)"): len(report.released),
            self.tr("relations added"): report.relations_added,
            self.tr("identity versions added"): report.identity_added,
            self.tr("workspaces added"): report.workspaces_added,
        }
        lines += [f"  {label}: {n}" for label, n in counts.items() if n]
        problems = [line for line in report.lines if line.get("status") != "stored"]
        if problems:
            lines += ["", self.tr("Lines not taken in:")]
            for line in problems[:SHOWN_PROBLEMS]:
                why = line.get("message") or line.get("reason") or line.get("reason_code") or ""
                lines.append(self.tr("  line {}: {}").format(line["line"], why))
            if len(problems) > SHOWN_PROBLEMS:
                lines.append(
                    self.tr(
                        "  … and {} more (`cairn import --dry-run FILE` lists them all)"
                    ).format(len(problems) - SHOWN_PROBLEMS)
                )
        if report.secrets:
            lines += ["", self.tr("Memories not taken in (a secret):")]
            lines += [f"  {i['id']}: {i['reason']}" for i in report.secrets[:SHOWN_PROBLEMS]]
        if report.not_imported:
            lines += [
                "",
                self.tr("Never imported from an archive: {}.").format(
                    ", ".join(report.not_imported)
                ),
            ]
        return "\n".join(lines)

    # -- busy ------------------------------------------------------------------------------

    def _busy(self) -> bool:
        return not self.busy.isHidden()

    def _start(self) -> None:
        self.busy.show()
        self._export_ready()
        self._import_ready()

    def _stop(self) -> None:
        self.busy.hide()
        self._export_ready()
        self._import_ready()

    def _export_failed(self, error: BaseException) -> None:
        self._stop()
        self.export_summary.setPlainText(self.tr("The export failed: {}").format(sentence(error)))
        self.show_error(error)

    def _import_failed(self, error: BaseException) -> None:
        self._stop()
        self.import_summary.setPlainText(self.tr("The import failed: {}").format(sentence(error)))
        self.show_error(error)
