"""The peewee table classes, built per database so no model is bound to a global database.

The SQL that creates these tables lives in `core.migrations` (frozen per version); these classes
mirror the newest schema, and a test checks that every column here exists there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import peewee
from peewee import CompositeKey, IntegerField, TextField


@dataclass(frozen=True)
class Tables:
    db: Any
    Meta: Any
    Workspace: Any
    Memory: Any
    Revision: Any
    Usage: Any
    Audit: Any
    Tombstone: Any
    Relation: Any
    Idempotency: Any
    Agent: Any
    Feedback: Any
    Suggestion: Any
    ReviewDecision: Any
    ScanAllow: Any
    Counter: Any
    IdentityVersion: Any
    Session: Any
    NotesFile: Any

    def all(self) -> tuple[Any, ...]:
        return (
            self.Meta,
            self.Workspace,
            self.Memory,
            self.Revision,
            self.Usage,
            self.Audit,
            self.Tombstone,
            self.Relation,
            self.Idempotency,
            self.Agent,
            self.Feedback,
            self.Suggestion,
            self.ReviewDecision,
            self.ScanAllow,
            self.Counter,
            self.IdentityVersion,
            self.Session,
            self.NotesFile,
        )


def bind_tables(db: peewee.Database | None) -> Tables:
    """Build the table classes bound to `db`."""

    class Base(peewee.Model):
        class Meta:
            database = db

    class MetaRow(Base):
        key = TextField(primary_key=True)
        value = TextField()

        class Meta:
            table_name = "meta"

    class Workspace(Base):
        id = TextField(primary_key=True)
        path = TextField(unique=True)
        created_at = IntegerField()

        class Meta:
            table_name = "workspace"

    class Memory(Base):
        id = TextField(primary_key=True)
        seq = IntegerField(unique=True)
        revision = IntegerField()
        content = TextField()
        summary = TextField(null=True)
        kind = TextField()
        scope = TextField()
        workspace_id = TextField(null=True)
        session_id = TextField(null=True)
        tags = TextField(default="[]")
        keywords = TextField(null=True)
        importance = IntegerField()
        pinned = IntegerField(default=0)
        status = TextField()
        tier = TextField()
        agent = TextField(null=True)
        source = TextField(null=True)
        origin = TextField(null=True)
        created_at = IntegerField()
        updated_at = IntegerField()
        expires_at = IntegerField(null=True)
        dedupe_key = TextField(null=True)
        content_hash = TextField(null=True)
        superseded_by = TextField(null=True)
        flags = TextField(default="[]")

        class Meta:
            table_name = "memory"

    class Revision(Base):
        memory_id = TextField()
        revision = IntegerField()
        content = TextField()
        summary = TextField(null=True)
        kind = TextField()
        scope = TextField()
        workspace_id = TextField(null=True)
        session_id = TextField(null=True)
        tags = TextField()
        keywords = TextField(null=True)
        importance = IntegerField()
        pinned = IntegerField()
        status = TextField()
        tier = TextField()
        expires_at = IntegerField(null=True)
        actor = TextField()
        action = TextField()
        reason = TextField(null=True)
        created_at = IntegerField()

        class Meta:
            table_name = "revision"
            primary_key = CompositeKey("memory_id", "revision")

    class Usage(Base):
        memory_id = TextField(primary_key=True)
        use_count = IntegerField(default=0)
        last_recalled_at = IntegerField(null=True)

        class Meta:
            table_name = "usage"

    class Audit(Base):
        seq = peewee.AutoField()
        at = IntegerField()
        actor_kind = TextField()
        actor = TextField()
        verified = IntegerField(default=0)
        action = TextField()
        memory_id = TextField(null=True)
        revision = IntegerField(null=True)
        preview = TextField(null=True)
        detail = TextField(default="{}")

        class Meta:
            table_name = "audit"

    class Tombstone(Base):
        memory_id = TextField(primary_key=True)
        content_hash = TextField()
        scope = TextField()
        workspace_id = TextField(null=True)
        session_id = TextField(null=True)
        forgotten_by = TextField()
        forgotten_at = IntegerField()
        reason = TextField(null=True)

        class Meta:
            table_name = "tombstone"

    class Relation(Base):
        id = peewee.AutoField()
        kind = TextField()
        from_id = TextField()
        to_id = TextField()
        open = IntegerField()
        note = TextField(null=True)
        created_at = IntegerField()
        created_by = TextField()
        resolved_at = IntegerField(null=True)
        resolved_by = TextField(null=True)
        resolution = TextField(null=True)

        class Meta:
            table_name = "relation"

    class Agent(Base):
        name = TextField(primary_key=True)
        token_hash = TextField(null=True)
        status = TextField()
        created_at = IntegerField()
        created_by = TextField()
        token_created_at = IntegerField(null=True)
        last_seen_at = IntegerField(null=True)

        class Meta:
            table_name = "agent"

    class Feedback(Base):
        id = peewee.AutoField()
        memory_id = TextField()
        revision = IntegerField()
        agent = TextField()
        verified = IntegerField()
        verdict = TextField()
        note = TextField(null=True)
        created_at = IntegerField()

        class Meta:
            table_name = "feedback"

    class Idempotency(Base):
        actor = TextField()
        key = TextField()
        request_hash = TextField()
        response = TextField()
        created_at = IntegerField()

        class Meta:
            table_name = "idempotency"
            primary_key = CompositeKey("actor", "key")

    class Suggestion(Base):
        id = TextField(primary_key=True)
        op = TextField()
        target_id = TextField(null=True)
        base_revision = IntegerField(null=True)
        replacement_id = TextField(null=True)
        content = TextField(null=True)
        summary = TextField(null=True)
        kind = TextField(null=True)
        scope = TextField(null=True)
        workspace_id = TextField(null=True)
        session_id = TextField(null=True)
        tags = TextField()
        keywords = TextField(null=True)
        importance = IntegerField(null=True)
        ttl_seconds = IntegerField(null=True)
        source = TextField(null=True)
        origin = TextField(null=True)
        dedupe_key = TextField(null=True)
        agent = TextField()
        verified = IntegerField()
        reasons = TextField()
        findings = TextField()
        similar = TextField()
        note = TextField(null=True)
        verdict = TextField(null=True)
        content_hash = TextField(null=True)
        hits = IntegerField()
        first_seen = IntegerField()
        last_seen = IntegerField()
        pinned = IntegerField(null=True)
        clear_expiry = IntegerField()

        class Meta:
            table_name = "suggestion"

    class ReviewDecision(Base):
        id = peewee.AutoField()
        suggestion_id = TextField()
        op = TextField()
        target_id = TextField(null=True)
        content_hash = TextField(null=True)
        scope = TextField(null=True)
        workspace_id = TextField(null=True)
        agent = TextField()
        decision = TextField()
        reason = TextField(null=True)
        decided_by = TextField()
        decided_at = IntegerField()
        memory_id = TextField(null=True)
        edited = TextField(null=True)

        class Meta:
            table_name = "review_decision"

    class ScanAllow(Base):
        fingerprint = TextField(primary_key=True)
        rule = TextField()
        note = TextField(null=True)
        allowed_by = TextField()
        allowed_at = IntegerField()

        class Meta:
            table_name = "scan_allow"

    class Counter(Base):
        name = TextField(primary_key=True)
        value = IntegerField()

        class Meta:
            table_name = "counter"

    class IdentityVersion(Base):
        doc = TextField()
        version = IntegerField()
        content = TextField()
        author_kind = TextField()
        author = TextField()
        reason = TextField(null=True)
        parent = IntegerField(null=True)
        created_at = IntegerField()
        content_hash = TextField()

        class Meta:
            table_name = "identity_version"
            primary_key = CompositeKey("doc", "version")

    class Session(Base):
        id = TextField(primary_key=True)
        workspace_id = TextField(null=True)
        first_seen = IntegerField()
        last_seen = IntegerField()

        class Meta:
            table_name = "session"

    class NotesFile(Base):
        path = TextField(primary_key=True)
        memory_id = TextField()
        content_hash = TextField()
        mtime_ns = IntegerField()
        size = IntegerField()
        error = TextField(null=True)

        class Meta:
            table_name = "notes_file"

    return Tables(
        db=db,
        Meta=MetaRow,
        Workspace=Workspace,
        Memory=Memory,
        Revision=Revision,
        Usage=Usage,
        Audit=Audit,
        Tombstone=Tombstone,
        Relation=Relation,
        Idempotency=Idempotency,
        Agent=Agent,
        Feedback=Feedback,
        Suggestion=Suggestion,
        ReviewDecision=ReviewDecision,
        ScanAllow=ScanAllow,
        Counter=Counter,
        IdentityVersion=IdentityVersion,
        Session=Session,
        NotesFile=NotesFile,
    )
