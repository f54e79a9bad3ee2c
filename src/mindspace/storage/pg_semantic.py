"""The semantic-store port on PostgreSQL: pgvector HNSW and BM25 postings, fused in Python.

One statement per search, in one read transaction:

1. dense candidates: the ``k`` nearest rows by cosine distance through the partial HNSW
   index of the query's dimension (:func:`mindspace.storage.pg_memory.ensure_hnsw`), with
   pgvector 0.8's iterative index scan, so filtering on the assistant (the table is
   shared by every assistant), trust and tags still yields ``k`` rows;
2. lexical candidates: the ``k`` best memories by BM25 among those holding a query term,
   computed in SQL from the ``memory_postings`` of the query's terms (tf, length; df is
   the number of a term's postings) and the assistant's ``memory_stats`` (N, average
   length);
3. both signals for every candidate of either list: the exact inner product with the
   query (the embedded index's cosine: vectors are unit length) and the BM25 score.

Python then applies the scoring contract of :mod:`mindspace.state.semantic` to that
union: z-scores of each signal, blended ``dense_weight : 1 - dense_weight``, logistic.
BM25 is standardised over every memory of the assistant, as the embedded index does
(from the sum and sum of squares of the scored postings; over the candidates when trust
or tags filter the search); the similarity over the candidates, where the embedded index
uses every eligible row: the ranking of the top hits is the same whenever the candidate
lists reach them (see docs/postgresql.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from mindspace.state.semantic import SearchRequest
from mindspace.storage.candidates import CandidateSearch
from mindspace.storage.pg_memory import MAX_POSTING_BYTES, vector_literal
from mindspace.text import tokenize

__all__ = ["PgSemanticIndex"]

Transaction = Callable[[str], AbstractContextManager[Connection]]

K1 = 0.9
B = 0.4
"""BM25 parameters, the embedded index's (:class:`mindspace.memory.lexical.LexicalIndex`)."""


class PgSemanticIndex(CandidateSearch):
    """Search over one assistant's memories stored in PostgreSQL.

    Args:
        transaction: Opens a read transaction (the store's), given what it is for.
        assistant_id: The assistant whose memories are searched.
        embedder: The name of the embedder queries use (None: any vector of the size).
    """

    def __init__(self, transaction: Transaction, assistant_id: int, embedder: str | None) -> None:
        self._transaction = transaction
        self.assistant_id = assistant_id
        self.embedder = embedder

    def count(self) -> int:
        """How many memories the assistant has."""
        with self._transaction("counting memories") as conn:
            found = conn.execute(
                text("SELECT count(*) FROM memories WHERE assistant_id = :a"),
                {"a": self.assistant_id},
            ).scalar_one()
        return int(found)

    def __len__(self) -> int:
        return self.count()

    # -- search ----------------------------------------------------------------------------
    def _candidates(self, request: SearchRequest, k: int) -> tuple[Sequence[Any], bool]:
        """The candidates of a search, fetched with both their signals in one statement.

        Returns:
            :func:`~mindspace.memory.fusion.fuse_candidates`' rows (each signal's ``k``
            best eligible memories), and whether BM25 may be standardised over every
            memory (no filter).
        """
        vector, tags, min_trust = request.vector, request.tags, request.min_trust
        terms = sorted({t for t in tokenize(request.text) if len(t.encode()) <= MAX_POSTING_BYTES})
        dim = int(vector.shape[0]) if vector is not None and vector.ndim == 1 else None
        filtered = bool(tags) or min_trust > 0
        if dim is None and not terms:
            return [], not filtered
        params: dict[str, Any] = {
            "a": self.assistant_id,
            "min_trust": float(min_trust),
            "k": k,
            "e": self.embedder,
            "terms": terms,
        }
        where = self._filters(tags, params)
        ctes = [_SCORED]
        sources = []
        if terms:
            # Without filters the postings alone rank the lexical candidates; with them,
            # each scored memory is checked against its row.
            eligible = (
                f"JOIN memories m ON m.assistant_id = :a AND m.id = s.memory_id WHERE {where}"
                if filtered
                else ""
            )
            ctes.append(
                "lexical AS (SELECT s.memory_id AS id FROM scored s "
                f"{eligible} ORDER BY s.bm25 DESC, s.memory_id LIMIT :k)"
            )
            sources.append("SELECT id FROM lexical")
        dot = "NULL::float8"
        if dim is not None and vector is not None:
            params["q"] = vector_literal(vector)
            ctes.append(
                "dense AS MATERIALIZED (SELECT m.id FROM memories m "
                f"WHERE {where} AND {_usable(dim, self.embedder)} "
                f"ORDER BY {_distance(dim)} LIMIT :k)"
            )
            sources.append("SELECT id FROM dense")
            dot = f"CASE WHEN {_usable(dim, self.embedder)} THEN {_dot(dim)} END"
        # The candidates' BM25 comes from a jsonb map of the scored memories: the planner
        # cannot estimate a CTE's size and would otherwise rescan it once per candidate.
        # Its sum and sum of squares standardise BM25 over every memory of the assistant
        # (a memory without a query term scores 0), as the embedded index does.
        ctes.append(
            "bm25 AS (SELECT coalesce(jsonb_object_agg(memory_id, bm25), '{}') AS j, "
            "coalesce(sum(bm25), 0) AS s1, coalesce(sum(bm25 * bm25), 0) AS s2, "
            "(SELECT docs FROM memory_stats WHERE assistant_id = :a) AS n FROM scored)"
        )
        sql = (
            f"WITH {', '.join(ctes)} SELECT m.id, {dot} AS dot, "
            "coalesce((b.j ->> m.id)::float8, 0) AS bm25, b.s1, b.s2, b.n "
            "FROM memories m CROSS JOIN bm25 b "
            f"WHERE m.assistant_id = :a AND m.id IN ({' UNION '.join(sources)}) "
            "ORDER BY m.row_id"
        )
        with self._transaction("searching memories") as conn:
            _custom_plans(conn)
            if dim is not None:
                _iterative_scan(conn, k)
            rows = conn.execute(text(sql), params).all()
        # With filters the eligible memories are not all the assistant's: standardise BM25
        # over the candidates then, as before.
        return rows, not filtered

    def _filters(self, tags: Sequence[str], params: dict[str, Any]) -> str:
        """The WHERE clause of the assistant's eligible rows (trust, every tag)."""
        clauses = ["m.assistant_id = :a", "m.source_trust >= :min_trust"]
        for n, tag in enumerate(tags):
            params[f"tag{n}"] = tag.casefold()
            clauses.append(
                "EXISTS (SELECT 1 FROM json_array_elements_text(m.tags) AS t(v) "
                f"WHERE lower(t.v) = :tag{n})"
            )
        return " AND ".join(clauses)

    # -- nearest ---------------------------------------------------------------------------
    def _nearby(
        self, batch: npt.NDArray[np.float32], k: int, own: list[str]
    ) -> list[list[tuple[str, float]]]:
        """One statement for the whole batch: a lateral HNSW lookup per row."""
        dim = int(batch.shape[1])
        params = {
            "a": self.assistant_id,
            "e": self.embedder,
            "k": k,
            "qs": [vector_literal(row) for row in batch],
            "ex": own,
        }
        sql = (
            "SELECT w.i, n.id, n.dot FROM unnest(CAST(:qs AS text[]), CAST(:ex AS text[])) "
            "WITH ORDINALITY AS w(q, ex, i) CROSS JOIN LATERAL ("
            f"SELECT m.id, {_dot(dim, 'w.q')} AS dot FROM memories m "
            f"WHERE m.assistant_id = :a AND {_usable(dim, self.embedder)} AND m.id <> w.ex "
            f"ORDER BY {_distance(dim, 'w.q')} LIMIT :k) n"
        )
        with self._transaction("finding neighbouring memories") as conn:
            _custom_plans(conn)
            _iterative_scan(conn, k)
            rows = conn.execute(text(sql), params).all()
        found: list[list[tuple[str, float]]] = [[] for _ in own]
        for i, key, dot in rows:
            found[int(i) - 1].append((str(key), float(dot)))
        return found


