"""Version 12: which journal entries have a current vector, kept in an index (PostgreSQL).

A journal entry's vector is current while its digest is ``md5`` of the entry's text.
Finding the entries without one (``search_journal`` lists them; the sleep cycle embeds
them) used to be an anti-join over every entry of the assistant, hashing each text:
O(entries) a search. This version adds, on PostgreSQL:

- ``journal_entries.vector_state``: ``<embedder><US><dims>`` of the entry's current vector
  (``US`` is the unit separator, ``chr(31)``), NULL when it has none; kept by two triggers
  (:data:`~mindspace.storage.pg_journal_state.TRIGGERS`), so every writer (the store, an
  import, a hand-written statement) keeps it right;
- ``ix_journal_entries_vector_state``: a B-tree on ``(assistant_id, vector_state)``, so the
  entries lacking a current vector of one embedder are a few range probes of it.

SQLite keeps the embedded in-process journal index (``journal/vectors.py``), which tracks
the same thing in memory: nothing changes there. :func:`downgrade` drops all of it.
"""

from __future__ import annotations

from alembic.operations import Operations

from mindspace.storage.pg_journal_state import add_vector_state, drop_vector_state

NAME = "journal entries' vector state, its triggers and index (PostgreSQL)"


def upgrade(op: Operations) -> None:
    """Add the column, its triggers and index (no-op on other databases)."""
    connection = op.get_bind()
    if connection.dialect.name == "postgresql":
        add_vector_state(connection)


def downgrade(op: Operations) -> None:
    """Drop the column, its triggers and index (no-op on other databases)."""
    connection = op.get_bind()
    if connection.dialect.name == "postgresql":
        drop_vector_state(connection)
