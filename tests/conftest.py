"""Test isolation: every test gets its own HOME, CAIRN_HOME and XDG directories, short enough for
Unix socket paths; helpers build a real Cairn on a real SQLite file."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from core.app import Cairn
from core.model import BUILTIN_KINDS, Caller, Scope, Surface, WriteStatus
from core.paths import Paths, resolve_paths
from core.policy import POLICY_FILE, all_auto
from core.policy_file import write_policy
from core.requests import WriteRequest
from core.settings import Settings

if TYPE_CHECKING:
    from pytestqt.qtbot import QtBot

    from core.daemon import Runtime
    from desktop.desk import Desk

# Fixtures shared by several test modules, kept in modules of their own: registered here, a test
# asks for them by name (importing a fixture into a test module shadows it - ruff's F811).
pytest_plugins = ("tests.archive_stores",)

ROOT = Path(__file__).resolve().parent.parent
# Windows under test render offscreen (the real tray test runs its own Xvfb in a subprocess).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


# -- which tests run Qt in this process ----------------------------------------------------------

_QT_PACKAGES = ("PySide6", "desktop", "pytestqt")


def _runs_qt(module: ModuleType | None) -> bool:
    """Whether a test module brought Qt or the windows into this process: a module, class or
    function of theirs among its names."""
    if module is None:
        return False
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", "")
        if isinstance(name, str) and name.split(".")[0] in _QT_PACKAGES:
            return True
    return False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `gui` every test that runs Qt in the test process (a window, `qtbot`, the desk)
    besides those marked by hand: `scripts/check` runs them in one process on their own, and
    the rest on every CPU. Under pytest-xdist a Qt test's event processing segfaulted a worker
    (2026-12-01), and the scheduler then waited for good."""
    seen: dict[str, bool] = {}
    for item in items:
        module = getattr(item, "module", None)
        key = getattr(module, "__name__", "")
        if key not in seen:
            seen[key] = _runs_qt(module)
        fixtures = getattr(item, "fixturenames", ())
        if seen[key] or "qtbot" in fixtures or "qapp" in fixtures or "desk" in fixtures:
            item.add_marker(pytest.mark.gui)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start_ms: int = 1_790_000_000_000) -> None:
        self.now = start_ms

    def now_ms(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * 1000)


# How long processes a test leaves behind get to end on their own (a daemon it stopped, still
# closing its store) before they count as leaked.
_LEAK_GRACE_S = 10.0


def processes_under(folder: Path) -> dict[int, str]:
    """Live processes of this user, other than this one, whose CAIRN_HOME lies in `folder`
    (a relative one taken from the process's working directory): pid -> command line. Read from
    /proc, so empty where there is none; a process that has ended (a zombie) has no environment
    there, so it is not listed."""
    found: dict[int, str] = {}
    roots = {os.path.normpath(folder), os.path.realpath(folder)}
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return found
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            home = next(
                (
                    os.fsdecode(v[len(b"CAIRN_HOME=") :])
                    for v in environ
                    if v.startswith(b"CAIRN_HOME=")
                ),
                None,
            )
            if home is None:
                continue
            if not os.path.isabs(home):
                home = os.path.join(os.readlink(f"/proc/{pid}/cwd"), home)
            home = os.path.normpath(home)
            if not any(home == root or home.startswith(root + os.sep) for root in roots):
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError):
            continue  # ended meanwhile, or another user's
        found[pid] = command
    return found


