"""Read-model queries and the event inbox of :class:`~mindspace.storage.sql.SqlStore`.

Each function runs on a connection the store opened, so the store keeps its one
transaction and error-mapping path; only portable SQLAlchemy Core is issued here.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import Connection, Select, bindparam, exists, func, insert, select, update

from mindspace.errors import StorageError
from mindspace.state.port import StoredRecord
from mindspace.storage.tables import KINDS, assistants, events, kind_table, row_values

__all__ = [
    "by_keys",
    "check_event_fields",
    "count",
    "enqueue",
    "find_event",
    "missing",
    "open_events",
    "page",
    "revision_and_open_events",
    "update_event",
]


def count(conn: Connection, assistant_id: int, kind: str) -> int:
    """How many records of ``kind`` the assistant has."""
    table = kind_table(kind).table
    query = select(func.count()).select_from(table).where(table.c.assistant_id == assistant_id)
    return int(conn.execute(query).scalar_one())


def page(
    conn: Connection,
    assistant_id: int,
    kind: str,
    offset: int,
    limit: int,
    newest_first: bool,
) -> list[StoredRecord]:
    """``limit`` records of ``kind`` after skipping ``offset``, by insertion order."""
    spec = kind_table(kind)
    table = spec.table
    order = table.c.row_id.desc() if newest_first else table.c.row_id
    query = (
        select(*(table.c[name] for name in spec.value_columns))
        .where(table.c.assistant_id == assistant_id)
        .order_by(order)
        .offset(max(offset, 0))
        .limit(max(limit, 0))
    )
    return [dict(row) for row in conn.execute(query).mappings()]


def missing(
    conn: Connection, assistant_id: int, kind: str, other_kind: str, limit: int
) -> tuple[list[str], int]:
    """Keys of ``kind`` records (oldest first) lacking an ``other_kind`` one, and how many."""
    spec, other = kind_table(kind), kind_table(other_kind)
    table, key = spec.table, spec.table.c[spec.key_column]
    partner = (
        select(other.table.c.row_id)
        .where(other.table.c.assistant_id == assistant_id)
        .where(other.table.c[other.key_column] == key)
    )
    # NOT EXISTS on the unique (assistant_id, key) index of the other table: an
    # anti-join both SQLite and PostgreSQL plan as an index probe per row.
    lonely = (table.c.assistant_id == assistant_id) & ~exists(partner)
    keys_query = select(key).where(lonely).order_by(table.c.row_id).limit(max(limit, 0))
    total_query = select(func.count()).select_from(table).where(lonely)
    keys = [str(k) for k in conn.execute(keys_query).scalars()]
    total = int(conn.execute(total_query).scalar_one())
    return keys, total


def enqueue(conn: Connection, assistant_id: int, event: StoredRecord) -> None:
    """Store a new event (no revision bump: hosts enqueue while ticks run)."""
    row = row_values(KINDS["event"], event)
    conn.execute(insert(events).values(assistant_id=assistant_id, **row))


def open_events(conn: Connection, assistant_id: int, limit: int) -> list[StoredRecord]:
    """Events still pending or processing, oldest first."""
    columns = [events.c[name] for name in KINDS["event"].value_columns]
    query = (
        select(*columns)
        .where(events.c.assistant_id == assistant_id)
        .where(events.c.status.in_(("pending", "processing")))
        .order_by(events.c.row_id)
        .limit(limit)
    )
    return [dict(row) for row in conn.execute(query).mappings()]


def revision_and_open_events(
    conn: Connection, assistant_id: int, limit: int
) -> tuple[int, list[StoredRecord]] | None:
    """The assistant's revision and its open events (oldest first); None: no assistant.

    One statement: the assistant's row joined to its open events, so a tick's first
    read is one round trip. With no open event the join gives the assistant's row alone.
    """
    query = {"owner": assistant_id, "limit": max(limit, 1)}
    rows = conn.execute(_TICK_START, query).mappings().all()
    if not rows:
        return None
    names = KINDS["event"].value_columns
    found = [{name: row[name] for name in names} for row in rows if row["row_id"] is not None]
    return int(rows[0]["revision"]), found[: max(limit, 0)]


_TICK_START = (
    select(
        assistants.c.revision,
        events.c.row_id,
        *(events.c[name] for name in KINDS["event"].value_columns),
    )
    .select_from(
        assistants.outerjoin(
            events,
            (events.c.assistant_id == assistants.c.id)
            & events.c.status.in_(("pending", "processing")),
        )
    )
    .where(assistants.c.id == bindparam("owner"))
    .order_by(events.c.row_id)
    .limit(bindparam("limit"))
)
"""What :func:`revision_and_open_events` runs, built once (every tick runs it)."""


@cache
def by_keys(kind: str) -> Select[Any]:
    """The row id and fields of ``kind``'s records of one assistant under some keys.

    Built once per kind, with parameters ``owner`` and ``keys`` (a list, expanded). No
    ORDER BY: with one, SQLite walks the whole table in row-id order instead of looking
    the keys up in the (assistant, key) index.
    """
    spec = kind_table(kind)
    table = spec.table
    return (
        select(table.c.row_id, *(table.c[name] for name in spec.value_columns))
        .where(table.c.assistant_id == bindparam("owner"))
        .where(table.c[spec.key_column].in_(bindparam("keys", expanding=True)))
    )


def find_event(conn: Connection, assistant_id: int, event_id: str) -> StoredRecord | None:
    """One event by id."""
    columns = [events.c[name] for name in KINDS["event"].value_columns]
    query = select(*columns).where(
        (events.c.assistant_id == assistant_id) & (events.c.id == event_id)
    )
    row = conn.execute(query).mappings().first()
    return dict(row) if row is not None else None


def check_event_fields(fields: StoredRecord) -> None:
    """``StorageError`` when ``fields`` names a column events do not have."""
    unknown = set(fields) - set(KINDS["event"].value_columns)
    if unknown:
        raise StorageError(f"Events have no fields {sorted(unknown)!r}")


def update_event(conn: Connection, assistant_id: int, event_id: str, fields: StoredRecord) -> None:
    """Change some fields of one event."""
    conn.execute(
        update(events)
        .where((events.c.assistant_id == assistant_id) & (events.c.id == event_id))
        .values(**fields)
    )
