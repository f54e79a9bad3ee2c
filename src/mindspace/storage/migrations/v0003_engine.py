"""Version 3: the event inbox, conversation messages and pending approvals."""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

from mindspace.storage.migrations.v0001_core import owner_columns

NAME = "engine: events, messages, approvals"


def upgrade(op: Operations) -> None:
    """Create the engine tables."""
    op.create_table(
        "events",
        *owner_columns(),
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("source_entity", sa.String(128), nullable=True),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("location", sa.String(128), nullable=True),
        sa.Column("metadata", sa.JSON, nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("reply", sa.Text, nullable=True),
        sa.UniqueConstraint("assistant_id", "id", name="uq_events_assistant_id"),
    )
    op.create_table(
        "messages",
        *owner_columns(),
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("entity", sa.String(128), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("content", sa.Text, nullable=True),
        sa.Column("tool_calls", sa.JSON, nullable=False),
        sa.Column("tool_call_id", sa.String(64), nullable=True),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.UniqueConstraint("assistant_id", "id", name="uq_messages_assistant_id"),
    )
    op.create_table(
        "approvals",
        *owner_columns(),
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("tool", sa.String(64), nullable=False),
        sa.Column("arguments", sa.Text, nullable=False),
        sa.Column("event_id", sa.String(40), nullable=True),
        sa.Column("requested_at", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("decided_by", sa.String(128), nullable=True),
        sa.Column("decided_at", sa.String(32), nullable=True),
        sa.Column("result", sa.JSON, nullable=True),
        sa.UniqueConstraint("assistant_id", "id", name="uq_approvals_assistant_id"),
    )