# BM25 of every memory holding a query term, from the postings (one index range per term):
# df is the number of postings of a term, N and the average length come from memory_stats.
# The formula is the embedded LexicalIndex's: Lucene's idf, k1 = 0.9, b = 0.4.
_SCORED = (
    "stats AS (SELECT greatest(docs, 1)::float8 AS n, "
    "greatest(terms::float8 / greatest(docs, 1), 1e-9) AS avg "
    "FROM memory_stats WHERE assistant_id = :a), "
    "postings AS MATERIALIZED (SELECT term, memory_id, tf, len FROM memory_postings "
    "WHERE assistant_id = :a AND term = ANY(CAST(:terms AS text[]))), "
    "idf AS (SELECT p.term, ln(1.0 + (st.n - count(*) + 0.5) / (count(*) + 0.5)) AS idf "
    "FROM postings p CROSS JOIN stats st GROUP BY p.term, st.n), "
    "scored AS MATERIALIZED (SELECT p.memory_id, "
    f"sum(i.idf * p.tf * {K1 + 1.0} / (p.tf + {K1} * (1 - {B} + {B} * p.len / st.avg))) AS bm25 "
    "FROM postings p JOIN idf i USING (term) CROSS JOIN stats st GROUP BY p.memory_id)"
)


def _usable(dim: int, embedder: str | None) -> str:
    """Rows whose vector the query can be compared with (the partial index's predicate)."""
    same = " AND m.embedder = :e" if embedder is not None else ""
    return f"vector_dims(m.vec) = {int(dim)}{same}"


def _distance(dim: int, query: str = ":q") -> str:
    """The HNSW index's expression: cosine distance at a fixed dimension."""
    return f"(m.vec::vector({int(dim)})) <=> CAST({query} AS vector({int(dim)}))"


def _dot(dim: int, query: str = ":q") -> str:
    """The inner product, the embedded index's similarity (vectors are unit length)."""
    return f"(-((m.vec::vector({int(dim)})) <#> CAST({query} AS vector({int(dim)}))))"


def _custom_plans(conn: Connection) -> None:
    """Plan each search for its own values, never with a cached generic plan.

    psycopg prepares a statement after a few executions, and Postgres may then switch to
    a generic plan that cannot see the query's terms or vector; measured at 10,000
    memories, that plan made a search 4x slower than the planned one.
    """
    conn.exec_driver_sql("SET LOCAL plan_cache_mode = force_custom_plan")


def _iterative_scan(conn: Connection, k: int) -> None:
    """pgvector 0.8's iterative scans for this transaction: filtered searches still fill k.

    ``relaxed_order`` lets the scan continue past the first ``ef_search`` candidates
    when the assistant/trust/tag filters drop rows; results are re-ranked exactly here.
    """
    conn.exec_driver_sql("SET LOCAL hnsw.iterative_scan = relaxed_order")
    conn.exec_driver_sql(f"SET LOCAL hnsw.ef_search = {min(1000, max(40, int(k)))}")