def end_processes_under(folder: Path, *, grace: float = _LEAK_GRACE_S) -> dict[int, str]:
    """Wait up to `grace` seconds for the processes whose CAIRN_HOME lies in `folder` to end,
    then end those still there: SIGTERM (a daemon's clean stop), SIGKILL when one is still
    there 10 s later; waits until they are gone. Returns the ones that had to be ended: pid ->
    command line."""
    deadline = time.monotonic() + grace
    while (left := processes_under(folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        still = processes_under(folder)
        for pid in still:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + _LEAK_GRACE_S
        while still and processes_under(folder) and time.monotonic() < deadline:
            time.sleep(0.05)
    return left


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A fresh folder for the test, with a short path (Unix socket paths must be short). A
    process the test left running with its CAIRN_HOME in this folder (an autostarted daemon
    nobody stopped, a bridge) is ended, and the test errors naming it: a leak is a bug."""
    path = Path(tempfile.mkdtemp(prefix="cz", dir="/tmp"))
    try:
        yield path
    finally:
        leaked = end_processes_under(path)
        shutil.rmtree(path, ignore_errors=True)
    if leaked:
        pytest.fail(
            "the test left processes running with their CAIRN_HOME in its folder (ended now): "
            + "; ".join(f"pid {pid}: {command}" for pid, command in sorted(leaked.items())),
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def isolated_home(short_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = short_tmp / "h"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CAIRN_HOME", str(short_tmp / "c"))
    # Tests never touch the user's real keychain: tokens go to the owner-only file fallback.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    for var in (
        "XDG_DATA_HOME",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "XDG_RUNTIME_DIR",
        "CAIRN_AGENT",
        "CAIRN_TOKEN",
        "CAIRN_NO_AUTOSTART",
    ):
        monkeypatch.delenv(var, raising=False)
    return short_tmp


@pytest.fixture
def paths() -> Paths:
    return resolve_paths()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


# The mechanics tests (memory model, search, the socket) run with every agent write landing; the
# shipped policy, where some writes wait for a person, is tested in test_governance.py and in the
# modules marked `shipped_policy`, whose `cairn` starts with no policy file.
def open_policy(config_dir: Path) -> None:
    """Write the all-auto capture policy where a Cairn with this config directory reads it."""
    write_policy(config_dir / POLICY_FILE, all_auto(BUILTIN_KINDS))


@pytest.fixture
def cairn(paths: Paths, clock: FakeClock, request: pytest.FixtureRequest) -> Iterator[Cairn]:
    if request.node.get_closest_marker("shipped_policy") is None:
        open_policy(paths.config)
    app = Cairn.open(paths, settings=Settings.defaults(), clock=clock)
    try:
        yield app
    finally:
        app.close()


@pytest.fixture
def workspace_dir(short_tmp: Path) -> Path:
    d = short_tmp / "proj"
    d.mkdir()
    return d


@pytest.fixture
def agent(cairn: Cairn, workspace_dir: Path) -> Caller:
    ws = cairn.workspaces.resolve(str(workspace_dir))
    return Caller(
        Surface.AGENT, agent="agent-a", verified=True, workspace_id=ws.id, session_id="s-1"
    )


@pytest.fixture
def human() -> Caller:
    return Caller.human()


def cairn_env(home: Path) -> dict[str, str]:
    """Environment for a subprocess running Cairn against `home`."""
    env = dict(os.environ)
    env["CAIRN_HOME"] = str(home)
    env["PYTHONPATH"] = str(ROOT)
    return env


# -- refused writes ------------------------------------------------------------------------------


@contextmanager
def disk_full(limit: int = 0) -> Iterator[None]:
    """No file of this process can grow past `limit` bytes meanwhile (RLIMIT_FSIZE, SIGXFSZ
    ignored): a write past it fails with EFBIG, as one on a full disk fails."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


@contextmanager
def refusing_writes(folder: Path) -> Iterator[None]:
    """Nothing can be created in, renamed in or removed from `folder` meanwhile: its mode says
    so for a user; root, whom modes do not stop, is stopped by the immutable attribute
    (`chattr +i`), and without it (another file system) the test is skipped."""
    if os.geteuid() != 0:
        mode = folder.stat().st_mode & 0o7777
        folder.chmod(0o500)
        try:
            yield
        finally:
            folder.chmod(mode)
        return
    chattr = shutil.which("chattr")
    if (
        chattr is None
        or subprocess.run([chattr, "+i", str(folder)], capture_output=True).returncode
    ):
        pytest.skip("root is refused a folder only by chattr +i, which this file system lacks")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(folder)], check=True)


# -- the windows ---------------------------------------------------------------------------------


_T = TypeVar("_T")


