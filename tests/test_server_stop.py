"""How a serving Cairn stops: what its open connections are told, and how long it takes."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from core import protocol
from core.runtime import probe
from tests.serving import RawClient, paths_for, served_in_thread, wait_for


def test_a_hello_being_answered_when_cairn_stops_gets_its_answer(short_tmp: Path) -> None:
    """Stopping waited only for requests after the hello: a connection whose hello was still
    being worked on (here: the tray asking the person) was cut the moment the stop began, and
    the client saw its connection reset with no answer. The hello is answered now, then the
    connection is closed."""
    asked, answer = threading.Event(), threading.Event()

    def confirm(_session: protocol.Session) -> str | None:
        asked.set()
        answer.wait(30)
        return None  # the person allowed it

    with served_in_thread(paths_for(short_tmp / "c"), confirm_human=confirm) as runtime:
        c = RawClient(runtime.socket)
        try:
            hello = {"protocol_version": 1, "role": "human"}
            c.send(
                json.dumps({"jsonrpc": "2.0", "id": 1, "method": "hello", "params": hello}).encode()
                + b"\n"
            )
            assert asked.wait(30), "the hello never reached the person's question"
            runtime.request_stop("the test stops Cairn while a hello is answered")
            # The stop has begun: Cairn no longer takes connections.
            assert wait_for(lambda: not probe(runtime.socket, timeout=0.5), timeout=30)
            answer.set()
            reply = c.read()
            assert reply.get("result", {}).get("role") == "human", reply
            assert c.closed(timeout=30)
        finally:
            answer.set()
            c.close()
