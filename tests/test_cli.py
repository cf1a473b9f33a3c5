"""The `cairn` entry point, run as a real subprocess."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from core import __version__
from core.app import Cairn
from core.client import Client
from tests.conftest import ROOT, cairn_env
from tests.serving import paths_for, running_daemon


def cairn(home: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args],
        cwd=ROOT,
        env=cairn_env(home),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_version(short_tmp: Path) -> None:
    out = cairn(short_tmp, "--version")
    assert out.returncode == 0 and out.stdout.strip() == f"cairn {__version__}"


def test_paths_follow_cairn_home(short_tmp: Path) -> None:
    out = cairn(short_tmp / "home", "paths", "--json")
    data = json.loads(out.stdout)
    assert data["database"] == str(short_tmp / "home" / "data" / "cairn.db")


def test_a_janitor_interval_under_a_second_is_a_usage_error(short_tmp: Path) -> None:
    """`serve --janitor-interval 0` was accepted and kept a core at 100%."""
    for value in ("0", "-1", "0.001", "nan", "soon"):
        out = cairn(short_tmp / "home", "serve", "--janitor-interval", value)
        assert out.returncode == 2, (value, out.stderr)
        assert "--janitor-interval" in out.stderr


def test_a_janitor_interval_that_is_not_finite_or_over_a_day_is_a_usage_error(
    short_tmp: Path,
) -> None:
    """`serve --janitor-interval inf` (or 1e300) was accepted: housekeeping ran once and never
    again - no purges, no scheduled backups, no warning; nan read "nan s is too short"."""
    for value, reason in (
        ("nan", "'nan' is not a finite number of seconds; give 1 to 86400 (a day)"),
        ("inf", "'inf' is not a finite number of seconds; give 1 to 86400 (a day)"),
        ("-inf", "'-inf' is not a finite number of seconds; give 1 to 86400 (a day)"),
        ("1e300", "1e300 s is too long; give at most 86400 s (a day)"),
        ("86401", "86401 s is too long; give at most 86400 s (a day)"),
    ):
        out = cairn(short_tmp / "home", "serve", f"--janitor-interval={value}")
        assert out.returncode == 2, (value, out.stderr)
        assert f"argument --janitor-interval: {reason}" in out.stderr, out.stderr
    helped = cairn(short_tmp / "home", "serve", "--help")
    assert "at most 86400 s (a day)" in " ".join(helped.stdout.split()), helped.stdout


def test_serve_runs_until_terminated_and_refuses_a_second_copy(short_tmp: Path) -> None:
    home = short_tmp / "svc"
    with subprocess.Popen(
        [sys.executable, "-m", "core.cli", "serve"],
        cwd=ROOT,
        env=cairn_env(home),
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        deadline = time.monotonic() + 30
        while "serving" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
        assert "serving the store" in line
        second = cairn(home, "serve")
        assert second.returncode == 69
        assert "Cairn is already running" in second.stderr
        assert len(second.stderr.strip().splitlines()) == 1
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert "Cairn stopped" in proc.stderr.read()


def test_invalid_settings_stop_start_with_one_clear_line(short_tmp: Path) -> None:
    home = short_tmp / "bad"
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.toml").write_text("[store]\nsynchronous = 3\n", encoding="utf-8")
    out = cairn(home, "serve")
    assert out.returncode == 78
    assert "store.synchronous: expected a string" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_nan_in_settings_stops_start_with_one_clear_line(short_tmp: Path) -> None:
    """`expired_retention_days = nan` passed the checks and `cairn serve` died with a traceback
    (cannot convert float NaN to integer)."""
    home = short_tmp / "nan"
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.toml").write_text(
        "[lifecycle]\nexpired_retention_days = nan\n[idempotency]\nretention_hours = inf\n",
        encoding="utf-8",
    )
    out = cairn(home, "serve", timeout=15)
    assert out.returncode == 78, out.stderr
    assert "lifecycle.expired_retention_days: expected a finite number, got nan" in out.stderr
    assert "idempotency.retention_hours: expected a finite number, got inf" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_reindex_command(short_tmp: Path) -> None:
    home = short_tmp / "ri"
    Cairn.open(paths_for(home)).close()  # an existing store: reindex creates none
    out = cairn(home, "reindex")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("reindexed 0 memories")
    # a warning the store gives on opening (no keychain here) reads as the command's, not bare
    assert all(line.startswith("cairn: ") for line in out.stderr.splitlines()), out.stderr


def test_a_count_of_one_reads_in_the_singular(short_tmp: Path) -> None:
    """`reindexed 1 memories`, `1 memories since ...` and `used 1 times` read wrong."""
    from tests.test_cli_serving import at_terminal

    home = short_tmp / "one"
    with running_daemon(home):
        added = cairn(home, "add", "Refunds take five days", "--json")
        assert added.returncode == 0, added.stderr
        status, shown = at_terminal(home, "workspace", "list", typed="")
        assert status == 0 and "      1 memory    since " in shown, shown
        status, shown = at_terminal(home, "get", json.loads(added.stdout)["id"], typed="")
        assert status == 0 and "used 0 times" in shown, shown
    out = cairn(home, "reindex")
    assert out.stdout.startswith("reindexed 1 memory in"), out.stdout + out.stderr


def test_serve_does_not_take_a_json_flag_it_would_ignore(short_tmp: Path) -> None:
    """`cairn serve --json` started the daemon and logged text as ever: the flag was a no-op."""
    out = cairn(short_tmp / "sj", "serve", "--json", timeout=10)
    assert out.returncode == 2 and "unrecognized arguments: --json" in out.stderr, out.stderr


def test_status_and_get_say_what_has_expired(short_tmp: Path) -> None:
    """`cairn status` counted expired memories with the rest (5, where `list` showed 3), and
    `cairn get` never said when a memory expires."""
    from tests.test_cli_serving import at_terminal

    home = short_tmp / "exp"
    with running_daemon(home):
        keep = cairn(home, "add", "The wiki lives at wiki.example.org", "--ttl", "86400", "--json")
        soon = cairn(home, "add", "The build farm is down", "--ttl", "1", "--json")
        assert keep.returncode == 0 and soon.returncode == 0, keep.stderr + soon.stderr
        # (a memory with a day to live: a 1-second one could expire before `get` on a busy
        # machine, and this tested the machine's speed)
        status, shown = at_terminal(home, "get", json.loads(keep.stdout)["id"], typed="")
        assert status == 0 and "expires " in shown, shown
        time.sleep(1.5)
        out = cairn(home, "status")
        assert "memories  2 (" in out.stdout and "1 expired" in out.stdout, out.stdout


def test_a_cairn_home_that_is_a_file_is_one_clear_line(short_tmp: Path) -> None:
    """`cairn list` died with a NotADirectoryError traceback, `cairn serve` with FileExistsError."""
    home = short_tmp / "not-a-folder"
    home.write_text("notes\n", encoding="utf-8")
    for args in (("list",), ("serve",), ("status",)):
        out = cairn(home, *args, timeout=20)
        assert out.returncode == 78, (args, out.stderr)
        assert out.stderr.strip() == (
            f"cairn: {home} is a file, not a folder; point CAIRN_HOME at a folder "
            "(Cairn creates one that does not exist)"
        ), out.stderr
    assert home.read_text(encoding="utf-8") == "notes\n"
    # a folder under a file, and a file where one of Cairn's folders goes
    under = cairn(home / "sub", "status", timeout=20)
    assert under.returncode == 78 and f"{home} is a file" in under.stderr, under.stderr
    for name in ("run", "data", "config", "state"):
        layout = short_tmp / f"with-{name}"
        layout.mkdir()
        (layout / name).write_text("x\n", encoding="utf-8")
        out = cairn(layout, "status", timeout=20)
        # in the way, as everywhere else (io_error, exit 74): until 2026-12-02 config_invalid,
        # exit 78, under a CAIRN_HOME only
        assert out.returncode == 74, (name, out.stderr)
        assert out.stderr.strip() == (
            f"cairn: {layout / name} is a file, not a folder; Cairn keeps its files in that "
            "folder - move the file away"
        ), out.stderr


def test_an_unknown_context_tier_stops_start_with_one_clear_line(short_tmp: Path) -> None:
    """`context.tiers = ["robot"]` passed the checks and `cairn serve` died with a traceback
    ("ValueError: 'robot' is not a valid Tier"), exit 1."""
    home = short_tmp / "tier"
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.toml").write_text(
        '[context]\ntiers = ["robot"]\n', encoding="utf-8"
    )
    out = cairn(home, "serve", timeout=15)
    assert out.returncode == 78, out.stderr
    assert "context.tiers: expected each of human, explicit, derived, llm, got 'robot'" in (
        out.stderr
    )
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_a_blank_cairn_home_is_one_clear_line_and_touches_no_store(short_tmp: Path) -> None:
    """`CAIRN_HOME=" "` was taken as unset: commands opened the person's own store in their real
    directories. A set-but-blank value is a mistake (a variable that came out empty in a
    script); an empty one still means unset, as for the XDG variables."""
    real = short_tmp / "h"  # HOME of the tests
    for args in (("paths",), ("status",), ("reindex",)):
        out = subprocess.run(
            [sys.executable, "-m", "core.cli", *args],
            cwd=ROOT,
            env=cairn_env(short_tmp) | {"CAIRN_HOME": " \t", "HOME": str(real)},
            capture_output=True,
            text=True,
            timeout=20,
        )
        assert out.returncode == 78, (args, out.stderr)
        assert out.stderr.strip() == (
            "cairn: CAIRN_HOME is set but blank (' \\t'); name a folder, or unset it for your "
            "own directories"
        ), out.stderr
    assert not any(real.iterdir()), list(real.rglob("*"))


def test_context_says_how_many_came_as_the_other_side_of_a_dispute(
    short_tmp: Path, workspace_dir: Path
) -> None:
    """`cairn context` left out `partners`: a bundle of 2 items for `--limit 1` said "matched
    2, cut by the limit 0" with no word of why the second one was there."""
    home = short_tmp / "ctx"
    with running_daemon(home) as daemon:
        with Client.connect(
            daemon.paths, agent="helper", workspace=str(workspace_dir), autostart=False
        ) as client:
            east = client.call(
                "memory.write",
                {"content": "Payments run in zone east", "kind": "fact", "scope": "project"},
            )
            west = client.call(
                "memory.write",
                {
                    "content": "Billing jobs are scheduled in zone west",
                    "kind": "fact",
                    "scope": "project",
                },
            )
            client.call("memory.contradict", {"id": east["id"], "other": west["id"]})
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "core.cli",
                "context",
                "payments zone",
                "--limit",
                "1",
                "--tier",
                "derived",
                "--agent",
                "helper",
            ],
            cwd=workspace_dir,
            env=cairn_env(home),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    assert out.returncode == 0, out.stderr
    assert "DISPUTED" in out.stdout
    assert out.stderr.strip().endswith(
        "cut by the limit 0; 1 matched as the other side of a dispute"
    ), out.stderr
