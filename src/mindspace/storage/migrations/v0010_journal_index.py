"""Version 10: indexes for PostgreSQL's journal search (nothing on SQLite).

``search_journal``'s semantic mode used to score every stored vector of the assistant in
one exact scan, so a search cost O(entries). This version adds, on PostgreSQL:

- ``ix_journal_entries_ts``: a B-tree on ``(assistant_id, timestamp COLLATE "C")``, so a
  search of the last few days reads only that window's entries (and scores them exactly);
- one partial HNSW index per vector dimension on ``journal_vectors``
  (:func:`mindspace.storage.pg_journal.ensure_journal_hnsw`), for a search over a large
  window that walks the graph instead of scoring every vector (off by default:
  ``pg_journal.HNSW_WINDOW``). Later dimensions get their index on the first commit
  that stores one, as memories do.

SQLite keeps the embedded in-process journal index (``journal/vectors.py``), which needs
neither. :func:`downgrade` drops both.
"""

from __future__ import annotations

from alembic.operations import Operations
from sqlalchemy import text

from mindspace.storage.pg_journal import drop_journal_indexes, ensure_journal_hnsw

NAME = "journal search indexes: timestamp B-tree, HNSW per dimension (PostgreSQL)"


def upgrade(op: Operations) -> None:
    """Create the journal search indexes (no-op on other databases)."""
    connection = op.get_bind()
    if connection.dialect.name != "postgresql":
        return
    connection.exec_driver_sql(
        "CREATE INDEX IF NOT EXISTS ix_journal_entries_ts ON journal_entries "
        '(assistant_id, "timestamp" COLLATE "C")'
    )
    dims = connection.execute(
        text("SELECT DISTINCT vector_dims(embedding) FROM journal_vectors")
    ).scalars()
    for dim in list(dims):
        ensure_journal_hnsw(connection, int(dim))


def downgrade(op: Operations) -> None:
    """Drop the journal search indexes (no-op on other databases)."""
    connection = op.get_bind()
    if connection.dialect.name != "postgresql":
        return
    drop_journal_indexes(connection)