def off_gui(fn: Callable[[], _T]) -> _T:
    """Run a service call on a plain thread (the store refuses the GUI thread) and wait."""
    out: list[_T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as e:
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    if errors:
        raise errors[0]
    return out[0]


@contextmanager
def desk_on(app: Cairn) -> Iterator[Desk]:
    """The windows' context over `app`. The store refuses the GUI thread meanwhile, so a window
    calling a service directly fails the test."""
    from desktop.desk import Desk

    app.store.refuse_thread(threading.get_ident())
    d = Desk(app)
    d.language.apply("en")  # as the app starts one (`start_language`), in the tests' language
    try:
        yield d
    finally:
        d.close()
        gc.collect()  # on this (the GUI) thread, never later on a worker's
        app.store.refuse_thread(None)


@pytest.fixture
def desk(qtbot: QtBot, paths: Paths) -> Iterator[Desk]:
    """The windows' context over a real Cairn with the shipped (governed) capture policy."""
    app = Cairn.open(paths)
    try:
        with desk_on(app) as d:
            yield d
    finally:
        app.close()


@pytest.fixture
def served_desk(qtbot: QtBot, paths: Paths) -> Iterator[tuple[Desk, Runtime]]:
    """The windows' context over a serving Cairn (its socket on a thread of this process), so
    real socket clients can propose while the windows watch. The GUI thread is refused."""
    from tests.serving import served_in_thread

    with served_in_thread(paths) as runtime:
        assert runtime.cairn is not None
        with desk_on(runtime.cairn) as d:
            yield d, runtime


def calls_of(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str
) -> list[tuple[Any, ...]]:
    """Each call's arguments to `module.name` from now on (the function still runs): how a test
    counts a window's loads."""
    calls: list[tuple[Any, ...]] = []
    real = getattr(module, name)

    def spy(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(module, name, spy)
    return calls


def made_up_word(n: int) -> str:
    """A word of its own for each `n` (below 20**4), shared with no other text."""
    return "".join("bcdfghjklmnpqrstvwxz"[n // 20**k % 20] + "aeiou"[k] for k in range(4))


@pytest.fixture
def crowded_desk(qtbot: QtBot, paths: Paths, workspace_dir: Path) -> Iterator[Desk]:
    """The windows' context over a store whose review queue holds 1001 proposals: helper's
    proposal for the identity document "user" first (so the least recent: listed last), then
    1000 memory proposals, each an idea of its own."""
    yield from _crowded(paths, workspace_dir)


@pytest.fixture
def crowded_with_scout(qtbot: QtBot, paths: Paths, workspace_dir: Path) -> Iterator[Desk]:
    """`crowded_desk`'s queue with 5 ideas of the agent "scout" before it all: the least recent
    of 1006, none of them among the 1000 most seen."""
    yield from _crowded(paths, workspace_dir, scout=5)


@pytest.fixture
def crowded_with_feedback(qtbot: QtBot, paths: Paths, workspace_dir: Path) -> Iterator[Desk]:
    """`crowded_with_scout`'s queue with, before it all, 3 facts of scout's that helper says are
    wrong: 3 feedback proposals of kind "fact" waiting for "feedback", the least recent of 1009;
    the only other kind and reason past the 1000 most seen is the identity proposal's."""
    yield from _crowded(paths, workspace_dir, scout=5, feedback=3)


def _crowded(
    paths: Paths, workspace_dir: Path, *, scout: int = 0, feedback: int = 0
) -> Iterator[Desk]:
    paths.config.mkdir(parents=True, exist_ok=True)
    (paths.config / "settings.toml").write_text("[review]\nmax_items = 2000\n", encoding="utf-8")
    app = Cairn.open(paths)
    try:
        workspace_id = app.workspaces.resolve(str(workspace_dir)).id
        scouting = Caller(Surface.AGENT, agent="scout", verified=True, workspace_id=workspace_id)
        helper = Caller(Surface.AGENT, agent="helper", verified=True)
        for i in range(feedback):
            fact = app.memories.write(
                scouting,
                WriteRequest(content=f"the {made_up_word(9500 + i)} port is {8000 + i}",
                             kind="fact", scope=Scope.PROJECT),
            )  # fmt: skip
            assert fact.status is WriteStatus.STORED and fact.id is not None, fact
            app.memories.feedback(replace(helper, workspace_id=workspace_id), fact.id, "wrong")
        for i in range(scout):
            result = app.memories.write(
                scouting,
                WriteRequest(content=f"scout {made_up_word(9000 + i)}", kind="idea",
                             scope=Scope.PROJECT),
            )  # fmt: skip
            assert result.status is WriteStatus.PENDING, result
        app.identity.propose(helper, "user", "Works in Rust and Python.\n", "said so")
        writer = replace(helper, workspace_id=workspace_id)
        for i in range(1000):
            words = " ".join(made_up_word(3 * i + j) for j in range(3))
            result = app.memories.write(
                writer, WriteRequest(content=f"try {words}", kind="idea", scope=Scope.PROJECT)
            )
            assert result.status is WriteStatus.PENDING, result
        assert app.review.count() == 1001 + scout + feedback
        with desk_on(app) as d:
            yield d
    finally:
        app.close()


def settle(qtbot: QtBot, desk: Desk, timeout_ms: int = 5000) -> None:
    """Wait until every service call the windows made has delivered its result."""
    qtbot.waitUntil(lambda: desk.worker.in_flight == 0, timeout=timeout_ms)
