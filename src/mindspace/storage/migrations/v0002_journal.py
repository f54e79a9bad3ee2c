"""Version 2: journal entries (spec 004 §1).

The journal's counters and the reflection state are documents in ``docs``; only the
entries need a table. ``key`` is the entry id as text (the store's record key).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

NAME = "journal"


def upgrade(op: Operations) -> None:
    """Create the journal_entries table."""
    op.create_table(
        "journal_entries",
        sa.Column("row_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "assistant_id",
            sa.Integer,
            sa.ForeignKey("assistants.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("key", sa.String(16), nullable=False),
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("timestamp", sa.String(32), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("source_type", sa.String(16), nullable=False),
        sa.Column("source_trust", sa.Float, nullable=False),
        sa.Column("source_entity", sa.String(128), nullable=True),
        sa.Column("importance", sa.Integer, nullable=False),
        sa.Column("importance_method", sa.String(16), nullable=False),
        sa.Column("tags", sa.JSON, nullable=False),
        sa.Column("related_projects", sa.JSON, nullable=False),
        sa.Column("consolidated", sa.Boolean, nullable=False),
        sa.Column("consolidated_at", sa.String(32), nullable=True),
        sa.Column("evidence_ids", sa.JSON, nullable=False),
        sa.Column("scoring_attempts", sa.Integer, nullable=False),
        sa.UniqueConstraint("assistant_id", "key", name="uq_journal_entries_assistant_key"),
    )
