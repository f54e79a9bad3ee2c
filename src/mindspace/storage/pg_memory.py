"""PostgreSQL-only columns of the memories table: the pgvector vector and the search terms.

On PostgreSQL (schema version 6) every memory row carries, besides the columns of
:data:`mindspace.storage.tables.memories`:

- ``vec vector``: the embedding as a pgvector value of any dimension (embedders differ),
  searched through one partial HNSW index per dimension (:func:`ensure_hnsw`);
- ``lex tsvector``: the memory's own search terms (:func:`mindspace.text.tokenize` of the
  lexical key, the terms the embedded BM25 uses) with their positions, built here rather
  than by Postgres' parser so both backends index exactly the same terms;
- ``lex_len integer``: how many terms, BM25's document length.

BM25 itself reads two PostgreSQL-only tables kept in step by every commit:
``memory_postings`` (assistant, term, memory, tf, document length: an inverted index
in a btree, so a query term's postings are one index range scan) and ``memory_stats``
(per assistant: how many memories and terms, for idf and the average length).

These columns are not in ``tables.py``: records never read them, and SQLite has none.
:class:`~mindspace.storage.sql.SqlStore` fills them on every commit of a memory.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, Connection, Integer, MetaData, Table, text
from sqlalchemy.dialects.postgresql import TSVECTOR

from mindspace.memory.rows import lexical_text
from mindspace.storage.tables import memories
from mindspace.storage.vectors import Vector, ensure_hnsw_index, vector_literal
from mindspace.text import tokenize

__all__ = [
    "MAX_POSTING_BYTES",
    "PG_COLUMNS",
    "PG_MEMORIES",
    "ensure_hnsw",
    "hnsw_name",
    "index_terms",
    "lexical_terms",
    "old_lengths",
    "search_values",
    "tsquery_literal",
    "vector_literal",
]

PG_COLUMNS = ("vec", "lex", "lex_len")
"""The PostgreSQL-only columns of ``memories``."""

_MAX_POSITION = 16383  # tsvector positions stop there
_MAX_LEXEME_BYTES = 2046  # Postgres refuses longer lexemes; such a "word" never matches a query
MAX_POSTING_BYTES = 256  # a btree entry must stay small; no real word is longer


def _lexeme(term: str) -> str:
    # tsvector/tsquery text input: quote the lexeme, double quotes and backslashes.
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def lexical_terms(context: str | None, content: str, source_entity: str | None) -> list[str]:
    """The BM25 terms of a memory: ``Memory.lexical_key()`` tokenized, as the embedded index."""
    return tokenize(lexical_text(content, source_entity, context))


def search_values(
    context: str | None, content: str, source_entity: str | None, embedding: bytes | None
) -> dict[str, Any]:
    """The PostgreSQL-only column values of one memory row."""
    terms = lexical_terms(context, content, source_entity)
    positions: dict[str, list[int]] = {}
    for at, term in enumerate(terms):
        if len(term.encode()) <= _MAX_LEXEME_BYTES:
            positions.setdefault(term, []).append(min(at + 1, _MAX_POSITION))
    lex = " ".join(
        _lexeme(term) + ":" + ",".join(str(p) for p in sorted(set(found))[:256])
        for term, found in positions.items()
    )
    return {"vec": embedding, "lex": lex or None, "lex_len": len(terms)}


def old_lengths(connection: Connection, assistant_id: int, keys: Sequence[str]) -> dict[str, int]:
    """The term counts of the memories under ``keys`` before a commit changes them."""
    if not keys:
        return {}
    rows = connection.execute(
        text("SELECT id, lex_len FROM memories WHERE assistant_id = :a AND id = ANY(:keys)"),
        {"a": assistant_id, "keys": list(keys)},
    ).all()
    return {str(key): int(length or 0) for key, length in rows}


def index_terms(
    connection: Connection,
    assistant_id: int,
    written: dict[str, dict[str, Any] | None],
    before: dict[str, int],
) -> None:
    """Bring the postings and the per-assistant BM25 statistics in step with a commit.

    Args:
        connection: The committing transaction.
        assistant_id: Whose memories changed.
        written: Each changed memory's new row (None: deleted).
        before: :func:`old_lengths` of the same keys, read before the change.
    """
    if not written:
        return
    connection.execute(
        text("DELETE FROM memory_postings WHERE assistant_id = :a AND memory_id = ANY(:keys)"),
        {"a": assistant_id, "keys": list(written)},
    )
    terms: list[str] = []
    owners: list[str] = []
    counts: list[int] = []
    lengths: list[int] = []
    docs = terms_total = 0
    for key, row in written.items():
        if key in before:
            docs -= 1
            terms_total -= before[key]
        if row is None:
            continue
        found = lexical_terms(row["context"], row["content"], row["source_entity"])
        docs += 1
        terms_total += len(found)
        for term, tf in Counter(t for t in found if len(t.encode()) <= MAX_POSTING_BYTES).items():
            terms.append(term)
            owners.append(key)
            counts.append(tf)
            lengths.append(len(found))
    if terms:
        connection.execute(
            text(
                "INSERT INTO memory_postings (assistant_id, term, memory_id, tf, len) "
                "SELECT :a, t.term, t.memory_id, t.tf, t.len FROM unnest(CAST(:terms AS text[]), "
                "CAST(:owners AS text[]), CAST(:counts AS int[]), CAST(:lengths AS int[])) "
                "AS t(term, memory_id, tf, len)"
            ),
            {
                "a": assistant_id,
                "terms": terms,
                "owners": owners,
                "counts": counts,
                "lengths": lengths,
            },
        )
    connection.execute(
        text(
            "INSERT INTO memory_stats (assistant_id, docs, terms) VALUES (:a, :docs, :terms) "
            "ON CONFLICT (assistant_id) DO UPDATE SET docs = memory_stats.docs + excluded.docs, "
            "terms = memory_stats.terms + excluded.terms"
        ),
        {"a": assistant_id, "docs": docs, "terms": terms_total},
    )


def tsquery_literal(terms: Sequence[str]) -> str:
    """A tsquery matching any of ``terms`` (taken as they are: no parsing or stemming)."""
    return " | ".join(_lexeme(t) for t in terms if len(t.encode()) <= _MAX_LEXEME_BYTES)


PG_MEMORIES = Table(
    "memories",
    MetaData(),
    *(column._copy() for column in memories.columns if not column.foreign_keys),
    Column("assistant_id", Integer, nullable=False),
    Column("vec", Vector(), nullable=True),
    Column("lex", TSVECTOR, nullable=True),
    Column("lex_len", Integer, nullable=True),
)
"""The memories table as PostgreSQL holds it (what commits write there)."""


def hnsw_name(dim: int) -> str:
    """The name of the HNSW index over the vectors of dimension ``dim``."""
    return f"ix_memories_vec_hnsw_{int(dim)}"


def ensure_hnsw(connection: Connection, dim: int) -> bool:
    """Create the partial HNSW index of memory vectors of ``dim`` unless it exists.

    One index per dimension (:func:`mindspace.storage.vectors.ensure_hnsw_index`).

    Returns:
        Whether it was created.
    """
    return ensure_hnsw_index(connection, hnsw_name(dim), "memories", "vec", dim)
