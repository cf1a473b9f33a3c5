"""Whose memory is it: what an agent may change itself, and what must wait for a person."""

from __future__ import annotations

from collections.abc import Callable

from core.errors import Forbidden, InvalidInput
from core.model import Caller, Memory, Surface, Tier

ADOPTED_FLAG = "adopted"  # a person adopted this memory from a proposal: no agent owns it now


def owns(caller: Caller, memory: Memory) -> bool:
    """Whether an agent may change `memory` itself: it wrote it, no person wrote or adopted it.
    Anything else an agent wants changed becomes a proposal for a person."""
    return (
        caller.surface is Surface.AGENT
        and memory.agent is not None
        and memory.agent == caller.agent
        and memory.tier is not Tier.HUMAN
        and ADOPTED_FLAG not in memory.flags
    )


def owner_of(memory: Memory) -> str:
    """Whose memory this is, for a proposal's reason (never the content)."""
    if memory.tier is Tier.HUMAN:
        return "a person's memory"
    if ADOPTED_FLAG in memory.flags:
        return f"adopted by a person (proposed by {memory.agent or 'an agent'})"
    return f"written by agent {memory.agent}" if memory.agent else "written by Cairn"


def refuse_not_own(caller: Caller, memory: Memory) -> None:
    """Pinning and archiving are a person's curation: an agent may do them to its own only."""
    if caller.surface is Surface.AGENT and not owns(caller, memory):
        raise Forbidden(
            f"memory {memory.id} is not this agent's ({owner_of(memory)}); only a person can "
            "pin or archive it",
            data={"id": memory.id},
        )


NOTES_SOURCE = "notes:"  # `source` of a memory that mirrors a file in the watched notes folder


def notes_file_of(memory: Memory) -> str | None:
    """The notes-folder file a memory mirrors (relative path), or None."""
    if memory.source and memory.source.startswith(NOTES_SOURCE):
        return memory.source[len(NOTES_SOURCE) :]
    return None


# A notes file's path -> why Cairn does not follow that file now, and what a person can do
# (the notes folder is off, the file is gone), or None when it does.
NotesState = Callable[[str], str | None]


def refuse_notes_edit(
    caller: Caller, memory: Memory, notes_state: NotesState | None = None
) -> None:
    """A memory that mirrors a notes file changes only with the file: the file is the truth.
    The refusal says what to do, as `notes_state` tells whether Cairn follows the file now."""
    path = notes_file_of(memory)
    if path is not None and caller.surface is not Surface.NOTES:
        instead = notes_state(path) if notes_state is not None else None
        raise Forbidden(
            f"memory {memory.id} comes from your notes folder ({path}); "
            + (instead or "edit or delete that file instead - Cairn follows it"),
            data={"id": memory.id, "file": path},
        )


def refuse_notes_source(caller: Caller, source: str | None) -> None:
    """Only the notes folder writes a `notes:` source: nothing else may pose as a note."""
    if (
        source is not None
        and source.startswith(NOTES_SOURCE)
        and caller.surface is not Surface.NOTES
    ):
        raise InvalidInput(
            "a source starting with 'notes:' is kept for the notes folder's own memories",
            data={"field": "source"},
        )
