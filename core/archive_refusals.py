"""Why an archive's record, or a field of it, does not come into this store as it is: a control
character or a secret in its identifiers and free text. An archive is checked as every write,
hello and edit check theirs now - an old store's export or an edited archive may hold what they
refuse. A memory or an identity version holding one stays out, and the rest of the archive lands;
a relation's note, a tombstone's reason or session id is left out, and a tombstone's
`forgotten_by` stood in for."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from core.archive_records import ArchivedMemory, Tombstone
from core.errors import InvalidInput
from core.identity import IdentityVersion
from core.model import Memory, Revision, Surface
from core.validation import CONTROL, SESSION_CONTROL, refuse_control

# The gate's scan: the refusal's words for fields holding a secret, None when none does.
SecretScan = Callable[[Mapping[str, str | None]], str | None]


def control_in(revisions: Sequence[Revision], memory: Memory) -> str | None:
    """Why `memory` cannot be imported when one of the `revisions` to write holds a control
    character in its reason (refused in every reason since 2026-11-30, `governance.check_notes`)
    or a C1 control in its text (refused in every write since then), or it or one of them a
    control character in its session id (hello refuses one since then): a store from before may
    hold one - its memory stays out, the rest of its export comes in."""
    try:
        refuse_control("source", memory.source or "")
        refuse_control("session", memory.session_id or "", SESSION_CONTROL)
    except InvalidInput as e:
        return f"{e.message}; not imported"
    for r in revisions:
        texts = [("content", r.content), ("summary", r.summary), ("keywords", r.keywords)]
        texts += [("tags", tag) for tag in r.tags] + [("reason", r.reason)]
        try:
            for name, text in texts:
                refuse_control(name, text or "")
            refuse_control("session", r.session_id or "", SESSION_CONTROL)
        except InvalidInput as e:
            return f"revision {r.revision}: {e.message}; not imported"
    return None


def secret_of(
    am: ArchivedMemory, revisions: Sequence[Revision], secret_in: SecretScan
) -> str | None:
    """Why a memory cannot be imported when it, or one of the `revisions` to write, holds a
    secret in any field (an archive is checked like every write - and hello's identifiers:
    secrets are never stored, whoever writes)."""
    m = am.memory
    refusal = secret_in(
        {
            "source": m.source,
            "dedupe_key": m.dedupe_key,
            "agent": m.agent,
            "session": m.session_id,
        }
    )
    if refusal is not None:
        return f"{refusal}; not imported"
    for r in revisions:
        fields = {
            "content": r.content,
            "summary": r.summary,
            "tags": "\n".join(r.tags) if r.tags else None,
            "keywords": r.keywords,
            "reason": r.reason,
            "actor": r.actor,
            "session": r.session_id,
        }
        refusal = secret_in(fields)
        if refusal is not None:
            return f"revision {r.revision}: {refusal}; not imported"
    return None


def identity_refusal(
    v: IdentityVersion, secret_in: SecretScan, *, current: bool, max_bytes: int
) -> str | None:
    """Why a version this store lacks cannot be added: a control character (refused in
    every identity document since 2026-11-30), a secret, or - for the one that would become
    current - a size over this store's limit."""
    fields = {"content": v.content, "reason": v.reason, "author": v.author}
    for name, text in fields.items():
        found = CONTROL.search(text or "")
        if found:  # an escape sequence could hide words from a person at a terminal
            return f"its {name} holds a control character (U+{ord(found.group()):04X})"
    secret = secret_in(fields)
    if secret is not None:
        return secret
    size = len(v.content.encode("utf-8"))
    if current and size > max_bytes:
        return (
            f"it is {size} bytes and identity.max_bytes here is {max_bytes} "
            "(set it higher and import again)"
        )
    return None


def note_refused(note: str | None, secret_in: SecretScan) -> bool:
    """Whether a relation's note is left out (the disagreement kept): it holds a secret, or an
    escape sequence (refused in every note since 2026-11-30)."""
    if not note:
        return False
    return CONTROL.search(note) is not None or secret_in({"note": note}) is not None


def tombstone_as_kept(t: Tombstone, secret_in: SecretScan) -> tuple[Tombstone, int]:
    """The tombstone as this store keeps it, and how many of its fields were dropped or stood
    in for (each counts in `notes_dropped`)."""
    kept, dropped = t, 0
    if t.reason and secret_in({"reason": t.reason}) is not None:
        kept = replace(kept, reason=None)  # what stays forgotten does; a secret not
        dropped += 1
    if t.session_id and (
        SESSION_CONTROL.search(t.session_id) or secret_in({"session": t.session_id}) is not None
    ):  # nor a session id hello would refuse (until 2026-11-30 it came in unscanned)
        kept = replace(kept, session_id=None)
        dropped += 1
    if secret_in({"forgotten_by": t.forgotten_by}) is not None:
        # The name is required, and the tombstone is what keeps the memory forgotten
        # (left out, an older archive could bring it back): the import, which brought
        # it here, stands in (until 2026-11-30 the name came in unscanned).
        kept = replace(kept, forgotten_by=Surface.IMPORT.value)
        dropped += 1
    return kept, dropped
