"""Child process for the kill test: writes memories one by one and reports each acknowledgment.

Prints `READY`, then for each write `B <n>` before calling the service and `A <n> <id>` after it
returned (the write is committed). The parent kills this process with SIGKILL at a random moment.
"""

from __future__ import annotations

import sys

from core.app import Cairn
from core.model import Caller, Scope, Surface
from core.paths import resolve_paths
from core.requests import WriteRequest
from tests.conftest import open_policy


def main() -> None:
    start = int(sys.argv[1])
    paths = resolve_paths()
    open_policy(paths.config)  # every write lands: this test is about durability, not review
    cairn = Cairn.open(paths)
    agent = Caller(Surface.AGENT, agent="killer", verified=True)
    out = sys.stdout
    out.write("READY\n")
    out.flush()
    n = start
    while True:
        out.write(f"B {n}\n")
        out.flush()
        result = cairn.memories.write(
            agent, WriteRequest(content=f"kill-test memory {n}", kind="fact", scope=Scope.GLOBAL)
        )
        out.write(f"A {n} {result.id}\n")
        out.flush()
        n += 1


if __name__ == "__main__":
    main()
