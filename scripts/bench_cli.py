"""Command-line benchmark: how long a `cairn` command takes, start to exit, as a person or an
agent with a shell runs it against a running Cairn (each one a new Python process).

    .venv/bin/python scripts/bench_cli.py [--runs 15] [--code DIR] [--json F]

A scratch CAIRN_HOME with 200 memories, a daemon serving it from `--code` (this checkout by
default; another checkout compares), then each command `--runs` times: `cairn --version` (the
start alone), `cairn status`, `cairn search`, `cairn list` and `cairn add` (an agent's write,
through the capture policy). Prints the median and p95 in milliseconds.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import latency, start_daemon

from core.paths import HOME_ENV, resolve_paths

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "--version": ["--version"],
    "status": ["status"],
    "search": ["search", "deploy window"],
    "list": ["list", "--limit", "20"],
    "add": ["add", "the deploy window moves to thursday", "--kind", "fact", "--scope", "user"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose cairn runs")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    code = args.code.resolve()
    home = Path(tempfile.mkdtemp(prefix="cbcli", dir="/tmp"))
    paths = resolve_paths({HOME_ENV: str(home)})
    env = dict(os.environ, CAIRN_HOME=str(home), CAIRN_NO_AUTOSTART="1", PYTHONPATH=str(code))

    def cairn(*argv: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "core.cli", *argv],
            cwd=code,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    daemon = start_daemon(paths, code, home / "daemon.log")
    try:
        lines = "".join(
            json.dumps(
                {
                    "content": f"note {i}: the deploy window for service {i % 17}",
                    "kind": "fact",
                    "scope": "user",
                }
            )
            + "\n"
            for i in range(200)
        )
        (home / "seed.jsonl").write_text(lines, encoding="utf-8")
        cairn("add", "--jsonl", str(home / "seed.jsonl"))
        figures: dict[str, dict[str, float]] = {}
        for name, argv in COMMANDS.items():
            cairn(*argv)  # once before timing: the OS file cache is warm, as for a person
            figures[name] = latency(functools.partial(cairn, *argv), args.runs)
            print(
                f"cairn {name:<10} median {figures[name]['median_ms']:7.1f} ms"
                f"  p95 {figures[name]['p95_ms']:7.1f} ms"
            )
    finally:
        daemon.terminate()
        daemon.wait(30)
        time.sleep(0.1)
        shutil.rmtree(home, ignore_errors=True)
    print(f"\n{args.runs} runs each, code {code}, Python {sys.version.split()[0]}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
