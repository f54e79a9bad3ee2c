"""Version 8: the history of edits (who changed what in an assistant's mind, and when).

Append-only rows of kind ``history``: the actor (its kind and name), the time, the
action, what it touched (kind and key) and the record before and after as JSON.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

from mindspace.storage.migrations.v0001_core import owner_columns

NAME = "history: an append-only record of edits, deletions and forgetting"


def upgrade(op: Operations) -> None:
    """Create the history table."""
    op.create_table(
        "history",
        *owner_columns(),
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("at", sa.String(32), nullable=False),
        sa.Column("actor_kind", sa.String(16), nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("target_kind", sa.String(32), nullable=False),
        sa.Column("target_key", sa.String(128), nullable=False),
        sa.Column("before", sa.JSON, nullable=True),
        sa.Column("after", sa.JSON, nullable=True),
        sa.Column("via", sa.String(64), nullable=True),
        sa.UniqueConstraint("assistant_id", "id", name="uq_history_assistant_id"),
    )
