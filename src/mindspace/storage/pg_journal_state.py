"""``journal_entries.vector_state`` on PostgreSQL: which entries have a current vector.

Schema version 12 (``migrations/v0012_journal_vector_state.py``). The state of an entry
is ``<embedder><US><dims>`` of its stored vector when that vector's digest is ``md5`` of
the entry's text, else NULL (``US``: ``chr(31)``, which no embedder name holds). Two
row triggers keep it, whatever the order a commit writes an entry and its vector in:

- before an entry is inserted or its text changes, its state is read from its vector;
- after a vector is inserted, changed or deleted, its entry's state is set again.

The column is ``COLLATE "C"`` and indexed with the assistant, so "entries without a
current vector of embedder E" is three range probes (NULL, below and above E's state)
that cost what they return (:func:`lacking`).
"""

from __future__ import annotations

from sqlalchemy import Connection

__all__ = [
    "PG_JOURNAL_COLUMNS",
    "STATE_INDEX",
    "TRIGGERS",
    "add_vector_state",
    "drop_vector_state",
    "embedder_bounds",
    "lacking",
    "vector_state",
]

PG_JOURNAL_COLUMNS = ("vector_state",)
"""Columns ``journal_entries`` has on PostgreSQL only (no record field: triggers fill them)."""

STATE_INDEX = "ix_journal_entries_vector_state"
"""The B-tree on ``(assistant_id, vector_state)``."""

_SEPARATOR = "\x1f"
_STATE_SQL = "{v}.embedder || chr(31) || vector_dims({v}.embedding)"

TRIGGERS = (
    "CREATE OR REPLACE FUNCTION mindspace_journal_entry_state() RETURNS trigger "
    "LANGUAGE plpgsql AS $$ BEGIN "
    f"NEW.vector_state := (SELECT {_STATE_SQL.format(v='v')} FROM journal_vectors v "
    "WHERE v.assistant_id = NEW.assistant_id AND v.key = NEW.key "
    "AND v.digest = md5(NEW.content)); RETURN NEW; END $$",
    "CREATE OR REPLACE FUNCTION mindspace_journal_vector_state() RETURNS trigger "
    "LANGUAGE plpgsql AS $$ BEGIN "
    "IF TG_OP <> 'INSERT' THEN UPDATE journal_entries SET vector_state = NULL "
    "WHERE assistant_id = OLD.assistant_id AND key = OLD.key "
    "AND vector_state IS NOT NULL; END IF; "
    "IF TG_OP <> 'DELETE' THEN UPDATE journal_entries e SET vector_state = "
    f"{_STATE_SQL.format(v='NEW')} WHERE e.assistant_id = NEW.assistant_id "
    "AND e.key = NEW.key AND NEW.digest = md5(e.content); END IF; "
    "RETURN NULL; END $$",
    "CREATE TRIGGER journal_entries_vector_state BEFORE INSERT OR UPDATE OF content, key "
    "ON journal_entries FOR EACH ROW EXECUTE FUNCTION mindspace_journal_entry_state()",
    "CREATE TRIGGER journal_vectors_vector_state AFTER INSERT OR UPDATE OR DELETE "
    "ON journal_vectors FOR EACH ROW EXECUTE FUNCTION mindspace_journal_vector_state()",
)
"""The functions and triggers that keep the column (row triggers: a vector's write
touches its one entry through the ``(assistant_id, key)`` unique index)."""


def vector_state(embedder: str, dim: int) -> str:
    """The state of an entry whose current vector is ``embedder``'s, of ``dim`` dimensions."""
    return f"{embedder}{_SEPARATOR}{int(dim)}"


def lacking(any_dims: bool = False) -> str:
    """SQL: the ``journal_entries e`` rows without a current vector of ``:state``.

    With ``any_dims``, those without one of ``:low`` .. ``:high`` instead (every
    dimension of one embedder, :func:`embedder_bounds`). Written as three ranges of
    :data:`STATE_INDEX` so the planner ORs index scans rather than reading every entry.
    """
    if any_dims:
        return "(e.vector_state IS NULL OR e.vector_state < :low OR e.vector_state >= :high)"
    return "(e.vector_state IS NULL OR e.vector_state < :state OR e.vector_state > :state)"


def embedder_bounds(embedder: str) -> dict[str, str]:
    """``:low`` and ``:high`` around every state of ``embedder`` (``:`` sorts after ``9``)."""
    return {"low": f"{embedder}{_SEPARATOR}", "high": f"{embedder}{_SEPARATOR}:"}


def add_vector_state(connection: Connection) -> None:
    """Add the column, fill it from the stored vectors, then its triggers and index."""
    connection.exec_driver_sql(
        'ALTER TABLE journal_entries ADD COLUMN IF NOT EXISTS vector_state text COLLATE "C"'
    )
    connection.exec_driver_sql(
        f"UPDATE journal_entries e SET vector_state = {_STATE_SQL.format(v='v')} "
        "FROM journal_vectors v WHERE v.assistant_id = e.assistant_id AND v.key = e.key "
        "AND v.digest = md5(e.content)"
    )
    for statement in TRIGGERS:
        connection.exec_driver_sql(statement)
    connection.exec_driver_sql(
        f"CREATE INDEX IF NOT EXISTS {STATE_INDEX} ON journal_entries (assistant_id, vector_state)"
    )


def drop_vector_state(connection: Connection) -> None:
    """Undo :func:`add_vector_state` (schema version 12's downgrade)."""
    connection.exec_driver_sql(
        "DROP TRIGGER IF EXISTS journal_vectors_vector_state ON journal_vectors"
    )
    connection.exec_driver_sql(
        "DROP TRIGGER IF EXISTS journal_entries_vector_state ON journal_entries"
    )
    connection.exec_driver_sql("DROP FUNCTION IF EXISTS mindspace_journal_vector_state()")
    connection.exec_driver_sql("DROP FUNCTION IF EXISTS mindspace_journal_entry_state()")
    connection.exec_driver_sql(f"DROP INDEX IF EXISTS {STATE_INDEX}")
    connection.exec_driver_sql("ALTER TABLE journal_entries DROP COLUMN IF EXISTS vector_state")
