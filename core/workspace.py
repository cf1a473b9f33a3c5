"""Canonical workspace ids: one id per real directory, however its path is spelled."""

from __future__ import annotations

import os
import re
import secrets
import threading

from core.errors import Conflict, InvalidInput, NotFound
from core.model import Workspace
from core.scanner import secret_rule
from core.store import Store
from core.validation import refuse_control_in_path

WORKSPACE_ID_PREFIX = "ws_"  # a workspace's id: this and 16 hex digits
WORKSPACE_ID = re.compile(rf"{WORKSPACE_ID_PREFIX}[0-9a-f]{{16}}")  # the only shape Cairn makes


def new_workspace_id() -> str:
    """A fresh workspace id (`WORKSPACE_ID`'s shape)."""
    return WORKSPACE_ID_PREFIX + secrets.token_hex(8)


def canonical_path(raw: str) -> str:
    """Resolve `~`, `..`, symlinks and trailing slashes to the directory's real absolute path.

    Raises:
        InvalidInput: the path is empty, relative, or not an existing directory.
    """
    text = raw.strip() if isinstance(raw, str) else ""
    if not text:
        raise InvalidInput("workspace path is empty", data={"field": "workspace"})
    # a NUL cannot reach the file system; an escape sequence or a line break would reach a
    # person's terminal in `cairn workspace list` (until 2026-11-30 only NUL was refused)
    refuse_control_in_path("workspace", text, label="workspace path")
    expanded = os.path.expanduser(text)
    if not os.path.isabs(expanded):
        raise InvalidInput(
            f"workspace path {raw!r} is relative; send an absolute path (or one starting with ~)",
            data={"field": "workspace"},
        )
    real = os.path.realpath(expanded)
    # the folder recorded, reached through a link with a clean name, too (until 2026-11-30 only
    # the path as given was checked)
    refuse_control_in_path("workspace", real, label="workspace path")
    rule = secret_rule(real)
    if rule is not None:  # a workspace's path is recorded and shown: never a secret
        raise InvalidInput(
            f"the folder's path looks like it holds a secret (rule {rule}); Cairn will not record "
            "it as a workspace - rename the folder",
            data={"field": "workspace", "rule": rule, "reason_code": "secret"},
        )
    if not os.path.isdir(real):
        raise InvalidInput(
            f"workspace {raw!r} is not an existing directory", data={"field": "workspace"}
        )
    return os.path.normcase(real)


def refuse_move_onto(ref: str, ws_id: str, path: str, holder: tuple[str, str] | None) -> None:
    """Refuse moving the workspace `ws_id` (named `ref` by the person) to the folder `path` when
    a workspace is there already: `holder`, its (id, path), or None when none is.

    Raises:
        InvalidInput: the workspace is already at `path` - nothing to move.
        Conflict: another workspace has that folder; the two can be merged instead.
    """
    if holder is None:
        return
    if holder[0] == ws_id:
        raise InvalidInput(
            f"workspace {ref} is already at {path}: nothing to move",
            data={"field": "to", "path": path, "id": ws_id},
        )
    raise Conflict(
        f"{path} is already a workspace ({holder[0]}); use `cairn workspace merge` to fold them",
        data={"path": path, "id": holder[0]},
    )


class WorkspaceRegistry:
    """Maps canonical directory paths to stable workspace ids (registering new ones on demand)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._by_path: dict[str, str] = {}
        self._lock = threading.Lock()

    def resolve(self, raw_path: str) -> Workspace:
        """The workspace for a directory, created on first use."""
        path = canonical_path(raw_path)
        with self._lock:
            known = self._by_path.get(path)
        if known is not None:
            return self.get(known)
        ws = self._store.writer.run(lambda tx: self._register(tx, path))
        with self._lock:
            self._by_path[path] = ws.id
        return ws

    def _register(self, tx: object, path: str) -> Workspace:
        tables = self._store.write_tables
        row = tables.Workspace.get_or_none(tables.Workspace.path == path)
        if row is None:
            now = self._store.clock.now_ms()
            row = tables.Workspace.create(id=new_workspace_id(), path=path, created_at=now)
        return Workspace(row.id, row.path, row.created_at, os.path.isdir(row.path))

    def get(self, workspace_id: str) -> Workspace:
        tables = self._store.read_tables
        row = tables.Workspace.get_or_none(tables.Workspace.id == workspace_id)
        if row is None:
            raise NotFound(f"workspace {workspace_id} not found", data={"id": workspace_id})
        return Workspace(row.id, row.path, row.created_at, os.path.isdir(row.path))

    def list(self) -> list[Workspace]:
        tables = self._store.read_tables
        return [
            Workspace(r.id, r.path, r.created_at, os.path.isdir(r.path))
            for r in tables.Workspace.select().order_by(tables.Workspace.path)
        ]

    def forget_cache(self) -> None:
        with self._lock:
            self._by_path.clear()
