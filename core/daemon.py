"""Running Cairn as a service: claim the socket, open the store, serve, keep house, stop cleanly.

`Runtime` is used by both the headless daemon (`cairn serve`, a plain asyncio loop) and the tray
application (the same coroutines inside Qt's loop through qasync).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from core import __version__, protocol
from core.app import Cairn
from core.atomic_file import write_atomically
from core.backup_copy import BackupStopped
from core.clock import Clock
from core.errors import AlreadyRunning, ConfigInvalid
from core.janitor import Janitor
from core.paths import Paths
from core.replaced_store import FileGone
from core.runtime import (
    claim_socket_path,
    prepare_runtime_dir,
    refuse_if_serving,
    socket_path,
    socket_peer,
)
from core.server import Server
from core.settings import Settings

log = logging.getLogger("cairn")

PID_FILE = "cairn.pid"
# How long the tray waits for a headless Cairn it asked to stop: it finishes the requests in
# flight, closes the store and removes its socket (about a second when idle).
HANDOVER_WAIT_S = 30.0
# How often a serving Cairn looks whether its socket file and its database are still there.
FILE_CHECK_S = 2.0
# How long a starting Cairn waits for another that holds the store and serves nothing (one
# starting, or one closing the store after a stop): less than a client waits for the socket
# (core.client.START_TIMEOUT), so the client hears why when it gives up.
STORE_WAIT_S = 15.0


class StoppedBeforeServing(Exception):
    """A stop was asked for (a signal, the tray's Quit) while the runtime waited for the store:
    nothing was served, nothing is wrong."""


class Runtime:
    """One serving Cairn: its store, its server, its housekeeping."""

    def __init__(
        self,
        paths: Paths,
        *,
        settings: Settings | None = None,
        janitor_interval: float = 3600.0,
        confirm_human: Callable[[protocol.Session], str | None] | None = None,
        file_check_interval: float = FILE_CHECK_S,
        clock: Clock | None = None,
    ) -> None:
        """`confirm_human` decides whether a connection asking to act for a person may (None:
        yes, else why not) - the tray's confirmation dialog; without it, the terminal check.
        Every `file_check_interval` seconds the runtime looks whether its socket file and its
        database are still the ones it opened, and stops when not. `clock`: the store's (the
        system's by default)."""
        self.paths = paths
        self._clock = clock
        self._confirm_human = confirm_human
        self._settings = settings
        self._janitor_interval = janitor_interval
        self._file_check_interval = file_check_interval
        self._own_files: dict[Path, tuple[int, int] | None] = {}  # path -> (device, inode) at start
        # Why it stopped on its own when its socket file or database went (else None): the tray
        # tells the person, who sees it vanish.
        self.lost: str | None = None
        self._gone: FileGone | None = None  # how its database went, when that stopped it
        self.socket = socket_path(paths)  # refuses a path too long for a socket, up front
        self.cairn: Cairn | None = None
        self.server: Server | None = None
        self._stop: asyncio.Event | None = None
        self._stop_asked: str | None = None  # why a stop was asked before the runtime was up
        self._tasks: list[asyncio.Task[None]] = []
        # Housekeeping rounds run here: cancelling the task that waits for one does not stop
        # the thread, so stopping waits for it before the store closes under it.
        self._housekeeper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-house")
        # Set (from any thread) as soon as a stop is asked: a round in progress ends at its next
        # step or audit rotation chunk, so the stop waits for one step, not the whole round
        # (until 2026-12-01 it waited for a first rotation of a big store, ~12 s).
        self._stopping = threading.Event()

    @property
    def pid_file(self) -> Path:
        return self.paths.runtime / PID_FILE

    async def start(self) -> None:
        """Check the runtime directory, make sure no other Cairn serves, open the store, listen.

        Raises:
            RuntimeUnsafe: the runtime directory is a symlink, foreign, or open to others.
            AlreadyRunning: another Cairn answers on the socket (or holds the store).
            StoppedBeforeServing: a stop was asked for while it waited for the store.
        """
        prepare_runtime_dir(self.paths.runtime)
        refuse_if_serving(self.socket, self.pid_file)  # the clearest message when one runs
        cairn = await self._open_store()
        self.cairn = cairn
        try:
            # Only the holder of the store's lock removes a stale socket, so two starts racing
            # cannot unlink each other's live socket.
            claim_socket_path(self.socket, self.pid_file)
        except BaseException:
            await self._close_server_and_store()
            raise
        loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()

        def hook(why: str) -> None:
            self._stopping.set()
            loop.call_soon_threadsafe(self._request_stop, why)

        cairn.shutdown_hook = hook
        if self._stop_asked is not None:  # a signal came while Cairn was opening its store
            self._request_stop(self._stop_asked)
        # The files this Cairn serves, as they are when it made or opened them: taken then, not
        # once it is up - a folder deleted and a new Cairn serving there meanwhile would have
        # been taken for its own. One gone already is recorded as missing, and the first look
        # stops Cairn cleanly.
        own: dict[Path, tuple[int, int] | None] = {}
        try:
            self.server = Server(cairn, confirm_human=self._confirm_human)
            await self.server.start_unix(self.socket)
            own = {path: _identity_or_none(path) for path in (self.socket, self.paths.database)}
            port = cairn.settings.integer("server.tcp_port")
            if port:
                try:
                    await self.server.start_tcp(port)
                except OSError as e:
                    raise ConfigInvalid(
                        f"server.tcp_port: cannot listen on 127.0.0.1:{port} ({e.strerror}); "
                        "choose another port, or 0 to turn the TCP listener off",
                        data={"port": port},
                    ) from e
            cairn.policy.watch()  # an edit of the policy file applies while Cairn runs
            if cairn.notes.folder is not None:
                cairn.notes.start()  # the first pass runs on its own thread
            # Last, so a pid file says Cairn is fully up. Owner-only, and a link at the path is
            # replaced, never written through (until 2026-11-30 the umask's mode, through any
            # link).
            # A folder in its way, say, is said (FileNotWritten) and the socket cleaned up.
            write_atomically(self.pid_file, str(os.getpid()), what="pid file", mode=0o600)
            own[self.pid_file] = _identity_or_none(self.pid_file)
        except BaseException:
            await self._close_server_and_store()
            with contextlib.suppress(FileNotFoundError):
                self.socket.unlink()
            raise
        self._own_files = own
        self._tasks.append(asyncio.create_task(self._keep_house()))
        self._tasks.append(asyncio.create_task(self._watch_files()))
        log.info("Cairn %s serving the store at %s", __version__, self.paths.database)

    async def _open_store(self) -> Cairn:
        """Open the store. Held by another Cairn that serves nothing - one starting, or one
        closing the store after a stop (its socket already gone) - it waits up to
        `STORE_WAIT_S` for that one to serve (then AlreadyRunning) or to let go (then opens).
        Until 2026-12-01 it gave up at once, and a command run during a `cairn stop` waited 20 s
        for a socket nobody would open.

        Raises:
            AlreadyRunning: another Cairn serves, or still holds the store after the wait.
            StoppedBeforeServing: a stop was asked for meanwhile (until 2026-12-01 that was
                AlreadyRunning too: exit 69, a failed start to a service manager).
        """
        deadline = time.monotonic() + STORE_WAIT_S
        waiting = False
        while True:
            try:
                return Cairn.open(self.paths, settings=self._settings, clock=self._clock)
            except AlreadyRunning as e:
                refuse_if_serving(self.socket, self.pid_file)  # it came up: use it
                if self._stop_asked is not None:
                    log.info("stopped before serving: %s", self._stop_asked)
                    raise StoppedBeforeServing(self._stop_asked) from None
                if time.monotonic() >= deadline:
                    raise
                if not waiting:
                    log.info(
                        "%s; it serves nothing yet (starting, or closing the store): waiting "
                        "up to %.0f s for it",
                        e.message.split("; ")[0],
                        STORE_WAIT_S,
                    )
                    waiting = True
            await asyncio.sleep(0.05)

    def _request_stop(self, why: str) -> None:
        log.info("stopping: %s", why)
        self._stopping.set()
        if self._stop is not None:
            self._stop.set()

    def request_stop(self, why: str) -> None:
        """Thread-safe: ask the runtime to stop (asked while it starts, it stops once up)."""
        self._stopping.set()
        if self.cairn is not None and self.cairn.shutdown_hook is not None:
            self.cairn.shutdown_hook(why)
        else:
            self._stop_asked = why

    async def wait(self) -> None:
        assert self._stop is not None
        await self._stop.wait()

    async def stop(self) -> None:
        self._stopping.set()  # also when it stops on its own (its files went)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        # A round still running would use the store while it closes (a segfault in SQLite); it
        # ends at its next step or rotation chunk (`_stopping`). Waited for here, blocking: the
        # loop has nothing else to do now, and under qasync (the tray) `asyncio.to_thread` finds
        # no running loop at this point.
        self._housekeeper.shutdown(wait=True, cancel_futures=True)
        # The socket goes while the store is still held: a Cairn starting meanwhile binds only
        # once it has the store, so the file removed here is never its socket - which a file
        # system gives the inode of this one, just deleted (on ext4 every time), so the check
        # below took it for this Cairn's own, until 2026-12-01.
        self._remove_own(self.socket)
        await self._close_server_and_store()
        self._remove_own(self.pid_file)
        log.info("Cairn stopped")

    def _remove_own(self, path: Path) -> None:
        """Remove the socket or pid file at `path` when it is still this Cairn's."""
        # Only its own: after its folder was deleted, another Cairn may serve there now. A pid
        # file is its own only while it names this process too: a file system may give a new
        # file the inode of one deleted a moment before (until 2026-12-01 the old Cairn then
        # removed the new one's pid file).
        with contextlib.suppress(FileNotFoundError):
            if self._own_files.get(path) in (None, _identity(path)) and (
                path != self.pid_file or _names(path, os.getpid())
            ):
                path.unlink()

    def _files_gone(self) -> str | None:
        """Why this Cairn cannot go on serving - its socket file or its database was removed
        or replaced (its folder deleted, say), or another file copied over its database
        (`Store.overwritten`) - or None."""
        for path, what in ((self.socket, "socket file"), (self.paths.database, "database")):
            try:
                now = _identity(path)
            except (FileNotFoundError, NotADirectoryError):
                now = None
            except OSError:
                continue  # unreadable for a moment: not a reason to stop
            if now is None or now != self._own_files.get(path):
                consequence = (
                    "no client can reach this Cairn any more"
                    if path == self.socket
                    else "what it would store could not be found again"
                )
                if path == self.paths.database:
                    self._gone = FileGone.REPLACED
                return f"its {what} {path} was removed or replaced; {consequence}"
            store = self.cairn.store if self.cairn is not None else None
            if path == self.paths.database and store is not None and store.overwritten():
                # The same file, another's contents (`cp backup.db cairn.db`): not seen until
                # 2026-12-01, and the stop folded this store's log into the copy.
                self._gone = FileGone.OVERWRITTEN
                return (
                    f"its database {path} was overwritten (another file was copied over it); "
                    "what it would store could not be found again"
                )
        return None

    async def _watch_files(self) -> None:
        while True:
            await asyncio.sleep(self._file_check_interval)
            why = self._files_gone()
            if why is not None:
                log.warning("stopping: %s", why)
                self.lost = why
                assert self._stop is not None
                self._stop.set()
                return

    async def _close_server_and_store(self) -> None:
        if self.server is not None:
            await self.server.close()
            self.server = None
        if self.cairn is not None:
            said = self.cairn.close(gone=self._gone).said()
            self.cairn = None
            if said:
                log.warning("%s", said[0].upper() + said[1:])
                self.lost = f"{self.lost}; {said}"  # the tray shows it to the person

    async def _keep_house(self) -> None:
        assert self.cairn is not None
        cairn = self.cairn
        janitor = Janitor(
            cairn.store,
            cairn.memories,
            cairn.settings,
            cairn.paths,
            lifecycle=cairn.lifecycle,
            failures=cairn.failures,
            watch=cairn.clock_watch,
            stop=self._stopping,
        )
        loop = asyncio.get_running_loop()
        while True:
            live = self.server.live_sessions() if self.server is not None else frozenset()
            await loop.run_in_executor(
                self._housekeeper,
                self._housekeeping_round,
                cairn,
                janitor,
                live,
                self._stopping,
            )
            await asyncio.sleep(self._janitor_interval)

    @staticmethod
    def _housekeeping_round(
        cairn: Cairn, janitor: Janitor, live: frozenset[str], stopping: threading.Event
    ) -> None:
        """One round, on one pool thread: the janitor's steps, the scheduled backup
        (`backup.interval_hours`), then handing back the caches they filled - the read
        connection they used is this thread's. A step that fails is counted in health under its
        own name (`janitor.audit_rotation`, `backup`) and retried next round; the others still
        run (the janitor records its steps' failures itself, `janitor` is left for its bugs).
        Once `stopping` is set no further step begins (the janitor also stops between its own
        steps and rotation chunks, a backup between the pieces it copies, and its check)."""
        steps: tuple[tuple[str, Callable[[], object]], ...] = (
            ("janitor", functools.partial(janitor.run, live_sessions=live)),
            ("backup", functools.partial(Runtime._back_up_when_due, cairn, stopping)),
            ("release_memory", cairn.store.release_memory),
        )
        for site, step in steps:
            if stopping.is_set():
                if site == "backup":
                    log.info(
                        "housekeeping: stopping before the scheduled backup (if due, taken "
                        "by the next start)"
                    )
                return
            try:
                step()
            except Exception as e:  # noqa: BLE001 - counted in health, retried next round
                cairn.failures.record(site, e, cairn.clock.now_ms())

    @staticmethod
    def _back_up_when_due(cairn: Cairn, stopping: threading.Event) -> None:
        if cairn.backups.due():
            try:
                info = cairn.backups.backup("scheduled", stop=stopping)
            except BackupStopped:
                log.info(
                    "housekeeping: the scheduled backup stopped with Cairn; the next start takes it"
                )
                return
            log.info("scheduled backup: %s", info.path)


def serve_forever(paths: Paths, *, janitor_interval: float = 3600.0) -> None:
    """The headless daemon: serve until SIGTERM or SIGINT (or a person's `daemon.shutdown`)."""

    async def main() -> None:
        runtime = Runtime(paths, janitor_interval=janitor_interval)
        # Before starting: a signal while the socket is being set up stops Cairn cleanly once
        # it is up (it killed the process, leaving its socket and pid file behind).
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(
                sig, runtime.request_stop, f"received {signal.Signals(sig).name}"
            )
        try:
            await runtime.start()
        except StoppedBeforeServing:
            return
        try:
            await runtime.wait()
        finally:
            await runtime.stop()

    asyncio.run(main())


def stop_headless(paths: Paths, *, wait_s: float = HANDOVER_WAIT_S) -> int:
    """Ask the Cairn serving `paths`' socket to stop cleanly - SIGTERM, which `cairn serve`
    handles as `cairn stop` does: requests in flight are answered, the store closes, the socket
    goes - and wait until it has. Returns its pid. The tray calls this to take over from a
    headless daemon an agent started (docs/architecture.md, "Who starts Cairn").

    The process is the one on the other end of the socket (its peer credentials), never a pid
    read from a file, and it must run as this user.

    Raises:
        AlreadyRunning: the server cannot be named on this system, runs as another user, or has
            not stopped within `wait_s` seconds.
    """
    path = socket_path(paths)
    try:
        peer = socket_peer(path, timeout_s=2.0)
    except BlockingIOError:  # EAGAIN: its queue of waiting connections is full
        raise AlreadyRunning(
            f"the headless Cairn serving {path} does not accept connections (it is busy or "
            "stuck); stop it with `cairn stop` (or end that process), then start the tray again",
            data={"socket": str(path)},
        ) from None
    except OSError:
        return 0  # it stopped on its own meanwhile
    if peer is None or peer.pid is None or peer.pid <= 0:
        raise AlreadyRunning(
            "a headless Cairn is serving your memories and this system does not say which "
            "process it is; stop it with `cairn stop`, then start the tray again",
            data={"socket": str(path)},
        )
    if peer.uid != os.getuid():
        raise AlreadyRunning(  # the runtime directory is owner-only, so this is no Cairn of ours
            f"the process serving {path} (pid {peer.pid}) runs as another user (uid {peer.uid}); "
            "Cairn leaves it alone",
            data={"socket": str(path), "pid": peer.pid},
        )
    log.info("asking the headless Cairn (pid %d) to stop, to take over", peer.pid)
    try:
        os.kill(peer.pid, signal.SIGTERM)
    except ProcessLookupError:
        return peer.pid
    deadline = time.monotonic() + wait_s
    pid_file = paths.runtime / PID_FILE
    while time.monotonic() < deadline:
        # Stopped: its socket file and then its pid file are gone (removed once the store has
        # closed), or the process is. Files are looked at, the socket never connected to: a
        # connection left waiting on every look filled a stuck server's queue (until
        # 2026-11-30).
        if not _alive(peer.pid) or (not path.exists() and not _names(pid_file, peer.pid)):
            return peer.pid
        time.sleep(0.05)
    raise AlreadyRunning(
        f"the headless Cairn (pid {peer.pid}) was asked to stop and still runs after "
        f"{wait_s:.0f} s; stop it with `cairn stop` (or end that process), then start the tray "
        "again",
        data={"socket": str(path), "pid": peer.pid},
    )


def _identity(path: Path) -> tuple[int, int]:
    """The file at `path` (not what a link there points to): its device and inode."""
    st = os.lstat(path)
    return st.st_dev, st.st_ino


def _identity_or_none(path: Path) -> tuple[int, int] | None:
    try:
        return _identity(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _names(pid_file: Path, pid: int) -> bool:
    try:
        return pid_file.read_text(encoding="utf-8").strip() == str(pid)
    except OSError:
        return False
