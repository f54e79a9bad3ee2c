"""Counting a store's round trips: the transactions and statements an engine runs.

A tick's cost on PostgreSQL is mostly its round trips (each transaction is a BEGIN, its
statements and a COMMIT over the network, each blocking the worker's event loop), so
tests bound them per tick and benchmarks report them. :func:`count_round_trips` listens
on the store's SQLAlchemy engine for as long as its block runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, event

__all__ = ["RoundTrips", "count_round_trips"]


@dataclass
class RoundTrips:
    """What an engine ran while counted.

    Attributes:
        transactions: Transactions begun (reads and writes).
        writes: Of those, the writing ones (a store commit, an event's update).
        statements: SQL statements sent in them (a batch of rows sent at once counts
            once; the transactions' own BEGIN is not counted, as on PostgreSQL's driver).
    """

    transactions: int = 0
    writes: int = 0
    statements: int = 0

    def per(self, ticks: int) -> dict[str, float]:
        """The counts divided by ``ticks``, rounded to a tenth (for a report)."""
        return {
            "transactions": round(self.transactions / ticks, 1),
            "writes": round(self.writes / ticks, 1),
            "statements": round(self.statements / ticks, 1),
        }


@contextmanager
def count_round_trips(engine: Engine) -> Iterator[RoundTrips]:
    """Count what ``engine`` runs inside the block (``SqlStore.engine`` for a store).

    A writing transaction is one begun with the store's ``mindspace_write`` execution
    option (what :class:`~mindspace.storage.sql.SqlStore` uses for every write).
    """
    counted = RoundTrips()

    def begun(conn: Connection) -> None:
        counted.transactions += 1
        if conn.get_execution_options().get("mindspace_write", False):
            counted.writes += 1

    def sent(_conn: Connection, _cursor: Any, statement: str, *_: Any) -> None:
        # SQLite's BEGIN is sent by the store's own hook (storage.connection.begin_sqlite).
        if not statement.startswith("BEGIN"):
            counted.statements += 1

    event.listen(engine, "begin", begun)
    event.listen(engine, "before_cursor_execute", sent)
    try:
        yield counted
    finally:
        event.remove(engine, "begin", begun)
        event.remove(engine, "before_cursor_execute", sent)
