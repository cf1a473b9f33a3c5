"""The composition root: the only place that resolves paths, settings and the store, and wires
the services together. Adapters receive a `Cairn` and call its services."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from core.changes import ChangeBus
from core.clock import Clock, SystemClock
from core.context_bundle import ContextBuilder
from core.failures import BackgroundFailures
from core.memory_service import MemoryService
from core.paths import Paths, ensure_private_dir
from core.search import SearchService
from core.search_index import SearchIndex
from core.settings import Settings, load_settings
from core.store import Store
from core.usage import UsageRecorder
from core.workspace import WorkspaceRegistry

log = logging.getLogger(__name__)


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

    @classmethod
    def open(
        cls,
        paths: Paths,
        *,
        settings: Settings | None = None,
        clock: Clock | None = None,
    ) -> Cairn:
        """Open the user's store and build the services.

        Raises:
            ConfigInvalid: settings.toml has problems (each listed with its key and reason).
            AlreadyRunning, IntegrityFailure, SchemaTooNew, StoreUnavailable: see `Store.open`.
        """
        for directory in (paths.data, paths.config, paths.state):
            ensure_private_dir(directory)
        settings = settings or load_settings(paths.settings_file)
        clock = clock or SystemClock()
        bus = ChangeBus()
        failures = BackgroundFailures()
        store = Store.open(
            paths.database, settings, bus, clock, lock_path=paths.store_lock, failures=failures
        )
        usage = UsageRecorder(store, settings.integer("usage.flush_interval_ms"), failures, clock)
        memories = MemoryService(store, settings, clock, usage, observers=[SearchIndex()])
        workspaces = WorkspaceRegistry(store)
        search = SearchService(
            store, clock, memories, agents_may_broaden=settings.flag("search.agents_may_broaden")
        )
        context = ContextBuilder(search, settings)
        return cls(
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
        )

    def close(self) -> None:
        """Flush recall counts, stop the writer and release the store."""
        self.usage.close()
        self.store.close()
