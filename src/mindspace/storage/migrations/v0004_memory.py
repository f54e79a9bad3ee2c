"""Version 4: semantic memories (with float32 vectors), A-MEM links, entity profiles."""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

from mindspace.storage.migrations.v0001_core import owner_columns

NAME = "memory: memories, links, entities"


def upgrade(op: Operations) -> None:
    """Create the memory tables."""
    op.create_table(
        "memories",
        *owner_columns(),
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("source", sa.String(32), nullable=False),
        sa.Column("entry_id", sa.Integer, nullable=True),
        sa.Column("tags", sa.JSON, nullable=False),
        sa.Column("source_type", sa.String(16), nullable=False),
        sa.Column("source_trust", sa.Float, nullable=False),
        sa.Column("source_entity", sa.String(128), nullable=True),
        sa.Column("importance", sa.Integer, nullable=False),
        sa.Column("importance_method", sa.String(16), nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("occurred_at", sa.String(32), nullable=False),
        sa.Column("ref", sa.String(128), nullable=True),
        sa.Column("context", sa.Text, nullable=True),
        sa.Column("embedder", sa.String(64), nullable=True),
        sa.Column("embedding", sa.LargeBinary, nullable=True),
        sa.UniqueConstraint("assistant_id", "id", name="uq_memories_assistant_id"),
    )
    op.create_table(
        "memory_links",
        *owner_columns(),
        sa.Column("memory_id", sa.String(40), nullable=False),
        sa.Column("linked_to", sa.JSON, nullable=False),
        sa.Column("processed_at", sa.String(32), nullable=False),
        sa.UniqueConstraint("assistant_id", "memory_id", name="uq_memory_links_assistant_memory"),
    )
    op.create_table(
        "entities",
        *owner_columns(),
        sa.Column("entity_id", sa.String(128), nullable=False),
        sa.Column("entity_type", sa.String(32), nullable=False),
        sa.Column("attributes", sa.JSON, nullable=False),
        sa.Column("observations", sa.JSON, nullable=False),
        sa.Column("relationship", sa.JSON, nullable=False),
        sa.Column("first_seen", sa.String(32), nullable=False),
        sa.Column("last_seen", sa.String(32), nullable=False),
        sa.UniqueConstraint("assistant_id", "entity_id", name="uq_entities_assistant_entity"),
    )
