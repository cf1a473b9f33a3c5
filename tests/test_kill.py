"""The kill test: SIGKILL a writing process at random moments; every acknowledged write survives.

A subprocess writes memories one by one and reports each acknowledgment; it is killed at a random
moment; on reopen every acknowledged write is present and the database passes integrity_check. The
test counts how many kills landed while a write was in flight and requires at least half, or it
would prove nothing about writes in progress.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, cairn_env

CYCLES = 20


def run_cycle(home: Path, start: int, delay: float) -> tuple[dict[int, str], bool]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.kill_writer", str(start)],
        cwd=ROOT,
        env=cairn_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.strip())
            if line.startswith("READY"):
                ready.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    if not ready.wait(30):
        proc.kill()
        raise AssertionError(
            f"writer never became ready: {proc.stderr.read() if proc.stderr else ''}"
        )
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    reader.join(10)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    acked = {int(p[1]): p[2] for p in (line.split() for line in lines) if p and p[0] == "A"}
    last = lines[-1] if lines else ""
    return acked, last.startswith("B ")


# Twenty writer processes, each opening the store before it writes: 105 s beside the suite on a
# loaded machine (2026-12-01), near the suite's 120 s limit.
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_sigkill_never_loses_an_acknowledged_write(short_tmp: Path) -> None:
    home = short_tmp / "kill"
    rng = random.Random(20261129)
    all_acked: dict[int, str] = {}
    in_flight = 0
    next_n = 0
    for _ in range(CYCLES):
        acked, was_in_flight = run_cycle(home, next_n, rng.uniform(0.02, 0.25))
        in_flight += was_in_flight
        all_acked.update(acked)
        next_n = max([next_n - 1, *acked]) + 1 + 1  # skip the number that may have been in flight
        db = home / "data" / "cairn.db"
        conn = sqlite3.connect(db)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            stored = dict(conn.execute("SELECT id, content FROM memory").fetchall())
        finally:
            conn.close()
        missing = [n for n, mid in all_acked.items() if stored.get(mid) != f"kill-test memory {n}"]
        assert not missing, f"acknowledged writes lost after a kill: {missing[:10]}"
    assert len(all_acked) > CYCLES  # the writer really wrote
    assert in_flight * 2 >= CYCLES, f"only {in_flight}/{CYCLES} kills landed during a write"
