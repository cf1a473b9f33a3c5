"""Child process for the rotation kill test: moves the audit excess a chunk per transaction, as
the housekeeping round does, and stops where the parent will SIGKILL it.

    python -m tests.kill_rotation CHUNK STOP_AT WHERE

After each committed chunk it prints `C <n> <last seq in the file>`. At chunk STOP_AT it prints
`HOLD` and waits on stdin (forever: the parent kills it) - WHERE=`committed` after that chunk
committed, WHERE=`appended` inside its transaction, after its lines were appended and fsynced to
the rotated file and before the rows' deletion commits.
"""

from __future__ import annotations

import sys

from core import audit_rotation
from core.app import Cairn
from core.paths import resolve_paths
from core.writer import WriteTx


def main() -> None:
    chunk, stop_at, where = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    paths = resolve_paths()
    cairn = Cairn.open(paths)
    writer = cairn.store.writer
    max_events = cairn.settings.integer("audit.max_events")
    rotation = writer.run(
        lambda tx: audit_rotation.start_rotation(tx, max_events, paths.audit_archive)
    )
    assert rotation is not None, "nothing to rotate"

    def hold() -> None:
        sys.stdout.write("HOLD\n")
        sys.stdout.flush()
        sys.stdin.readline()
        raise SystemExit("the parent was to kill this process")

    def appended_then_hold(tx: WriteTx) -> None:
        audit_rotation.rotate_chunk(tx, rotation, chunk)
        hold()

    n = 0
    while not rotation.finished:
        n += 1
        if n == stop_at and where == "appended":
            writer.run(appended_then_hold)
        writer.run(lambda tx: audit_rotation.rotate_chunk(tx, rotation, chunk))
        sys.stdout.write(f"C {n} {rotation.done}\n")
        sys.stdout.flush()
        if n == stop_at:
            hold()
    raise SystemExit("the rotation finished before the chunk to stop at")


if __name__ == "__main__":
    main()
