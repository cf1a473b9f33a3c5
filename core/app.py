"""The composition root: the only place that resolves paths, settings and the store, and wires
the services together. Adapters receive a `Cairn` and call its services."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass

from core import __version__, audit, old_names
from core.activity import Activity
from core.agents import AgentService
from core.allowlist import Allowlist
from core.archive import ArchiveService
from core.atomic_file import FileNotWritten
from core.backup import BackupService, backup_before_migration
from core.changes import ChangeBus
from core.clock import BootClock, Clock, ClockWatch, SystemClock
from core.context_bundle import ContextBuilder
from core.errors import CairnError, NotRunning
from core.failures import BackgroundFailures
from core.governance import Gate, Redactor
from core.health import HealthService, Warnings
from core.identity import IdentityService
from core.keychain import TokenStore, open_token_store
from core.lifecycle import Lifecycle
from core.memory_service import MemoryService
from core.model import Caller
from core.notes import NotesFolder
from core.paths import Paths, ensure_private_dir
from core.policy import POLICY_FILE
from core.policy_file import PolicyService
from core.replaced_store import FileGone, Kept
from core.review import ReviewService
from core.review_decisions import ReviewDecisions
from core.review_queue import ReviewQueue
from core.runtime import socket_path
from core.search import SearchService
from core.search_index import SearchIndex
from core.settings import Settings, load_settings
from core.settings_file import SettingsService
from core.similarity import NearDuplicates
from core.store import Store
from core.usage import UsageRecorder
from core.validation import Limits
from core.workspace import WorkspaceRegistry

log = logging.getLogger(__name__)


RENAMES_WARNING = "policy_renames"


def _carry_renames(store: Store, paths: Paths, tokens: TokenStore, warnings: Warnings) -> None:
    """Bring the policy file and the token store in line with names the store renamed (schema
    2.1, `core.old_names`), before the policy is read. A keychain or file that refuses now - a
    policy file that is not UTF-8 or not valid TOML too, which Health then names - is tried
    again at the next start; the store keeps the renames to carry until then."""

    # Nearly every store has nothing to carry: a read, not a write job, at every open; the
    # keychain and the file are changed outside the write transaction, the store told after.
    renames = old_names.to_carry(store.read_db.conn())
    if not renames:
        return
    try:
        old_names.carry_renames(renames, paths.config / POLICY_FILE, tokens)
        store.writer.run(lambda tx: old_names.carried(tx.conn))
    except (old_names.NotCarried, FileNotWritten) as e:  # a file not written: only logged,
        warnings.set(RENAMES_WARNING, str(e))  # with no file named, until 2026-12-01
        log.warning("%s", e)
    except (CairnError, OSError) as e:
        log.warning("could not carry renamed names to the policy file or token store: %s", e)


@dataclass
class Cairn:
    """One open Cairn: its files, settings, store and services."""

    paths: Paths
    settings: Settings
    clock: Clock
    bus: ChangeBus
    store: Store
    usage: UsageRecorder
    memories: MemoryService
    workspaces: WorkspaceRegistry
    search: SearchService
    context: ContextBuilder
    failures: BackgroundFailures
    agents: AgentService
    activity: Activity
    warnings: Warnings
    health: HealthService
    policy: PolicyService
    review: ReviewService
    allowlist: Allowlist
    identity: IdentityService
    lifecycle: Lifecycle
    notes: NotesFolder
    backups: BackupService
    archive: ArchiveService
    config: SettingsService  # changing settings.toml while running; `settings` is as started
    gate: Gate  # the one write gate every service shares (hello checks its identifiers with it)
    clock_watch: ClockWatch  # whether housekeeping may act on time now; health's clock warnings
    started_at_ms: int = 0
    shutdown_hook: Callable[[str], None] | None = None

    @classmethod
    def open(
        cls,
        paths: Paths,
        *,
        settings: Settings | None = None,
        clock: Clock | None = None,
        boot_clock: BootClock | None = None,
    ) -> Cairn:
        """Open the user's store and build the services. `boot_clock` (the system's by default)
        tells a clock that was set from one that ran (`core.clock.ClockWatch`).

        Raises:
            ConfigInvalid: settings.toml has problems (each listed with its key and reason).
            AlreadyRunning, IntegrityFailure, SchemaTooNew, StoreUnavailable: see `Store.open`.
        """
        for directory in (paths.data, paths.config, paths.state):
            ensure_private_dir(directory)
        settings = settings or load_settings(paths.settings_file)
        clock = clock or SystemClock()
        clock_watch = ClockWatch(clock, boot_clock)
        bus = ChangeBus()
        failures = BackgroundFailures()

        def back_up_first(from_version: int, to_version: int) -> None:
            backup_before_migration(paths.database, paths.backups, from_version, to_version, clock)

        store = Store.open(
            paths.database,
            settings,
            bus,
            clock,
            lock_path=paths.store_lock,
            failures=failures,
            before_migrate=back_up_first,
        )
        # Whatever fails from here on (a damaged table, a service refusing its settings) must
        # not leave the store locked and its threads running: the next open in this process
        # would be told the store is "already open in another Cairn process" - this one.
        with ExitStack() as undo:
            undo.callback(store.close)
            clock_watch.started(audit.newest_at(store.read_db.conn()))
            usage = UsageRecorder(
                store, settings.integer("usage.flush_interval_ms"), failures, clock
            )
            undo.callback(usage.close)
            warnings = Warnings()
            if store.log_set_aside is not None:
                warnings.set(
                    "log_set_aside",
                    f"the write-ahead log beside {paths.database} was not its own (applied, it "
                    "broke a file that is sound on its own: was a backup put in its place?); it "
                    f"is kept as {store.log_set_aside} and the database opened without it",
                )
            tokens, no_keychain = open_token_store(paths)
            _carry_renames(store, paths, tokens, warnings)
            allowlist = Allowlist(store, clock)
            policy = PolicyService(
                store, clock, warnings, paths.config / POLICY_FILE, Limits(settings).kinds
            )
            undo.callback(policy.close)
            gate = Gate(policy.current, allowlist.fingerprints)
            near = NearDuplicates(store)
            queue = ReviewQueue(settings, near)
            memories = MemoryService(
                store,
                settings,
                clock,
                usage,
                gate=gate,
                proposals=queue,
                redactor=Redactor(allowlist.fingerprints),
                near=near,
                observers=[SearchIndex(), queue],
            )
            identity = IdentityService(
                store,
                clock,
                settings,
                gate=gate,
                redactor=memories.redactor,
                proposals=queue,
            )
            identity.seed()
            decisions = ReviewDecisions(
                store, clock, memories, gate=gate, allowlist=allowlist, identity=identity
            )
            review = ReviewService(store, clock, decisions)
            workspaces = WorkspaceRegistry(store)
            lifecycle = Lifecycle(
                store, memories, workspaces, settings=settings, clock=clock, warnings=warnings
            )
            notes = NotesFolder(
                memories, store, settings, clock, failures, warnings, workspaces=workspaces
            )
            undo.callback(notes.close)
            memories.follow_notes(notes.file_state)
            search = SearchService(
                store,
                clock,
                memories,
                agents_may_broaden=settings.flag("search.agents_may_broaden"),
            )
            context = ContextBuilder(search, settings)
            if no_keychain:
                warnings.set("no_keychain", no_keychain)
                log.warning(no_keychain)
            activity = Activity(bus=bus)
            undo.callback(activity.close)
            backups = BackupService(store, paths, settings, clock, failures)
            config = SettingsService(paths.settings_file, settings, bus)
            config.follow(("notes.folder", "notes.kind", "notes.scope"), notes.reconfigure)
            config.follow(
                ("backup.interval_hours", "backup.keep_daily", "backup.keep_weekly"), backups.use
            )
            health = HealthService(
                store,
                paths=paths,
                clock=clock,
                activity=activity,
                failures=failures,
                warnings=warnings,
                notes_errors=notes.errors,
                clock_warnings=clock_watch.warnings,
            )
            cairn = cls(
                paths=paths,
                settings=settings,
                clock=clock,
                bus=bus,
                store=store,
                usage=usage,
                memories=memories,
                workspaces=workspaces,
                search=search,
                context=context,
                failures=failures,
                agents=AgentService(store, clock, tokens),
                activity=activity,
                warnings=warnings,
                health=health,
                policy=policy,
                review=review,
                allowlist=allowlist,
                identity=identity,
                lifecycle=lifecycle,
                notes=notes,
                backups=backups,
                archive=ArchiveService(
                    store,
                    clock,
                    paths=paths,
                    memories=memories,
                    workspaces=workspaces,
                    gate=gate,
                    observers=(SearchIndex(),),
                    identity_max_bytes=settings.integer("identity.max_bytes"),
                ),
                config=config,
                gate=gate,
                clock_watch=clock_watch,
                started_at_ms=clock.now_ms(),
            )
            undo.pop_all()  # built: the caller's close() releases it all from here
            return cairn

    def server_limits(self) -> dict[str, float | int]:
        """The socket server's limits, as `capabilities` and `hello` report them."""
        names = (
            "max_frame_bytes",
            "frame_timeout_s",
            "idle_timeout_s",
            "hello_timeout_s",
            "max_connections",
            "max_in_flight",
            "max_push_backlog_bytes",
        )
        return {n: self.settings.value(f"server.{n}") for n in names}  # type: ignore[misc]

    @property
    def committed_seq(self) -> int:
        """The sequence number of the last committed change (what `changes.since` counts)."""
        return self.store.committed_seq

    def request_shutdown(self, why: str) -> None:
        """Ask whoever runs this Cairn (the daemon or the tray) to stop cleanly."""
        if self.shutdown_hook is None:
            raise NotRunning("this Cairn has no server to stop")
        self.shutdown_hook(why)

    def status(self, caller: Caller) -> dict[str, object]:
        """What `cairn status` shows: process, files, and counts - an agent's own share only."""
        counts = self.health.snapshot(caller)
        return {
            "pid": os.getpid(),
            "version": __version__,
            "socket": str(socket_path(self.paths)),
            "database": str(self.paths.database),
            "started_at": self.started_at_ms,
            "memories": counts["total"],
            "expired": counts["expired_awaiting_purge"],  # counted in `memories`, not listed
            "by_scope": counts["memories"].get("scope", {}),
            "connections": counts["connections"]["now"] if caller.is_human else None,
            "token_store": self.agents.tokens.where,
            "review_pending": counts["review"]["pending"] if caller.is_human else None,
            "capture_paused": self.policy.current().paused,
            "warnings": counts["warnings"] if caller.is_human else {},
        }

    def close(self, *, gone: FileGone | None = None) -> Kept:
        """Flush recall counts, stop the writer and release the store. `gone`: its file went
        from under it - what `Store.close` then keeps is returned."""
        self.activity.close()
        self.policy.close()
        self.notes.close()
        self.usage.close()
        return self.store.close(gone=gone)
