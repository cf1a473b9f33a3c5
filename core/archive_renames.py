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
from core.archive_memories import Step
from core.archive_reader import Archive
from core.archive_records import OWN_ACTORS, ArchivedMemory
from core.archive_report import Tally
from core.dedupe import dedupe_holder, dedupe_memory_id
from core.model import RESERVED_AGENT_NAMES, Memory, Relation
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
    names = archive.memories.names
    agents = set(names.agents | names.actors)
    docs: set[str] = set()
    kinds = set(names.kinds)
    reserved = set(names.agents & RESERVED_AGENT_NAMES)  # agents named as Cairn names itself
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

    def relation(link: Relation) -> Relation:
        return replace(
            link,
            created_by=actor(link.created_by),
            resolved_by=actor(link.resolved_by) if link.resolved_by else None,
        )

    def memory(_i: int, am: ArchivedMemory) -> ArchivedMemory:
        m = am.memory
        return ArchivedMemory(
            replace(m, agent=a(m.agent) if m.agent is not None else None, kind=k(m.kind)),
            tuple(replace(r, actor=actor(r.actor), kind=k(r.kind)) for r in am.revisions),
            tuple(relation(link) for link in am.relations),
        )

    return replace(
        archive,
        memories=archive.memories.mapped(Step(memory, relation)),
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
    for _i, m in archive.memories.keyed:
        if m.dedupe_key is not None and ws(m.workspace_id) != m.workspace_id:
            old = dedupe_memory_id(m.scope, m.workspace_id, m.session_id, m.dedupe_key)
            if m.id == old:
                renamed[m.id] = dedupe_memory_id(
                    m.scope, ws(m.workspace_id), m.session_id, m.dedupe_key
                )
                tally.note("renamed", {"archive_id": m.id, "id": renamed[m.id]})

    def mid(i: str) -> str:
        return renamed.get(i, i)

    def here(m: Memory) -> Memory:
        return replace(
            m,
            id=mid(m.id),
            workspace_id=ws(m.workspace_id),
            superseded_by=mid(m.superseded_by) if m.superseded_by else None,
        )

    def relation(link: Relation) -> Relation:
        return replace(link, from_id=mid(link.from_id), to_id=mid(link.to_id))

    def memory(_i: int, am: ArchivedMemory) -> ArchivedMemory:
        return ArchivedMemory(
            here(am.memory),
            tuple(
                replace(r, memory_id=mid(r.memory_id), workspace_id=ws(r.workspace_id))
                for r in am.revisions
            ),
            tuple(relation(link) for link in am.relations),
        )

    memories = archive.memories
    memories = memories.mapped(
        Step(memory, relation),
        ids=tuple(mid(i) for i in memories.ids) if renamed else None,
        keyed=tuple((i, here(m)) for i, m in memories.keyed),
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
    memories = dict(archive.memories.keyed)  # line index -> the memory, without its texts
    old = [
        i
        for i, m in memories.items()
        if m.dedupe_key is not None and normalize_breaks(m.dedupe_key) != m.dedupe_key
    ]
    if not old:  # nearly every archive
        return archive
    held = {
        str(r[0]): r[2] for r in conn.execute(STATUS_OF, (id_list([memories[i].id for i in old]),))
    }

    def place(m: Memory) -> TextKey:
        key = normalize_breaks(m.dedupe_key or "")
        return (m.scope.value, m.workspace_id or "", m.session_id or "", key)

    groups: dict[TextKey, list[int]] = {}
    for i in old:
        m = memories[i]
        if held.get(m.id) != m.dedupe_key:
            groups.setdefault(place(m), []).append(i)
    spelt = {
        place(m): m.id
        for m in memories.values()
        if m.dedupe_key is not None and place(m)[3] == m.dedupe_key
    }
    now: dict[int, str] = {}
    for where, group in groups.items():
        key = where[3]
        holder = spelt.get(where) or dedupe_holder(
            conn, replace(memories[group[0]], dedupe_key=key)
        )
        taker = next((i for i in group if memories[i].id == holder), None)
        if holder is None:
            taker = max(
                group,
                key=lambda i: takes_key(memories[i].status.value, memories[i].updated_at, i),
            )
            holder = memories[taker].id
        for i in group:
            if i == taker:
                now[i] = key
                continue
            tally.note(
                "keys_kept",
                {
                    "id": memories[i].id,
                    "reason": f"keeps its dedupe key {memories[i].dedupe_key!r} as it "
                    f"was: {holder} holds it as it reads now ({key!r})",
                },
            )

    def memory(i: int, am: ArchivedMemory) -> ArchivedMemory:
        if i not in now:
            return am
        return replace(am, memory=replace(am.memory, dedupe_key=now[i]))

    keyed = tuple(
        (i, replace(m, dedupe_key=now[i]) if i in now else m) for i, m in memories.items()
    )
    return replace(
        archive, memories=archive.memories.mapped(Step(memory, lambda link: link), keyed=keyed)
    )
