"""How :meth:`SqlStore.commit <mindspace.storage.sql.SqlStore.commit>` writes a unit of work.

One transaction per commit: the revision check (optimistic concurrency), then each
kind's rows as batches (one DELETE, one upsert and one INSERT statement per kind at
most, each compiled once), the PostgreSQL search columns and BM25 postings of memories
(:mod:`mindspace.storage.pg_memory`), and the change feed. What the commit stored that
needs an index built afterwards (a vector dimension seen for the first time) is
returned, since building one takes a lock that must not be held inside the commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

from sqlalchemy import (
    BindParameter,
    Connection,
    Delete,
    Insert,
    Table,
    Update,
    bindparam,
    delete,
    insert,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from mindspace.errors import ConcurrencyError
from mindspace.state.port import Change
from mindspace.storage.feed import record_feed
from mindspace.storage.pg_memory import (
    PG_COLUMNS,
    PG_MEMORIES,
    index_terms,
    old_lengths,
    search_values,
)
from mindspace.storage.tables import KindTable, assistants, kind_table, memories, row_values

__all__ = ["VectorTable", "write_changes"]

VectorTable = Literal["memories", "journal_vectors"]
"""A table whose vectors get one HNSW index per dimension on PostgreSQL."""


def write_changes(
    conn: Connection,
    assistant_id: int,
    expected_revision: int,
    changes: Sequence[Change],
    *,
    dialect: str,
    supports_batches: bool,
) -> set[tuple[VectorTable, int]]:
    """Apply ``changes`` on ``conn`` after checking the revision.

    Args:
        conn: The committing transaction.
        assistant_id: Whose records change.
        expected_revision: The revision the changes were made against.
        changes: The unit of work's writes.
        dialect: The database's dialect name (memories carry search columns on
            PostgreSQL; SQLite and PostgreSQL write a record that may exist with an
            upsert).
        supports_batches: Whether the driver reports a batch's matched rows.

    Returns:
        The (table, dimension) of each vector stored (PostgreSQL only; for the HNSW
        indexes to build after the commit).

    Raises:
        ConcurrencyError: another writer committed since ``expected_revision``.
    """
    postgres = dialect == "postgresql"
    bumped = conn.execute(
        _BUMP, {"_id": assistant_id, "_expected": expected_revision, "_next": expected_revision + 1}
    )
    if bumped.rowcount != 1:
        raise ConcurrencyError(
            f"Assistant id {assistant_id!r} was changed by another writer since "
            f"revision {expected_revision!r}; its state was reloaded - retry the call."
        )
    dims: set[tuple[VectorTable, int]] = set()
    inserts: dict[str, list[dict[str, Any]]] = {}
    upserts: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    deletes: dict[str, list[dict[str, Any]]] = {}
    searched: dict[str, dict[str, Any] | None] = {}  # memories, on PostgreSQL
    before: dict[str, int] = {}
    if postgres:
        keys = [c.key for c in changes if c.kind == "memory" and not c.new]
        before = old_lengths(conn, assistant_id, keys)
    for change in changes:
        spec = kind_table(change.kind)
        searching = postgres and spec.table is memories
        where = {"_owner": assistant_id, "_key": change.key}
        if change.record is None:
            deletes.setdefault(change.kind, []).append(where)
            if searching:
                searched[change.key] = None
            continue
        row = row_values(spec, change.record)
        if searching:
            searched[change.key] = dict(row)
            row.update(_search_values(row))
            if row["vec"] is not None:
                dims.add(("memories", len(row["vec"]) // 4))
        elif postgres and spec.table.name == "journal_vectors":
            dims.add(("journal_vectors", len(row["embedding"]) // 4))
        if change.new:
            inserts.setdefault(change.kind, []).append({"assistant_id": assistant_id, **row})
        else:
            upserts.setdefault(change.kind, []).append((where, row))
    for kind, wheres in deletes.items():
        # One batch per kind (each key appears once in a unit's changes).
        conn.execute(_statements(kind, postgres and kind_table(kind).table is memories)[1], wheres)
    for kind, pairs in upserts.items():
        if dialect in _UPSERTING:
            # Insert, or replace the row under the key: one statement per kind, where an
            # UPDATE would need the matched count and an INSERT of the rows it missed.
            rows = [{"assistant_id": assistant_id, **row} for _, row in pairs]
            conn.execute(_upsert(kind, dialect), rows)
            continue
        missing = _update_many(conn, kind, assistant_id, pairs, postgres, supports_batches)
        inserts.setdefault(kind, []).extend(
            {"assistant_id": assistant_id, **row} for row in missing
        )
    for kind, rows in inserts.items():
        if rows:
            conn.execute(_insert(kind, postgres), rows)
    if searched:
        index_terms(conn, assistant_id, searched, before)
    record_feed(conn, assistant_id, expected_revision + 1, changes)
    return dims


_BUMP = (
    update(assistants)
    .where(assistants.c.id == bindparam("_id"))
    .where(assistants.c.revision == bindparam("_expected"))
    .values(revision=bindparam("_next"))
)
"""The revision check and bump of every commit, built once (a statement built per commit
costs SQLAlchemy more than running it)."""

_UPSERTING = frozenset({"sqlite", "postgresql"})
"""Dialects whose INSERT ... ON CONFLICT DO UPDATE writes a record that may exist."""


@cache
def _insert(kind: str, postgres: bool) -> Insert:
    """The INSERT of ``kind``'s new rows, built once."""
    return insert(table_of(kind_table(kind), postgres))


