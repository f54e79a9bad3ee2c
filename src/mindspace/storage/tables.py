"""The current schema as SQLAlchemy Core tables, and which kind lives in which table.

Migrations in ``mindspace.storage.migrations`` create this schema step by step; a test
checks that a migrated database matches these definitions. Timestamps are ISO-8601
UTC strings (``2025-12-06T10:00:00Z``) so they read the same in every database and
sort as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from mindspace.errors import StorageError
from mindspace.state.port import StoredRecord
from mindspace.storage.vectors import Embedding

__all__ = [
    "KINDS",
    "KindTable",
    "assistants",
    "changes",
    "kind_table",
    "metadata",
    "row_values",
    "schema_migrations",
]

metadata = MetaData()

schema_migrations = Table(
    "schema_migrations",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("name", String(128), nullable=False),
    Column("applied_at", String(32), nullable=False),
)

assistants = Table(
    "assistants",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", String(128), nullable=False, unique=True),
    Column("created_at", String(32), nullable=False),
    Column("revision", Integer, nullable=False, default=0),
    # The oldest revision from which the change feed is complete (it is trimmed as it grows).
    Column("feed_from", Integer, nullable=False, default=0, server_default="0"),
)

changes = Table(
    "changes",
    metadata,
    Column("row_id", Integer, primary_key=True, autoincrement=True),
    Column(
        "assistant_id", Integer, ForeignKey("assistants.id", ondelete="CASCADE"), nullable=False
    ),
    Column("revision", Integer, nullable=False),
    Column("kind", String(32), nullable=False),
    Column("key", String(128), nullable=False),
    Index("ix_changes_assistant_revision", "assistant_id", "revision"),
)


def _owned(name: str, key: Column[str], *columns: Column[object]) -> Table:
    """A table of records owned by an assistant, unique per (assistant, key)."""
    return Table(
        name,
        metadata,
        Column("row_id", Integer, primary_key=True, autoincrement=True),
        Column(
            "assistant_id",
            Integer,
            ForeignKey("assistants.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        key,
        *columns,
        UniqueConstraint("assistant_id", key.name, name=f"uq_{name}_assistant_{key.name}"),
    )


docs = _owned(
    "docs",
    Column("name", String(64), nullable=False),
    Column("value", JSON, nullable=False),
)

projects = _owned(
    "projects",
    Column("key", String(64), nullable=False),
    Column("summary", Text, nullable=False),
    Column("context", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", String(32), nullable=False),
    Column("last_active", String(32), nullable=False),
)

goals = _owned(
    "goals",
    Column("id", String(64), nullable=False),
    Column("description", Text, nullable=False),
    Column("priority", String(8), nullable=False),
    Column("status", String(16), nullable=False),
    Column("progress", Float, nullable=False),
    Column("created", String(32), nullable=False),
    Column("updated", String(32), nullable=False),
    Column("parent_id", String(64), nullable=True),
    Column("subtask_ids", JSON, nullable=False),
    Column("auto_generated", Boolean, nullable=False),
)

events = _owned(
    "events",
    Column("id", String(40), nullable=False),
    Column("type", String(32), nullable=False),
    Column("source_entity", String(128), nullable=True),
    Column("content", Text, nullable=False),
    Column("location", String(128), nullable=True),
    Column("metadata", JSON, nullable=False),
    Column("created_at", String(32), nullable=False),
    Column("updated_at", String(32), nullable=False),
    Column("status", String(16), nullable=False, index=True),
    Column("attempts", Integer, nullable=False),
    Column("error", Text, nullable=True),
    Column("reply", Text, nullable=True),
)

messages = _owned(
    "messages",
    Column("id", String(40), nullable=False),
    Column("entity", String(128), nullable=False),
    Column("role", String(16), nullable=False),
    Column("content", Text, nullable=True),
    Column("tool_calls", JSON, nullable=False),
    Column("tool_call_id", String(64), nullable=True),
    Column("created_at", String(32), nullable=False),
)

approvals = _owned(
    "approvals",
    Column("id", String(40), nullable=False),
    Column("tool", String(64), nullable=False),
    Column("arguments", Text, nullable=False),
    Column("event_id", String(40), nullable=True),
    Column("requested_at", String(32), nullable=False),
    Column("status", String(16), nullable=False),
    Column("decided_by", String(128), nullable=True),
    Column("decided_at", String(32), nullable=True),
    Column("result", JSON, nullable=True),
)

journal_entries = _owned(
    "journal_entries",
    Column("key", String(16), nullable=False),
    Column("id", Integer, nullable=False),
    Column("timestamp", String(32), nullable=False),
    Column("content", Text, nullable=False),
    Column("source_type", String(16), nullable=False),
    Column("source_trust", Float, nullable=False),
    Column("source_entity", String(128), nullable=True),
    Column("importance", Integer, nullable=False),
    Column("importance_method", String(16), nullable=False),
    Column("tags", JSON, nullable=False),
    Column("related_projects", JSON, nullable=False),
    Column("consolidated", Boolean, nullable=False),
    Column("consolidated_at", String(32), nullable=True),
    Column("evidence_ids", JSON, nullable=False),
    Column("scoring_attempts", Integer, nullable=False),
)

journal_vectors = _owned(
    "journal_vectors",
    Column("key", String(16), nullable=False),
    Column("embedder", String(64), nullable=False),
    Column("digest", String(32), nullable=False),
    # pgvector's vector on PostgreSQL (journal search ranks there), float32 bytes elsewhere.
    Column("embedding", Embedding, nullable=False),
)

memories = _owned(
    "memories",
    Column("id", String(40), nullable=False),
    Column("content", Text, nullable=False),
    Column("source", String(32), nullable=False),
    Column("entry_id", Integer, nullable=True),
    Column("tags", JSON, nullable=False),
    Column("source_type", String(16), nullable=False),
    Column("source_trust", Float, nullable=False),
    Column("source_entity", String(128), nullable=True),
    Column("importance", Integer, nullable=False),
    Column("importance_method", String(16), nullable=False),
    Column("created_at", String(32), nullable=False),
    Column("occurred_at", String(32), nullable=False),
    Column("ref", String(128), nullable=True),
    Column("context", Text, nullable=True),
    Column("embedder", String(64), nullable=True),
    Column("embedding", LargeBinary, nullable=True),
    # Version 9: validity and sources (NULL on rows written before: a current fact said once).
    Column("valid_from", String(32), nullable=True),
    Column("valid_to", String(32), nullable=True),
    Column("superseded_by", String(40), nullable=True),
    Column("sources", JSON, nullable=True),
    Column("mentions", Integer, nullable=True),
)

memory_links = _owned(
    "memory_links",
    Column("memory_id", String(40), nullable=False),
    Column("linked_to", JSON, nullable=False),
    Column("processed_at", String(32), nullable=False),
)

entities = _owned(
    "entities",
    Column("entity_id", String(128), nullable=False),
    Column("entity_type", String(32), nullable=False),
    Column("attributes", JSON, nullable=False),
    Column("observations", JSON, nullable=False),
    Column("relationship", JSON, nullable=False),
    Column("first_seen", String(32), nullable=False),
    Column("last_seen", String(32), nullable=False),
)

history = _owned(
    "history",
    Column("id", String(40), nullable=False),
    Column("at", String(32), nullable=False),
    Column("actor_kind", String(16), nullable=False),
    Column("actor", String(128), nullable=False),
    Column("action", String(16), nullable=False),
    Column("target_kind", String(32), nullable=False),
    Column("target_key", String(128), nullable=False),
    Column("before", JSON, nullable=True),
    Column("after", JSON, nullable=True),
    Column("via", String(64), nullable=True),
)


@dataclass(frozen=True)
class KindTable:
    """Where the records of one kind are stored and which column is their key."""

    table: Table
    key_column: str

    @cached_property
    def value_columns(self) -> tuple[str, ...]:
        """The columns that hold a record's fields (not the row id or the owner).

        Cached: a commit asks once per record written (30,000 times compacting a 10k
        journal), and the tables do not change.
        """
        return tuple(c.name for c in self.table.columns if c.name not in {"row_id", "assistant_id"})


KINDS: dict[str, KindTable] = {
    "doc": KindTable(docs, "name"),
    "project": KindTable(projects, "key"),
    "goal": KindTable(goals, "id"),
    "journal_entry": KindTable(journal_entries, "key"),
    "journal_vector": KindTable(journal_vectors, "key"),
    "event": KindTable(events, "id"),
    "message": KindTable(messages, "id"),
    "approval": KindTable(approvals, "id"),
    "memory": KindTable(memories, "id"),
    "memory_links": KindTable(memory_links, "memory_id"),
    "entity": KindTable(entities, "entity_id"),
    "history": KindTable(history, "id"),
}
"""Every record kind the store knows, by the kind name the core uses."""


def kind_table(kind: str) -> KindTable:
    """The table spec of one record kind; ``StorageError`` naming the known kinds."""
    try:
        return KINDS[kind]
    except KeyError:
        raise StorageError(
            f"Unknown record kind {kind!r}; known kinds: {sorted(KINDS)!r}"
        ) from None


def row_values(spec: KindTable, record: StoredRecord) -> dict[str, Any]:
    """A record's column values, every column present; ``StorageError`` on unknown fields."""
    unknown = set(record) - set(spec.value_columns)
    if unknown:
        raise StorageError(
            f"Record for table {spec.table.name!r} has fields {sorted(unknown)!r} with no column; "
            "add a migration for them."
        )
    return {name: record.get(name) for name in spec.value_columns}
