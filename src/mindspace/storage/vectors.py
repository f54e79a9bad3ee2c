"""Vector column types: pgvector's ``vector`` on PostgreSQL, float32 bytes elsewhere.

Memories keep their float32 bytes in ``embedding`` on every database and, on
PostgreSQL, a second ``vec`` column (:mod:`mindspace.storage.pg_memory`). Journal entry
vectors (``journal_vectors.embedding``) have one column whose database type depends on
the dialect (:class:`Embedding`): the records always see float32 bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sqlalchemy import Connection, LargeBinary, text
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine, UserDefinedType

__all__ = ["Embedding", "Vector", "ensure_hnsw_index", "vector_literal"]


class Vector(UserDefinedType[Any]):
    """pgvector's ``vector`` without a fixed dimension, bound from float32 bytes or arrays."""

    cache_ok = True

    def get_col_spec(self, **_kw: Any) -> str:
        """The column type."""
        return "vector"

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], str | None]:
        """Float32 bytes or a float sequence become pgvector's text form."""

        def process(value: Any) -> str | None:
            return None if value is None else vector_literal(value)

        return process


def vector_literal(value: bytes | Sequence[float] | np.ndarray[Any, Any]) -> str:
    """pgvector's text form ``[x,y,...]`` of float32 bytes or a vector."""
    array = np.frombuffer(value, dtype=np.float32) if isinstance(value, bytes) else value
    return "[" + ",".join(repr(float(x)) for x in np.asarray(array, dtype=np.float32)) + "]"


def _float32_bytes(value: Any) -> bytes:
    """Float32 bytes of what PostgreSQL returned for a ``vector`` (text, list or array)."""
    if isinstance(value, str):
        body = value.strip().removeprefix("[").removesuffix("]")
        values = np.array([float(x) for x in body.split(",")] if body else [], np.float32)
        return values.tobytes()
    return np.asarray(value, dtype=np.float32).tobytes()


class Embedding(TypeDecorator[bytes]):
    """A float32 vector: pgvector ``vector`` on PostgreSQL, a BLOB elsewhere; bytes in Python."""

    impl = LargeBinary
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        """pgvector's type on PostgreSQL (searched in SQL there), bytes elsewhere."""
        if dialect.name == "postgresql":
            return dialect.type_descriptor(Vector())
        return dialect.type_descriptor(LargeBinary())

    def process_result_value(self, value: Any, dialect: Dialect) -> bytes | None:
        """Always float32 bytes, whatever the driver returned."""
        if value is None or isinstance(value, bytes):
            return value
        if isinstance(value, memoryview):
            return value.tobytes()
        return _float32_bytes(value)


def ensure_hnsw_index(connection: Connection, name: str, table: str, column: str, dim: int) -> bool:
    """Create the partial HNSW index ``name`` over ``table.column`` of dimension ``dim``.

    The column has no fixed dimension (embedders differ) and an HNSW index needs one, so
    the index is over ``column::vector(dim)`` for the rows ``vector_dims(column) = dim``;
    searches use the same expression and predicate. Creators take an advisory lock so
    two processes storing the first vector of a size do not both build it.

    Returns:
        Whether it was created (False: it existed).
    """
    dim = int(dim)
    exists = connection.execute(text("SELECT to_regclass(:name)"), {"name": name}).scalar()
    if exists is not None:
        return False
    connection.execute(text("SELECT pg_advisory_xact_lock(hashtext('mindspace-hnsw'))"))
    connection.exec_driver_sql(
        f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING hnsw "
        f"(({column}::vector({dim})) vector_cosine_ops) WHERE vector_dims({column}) = {dim}"
    )
    return True
