"""What a caller may see: the horizon rule, in SQL for queries and in Python for single rows.

An agent connection sees global and user memories, the project memories of the workspace it is
bound to, and the session memories of its own session in that workspace - never another
workspace's (session ids are the client's own strings: two workspaces may use the same one).
People (the windows, the CLI's human commands, import, the notes folder) see everything.
"""

from __future__ import annotations

from core.model import Caller, Memory, Scope


def visible(caller: Caller, memory: Memory) -> bool:
    if caller.is_human:
        return True
    if memory.scope in (Scope.GLOBAL, Scope.USER):
        return True
    if memory.scope is Scope.PROJECT:
        return caller.workspace_id is not None and memory.workspace_id == caller.workspace_id
    return (
        caller.session_id is not None
        and memory.session_id == caller.session_id
        and memory.workspace_id == caller.workspace_id
    )


def horizon_sql(caller: Caller, alias: str = "m") -> tuple[str, list[str | None]]:
    """A WHERE fragment and its parameters keeping rows of `memory` inside the caller's horizon."""
    if caller.is_human:
        return "1", []
    parts = [f"{alias}.scope IN ('global', 'user')"]
    params: list[str | None] = []
    if caller.workspace_id is not None:
        parts.append(f"({alias}.scope = 'project' AND {alias}.workspace_id = ?)")
        params.append(caller.workspace_id)
    if caller.session_id is not None:
        parts.append(
            f"({alias}.scope = 'session' AND {alias}.session_id = ? AND {alias}.workspace_id IS ?)"
        )
        params += [caller.session_id, caller.workspace_id]
    return "(" + " OR ".join(parts) + ")", params
