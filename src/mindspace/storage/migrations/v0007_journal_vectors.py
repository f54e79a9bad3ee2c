"""Version 7: stored vectors of journal entries (``search_journal``'s semantic mode).

One row per entry that has been embedded: the embedder's name, a digest of the text it
embedded (an edited entry is embedded again) and the vector, as pgvector's ``vector``
on PostgreSQL (ranked in SQL there) and float32 bytes on SQLite.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

from mindspace.storage.migrations.v0001_core import owner_columns
from mindspace.storage.vectors import Embedding

NAME = "journal vectors: stored embeddings of journal entries"


def upgrade(op: Operations) -> None:
    """Create the journal_vectors table."""
    op.create_table(
        "journal_vectors",
        *owner_columns(),
        sa.Column("key", sa.String(16), nullable=False),
        sa.Column("embedder", sa.String(64), nullable=False),
        sa.Column("digest", sa.String(32), nullable=False),
        sa.Column("embedding", Embedding, nullable=False),
        sa.UniqueConstraint("assistant_id", "key", name="uq_journal_vectors_assistant_key"),
    )
