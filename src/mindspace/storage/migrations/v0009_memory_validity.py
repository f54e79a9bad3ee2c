"""Version 9: a memory's validity and sources (deduplication and updates, issue #34).

Five nullable columns on ``memories``: ``valid_from`` and ``valid_to`` (when the fact
held; a replaced fact keeps its row with ``valid_to`` set), ``superseded_by`` (the
memory that replaced it), ``sources`` (each time the fact was said, JSON) and
``mentions`` (how many times). Rows written before this version read as current facts
said once (NULLs; :class:`mindspace.memory.records.Memory` fills the defaults).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations

NAME = "memory validity: valid_from, valid_to, superseded_by, sources, mentions"


def upgrade(op: Operations) -> None:
    """Add the validity and source columns to ``memories``."""
    # Plain ALTER TABLE ... ADD COLUMN on both databases: nullable columns need no copy
    # of the table (PostgreSQL's vector and term columns stay as they are).
    for column in (
        sa.Column("valid_from", sa.String(32), nullable=True),
        sa.Column("valid_to", sa.String(32), nullable=True),
        sa.Column("superseded_by", sa.String(40), nullable=True),
        sa.Column("sources", sa.JSON, nullable=True),
        sa.Column("mentions", sa.Integer, nullable=True),
    ):
        op.add_column("memories", column)
