"""`cairn mcp`: a stdio MCP server that gives any MCP agent Cairn's memory, a thin adapter over
the socket client - every tool is one socket method, under the same governance as any client.

Who: one agent name per bridge (`--agent`, else `mcp-<client name>` from the MCP client's
`initialize`, else `mcp-agent`), verified with its token from the token store; a name never seen
before enrolls itself over the Unix socket on first use (`hello {enroll: true}`).
Where: `--workspace`, else the client's first `file://` root, else the working directory; when
the client says its roots changed, the next call reconnects bound to the new workspace.
Start: like every client, the first call starts the headless daemon when no Cairn runs, unless
CAIRN_NO_AUTOSTART=1 - then each call answers a tool error saying Cairn is not running.
Standard output is the MCP protocol; logs go to standard error only. At the end of input the
requests read are answered first (core/mcp_stdio.py).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import anyio
import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.session import ServerSession
from mcp.types import CallToolResult, ListRootsRequest, ListRootsResult, TextContent

from core import __version__, mcp_stdio, mcp_tools
from core.client import Client, RemoteError
from core.errors import CairnError, ErrorCode, NoAnswer, NotFound, NotRunning
from core.keychain import open_token_store
from core.paths import Paths, resolve_paths

log = logging.getLogger("cairn.mcp")

DEFAULT_AGENT = "mcp-agent"
ROOTS_TIMEOUT = 5.0
ANSWER_TIMEOUT = 30.0  # how long a request waits for Cairn's answer (the client's default)
# Methods safe to send again when the connection died under them (nothing changes twice).
_REPEATABLE = frozenset(
    {"memory.search", "memory.get", "memory.list", "context.build", "identity.get", "policy.get"}
)
# Errors that may mean only that this connection's token was replaced: reconnect once.
_STALE_TOKEN = frozenset({ErrorCode.AGENT_REVOKED, ErrorCode.UNAUTHENTICATED})
_RESOURCES: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    ("cairn://identity/user", "identity.get", {"doc": "user"}, "text/markdown"),
    ("cairn://identity/soul", "identity.get", {"doc": "soul"}, "text/markdown"),
    ("cairn://policy", "policy.get", {}, "application/json"),
)


def agent_name_for(client_name: str | None) -> str:
    """The default agent name: `mcp-` and the MCP client's name, folded to a valid agent name
    (`Claude Code` -> `mcp-claude-code`); `mcp-agent` when the client gave none."""
    folded = re.sub(r"[^a-z0-9._-]+", "-", (client_name or "").lower()).strip("-._")
    return f"mcp-{folded}"[:64].rstrip("-._") if folded else DEFAULT_AGENT


def workspace_from_roots(result: ListRootsResult) -> str | None:
    """The first `file://` root that is an existing directory, as a local path."""
    for root in result.roots:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file" and uri.netloc in ("", "localhost"):
            path = unquote(uri.path)
            if os.path.isdir(path):
                return path
    return None


class Link:
    """The bridge's one connection to Cairn, opened on first use and reopened when the bound
    workspace changes, when Cairn closed it (idle timeout, restart), or after an error that
    left it unusable. Blocking; calls run one at a time on a worker thread."""

    def __init__(self, paths: Paths, session: str, *, timeout: float = ANSWER_TIMEOUT) -> None:
        self._paths = paths
        self._session = session
        self._timeout = timeout
        self._lock = threading.Lock()
        self._client: Client | None = None
        self._opening: Client | None = None  # a connection whose hello is on its way
        self._aborting = threading.Lock()  # `abort` sees `_opening` set, or it sees `_ending`
        self._bound: tuple[str, str] | None = None  # (agent, workspace)
        self._idle_s = 900.0
        self._last_used = 0.0
        self._tokens: dict[str, str] = {}  # tokens this bridge enrolled, if the store is elsewhere
        self._ending = threading.Event()  # set by `abort`: no new connection is opened
        self._why_ending = ""
        self._warned: str | None = None  # the hello's last warning, logged once, not per call
        self.client_label = f"cairn-mcp/{__version__}"

    def call(
        self, agent: str, workspace: str, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """One socket request as `agent` in `workspace`.

        Raises:
            CairnError: Cairn's answer was an error, or Cairn is not running (NotRunning), or
                it did not answer within the timeout (NoAnswer).
        """
        with self._lock:
            if self._ending.is_set():
                raise NotRunning(f"{self._why_ending}; the request was not sent")
            try:
                return self._call(agent, workspace, method, params)
            except NoAnswer as e:
                # Cairn is there (it took the connection) but stopped answering: stuck, or
                # stopped (SIGSTOP). A read is not sent again - it would only wait as long again.
                self._drop()
                log.warning("Cairn did not answer %s within %.0f s", method, self._timeout)
                raise NoAnswer(
                    f"Cairn did not answer within {self._timeout:.0f} s"
                    + (
                        " (it may be stuck or stopped); try again shortly"
                        if method in _REPEATABLE
                        else "; the request may or may not have been carried out - check "
                        "before repeating it"
                    ),
                    data={"timeout_s": self._timeout},
                ) from e
            except (NotRunning, OSError) as e:
                if not self._ending.is_set():
                    raise
                # Cut off by `abort` (while connecting, or waiting for the answer), not by Cairn.
                self._drop()
                raise NotRunning(
                    f"{self._why_ending}; "
                    + (
                        "try again"
                        if method in _REPEATABLE
                        else "the request may or may not have been carried out - check before "
                        "repeating it"
                    )
                ) from e

    def _call(
        self, agent: str, workspace: str, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        client = self._connected(agent, workspace)
        try:
            result = client.call(method, params)
        except RemoteError as e:
            if e.code not in _STALE_TOKEN:
                raise
            # A person may have revoked the agent and added it again (how a token is
            # replaced): this connection's token is refused, the stored one may work. The
            # refused request changed nothing, so it is sent once more on a connection
            # opened with the token stored now; a hello that fails says why itself.
            log.info("reconnecting (%s: %s)", e.code.label, e.message)
            self._drop()
            client = self._connected(agent, workspace)
            result = client.call(method, params)
        except NoAnswer:
            raise  # no answer is not a closed connection (see call)
        except (NotRunning, OSError) as e:
            self._drop()
            # A request that never left is safe to send again; so is a read.
            if not (isinstance(e, BrokenPipeError) or method in _REPEATABLE):
                raise NotRunning(
                    "Cairn closed the connection before answering; the request may or may "
                    "not have been carried out - check before repeating it"
                ) from e
            client = self._connected(agent, workspace)
            result = client.call(method, params)
        self._last_used = time.monotonic()
        return result

    def close(self) -> None:
        with self._lock:
            self._drop()

    def abort(self, why: str) -> None:
        """The bridge is ending (its client went away, or its input ended and Cairn took too
        long): a call still waiting on Cairn wakes and fails at once, saying `why`, and no new
        connection is opened. Does not wait for the call (as `close` would: until 2026-11-30 a
        bridge whose client left during a call to a stuck Cairn - or while it said hello to
        one - stayed on for the whole answer timeout)."""
        with self._aborting:
            if not self._ending.is_set():
                self._why_ending = why
            self._ending.set()
            clients = [c for c in (self._client, self._opening) if c is not None]
        for client in clients:
            client.abort()

    def _opened(self, client: Client) -> None:
        """A connection is made and its hello about to go: `abort` can reach it from now on."""
        with self._aborting:
            self._opening = client
            ending = self._ending.is_set()
        if ending:
            client.abort()

    @property
    def hello(self) -> dict[str, Any]:
        return self._client.hello if self._client is not None else {}

    def _drop(self) -> None:
        if self._client is not None:
            self._client.close()
        self._client = None
        self._bound = None

    def _connected(self, agent: str, workspace: str) -> Client:
        if self._ending.is_set():
            raise NotRunning(f"{self._why_ending}; the request was not sent")
        stale = time.monotonic() - self._last_used > self._idle_s - 30
        if self._client is not None and self._client.closed_by_server():
            # Cairn restarted (or cut an idle connection): open a new one before sending, so
            # a write is never sent into a dead connection and reported as maybe-lost.
            log.info("reconnecting (Cairn closed the connection)")
            self._drop()
        elif self._client is not None and (self._bound != (agent, workspace) or stale):
            log.info("reconnecting (%s)", "idle" if stale else f"workspace {workspace}")
            self._drop()
        elif self._client is not None and self._client.hello.get("warning"):
            # The folder could not be registered at the hello (a full disk): this connection
            # refuses project writes until another registers it, and the agent cannot reconnect
            # the bridge - so each call tries again, and the first one once there is room does.
            log.debug("reconnecting (the folder %s is not registered yet)", workspace)
            self._drop()
        if self._client is None:
            try:
                self._client = self._open(agent, workspace)
            finally:
                with self._aborting:
                    self._opening = None
            self._bound = (agent, workspace)
            self._idle_s = float(self._client.hello.get("limits", {}).get("idle_timeout_s", 900))
            self._last_used = time.monotonic()
            warning = self._client.hello.get("warning")
            if not warning or warning != self._warned:  # a full disk: each call connects
                log.info(
                    "connected as %s (%s) in %s",
                    agent,
                    "verified" if self._client.hello.get("verified") else "unverified",
                    self._client.hello.get("workspace"),
                )
                if warning:
                    log.warning("%s", warning)
                self._warned = warning
        return self._client

    def _open(self, agent: str, workspace: str) -> Client:
        token = (
            os.environ.get("CAIRN_TOKEN")
            or open_token_store(self._paths)[0].get(agent)
            or self._tokens.get(agent)
        )
        if token is not None:
            return self._with_token(agent, workspace, token)
        return self._enroll(agent, workspace)

    def _with_token(self, agent: str, workspace: str, token: str) -> Client:
        return Client.connect(
            self._paths,
            agent=agent,
            token=token,
            workspace=workspace,
            session=self._session,
            label=self.client_label,
            timeout=self._timeout,
            opened=self._opened,
        )

    def _enroll(self, agent: str, workspace: str) -> Client:
        """No token for this name yet: connect and ask Cairn to register it (first use)."""
        try:
            client = Client.connect(
                self._paths,
                agent=agent,
                workspace=workspace,
                session=self._session,
                enroll=True,
                label=self.client_label,
                timeout=self._timeout,
                opened=self._opened,
            )
        except RemoteError as e:
            # Another bridge of this name (an editor opening several sessions) enrolled it a
            # moment ago: its token is in the token store now.
            token = (
                open_token_store(self._paths)[0].get(agent)
                if e.code is ErrorCode.CONFLICT
                else None
            )
            if token is None:
                raise
            return self._with_token(agent, workspace, token)
        enrolled = client.hello.pop("enrolled", {})
        if enrolled.get("token"):
            self._tokens[agent] = str(enrolled["token"])
        log.info("enrolled agent %s; its token is kept in %s", agent, enrolled.get("stored_in"))
        return client


class Bridge:
    """The MCP side: which agent and workspace, and the tools' and resources' one path to the
    socket (`invoke`)."""

    def __init__(
        self,
        paths: Paths,
        *,
        agent: str | None = None,
        workspace: str | None = None,
        timeout: float = ANSWER_TIMEOUT,
    ) -> None:
        self.paths = paths
        self.link = Link(paths, session=f"mcp-{uuid.uuid4().hex[:16]}", timeout=timeout)
        self._agent = agent
        self._fixed_workspace = workspace
        self._roots_workspace: str | None = None
        self._roots_stale = True
        self._roots_asked = anyio.Lock()
        self._session: ServerSession | None = None
        self._input_ended = False  # the client can answer nothing more (no roots)

    def input_ended(self) -> None:
        """The client closed the bridge's input: the calls already read go on, but no answer of
        the client's (to a roots request) can come any more."""
        self._input_ended = True

    # -- who and where -------------------------------------------------------------------------

    def agent(self) -> str:
        if self._agent is None:
            params = self._session.client_params if self._session is not None else None
            name = params.client_info.name if params is not None else None
            self._agent = agent_name_for(name)
            log.info("agent name %s", self._agent)
        return self._agent

    async def workspace(self) -> str:
        if self._fixed_workspace is not None:
            return self._fixed_workspace
        async with self._roots_asked:  # a call made meanwhile waits for the same answer
            if self._roots_stale:
                # Cleared before asking: a change the client announces while the answer is on
                # its way marks the roots stale again for the next call (until 2026-11-30 it
                # was lost, and the bridge stayed in the old folder).
                self._roots_stale = False
                self._roots_workspace = await self._from_roots()
        if self._roots_workspace:
            return self._roots_workspace
        try:
            return os.getcwd()
        except FileNotFoundError:  # the folder the bridge started in was deleted
            raise NotFound(
                "the folder this bridge was started in no longer exists, and the client gave "
                "no folder (roots): start `cairn mcp` in a project folder, or give --workspace",
                data={"field": "workspace"},
            ) from None

    async def _from_roots(self) -> str | None:
        session = self._session
        if session is None or session.client_capabilities is None:
            return None
        if session.client_capabilities.roots is None or not session.can_send_request:
            return None
        if self._input_ended:
            log.info("the client's input ended; it cannot list its roots: using the cwd")
            return None
        try:
            with anyio.fail_after(ROOTS_TIMEOUT):
                result = await session.send_request(ListRootsRequest(), ListRootsResult)
        except Exception as e:  # noqa: BLE001 - a client that cannot list roots: use the cwd
            log.warning("the MCP client did not list its roots (%s); using the cwd", e)
            return None
        return workspace_from_roots(result)

    async def middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: Callable[..., Awaitable[Any]]
    ) -> Any:
        """Keeps the MCP session (to ask for roots) and notes when the client's roots change."""
        self._session = ctx.session
        if ctx.request_id is None and ctx.method == "notifications/roots/list_changed":
            log.info("the client's roots changed")
            self._roots_stale = True
        return await call_next(ctx)

    # -- the one path to Cairn -----------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        workspace = await self.workspace()
        agent = self.agent()
        # A call whose MCP session ends (the client went away) is not waited for: the session
        # ends at once, and `Link.abort` then wakes the thread.
        return await anyio.to_thread.run_sync(
            self.link.call, agent, workspace, method, params, abandon_on_cancel=True
        )

    async def invoke(
        self, method: str, params: dict[str, Any], render: mcp_tools.Render
    ) -> CallToolResult:
        """A tool call: Cairn's answer as compact text plus the structured result. Cairn's
        governance answers (stored, pending, refused) are results; an error - invalid params,
        not found, not running, a paused agent - is a tool error."""
        try:
            result = await self.request(method, params)
        except CairnError as e:
            code = e.code if isinstance(e, RemoteError) else type(e).code
            text = f"{code.label}: {_said(e)}"
            return CallToolResult(
                content=[TextContent(type="text", text=text)],
                structured_content={"error": code.label, "message": e.message, "data": e.data},
                is_error=True,
            )
        return CallToolResult(
            content=[TextContent(type="text", text=render(result))], structured_content=result
        )

    async def read(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return await self.request(method, params)
        except CairnError as e:
            raise ResourceError(_said(e)) from e


def _said(e: CairnError) -> str:
    """An error's message for the client, with why Cairn was not started when that is why."""
    if (
        isinstance(e, NotRunning)
        and not isinstance(e, NoAnswer)
        and os.environ.get("CAIRN_NO_AUTOSTART") == "1"
    ):
        return e.message + " (CAIRN_NO_AUTOSTART=1 is set, so the bridge does not start it.)"
    return e.message


def build_server(bridge: Bridge) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(
        "cairn",
        title="Cairn memory",
        instructions=mcp_tools.INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        middleware=[bridge.middleware],
        tools=mcp_tools.tools(bridge.invoke),
    )

    def resource(uri: str, method: str, params: dict[str, Any], mime: str) -> None:
        async def read() -> str:
            result = await bridge.read(method, params)
            if method == "identity.get":
                return str(result.get("content", ""))
            return json.dumps(result, ensure_ascii=False, indent=2)

        server.resource(uri, name=uri.removeprefix("cairn://"), mime_type=mime)(read)

    for uri, method, params, mime in _RESOURCES:
        resource(uri, method, params, mime)
    return server


def run(args: argparse.Namespace) -> int:
    """`cairn mcp`: serve MCP on standard input and output until the client closes it."""
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    workspace = None
    if args.workspace is not None:
        workspace = str(Path(args.workspace).expanduser().resolve())
        if not os.path.isdir(workspace):
            print(f"cairn: workspace {args.workspace!r} is not a directory", file=sys.stderr)
            return ErrorCode.INVALID_PARAMS.exit_status
    bridge = Bridge(resolve_paths(), agent=args.agent, workspace=workspace)
    if args.agent is not None:
        from core.agents import check_name

        check_name(args.agent)
    log.info("cairn mcp %s ready on stdio", __version__)
    try:
        mcp_stdio.serve(
            build_server(bridge),
            timeout=ANSWER_TIMEOUT,
            ended=bridge.input_ended,
            cut_off=bridge.link.abort,
        )
    finally:
        bridge.link.abort("the bridge is ending")
    return 0
