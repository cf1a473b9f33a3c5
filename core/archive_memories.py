"""An archive's memories, held as what an import needs of each (its id; a dedupe key's fields;
the names and relations it brings) and read again from the archive a chunk at a time: a
two-year store's 157 MB memories.jsonl became about 400 MB of objects when held whole.

The first read verifies every line (`archive_reader`) and keeps a digest of each; the reads
after it parse the lines an import asks for, refuse a line whose bytes changed since, and put
each memory in this store's terms (`steps`: `core/archive_renames.py`)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from core.archive_records import ArchivedMemory, parse_json, parse_memory
from core.errors import InvalidInput
from core.model import Memory, Relation
from core.validation import Limits

Lines = Callable[[], Iterator[tuple[int, bytes | None]]]  # (line number, bytes) of the file
_DIGEST = 16  # bytes kept per line: no other line has its digest (its checks are not redone)


def digest(raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=_DIGEST).digest()


def keyed_stub(m: Memory) -> Memory:
    """What the renames ask of a memory with a dedupe key (its id, scope, workspace, session,
    key, status and time), without its texts."""
    return replace(m, content="", summary=None, keywords=None, source=None, tags=())


@dataclass(frozen=True)
class Step:
    """One way the import puts the archive in this store's terms: `memory` maps a memory (by its
    line's index), `relation` one of its relations."""

    memory: Callable[[int, ArchivedMemory], ArchivedMemory]
    relation: Callable[[Relation], Relation]


@dataclass(frozen=True)
class Names:
    """The names the archive's memories bring: their agents, who acted (revisions and
    relations) and their kinds."""

    agents: frozenset[str]
    actors: frozenset[str]
    kinds: frozenset[str]


@dataclass(frozen=True)
class ArchiveMemories:
    """The memories of memories.jsonl, one per line, in the file's order (index = line - 1)."""

    name: str
    lines: Lines
    limits: Limits
    digests: bytes  # `_DIGEST` bytes per line, as the first read found it
    ids: tuple[str, ...]
    keyed: tuple[tuple[int, Memory], ...]  # (index, `keyed_stub`) of each with a dedupe key
    names: Names
    relations: Mapping[int, tuple[Relation, ...]]  # index -> the relations from that memory
    steps: tuple[Step, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.ids)

    def mapped(
        self,
        step: Step,
        *,
        ids: tuple[str, ...] | None = None,
        keyed: tuple[tuple[int, Memory], ...] | None = None,
    ) -> ArchiveMemories:
        """These memories with `step` applied to each as it is read (and `ids`, `keyed` as the
        step leaves them)."""
        return replace(
            self,
            steps=(*self.steps, step),
            ids=self.ids if ids is None else ids,
            keyed=self.keyed if keyed is None else keyed,
        )

    def read(self, first: Iterable[int] = ()) -> Iterator[ArchivedMemory]:
        """Each memory, parsed again and in this store's terms: those at the indices `first`
        (in the file's order), then the others.

        Raises:
            InvalidInput: a line changed since the first read, or the file cannot be read again.
        """
        ahead = set(first)
        if ahead:
            yield from self._pass(lambda i: i in ahead)
        yield from self._pass(lambda i: i not in ahead)

    def links(self, first: Iterable[int] = ()) -> Iterator[Relation]:
        """The relations from each memory, in the order `read` gives the memories."""
        ahead = set(first)
        order = [*sorted(ahead), *(i for i in sorted(self.relations) if i not in ahead)]
        for i in order:
            for link in self.relations.get(i, ()):
                here = link
                for step in self.steps:
                    here = step.relation(here)
                yield here

    def _pass(self, wanted: Callable[[int], bool]) -> Iterator[ArchivedMemory]:
        lines = self.lines()
        while True:
            try:
                item = next(lines, None)
            except InvalidInput as e:  # the zip's own check of the member, or a read error
                raise self._changed(self.name, str(e.__cause__ or e.message)) from e
            if item is None:
                return
            number, raw = item
            i = number - 1
            if not wanted(i):
                continue
            where = f"{self.name} line {number}"
            if raw is None or digest(raw) != self.digests[i * _DIGEST : (i + 1) * _DIGEST]:
                raise self._changed(where, "its bytes differ from the ones verified")
            try:
                am = parse_memory(parse_json(raw, where), where, self.limits, checked_before=True)
            except InvalidInput as e:  # not after the same bytes were verified; to be safe
                raise self._changed(where, e.message) from e
            for step in self.steps:
                am = step.memory(i, am)
            yield am

    @staticmethod
    def _changed(where: str, why: str) -> InvalidInput:
        return InvalidInput(
            f"{where} changed while the archive was imported ({why}); the import stopped - "
            "what landed before it stays, and importing the archive again brings the rest",
            data={"file": where.split(" ", maxsplit=1)[0]},
        )


class Collector:
    """What the first read keeps of each memory, line by line (`archive_reader`)."""

    def __init__(self) -> None:
        self.digests = bytearray()
        self.ids: list[str] = []
        self.keyed: list[tuple[int, Memory]] = []
        self.agents: set[str] = set()
        self.actors: set[str] = set()
        self.kinds: set[str] = set()
        self.relations: dict[int, tuple[Relation, ...]] = {}

    def add(self, raw: bytes, am: ArchivedMemory) -> None:
        i, m = len(self.ids), am.memory
        self.digests += digest(raw)
        self.ids.append(m.id)
        if m.dedupe_key is not None:
            self.keyed.append((i, keyed_stub(m)))
        if m.agent is not None:
            self.agents.add(m.agent)
        self.actors |= {r.actor for r in am.revisions}
        self.actors |= {
            x for link in am.relations for x in (link.created_by, link.resolved_by) if x
        }
        self.kinds |= {m.kind} | {r.kind for r in am.revisions}
        if am.relations:
            self.relations[i] = am.relations

    def memories(self, name: str, lines: Lines, limits: Limits) -> ArchiveMemories:
        return ArchiveMemories(
            name=name,
            lines=lines,
            limits=limits,
            digests=bytes(self.digests),
            ids=tuple(self.ids),
            keyed=tuple(self.keyed),
            names=Names(frozenset(self.agents), frozenset(self.actors), frozenset(self.kinds)),
            relations=self.relations,
        )
