"""Start-up benchmark: launch to a docked tray icon (Xvfb + trayer), and the idle memory (RSS) of
the tray application and of the headless daemon over a 10k-memory store. Median of 3 runs, for
the source tree (.venv/bin/cairn) and, when ./scripts/build has made one, the bundle.

    .venv/bin/python scripts/bench_startup.py [--runs 3] [--memories 10000] [--idle 5] [--json F]

Each run copies a prepared store into a fresh CAIRN_HOME and starts the program as a person
would. "To the tray" is from the launch until the app logs "tray icon shown (system tray
available: True)" (CAIRN_TRAY_DEBUG=1). Idle RSS is VmRSS from /proc/<pid>/status after the
start-up, one search over the socket (an agent's first call) and `--idle` seconds of quiet.
The OS file cache is warm (the same files were read by the previous run): this is a warm start.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchlib import sentence

from core.app import Cairn
from core.client import Client
from core.model import Caller, Scope
from core.paths import HOME_ENV, Paths, resolve_paths
from core.requests import WriteRequest
from core.runtime import probe, socket_path

ROOT = Path(__file__).resolve().parent.parent
TRAY_SHOWN = "tray icon shown (system tray available: True)"
TRAYER = ("trayer", "--edge", "top", "--align", "right", "--widthtype", "request", "--height", "32")
GOALS = {"tray_s": 1.5, "tray_rss_mb": 120.0, "daemon_rss_mb": 60.0}


def home_paths(home: Path) -> Paths:
    """The paths a Cairn started with CAIRN_HOME=`home` uses (the same rule as the program)."""
    return resolve_paths({HOME_ENV: str(home)})


def prepare_store(home: Path, n: int) -> None:
    """A store of `n` memories at CAIRN_HOME=`home`, written through the service (write_many)."""
    rng = random.Random(7)
    human = Caller.human()
    app = Cairn.open(home_paths(home))
    try:
        for start in range(0, n, 5000):
            reqs = [
                WriteRequest(content=sentence(rng), kind="fact", scope=Scope.USER)
                for _ in range(min(5000, n - start))
            ]
            failed = [r for r in app.memories.write_many(human, reqs) if isinstance(r, Exception)]
            if failed:
                raise SystemExit(f"{len(failed)} writes failed, first: {failed[0]}")
    finally:
        app.close()


def wait(what: str, check: Callable[[], bool], proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while not check():
        if proc.poll() is not None:
            raise SystemExit(f"{what}: the program exited {proc.returncode}:\n{log.read_text()}")
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}:\n{log.read_text()}")
        time.sleep(0.005)


def rss_mb(pid: int) -> float:
    """The process's resident set, plus its children's (a launcher that forks would hide it)."""
    total = 0.0
    for p in [pid, *children(pid)]:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) / 1024
    return total


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids = (task / "children").read_text().split()
        found += [int(k) for k in kids]
    return found + [g for k in found for g in children(k)]


def stop(proc: subprocess.Popen[bytes]) -> int:
    proc.terminate()
    try:
        return proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(10)


def one_search(home: Path) -> None:
    paths = home_paths(home)
    client = Client.connect(paths, agent="bench", workspace=str(home), autostart=False)
    try:
        client.call("memory.search", {"query": "staging database port"})
    finally:
        client.close()


@contextmanager
def fresh_home(template: Path) -> Iterator[Path]:
    home = Path(tempfile.mkdtemp(prefix="cs", dir="/tmp"))
    shutil.rmtree(home)
    shutil.copytree(template, home)
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def run_tray(
    command: list[str], template: Path, display_env: dict[str, str], idle: float
) -> dict[str, float]:
    with fresh_home(template) as home:
        log = home / "tray.log"
        env = display_env | {
            "CAIRN_HOME": str(home),
            "QT_QPA_PLATFORM": "xcb",
            "CAIRN_TRAY_DEBUG": "1",
            "CAIRN_NO_AUTOSTART": "1",
        }
        env.pop("PYTHONPATH", None)
        with log.open("wb") as out:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                command, cwd=home, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        try:
            wait("the tray icon", lambda: TRAY_SHOWN in log.read_text(errors="replace"), proc, log)
            to_tray = time.perf_counter() - t0
            one_search(home)
            time.sleep(idle)
            rss = rss_mb(proc.pid)
        finally:
            code = stop(proc)
        if code != 0:
            raise SystemExit(f"the tray exited {code}:\n{log.read_text()}")
        return {"tray_s": to_tray, "tray_rss_mb": rss}


def run_daemon(command: list[str], template: Path, idle: float) -> dict[str, float]:
    with fresh_home(template) as home:
        log = home / "serve.log"
        env = dict(os.environ, CAIRN_HOME=str(home), CAIRN_NO_AUTOSTART="1")
        env.pop("PYTHONPATH", None)
        sock = socket_path(home_paths(home))
        with log.open("wb") as out:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                [*command, "serve"], cwd=home, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        try:
            wait("the daemon's socket", lambda: probe(sock), proc, log)
            to_socket = time.perf_counter() - t0
            one_search(home)
            time.sleep(idle)
            rss = rss_mb(proc.pid)
        finally:
            code = stop(proc)
        if code != 0:
            raise SystemExit(f"the daemon exited {code}:\n{log.read_text()}")
        return {"daemon_s": to_socket, "daemon_rss_mb": rss}


@contextmanager
def tray_host() -> Iterator[dict[str, str]]:
    """Xvfb on a free display with trayer docked; the environment for programs on it."""
    missing = [t for t in ("Xvfb", "trayer") if shutil.which(t) is None]
    if missing:
        raise SystemExit(f"needs {', '.join(missing)} (Debian: xvfb trayer)")
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        display = ":" + pipe.readline().strip().decode()
    env = dict(os.environ, DISPLAY=display)
    trayer = subprocess.Popen(
        [*TRAYER, "--expand", "false", "--transparent", "false"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(1.0)  # trayer claims the tray selection on start
        yield env
    finally:
        for proc in (trayer, xvfb):
            stop(proc)


def measure(
    name: str, command: list[str], template: Path, env: dict[str, str], *, runs: int, idle: float
) -> dict[str, Any]:
    samples: dict[str, list[float]] = {}
    for i in range(runs):
        got = run_tray(command, template, env, idle) | run_daemon(command, template, idle)
        for key, value in got.items():
            samples.setdefault(key, []).append(value)
        print(f"  {name} run {i + 1}: " + "  ".join(f"{k} {v:.3f}" for k, v in got.items()))
    return {
        "command": command,
        "median": {k: statistics.median(v) for k, v in samples.items()},
        "samples": samples,
    }


def verdict(key: str, value: float) -> str:
    goal = GOALS.get(key)
    if goal is None:
        return ""
    return "met" if value <= goal else "NOT met"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--idle", type=float, default=5.0, help="seconds idle before RSS")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    targets = {"source": [str(ROOT / ".venv" / "bin" / "cairn")]}
    bundle = ROOT / "dist" / "cairn" / "cairn"
    if bundle.exists():
        targets["bundle"] = [str(bundle)]
    template = Path(tempfile.mkdtemp(prefix="ct", dir="/tmp")) / "home"
    try:
        t0 = time.perf_counter()
        prepare_store(template, args.memories)
        db = home_paths(template).database
        print(
            f"store: {args.memories} memories, {db.stat().st_size / 2**20:.1f} MB, "
            f"prepared in {time.perf_counter() - t0:.1f} s"
        )
        results: dict[str, Any] = {}
        with tray_host() as env:
            for name, command in targets.items():
                results[name] = measure(
                    name, command, template, env, runs=args.runs, idle=args.idle
                )
    finally:
        shutil.rmtree(template.parent, ignore_errors=True)

    labels = {
        "tray_s": "launch to tray icon (s)",
        "tray_rss_mb": "tray app, idle RSS (MB)",
        "daemon_s": "headless daemon, launch to socket (s)",
        "daemon_rss_mb": "headless daemon, idle RSS (MB)",
    }
    print(f"\nmedian of {args.runs} runs, {args.memories} memories, idle {args.idle:.0f} s")
    print("| figure | " + " | ".join(results) + " | goal |")
    print("|---|" + "---|" * len(results) + "---|")
    for key, label in labels.items():
        cells = []
        for result in results.values():
            value = result["median"][key]
            mark = verdict(key, value)
            cells.append(f"{value:.2f}" + (f" ({mark})" if mark else ""))
        goal = f"≤ {GOALS[key]:g}" if key in GOALS else "-"
        print(f"| {label} | " + " | ".join(cells) + f" | {goal} |")
    if args.json:
        meta = {"python": sys.version.split()[0], "machine": platform.platform()}
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
