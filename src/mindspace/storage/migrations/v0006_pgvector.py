"""Version 6: PostgreSQL-native memory search (pgvector, full-text); nothing on SQLite.

On PostgreSQL it creates the ``vector`` extension, adds the ``vec``, ``lex`` and
``lex_len`` columns of :mod:`mindspace.storage.pg_memory` with a GIN index on ``lex``,
creates the ``memory_postings`` and ``memory_stats`` tables BM25 reads, fills all of
them for the memories already stored, and builds the HNSW index of each vector
dimension found. Later dimensions get their index on the first commit that stores one.
SQLite keeps the embedded in-process index and needs none of this.
"""

from __future__ import annotations

from typing import Any

from alembic.operations import Operations
from sqlalchemy import Connection, bindparam, select, text, update
from sqlalchemy.exc import DBAPIError

from mindspace.errors import MigrationError
from mindspace.storage.pg_memory import PG_MEMORIES, ensure_hnsw, index_terms, search_values

NAME = "pgvector: memory vectors, full-text terms, HNSW per dimension"

_BATCH = 1000


def upgrade(op: Operations) -> None:
    """Add the PostgreSQL search columns and indexes (no-op on other databases)."""
    connection = op.get_bind()
    if connection.dialect.name != "postgresql":
        return
    create_extension(connection)
    connection.exec_driver_sql(
        "ALTER TABLE memories ADD COLUMN vec vector, ADD COLUMN lex tsvector, "
        "ADD COLUMN lex_len integer"
    )
    connection.exec_driver_sql("CREATE INDEX ix_memories_lex ON memories USING gin (lex)")
    # BM25's inverted index: a query term's postings are one range of the primary key,
    # read by an index-only scan (tf and length included).
    connection.exec_driver_sql(
        "CREATE TABLE memory_postings (assistant_id integer NOT NULL REFERENCES assistants(id) "
        "ON DELETE CASCADE, term text NOT NULL, memory_id varchar(40) NOT NULL, "
        "tf integer NOT NULL, len integer NOT NULL, "
        "PRIMARY KEY (assistant_id, term, memory_id) INCLUDE (tf, len))"
    )
    connection.exec_driver_sql(
        "CREATE INDEX ix_memory_postings_memory ON memory_postings (assistant_id, memory_id)"
    )
    connection.exec_driver_sql(
        "CREATE TABLE memory_stats (assistant_id integer PRIMARY KEY REFERENCES assistants(id) "
        "ON DELETE CASCADE, docs bigint NOT NULL, terms bigint NOT NULL)"
    )
    _backfill(connection)


def create_extension(connection: Connection) -> None:
    """``CREATE EXTENSION IF NOT EXISTS vector``, or a MigrationError saying what to install."""
    try:
        with connection.begin_nested():
            connection.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS vector")
    except DBAPIError as exc:
        detail = str(exc.orig or exc).splitlines()[0]
        raise MigrationError(
            f"The pgvector extension is missing on this PostgreSQL server ({detail!r}); "
            "mindspace needs it for memory search. Install it on the server (e.g. the "
            "distribution's postgresql-NN-pgvector package, or pgvector from source), then "
            "have a superuser run `CREATE EXTENSION vector;` in this database, and open the "
            "store again."
        ) from exc


def _backfill(connection: Connection) -> None:
    """Fill the new columns of the memories already stored, a batch at a time."""
    table = PG_MEMORIES
    columns = (
        table.c.row_id,
        table.c.assistant_id,
        table.c.id,
        table.c.context,
        table.c.content,
        table.c.source_entity,
    )
    after = 0
    while True:
        rows = connection.execute(
            select(*columns, table.c.embedding)
            .where(table.c.row_id > after)
            .order_by(table.c.row_id)
            .limit(_BATCH)
        ).all()
        if not rows:
            break
        after = int(rows[-1].row_id)
        connection.execute(
            update(table)
            .where(table.c.row_id == bindparam("target"))
            .values(vec=bindparam("vec"), lex=bindparam("lex"), lex_len=bindparam("lex_len")),
            [
                {
                    "target": row.row_id,
                    **search_values(row.context, row.content, row.source_entity, row.embedding),
                }
                for row in rows
            ],
        )
        owners: dict[int, dict[str, dict[str, Any] | None]] = {}
        for row in rows:
            owners.setdefault(int(row.assistant_id), {})[str(row.id)] = dict(row._mapping)
        for assistant_id, written in owners.items():
            index_terms(connection, assistant_id, written, {})
    dims = connection.execute(
        text("SELECT DISTINCT vector_dims(vec) FROM memories WHERE vec IS NOT NULL")
    ).scalars()
    for dim in list(dims):
        ensure_hnsw(connection, int(dim))
