"""The capture-policy file and the policy in effect, kept in step.

The file (`<config>/policy.toml`) is the truth. Cairn applies a valid edit within a second, keeps
the last valid policy when an edit is invalid (and says which line is wrong in health), and writes
changes made through Cairn back into the same file - atomically, keeping the person's comments.
The last policy that applied is also kept in the database, so an invalid file at start-up falls
back to what the person last had, not to the defaults.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from tomlkit.items import Table

from core import audit
from core.atomic_file import write_atomically
from core.changes import ChangeSet, Topic
from core.clock import Clock, refuse_before_floor
from core.errors import CairnError, Forbidden, InvalidInput
from core.health import Warnings
from core.model import Caller
from core.paths import file_identity
from core.policy import (
    DEFAULT_TEXT,
    Mode,
    Policy,
    PolicyInvalid,
    dumps_policy,
    parse_policy,
    policy_from_dict,
    with_mode,
    without_override,
)
from core.store import Store
from core.toml_text import TextRefused, read_text, unreadable
from core.writer import WriteTx

log = logging.getLogger(__name__)


def render_changes(text: str, policy: Policy) -> str:
    """`text` (the file as the person left it) with `policy`'s values written in, comments and
    layout kept. Values equal to what the file already says are left untouched."""
    doc = tomlkit.parse(text)

    def set_key(table: Any, key: str, value: object) -> None:
        if table.get(key) != value:
            table[key] = value

    set_key(doc, "paused", policy.paused)
    set_key(doc, "other_kinds", policy.other_kinds.value)
    set_key(doc, "extracted", policy.extracted.value)
    kinds = doc.get("kinds")
    if not isinstance(kinds, Table):
        kinds = tomlkit.table()
        doc["kinds"] = kinds
    for kind, mode in policy.kinds.items():
        set_key(kinds, kind, mode.value)
    scopes = doc.get("scopes")
    if not isinstance(scopes, Table):
        scopes = tomlkit.table()
        doc["scopes"] = scopes
    for scope, mode in policy.scopes.items():
        set_key(scopes, scope.value, mode.value)
    agents = doc.get("agents")
    if policy.agents or agents is not None:
        if not isinstance(agents, Table):
            agents = tomlkit.table(is_super_table=True)
            doc["agents"] = agents
        for name in [n for n in agents if n not in policy.agents]:
            del agents[name]
        for name, rule in policy.agents.items():
            wanted = rule.to_dict()
            current = agents.get(name)
            if current is None or current.unwrap() != wanted:
                entry = tomlkit.table()
                for key, value in wanted.items():
                    if isinstance(value, dict):
                        inline = tomlkit.inline_table()
                        inline.update(value)
                        entry[key] = inline
                    else:
                        entry[key] = value
                agents[name] = entry
    return tomlkit.dumps(doc)


def write_policy(path: Path, policy: Policy) -> None:
    """Write `policy` as a fresh policy file (the default file's comments, these values)."""
    write_atomically(
        path, render_changes(DEFAULT_TEXT, policy), what="policy file", folder_mode=0o700
    )


def _existing(folder: str) -> str:
    """`folder`, or the nearest folder above it that exists."""
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder


# -- the live policy ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyChange:
    """A new policy took effect: from the file (`source="file"`) or through Cairn (`"cairn"`)."""

    policy: Policy
    source: str
    actor: str


class PolicyHolder:
    """The policy in effect, the file behind it, and the watcher that keeps them in step.

    `on_change` is called (on the watcher's thread, or the caller's for `update`) after a new
    policy took effect; `on_invalid` with the reason (or None once the file is valid again).
    """

    def __init__(
        self,
        path: Path,
        known_kinds: Sequence[str],
        *,
        last_valid: Policy | None,
        on_change: Callable[[PolicyChange], None],
        on_invalid: Callable[[str | None], None],
    ) -> None:
        self.path = path
        self._known = tuple(known_kinds)
        self._on_change = on_change
        self._on_invalid = on_invalid
        self._lock = threading.RLock()
        self._text: str | None = None
        self._observer: Any = None
        # folder -> watchdog's watch of it, and the folder's (device, inode) when it began
        self._watches: dict[str, tuple[Any, tuple[int, int] | None]] = {}
        self._timer: threading.Timer | None = None
        # The timer has a lock of its own: watchdog's thread schedules a read holding its
        # observer's lock, and a read re-watching folders holds `_lock` while it stops a watch,
        # which takes the observer's lock - under `_lock` the two waited for each other for good
        # (until 2026-12-01: Cairn hung at its stop).
        self._timer_lock = threading.Lock()
        self._handler: Any = None
        # A file gone while Cairn was stopped is not a wish for the defaults (that would lift
        # a pause): the policy last in effect is written back, and the person told.
        restored = False
        if not path.exists():
            # Through a link not yet leading to a file (a dotfile manager's, its file still to
            # come), the file it leads to: writing the path replaced the link (until 2026-12-01).
            target = Path(os.path.realpath(path))
            if path.is_symlink() and not target.parent.is_dir():
                # Its folder is not there yet either (a checkout still to clone): as when it
                # goes while Cairn runs - the policy last in effect (or the defaults), health
                # says the file is missing, its folder is watched for. Cairn did not start at
                # all (until 2026-12-01).
                log.warning("policy file %s leads into %s, which does not exist", path, target)
            else:
                write_atomically(
                    target,
                    render_changes(DEFAULT_TEXT, last_valid or Policy()),
                    what="policy file",
                )
                restored = last_valid is not None
        self._policy = last_valid or Policy()
        self._load(announce=False)  # at start-up there is no change to announce
        if restored:
            self._on_invalid(
                f"{path.name} was missing when Cairn started; the policy in effect before was "
                "written back to it"
            )

    @property
    def policy(self) -> Policy:
        return self._policy

    def _load(self, *, announce: bool = True) -> None:
        with self._lock:
            self._follow()
            text = self._read()
            if text is None:
                return
            if text == self._text:
                return
            self._text = text
            if not text.strip():
                # An editor saving in place truncates the file first: read in between, it is
                # empty, which must not read as every rule at its default (lifting a pause).
                self._on_invalid(
                    f"{self.path.name} is empty (perhaps still being saved); the last valid "
                    "policy stays in effect"
                )
                return
            try:
                policy = parse_policy(text, self._known)
            except PolicyInvalid as e:
                log.warning("policy file %s: %s; keeping the last valid policy", self.path, e)
                self._on_invalid(f"{self.path.name} {e}; the last valid policy stays in effect")
                return
            except Exception as e:  # a bug in reading it: never the watcher's (or start's) end
                log.exception("policy file %s could not be read", self.path)
                self._on_invalid(
                    f"{self.path.name} could not be applied ({type(e).__name__}: {e}); the "
                    "last valid policy stays in effect"
                )
                return
            self._on_invalid(None)
            changed = policy != self._policy
            self._policy = policy
        if changed and announce:
            self._on_change(PolicyChange(policy, "file", "policy file"))

    def _read(self) -> str | None:
        """The file's text; None, with the warning given, when there is none to read."""
        try:
            return read_text(self.path)  # never waited on, never past 1 MiB; a BOM left out
        # Read again once it is back: the same text must clear the warning (until 2026-11-30
        # a file moved away and back unchanged left "missing" in health for good).
        except FileNotFoundError:
            problem = f"{self.path} is missing"
        except TextRefused as e:  # a FIFO, a device, a folder, a file far too big
            problem = f"{self._where()} {e}"
            log.warning("policy file %s; keeping the last valid policy", problem)
        except (OSError, UnicodeDecodeError) as e:
            problem = f"{self.path} cannot be read: {unreadable(e, self.path)}"
        self._text = None
        self._on_invalid(f"{problem}; the last valid policy stays in effect")
        return None

    def reload(self) -> None:
        """Read the file again now (the watcher calls this; tests may too)."""
        self._load()

    def update(self, changes: Callable[[Policy], Policy], *, actor: str) -> Policy:
        """Apply a change made through Cairn: write it into the file (comments kept) and make it
        the policy in effect. Raises PolicyInvalid when the result is not a valid policy, and
        FileNotWritten when the file cannot be written (a full disk); either way nothing
        changes."""
        with self._lock:
            self._refuse_over_an_invalid_file()
            wanted = changes(self._policy)
            base = self._text if self._text and self._text.strip() else DEFAULT_TEXT
            try:
                text = render_changes(base, wanted)
                check = parse_policy(text, self._known)
            except tomlkit.exceptions.TOMLKitError:
                text = render_changes(DEFAULT_TEXT, wanted)
                check = parse_policy(text, self._known)
            # Into the file a symlinked policy.toml points to: replacing the link with a file
            # would cut it from the person's dotfiles.
            target = Path(os.path.realpath(self.path))
            write_atomically(
                target, text, what="policy file", outcome="the policy in effect is unchanged"
            )
            self._text = text
            self._policy = check
            self._on_invalid(None)
        self._on_change(PolicyChange(check, "cairn", actor))
        return check

    def _where(self) -> str:
        """The file as a message names it: with the file a symbolic link leads to."""
        if not self.path.is_symlink():
            return str(self.path)
        return f"{self.path} (a link to {os.path.realpath(self.path)})"

    def _refuse_over_an_invalid_file(self) -> None:
        """A change is written into the person's file: over one that does not parse it would
        drop their edits (rebuilt from the template, or the last valid values over theirs)."""
        try:
            text = read_text(self.path)
        except FileNotFoundError:
            return  # nothing to keep: the change writes a whole file
        except TextRefused as e:  # the change would replace what is there: said, not done
            raise PolicyInvalid(f"{self._where()} {e}; fix it first") from e
        except (OSError, UnicodeDecodeError) as e:
            raise PolicyInvalid(
                f"{self.path} cannot be read: {unreadable(e, self.path)}; fix it first"
            ) from e
        if not text.strip():
            return  # caught mid-save, or emptied: nothing of the person's to keep either
        try:
            parse_policy(text, self._known)
            tomlkit.parse(text)  # what writes the change in, keeping comments (parse_policy's
            # tomllib takes some text it does not: rebuilt from the template, it lost them)
        except PolicyInvalid as e:
            raise PolicyInvalid(
                f"{self.path.name} is not valid ({e.reason}); fix it first - a change made now "
                "would overwrite your edits in it",
                e.line,
            ) from e
        except tomlkit.exceptions.TOMLKitError as e:
            raise PolicyInvalid(
                f"{self.path.name} cannot be changed keeping its layout ({e}); fix it first",
                getattr(e, "line", None),
            ) from e

    # -- watching --------------------------------------------------------------------------

    def watch(self) -> None:
        """Start watching the file's directory (editors save by writing a temporary file and
        moving it over the original, so moves count as much as modifications) - and, when the
        file is a symbolic link (a dotfile manager's), the directory of the file it points to,
        followed again whenever the link changes. (Until 2026-11-30 the path was resolved once
        and only the config directory watched: edits to a link's target were never seen.)"""
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        holder = self
        link = os.path.abspath(self.path)

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                target = os.path.realpath(holder.path)  # again each time: the link may move
                paths = [event.src_path, getattr(event, "dest_path", "")]
                for p in (os.path.abspath(os.fsdecode(p)) for p in paths if p):
                    if p == link or os.path.realpath(p) == target:
                        holder._schedule()
                        return
                    # A folder on the way to the file made, moved or deleted (one gone is
                    # watched from the nearest folder still there): watch the new one.
                    on_the_way = (target + os.sep).startswith(p + os.sep) or (
                        link + os.sep
                    ).startswith(p + os.sep)
                    if on_the_way and event.event_type in ("created", "moved", "deleted"):
                        holder._schedule()
                        return

        observer = Observer()
        observer.daemon = True
        self._handler = Handler()
        with self._lock:
            self._observer = observer
            self._follow()
        try:
            observer.start()
        except OSError as e:  # the folder went meanwhile (deleted as Cairn started, say)
            with self._lock:
                self._observer = None  # never started: nothing to stop at close
                self._watches.clear()
            log.warning(
                "cannot watch %s for edits (%s); an edit applies at the next start or through "
                "`cairn policy set`",
                self.path,
                e.strerror or e,
            )
            return
        # Read again: an edit saved since the file was read at start (Cairn opens the store,
        # then listens, then watches) raised no event seen here.
        self._load()

    def _follow(self) -> None:
        """Watch the config directory and the directory the file really lives in (the same
        one unless policy.toml is a symbolic link) - or, while one is gone, the nearest folder
        above it still there, to see it made again; stop watching one no longer needed. A
        folder deleted and made again is a new folder: watchdog's watch of the old one has
        ended (until 2026-12-01 it was kept, and the new folder never watched)."""
        if self._observer is None:
            return
        for _ in range(8):  # again while folders are being made (`mkdir -p`) meanwhile
            wanted = {
                _existing(os.path.abspath(self.path.parent)),
                _existing(os.path.dirname(os.path.realpath(self.path))),
            }
            alive = {e.watch for e in self._observer.emitters if e.is_alive()}
            for folder, (watch, began) in list(self._watches.items()):
                ended = self._observer.is_alive() and watch not in alive
                if folder not in wanted or ended or file_identity(folder) != began:
                    with contextlib.suppress(KeyError, OSError):
                        self._observer.unschedule(watch)
                    del self._watches[folder]
            if wanted <= self._watches.keys():
                return
            for folder in wanted - self._watches.keys():
                began = file_identity(folder)
                try:
                    watch = self._observer.schedule(self._handler, folder, recursive=False)
                except OSError as e:  # gone again meanwhile: the next pass finds its parent
                    log.warning("cannot watch %s for the policy file: %s", folder, e)
                    continue
                self._watches[folder] = (watch, began)

    def _schedule(self) -> None:
        # Several events arrive for one save; read once they have settled.
        with self._timer_lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(0.1, self._load)
            self._timer.daemon = True
            self._timer.start()

    def close(self) -> None:
        with self._timer_lock:
            if self._timer is not None:
                self._timer.cancel()
        with self._lock:
            observer, self._observer = self._observer, None
            self._watches.clear()
        if observer is not None:
            observer.stop()
            observer.join(5)


class PolicyService:
    """The capture policy for everyone else: what is in effect, changes made through Cairn
    (a person's only), and the bookkeeping - an audit event on every change (so windows and
    agents hear of it on the change channel), the last valid policy kept in the database, and
    a health warning while the file is invalid."""

    WARNING = "policy_invalid"

    def __init__(
        self,
        store: Store,
        clock: Clock,
        warnings: Warnings,
        path: Path,
        known_kinds: Sequence[str],
    ) -> None:
        self._store = store
        self._clock = clock
        self._warnings = warnings
        self._known = tuple(known_kinds)
        saved = (
            store.read_db.conn().execute("SELECT value FROM meta WHERE key = 'policy'").fetchone()
        )
        last_valid = None
        if saved is not None:
            with contextlib.suppress(PolicyInvalid, ValueError):
                last_valid = policy_from_dict(json.loads(saved[0]), self._known)
        self._holder = PolicyHolder(
            path,
            self._known,
            last_valid=last_valid,
            on_change=self._changed,
            on_invalid=self._invalid,
        )
        if last_valid != self._holder.policy:  # first start, or the file changed while stopped
            self._save(
                self._holder.policy,
                source="file",
                actor="policy file (changed while Cairn was stopped)",
                audit_it=last_valid is not None,  # a change like any other, not the first start
            )

    @property
    def path(self) -> Path:
        return self._holder.path

    def current(self) -> Policy:
        return self._holder.policy

    def watch(self) -> None:
        self._holder.watch()

    def reload(self) -> None:
        self._holder.reload()

    def close(self) -> None:
        self._holder.close()

    def set(self, caller: Caller, target: str, value: Mode | bool) -> Policy:
        """Change one setting (see `policy.with_mode` for the targets) as a person.

        Raises:
            Forbidden: the caller is not a person.
            InvalidInput: an unknown setting or value.
            FileNotWritten: the policy file cannot be written (a full disk); the policy is
                unchanged.
            ClockWrong: the clock reads before 2026 (`core.clock.FLOOR_MS`).
        """
        if not caller.is_human:
            raise Forbidden(
                "only a person can change the capture policy: agents propose, humans decide"
            )
        refuse_before_floor(self._clock.now_ms())
        try:
            return self._holder.update(
                lambda p: with_mode(p, target, value, self._known), actor=caller.actor
            )
        except PolicyInvalid as e:
            raise InvalidInput(str(e), data={"field": target}) from e

    def remove_override(self, caller: Caller, name: str, rule: str) -> Policy:
        """Drop one of agent `name`'s overrides (`kinds.<kind>`, `scopes.<scope>`, `extracted`);
        the agent's section goes when it has none left.

        Raises:
            Forbidden: the caller is not a person.
            InvalidInput: the policy file is not valid (its line and why); an override that is
                not there changes nothing.
        """
        if not caller.is_human:
            raise Forbidden("only a person can change the capture policy")
        refuse_before_floor(self._clock.now_ms())
        try:
            return self._holder.update(
                lambda p: without_override(p, name, rule), actor=caller.actor
            )
        except PolicyInvalid as e:  # until 2026-11-30 it reached the surface as a bug
            raise InvalidInput(str(e), data={"field": f"agents.{name}.{rule}"}) from e

    def _changed(self, change: PolicyChange) -> None:
        self._save(change.policy, source=change.source, actor=change.actor, audit_it=True)

    def _save(self, policy: Policy, *, source: str, actor: str, audit_it: bool) -> None:
        text = dumps_policy(policy)

        def job(tx: WriteTx) -> None:
            tx.conn.execute(
                "INSERT INTO meta (key, value) VALUES ('policy', ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (text,),
            )
            if audit_it:
                who = Caller.human() if source == "cairn" else Caller.system()
                audit.record(
                    tx,
                    who,
                    "policy_changed",
                    detail={"source": source, "by": actor, "paused": policy.paused},
                    at=self._clock.now_ms(),
                )

        try:
            self._store.writer.run(job)
        except CairnError as e:  # the store is closing: the file still holds the policy
            log.warning("could not record the policy change: %s", e.message)

    def _invalid(self, message: str | None) -> None:
        if message is None:
            if self.WARNING in self._warnings.items:
                self._warnings.clear(self.WARNING)
                self._store.bus.publish(ChangeSet((), frozenset({Topic.HEALTH, Topic.POLICY})))
            return
        self._warnings.set(self.WARNING, message)
        self._store.bus.publish(ChangeSet((), frozenset({Topic.HEALTH, Topic.POLICY})))
