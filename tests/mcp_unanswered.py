"""`core.mcp_stdio.serve` with one tool that Cairn never answers, for the bound on the end of
input: `python -m tests.mcp_unanswered MODE TIMEOUT` serves stdio with that answer timeout. MODE
`honours`: the tool fails once the bridge cuts the calls off (as the bridge's link does);
`ignores`: it never returns at all. Standard error says when the input ended, the cut-off's
reason and, last, how long after the end of input the bridge ended (`ended after S s`)."""

from __future__ import annotations

import sys
import time

import anyio
from mcp.server.mcpserver import MCPServer

from core import mcp_stdio


def main() -> None:
    mode, timeout = sys.argv[1], float(sys.argv[2])
    server: MCPServer[object] = MCPServer("unanswered")
    cut = anyio.Event()
    said: list[str] = []
    marks: list[float] = []

    @server.tool()
    async def wait_for_cairn() -> str:
        """A call Cairn does not answer."""
        if mode == "honours":
            await cut.wait()
            raise RuntimeError(said[0])
        await anyio.sleep_forever()
        return ""

    def ended() -> None:
        marks.append(time.monotonic())
        print("input ended", file=sys.stderr, flush=True)

    def cut_off(why: str) -> None:
        said.append(why)
        print(f"cut off: {why}", file=sys.stderr, flush=True)
        cut.set()

    mcp_stdio.serve(server, timeout=timeout, ended=ended, cut_off=cut_off)
    print(f"ended after {time.monotonic() - marks[0]:.2f} s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
