"""Version 5: the change feed (which keys each revision wrote) and how far back it reaches.

Another process's cache asks the feed what changed since its revision and reloads just
those keys instead of everything. The feed is trimmed as it grows, so
``assistants.feed_from`` records the oldest revision from which it is still complete;
an existing assistant starts its feed at its current revision (nothing older is known).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

NAME = "change feed"


def upgrade(op: Operations) -> None:
    """Create the changes table and add ``assistants.feed_from``."""
    op.create_table(
        "changes",
        sa.Column("row_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "assistant_id",
            sa.Integer,
            sa.ForeignKey("assistants.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("key", sa.String(128), nullable=False),
    )
    op.create_index("ix_changes_assistant_revision", "changes", ["assistant_id", "revision"])
    op.add_column(
        "assistants", sa.Column("feed_from", sa.Integer, nullable=False, server_default="0")
    )
    # Revisions written before this migration left no feed rows: the feed of an
    # existing assistant is complete only from its current revision on.
    assistants = sa.table("assistants", sa.column("revision", sa.Integer), sa.column("feed_from"))
    op.execute(assistants.update().values(feed_from=assistants.c.revision))