@cache
def _upsert(kind: str, dialect: str) -> Insert:
    """INSERT ... ON CONFLICT (assistant, key) DO UPDATE of ``kind``, built once.

    A replaced row keeps its row id (its place in insertion order), as an UPDATE would.
    """
    spec = kind_table(kind)
    postgres = dialect == "postgresql"
    table = table_of(spec, postgres)
    searching = postgres and spec.table is memories
    names = [*spec.value_columns, *(PG_COLUMNS if searching else ())]
    make = postgresql_insert if postgres else sqlite_insert
    statement = make(table)
    replaced = {name: statement.excluded[name] for name in names if name != spec.key_column}
    return statement.on_conflict_do_update(
        index_elements=[table.c.assistant_id, table.c[spec.key_column]], set_=replaced
    )


def table_of(spec: KindTable, postgres: bool) -> Table:
    """Where ``spec``'s rows are written: memories on PostgreSQL carry search columns."""
    return PG_MEMORIES if postgres and spec.table is memories else spec.table


def _update_many(
    conn: Connection,
    kind: str,
    owner: int,
    pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]],
    postgres: bool,
    supports_batches: bool,
) -> list[dict[str, Any]]:
    """Run one kind's UPDATEs as one batch; returns the rows no record matched.

    A sleep tick rewrites ~100 journal entries and writes its new memories (a lazy
    kind, so not known to be new): one statement execution per row was most of its
    commit. When the driver reports a batch's matched rows (SQLite and psycopg do)
    and some did not match, one SELECT of the keys finds the rows to insert.
    """
    spec = kind_table(kind)
    table = table_of(spec, postgres)
    updating = _statements(kind, postgres and spec.table is memories)[0]
    params = [p for p, _ in pairs]
    if len(params) == 1 or not supports_batches:
        return [row for p, row in pairs if conn.execute(updating, p).rowcount == 0]
    if conn.execute(updating, params).rowcount == len(params):
        return []
    column = table.c[spec.key_column]
    keys = [p["_key"] for p in params]
    found = conn.execute(
        select(column).where(table.c.assistant_id == owner).where(column.in_(keys))
    )
    present = {str(key) for key in found.scalars()}
    return [row for p, row in pairs if p["_key"] not in present]


@cache
def _statements(kind: str, search_columns: bool = False) -> tuple[Update, Delete]:
    """The UPDATE and DELETE of one record of ``kind``, built once with bound parameters.

    Building a statement per change (``update(table).where(...).values(**row)``) cost
    SQLAlchemy about a millisecond of coercion and cache-key work per row, the bulk of a
    sleep tick's commit; one statement per kind is compiled once and reused.
    """
    spec = kind_table(kind)
    # Memories on PostgreSQL also carry their search columns (pg_memory.PG_COLUMNS).
    table = PG_MEMORIES if search_columns else spec.table
    names = [*spec.value_columns, *(PG_COLUMNS if search_columns else ())]
    where = (table.c.assistant_id == bindparam("_owner")) & (
        table.c[spec.key_column] == bindparam("_key")
    )
    values: dict[str, BindParameter[Any]] = {
        name: bindparam(f"_set_{name}", type_=table.c[name].type) for name in names
    }
    return update(table).where(where).values(values), delete(table).where(where)


def _search_values(row: dict[str, Any]) -> dict[str, Any]:
    return search_values(row["context"], row["content"], row["source_entity"], row["embedding"])
