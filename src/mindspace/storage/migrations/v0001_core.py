"""Version 1: assistants, their documents, projects and goals."""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

NAME = "core workspace"


def owner_columns() -> list[sa.Column[int]]:
    """The row id and owning assistant every owned table starts with."""
    return [
        sa.Column("row_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "assistant_id",
            sa.Integer,
            sa.ForeignKey("assistants.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
    ]


def upgrade(op: Operations) -> None:
    """Create the core tables."""
    op.create_table(
        "assistants",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(128), nullable=False, unique=True),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("revision", sa.Integer, nullable=False),
    )
    op.create_table(
        "docs",
        *owner_columns(),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("value", sa.JSON, nullable=False),
        sa.UniqueConstraint("assistant_id", "name", name="uq_docs_assistant_name"),
    )
    op.create_table(
        "projects",
        *owner_columns(),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("context", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("last_active", sa.String(32), nullable=False),
        sa.UniqueConstraint("assistant_id", "key", name="uq_projects_assistant_key"),
    )
    op.create_table(
        "goals",
        *owner_columns(),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("priority", sa.String(8), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("progress", sa.Float, nullable=False),
        sa.Column("created", sa.String(32), nullable=False),
        sa.Column("updated", sa.String(32), nullable=False),
        sa.Column("parent_id", sa.String(64), nullable=True),
        sa.Column("subtask_ids", sa.JSON, nullable=False),
        sa.Column("auto_generated", sa.Boolean, nullable=False),
        sa.UniqueConstraint("assistant_id", "id", name="uq_goals_assistant_id"),
    )
