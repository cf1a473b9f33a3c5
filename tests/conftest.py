"""Test isolation: every test gets its own HOME, CAIRN_HOME and XDG directories, short enough for
Unix socket paths; helpers build a real Cairn on a real SQLite file."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.app import Cairn
from core.model import BUILTIN_KINDS, Caller, Surface
from core.paths import Paths, resolve_paths
from core.policy import POLICY_FILE, all_auto
from core.policy_file import write_policy
from core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start_ms: int = 1_790_000_000_000) -> None:
        self.now = start_ms

    def now_ms(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * 1000)


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="cz", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


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
# shipped policy, where some writes wait for a person, is tested in test_governance.py.
def open_policy(config_dir: Path) -> None:
    """Write the all-auto capture policy where a Cairn with this config directory reads it."""
    write_policy(config_dir / POLICY_FILE, all_auto(BUILTIN_KINDS))


@pytest.fixture
def cairn(paths: Paths, clock: FakeClock) -> Iterator[Cairn]:
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
