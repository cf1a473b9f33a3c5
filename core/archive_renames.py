"""An archive put in this store's terms before anything of it is decided: the names a Cairn
before 2026-11-30 let end in a line break or take from Cairn's own, renamed as this store renamed
them; its workspaces' ids here (and the dedupe-key memory ids derived from them); and old dedupe
keys read as every write reads them now."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import replace

from core import old_names
from core.archive_facts import STATUS_OF, TextKey, id_list
from core.archive_reader import Archive
from core.archive_records import OWN_ACTORS, ArchivedMemory
from core.archive_report import Tally
from core.dedupe import dedupe_holder, dedupe_memory_id
from core.model import RESERVED_AGENT_NAMES, Memory
from core.old_keys import takes_key
from core.validation import normalize_breaks


def rename_old_names(
    archive: Archive, conn: sqlite3.Connection, tally: Tally
) -> tuple[Archive, old_names.Renames]:
    """The archive with the names a Cairn before 2026-11-30 let end in a line break (agent
    `helper\\n`, document `soul:helper\\n`, kind `decision\\n`) renamed as this store renamed
    them (`core/old_names.py`) - or, for a name it never held, as its migration would have: the
    name without the line break, or `NAME-2` when another agent here or in the archive holds it.
    So is an agent a Cairn before then let take a name Cairn keeps for itself (`human`, `cairn`):
    it becomes `human-2` where the archive names an agent (a memory's agent, its soul document)
    - where it names who acted, `human`, `notes`, `import` and `system` are the person and
    Cairn, and stay. Each rename is noted in the report; the caller remembers them in the store."""
    agents: set[str] = set()
    docs: set[str] = set()
    kinds: set[str] = set()
    reserved: set[str] = set()  # the agents named with a name Cairn keeps for itself
    for am in archive.memories:
        m = am.memory
        agents |= {m.agent} if m.agent is not None else set()
        reserved |= {m.agent} & RESERVED_AGENT_NAMES if m.agent is not None else set()
        agents |= {r.actor for r in am.revisions}
        agents |= {x for link in am.relations for x in (link.created_by, link.resolved_by) if x}
        kinds |= {m.kind} | {r.kind for r in am.revisions}
    agents |= {t.forgotten_by for t in archive.tombstones}
    for v in archive.identity:
        agents.add(v.author)
        if v.doc.startswith(old_names.SOUL):
            docs.add(v.doc[len(old_names.SOUL) :])
    reserved |= (agents & RESERVED_AGENT_NAMES) - set(OWN_ACTORS)  # `cairn`, `agent`: no actor
    reserved |= docs & RESERVED_AGENT_NAMES  # a soul document alone names its agent
    if not (
        reserved
        or any(old_names.old_shape(n) for n in agents)
        or any(old_names.old_doc(old_names.SOUL + d) for d in docs)
        or any(old_names.old_kind(k) for k in kinds)
    ):  # nearly every archive: no scan of the store's names for nothing
        return archive, old_names.Renames()
    renames = old_names.plan(
        agents,
        docs,
        kinds,
        taken=old_names.taken_names(conn) | agents | docs,
        known=old_names.recorded(conn),
        reserved=reserved,
    )
    if not renames:
        return archive, renames
    for item in renames.items():
        tally.note("names_renamed", item)
    a, k = renames.agent, renames.kind

    def actor(name: str) -> str:
        """Who acted: the person and Cairn keep their names (an old agent `human`'s own
        revisions cannot be told from the person's; they stay the person's)."""
        return name if name in OWN_ACTORS else a(name)

    def memory(am: ArchivedMemory) -> ArchivedMemory:
        m = am.memory
        return ArchivedMemory(
            replace(m, agent=a(m.agent) if m.agent is not None else None, kind=k(m.kind)),
            tuple(replace(r, actor=actor(r.actor), kind=k(r.kind)) for r in am.revisions),
            tuple(
                replace(
                    link,
                    created_by=actor(link.created_by),
                    resolved_by=actor(link.resolved_by) if link.resolved_by else None,
                )
                for link in am.relations
            ),
        )

    return replace(
        archive,
        memories=tuple(memory(am) for am in archive.memories),
        tombstones=tuple(
            replace(t, forgotten_by=actor(t.forgotten_by)) for t in archive.tombstones
        ),
        identity=tuple(
            replace(v, doc=renames.doc(v.doc), author=actor(v.author)) for v in archive.identity
        ),
    ), renames


def remap(archive: Archive, mapping: Mapping[str, str], tally: Tally) -> Archive:
    """The archive with this store's workspace ids. A dedupe-key memory's id is derived from its
    workspace id, so one whose workspace has another id here takes the id this store would give
    it - or a later write with the same key could not find it."""
    if all(k == v for k, v in mapping.items()):
        return archive

    def ws(w: str | None) -> str | None:
        return mapping.get(w, w) if w is not None else None

    renamed: dict[str, str] = {}
    for am in archive.memories:
        m = am.memory
        if m.dedupe_key is not None and ws(m.workspace_id) != m.workspace_id:
            old = dedupe_memory_id(m.scope, m.workspace_id, m.session_id, m.dedupe_key)
            if m.id == old:
                renamed[m.id] = dedupe_memory_id(
                    m.scope, ws(m.workspace_id), m.session_id, m.dedupe_key
                )
                tally.note("renamed", {"archive_id": m.id, "id": renamed[m.id]})

    def mid(i: str) -> str:
        return renamed.get(i, i)

    memories = tuple(
        ArchivedMemory(
            replace(
                am.memory,
                id=mid(am.memory.id),
                workspace_id=ws(am.memory.workspace_id),
                superseded_by=mid(am.memory.superseded_by) if am.memory.superseded_by else None,
            ),
            tuple(
                replace(r, memory_id=mid(r.memory_id), workspace_id=ws(r.workspace_id))
                for r in am.revisions
            ),
            tuple(
                replace(link, from_id=mid(link.from_id), to_id=mid(link.to_id))
                for link in am.relations
            ),
        )
        for am in archive.memories
    )
    tombstones = tuple(replace(t, workspace_id=ws(t.workspace_id)) for t in archive.tombstones)
    return replace(archive, memories=memories, tombstones=tombstones)


def keys_as_now(archive: Archive, conn: sqlite3.Connection, tally: Tally) -> Archive:
    """The archive's dedupe keys with their line breaks as line feeds, as every write reads
    a key since 2026-11-30 (an old store's archive may hold `wiki\\r`, which no write could
    reach once imported as it was - until 2026-11-30 it was). Where two keys then read the
    same in one scope, workspace and session, one memory takes the key as `old_keys` decides
    in a live store: the one spelling it so already (in the archive, or here), else the one
    `takes_key` ranks first; the others keep their old keys as they were, each noted under
    `keys_kept`. A memory this store holds with its old key keeps it (no write changes a
    memory's key)."""
    memories = archive.memories
    old = [
        i
        for i, am in enumerate(memories)
        if am.memory.dedupe_key is not None
        and normalize_breaks(am.memory.dedupe_key) != am.memory.dedupe_key
    ]
    if not old:  # nearly every archive
        return archive
    held = {
        str(r[0]): r[2]
        for r in conn.execute(STATUS_OF, (id_list([memories[i].memory.id for i in old]),))
    }

    def place(m: Memory) -> TextKey:
        key = normalize_breaks(m.dedupe_key or "")
        return (m.scope.value, m.workspace_id or "", m.session_id or "", key)

    groups: dict[TextKey, list[int]] = {}
    for i in old:
        m = memories[i].memory
        if held.get(m.id) != m.dedupe_key:
            groups.setdefault(place(m), []).append(i)
    spelt = {
        place(am.memory): am.memory.id
        for am in memories
        if am.memory.dedupe_key is not None and place(am.memory)[3] == am.memory.dedupe_key
    }
    now: dict[int, str] = {}
    for where, group in groups.items():
        key = where[3]
        holder = spelt.get(where) or dedupe_holder(
            conn, replace(memories[group[0]].memory, dedupe_key=key)
        )
        taker = next((i for i in group if memories[i].memory.id == holder), None)
        if holder is None:
            taker = max(
                group,
                key=lambda i: takes_key(
                    memories[i].memory.status.value, memories[i].memory.updated_at, i
                ),
            )
            holder = memories[taker].memory.id
        for i in group:
            if i == taker:
                now[i] = key
                continue
            tally.note(
                "keys_kept",
                {
                    "id": memories[i].memory.id,
                    "reason": f"keeps its dedupe key {memories[i].memory.dedupe_key!r} as it "
                    f"was: {holder} holds it as it reads now ({key!r})",
                },
            )
    return replace(
        archive,
        memories=tuple(
            replace(am, memory=replace(am.memory, dedupe_key=now[i])) if i in now else am
            for i, am in enumerate(memories)
        ),
    )
