"""How long a stop waits for housekeeping: start the daemon on a copy of a big store whose audit
table is over `audit.max_events`, send SIGTERM during its first housekeeping round - while the
audit rotation moves the excess, or while the scheduled backup copies the store - and time it
until the process has ended; then start it again and time the round that carries on.

    .venv/bin/python scripts/bench_stop.py STORE [--during rotation|backup] [--after 2]
        [--max-events 200000] [--code CHECKOUT]

STORE is a CAIRN_HOME (scripts/bigstore.py builds one); it is copied, never changed. `rotation`:
SIGTERM `--after` seconds after the rotated file appeared; `backup`: as soon as the backup's
temporary file appears (`--max-events` 0 leaves the setting alone, so no rotation comes first).
Prints the SIGTERM to the exit, the exit status, the events in the rotated file and the table
then, and for the restart: the socket to an agent's first `hello`, its longest and median
`memory.write` until the round's log, and the round's log lines.
"""

from __future__ import annotations

import argparse
import signal
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from benchlib import copy_store, start_daemon, writes_until_round

from core.client import Client
from core.paths import Paths

ROOT = Path(__file__).resolve().parent.parent


def counts(paths: Paths) -> tuple[int, int]:
    """Events in the rotated files, rows in the audit table."""
    lines = sum(
        sum(1 for _ in p.open("rb")) for p in sorted(paths.audit_archive.glob("audit-*.jsonl"))
    )
    conn = sqlite3.connect(f"file:{paths.database}?mode=ro", uri=True)
    try:
        rows = int(conn.execute("SELECT count(*) FROM audit").fetchone()[0])
    finally:
        conn.close()
    return lines, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--during", choices=("rotation", "backup"), default="rotation")
    parser.add_argument("--after", type=float, default=2.0)
    parser.add_argument("--max-events", type=int, default=200_000)
    parser.add_argument(
        "--code", type=Path, default=ROOT, help="the checkout the daemon runs (default: this one)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cairn-stop-") as tmp:
        home = Path(tmp) / "h"
        paths = copy_store(args.store, home, max_events=args.max_events)
        log = Path(tmp) / "serve.log"
        proc = start_daemon(paths, args.code, log)
        try:
            if args.during == "rotation":
                while not list(paths.audit_archive.glob("audit-*.jsonl")):
                    time.sleep(0.005)
                time.sleep(args.after)
            else:
                while not list(paths.backups.glob(".cairn-backup-*.tmp")):
                    time.sleep(0.005)
            t = time.perf_counter()
            proc.send_signal(signal.SIGTERM)
            status = proc.wait(120)
            stopped = time.perf_counter() - t
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
        in_files, in_table = counts(paths)
        print(f"SIGTERM to exit           {stopped:7.2f} s (exit status {status})")
        print(f"after the stop            {in_files} events in rotated files, {in_table} in table")
        first = log.read_text(errors="replace")
        for line in first.splitlines():
            if any(w in line for w in ("rotation", "janitor:", "backup", "stopp")):
                print("  " + line.strip())

        mark = len(first)
        proc = start_daemon(paths, args.code, log)
        try:
            t_socket = time.perf_counter()
            client = Client.connect(paths, agent="bench", workspace=str(home), autostart=False)
            t_hello = time.perf_counter()
            # until the round's log (none when the stop had waited for the whole round)
            waits = writes_until_round(client, proc, log, mark=mark)
            client.close()
        finally:
            proc.terminate()
            proc.wait(120)
        in_files, in_table = counts(paths)
        print(f"restart: socket to hello  {t_hello - t_socket:7.2f} s")
        if waits:
            print(
                f"restart: writes in round  n={len(waits)}, longest {max(waits) * 1000:.0f} ms,"
                f" median {statistics.median(waits) * 1000:.1f} ms"
            )
        print(f"after the restart         {in_files} events in rotated files, {in_table} in table")
        for line in log.read_text(errors="replace")[mark:].splitlines():
            if "rotation" in line or "janitor:" in line:
                print("  " + line.strip())


if __name__ == "__main__":
    main()
